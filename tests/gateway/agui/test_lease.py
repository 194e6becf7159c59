"""The run's thread lease (``interlock.gateway.agui._lease``) on a real redis-server and a
SQLite file: leaving the block always ends it, however renewals interleave with the end.

redis-py sends with ``asyncio.wait_for``, which on Python 3.11 swallows a cancellation that
arrives as the send completes; a renewer stopped by ``cancel()`` then renewed forever and
the run never sent its terminal event. Renewing every millisecond makes every exit race a
renewal in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlock.gateway.agui._lease import thread_lease
from interlock.gateway.stores import Store, open_store


@pytest.fixture(params=["sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'state.db'}"
    else:
        base = str(request.getfixturevalue("redis_url"))
        url = base[: base.rindex("/")] + "/14"
    opened = open_store(url)
    try:
        yield opened
    finally:
        await opened.close()


async def test_leaving_a_lease_block_ends_it_and_frees_the_thread(store: Store) -> None:
    thread = f"lease-{id(store)}"

    async def rounds() -> None:
        for round_ in range(40):
            async with thread_lease(store, "tenant", thread, seconds=0.003, wait_seconds=10):
                await asyncio.sleep(0.001 * (round_ % 7))
            assert await store.acquire_lease("tenant", thread, "next", 30)
            await store.release_lease("tenant", thread, "next")

    # A hang guard, not a timing check; not asyncio.timeout: the bug swallowed cancels too.
    task = asyncio.create_task(rounds())
    done, _ = await asyncio.wait({task}, timeout=120)
    assert task in done, "a lease block never ended"
    await task
