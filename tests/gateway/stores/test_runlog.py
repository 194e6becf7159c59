"""Per-run event logs on memory, SQLite and Redis: ordered ids, live following, trimming,
expiry, and a reader on another process's view of the same backend."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interlock.gateway.stores import LogGapError, RunKey, RunLog, Store, open_store
from interlock.gateway.stores._store import store_key

KEY = RunKey("acme", "thread-1", "run-1")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def frames(*numbers: int) -> list[str]:
    return [f'{{"n":{n}}}' for n in numbers]


async def test_frames_come_back_in_order_after_any_id(store: Store) -> None:
    log = RunLog(store.backend)
    writer = await log.open(KEY)
    writer.append(frames(1, 2))
    writer.append(frames(3))
    await writer.flush()
    writer.append(frames(4, 5))
    await writer.close()
    for after in range(6):
        read = await log.read(KEY, after)
        assert read is not None and read.ended
        assert read.frames == frames(*range(after + 1, 6))
    status = await log.latest("acme", "thread-1")
    assert status is not None and (status.run_id, status.ended, status.last_event_id) == (
        "run-1",
        True,
        5,
    )


async def test_unknown_runs_and_other_tenants_read_nothing(store: Store) -> None:
    log = RunLog(store.backend)
    writer = await log.open(KEY)
    writer.append(frames(1))
    await writer.close()
    assert await log.read(RunKey("other", "thread-1", "run-1"), 0) is None
    assert await log.read(RunKey("acme", "thread-1", "run-2"), 0) is None
    assert await log.latest("other", "thread-1") is None


async def test_a_follower_gets_the_past_then_the_live_frames_until_the_end(store: Store) -> None:
    log = RunLog(store.backend, flush_seconds=0.01, poll_seconds=0.05)
    writer = await log.open(KEY)
    writer.append(frames(1, 2))
    await writer.flush()
    received: list[str] = []

    async def follow() -> None:
        async for batch in log.follow(KEY, 1):
            received.extend(batch)

    follower = asyncio.create_task(follow())
    for number in range(3, 8):
        writer.append(frames(number))
        await asyncio.sleep(0.01)
    await writer.close()
    await asyncio.wait_for(follower, 5)
    assert received == frames(*range(2, 8))
    assert await log.reader_seen(KEY) is not None


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
async def test_a_reader_on_another_store_instance_follows_the_writer(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Two stores over one database stand for two gateway processes (replicas)."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    if kind == "redis":
        url = str(request.getfixturevalue("redis_url"))
    mine, theirs = open_store(url), open_store(url)
    key = RunKey("acme", f"thread-{kind}-{tmp_path.name}", "run-1")
    try:
        writer = await RunLog(mine.backend, flush_seconds=0.01).open(key)
        reader_log = RunLog(theirs.backend, poll_seconds=0.02)
        received: list[str] = []

        async def follow() -> None:
            async for batch in reader_log.follow(key, 0):
                received.extend(batch)

        follower = asyncio.create_task(follow())
        writer.append(frames(1, 2, 3))
        await asyncio.sleep(0.05)
        writer.append(frames(4))
        await writer.close()
        await asyncio.wait_for(follower, 5)
        assert received == frames(1, 2, 3, 4)
    finally:
        await mine.close()
        await theirs.close()


async def test_a_long_log_keeps_its_newest_frames_and_reports_the_gap(store: Store) -> None:
    log = RunLog(store.backend, max_chars=40)
    writer = await log.open(KEY)
    for number in range(1, 11):
        writer.append(frames(number))  # 8 characters each
        await writer.flush()
    await writer.close()
    with pytest.raises(LogGapError) as gap:
        await log.read(KEY, 0)
    first = gap.value.first
    assert first > 1
    read = await log.read(KEY, first - 1)
    assert read is not None and read.frames == frames(*range(first, 11))
    assert len("".join(read.frames)) <= 40


async def test_logs_expire_after_their_last_write_and_are_swept(store: Store) -> None:
    clock = Clock()
    log = RunLog(store.backend, ttl_seconds=60, clock=clock)
    writer = await log.open(KEY)
    writer.append(frames(1))
    await writer.close()
    clock.now += 61
    assert await log.read(KEY, 0) is None
    assert await log.latest("acme", "thread-1") is None
    await log.open(RunKey("acme", "thread-1", "run-2"))  # sweeps the thread's expired logs
    left = [key for key, _ in await store.backend.scan("runlog/acme/thread-1/run-1")]
    assert left == []


async def test_a_busy_thread_reads_its_logs_once_a_quarter_ttl_not_every_run(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a run sweeps its thread's expired logs, which reads every log the thread
    holds: many runs a minute on one thread read them once per quarter TTL, not once a
    run, and a log that expired is still gone after the next sweep."""
    clock = Clock()
    log = RunLog(store.backend, ttl_seconds=60, clock=clock)
    scanned: list[str] = []
    real = store.backend.scan

    async def counting(prefix: str) -> list[tuple[str, str]]:
        scanned.append(prefix)
        return await real(prefix)

    monkeypatch.setattr(store.backend, "scan", counting)
    for number in range(30):
        writer = await log.open(RunKey("acme", "busy", f"run-{number}"))
        writer.append(frames(1))
        await writer.close()
        clock.now += 1  # 30 runs in 30 s: two sweeps of the thread (at 0 s and 15 s)
    assert scanned == ["runlog/acme/busy/"] * 2
    clock.now += 61  # every log of the thread has expired
    await log.open(RunKey("acme", "busy", "run-next"))
    assert len(scanned) == 3
    left = {key.split("/")[3] for key, _ in await real("runlog/acme/busy/")}
    assert left == {"run-next"}


