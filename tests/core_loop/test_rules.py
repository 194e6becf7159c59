"""Standing approval rules: a human approves a tool "always", or "always with exactly these
arguments", for the rest of the thread (contract rows: standing tool rule, argument-scoped
rule, hosted server boundary). Streaming and non-streaming agree."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from interlock.core_loop import ApprovalRule, DecisionRefusedError, Tool, ToolStarted, tool
from interlock.transcript import ApprovalRequestPart, ApprovalResponsePart, Message
from tests.core_loop.harness import Calls, Mode, World, both, call, decide, reply, say, user


def guarded(calls: Calls) -> list[Tool]:
    @tool(approval="always")
    def delete(path: str = "") -> str:
        """Delete a path."""
        calls("delete", path=path)
        return f"deleted {path}"

    @tool(approval="always")
    def send(to: str) -> str:
        """Send mail."""
        calls("send", to=to)
        return f"sent {to}"

    return [delete, send]


def remember(approval_id: str, scope: Literal["tool", "arguments"]) -> Message:
    return decide(ApprovalResponsePart(approval_id=approval_id, approved=True, remember=scope))


async def approve_once_and_remember(
    world: World, arguments: str, scope: Literal["tool", "arguments"]
) -> list[Message]:
    """Turn 1 asks about ``delete(arguments)``; the decision remembers ``scope``."""
    history = [user("delete it")]
    first = await world.run(history)
    (request,) = first.pending_approvals
    history += [*first.messages, remember(request.approval_id, scope)]
    second = await world.run(history)
    assert second.outcome == "final"
    return [*history, *second.messages]


async def test_standing_tool_rule_approves_only_later_calls_of_that_tool() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "delete", '{"path":"/a"}')),
                say("done"),
                reply(call("c2", "delete", '{"path":"/b"}'), call("c3", "send", '{"to":"x"}')),
            ],
            guarded(calls),
            mode=mode,
        )
        history = await approve_once_and_remember(world, '{"path":"/a"}', "tool")
        assert await world.ledger.approval_rules("thread") == (ApprovalRule(tool_name="delete"),)
        third = await world.run([*history, user("now /b and mail x")])
        assert third.outcome == "awaiting_approval"
        assert [request.call.name for request in third.pending_approvals] == ["send"]
        return third, calls.log

    _, log = await both(scenario)
    assert log == [("delete", {"path": "/a"})], "nothing of a held batch runs before its decisions"


@pytest.mark.parametrize(
    ("later", "asks"),
    [
        ('{"path":"/a"}', False),
        ('{ "path" : "/a" }', False),  # the same arguments, other spacing
        ('{"path":"/b"}', True),
        ("{}", True),
    ],
    ids=["same", "same-respaced", "other", "empty"],
)
async def test_argument_scoped_rule_needs_exactly_those_arguments(later: str, asks: bool) -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "delete", '{"path":"/a"}')),
                say("done"),
                reply(call("c2", "delete", later)),
                say("again"),
            ],
            guarded(calls),
            mode=mode,
        )
        history = await approve_once_and_remember(world, '{"path":"/a"}', "arguments")
        third = await world.run([*history, user("once more")])
        assert (third.outcome == "awaiting_approval") is asks
        return third, calls.count()

    _, count = await both(scenario)
    assert count == (1 if asks else 2)


async def test_an_empty_argument_rule_is_not_tool_wide() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "delete", "{}")),
                say("done"),
                reply(call("c2", "delete", '{"path":"/etc"}')),
                say("again"),
            ],
            guarded(calls),
            mode=mode,
        )
        history = await approve_once_and_remember(world, "{}", "arguments")
        third = await world.run([*history, user("and /etc")])
        assert third.outcome == "awaiting_approval"
        return third, calls.count()

    _, count = await both(scenario)
    assert count == 1


async def test_rules_never_cross_to_a_hosted_server() -> None:
    """A local rule for ``search`` leaves a hosted ``search`` (server ``docs``) asking, and a
    hosted decision cannot be remembered at all."""
    hosted = ApprovalRequestPart(
        approval_id="mcpr_1",
        call=call("h1", "search", "{}", owner="hosted", server_label="docs"),
    )

    @tool(approval="always")
    def search() -> str:
        """Search locally."""
        return "local results"

    async def scenario(mode: Mode) -> Any:
        world = World(
            [reply(call("c1", "search")), say("done"), reply(hosted)], [search], mode=mode
        )
        history = [user("search")]
        first = await world.run(history)
        history += [*first.messages, remember(first.pending_approvals[0].approval_id, "tool")]
        history += (await world.run(history)).messages
        third = await world.run([*history, user("search the docs")])
        assert third.outcome == "awaiting_approval" and third.pending_approvals == (hosted,)
        with pytest.raises(DecisionRefusedError) as refused:
            await world.run([*history, user("docs"), *third.messages, remember("mcpr_1", "tool")])
        assert refused.value.code == "invalid_rule" and refused.value.target == "mcpr_1"
        return third

    await both(scenario)


async def test_only_an_approval_can_be_remembered() -> None:
    world = World([reply(call("c1", "delete", '{"path":"/a"}'))], guarded(Calls()))
    first = await world.run([user("delete")])
    rejection = ApprovalResponsePart(
        approval_id=first.pending_approvals[0].approval_id, approved=False, remember="tool"
    )
    with pytest.raises(DecisionRefusedError) as refused:
        await world.run([user("delete"), *first.messages, decide(rejection)])
    assert refused.value.code == "invalid_rule"
    assert await world.ledger.approval_rules("thread") == ()


def _started(world: World) -> list[tuple[str, object]]:
    """Every ``ToolStarted`` of the last run: the call id and what approved it."""
    return [
        (event.call.call_id, event.approved_by)
        for event in world.runs[-1]
        if isinstance(event, ToolStarted)
    ]


@pytest.mark.parametrize("scope", ["tool", "arguments"])
async def test_a_call_a_rule_approves_starts_naming_the_rule(
    scope: Literal["tool", "arguments"],
) -> None:
    world = World(
        [
            reply(call("c1", "delete", '{"path":"/a"}')),
            say("done"),
            reply(call("c2", "delete", '{"path":"/a"}')),
            say("again"),
        ],
        guarded(Calls()),
        mode="stream",
    )
    history = await approve_once_and_remember(world, '{"path":"/a"}', scope)
    assert _started(world) == [("c1", None)]  # a human decided
    await world.run([*history, user("once more")])
    (rule,) = await world.ledger.approval_rules("thread")
    assert _started(world) == [("c2", rule)]
    assert (rule.arguments_digest is None) is (scope == "tool")


async def test_a_call_the_agents_auto_approve_lets_run_starts_saying_so() -> None:
    world = World(
        [
            reply(call("c1", "delete", '{"path":"/tmp/a"}'), call("c2", "send", '{"to":"x"}')),
            say("ok"),
        ],
        guarded(Calls()),
        {"auto_approve": lambda part: part.name == "delete"},
        mode="stream",
    )
    history = [user("delete and send")]
    first = await world.run(history)
    (request,) = first.pending_approvals  # send waits for a decision, holding the batch
    approve = ApprovalResponsePart(approval_id=request.approval_id, approved=True)
    await world.run([*history, *first.messages, decide(approve)])
    assert _started(world) == [("c1", "auto_approve"), ("c2", None)]
