"""A run whose replica died: a follower on another replica ends its log with one
``RUN_OWNER_LOST`` frame (memory, SQLite and a real Redis)."""

from __future__ import annotations

import asyncio
import json

from interlock.gateway.stores import RunKey, RunLog, Store

KEY = RunKey("acme", "thread-1", "run-1")


async def test_the_log_of_a_dead_owners_run_ends_once_with_owner_lost(store: Store) -> None:
    owner = RunLog(store.backend, owner="replica-a")
    writer = await owner.open(KEY)
    writer.append(['{"type":"RUN_STARTED"}', '{"type":"TEXT_MESSAGE_START"}'])
    await writer.flush()  # …and then replica-a is killed: no close, no terminal frame

    async def alive(replica: str) -> bool:
        return replica != "replica-a"

    living = RunLog(store.backend, owner="replica-b", owner_alive=lambda _: _true())
    assert not await living.end_if_orphaned(KEY)  # the owner still lives: nothing to end
    read = await living.read(KEY, 0)
    assert read is not None and not read.ended
    followers = [RunLog(store.backend, owner=f"r{n}", owner_alive=alive) for n in range(3)]
    ended = await asyncio.gather(*(log.end_if_orphaned(KEY) for log in followers))
    assert ended == [True, True, True]
    read = await followers[0].read(KEY, 0)
    assert read is not None and read.ended
    assert [json.loads(frame)["type"] for frame in read.frames] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "RUN_ERROR",
    ]
    assert json.loads(read.frames[-1])["code"] == "RUN_OWNER_LOST"
    status = await followers[0].latest("acme", "thread-1")
    assert status is not None and status.ended and status.last_event_id == 3


async def test_a_follower_of_a_dead_owners_run_gets_the_frames_then_owner_lost(
    store: Store,
) -> None:
    owner = RunLog(store.backend, owner="replica-a")
    writer = await owner.open(KEY)
    writer.append(['{"type":"RUN_STARTED"}'])
    await writer.flush()

    async def dead(_: str) -> bool:
        return False

    follower = RunLog(store.backend, owner="replica-b", owner_alive=dead, poll_seconds=0.01)
    batches = [batch async for batch in follower.follow(KEY, 0)]
    frames = [json.loads(frame) for batch in batches for frame in batch]
    assert [frame["type"] for frame in frames] == ["RUN_STARTED", "RUN_ERROR"]
    assert frames[-1]["code"] == "RUN_OWNER_LOST"


async def _true() -> bool:
    return True
