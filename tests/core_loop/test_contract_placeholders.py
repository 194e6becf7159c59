"""Contract rows about placeholder results. Interlock writes none: results live in the
ledger's journal. But a caller (a frontend showing "pending", a client replaying a wire
transcript) may put a stand-in result next to a call that still awaits its decision. The
guarantees: the model never sees a stand-in, the loop's own result (run or rejected)
replaces it, results stay paired by occurrence whatever order the stand-ins are in, and a
decision stays usable while a stand-in is the only result. Streaming and non-streaming
agree on every scenario."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.core_loop import ModelStreamError, Tool, tool
from interlock.transcript import Message, TextPart, ToolCallPart, ToolResultPart
from tests.core_loop.harness import (
    Calls,
    Mode,
    World,
    both,
    call,
    decide,
    reply,
    results,
    say,
    user,
)

PENDING = "[APPROVAL_PENDING]"


def counted_tools(calls: Calls) -> list[Tool]:
    @tool(approval="always")
    def delete(path: str) -> str:
        """Delete a path."""
        calls("delete", path=path)
        return f"deleted {path}"

    return [delete]


def stand_in(call_id: str) -> ToolResultPart:
    """What a frontend may write for a call awaiting approval (no occurrence id)."""
    return ToolResultPart(call_id=call_id, output=(TextPart(text=PENDING),))


def tool_message(*parts: ToolResultPart) -> Message:
    return Message(role="tool", parts=parts)


def sent(messages: tuple[Message, ...]) -> list[tuple[str, str, str]]:
    """(kind, call id, arguments or result text) of every call and result sent."""
    out: list[tuple[str, str, str]] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                out.append(("call", part.call_id, part.arguments))
            elif isinstance(part, ToolResultPart):
                out.append(("result", part.call_id, part.text))
    return out


# Reused-id placeholders -----------------------------------------------------------------


async def test_stand_ins_for_two_occurrences_of_one_call_id_give_way_by_occurrence() -> None:
    """One answer calls ``c1`` twice (``/a``, then ``/b``). The caller adds a stand-in for
    each (call id only, so they pair with the occurrences in order), then approves both:
    each occurrence runs once and gets its own result (``/a``'s, then ``/b``'s), and no
    request, now or on a later turn, carries a stand-in."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "delete", '{"path":"/a"}'), call("c1", "delete", '{"path":"/b"}')),
                say("both gone"),
                say("you're welcome"),
            ],
            counted_tools(calls),
            mode=mode,
        )
        first = await world.run([user("delete /a and /b")])
        answered, *controls = first.messages
        approvals = first.pending_approvals
        history = [
            user("delete /a and /b"),
            answered,
            tool_message(stand_in("c1"), stand_in("c1")),
            *controls,
            decide(*((approval.approval_id, True) for approval in approvals)),
        ]
        second = await world.run(history)
        assert [(r.occurrence_id, r.text) for r in results(second.messages)] == [
            (approvals[0].call.occurrence_id, "deleted /a"),
            (approvals[1].call.occurrence_id, "deleted /b"),
        ]
        third = await world.run([*history, *second.messages, user("thanks")])
        assert third.text == "you're welcome"
        expected = [
            ("call", "c1", '{"path":"/a"}'),
            ("call", "c1", '{"path":"/b"}'),
            ("result", "c1", "deleted /a"),
            ("result", "c1", "deleted /b"),
        ]
        assert sent(world.requests[1].messages) == expected
        assert sent(world.requests[2].messages) == expected
        return second, third, calls.log

    *_, log = await both(scenario)
    assert log == [("delete", {"path": "/a"}), ("delete", {"path": "/b"})]


# Rejected placeholder --------------------------------------------------------------------


