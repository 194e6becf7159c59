"""Redis backend: several gateway processes share one state.

Uses the ``redis`` package's asyncio client (install ``interlock[redis]``). Insert-if-absent
is ``SET NX``; compare-and-set (of one key or of several together) is a Lua script, which Redis runs
atomically.

Every key is also a member of one sorted set (all scores 0, so ordered by bytes), the
*index*: a prefix scan is one ``ZRANGEBYLEX`` plus one ``MGET`` of what it returns, instead
of a ``SCAN`` of the whole keyspace (which every AG-UI run paid, so runs grew slower with
every thread the database held). Writes that create or delete a key change the index in
the same transaction or script. A database written before the index existed is indexed
once, by one ``SCAN``, the first time a process scans it (marked by a flag key); a
member whose key is gone (a race with that first pass) is dropped when a scan meets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

_COMPARE_AND_SET = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

_COMPARE_AND_SET_ALL = """
for index, key in ipairs(KEYS) do
  if redis.call('GET', key) ~= ARGV[2 * index - 1] then
    return 0
  end
end
for index, key in ipairs(KEYS) do
  redis.call('SET', key, ARGV[2 * index])
end
return 1
"""

_ADD_INDEXED = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('ZADD', KEYS[2], 0, ARGV[2])
  return 1
end
return 0
"""

_DROP_GONE = """
for index, key in ipairs(KEYS) do
  if index > 1 and redis.call('EXISTS', key) == 0 then
    redis.call('ZREM', KEYS[1], ARGV[index - 1])
  end
end
return 0
"""

_GLOB_SPECIALS = str.maketrans({char: "\\" + char for char in "*?[]\\"})
_INDEX = "\x00index"
"""The index's key after the prefix (no stored key holds a NUL: keys are percent-quoted)."""
_INDEXED = "\x00indexed"
"""Present once the keys written before the index existed are in it."""


class RedisBackend:
    """Keys live under ``prefix`` (default ``interlock:``) in one Redis database."""

    def __init__(self, url: str, *, prefix: str = "interlock:") -> None:
        try:
            from redis import asyncio as redis_asyncio
        except ImportError as error:  # pragma: no cover - depends on the environment
            raise RuntimeError(
                "redis:// stores need the redis package: pip install 'interlock[redis]'"
            ) from error
        redis_class: Any = redis_asyncio.Redis  # the package's annotations are partial
        self._client: Any = redis_class.from_url(url, decode_responses=True)
        self._prefix = prefix
        self._cas: Any = self._client.register_script(_COMPARE_AND_SET)
        self._cas_all: Any = self._client.register_script(_COMPARE_AND_SET_ALL)
        self._add_indexed: Any = self._client.register_script(_ADD_INDEXED)
        self._drop_gone: Any = self._client.register_script(_DROP_GONE)
        self._index = prefix + _INDEX
        self._indexed = False
        """This process has seen the index complete (see the module docstring)."""

    def _key(self, key: str) -> str:
        return self._prefix + key

    async def get(self, key: str) -> str | None:
        return cast(str | None, await self._client.get(self._key(key)))

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        if not keys:
            return []
        return cast(list[str | None], await self._client.mget([self._key(key) for key in keys]))

    async def set_many(self, items: Mapping[str, str]) -> None:
        if items:
            async with self._client.pipeline(transaction=True) as pipeline:
                pipeline.mset({self._key(key): value for key, value in items.items()})
                pipeline.zadd(self._index, dict.fromkeys(items, 0))
                await pipeline.execute()

    async def set_many_counted(self, items: Mapping[str, str], counter: str) -> int:
        async with self._client.pipeline(transaction=True) as pipeline:
            if items:
                pipeline.mset({self._key(key): value for key, value in items.items()})
            pipeline.zadd(self._index, dict.fromkeys([*items, counter], 0))
            pipeline.incr(self._key(counter))
            results = await pipeline.execute()
        return int(results[-1])

    async def add(self, key: str, value: str) -> bool:
        return bool(await self._add_indexed(keys=[self._key(key), self._index], args=[value, key]))

    async def replace_if(self, key: str, expected: str, value: str) -> bool:
        return bool(await self._cas(keys=[self._key(key)], args=[expected, value]))

    async def replace_all_if(self, changes: Mapping[str, tuple[str, str]]) -> bool:
        if not changes:
            return True
        keys = [self._key(key) for key in changes]
        args = [text for expected, value in changes.values() for text in (expected, value)]
        return bool(await self._cas_all(keys=keys, args=args))

    async def delete(self, key: str) -> None:
        async with self._client.pipeline(transaction=True) as pipeline:
            pipeline.delete(self._key(key))
            pipeline.zrem(self._index, key)
            await pipeline.execute()

    async def scan(self, prefix: str) -> list[tuple[str, str]]:
        if not self._indexed:
            await self._index_existing()
        low, high = (
            (b"-", b"+")
            if not prefix
            else (b"[" + prefix.encode(), b"(" + prefix.encode() + b"\xff")
        )
        keys = cast(list[str], await self._client.zrangebylex(self._index, low, high))
        if not keys:
            return []
        values = cast(list[str | None], await self._client.mget([self._key(key) for key in keys]))
        gone = [key for key, value in zip(keys, values, strict=True) if value is None]
        if gone:  # dropped only if still absent: another process may have written it since
            keys_gone = [self._index, *map(self._key, gone)]
            await self._drop_gone(keys=keys_gone, args=gone)
        return [(key, value) for key, value in zip(keys, values, strict=True) if value is not None]

    async def _index_existing(self) -> None:
        """Put the keys written before the index existed into it (once per database)."""
        flag = self._prefix + _INDEXED
        if not await self._client.exists(flag):
            pattern = self._prefix.translate(_GLOB_SPECIALS) + "*"
            start = len(self._prefix)
            batch: dict[str, int] = {}
            async for key in self._client.scan_iter(match=pattern, count=1000):
                if key not in (self._index, flag):
                    batch[key[start:]] = 0
                if len(batch) >= 1000:
                    await self._client.zadd(self._index, batch)
                    batch = {}
            if batch:
                await self._client.zadd(self._index, batch)
            await self._client.set(flag, "1")
        self._indexed = True

    async def close(self) -> None:
        await self._client.aclose()
