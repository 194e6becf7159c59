"""Rate limits per tenant and model: requests and tokens per minute, by GCRA.

Each limit is a *bucket* holding one number, its theoretical arrival time (``tat``): the
moment the bucket would be empty again if nothing more came. With an emission interval
``T = 60 s / limit`` a request (or a token) moves ``tat`` forward by ``T``; a request is
admitted while ``max(tat, now) + T - now <= 60 s``, i.e. while one more unit fits in a
minute's budget. That allows a full minute's budget at once from idle, then a steady
rate (the generic cell rate algorithm: one number per bucket, no per-request log).

Requests are counted when admitted. Tokens are known only once the answer is done, so a
token bucket is checked at admission (is one more token within budget?) and charged
with the answer's input + output tokens afterwards: a large answer may overdraw it, and
requests wait until the overdraft is paid back.

With a Redis store every gateway process shares the buckets (one Lua script checks
every bucket of a request and counts it only if all admit it, against Redis's own clock);
otherwise each process counts alone (:class:`LocalBuckets`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast
from urllib.parse import quote

from interlock.gateway.config_ops import RateLimit

WINDOW = 60.0
"""Seconds of budget a bucket holds (the limits are per minute)."""

Kind = Literal["requests", "tokens"]


@dataclass(frozen=True, slots=True)
class Bucket:
    """One limit as it applies to one tenant: ``interval`` seconds per unit."""

    key: str
    kind: Kind
    interval: float
    limit: int


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request refused: the limit that refused it and when to come back."""

    retry_after: float
    """Seconds until the request would be admitted."""
    bucket: Bucket

    @property
    def retry_after_seconds(self) -> int:
        """``retry-after`` as the header carries it: whole seconds, rounded up, at least 1."""
        return max(1, math.ceil(self.retry_after))

    def message(self, tenant: str) -> str:
        """The error message clients see."""
        per = "requests" if self.bucket.kind == "requests" else "tokens"
        return (
            f"rate limit exceeded for tenant {tenant!r}: {self.bucket.limit} {per} per minute "
            f"({self.bucket.key.rpartition('/')[2]}); retry after {self.retry_after:.3f} s"
        )


class BucketStore(Protocol):
    """Where bucket states live: this process (:class:`LocalBuckets`) or Redis."""

    async def admit(self, buckets: Sequence[Bucket]) -> Refusal | None:
        """Count the request in every request bucket if every bucket admits it, atomically."""
        ...

    async def charge(self, buckets: Sequence[Bucket], tokens: int) -> None:
        """Move the token buckets on by ``tokens`` (no check: a large answer overdraws)."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


PRECISION = 6
"""Decimal places of a wait kept: ``now + 60 - now - 60`` is not 0 on a clock at
thousands of seconds, which refused the first request of a one-per-minute bucket (and
made a 60 s wait a ``retry-after`` of 61)."""


def _after(tat: float, now: float, bucket: Bucket) -> float:
    """Seconds until ``bucket`` admits one more unit (``<= 0``: it admits it now).

    Computed from ``tat - now`` (small) rather than ``tat + interval - now`` (large
    numbers cancelling), then rounded to :data:`PRECISION` places.
    """
    wait = round(max(tat - now, 0.0) + bucket.interval - WINDOW, PRECISION)
    return max(wait, 0.0)


class LocalBuckets:
    """Buckets in this process (memory and SQLite stores): each process counts alone."""

    def __init__(self) -> None:
        self._tats: dict[str, float] = {}

    async def admit(self, buckets: Sequence[Bucket]) -> Refusal | None:
        now = time.monotonic()
        worst: Refusal | None = None
        for bucket in buckets:
            wait = _after(self._tats.get(bucket.key, now), now, bucket)
            if wait > 0 and (worst is None or wait > worst.retry_after):
                worst = Refusal(wait, bucket)
        if worst is not None:
            return worst
        for bucket in buckets:
            if bucket.kind == "requests":
                self._tats[bucket.key] = max(self._tats.get(bucket.key, now), now) + bucket.interval
        return None

    async def charge(self, buckets: Sequence[Bucket], tokens: int) -> None:
        now = time.monotonic()
        for bucket in buckets:
            if bucket.kind == "tokens":
                start = max(self._tats.get(bucket.key, now), now)
                self._tats[bucket.key] = start + tokens * bucket.interval
        self._forget(now)

    async def close(self) -> None:
        self._tats.clear()

    def _forget(self, now: float) -> None:
        """Drop buckets that are empty again, so idle tenants cost nothing."""
        if len(self._tats) > 4096:
            self._tats = {key: tat for key, tat in self._tats.items() if tat > now}


# KEYS: bucket keys. ARGV: window (ms), then per key: interval (ms), counted (1/0).
# Returns {0, ""} when admitted, else {wait in microseconds, refusing key}.
_ADMIT = """
local now_parts = redis.call('TIME')
local now = now_parts[1] * 1000 + now_parts[2] / 1000
local window = tonumber(ARGV[1])
local worst, worst_key = 0, ''
local tats = {}
for index, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * index])
  local tat = math.max(tonumber(redis.call('GET', key) or '0'), now)
  tats[index] = tat + interval
  -- from tat - now (small), not tat + interval - now (large numbers cancelling); a wait
  -- under a microsecond is rounding and counts as admitted; waits go out rounded to 1 us
  local wait = (tat - now) + interval - window
  if wait > 0.001 and wait > worst then worst, worst_key = wait, key end
