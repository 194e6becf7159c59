"""Redis backend: several gateway processes share one state.

Uses the ``redis`` package's asyncio client (install ``interlock[redis]``). Insert-if-absent
is ``SET NX``; compare-and-set (of one key or of several together) is a Lua script, which Redis runs
atomically.
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

_GLOB_SPECIALS = str.maketrans({char: "\\" + char for char in "*?[]\\"})


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
            await self._client.mset({self._key(key): value for key, value in items.items()})

    async def add(self, key: str, value: str) -> bool:
        return bool(await self._client.set(self._key(key), value, nx=True))

    async def replace_if(self, key: str, expected: str, value: str) -> bool:
        return bool(await self._cas(keys=[self._key(key)], args=[expected, value]))

    async def replace_all_if(self, changes: Mapping[str, tuple[str, str]]) -> bool:
        if not changes:
            return True
        keys = [self._key(key) for key in changes]
        args = [text for expected, value in changes.values() for text in (expected, value)]
        return bool(await self._cas_all(keys=keys, args=args))

    async def delete(self, key: str) -> None:
        await self._client.delete(self._key(key))

    async def scan(self, prefix: str) -> list[tuple[str, str]]:
        pattern = self._key(prefix).translate(_GLOB_SPECIALS) + "*"
        keys: list[str] = [key async for key in self._client.scan_iter(match=pattern, count=500)]
        keys.sort()
        values = cast(list[str | None], await self._client.mget(keys)) if keys else []
        start = len(self._prefix)
        return [
            (key[start:], value)
            for key, value in zip(keys, values, strict=True)
            if value is not None
        ]

    async def close(self) -> None:
        await self._client.aclose()
