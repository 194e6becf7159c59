"""A mixed batch held in a real store (SQLite file, redis-server) survives a gateway
restart with its behaviour intact: the contract's "Restored approval state" row. Each
restart opens a new store on the same URL, as a new gateway process would; the loop runs
streaming and non-streaming (``both``)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from interlock.core_loop import Tool, tool
from interlock.gateway.stores import Store, open_store
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


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.db'}"
    return str(request.getfixturevalue("redis_url"))


def mixed_tools(calls: Calls) -> list[Tool]:
    @tool
    def lookup(city: str) -> str:
        """Look a city up (no approval)."""
        calls("lookup", city=city)
        return f"sunny in {city}"

    @tool(approval="always")
    def delete(path: str) -> str:
        """Delete a path."""
        calls("delete", path=path)
        return f"deleted {path}"

    return [lookup, delete]


class Gateway:
    """One gateway process's view of the store; ``restart`` opens a fresh one."""

    def __init__(self, url: str, world: World) -> None:
        self.url = url
        self.world = world
        self.tenant = f"tenant-{uuid.uuid4().hex}"
        self.store: Store | None = None

    async def restart(self) -> None:
        if self.store is not None:
            await self.store.close()
        self.store = open_store(self.url)
        self.world.ledger = self.store.ledger(self.tenant)

    async def close(self) -> None:
        if self.store is not None:
            await self.store.close()


async def test_a_mixed_batch_restored_after_restarts_resumes_like_a_live_one(
    store_url: str,
) -> None:
    """A safe call and two approval-required calls in one answer: nothing runs before
    every decision is in. After a restart a partial decision re-surfaces the other
    request, runs nothing and calls no model; after another restart the last decision
    runs the safe and the approved call once each (results in model order, the rejected
    one ``denied``); a third restart and the same resume run nothing."""

    async def scenario(mode: Mode) -> Any:
        calls = Calls()
        answer = reply(
            call("c1", "lookup", '{"city":"Oslo"}'),
            call("c2", "delete", '{"path":"/a"}'),
            call("c3", "delete", '{"path":"/b"}'),
        )
        world = World([answer, say("one deleted, one kept"), say("done")], mixed_tools(calls))
        world.mode = mode
        gateway = Gateway(store_url, world)
        try:
            await gateway.restart()
            history = [user("weather in Oslo, delete /a and /b")]
            first = await world.run(history)
            approve_a, reject_b = first.pending_approvals
            history += [*first.messages, decide((approve_a.approval_id, True))]
            await gateway.restart()
            partial = await world.run(history)
            assert [r.approval_id for r in partial.pending_approvals] == [reject_b.approval_id]
            assert calls.count() == 0 and len(world.requests) == 1
            history += [*partial.messages, decide((reject_b.approval_id, False))]
            await gateway.restart()
            second = await world.run(history)
            assert [(r.call_id, r.outcome) for r in results(second.messages)] == [
                ("c1", "success"),
                ("c2", "success"),
                ("c3", "denied"),
            ]
            assert [r.text for r in results(second.messages)][:2] == ["sunny in Oslo", "deleted /a"]
            assert second.text == "one deleted, one kept"
            await gateway.restart()
            again = await world.run(history)
            assert results(again.messages) == results(second.messages)
            assert calls.log == [("lookup", {"city": "Oslo"}), ("delete", {"path": "/a"})]
            return second, calls.log
        finally:
            await gateway.close()

    await both(scenario)
