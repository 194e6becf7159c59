"""Responses: golden round trips, SDK validation, stop reasons, usage with cache tokens."""

from __future__ import annotations

import pytest

from interlock.codecs import anthropic
from interlock.transcript import (
    Message,
    ReasoningPart,
    Response,
    TextPart,
    ToolCallPart,
    Usage,
    dump_response,
    load_response,
)
from tests.codecs.anthropic.wire_fixtures import assert_valid_response, fixture_names, load

RESPONSES = fixture_names("response_")


@pytest.mark.parametrize("name", RESPONSES)
def test_golden_response_round_trip_is_exact(name: str) -> None:
    payload = load(name)
    assert anthropic.encode_response(anthropic.decode_response(payload)) == payload
    assert_valid_response(payload)


@pytest.mark.parametrize("name", RESPONSES)
def test_canonical_serialization_round_trips(name: str) -> None:
    decoded = anthropic.decode_response(load(name))
    assert anthropic.encode_response(load_response(dump_response(decoded))) == load(name)


def test_usage_totals_include_cache_reads_and_writes() -> None:
    decoded = anthropic.decode_response(load("response_thinking_tool_use"))
    assert decoded.usage is not None
    assert decoded.usage.input_tokens == 472 + 0 + 1024
    assert decoded.usage.cached_input_tokens == 1024
    assert decoded.finish_reason == "tool_calls"
    thinking = decoded.message.parts[0]
    assert isinstance(thinking, ReasoningPart) and thinking.opaque is not None
    assert thinking.opaque.format == "anthropic.thinking_signature"


@pytest.mark.parametrize(
    ("native", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "other"),
        ("a_reason_added_later", "other"),
    ],
)
def test_stop_reasons_map_and_are_kept(native: str, finish: str) -> None:
    payload = {**load("response_refusal"), "stop_reason": native}
    decoded = anthropic.decode_response(payload)
    assert (decoded.finish_reason, decoded.native_finish_reason) == (finish, native)
    assert anthropic.encode_response(decoded)["stop_reason"] == native


def test_a_foreign_response_is_shown_with_anthropic_shapes() -> None:
    response = Response(
        message=Message(
            role="assistant",
            parts=(
                ReasoningPart(reasoning_kind="summary", text="Thinking it over."),
                TextPart(text="Calling."),
                ToolCallPart(call_id="call_1", name="f", arguments='{"a":1}'),
            ),
        ),
        id="resp_1",
        model="gpt-5",
        finish_reason="stop",
        native_finish_reason="completed",
        usage=Usage(input_tokens=100, output_tokens=20, reasoning_tokens=5, cached_input_tokens=40),
    )
    payload = anthropic.encode_response(response)
    assert payload["stop_reason"] == "tool_use"
    assert [block["type"] for block in payload["content"]] == ["text", "tool_use"]
    assert payload["usage"] == {
        "input_tokens": 60,
        "cache_read_input_tokens": 40,
        "output_tokens": 20,
        "output_tokens_details": {"thinking_tokens": 5},
    }
    assert_valid_response(payload)
    unsigned = {"type": "thinking", "thinking": "x", "signature": ""}
    again = anthropic.decode_response({**payload, "content": [unsigned]})
    assert isinstance(again.message.parts[0], ReasoningPart)
    assert again.message.parts[0].opaque is None, "an empty signature is never replayable"
