"""In-memory backend (tests, single-process demos). Not shared between processes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from interlock.gateway.stores._sorted import SortedKeys


class MemoryBackend:
    """A dict. Every method body runs without awaiting, so each call is atomic on one loop.

    The keys are also kept sorted (:class:`~._sorted.SortedKeys`), so a prefix scan (every
    AG-UI run scans its thread's run logs and held batches) costs the keys it returns, and
    a write costs about the same however many keys the store holds.
    """

    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self._keys = SortedKeys()
        """Every key of ``_values``."""

    async def get(self, key: str) -> str | None:
        return self._values.get(key)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        return [self._values.get(key) for key in keys]

    async def set_many(self, items: Mapping[str, str]) -> None:
        for key in items:
            if key not in self._values:
                self._keys.add(key)
        self._values.update(items)

    async def set_many_counted(self, items: Mapping[str, str], counter: str) -> int:
        count = int(self._values.get(counter, "0")) + 1
        await self.set_many({**items, counter: str(count)})  # no await inside: atomic
        return count

    async def add(self, key: str, value: str) -> bool:
        if key in self._values:
            return False
        self._keys.add(key)
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
            self._keys.remove(key)

    async def scan(self, prefix: str) -> list[tuple[str, str]]:
        values = self._values
        return [(key, values[key]) for key in self._keys.starting_with(prefix)]

    async def close(self) -> None:
        self._values.clear()
        self._keys.clear()
