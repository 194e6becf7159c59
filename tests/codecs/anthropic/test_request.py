"""Requests: golden round trips, SDK validation, decode errors, cross-dialect encoding."""

from __future__ import annotations

import copy

import pytest

from interlock.codecs import anthropic, openai_chat, openai_responses
from interlock.transcript import (
    DecodeError,
    GenerationOptions,
    HostedToolSpec,
    LossyHistoryError,
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    ToolChoice,
    ToolSpec,
    dump_request,
    load_request,
)
from tests.codecs.anthropic.wire_fixtures import assert_valid_request, fixture_names, load

REQUESTS = fixture_names("request_")


@pytest.mark.parametrize("name", REQUESTS)
def test_golden_request_round_trip_is_exact(name: str) -> None:
    payload = load(name)
    original = copy.deepcopy(payload)
    encoded = anthropic.encode_request(anthropic.decode_request(payload))
    assert encoded.payload == original
    assert encoded.warnings == ()
    assert payload == original, "decoding must not mutate its input"


@pytest.mark.parametrize("name", REQUESTS)
def test_golden_requests_are_valid_sdk_bodies(name: str) -> None:
    assert_valid_request(load(name))


@pytest.mark.parametrize("name", REQUESTS)
def test_canonical_serialization_round_trips(name: str) -> None:
    request = anthropic.decode_request(load(name))
    again = load_request(dump_request(request))
    assert anthropic.encode_request(again).payload == load(name)


def test_tool_results_become_tool_messages_and_text_follows() -> None:
    request = anthropic.decode_request(load("request_thinking_tool_turn"))
    roles = [message.role for message in request.messages]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert request.messages[3].tool_results[0].name == "get_weather"
    assert request.options.thinking_budget == 4000
    assert request.parallel_tool_calls is False
    assert request.hosted_tools[0].spec["type"] == "web_search_20250305"


def test_a_request_from_another_dialect_gets_anthropic_defaults() -> None:
    request = Request(
        model="claude-sonnet-4-5",
        messages=(
            Message(role="developer", parts=(TextPart(text="Be brief."),)),
            Message(role="user", parts=(TextPart(text="Hi"),)),
        ),
        tools=(ToolSpec(name="lookup"),),
        options=GenerationOptions(thinking_budget=500, max_output_tokens=800, seed=3),
    )
    encoded = anthropic.encode_request(request)
    payload = encoded.payload
    assert payload["system"] == [{"type": "text", "text": "Be brief."}]
    assert payload["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert payload["max_tokens"] == 1024 + 4096
    assert payload["tools"] == [
        {"name": "lookup", "input_schema": {"type": "object", "properties": {}}}
    ]
    codes = {warning.code for warning in encoded.warnings}
    assert codes == {
        "developer_as_system",
        "thinking_budget_raised",
        "max_tokens_raised",
        "seed_ignored",
    }


def test_a_responses_string_input_is_no_dropped_setting() -> None:
    """The Responses decoder's ``~input`` shape hint is not a setting of the client."""
    request = openai_responses.decode_request({"model": "gpt-5", "input": "Hi"})
    assert request.extra["openai-responses"]["~input"] == "string"
    encoded = anthropic.encode_request(request)
    assert [w.code for w in encoded.warnings if w.code == "setting_dropped"] == []
    assert encoded.payload["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
    ]


def test_chat_wire_shape_hints_are_no_dropped_settings() -> None:
    """The Chat decoder's layout (``max_tokens`` sent under its legacy name, a string
    ``stop``) says how the wire looked, not a setting: nothing to warn about."""
    request = openai_chat.decode_request(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 64,
            "stop": "x",
        }
    )
    assert request.extra["openai-chat:layout"] == {"max_tokens": True, "stop": "string"}
    encoded = anthropic.encode_request(request)
    assert (encoded.payload["max_tokens"], encoded.payload["stop_sequences"]) == (64, ["x"])
    assert encoded.warnings == ()


def test_a_choice_among_some_tools_widens_to_any_with_a_warning() -> None:
    request = Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="x"),)),),
        tools=(ToolSpec(name="a"), ToolSpec(name="b"), ToolSpec(name="c")),
        tool_choice=ToolChoice(mode="required", names=("a", "b")),
    )
    encoded = anthropic.encode_request(request)
    assert encoded.payload["tool_choice"] == {"type": "any"}
    assert [warning.code for warning in encoded.warnings] == ["allowed_tools_widened"]


def test_thinking_with_forced_tool_is_refused_before_sending() -> None:
    request = Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="x"),)),),
        tools=(ToolSpec(name="lookup"),),
        tool_choice=ToolChoice(mode="required", names=("lookup",)),
        options=GenerationOptions(thinking_budget=2000),
    )
    with pytest.raises(Exception, match="Thinking may not be enabled when tool_choice forces"):
        anthropic.encode_request(request)


def test_foreign_hosted_tools_are_refused_or_dropped_with_a_warning() -> None:
    """As by every encoder (tests/codecs/test_hosted_tools.py)."""
    request = Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="x"),)),),
        hosted_tools=(HostedToolSpec(provider="google", spec={"googleSearch": {}}),),
    )
    with pytest.raises(LossyHistoryError):
        anthropic.encode_request(request)
    encoded = anthropic.encode_request(request, policy=ReplayPolicy(mode="degrade"))
    assert "tools" in encoded.payload and encoded.payload["tools"] == []
    assert [warning.code for warning in encoded.warnings] == ["hosted_tool_unsupported"]


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"model": "m", "messages": "hi"}, "messages"),
        ({"model": "m", "messages": [{"role": "user", "content": 3}]}, "messages[0].content"),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "text"}]}]},
            "messages[0].content[0].text",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "n", "input": []}],
                    }
                ],
            },
            "messages[0].content[0].input",
        ),
        ({"model": "m", "messages": [], "tool_choice": {"type": "maybe"}}, "tool_choice.type"),
        (
            {"model": "m", "messages": [], "thinking": {"type": "enabled", "budget_tokens": "x"}},
            "thinking.budget_tokens",
        ),
    ],
)
def test_malformed_requests_name_the_path(payload: dict[str, object], path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        anthropic.decode_request(payload)  # type: ignore[arg-type] -- deliberately malformed input
    assert caught.value.path == path
