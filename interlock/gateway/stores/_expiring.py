"""Per-tenant entries that expire: the shared mechanics of the gateway's small indexes.

An entry is a JSON object ``{<member>: <value>, "expires": <unix time>}`` under
``store_key(namespace, tenant, …)``. An expired or unreadable entry counts as absent, and
every ``sweep_every`` entries a process writes, the writing tenant's expired entries are
deleted, so an index stays bounded by what its tenants wrote within the expiry.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import ClassVar

from interlock.gateway.stores._backend import KeyValueBackend
from interlock.gateway.stores._store import Namespace, store_key

TTL_SECONDS = 30 * 24 * 3600.0
"""The Responses API's own retention of stored responses (30 days)."""
SWEEP_EVERY = 1000


class ExpiringIndex:
    """Entries of one ``namespace`` naming one ``member`` value each (module docstring);
    a subclass names both."""

    namespace: ClassVar[Namespace]
    member: ClassVar[str]

    def __init__(
        self,
        backend: KeyValueBackend,
        *,
        ttl_seconds: float = TTL_SECONDS,
        sweep_every: int = SWEEP_EVERY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.ttl_seconds = ttl_seconds
        self.sweep_every = sweep_every
        self.clock = clock
        self._written = 0

    def entry(self, value: str) -> str:
        """A new entry naming ``value``, expiring ``ttl_seconds`` from now."""
        document = {self.member: value, "expires": self.clock() + self.ttl_seconds}
        return json.dumps(document, separators=(",", ":"))

    def value(self, text: str | None) -> str | None:
        """The value a stored entry names; ``None`` when absent, unreadable or expired."""
        value, expires = self._read(text)
        return value if value and expires > self.clock() else None

    async def written(self, tenant: str, count: int) -> None:
        """Count ``count`` entries written for ``tenant``; sweep when the count is due."""
        self._written += count
        if self._written >= self.sweep_every:
            self._written = 0
            await self.sweep(tenant)

    async def sweep(self, tenant: str) -> int:
        """Delete ``tenant``'s expired entries; how many were deleted."""
        now = self.clock()
        deleted = 0
        for key, text in await self.backend.scan(store_key(self.namespace, tenant) + "/"):
            if self._read(text)[1] <= now:
                await self.backend.delete(key)
                deleted += 1
        return deleted

    def _read(self, text: str | None) -> tuple[str, float]:
        if text is None:
            return "", 0.0
        try:
            document = json.loads(text)
            return str(document[self.member]), float(document["expires"])
        except (ValueError, TypeError, KeyError):
            return "", 0.0
