"""Contract rows that need a dedicated test: function invocation disabled, approved tools
that raise or get invalid arguments, a service-owned ``previous_response_id``
continuation that must never run a terminal approval again, and middleware state saved
while a mixed batch is held. Streaming and non-streaming
agree on every scenario."""

from __future__ import annotations

from typing import Any

import pytest

from interlock.core_loop import AgentState, DecisionRefusedError, Next, Tool, ToolInvocation, tool
from interlock.transcript import (
    ApprovalResponsePart,
    GenerationOptions,
    JsonValue,
    Message,
    ToolResultPart,
)
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
    shape,
    user,
)


def counted_tools(calls: Calls) -> list[Tool]:
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        calls("lookup", city=city)
        return f"found {city}"

    @tool(approval="always")
    def delete(path: str) -> str:
        """Delete a path."""
        calls("delete", path=path)
        if path == "/boom":
            raise RuntimeError("kaboom")
        return f"deleted {path}"

    return [lookup, delete]


# Function invocation disabled --------------------------------------------------------


async def test_function_invocation_disabled_returns_the_calls_and_runs_nothing() -> None:
    options = GenerationOptions(temperature=0.25, max_output_tokens=77)

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "lookup", '{"city":"A"}'), call("c2", "delete", '{"path":"/a"}')),
                say("thanks"),
            ],
            counted_tools(calls),
            {"invoke_functions": False, "options": options},
            mode=mode,
        )
        first = await world.run([user("go")])
        assert first.outcome == "awaiting_client" and first.pending_approvals == ()
        assert [c.name for c in first.pending_calls] == ["lookup", "delete"]
        request = world.requests[0]
        assert request.options == options, "the invocation's options reach the model as given"
        assert [spec.name for spec in request.tools] == ["lookup", "delete"]
        returned = Message(
            role="tool",
            parts=tuple(
                ToolResultPart(
                    call_id=pending.call_id,
                    occurrence_id=pending.occurrence_id,
                    name=pending.name,
                    output=(),
                )
                for pending in first.pending_calls
            ),
        )
        second = await world.run([user("go"), *first.messages, returned])
        assert second.text == "thanks"
        assert shape(world.requests[1].messages)[-1] == ("tool", ["tool_result", "tool_result"])
        assert world.requests[1].options == options
        return first, second, calls.count()

    _, _, count = await both(scenario)
    assert count == 0, "with invocation disabled nothing is executed, not even after results"


# Approved tool exception / validation error -----------------------------------------


@pytest.mark.parametrize("detailed", [False, True])
async def test_approved_tool_exception_gives_one_result_and_one_execution(detailed: bool) -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "delete", '{"path":"/boom"}')), say("sorry")],
            counted_tools(calls),
            {"detailed_errors": detailed},
            mode=mode,
        )
        first = await world.run([user("delete")])
        history = [user("delete"), *first.messages]
        second = await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        (failed,) = results(second.messages)
        assert failed.outcome == "failed" and failed.call_id == "c1"
        assert failed.text.startswith("Error: tool 'delete' failed.")
        assert ("kaboom" in failed.text) is detailed
        assert second.text == "sorry"
        return second, calls.count()

    _, count = await both(scenario)
    assert count == 1


async def test_approved_validation_error_never_invokes_the_function_body() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "delete", '{"path": 5}')), say("fixed")],
            counted_tools(calls),
            mode=mode,
        )
        first = await world.run([user("delete")])
        history = [user("delete"), *first.messages]
        second = await world.run([*history, decide((first.pending_approvals[0].approval_id, True))])
        (failed,) = results(second.messages)
        assert failed.outcome == "failed" and "invalid arguments" in failed.text
        assert "path" in failed.text
        return second, calls.count()

    _, count = await both(scenario)
    assert count == 0


# Service-owned previous_response_id continuation -------------------------------------


