"""The Python mirror of verifyEvents: each rule fires, and legal streams pass."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from interlock.codecs.agui import EventSequenceError, verify_events
from interlock.transcript import JsonObject

STARTED: JsonObject = {
    "type": "RUN_STARTED",
    "threadId": "t",
    "runId": "r",
    "protocolVersion": "1.0",
}
FINISHED: JsonObject = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def text(kind: str, message_id: str = "m", **more: object) -> JsonObject:
    return {"type": f"TEXT_MESSAGE_{kind}", "messageId": message_id, **more}  # type: ignore[dict-item]  # JSON


def call(kind: str, call_id: str = "c", **more: object) -> JsonObject:
    return {"type": f"TOOL_CALL_{kind}", "toolCallId": call_id, **more}  # type: ignore[dict-item]  # JSON


@dataclass(frozen=True)
class Case:
    id: str
    events: list[JsonObject]
    index: int
    strict: bool = True


BAD = [
    Case("first-not-run-started", [text("START")], 0),
    Case("started-twice", [STARTED, STARTED], 1),
    Case("after-finished", [STARTED, FINISHED, text("START")], 2),
    Case("after-error", [STARTED, {"type": "RUN_ERROR", "message": "x"}, text("START")], 2),
    Case("text-open-at-finish", [STARTED, text("START"), FINISHED], 2),
    Case("call-open-at-finish", [STARTED, call("START", toolCallName="f"), FINISHED], 2),
    Case(
        "reasoning-span-open",
        [STARTED, {"type": "REASONING_START", "messageId": "s"}, FINISHED],
        2,
    ),
    Case("text-started-twice", [STARTED, text("START"), text("START")], 2),
    Case("content-unopened", [STARTED, text("CONTENT", delta="x")], 1),
    Case(
        "args-after-end",
        [STARTED, call("START", toolCallName="f"), call("END"), call("ARGS", delta="x")],
        3,
    ),
    Case("step-never-started", [STARTED, {"type": "STEP_FINISHED", "stepName": "s"}], 1),
    Case(
        "reasoning-message-without-role",
        [STARTED, {"type": "REASONING_MESSAGE_START", "messageId": "r"}],
        1,
    ),
    Case("tool-role-text", [STARTED, text("START", role="tool")], 1),
    Case("float-timestamp", [{**STARTED, "timestamp": 1.5}], 0),
    Case("null-optional", [{**STARTED, "parentRunId": None}], 0),
    Case(
        "empty-interrupts",
        [STARTED, {**FINISHED, "outcome": {"type": "interrupt", "interrupts": []}}],
        1,
    ),
    Case("unknown-field", [{**STARTED, "surprise": 1}], 0),
    Case(
        "unknown-nested-field", [STARTED, {**FINISHED, "outcome": {"type": "success", "x": 1}}], 1
    ),
    Case("empty-delta", [STARTED, text("START"), text("CONTENT", delta="")], 2),
    Case("no-protocol-version", [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}], 0),
    Case("finished-ids-differ", [STARTED, {**FINISHED, "runId": "other"}], 1),
    Case("error-after-finished", [STARTED, FINISHED, {"type": "RUN_ERROR", "message": "x"}], 2),
    Case("unterminated", [STARTED], -1),
]


@pytest.mark.parametrize("case", BAD, ids=[case.id for case in BAD])
def test_each_rule_fires(case: Case) -> None:
    with pytest.raises(EventSequenceError) as raised:
        verify_events(case.events, strict=case.strict)
    assert raised.value.index == case.index


def test_request_ids_are_checked() -> None:
    with pytest.raises(EventSequenceError):
        verify_events([STARTED, FINISHED], run_id="another")
    with pytest.raises(EventSequenceError):
        verify_events([STARTED, FINISHED], thread_id="another")


GOOD = {
    "interleaved": [
        STARTED,
        text("START", "a"),
        call("START", "c", toolCallName="f", parentMessageId="a"),
        text("CONTENT", "a", delta="x"),
        call("ARGS", "c", delta="{}"),
        text("END", "a"),
        call("END", "c"),
        FINISHED,
    ],
    "id-reuse-after-end": [
        STARTED,
        text("START"),
        text("END"),
        text("START"),
        text("END"),
        FINISHED,
    ],
    "error-first": [{"type": "RUN_ERROR", "message": "bad input", "code": "INVALID"}],
    "error-with-open-streams": [STARTED, text("START"), {"type": "RUN_ERROR", "message": "x"}],
    "sequential-runs": [STARTED, FINISHED, {**STARTED, "runId": "r2"}, {**FINISHED, "runId": "r2"}],
    "reasoning-message-without-span": [
        STARTED,
        {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r"},
        FINISHED,
    ],
    "custom-null-value": [STARTED, {"type": "CUSTOM", "name": "n", "value": None}, FINISHED],
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_legal_streams_pass(name: str) -> None:
    verify_events(GOOD[name])


def test_lenient_mode_matches_the_client_on_empty_deltas_and_late_errors() -> None:
    verify_events(
        [STARTED, text("START"), text("CONTENT", delta=""), text("END"), FINISHED], strict=False
    )
    verify_events([STARTED, FINISHED, {"type": "RUN_ERROR", "message": "x"}], strict=False)
    with pytest.raises(EventSequenceError):
        verify_events([STARTED, FINISHED, FINISHED], strict=False)
