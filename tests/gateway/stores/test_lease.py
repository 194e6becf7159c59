"""The per-thread lease: one live holder across every process sharing the store."""

from __future__ import annotations

import asyncio

from interlock.gateway.stores import Store


async def test_one_of_many_concurrent_owners_gets_the_lease(store: Store) -> None:
    taken = await asyncio.gather(
        *(store.acquire_lease("tenant", "th", f"owner-{n}", 30) for n in range(12))
    )
    assert taken.count(True) == 1
    winner = f"owner-{taken.index(True)}"
    assert await store.acquire_lease("tenant", "th", "late", 30) is False
    assert await store.acquire_lease("tenant", "other-thread", "late", 30) is True
    assert await store.acquire_lease("other-tenant", "th", "late", 30) is True
    assert await store.renew_lease("tenant", "th", winner, 30) is True
    assert await store.renew_lease("tenant", "th", "late", 30) is False


async def test_a_released_lease_can_be_taken_and_a_stale_release_is_ignored(store: Store) -> None:
    assert await store.acquire_lease("tenant", "th", "first", 30)
    await store.release_lease("tenant", "th", "first")
    assert await store.acquire_lease("tenant", "th", "second", 30)
    await store.release_lease("tenant", "th", "first")  # not the holder: nothing changes
    assert await store.acquire_lease("tenant", "th", "third", 30) is False
    assert await store.renew_lease("tenant", "th", "first", 30) is False


async def test_an_expired_lease_is_free(store: Store) -> None:
    assert await store.acquire_lease("tenant", "th", "dead", -1)  # expired at once
    assert await store.renew_lease("tenant", "th", "dead", 30) is True
    assert await store.acquire_lease("tenant", "th", "next", 30) is False
    assert await store.acquire_lease("tenant", "th2", "dead", -1)
    assert await store.acquire_lease("tenant", "th2", "next", 30) is True
    assert await store.renew_lease("tenant", "th2", "dead", 30) is False
