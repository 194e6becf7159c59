"""Streamed ids are the stored ids: what a client builds from the events alone has the ids
of the snapshot the gateway renders from the stored thread."""

from __future__ import annotations

from interlock.codecs.agui import (
    SNAPSHOT_LIMIT,
    derived_base,
    held_message_ids,
    messages_to_agui,
    stamp_result_ids,
    verify_events,
    window_messages,
)
from interlock.transcript import (
    JsonObject,
    Message,
    TextPart,
    ToolResultPart,
    Update,
    response_to_updates,
)

from .client_model import apply_events
from .scenarios import KEY, encoder
from .test_encoder import RESPONSE, _streamed  # pyright: ignore[reportPrivateUsage]

RESULTS = (
    ToolResultPart(call_id="call_1", output=(TextPart(text="sunny"),)),
    ToolResultPart(call_id="call_2", output=(TextPart(text="12:00"),)),
)


def _stream(updates: list[Update]) -> tuple[list[JsonObject], dict[tuple[str, str], str]]:
    run = encoder()
    events = run.start()
    for update in updates:
        events += run.encode(update, message_id="msg_a")
    for result in reversed(RESULTS):  # completion order need not be call order
        events += run.tool_result(result, message_id="msg_t")
    events += run.finish()
    verify_events(events)
    return events, run.result_message_ids


def _ids(messages: list[JsonObject]) -> list[object]:
    return sorted(str(message["id"]) for message in messages)


def test_a_client_without_the_snapshot_holds_the_snapshot_ids() -> None:
    for updates in (_streamed(RESPONSE), response_to_updates(RESPONSE)):
        events, result_ids = _stream(updates)
        held = apply_events([], events)
        stored = (
            Message(role="assistant", parts=RESPONSE.message.parts, id="msg_a"),
            *stamp_result_ids([Message(role="tool", parts=RESULTS, id="msg_t")], result_ids),
        )
        snapshot = messages_to_agui(stored, seal_key=KEY, tenant="acme")
        assert _ids(held) == _ids(snapshot)
        known = held_message_ids(stored)
        for message in held:
            wire_id = str(message["id"])
            assert wire_id in known or derived_base(wire_id) in known


def test_results_of_one_tool_message_get_distinct_ids() -> None:
    _, result_ids = _stream(_streamed(RESPONSE))
    assert result_ids == {("msg_t", "call_2"): "msg_t", ("msg_t", "call_1"): "msg_t:t1"}


def test_without_stored_ids_the_encoder_mints_run_scoped_ids() -> None:
    run = encoder()
    events = run.start() + run.tool_result(RESULTS[0])
    assert events[-1]["messageId"] == "run-1:t1"
    assert run.result_message_ids == {}


def test_derived_ids_name_their_base_and_nothing_else_does() -> None:
    assert derived_base("msg_1:r0") == "msg_1"
    assert derived_base("msg_1:a12") == "msg_1"
    assert derived_base("a:b:t3") == "a:b"
    assert derived_base("msg_1:s2") == "msg_1"
    for other in ("msg_1", "msg_1:", ":r1", "msg_1:x1", "msg_1:r", "msg_1:rx", "msg_1:resume"):
        assert derived_base(other) is None


def test_held_ids_include_ids_recorded_with_parts() -> None:
    stamped = stamp_result_ids(
        [Message(role="tool", parts=RESULTS, id="msg_t")],
        {("msg_t", "call_1"): "msg_t", ("msg_t", "call_2"): "msg_t:t1"},
    )
    assert held_message_ids(stamped) == {"msg_t", "msg_t:t1"}
    untouched = Message(role="user", parts=(TextPart(text="hi"),), id="u1")
    assert stamp_result_ids([untouched], {}) == (untouched,)


def _message(position: int, role: str = "user", size: int = 10) -> JsonObject:
    return {"id": f"m{position}", "role": role, "content": "x" * size}


def test_a_snapshot_that_fits_is_whole() -> None:
    messages = [_message(position) for position in range(5)]
    assert window_messages(messages) == (messages, 0)
    assert SNAPSHOT_LIMIT < 10 * 1024 * 1024


def test_a_large_thread_keeps_its_newest_messages_within_the_limit() -> None:
    messages = [_message(position, size=100) for position in range(10)]
    kept, omitted = window_messages(messages, limit=450)
    assert [m["id"] for m in kept] == ["m7", "m8", "m9"] and omitted == 7


def test_a_window_never_starts_on_a_tool_or_reasoning_message() -> None:
    messages = [
        _message(0, size=100),
        _message(1, "assistant", 100),
        _message(2, "tool", 10),
        _message(3, "reasoning", 10),
        _message(4, "assistant", 10),
    ]
    kept, omitted = window_messages(messages, limit=200)
    assert [m["id"] for m in kept] == ["m4"] and omitted == 4


def test_a_last_message_over_the_limit_leaves_an_empty_window() -> None:
    kept, omitted = window_messages([_message(0, size=50)], limit=10)
    assert kept == [] and omitted == 1
