"""Bad decisions are refused before anything runs; a decision executes at most once."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from interlock.core_loop import DecisionRefusedError, Tool, tool
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    Message,
    Request,
    ResponseStarted,
    StreamFailed,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from tests.core_loop.harness import (
    Calls,
    Mode,
    World,
    answer,
    both,
    call,
    decide,
    reply,
    results,
    say,
    shape,
    user,
)


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


DIFFERENT_DECISIONS = [
    ApprovalResponsePart(approval_id="", approved=False),
    ApprovalResponsePart(approval_id="", approved=True, edited_arguments='{"path":"/b"}'),
    ApprovalResponsePart(approval_id="", approved=True, reason="sure"),
]


@pytest.mark.parametrize("different", DIFFERENT_DECISIONS, ids=["rejection", "edits", "reason"])
async def test_a_different_decision_on_a_used_approval_is_refused(
    different: ApprovalResponsePart,
) -> None:
    calls = Calls()
    world, history, approval_id = await paused_world(calls)
    await world.run([*history, decide((approval_id, True))])
    changed = replace(different, approval_id=approval_id)
    with pytest.raises(DecisionRefusedError) as refused:
        await world.run([*history, decide(changed)])
    assert refused.value.code == "approval_consumed" and refused.value.target == approval_id
    assert calls.count() == 1 and len(world.requests) == 2


async def test_two_concurrent_resumes_execute_once() -> None:
    calls = Calls()
    world, history, approval_id = await paused_world(calls, delay=0.01)
    resumed = [*history, decide((approval_id, True))]
    outcomes = await asyncio.gather(world.run(resumed), world.run(resumed), return_exceptions=True)
    refused = [o for o in outcomes if isinstance(o, DecisionRefusedError)]
    assert len(refused) == 1 and refused[0].code == "approval_consumed"
    assert calls.count() == 1


@pytest.mark.parametrize("mode", ["result", "stream"])
async def test_an_interrupted_approved_execution_settles_as_interrupted_when_exclusive(
    mode: Mode,
) -> None:
    """The run executing an approved call is cancelled mid-tool (journal: started, no
    result). Replaying the decision is refused in a shared run (the tool may still be
    running elsewhere) but, in an exclusive run, settles the call as ``interrupted``
    (seen by the model) and never runs it again."""
    calls = Calls()
    world, history, approval_id = await paused_world(calls, delay=60)
    world.mode = mode
    resumed = [*history, decide((approval_id, True))]
    task = asyncio.ensure_future(world.run(resumed))
    for _ in range(1000):  # let the resumed run reach the tool (no timing involved)
        if calls.count():
            break
        await asyncio.sleep(0)
    assert calls.count() == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(DecisionRefusedError) as refused:
        await world.run(resumed)
    assert refused.value.code == "approval_consumed"
    result = await world.run(resumed, exclusive=True)
    outcomes = [part.outcome for part in results(result.messages)]
    assert outcomes == ["interrupted"] and result.text == "done"
    sent = [part for m in world.requests[-1].messages for part in m.parts]
    assert [p.outcome for p in sent if isinstance(p, ToolResultPart)] == ["interrupted"]
    again = await world.run(resumed, exclusive=True)  # and once more: a plain replay
    assert again.text == "again" and calls.count() == 1


async def test_wire_decoded_history_adopts_recorded_occurrences() -> None:
    calls = Calls()
    world, history, approval_id = await paused_world(calls)
    stripped = tamper(
        history,
        lambda part: replace(part, occurrence_id=None) if isinstance(part, ToolCallPart) else part,
    )
    result = await world.run([*stripped, decide((approval_id, True))])
    assert result.text == "done" and calls.count() == 1


# Retries: an identical decision replayed after its result is journaled -------------------


def pairs_sent(request: Request) -> list[tuple[str, str | None, str]]:
    """Every call and result the model was shown, in order, with their occurrence ids."""
    return [
        (part.kind, part.occurrence_id, part.text if isinstance(part, ToolResultPart) else "")
        for message in request.messages
        for part in message.parts
        if isinstance(part, ToolCallPart | ToolResultPart)
    ]


FAILURES: list[Any] = [
    RuntimeError("connection reset by the provider"),
    [ResponseStarted(), StreamFailed(code="server_error", message="boom", status=500)],
]


@pytest.mark.parametrize("failure", FAILURES, ids=["model-raises", "stream-failed"])
async def test_retry_after_a_failed_model_call_reuses_the_recorded_result(failure: Any) -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "delete", '{"path":"/a"}')), failure, say("done")],
            [delete_tool(calls)],
            mode=mode,
        )
        first = await world.run([user("go")])
        approval_id = first.pending_approvals[0].approval_id
        resumed = [user("go"), *first.messages, decide((approval_id, True))]
        with pytest.raises(RuntimeError):
            await world.run(resumed)
        assert calls.count() == 1
        retried = await world.run(resumed)
        assert calls.count() == 1, "the retry re-used the journaled result"
        failed_request, retry_request = world.requests[1], world.requests[2]
        occurrence = first.pending_approvals[0].call.occurrence_id
        assert pairs_sent(retry_request) == [
            ("tool_call", occurrence, ""),
            ("tool_result", occurrence, "deleted"),
        ]
        assert retry_request == failed_request, "the model sees what the failed call carried"
        assert retried.outcome == "final" and retried.text == "done"
        with pytest.raises(DecisionRefusedError) as refused:
            await world.run([user("go"), *first.messages, decide((approval_id, False))])
        assert refused.value.code == "approval_consumed" and calls.count() == 1
        return shape(retried.messages), [r.text for r in results(retried.messages)]

    observed = await both(scenario)
    assert observed == (
        [("tool", ["tool_result"]), ("assistant", ["text"])],
        ["deleted"],
    ), "the caller gets the recorded result back"


async def test_retry_reuses_every_recorded_result_of_the_batch_in_model_order() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()

        @tool
        def look(path: str) -> str:
            calls("look", path=path)
            return f"seen {path}"

        world = World(
            [
                reply(call("c1", "look", '{"path":"/x"}'), call("c2", "delete", '{"path":"/a"}')),
                RuntimeError("provider unavailable"),
                say("done"),
            ],
            [look, delete_tool(calls)],
            mode=mode,
        )
        first = await world.run([user("go")])
        approval_id = first.pending_approvals[0].approval_id
        resumed = [user("go"), *first.messages, decide((approval_id, True))]
        with pytest.raises(RuntimeError):
            await world.run(resumed)
        retried = await world.run(resumed)
        assert calls.count("look") == 1 and calls.count("delete") == 1
        assert [kind for kind, _, _ in pairs_sent(world.requests[2])] == [
            "tool_call",
            "tool_call",
            "tool_result",
            "tool_result",
        ]
        assert world.requests[2] == world.requests[1]
        return [r.text for r in results(retried.messages)], retried.text

    assert await both(scenario) == (["seen /x", "deleted"], "done")


async def test_replaying_a_completed_approval_runs_nothing_and_duplicates_nothing() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "delete", '{"path":"/a"}')), say("done"), say("again"), say("later")],
            [delete_tool(calls)],
            mode=mode,
        )
        first = await world.run([user("go")])
        approval_id = first.pending_approvals[0].approval_id
        resumed = [user("go"), *first.messages, decide((approval_id, True))]
        done = await world.run(resumed)
        again = await world.run(resumed)  # the same request once more (its answer was lost)
        whole = [*resumed, *done.messages, decide((approval_id, True))]
        later = await world.run(whole)  # the decision sent again on a later turn
        assert calls.count() == 1
        occurrence = first.pending_approvals[0].call.occurrence_id
        for request in world.requests[1:]:
            assert pairs_sent(request) == [
                ("tool_call", occurrence, ""),
                ("tool_result", occurrence, "deleted"),
            ]
        assert shape(world.requests[3].messages) == [
            ("user", ["text"]),
            ("assistant", ["tool_call"]),
            ("tool", ["tool_result"]),
            ("assistant", ["text"]),
        ]
        return [(shape(run.messages), run.text) for run in (again, later)]

    assert await both(scenario) == [
        ([("tool", ["tool_result"]), ("assistant", ["text"])], "again"),
        ([("assistant", ["text"])], "later"),
    ]


async def test_client_results_returned_with_the_decision_still_current() -> None:
    """An approved call and a client call in one batch: the approved one runs, the run
    waits for the client, and the client's result comes back in an input that still
    carries the (consumed) decision. That decision is a replay, not a refusal."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "delete", '{"path":"/a"}'), call("c2", "pick_color")), say("done")],
            [delete_tool(calls), Tool.client("pick_color")],
            mode=mode,
        )
        first = await world.run([user("go")])
        resumed = [
            user("go"),
            *first.messages,
            decide((first.pending_approvals[0].approval_id, True)),
        ]
        waiting = await world.run(resumed)
        assert waiting.outcome == "awaiting_client" and calls.count() == 1
        (pending,) = waiting.pending_calls
        returned = Message(
            role="tool",
            parts=(
                ToolResultPart(
                    call_id="c2",
                    occurrence_id=pending.occurrence_id,
                    output=(TextPart(text="red"),),
                ),
            ),
        )
        final = await world.run([*resumed, *waiting.messages, returned])
        assert calls.count() == 1
        assert [text for _, _, text in pairs_sent(world.requests[-1])] == ["", "", "deleted", "red"]
        return shape(final.messages), final.text

    assert await both(scenario) == ([("assistant", ["text"])], "done")
