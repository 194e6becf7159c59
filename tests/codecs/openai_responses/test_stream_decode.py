"""Stream decoding: traces fold to the decoded final snapshot; traps 2, 22, 37."""

from __future__ import annotations

import json

import pytest

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_responses import StreamDecoder, decode_response
from interlock.transcript import (
    DecodeError,
    PartDelta,
    ReasoningPart,
    StreamFailed,
    ToolCallPart,
    Update,
    fold_updates,
    to_json,
)
from tests.codecs.openai_responses._fixtures import names, trace


def decode_all(events: list[SseEvent]) -> list[Update]:
    decoder = StreamDecoder()
    updates = [update for event in events for update in decoder.feed(event)]
    return updates + decoder.finish()


@pytest.mark.parametrize("name", names("stream_"))
def test_trace_folds_to_the_completed_snapshot(name: str) -> None:
    events = trace(name)
    final = json.loads(events[-1].data)["response"]
    assert fold_updates(decode_all(events)) == decode_response(final)


def test_trap22_argument_deltas_are_routed_by_item_id() -> None:
    updates = decode_all(trace("stream_reasoning_parallel_calls.jsonl"))
    calls = [p for p in fold_updates(updates).message.parts if isinstance(p, ToolCallPart)]
    assert [(c.call_id, c.arguments) for c in calls] == [
        ("call_A", '{"city":"Paris"}'),
        ("call_B", '{"city":"Rome"}'),
    ]
    # Before the authoritative done events, deltas alone already assemble per call.
    deltas = [u for u in updates if isinstance(u, PartDelta)]
    by_index: dict[int, str] = {}
    for delta in deltas:
        by_index[delta.index] = by_index.get(delta.index, "") + delta.delta
    assert sorted(by_index.values()) == ["**Looking up**", '{"city":"Paris"}', '{"city":"Rome"}']


def test_trap2_encrypted_content_only_from_output_item_done() -> None:
    updates = decode_all(trace("stream_reasoning_parallel_calls.jsonl"))
    blobs = [
        u.part.opaque.data
        for u in updates
        if hasattr(u, "part") and isinstance(u.part, ReasoningPart) and u.part.opaque
    ]  # type: ignore[union-attr]
    assert blobs and set(blobs) == {"gAAAA-complete-blob"}


def test_trap37_obfuscation_is_never_kept() -> None:
    updates = decode_all(trace("stream_message.jsonl"))
    assert "obfuscation" not in json.dumps(to_json(updates))


def test_error_and_failed_events_become_stream_failed() -> None:
    decoder = StreamDecoder()
    error = SseEvent(
        data=json.dumps(
            {
                "type": "error",
                "code": "server_error",
                "message": "boom",
                "param": None,
                "sequence_number": 3,
            }
        )
    )
    assert decoder.feed(error) == [StreamFailed(code="server_error", message="boom", status=500)]
    failed = {
        "type": "response.failed",
        "sequence_number": 9,
        "response": {
            "id": "r",
            "status": "failed",
            "output": [],
            "error": {"code": "rate_limit_exceeded", "message": "slow down"},
        },
    }
    assert StreamDecoder().feed(SseEvent(data=json.dumps(failed))) == [
        StreamFailed(code="rate_limit_exceeded", message="slow down", status=429)
    ]


def test_truncated_stream_finishes_as_failure() -> None:
    events = trace("stream_message.jsonl")[:-1]
    assert isinstance(decode_all(events)[-1], StreamFailed)


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ("{not json", "event.data"),
        ('{"type": "error"} {"type": "error"}', "event.data"),
        ('\ufeff{"type": "error"}', "event.data"),
        ("", "event.data"),
        ('["a"]', "event"),
        ('{"sequence_number": 1}', "event.type"),
        (
            '{"type": "response.output_text.delta", "item_id": "nope", "output_index": 0, "content_index": 0, "delta": "x"}',
            "event.item_id",
        ),
        (
            '{"type": "response.output_item.added", "output_index": "0", "item": {}}',
            "event.output_index",
        ),
        (
            '{"type": "response.output_item.done", "output_index": 0, "item": {"type": "function_call", "call_id": 1}}',
            "event.item.call_id",
        ),
    ],
)
def test_broken_events_raise_decode_error(data: str, path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        StreamDecoder().feed(SseEvent(data=data))
    assert caught.value.path == path


def test_event_data_with_surrounding_whitespace_decodes_like_compact_data() -> None:
    events = trace("stream_message.jsonl")
    padded = [SseEvent(data=f" \n{event.data}\t ", event=event.event) for event in events]
    assert decode_all(padded) == decode_all(events)


def test_done_after_the_terminal_event_is_accepted() -> None:
    """OpenRouter ends a Responses stream with Chat's ``data: [DONE]`` (recorded in the corpus)."""
    created = {"type": "response.created", "response": {"id": "r", "status": "in_progress"}}
    completed = {
        "type": "response.completed",
        "response": {"id": "r", "status": "completed", "output": []},
    }
    events = [
        SseEvent(data=json.dumps(created), event="response.created"),
        SseEvent(data=json.dumps(completed), event="response.completed"),
        SseEvent(data="[DONE]"),
    ]
    updates = decode_all(events)
    assert not any(isinstance(update, StreamFailed) for update in updates)
