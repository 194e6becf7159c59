"""In-memory backend (tests, single-process demos). Not shared between processes."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence


class MemoryBackend:
    """A dict. Every method body runs without awaiting, so each call is atomic on one loop.

    The keys are also kept in a sorted list, so a prefix scan (every AG-UI run scans its
    thread's run logs and held batches) costs the keys it returns, not every key stored.
    """

    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self._keys: list[str] = []
        """Every key of ``_values``, sorted."""

    async def get(self, key: str) -> str | None:
        return self._values.get(key)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        return [self._values.get(key) for key in keys]

    async def set_many(self, items: Mapping[str, str]) -> None:
        for key in items:
            if key not in self._values:
                insort(self._keys, key)
        self._values.update(items)

    async def add(self, key: str, value: str) -> bool:
        if key in self._values:
            return False
        insort(self._keys, key)
        self._values[key] = value
        return True

    async def replace_if(self, key: str, expected: str, value: str) -> bool:
        if self._values.get(key) != expected:
            return False
        self._values[key] = value
        return True

    async def replace_all_if(self, changes: Mapping[str, tuple[str, str]]) -> bool:
        if any(self._values.get(key) != expected for key, (expected, _) in changes.items()):
            return False
        self._values.update((key, value) for key, (_, value) in changes.items())
        return True

    async def delete(self, key: str) -> None:
        if self._values.pop(key, None) is not None:
            del self._keys[bisect_left(self._keys, key)]

    async def scan(self, prefix: str) -> list[tuple[str, str]]:
        rows: list[tuple[str, str]] = []
        keys = self._keys
        for index in range(bisect_left(keys, prefix), len(keys)):
            key = keys[index]
            if not key.startswith(prefix):
                break
            rows.append((key, self._values[key]))
        return rows

    async def close(self) -> None:
        self._values.clear()
        self._keys.clear()
