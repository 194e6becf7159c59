"""Streams: golden traces, re-encoding, SDK events, and the traps of the Messages stream."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from interlock.codecs import anthropic
from interlock.codecs._sse import SseEvent
from interlock.transcript import (
    ReasoningPart,
    StreamFailed,
    ToolCallPart,
    Update,
    dump_response,
    fold_updates,
    response_to_updates,
)
from tests.codecs.anthropic.wire_fixtures import assert_valid_events, fixture_names, load_stream

STREAMS = fixture_names("stream_")


def decode(events: list[SseEvent]) -> list[Update]:
    decoder = anthropic.StreamDecoder()
    return [update for event in events for update in decoder.feed(event)] + decoder.finish()


def encode(updates: list[Update]) -> list[SseEvent]:
    encoder = anthropic.StreamEncoder()
    return [event for update in updates for event in encoder.encode(update)] + encoder.finish()


def event(data: dict[str, object]) -> SseEvent:
    return SseEvent(data=json.dumps(data), event=str(data["type"]))


@pytest.mark.parametrize("name", STREAMS)
def test_reencoding_a_golden_stream_folds_to_the_same_response(name: str) -> None:
    updates = decode(load_stream(name))
    folded = fold_updates(updates)
    for source in (updates, response_to_updates(folded)):
        events = encode(source)
        assert_valid_events(events)
        assert dump_response(fold_updates(decode(events))) == dump_response(folded)


def test_stream_and_message_agree() -> None:
    folded = fold_updates(decode(load_stream("stream_thinking_tool_use")))
    call = folded.message.parts[2]
    assert isinstance(call, ToolCallPart)
    assert call.arguments == '{"city": "Paris"}', "streamed input text is kept byte for byte"
    message = anthropic.decode_response(anthropic.encode_response(folded))
    compact = replace(call, arguments='{"city":"Paris"}')  # a Message carries input as an object
    parts = (*folded.message.parts[:2], compact)
    expected = replace(folded, message=replace(folded.message, parts=parts))
    assert dump_response(message) == dump_response(expected)
    assert folded.usage is not None and folded.usage.input_tokens == 61  # delta overwrites
    thinking = folded.message.parts[0]
    assert isinstance(thinking, ReasoningPart) and thinking.opaque is not None
    assert thinking.opaque.data == "EqQBCgIYAhIM1gbcDa9G"


def test_a_thinking_block_cut_before_its_signature_is_not_replayable() -> None:
    events = load_stream("stream_thinking_tool_use")[:5]
    updates = decode(events)
    assert isinstance(updates[-1], StreamFailed)
    thinking = fold_updates(updates).message.parts[0]
    assert isinstance(thinking, ReasoningPart) and thinking.opaque is None


def test_error_event_fails_the_stream_with_the_type() -> None:
    events = [
        *load_stream("stream_thinking_tool_use")[:3],
        event({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]
    failed = decode(events)[-1]
    assert failed == StreamFailed(code="overloaded_error", message="Overloaded", status=529)
    out = encode([failed])
    assert json.loads(out[-1].data) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_prepopulated_message_start_and_no_argument_tool() -> None:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_p",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "tool_use", "id": "toolu_x", "name": "now", "input": {}}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    events = [
        event(start),
        event(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_y", "name": "now", "input": {}},
            }
        ),
        event(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": ""},
            }
        ),
        event({"type": "content_block_stop", "index": 1}),
        event({"type": "message_delta", "delta": {}, "usage": {"output_tokens": 9}}),
        event({"type": "message_stop"}),
    ]
    folded = fold_updates(decode(events))
    calls = [part for part in folded.message.parts if isinstance(part, ToolCallPart)]
    assert [(call.call_id, call.arguments) for call in calls] == [
        ("toolu_x", "{}"),
        ("toolu_y", "{}"),
    ]
    assert folded.finish_reason == "tool_calls"


def test_unknown_events_and_deltas_are_ignored() -> None:
    events = load_stream("stream_redacted_citations")
    extra = [
        event({"type": "future_event", "x": 1}),
        event(
            {
                "type": "content_block_start",
                "index": 9,
                "content_block": {"type": "text", "text": ""},
            }
        ),
        event(
            {"type": "content_block_delta", "index": 9, "delta": {"type": "future_delta", "x": 1}}
        ),
        event({"type": "content_block_stop", "index": 9}),
    ]
    folded = fold_updates(decode(events[:-2] + extra + events[-2:]))
    assert folded.finish_reason == "stop"


def test_malformed_event_data_is_a_decode_error() -> None:
    with pytest.raises(Exception, match="not JSON"):
        anthropic.StreamDecoder().feed(SseEvent(data="{", event="message_start"))
