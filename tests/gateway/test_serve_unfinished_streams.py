"""A Chat stream that ends on ``[DONE]`` with no ``finish_reason`` still tells the client its
warnings (issue 11), through a real ``interlock serve``.

OpenRouter ends some streams that way: the recording replayed here (``simonw/llm``'s
``test_tools_streaming_variant_a`` cassette, an OpenRouter stream of ``moonshotai/kimi-k2``
in ``conformance/corpus``) sends its usage in a chunk with an empty delta and then ``[DONE]``,
never a ``finish_reason``. The emulated Chat upstream replays its events as recorded. Each
client's request carries something Chat cannot take (a warning); the client must read the
warning where ``docs/fidelity.md`` says, from the official SDK's own objects, and get a
complete answer (the tool call and the usage), streamed and not:

* ``openai`` Responses: ``response.interlock`` of ``response.completed``;
* ``anthropic``: ``message_delta``'s ``interlock``;
* ``google-genai``: the last chunk's ``model_status.message`` (no ``finishReason`` here).

A Chat client of a translated stream with no finish (an Anthropic stream whose
``message_delta`` gives no ``stop_reason``; hand-written, no service is known to send it)
reads it from the last chunk before ``[DONE]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators import Emulator
from interlock.emulators._brain import ScriptBrain
from tests.gateway.serving import serve_on_emulators

RECORDED = (
    Path(__file__).resolve().parents[2]
    / "conformance/corpus/payloads/openai"
    / "simonw+llm__test_tools_streaming__test_tools_streaming_variant_a.json"
)

TOOL = "llm_version"


def _openrouter_stream() -> list[Any]:
    """The recorded stream's event data: no ``finish_reason`` anywhere, usage, ``[DONE]``."""
    document = json.loads(RECORDED.read_text(encoding="utf-8"))
    wire = document["payloads"][0]["wire"]
    data = [event["data"] for event in wire]
    chunks = [d for d in data if isinstance(d, dict)]
    assert chunks[0]["id"].startswith("gen-")  # OpenRouter's generation id
    assert not any(choice.get("finish_reason") for c in chunks for choice in c["choices"])
    assert data[-1] == "[DONE]" and chunks[-1]["usage"]["prompt_tokens"] == 57
    return data


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("unfinished-streams")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


def _replay(emulators: dict[str, Emulator], name: str, data: list[Any]) -> None:
    emulators[name].brain = ScriptBrain(entries=[{"stream": data}])  # type: ignore[union-attr]  # every emulator has a brain


def _codes(field: Any) -> list[tuple[str, str]]:
    assert field is not None, "the answer says nothing"
    assert all(warning["message"] for warning in field["warnings"])
    return [(warning["code"], warning["location"]) for warning in field["warnings"]]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_responses_client_reads_the_warning(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    _replay(emulators, "openai-chat", _openrouter_stream())
    tool: Any = {"type": "function", "name": TOOL, "parameters": {"type": "object"}}
    asked: Any = {"model": "via-chat", "input": "which version?", "tools": [tool]}
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            events = list(client.responses.create(**asked, truncation="auto", stream=True))
            assert events[-1].type == "response.completed"
            response = events[-1].response
            assert all("interlock" not in (e.model_extra or {}) for e in events)
        else:
            response = client.responses.create(**asked, truncation="auto")
    assert response.status == "completed"
    assert [(item.type, getattr(item, "name", None)) for item in response.output] == [
        ("function_call", TOOL)
    ]
    assert response.usage is not None and response.usage.input_tokens == 57
    codes = _codes((response.model_extra or {}).get("interlock"))
    assert ("field_dropped", "openai-responses.truncation") in codes


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_anthropic_client_reads_the_warning(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    _replay(emulators, "openai-chat", _openrouter_stream())
    asked: Any = {
        "model": "via-chat",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "which version?"}],
        "tools": [{"name": TOOL, "input_schema": {"type": "object"}}],
        "thinking": {"type": "enabled", "budget_tokens": 2000},
    }
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        if stream:
            events = list(client.messages.create(**asked, stream=True))
            assert [e.type for e in events[-2:]] == ["message_delta", "message_stop"]
            said = events[-2]
            assert said.type == "message_delta"
            assert said.delta.stop_reason == "tool_use"
            assert said.usage.output_tokens == 17
        else:
            said = client.messages.create(**asked)
            assert said.stop_reason == "tool_use"
            assert [block.type for block in said.content] == ["tool_use"]
    codes = _codes((said.model_extra or {}).get("interlock"))
    assert ("thinking_budget_as_effort", "options.thinking_budget") in codes


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_gemini_client_reads_the_warning_in_the_last_chunk(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    _replay(emulators, "openai-chat", _openrouter_stream())
    client = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=url))
    harassment = types.HarmCategory.HARM_CATEGORY_HARASSMENT
    config = types.GenerateContentConfig(
        safety_settings=[types.SafetySetting(category=harassment, threshold="BLOCK_NONE")],
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name=TOOL)])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    asked: Any = {"model": "via-chat", "contents": "which version?", "config": config}
    if stream:
        chunks = list(client.models.generate_content_stream(**asked))
        said = [c.model_status.message if c.model_status else None for c in chunks]
        assert all(message is None for message in said[:-1])
        last = chunks[-1]
        calls = [call.name for chunk in chunks for call in chunk.function_calls or []]
    else:
        last = client.models.generate_content(**asked)
        calls = [call.name for call in last.function_calls or []]
    assert calls == [TOOL]
    assert last.usage_metadata is not None and last.usage_metadata.prompt_token_count == 57
    assert last.model_status is not None and last.model_status.message is not None
    assert "field_dropped at gemini.safetySettings" in last.model_status.message


UNSTOPPED: list[Any] = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_unstopped",
            "type": "message",
            "role": "assistant",
            "model": "claude-emulated",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 9, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "4"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": None, "stop_sequence": None},
        "usage": {"output_tokens": 2},
    },
    {"type": "message_stop"},
]
"""An Anthropic stream whose ``message_delta`` names no ``stop_reason`` (hand-written)."""


@pytest.mark.parametrize("usage", [False, True], ids=["no-usage", "usage"])
def test_a_chat_client_reads_the_warning_from_the_last_chunk(
    stack: tuple[str, dict[str, Emulator]], usage: bool
) -> None:
    url, emulators = stack
    _replay(emulators, "anthropic", UNSTOPPED)
    messages: Any = [{"role": "user", "content": "2 + 2?"}]
    options: Any = {"stream_options": {"include_usage": True}} if usage else {}
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        stream = client.chat.completions.create(
            model="via-anthropic", messages=messages, stream=True, logprobs=True, **options
        )
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "4"
    assert not any(c.choices and c.choices[0].finish_reason for c in chunks)
    last = chunks[-1]
    assert last.choices == [] and (last.usage is not None) is usage
    assert all("interlock" not in (c.model_extra or {}) for c in chunks[:-1])
    codes = _codes((last.model_extra or {}).get("interlock"))
    assert ("option_dropped", "options.logprobs") in codes
