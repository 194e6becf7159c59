"""The Redis backend's key index: scans read it, never the keyspace, and a database written
before the index existed (keys set by a plain client) is indexed on its first scan."""

from __future__ import annotations

import uuid
from typing import Any

from interlock.gateway.stores.redis import RedisBackend


def _plain_client(redis_url: str) -> Any:
    from redis import asyncio as redis_asyncio

    redis_class: Any = redis_asyncio.Redis
    return redis_class.from_url(redis_url, decode_responses=True)


async def test_keys_written_before_the_index_are_found_then_kept_in_step(redis_url: str) -> None:
    prefix = f"old-{uuid.uuid4().hex}:"
    plain = _plain_client(redis_url)
    try:
        await plain.mset({f"{prefix}thread/t/1": "one", f"{prefix}thread/t/2": "two"})
        backend = RedisBackend(redis_url, prefix=prefix)
        assert await backend.scan("thread/t/") == [("thread/t/1", "one"), ("thread/t/2", "two")]
        await backend.set_many({"thread/t/3": "three"})
        assert await backend.add("thread/u/1", "other") is True
        await backend.delete("thread/t/1")
        await plain.set(f"{prefix}thread/t/9", "unindexed")  # after the first pass: unseen
        assert await backend.scan("thread/t/") == [("thread/t/2", "two"), ("thread/t/3", "three")]
        assert await backend.scan("thread/u") == [("thread/u/1", "other")]
        again = RedisBackend(redis_url, prefix=prefix)  # another process: indexed already
        assert [key for key, _ in await again.scan("")] == [
            "thread/t/2",
            "thread/t/3",
            "thread/u/1",
        ]
        await plain.delete(f"{prefix}thread/t/2")  # gone behind the index's back
        assert await again.scan("thread/t/") == [("thread/t/3", "three")]
        assert "thread/t/2" not in await plain.zrange(f"{prefix}\x00index", 0, -1)
        await backend.close()
        await again.close()
    finally:
        await plain.aclose()


async def test_a_scan_reads_the_index_not_the_keyspace(redis_url: str) -> None:
    prefix = f"scan-{uuid.uuid4().hex}:"
    plain = _plain_client(redis_url)
    backend = RedisBackend(redis_url, prefix=prefix)
    try:
        await backend.set_many({"a/1": "x"})
        await backend.scan("a/")  # the first scan indexes what exists (one SCAN)
        before = (await plain.info("commandstats")).get("cmdstat_scan", {}).get("calls", 0)
        for _ in range(5):
            assert await backend.scan("a/") == [("a/1", "x")]
        after = (await plain.info("commandstats")).get("cmdstat_scan", {}).get("calls", 0)
        assert after == before
    finally:
        await backend.close()
        await plain.aclose()
