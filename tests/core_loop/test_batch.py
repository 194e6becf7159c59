"""Approvals, input requests and mixed batches (contract matrix: approval pause and resume,
approval correlation and replay, mixed batches). Both renderings must agree."""

from __future__ import annotations

from typing import Any

from interlock.core_loop import (
    InputQuestion,
    Limits,
    NeedsInput,
    TerminateLoop,
    Tool,
    ToolContext,
    ToolInvocation,
    tool,
)
from interlock.core_loop import Next as NextCall
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    JsonObject,
    Message,
    ToolChoice,
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
    think,
    user,
)


def guarded_tools(calls: Calls) -> list[Tool]:
    @tool(approval="always")
    def delete(path: str) -> str:
        """Delete a file."""
        calls("delete", path=path)
        return f"deleted {path}"

    @tool
    def lookup(city: str) -> str:
        calls("lookup", city=city)
        return f"sunny in {city}"

    return [delete, lookup]


DELETE = call("c1", "delete", '{"path":"/tmp/a"}')


async def pause(world: World, *script_calls: Any) -> tuple[list[Message], Any]:
    history = [user("clean up")]
    first = await world.run(history)
    return [*history, *first.messages], first


# Approval pause and resume ----------------------------------------------------------


async def test_initial_approval_request() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World([reply(DELETE)], guarded_tools(calls), mode=mode)
        _, first = await pause(world)
        assert first.outcome == "awaiting_approval"
        assert shape(first.messages) == [
            ("assistant", ["tool_call"]),
            ("assistant", ["approval_request"]),
        ]
        (request,) = first.pending_approvals
        assert request.call.name == "delete" and request.call.occurrence_id is not None
        assert request.call == first.messages[0].parts[0]
        assert calls.count() == 0
        return first

    await both(scenario)


async def test_approved_and_rejected_resume() -> None:
    async def scenario(mode: Mode, approved: bool) -> Any:
        calls = Calls()
        world = World([reply(DELETE), say("done")], guarded_tools(calls), mode=mode)
        history, first = await pause(world)
        approval_id = first.pending_approvals[0].approval_id
        second = await world.run([*history, decide((approval_id, approved))])
        assert shape(second.messages) == [("tool", ["tool_result"]), ("assistant", ["text"])]
        (result,) = results(second.messages)
        assert (
            result.call_id == "c1"
            and result.occurrence_id == first.pending_approvals[0].call.occurrence_id
        )
        assert result.outcome == ("success" if approved else "denied")
        model_view = world.requests[1].messages
        assert shape(model_view) == [
            ("user", ["text"]),
            ("assistant", ["tool_call"]),
            ("tool", ["tool_result"]),
        ], "approval wrappers never reach the model"
        if mode == "stream":
            kinds = [type(e).__name__ for e in world.runs[1]]
            assert kinds.index("ToolFinished") < kinds.index("ModelUpdate"), (
                "result before model text"
            )
        return second, calls.count()

    approved = await both(lambda mode: scenario(mode, True))
    assert approved[1] == 1
    rejected = await both(lambda mode: scenario(mode, False))
    assert rejected[1] == 0 and "rejected" in results(rejected[0].messages)[0].text


async def test_mixed_approved_rejected_batch() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(DELETE, call("c2", "delete", '{"path":"/tmp/b"}')), say("half done")],
            guarded_tools(calls),
            mode=mode,
        )
        history, first = await pause(world)
        yes, no = (request.approval_id for request in first.pending_approvals)
        second = await world.run([*history, decide((yes, True), (no, False))])
        assert [(r.call_id, r.outcome) for r in results(second.messages)] == [
            ("c1", "success"),
            ("c2", "denied"),
        ]
        return second, calls.log

    _, log = await both(scenario)
    assert log == [("delete", {"path": "/tmp/a"})]


async def test_approve_with_edits() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World([reply(DELETE), say("done")], guarded_tools(calls), mode=mode)
        history, first = await pause(world)
        edit = ApprovalResponsePart(
            approval_id=first.pending_approvals[0].approval_id,
            approved=True,
            edited_arguments='{"path":"/tmp/safe"}',
        )
        second = await world.run([*history, decide(edit)])
        record = await world.ledger.approval("thread", edit.approval_id)
        assert record is not None and record.decision is not None
        assert record.decision.edited_arguments == '{"path":"/tmp/safe"}', "the edit is recorded"
        return second, calls.log

    second, log = await both(scenario)
    assert log == [("delete", {"path": "/tmp/safe"})]
    assert results(second.messages)[0].text == "deleted /tmp/safe"