end
if worst > 0 then return {math.floor(worst * 1000 + 0.5), worst_key} end
for index, key in ipairs(KEYS) do
  if ARGV[2 * index + 1] == '1' then
    redis.call('SET', key, tostring(tats[index]), 'PX', math.ceil(tats[index] - now) + 1000)
  end
end
return {0, ''}
"""

# KEYS: token bucket keys. ARGV: per key: interval (ms) times the tokens charged.
_CHARGE = """
local now_parts = redis.call('TIME')
local now = now_parts[1] * 1000 + now_parts[2] / 1000
for index, key in ipairs(KEYS) do
  local tat = math.max(tonumber(redis.call('GET', key) or '0'), now) + tonumber(ARGV[index])
  redis.call('SET', key, tostring(tat), 'PX', math.ceil(tat - now) + 1000)
end
return 1
"""


class RedisBuckets:
    """Buckets in Redis, shared by every gateway process on it, on Redis's clock."""

    def __init__(self, url: str, *, prefix: str = "interlock:ratelimit:") -> None:
        from redis import asyncio as redis_asyncio

        redis_class: Any = redis_asyncio.Redis  # the package's annotations are partial
        self._client: Any = redis_class.from_url(url, decode_responses=True)
        self._prefix = prefix
        self._admit: Any = self._client.register_script(_ADMIT)
        self._charge: Any = self._client.register_script(_CHARGE)

    async def admit(self, buckets: Sequence[Bucket]) -> Refusal | None:
        keys = [self._prefix + bucket.key for bucket in buckets]
        args: list[str] = [str(WINDOW * 1000)]
        for bucket in buckets:
            args += [str(bucket.interval * 1000), "1" if bucket.kind == "requests" else "0"]
        wait, key = cast(list[Any], await self._admit(keys=keys, args=args))
        if int(wait) <= 0:
            return None
        refusing = next(bucket for bucket in buckets if self._prefix + bucket.key == key)
        return Refusal(int(wait) / 1_000_000, refusing)

    async def charge(self, buckets: Sequence[Bucket], tokens: int) -> None:
        charged = [bucket for bucket in buckets if bucket.kind == "tokens"]
        if not charged or tokens <= 0:
            return
        keys = [self._prefix + bucket.key for bucket in charged]
        await self._charge(
            keys=keys, args=[str(bucket.interval * 1000 * tokens) for bucket in charged]
        )

    async def close(self) -> None:
        await self._client.aclose()


class RateLimiter:
    """The configured limits, resolved per request to the buckets that apply."""

    def __init__(self, limits: Sequence[RateLimit], store: BucketStore) -> None:
        self.limits = tuple(limits)
        self.store = store
        self._cache: dict[tuple[str, str], tuple[Bucket, ...]] = {}

    def buckets(self, tenant: str, model: str) -> tuple[Bucket, ...]:
        """The buckets a request of ``tenant`` for ``model`` counts in (cached)."""
        found = self._cache.get((tenant, model))
        if found is not None:
            return found
        buckets: list[Bucket] = []
        for index, limit in enumerate(self.limits):
            if limit.tenant not in (None, tenant) or limit.model not in (None, model):
                continue
            scope = f"{index}/{quote(tenant, safe='')}/{quote(limit.model or '*', safe='')}"
            if limit.requests_per_minute is not None:
                rpm = limit.requests_per_minute
                key = f"{scope}/requests_per_minute"
                buckets.append(Bucket(key, "requests", WINDOW / rpm, rpm))
            if limit.tokens_per_minute is not None:
                tpm = limit.tokens_per_minute
                key = f"{scope}/tokens_per_minute"
                buckets.append(Bucket(key, "tokens", WINDOW / tpm, tpm))
        if len(self._cache) < 65536:
            self._cache[tenant, model] = tuple(buckets)
        return tuple(buckets)

    async def admit(self, tenant: str, model: str) -> Refusal | None:
        """``None`` when the request may go (and is counted), else why not and for how long."""
        buckets = self.buckets(tenant, model)
        return await self.store.admit(buckets) if buckets else None

    async def charge(self, tenant: str, model: str, tokens: int) -> None:
        """Charge an answer's tokens to the token buckets of its tenant and model."""
        buckets = self.buckets(tenant, model)
        if buckets and tokens > 0:
            await self.store.charge(buckets, tokens)

    async def close(self) -> None:
        """Release the bucket store's connections."""
        await self.store.close()


def rate_limiter(limits: Sequence[RateLimit], store_url: str) -> RateLimiter | None:
    """The limiter for the config: Redis-shared with a Redis store; ``None`` without limits."""
    if not limits:
        return None
    shared = store_url.startswith(("redis://", "rediss://"))
    return RateLimiter(limits, RedisBuckets(store_url) if shared else LocalBuckets())
