"""One run at a time per thread, across every gateway process sharing the store (and,
in one process, :class:`ThreadLocks`).

A run holds the thread's lease (:meth:`~interlock.gateway.stores.Store.acquire_lease`)
from before it reads the thread until after it saves it, renewing it while it runs. A
second run on the thread waits for the lease up to ``wait_seconds`` and is otherwise
refused with ``THREAD_BUSY`` before it reads or runs anything. A process killed while
holding a lease blocks the thread only until the lease expires (``seconds``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time

from interlock.gateway.agui._threads import RunRefusedError
from interlock.gateway.stores import MemoryBackend, Store

LOGGER = logging.getLogger("interlock.gateway.agui")

LEASE_SECONDS = 30.0
"""How long a lease lasts without renewal (a run renews it every third of that)."""

LEASE_WAIT_SECONDS = 10.0
"""How long a run waits for a busy thread before ``THREAD_BUSY``."""


async def _acquire(
    store: Store, tenant: str, thread_id: str, owner: str, seconds: float, wait_seconds: float
) -> None:
    deadline = time.monotonic() + wait_seconds
    pause = 0.01
    while not await store.acquire_lease(tenant, thread_id, owner, seconds):
        if time.monotonic() >= deadline:
            raise RunRefusedError(
                "THREAD_BUSY",
                f"another run is active on thread {thread_id!r}; retry when it has ended "
                "(resending the same input never runs a tool twice)",
            )
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.2)


async def _renew(
    store: Store,
    tenant: str,
    thread_id: str,
    owner: str,
    seconds: float,
    stopped: asyncio.Event,
    *,
    wait_first: bool = True,
) -> None:
    """Renew the lease every third of ``seconds`` until ``stopped`` is set (at once
    first when not ``wait_first``: the first third has passed already).

    Stopped by the event, never cancelled: a store call may swallow its task's cancellation
    (see :func:`~interlock.gateway.stores.stop_if_cancelled`), and then the loop would renew
    forever while the run waits for it; and a renewal in flight lands before the release.
    """
    wait = wait_first
    while True:
        if wait:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds / 3):
                    await stopped.wait()
        wait = True
        if stopped.is_set():
            return
        try:
            renewed = await store.renew_lease(tenant, thread_id, owner, seconds)
        except Exception:  # a store hiccup: the next renewal may still hold the lease
            LOGGER.warning("AG-UI could not renew the lease on thread %s", thread_id, exc_info=True)
            continue
        if not renewed:
            LOGGER.warning("AG-UI lost the lease on thread %s", thread_id)
            return


def thread_lease(
    store: Store,
    tenant: str,
    thread_id: str,
    *,
    seconds: float = LEASE_SECONDS,
    wait_seconds: float = LEASE_WAIT_SECONDS,
) -> ThreadLease:
    """Hold the thread's lease for the block (raises ``THREAD_BUSY`` if it stays taken)."""
    return ThreadLease(store, tenant, thread_id, seconds, wait_seconds)


class ThreadLease:
    """``async with`` holds one thread's lease (see :func:`thread_lease`): acquired on
    entry under a new owner id, renewed while held, released on exit however the block
    ends (a plain context manager: no generator per run)."""

    __slots__ = ("_renewal", "owner", "seconds", "store", "tenant", "thread_id", "wait_seconds")

    def __init__(
        self, store: Store, tenant: str, thread_id: str, seconds: float, wait_seconds: float
    ) -> None:
        self.store = store
        self.tenant = tenant
        self.thread_id = thread_id
        self.seconds = seconds
        self.wait_seconds = wait_seconds
        self.owner = os.urandom(16).hex()  # as unique as a uuid4, without its object
        self._renewal: _Renewal | None = None

    async def __aenter__(self) -> None:
        store, tenant, thread_id, owner = self.store, self.tenant, self.thread_id, self.owner
        await _acquire(store, tenant, thread_id, owner, self.seconds, self.wait_seconds)
        self._renewal = _Renewal(store, tenant, thread_id, owner, self.seconds)

    async def __aexit__(self, *exception: object) -> None:
        renewal = self._renewal
        assert renewal is not None, "the lease is held"
        await renewal.stop()
        release = self.store.release_lease(self.tenant, self.thread_id, self.owner)
        if type(self.store.backend) is MemoryBackend:
            # Its calls never wait, so no cancellation can land inside: no shield (and
            # no task and loop pass of its own: ~40k instructions a run under uvloop).
            await release
        else:
            await asyncio.shield(release)


class _Renewal:
    """The renewals of one held lease: a timer until the first one is due, then a task.

    A run shorter than a third of the lease (most) never starts a task: :meth:`stop`
    only cancels the timer. Once started, the task is stopped by its event (see
    :func:`_renew`), and a renewal in flight lands before :meth:`stop` returns.
    """

    __slots__ = ("_arguments", "_renewer", "_stopped", "_timer")

    def __init__(self, store: Store, tenant: str, thread_id: str, owner: str, seconds: float):
        self._arguments = (store, tenant, thread_id, owner, seconds)
        self._stopped = asyncio.Event()
        self._renewer: asyncio.Task[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(seconds / 3, self._start)

    def _start(self) -> None:
        renew = _renew(*self._arguments, self._stopped, wait_first=False)
        self._renewer = asyncio.create_task(renew)

    async def stop(self) -> None:
        """No renewal after this returns."""
        self._timer.cancel()
        self._stopped.set()
        if self._renewer is not None:
            await asyncio.shield(self._renewer)


class ThreadLocks:
    """One lock per (tenant, thread) in this process: runs on a thread never overlap here.

    Across processes the thread lease in the store (:func:`thread_lease`) serializes them.
    """

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}

    def hold(self, tenant: str, thread_id: str) -> HeldLock:
        """Hold the thread's lock for the duration of an ``async with`` block."""
        return HeldLock(self._locks, (tenant, thread_id))


class HeldLock:
    """``async with`` holds one thread's lock of a :class:`ThreadLocks` (a plain context
    manager: no generator per run). The lock is shared by the runs that wait for it and
    forgotten when the last one leaves."""

    __slots__ = ("_key", "_locks")

    def __init__(
        self, locks: dict[tuple[str, str], tuple[asyncio.Lock, int]], key: tuple[str, str]
    ):
        self._locks = locks
        self._key = key

    async def __aenter__(self) -> None:
        locks, key = self._locks, self._key
        held = locks.get(key)
        lock, users = held if held is not None else (asyncio.Lock(), 0)
        locks[key] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._leave()
            raise

    async def __aexit__(self, *exception: object) -> None:
        self._locks[self._key][0].release()
        self._leave()

    def _leave(self) -> None:
        locks, key = self._locks, self._key
        lock, users = locks[key]
        if users == 1:
            del locks[key]
        else:
            locks[key] = (lock, users - 1)
