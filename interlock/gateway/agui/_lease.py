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
import time
import uuid
from collections.abc import AsyncGenerator

from interlock.gateway.agui._threads import RunRefusedError
from interlock.gateway.stores import Store

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


@contextlib.asynccontextmanager
async def thread_lease(
    store: Store,
    tenant: str,
    thread_id: str,
    *,
    seconds: float = LEASE_SECONDS,
    wait_seconds: float = LEASE_WAIT_SECONDS,
) -> AsyncGenerator[None]:
    """Hold the thread's lease for the block (raises ``THREAD_BUSY`` if it stays taken)."""
    owner = uuid.uuid4().hex
    await _acquire(store, tenant, thread_id, owner, seconds, wait_seconds)
    renewal = _Renewal(store, tenant, thread_id, owner, seconds)
    try:
        yield
    finally:
        await renewal.stop()
        await asyncio.shield(store.release_lease(tenant, thread_id, owner))


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

    @contextlib.asynccontextmanager
    async def hold(self, tenant: str, thread_id: str) -> AsyncGenerator[None]:
        """Hold the thread's lock for the duration of the block."""
        key = (tenant, thread_id)
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