async def test_a_rejection_replaces_the_stand_in_and_adds_no_second_result() -> None:
    """A rejected call whose stand-in sits in the caller's transcript ends with exactly one
    result the model sees: the ``denied`` one, in the turn of the decision and on every
    later turn. The tool never runs."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "delete", '{"path":"/a"}')), say("kept it"), say("ok")],
            counted_tools(calls),
            mode=mode,
        )
        first = await world.run([user("delete /a")])
        approval = first.pending_approvals[0].approval_id
        history = [
            user("delete /a"),
            *first.messages,
            tool_message(stand_in("c1")),
            decide((approval, False)),
        ]
        second = await world.run(history)
        (denied,) = results(second.messages)
        assert denied.outcome == "denied"
        third = await world.run([*history, *second.messages, user("fine")])
        assert third.text == "ok"
        for request in world.requests[1:]:
            assert sent(request.messages) == [
                ("call", "c1", '{"path":"/a"}'),
                ("result", "c1", denied.text),
            ]
        return second, third, calls.count()

    *_, count = await both(scenario)
    assert count == 0


# Results reordered with placeholders ---------------------------------------------------


async def test_reordered_stand_ins_and_decisions_keep_each_result_with_its_call() -> None:
    """Stand-ins for ``c2`` then ``c1`` (reversed), decisions reversed too (``c2`` approved,
    ``c1`` rejected): ``c1`` gets the rejection and ``c2`` its execution's result, in
    model order, now and on a later turn; only ``c2`` runs."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "delete", '{"path":"/a"}'), call("c2", "delete", '{"path":"/b"}')),
                say("one of two"),
                say("ok"),
            ],
            counted_tools(calls),
            mode=mode,
        )
        first = await world.run([user("delete /a and /b")])
        first_approval, second_approval = first.pending_approvals
        history = [
            user("delete /a and /b"),
            *first.messages,
            tool_message(stand_in("c2"), stand_in("c1")),
            decide((second_approval.approval_id, True), (first_approval.approval_id, False)),
        ]
        second = await world.run(history)
        denied, deleted = results(second.messages)
        assert [(r.call_id, r.outcome, r.text) for r in (denied, deleted)] == [
            ("c1", "denied", denied.text),
            ("c2", "success", "deleted /b"),
        ]
        await world.run([*history, *second.messages, user("thanks")])
        for request in world.requests[1:]:
            assert sent(request.messages) == [
                ("call", "c1", '{"path":"/a"}'),
                ("call", "c2", '{"path":"/b"}'),
                ("result", "c1", denied.text),
                ("result", "c2", "deleted /b"),
            ], "now and on a later turn"
        return second, calls.log

    _, log = await both(scenario)
    assert log == [("delete", {"path": "/b"})]


# Pending placeholder history ------------------------------------------------------------


async def test_a_decision_stays_usable_while_a_stand_in_is_the_only_result() -> None:
    """While a call awaits approval, an unrelated turn does not show the model the call
    or its stand-in, and the approval stays open. Approving runs it once; when the model
    call after it fails, the caller resends the same input (its only result still the
    stand-in): nothing runs again, the journaled result is returned, and the model sees
    it, never the stand-in."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "delete", '{"path":"/a"}')),
                say("it is still waiting"),
                ConnectionError("upstream dropped"),
                say("deleted"),
            ],
            counted_tools(calls),
            mode=mode,
        )
        first = await world.run([user("delete /a")])
        approval = first.pending_approvals[0].approval_id
        history = [user("delete /a"), *first.messages, tool_message(stand_in("c1"))]
        history += [user("is it done?")]
        unrelated = await world.run(history)
        assert sent(world.requests[-1].messages) == [], "no call and no stand-in"
        record = await world.ledger.approval("thread", approval)
        assert record is not None and record.live
        history += [*unrelated.messages, decide((approval, True))]
        with pytest.raises((ConnectionError, ModelStreamError)):
            await world.run(history)
        assert calls.count() == 1
        retried = await world.run(history)
        assert [(r.call_id, r.text) for r in results(retried.messages)] == [("c1", "deleted /a")]
        assert retried.text == "deleted"
        for request in world.requests[2:]:
            assert sent(request.messages) == [
                ("call", "c1", '{"path":"/a"}'),
                ("result", "c1", "deleted /a"),
            ]
        return unrelated, retried, calls.count()

    *_, count = await both(scenario)
    assert count == 1
