"""``on_interrupt="retry"``: an idempotent tool interrupted mid-run runs once more.

The run executing an approved call is cancelled mid-tool (journal: started, no result).
For a tool declared ``on_interrupt="retry"`` an exclusive re-entry (the decision replayed
identically) runs it once more and its real result is what the model sees; the default
(``report``) closes it as ``interrupted``. Either way a later replay runs nothing. The
gateway's recovery uses :func:`retry_interrupted` the same way (tested with kill -9 in
``tests/gateway/agui/test_faults.py``).
"""

from __future__ import annotations

import asyncio

import pytest

from interlock.core_loop import (
    Agent,
    AgentState,
    InMemoryLedgerStore,
    OnInterrupt,
    Tool,
    ToolContext,
    retry_interrupted,
    tool,
)
from interlock.transcript import ToolCallPart
from tests.core_loop.harness import Calls, Mode, World, call, decide, reply, results, say, user


def stock_tool(calls: Calls, on_interrupt: OnInterrupt, slow: list[bool]) -> Tool:
    @tool(approval="always", on_interrupt=on_interrupt)
    async def stock(item: str) -> str:
        """How many are in stock."""
        calls("stock", item=item)
        if slow.pop(0):
            await asyncio.sleep(60)
        return f"7 {item}"

    return stock


async def interrupted_world(mode: Mode, on_interrupt: OnInterrupt) -> tuple[World, Calls, list]:
    """A world whose approved call was cancelled mid-tool; the input that resumes it."""
    calls = Calls()
    world = World(
        [reply(call("c1", "stock", '{"item":"nails"}')), say("done"), say("again")],
        [stock_tool(calls, on_interrupt, [True, False])],
        mode=mode,
    )
    history = [user("how many nails?")]
    first = await world.run(history)
    resumed = [*history, *first.messages, decide((first.pending_approvals[0].approval_id, True))]
    task = asyncio.ensure_future(world.run(resumed))
    for _ in range(1000):  # let the resumed run reach the tool (no timing involved)
        if calls.count():
            break
        await asyncio.sleep(0)
    assert calls.count() == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return world, calls, resumed


@pytest.mark.parametrize("mode", ["result", "stream"])
@pytest.mark.parametrize(
    ("on_interrupt", "outcome", "runs"), [("retry", "success", 2), ("report", "interrupted", 1)]
)
async def test_an_interrupted_tool_is_retried_once_only_when_it_says_so(
    mode: Mode, on_interrupt: OnInterrupt, outcome: str, runs: int
) -> None:
    world, calls, resumed = await interrupted_world(mode, on_interrupt)
    result = await world.run(resumed, exclusive=True)
    (settled,) = results(result.messages)
    assert settled.outcome == outcome and result.text == "done"
    assert (settled.text == "7 nails") is (on_interrupt == "retry")
    sent = [part for message in world.requests[-1].messages for part in message.parts]
    assert settled in sent, "the model sees the settled result"
    again = await world.run(resumed, exclusive=True)  # a plain replay: nothing runs
    assert again.text == "again" and calls.count() == runs


async def test_retry_interrupted_runs_a_started_execution_once() -> None:
    calls = Calls()

    @tool(on_interrupt="retry")
    def stock(item: str, ctx: ToolContext) -> str:
        """How many are in stock."""
        calls("stock", item=item)
        assert ctx.state is not None
        ctx.state.update({"checked": item})
        return f"7 {item}"

    plain = Tool.from_function(lambda item: item, name="plain")
    agent = Agent(model="m", tools=(stock, plain))
    ledger, state = InMemoryLedgerStore(), AgentState({})
    stocked = ToolCallPart(call_id="c1", name="stock", arguments='{"item":"x"}', occurrence_id="o1")
    other = ToolCallPart(call_id="c2", name="plain", arguments='{"item":"y"}', occurrence_id="o2")
    assert await retry_interrupted(agent, stocked, ledger=ledger, thread_id="t") is None
    assert await ledger.begin_execution("t", "o1") and await ledger.begin_execution("t", "o2")
    retried = await retry_interrupted(agent, stocked, ledger=ledger, thread_id="t", state=state)
    assert retried is not None and retried.text == "7 x" and state.value == {"checked": "x"}
    entry = await ledger.execution("t", "o1")
    assert entry is not None and entry.result == retried
    assert await retry_interrupted(agent, stocked, ledger=ledger, thread_id="t") is None
    assert await retry_interrupted(agent, other, ledger=ledger, thread_id="t") is None
    assert calls.count() == 1
