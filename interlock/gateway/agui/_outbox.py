"""The frames of one run on their way to one client: bounded, taken in batches.

A run (the producer) :meth:`Outbox.put`\\ s serialized AG-UI events; a transport (the
consumer) :meth:`Outbox.take`\\ s everything waiting at once and writes it out. The outbox
is the only buffer between them, and it is bounded: once ``limit`` characters of frames
wait, ``put`` waits until the transport has taken them, so a slow client slows its run
down instead of growing memory. What is held never exceeds ``limit`` plus one ``put``.

Two ways out for a producer that would otherwise wait forever:

- :meth:`Outbox.close` — the client went away: frames are discarded from then on and
  ``put`` never waits again, so the run can still save its thread and end;
- the stall limit — a client that has taken nothing for ``stall_seconds`` while frames
  wait is treated as gone: the outbox closes itself.

Either way the producer sees :attr:`Outbox.closed` after its ``put`` and stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class Outbox:
    """A bounded, batched hand-off of JSON text frames from one producer to one consumer.

    Invariants: frames come out in the order they went in; after :meth:`end` every frame
    put before it is still delivered, then :meth:`take` returns ``None``; after
    :meth:`close` nothing is delivered and nothing waits.
    """

    __slots__ = (
        "_ended",
        "_frames",
        "_getter",
        "_nudged",
        "_putter",
        "_size",
        "closed",
        "limit",
        "stall_seconds",
    )

    def __init__(self, limit: int, stall_seconds: float | None = None) -> None:
        self.limit = limit
        self.stall_seconds = stall_seconds
        self._frames: list[str] = []
        self._size = 0
        self._ended = False
        self.closed = False
        """True once the consumer went away (or stalled): frames are discarded. Set by
        :meth:`close` only (a plain attribute: read after every event)."""
        self._getter: asyncio.Future[None] | None = None
        self._putter: asyncio.Future[None] | None = None
        self._nudged = False

    @property
    def size(self) -> int:
        """Characters of frames waiting to be taken."""
        return self._size

    @property
    def waiting(self) -> bool:
        """True while the producer waits for the consumer to make room."""
        return self._putter is not None

    async def put(self, frames: Sequence[str]) -> None:
        """Queue ``frames``, first waiting while the outbox is full (see the module doc)."""
        if self.offer(frames):
            return
        await self._wait_for_room()
        self._queue(frames)

    def offer(self, frames: Sequence[str]) -> bool:
        """Queue ``frames`` now unless the outbox is full: ``False`` then, and nothing was
        queued (:meth:`put` them, which waits). What :meth:`put` does when it need not wait."""
        if self._size >= self.limit and not self.closed:
            return False
        if self.closed or not frames:  # _queue without its call: once per event
            return True
        self._frames += frames
        self._size += sum(map(len, frames))
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)
        return True

    def _queue(self, frames: Sequence[str]) -> None:
        if self.closed or not frames:
            return
        self._frames += frames
        self._size += sum(map(len, frames))
        getter = self._getter
        if getter is not None and not getter.done():
            getter.set_result(None)

    def end(self) -> None:
        """No more frames: :meth:`take` returns ``None`` once the rest is taken."""
        self._ended = True
        _wake(self._getter)

    def close(self) -> None:
        """The consumer is gone: drop what waits and everything that comes."""
        self.closed = True
        self._frames = []
        self._size = 0
        _wake(self._putter)
        _wake(self._getter)

    def nudge(self) -> None:
        """Wake a waiting :meth:`take` without frames: it returns ``[]`` (the SSE body's
        keep-alive is due). Nothing happens when :meth:`take` is not waiting."""
        getter = self._getter
        if getter is not None and not getter.done():
            self._nudged = True
            getter.set_result(None)

    async def take(self) -> list[str] | None:
        """Every frame waiting (waiting for one first); ``None`` at the end; ``[]`` when
        :meth:`nudge` woke the wait before any frame came.

        Safe to cancel (e.g. under ``asyncio.timeout``): frames are taken only once the
        wait is over, so none is lost.
        """
        while not self._frames and not self._ended and not self.closed:
            self._getter = asyncio.get_running_loop().create_future()
            try:
                await self._getter
            finally:
                self._getter = None
                nudged, self._nudged = self._nudged, False
            if nudged and not self._frames and not self._ended and not self.closed:
                return []
        if not self._frames:
            return None
        frames, self._frames, self._size = self._frames, [], 0
        _wake(self._putter)
        return frames

    async def _wait_for_room(self) -> None:
        try:
            async with asyncio.timeout(self.stall_seconds):
                while self._size >= self.limit and not self.closed:
                    self._putter = asyncio.get_running_loop().create_future()
                    try:
                        await self._putter
                    finally:
                        self._putter = None
        except TimeoutError:
            self.close()
