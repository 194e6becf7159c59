"""In-memory backend (tests, single-process demos). Not shared between processes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class MemoryBackend:
    """A dict. Every method body runs without awaiting, so each call is atomic on one loop."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    async def get(self, key: str) -> str | None:
        return self._values.get(key)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        return [self._values.get(key) for key in keys]

    async def set_many(self, items: Mapping[str, str]) -> None:
        self._values.update(items)

    async def add(self, key: str, value: str) -> bool:
        if key in self._values:
            return False
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
        self._values.pop(key, None)

    async def scan(self, prefix: str) -> list[tuple[str, str]]:
        return sorted((key, value) for key, value in self._values.items() if key.startswith(prefix))

    async def close(self) -> None:
        self._values.clear()
