"""Hosted tools (web search, code execution, MCP, OpenRouter server tools…) are refused or
warned identically by every request encoder: another provider's hosted tool is
``LossyHistoryError(code="hosted_tool_unsupported", location="hosted_tools[i]")`` under
``strict`` and the same code and location as a warning under ``degrade``; a dialect's own
hosted tools go out verbatim, in their place among the functions (issue 11)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from interlock.codecs.registry import wire_codec
from interlock.transcript import (
    GenerationOptions,
    HostedToolSpec,
    LossyHistoryError,
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    ToolSpec,
)

HOSTED = {
    "openai-responses": HostedToolSpec(provider="openai", spec={"type": "web_search"}),
    "gemini": HostedToolSpec(provider="google", spec={"googleSearch": {}}),
    "anthropic": HostedToolSpec(
        provider="anthropic",
        spec={"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    ),
    "openai-chat": HostedToolSpec(
        provider="openrouter", spec={"type": "openrouter:web_search", "parameters": {}}
    ),
}
DIALECTS = list(HOSTED)
FUNCTION = ToolSpec(name="get_weather", parameters={"type": "object", "properties": {}})


def _request(hosted: HostedToolSpec) -> Request:
    return Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="hi"),)),),
        tools=(FUNCTION,),
        hosted_tools=(hosted,),
        options=GenerationOptions(max_output_tokens=64),
    )


@pytest.mark.parametrize("source", DIALECTS)
@pytest.mark.parametrize("target", DIALECTS)
def test_another_providers_hosted_tool_is_refused_or_warned_the_same_everywhere(
    source: str, target: str
) -> None:
    codec = wire_codec(target)  # type: ignore[arg-type]
    request = _request(HOSTED[source])
    if source == target:
        encoded = codec.encode_request(request, ReplayPolicy())
        tools = json.dumps(encoded.payload["tools"])
        assert json.dumps(HOSTED[source].spec)[1:-1] in tools, tools
        assert not [w for w in encoded.warnings if w.location.startswith("hosted_tools")]
        return
    with pytest.raises(LossyHistoryError) as refused:
        codec.encode_request(request, ReplayPolicy(mode="strict"))
    assert (refused.value.code, refused.value.location) == (
        "hosted_tool_unsupported",
        "hosted_tools[0]",
    )
    degraded = codec.encode_request(request, ReplayPolicy(mode="degrade"))
    warnings = [(w.code, w.location) for w in degraded.warnings]
    assert ("hosted_tool_unsupported", "hosted_tools[0]") in warnings
    assert str(HOSTED[source].spec) not in str(degraded.payload)
    assert "get_weather" in str(degraded.payload), "the function tool still goes"


def test_openrouter_server_tools_and_their_choice_round_trip_in_chat() -> None:
    chat = wire_codec("openai-chat")
    body: Any = {
        "model": "openrouter/auto",
        "messages": [{"role": "user", "content": "news?"}],
        "tools": [
            {"type": "openrouter:web_search", "parameters": {"max_results": 3}},
            {"type": "function", "function": {"name": "get_weather", "parameters": {}}},
            {"type": "browser_search"},
        ],
        "tool_choice": {"type": "openrouter:web_search"},
    }
    request = chat.decode_request(body)
    assert [tool.provider for tool in request.hosted_tools] == ["openrouter", "openai-chat"]
    assert chat.encode_request(request, ReplayPolicy()).payload == body
    # Elsewhere: the server tools are refused, the forced choice becomes "a tool is required".
    with pytest.raises(LossyHistoryError) as refused:
        wire_codec("openai-responses").encode_request(request, ReplayPolicy())
    assert refused.value.code == "hosted_tool_unsupported"
    degraded = wire_codec("openai-responses").encode_request(request, ReplayPolicy(mode="degrade"))
    assert degraded.payload["tool_choice"] == "required"
    assert [tool["name"] for tool in degraded.payload["tools"]] == ["get_weather"]  # type: ignore[index,union-attr]
