"""Deployment cooldowns shared by every gateway process on one Redis: a key with expiry.

With a ``redis://`` store, the process that cools a deployment down (see
:class:`~interlock.gateway.routing_targets.Health`) also sets
``interlock:routing:cooldown:<deployment>`` with an expiry of the cooldown
(:meth:`SharedCooldowns.cooled`, in the background). Every process reads the remaining
time of every deployment's key (one pipelined ``PTTL`` round trip) every
``sync_seconds`` and cools its own copy of that deployment's health down until then, so
a deployment that failed on one replica is avoided by the others within a second. A
cooldown learnt this way is counted in ``interlock_deployment_cooldowns_learned_total``
(``interlock_deployment_cooldowns_total`` counts only the cooldowns a process started).

The request path never waits on Redis: publishing and reading run beside it. Failures
to count stay per process; only the resulting cooldowns are shared. When Redis cannot
be reached, the error is logged and each process goes on with its own health.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

from interlock.gateway.metrics import Metrics
from interlock.gateway.routing_targets import Health

LOGGER = logging.getLogger("interlock.gateway")

SYNC_SECONDS = 1.0
"""How often a process reads the shared cooldowns."""


class SharedCooldowns:
    """The cooldowns of ``healths`` shared through the Redis at ``url`` (see the module
    docstring). :meth:`start` the reading once an event loop runs; :meth:`close` at the end."""

    def __init__(
        self,
        url: str,
        healths: Sequence[Health],
        metrics: Metrics,
        *,
        sync_seconds: float = SYNC_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        prefix: str = "interlock:routing:cooldown:",
    ) -> None:
        from redis import asyncio as redis_asyncio

        redis_class: Any = redis_asyncio.Redis  # the package's annotations are partial
        self._client: Any = redis_class.from_url(url, decode_responses=True)
        self.healths = tuple(healths)
        self.metrics = metrics
        self.sync_seconds = sync_seconds
        self.clock = clock
        self.prefix = prefix
        self._reader: asyncio.Task[None] | None = None
        self._writes: set[asyncio.Task[None]] = set()

    def key(self, health: Health) -> str:
        """The Redis key of ``health``'s deployment."""
        return self.prefix + health.key

    def cooled(self, health: Health, seconds: float) -> None:
        """``health`` started cooling down for ``seconds``: tell the others (in the
        background; a failure is logged)."""
        task = asyncio.create_task(self._publish(health, seconds))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _publish(self, health: Health, seconds: float) -> None:
        try:
            await self._client.set(self.key(health), "1", px=max(1, math.ceil(seconds * 1000)))
        except Exception:  # the others learn nothing; this process still avoids it
            LOGGER.warning("sharing the cooldown of %s failed", health.label, exc_info=True)

    async def sync(self) -> None:
        """Cool down every deployment another process cooled down (one round trip)."""
        pipeline: Any = self._client.pipeline(transaction=False)
        for health in self.healths:
            pipeline.pttl(self.key(health))
        remaining = cast(list[int], await pipeline.execute())
        now = self.clock()
        for health, milliseconds in zip(self.healths, remaining, strict=True):
            if milliseconds <= 0:  # -2: no key, -1: no expiry (never written so)
                continue
            until = now + milliseconds / 1000
            if health.available(now):
                self.metrics.deployment_cooldowns_learned[health.label] += 1
            health.cool_until = max(health.cool_until, until)

    async def _read(self) -> None:
        while True:
            try:
                await self.sync()
            except Exception:  # Redis away: go on with this process's own health
                LOGGER.warning("reading the shared cooldowns failed", exc_info=True)
            await asyncio.sleep(self.sync_seconds)

    async def start(self) -> None:
        """Start reading the shared cooldowns every ``sync_seconds``."""
        if self._reader is None:
            self._reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        """Stop reading, finish pending writes, release the connection."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        await self._client.aclose()
