"""Bad decisions are refused before anything runs; a decision executes at most once."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from interlock.core_loop import DecisionRefusedError, Tool, tool
from interlock.transcript import ApprovalRequestPart, ApprovalResponsePart, Message, ToolCallPart
from tests.core_loop.harness import Calls, World, answer, call, decide, reply, say, user


def delete_tool(calls: Calls, delay: float = 0) -> Tool:
    @tool(approval="always")
    async def delete(path: str) -> str:
        calls("delete", path=path)
        await asyncio.sleep(delay)
        return "deleted"

    return delete


async def paused_world(calls: Calls, delay: float = 0) -> tuple[World, list[Message], str]:
    world = World(
        [reply(call("c1", "delete", '{"path":"/a"}')), say("done"), say("again")],
        [delete_tool(calls, delay)],
    )
    history = [user("go")]
    first = await world.run(history)
    return world, [*history, *first.messages], first.pending_approvals[0].approval_id


def tamper(history: list[Message], change: Any) -> list[Message]:
    out: list[Message] = []
    for message in history:
        parts = tuple(change(part) for part in message.parts)
        out.append(replace(message, parts=parts))
    return out


def edit_call(part: Any) -> Any:
    if isinstance(part, ToolCallPart):
        return replace(part, arguments='{"path":"/etc"}')
    return part


def rename_request(part: Any) -> Any:
    if isinstance(part, ApprovalRequestPart):
        return replace(part, call=replace(part.call, name="lookup"))
    return part


@pytest.mark.parametrize(
    ("make_input", "code"),
    [
        (lambda history, approval_id: [*history, decide(("apr_forged", True))], "unknown_approval"),
        (
            lambda history, approval_id: [*tamper(history, edit_call), decide((approval_id, True))],
            "approval_tampered",
        ),
        (
            lambda history, approval_id: [
                *tamper(history, rename_request),
                decide((approval_id, True)),
            ],
            "approval_tampered",
        ),
        (
            lambda history, approval_id: [user("go"), decide((approval_id, True))],
            "approval_call_missing",
        ),
        (
            lambda history, approval_id: [
                *history,
                decide((approval_id, True), (approval_id, True)),
            ],
            "duplicate_decision",
        ),
        (
            lambda history, approval_id: [
                *history,
                decide(
                    ApprovalResponsePart(
                        approval_id=approval_id, approved=False, edited_arguments="{}"
                    )
                ),
            ],
            "invalid_edit",
        ),
        (
            lambda history, approval_id: [
                *history,
                decide(
                    ApprovalResponsePart(
                        approval_id=approval_id, approved=True, edited_arguments="{oops"
                    )
                ),
            ],
            "invalid_edit",
        ),
        (
            lambda history, approval_id: [*history, answer("input_404", "x")],
            "unknown_input_request",
        ),
    ],
    ids=[
        "unknown-id",
        "tampered-arguments",
        "tampered-request-name",
        "call-missing",
        "duplicate",
        "edit-on-rejection",
        "edit-not-json",
        "unknown-input-request",
    ],
)
async def test_bad_decision_is_refused_and_runs_nothing(make_input: Any, code: str) -> None:
    calls = Calls()
    world, history, approval_id = await paused_world(calls)
    with pytest.raises(DecisionRefusedError) as refused:
        await world.run(make_input(history, approval_id))
    assert refused.value.code == code
    assert calls.count() == 0 and len(world.requests) == 1
    record = await world.ledger.approval("thread", approval_id)
    assert record is not None and record.live, "a refused input consumes nothing"
    honest = await world.run([*history, decide((approval_id, True))])
    assert honest.text == "done" and calls.count() == 1


async def test_already_used_decision_is_refused() -> None:
    calls = Calls()
    world, history, approval_id = await paused_world(calls)
    resumed = [*history, decide((approval_id, True))]
    await world.run(resumed)
    with pytest.raises(DecisionRefusedError) as refused:
        await world.run(resumed)
    assert refused.value.code == "approval_consumed" and refused.value.target == approval_id
    assert calls.count() == 1


async def test_two_concurrent_resumes_execute_once() -> None:
    calls = Calls()
    world, history, approval_id = await paused_world(calls, delay=0.01)
    resumed = [*history, decide((approval_id, True))]
    outcomes = await asyncio.gather(world.run(resumed), world.run(resumed), return_exceptions=True)
    refused = [o for o in outcomes if isinstance(o, DecisionRefusedError)]
    assert len(refused) == 1 and refused[0].code == "approval_consumed"
    assert calls.count() == 1


async def test_wire_decoded_history_adopts_recorded_occurrences() -> None:
    calls = Calls()
    world, history, approval_id = await paused_world(calls)
    stripped = tamper(
        history,
        lambda part: replace(part, occurrence_id=None) if isinstance(part, ToolCallPart) else part,
    )
    result = await world.run([*stripped, decide((approval_id, True))])
    assert result.text == "done" and calls.count() == 1