async def test_hosted_approval_pass_through() -> None:
    hosted = ApprovalRequestPart(
        approval_id="mcpr_1",
        call=call("h1", "search_docs", "{}", owner="hosted", server_label="docs"),
    )

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World([reply(hosted), say("Here are the docs.")], guarded_tools(calls), mode=mode)
        first = await world.run([user("docs?")])
        assert first.outcome == "awaiting_approval" and first.pending_approvals == (hosted,)
        history = [user("docs?"), *first.messages]
        second = await world.run([*history, decide(("mcpr_1", True))])
        assert second.text == "Here are the docs."
        assert shape(world.requests[1].messages) == [
            ("user", ["text"]),
            ("assistant", ["approval_request"]),
            ("user", ["approval_response"]),
        ], "a hosted decision is sent once, with its request, and never executed locally"
        third_world_request = (
            await world.run([*history, decide(("mcpr_1", True)), *second.messages, user("thanks")])
            if False
            else None
        )
        assert third_world_request is None
        return second, calls.count()

    _, count = await both(scenario)
    assert count == 0


async def test_approval_time_user_input() -> None:
    @tool(approval="always")
    def book(ctx: ToolContext, hotel: str) -> str:
        if not ctx.answers:
            raise NeedsInput(
                questions=[InputQuestion(prompt="Which date?"), InputQuestion(prompt="Nights?")]
            )
        return f"booked {hotel} on {ctx.answers[0]} for {ctx.answers[1]}"

    async def scenario(mode: Mode) -> Any:
        world = World(
            [reply(call("b1", "book", '{"hotel":"Ritz"}')), say("Booked!")],
            [book],
            {"limits": Limits(max_function_calls=1)},
            mode=mode,
        )
        history = [user("book it")]
        first = await world.run(history)
        history += first.messages
        second = await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        assert second.outcome == "awaiting_input" and len(world.requests) == 1
        assert [r.prompt for r in second.pending_inputs] == ["Which date?", "Nights?"]
        assert shape(second.messages) == [("assistant", ["input_request", "input_request"])]
        assert second.function_calls == 1
        history += [decide((first.pending_approvals[0].approval_id, True)), *second.messages]
        date, nights = (request.request_id for request in second.pending_inputs)
        partial = await world.run([*history, answer(date, "May 1")])
        assert partial.outcome == "awaiting_input" and len(world.requests) == 1
        history.append(answer(date, "May 1"))
        third = await world.run([*history, answer(nights, 2)])
        assert results(third.messages)[0].text == "booked Ritz on May 1 for 2"
        assert third.function_calls == 1, "a resumed execution does not count twice"
        assert third.outcome == "limit" and third.text == "Booked!"
        return second, partial, third

    await both(scenario)


async def test_mixed_terminal_result_and_follow_up_input() -> None:
    @tool
    def ask(ctx: ToolContext) -> Any:
        return NeedsInput("Why?", schema={"type": "string"}) if not ctx.answers else "because"

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("a", "lookup", '{"city":"A"}'), call("q", "ask"))],
            [*guarded_tools(calls), ask],
            mode=mode,
        )
        first = await world.run([user("go")])
        assert shape(first.messages) == [
            ("assistant", ["tool_call", "tool_call"]),
            ("tool", ["tool_result"]),
            ("assistant", ["input_request"]),
        ]
        (request,) = first.pending_inputs
        assert request.call_id == "q" and request.response_schema == {"type": "string"}
        return first, calls.count()

    await both(scenario)


async def test_approval_time_middleware_termination() -> None:
    async def terminate(invocation: ToolInvocation, proceed: NextCall) -> object:
        raise TerminateLoop("terminated by middleware")

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(DELETE), say("never")],
            guarded_tools(calls),
            {"middleware": (terminate,)},
            mode=mode,
        )
        history, first = await pause(world)
        second = await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        assert second.outcome == "terminated"
        assert shape(second.messages) == [("tool", ["tool_result"])]
        assert len(world.requests) == 1 and second.function_calls == 1
        return second, calls.count()

    _, count = await both(scenario)
    assert count == 0


