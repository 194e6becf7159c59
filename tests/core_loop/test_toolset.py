"""Runtime tool changes (contract: "added tools become available on the next iteration and
retain approval behaviour"): a tool changes the run's :class:`ToolSet` through its context."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from interlock.core_loop import Tool, ToolContext, ToolSet, tool
from interlock.transcript import ToolCallPart
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


def offered(world: World) -> list[list[str]]:
    return [[spec.name for spec in request.tools] for request in world.requests]


def counted(calls: Calls, name: str, approval: Any = "never") -> Tool:
    return Tool.from_function(lambda: calls(name), name=name, approval=approval)


def unlocking(calls: Calls, *extra: Tool, remove: str | None = None) -> Tool:
    @tool
    def unlock(ctx: ToolContext) -> str:
        """Unlock more tools."""
        calls("unlock")
        ctx.add_tools(*extra)
        if remove is not None:
            ctx.remove_tools(remove)
        return "unlocked"

    return unlock


async def test_add_tools_available_next_iteration() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [
                reply(call("c1", "unlock")),
                reply(call("c2", "extra")),
                say("done"),
            ],
            [unlocking(calls, counted(calls, "extra"))],
            mode=mode,
        )
        result = await world.run([user("go")])
        assert result.outcome == "final"
        assert offered(world) == [["unlock"], ["unlock", "extra"], ["unlock", "extra"]]
        assert [r.outcome for r in results(result.messages)] == ["success", "success"]
        assert calls.count("unlock") == 1 and calls.count("extra") == 1
        # The change is run-local: the agent and the next run offer the original tools.
        assert [t.name for t in world.agent.tools] == ["unlock"]
        return result

    await both(scenario)


async def test_added_tool_is_not_offered_to_another_run() -> None:
    calls = Calls()
    world = World(
        [reply(call("c1", "unlock")), say("ok"), reply(call("c2", "extra")), say("no such")],
        [unlocking(calls, counted(calls, "extra"))],
    )
    await world.run([user("go")])
    second = await world.run([user("again")])
    assert offered(world)[2:] == [["unlock"], ["unlock"]]
    assert results(second.messages)[0].outcome == "failed"
    assert calls.count("extra") == 0


async def test_add_tools_with_approval_required_tool() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        guarded = counted(calls, "guarded", approval="always")
        world = World(
            [reply(call("c1", "unlock")), reply(call("c2", "guarded"))],
            [unlocking(calls, guarded)],
            mode=mode,
        )
        paused = await world.run([user("go")])
        assert paused.outcome == "awaiting_approval"
        (request,) = paused.pending_approvals
        assert request.call.name == "guarded"
        assert offered(world) == [["unlock"], ["unlock", "guarded"]]
        assert calls.count("guarded") == 0 and len(world.requests) == 2
        return paused

    await both(scenario)


async def test_resume_of_an_added_tool_needs_the_tool_in_the_resuming_agent() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        guarded = counted(calls, "guarded", approval="always")
        world = World(
            [reply(call("c1", "unlock")), reply(call("c2", "guarded")), say("a")],
            [unlocking(calls, guarded)],
            mode=mode,
        )
        paused = await world.run([user("go")])
        approval_id = paused.pending_approvals[0].approval_id
        history = [user("go"), *paused.messages]
        # Resumed with the original agent: the tool is not offered, so nothing runs.
        refused = await world.run([*history, decide((approval_id, True))])
        assert [r.outcome for r in results(refused.messages)] == ["failed"]
        assert calls.count("guarded") == 0 and offered(world)[2] == ["unlock"]
        return refused

    await both(scenario)


async def test_approved_added_tool_runs_when_the_resuming_agent_offers_it() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        guarded = counted(calls, "guarded", approval="always")
        world = World(
            [reply(call("c1", "unlock")), reply(call("c2", "guarded")), say("done")],
            [unlocking(calls, guarded)],
            mode=mode,
        )
        paused = await world.run([user("go")])
        approval_id = paused.pending_approvals[0].approval_id
        world.agent = replace(world.agent, tools=(*world.agent.tools, guarded))
        resumed = await world.run([user("go"), *paused.messages, decide((approval_id, True))])
        assert resumed.outcome == "final"
        assert [r.outcome for r in results(resumed.messages)] == ["success"]
        assert calls.count("guarded") == 1 and calls.count("unlock") == 1
        return resumed

    await both(scenario)


async def test_removed_tool_is_not_offered_and_its_calls_fail() -> None:
    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        world = World(
            [reply(call("c1", "unlock")), reply(call("c2", "old")), say("done")],
            [unlocking(calls, remove="old"), counted(calls, "old")],
            mode=mode,
        )
        result = await world.run([user("go")])
        assert offered(world) == [["unlock", "old"], ["unlock"], ["unlock"]]
        assert [r.outcome for r in results(result.messages)] == ["success", "failed"]
        assert calls.count("old") == 0
        return result

    await both(scenario)


def test_toolset_changes_are_atomic_and_idempotent() -> None:
    calls = Calls()
    first, second = counted(calls, "a"), counted(calls, "b")
    toolset = ToolSet([first])
    specs = toolset.specs
    toolset.add([first])
    assert toolset.specs is specs  # a no-op rebuilds nothing
    with pytest.raises(ValueError, match="'a'"):
        toolset.add([second, counted(calls, "a")])
    assert toolset.tools == (first,)
    toolset.add([second])
    toolset.remove(["missing", first])
    assert [spec.name for spec in toolset.specs] == ["b"]


def test_context_without_a_run_has_no_live_tools() -> None:
    context = ToolContext(thread_id="t", call=ToolCallPart(call_id="c", name="x", arguments="{}"))
    with pytest.raises(RuntimeError, match="no live tool set"):
        context.add_tools()
    live = ToolContext(thread_id="t", call=context.call, toolset=ToolSet([]))
    assert live.tools == ()
