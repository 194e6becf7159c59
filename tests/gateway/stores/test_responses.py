"""The index of stored Responses answers, on memory, SQLite and Redis alike."""

from __future__ import annotations

import asyncio

from interlock.gateway.stores import ResponseIndex, Store
from interlock.gateway.stores._expiring import TTL_SECONDS


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_entries_are_per_tenant_and_expire(store: Store) -> None:
    assert TTL_SECONDS == 30 * 24 * 3600  # the service's own retention, as documented
    clock = Clock()
    index = ResponseIndex(store.backend, ttl_seconds=60, clock=clock)
    await index.remember("team-a", "resp_1", "up-responses")
    assert await index.find("team-a", "resp_1") == "up-responses"
    assert await index.find("team-b", "resp_1") is None
    assert await index.find("team-a", "resp_2") is None
    clock.now += 61
    assert await index.find("team-a", "resp_1") is None
    await index.remember("team-a", "resp_1", "up-responses")  # written again: renewed
    assert await index.find("team-a", "resp_1") == "up-responses"
    await index.forget("team-a", "resp_1")
    assert await index.find("team-a", "resp_1") is None


async def test_expired_entries_are_swept(store: Store) -> None:
    clock = Clock()
    index = ResponseIndex(store.backend, ttl_seconds=60, sweep_every=3, clock=clock)
    await index.remember("team-a", "resp_old", "up")
    await index.remember("team-b", "resp_other", "up")
    clock.now += 61
    await index.remember("team-a", "resp_new", "up")  # the third write sweeps team-a
    keys = [key for key, _ in await store.backend.scan("response/")]
    assert keys == ["response/team-a/resp_new", "response/team-b/resp_other"]
    assert await index.sweep("team-b") == 1
    assert await index.find("team-a", "resp_new") == "up"


async def test_an_unreadable_entry_counts_as_absent(store: Store) -> None:
    index = ResponseIndex(store.backend)
    await store.backend.set_many({"response/team-a/resp_1": "not json"})
    assert await index.find("team-a", "resp_1") is None
    assert await index.sweep("team-a") == 1


async def test_a_conversation_has_one_owner(store: Store) -> None:
    index = ResponseIndex(store.backend)
    assert await index.conversation("conv_1") is None
    claims = await asyncio.gather(
        *(index.claim_conversation(tenant, "conv_1", "up") for tenant in ("team-a", "team-b"))
    )
    assert claims[0] == claims[1] and claims[0][0] in ("team-a", "team-b")  # one winner
    assert await index.conversation("conv_1") == claims[0]
    owner = claims[0][0]
    assert await index.claim_conversation("team-c", "conv_1", "other") == (owner, "up")
    await index.forget_conversation("conv_1")
    assert await index.claim_conversation("team-c", "conv_1", "other") == ("team-c", "other")
    await store.backend.set_many({"conversation/conv_2": "not json"})
    assert await index.conversation("conv_2") == ("", "")  # unreadable: nobody's