async def test_approval_re_entry_after_iteration_budget() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(DELETE), say("final words")],
            guarded_tools(calls),
            {"limits": Limits(max_iterations=1)},
            mode=mode,
        )
        history, first = await pause(world)
        second = await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        assert calls.count() == 1 and second.outcome == "limit"
        assert world.requests[1].tool_choice == ToolChoice(mode="none")
        return second

    await both(scenario)


async def test_approval_resume_with_reasoning() -> None:
    async def scenario(mode: Mode) -> Any:
        world = World([reply(think("plan"), DELETE), say("ok")], guarded_tools(Calls()), mode=mode)
        history, first = await pause(world)
        assert shape(first.messages)[0] == ("assistant", ["reasoning", "tool_call"])
        await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        assert shape(world.requests[1].messages)[1:] == [
            ("assistant", ["reasoning", "tool_call"]),
            ("tool", ["tool_result"]),
        ]
        return world.requests

    await both(scenario)


# Approval correlation and replay ----------------------------------------------------


async def test_reused_id_after_completion() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(DELETE), say("one"), reply(DELETE), say("two")], guarded_tools(calls), mode=mode
        )
        history, first = await pause(world)
        history.append(decide((first.pending_approvals[0].approval_id, True)))
        second = await world.run(history)
        history += [*second.messages, user("again")]
        third = await world.run(history)
        assert third.pending_approvals[0].approval_id != first.pending_approvals[0].approval_id
        history += [*third.messages, decide((third.pending_approvals[0].approval_id, True))]
        fourth = await world.run(history)
        assert fourth.text == "two"
        model_view = world.requests[-1].messages
        assert [
            (m.role, [getattr(p, "call_id", None) for p in m.parts])
            for m in model_view
            if m.role != "user"
        ] == [
            ("assistant", ["c1"]),
            ("tool", ["c1"]),
            ("assistant", [None]),
            ("assistant", ["c1"]),
            ("tool", ["c1"]),
        ]
        return calls.count()

    assert await both(scenario) == 2


async def test_replayed_approval_wrapper_and_resolved_history() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World([reply(DELETE), say("done"), say("later")], guarded_tools(calls), mode=mode)
        history, first = await pause(world)
        request_message = history[-1]
        history += [request_message, decide((first.pending_approvals[0].approval_id, True))]
        second = await world.run(history)
        assert len(results(second.messages)) == 1
        history += [*second.messages, user("unrelated")]
        third = await world.run(history)
        assert third.text == "later"
        tool_calls = [p for m in world.requests[-1].messages for p in m.tool_calls]
        assert len(tool_calls) == 1 and len(results(world.requests[-1].messages)) == 1
        assert not any(
            p.kind.startswith("approval") for m in world.requests[-1].messages for p in m.parts
        )
        return calls.count()

    assert await both(scenario) == 1, "a prior terminal approval never executes again"


async def test_pending_history_turn() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(think(), DELETE), say("unrelated answer"), say("done")],
            guarded_tools(calls),
            mode=mode,
        )
        history, first = await pause(world)
        history.append(user("what time is it?"))
        second = await world.run(history)
        assert second.text == "unrelated answer" and calls.count() == 0
        assert shape(world.requests[1].messages) == [("user", ["text"]), ("user", ["text"])], (
            "the pending batch (and its reasoning) is omitted atomically"
        )
        history += [*second.messages, decide((first.pending_approvals[0].approval_id, True))]
        third = await world.run(history)
        assert third.text == "done" and calls.count() == 1
        assert shape(world.requests[2].messages) == [
            ("user", ["text"]),
            ("assistant", ["reasoning", "tool_call"]),
            ("tool", ["tool_result"]),
            ("user", ["text"]),
            ("assistant", ["text"]),
        ]
        return third

    await both(scenario)


# Mixed batches ----------------------------------------------------------------------