async def test_what_runs_leave_in_the_log_stays_bounded_as_runs_are_served(
    store: Store,
) -> None:
    """Runs on many threads, in waves further apart than the TTL: each periodic sweep
    removes every expired log and each thread's pointer to it, so what the store holds is
    the last wave's runs whatever the number served (one head, one chunk and one pointer a
    run), and a later run on an old thread finds nothing stale."""
    clock = Clock()
    log = RunLog(store.backend, ttl_seconds=60, sweep_seconds=15, clock=clock)
    held: list[int] = []
    for wave in range(4):
        for number in range(30):
            writer = await log.open(RunKey("acme", f"thread-{wave}-{number}", f"run-{number}"))
            writer.append(frames(1, 2))
            await writer.close()
        held.append(len(await store.backend.scan("runlog/")))
        clock.now += 61
    assert held == [90, 90, 90, 90]  # the first run of a wave swept the wave before it
    assert await log.latest("acme", "thread-0-0") is None
    writer = await log.open(RunKey("acme", "thread-0-0", "run-again"))
    await writer.close()
    status = await log.latest("acme", "thread-0-0")
    assert status is not None and status.run_id == "run-again"


async def test_a_cancel_request_reaches_the_owner_through_the_store(store: Store) -> None:
    """Any process may ask; the owner sees it; the answer says what was found; a run id
    used again starts uncancelled; the request expires with the log."""
    clock = Clock()
    owner = RunLog(store.backend, ttl_seconds=60, clock=clock)
    elsewhere = RunLog(store.backend, ttl_seconds=60, clock=clock)
    assert await elsewhere.request_cancel(KEY) == "unknown"
    writer = await owner.open(KEY)
    writer.append(frames(1))
    await writer.flush()
    assert not await owner.cancel_requested(KEY)
    watching = asyncio.create_task(owner.until_cancel_requested(KEY, 0.01))
    assert await elsewhere.request_cancel(KEY) == "requested"
    assert await elsewhere.request_cancel(KEY) == "requested"  # idempotent
    await asyncio.wait_for(watching, 10)
    assert await elsewhere.request_cancel(RunKey("other", "thread-1", "run-1")) == "unknown"
    assert await elsewhere.terminal(KEY, wait_seconds=0.05) is None  # not ended yet
    writer.append(['{"type":"RUN_FINISHED"}'])
    await writer.close()
    assert await elsewhere.request_cancel(KEY) == "ended"
    assert await elsewhere.terminal(KEY, wait_seconds=0) == '{"type":"RUN_FINISHED"}'
    await owner.open(KEY)  # the same run id again
    assert not await owner.cancel_requested(KEY)
    await elsewhere.request_cancel(KEY)
    clock.now += 61
    await owner.open(RunKey("acme", "thread-1", "run-2"))  # sweeps the expired log
    assert not await owner.cancel_requested(KEY)
    assert await store.backend.get(KEY.cancel()) is None


async def test_waiting_for_the_end_sees_it_written_by_another_process(store: Store) -> None:
    owner = RunLog(store.backend)
    writer = await owner.open(KEY)
    writer.append(frames(1, 2))
    await writer.flush()
    elsewhere = RunLog(store.backend, poll_seconds=0.01)
    waiting = asyncio.create_task(elsewhere.terminal(KEY, wait_seconds=20))
    await asyncio.sleep(0.05)
    writer.append(frames(3))
    await writer.close()
    assert await waiting == frames(3)[0]


async def test_closing_during_a_timed_flush_loses_no_frames(store: Store) -> None:
    """A timed flush whose write still waits for the store (its thread busy under load) is
    finished, not cancelled, by ``close``: cancelled, its chunk was never written while the
    final head listed it, and a reader got ``LogGapError``."""
    gate = asyncio.Event()
    waiting = asyncio.Event()
    real_set_many = store.backend.set_many

    async def queued_set_many(items: Any) -> None:
        if not gate.is_set():
            waiting.set()
            await gate.wait()  # a write queued behind others
        await real_set_many(items)

    log = RunLog(store.backend, flush_seconds=0.01)
    writer = await log.open(KEY)
    store.backend.set_many = queued_set_many  # type: ignore[method-assign]  # a slow store
    writer.append(frames(1, 2))
    await asyncio.wait_for(waiting.wait(), 5)
    closing = asyncio.create_task(writer.close())
    await asyncio.sleep(0.05)
    gate.set()
    await asyncio.wait_for(closing, 5)
    read = await log.read(KEY, 0)
    assert read is not None and read.frames == frames(1, 2)


_COMPONENT = st.text(alphabet=st.sampled_from("ab/:%é _.~-\u00e9\U0001f600"), max_size=6)


@given(_COMPONENT, _COMPONENT, _COMPONENT, st.integers(0, 10**12 - 1))
def test_a_run_keys_store_keys_are_its_components_quoted(
    tenant: str, thread_id: str, run_id: str, start: int
) -> None:
    """The keys joined once when the key is made are the ones ``store_key`` gives."""
    key = RunKey(tenant, thread_id, run_id)
    assert key.latest() == store_key("runlog", tenant, thread_id)
    assert key.head() == store_key("runlog", tenant, thread_id, run_id)
    assert key.chunk(start) == store_key("runlog", tenant, thread_id, run_id, f"{start:012d}")
    assert key.reader() == store_key("runlog", tenant, thread_id, run_id, "reader")
    assert key.cancel() == store_key("runlog", tenant, thread_id, run_id, "cancel")
    assert key == RunKey(tenant, thread_id, run_id) and "_head" not in repr(key)