async def test_previous_response_id_continuation_never_runs_a_terminal_approval_again() -> None:
    """Turns continue from the service's response id and send only new items. After an
    approved call ran, a later turn that carries the old decision again (a stale client,
    a replayed input) runs nothing and sends the model no second result; a different
    decision on it is refused."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "delete", '{"path":"/a"}'), response_id="resp_1"),
                say("deleted", response_id="resp_2"),
                say("anything else?", response_id="resp_3"),
            ],
            counted_tools(calls),
            {"service_state": True},
            mode=mode,
        )
        first = await world.run([user("delete /a")])
        approval_id = first.pending_approvals[0].approval_id
        decision = decide((approval_id, True))
        second = await world.run([decision], previous_response_id=first.response_id)
        assert second.response_id == "resp_2" and calls.count() == 1
        third = await world.run([decision, user("thanks")], previous_response_id="resp_2")
        assert third.text == "anything else?" and calls.count() == 1
        assert world.requests[-1].continuation.previous_response_id == "resp_2"
        sent = [part for m in world.requests[-1].messages for part in m.parts]
        assert not any(isinstance(part, ToolResultPart) for part in sent), "no second result"
        rejected = ApprovalResponsePart(approval_id=approval_id, approved=False)
        with pytest.raises(DecisionRefusedError) as refused:
            await world.run([decide(rejected), user("undo")], previous_response_id="resp_3")
        assert refused.value.code == "approval_consumed"
        return third, calls.count()

    _, count = await both(scenario)
    assert count == 1


# Multiple reused-id rounds -------------------------------------------------------------


async def test_approved_and_rejected_rounds_with_one_call_id_stay_separate() -> None:
    """Two rounds reuse call id ``c1``: the first approved (runs), the second rejected
    (never runs). Each occurrence keeps its own call/result pair with the right outcome,
    and the model sees both pairs, in order."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        again = call("c1", "delete", '{"path":"/a"}')
        world = World(
            [reply(again), say("one"), reply(again), say("two")], counted_tools(calls), mode=mode
        )
        history: list[Message] = [user("delete /a")]
        first = await world.run(history)
        history += [*first.messages, decide((first.pending_approvals[0].approval_id, True))]
        history += (await world.run(history)).messages
        history.append(user("and again"))
        third = await world.run(history)
        rejected = ApprovalResponsePart(
            approval_id=third.pending_approvals[0].approval_id, approved=False
        )
        history += [*third.messages, decide(rejected)]
        fourth = await world.run(history)
        assert fourth.text == "two"
        sent = [p for m in world.requests[-1].messages for p in m.parts]
        pairs = [
            (type(p).__name__, p.call_id, p.occurrence_id, getattr(p, "outcome", None))
            for p in sent
            if hasattr(p, "occurrence_id") and hasattr(p, "call_id")
        ]
        occurrences = [occurrence for _, _, occurrence, _ in pairs]
        assert [(kind, call_id, outcome) for kind, call_id, _, outcome in pairs] == [
            ("ToolCallPart", "c1", None),
            ("ToolResultPart", "c1", "success"),
            ("ToolCallPart", "c1", None),
            ("ToolResultPart", "c1", "denied"),
        ]
        assert occurrences[0] == occurrences[1] != occurrences[2] == occurrences[3]
        return calls.count()

    assert await both(scenario) == 1


# Middleware state plus hidden core state ----------------------------------------------


async def test_saving_middleware_state_never_drops_the_held_calls_of_a_mixed_batch() -> None:
    """Middleware keeps an audit log in the run's shared state; the caller saves that
    state after every turn and starts the next turn from the saved JSON (the frontend
    adding a key of its own). A mixed batch is held across two such saves (the pause and
    an unrelated turn): its safe call does not run early and is not lost; the decision
    runs the safe and the approved call once each, and the audit log keeps every entry."""

    async def audit(invocation: ToolInvocation, proceed: Next) -> object:
        state = invocation.context.state
        assert state is not None
        logged = state.value
        assert isinstance(logged, dict)
        entries = logged.get("audit", [])
        assert isinstance(entries, list)
        state.update({"audit": [*entries, invocation.call.name]})
        return await proceed(invocation)

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "lookup", '{"city":"A"}'), call("c2", "delete", '{"path":"/a"}')),
                say("still waiting for you"),
                say("done"),
            ],
            counted_tools(calls),
            {"middleware": (audit,)},
            mode=mode,
        )
        saved: JsonValue = {"audit": ["earlier"]}
        history: list[Message] = [user("weather in A, then delete /a")]
        state = AgentState(saved)
        first = await world.run(history, state=state)
        approval = first.pending_approvals[0].approval_id
        saved = {**_object(state.value), "theme": "dark"}
        history += [*first.messages, user("what are you waiting for?")]
        state = AgentState(saved)
        unrelated = await world.run(history, state=state)
        saved = state.value
        assert calls.count() == 0 and saved == {"audit": ["earlier"], "theme": "dark"}
        (held,) = await world.ledger.held_batches("thread")
        assert [item.call.name for item in held.calls] == ["lookup", "delete"]
        history += [*unrelated.messages, decide((approval, True))]
        state = AgentState(saved)
        last = await world.run(history, state=state)
        assert [(r.call_id, r.text) for r in results(last.messages)] == [
            ("c1", "found A"),
            ("c2", "deleted /a"),
        ]
        assert state.value == {"audit": ["earlier", "lookup", "delete"], "theme": "dark"}
        return last, calls.log

    _, log = await both(scenario)
    assert log == [("lookup", {"city": "A"}), ("delete", {"path": "/a"})]


def _object(value: JsonValue) -> dict[str, JsonValue]:
    assert isinstance(value, dict)
    return value