async def test_safe_and_approval_required_calls_in_one_batch() -> None:
    async def scenario(mode: Mode, order: str) -> Any:
        calls = Calls()
        batch = [call("s", "lookup", '{"city":"A"}'), DELETE]
        if order == "approval-first":
            batch.reverse()
        world = World([reply(*batch), say("both done")], guarded_tools(calls), mode=mode)
        history, first = await pause(world)
        assert calls.count() == 0, "nothing in the batch runs before every decision is in"
        assert [r.call.name for r in first.pending_approvals] == ["delete"]
        second = await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        assert [r.call_id for r in results(second.messages)] == [c.call_id for c in batch]
        return second, calls.count()

    for order in ("safe-first", "approval-first"):
        _, count = await both(lambda mode, order=order: scenario(mode, order))
        assert count == 2


async def test_unrelated_turn_and_multiple_abandoned_batches() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("a", "lookup", '{"city":"A"}'), call("x", "delete", '{"path":"/a"}')),
                reply(call("b", "lookup", '{"city":"B"}'), call("y", "delete", '{"path":"/b"}')),
                say("b done"),
            ],
            guarded_tools(calls),
            mode=mode,
        )
        history, _ = await pause(world)
        history.append(user("never mind, do B"))
        second = await world.run(history)
        assert calls.count() == 0
        history += [*second.messages, decide((second.pending_approvals[0].approval_id, True))]
        third = await world.run(history)
        assert third.text == "b done"
        assert calls.log == [("lookup", {"city": "B"}), ("delete", {"path": "/b"})]
        held = await world.ledger.held_batches("thread")
        assert [item.call.call_id for item in held[0].calls] == ["a", "x"], (
            "batch A stays resumable"
        )
        return third

    await both(scenario)


async def test_queued_approvals_partial_decision() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(DELETE, call("c2", "delete", '{"path":"/tmp/b"}')), say("done")],
            guarded_tools(calls),
            mode=mode,
        )
        history, first = await pause(world)
        one, two = (request.approval_id for request in first.pending_approvals)
        history.append(decide((one, True)))
        second = await world.run(history)
        assert second.outcome == "awaiting_approval"
        assert [r.approval_id for r in second.pending_approvals] == [two]
        assert calls.count() == 0 and len(world.requests) == 1, "no execution, no model call"
        history += [*second.messages, decide((two, True))]
        third = await world.run(history)
        assert third.text == "done" and calls.count() == 2
        return third

    await both(scenario)


async def test_auto_approval_callback_and_argument_scoped_rule() -> None:
    seen: list[str] = []

    def auto(call_part: Any) -> bool:
        seen.append(call_part.arguments)
        return call_part.arguments == '{"path":"/tmp/a"}'

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(DELETE, call("c2", "delete", '{"path":"/etc"}')), say("done")],
            guarded_tools(calls),
            {"auto_approve": auto},
            mode=mode,
        )
        history, first = await pause(world)
        assert [r.call.arguments for r in first.pending_approvals] == ['{"path":"/etc"}']
        second = await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        assert calls.count() == 2
        return second

    await both(scenario)
    assert seen == ['{"path":"/tmp/a"}', '{"path":"/etc"}'] * 2


async def test_approval_rule_on_arguments() -> None:
    def risky(arguments: JsonObject) -> bool:
        return arguments.get("amount", 0) > 100  # type: ignore[operator]

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        pay = Tool.from_function(
            lambda amount: calls("pay", amount=amount), name="pay", approval=risky
        )
        world = World(
            [reply(call("p1", "pay", '{"amount":5}'), call("p2", "pay", '{"amount":500}'))],
            [pay],
            mode=mode,
        )
        first = await world.run([user("pay")])
        assert [r.call.call_id for r in first.pending_approvals] == ["p2"]
        return first

    await both(scenario)


async def test_shared_call_budget_across_re_entry() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(DELETE), reply(call("c2", "lookup", '{"city":"B"}')), say("stopped")],
            guarded_tools(calls),
            {"limits": Limits(max_function_calls=1)},
            mode=mode,
        )
        history, first = await pause(world)
        assert first.function_calls == 0, "surfacing an approval costs nothing"
        second = await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        assert second.outcome == "limit" and second.function_calls == 1
        assert world.requests[1].tool_choice == ToolChoice(mode="none")
        return second, calls.count()

    _, count = await both(scenario)
    assert count == 1
