"""GCRA buckets, in this process and in a real redis-server: the same behaviour from both.

No timing assertions: a minute's budget is far longer than any test step, so a refused
request's ``retry_after`` is checked against bounds the arithmetic fixes.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from interlock.gateway.config_ops import RateLimit
from interlock.gateway.rate_limits import (
    BucketStore,
    LocalBuckets,
    RateLimiter,
    RedisBuckets,
    rate_limiter,
)


@pytest.fixture(params=["local", "redis"])
async def buckets(request: pytest.FixtureRequest) -> AsyncIterator[BucketStore]:
    if request.param == "local":
        store: BucketStore = LocalBuckets()
    else:
        redis_url: str = request.getfixturevalue("redis_url")
        store = RedisBuckets(redis_url, prefix=f"test-{uuid.uuid4().hex}:")
    yield store
    await store.close()


async def test_a_minute_of_requests_then_a_refusal_saying_when(buckets: BucketStore) -> None:
    limiter = RateLimiter([RateLimit(requests_per_minute=3)], buckets)
    for _ in range(3):
        assert await limiter.admit("team-a", "fast") is None
    refusal = await limiter.admit("team-a", "fast")
    assert refusal is not None
    assert refusal.bucket.kind == "requests"
    assert 0 < refusal.retry_after <= 20  # one request every 20 s once the burst is spent
    assert refusal.retry_after_seconds == max(1, -(-refusal.retry_after // 1))
    assert "3 requests per minute" in refusal.message("team-a")


async def test_each_tenant_has_its_own_budget_unless_one_is_named(buckets: BucketStore) -> None:
    limiter = RateLimiter(
        [RateLimit(requests_per_minute=1), RateLimit(tenant="team-b", requests_per_minute=5)],
        buckets,
    )
    assert await limiter.admit("team-a", "fast") is None
    assert await limiter.admit("team-b", "fast") is None  # its own budget of the first entry
    assert await limiter.admit("team-a", "fast") is not None
    refusal = await limiter.admit("team-b", "fast")
    assert refusal is not None and refusal.bucket.limit == 1  # the stricter entry refuses


async def test_a_model_limit_counts_only_that_model_and_refusals_count_nothing(
    buckets: BucketStore,
) -> None:
    limiter = RateLimiter(
        [RateLimit(requests_per_minute=3), RateLimit(model="slow", requests_per_minute=1)],
        buckets,
    )
    assert await limiter.admit("t", "slow") is None
    refusal = await limiter.admit("t", "slow")
    assert refusal is not None and refusal.bucket.key.endswith("/slow/requests_per_minute")
    # the refused request was not counted in the tenant-wide bucket: two requests remain
    assert await limiter.admit("t", "fast") is None
    assert await limiter.admit("t", "fast") is None
    assert await limiter.admit("t", "fast") is not None


async def test_tokens_are_charged_after_the_answer_and_an_overdraft_blocks(
    buckets: BucketStore,
) -> None:
    limiter = RateLimiter([RateLimit(tokens_per_minute=600)], buckets)
    assert await limiter.admit("t", "fast") is None
    await limiter.charge("t", "fast", 500)
    assert await limiter.admit("t", "fast") is None  # 100 tokens of budget left
    await limiter.charge("t", "fast", 400)  # 300 over: 30 s of debt at 10 tokens a second
    refusal = await limiter.admit("t", "fast")
    assert refusal is not None and refusal.bucket.kind == "tokens"
    assert 29 < refusal.retry_after <= 30.1
    assert "600 tokens per minute" in refusal.message("t")


async def test_no_limits_no_limiter() -> None:
    assert rate_limiter([], "memory://") is None
    limiter = rate_limiter([RateLimit(requests_per_minute=1)], "sqlite:///x.db")
    assert limiter is not None and isinstance(limiter.store, LocalBuckets)


async def test_two_limiters_on_one_redis_share_the_budget(redis_url: str) -> None:
    prefix = f"shared-{uuid.uuid4().hex}:"
    limits = [RateLimit(requests_per_minute=4)]
    one = RateLimiter(limits, RedisBuckets(redis_url, prefix=prefix))
    two = RateLimiter(limits, RedisBuckets(redis_url, prefix=prefix))
    try:
        admitted = [await limiter.admit("t", "m") is None for limiter in (one, two) * 3]
        assert admitted == [True, True, True, True, False, False]
    finally:
        await one.close()
        await two.close()


async def test_a_one_per_minute_bucket_admits_its_first_request_at_any_clock_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # At this monotonic reading (now + 60) - now - 60 rounds to 2e-13, not 0: the first
    # request of a one-per-minute bucket was refused with a retry-after of a picosecond.
    monkeypatch.setattr("interlock.gateway.rate_limits.time.monotonic", lambda: 2040.1090003485567)
    limiter = RateLimiter([RateLimit(requests_per_minute=1)], LocalBuckets())
    assert await limiter.admit("team-a", "fast") is None
    refusal = await limiter.admit("team-a", "fast")
    assert refusal is not None and refusal.retry_after == 60
    assert refusal.retry_after_seconds == 60
