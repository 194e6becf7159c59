"""The key-value backend every store is built on, and its atomicity contract.

Three implementations (memory, SQLite, Redis) provide these few primitives; everything
else (vault, threads, approvals, journal) is written once on top of them in
:mod:`interlock.gateway.stores._store`. Keys and values are strings (values are JSON).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Protocol


def stop_if_cancelled() -> None:
    """Raise ``CancelledError`` if the current task was asked to stop.

    A backend call may swallow the cancellation of its task: redis-py sends with
    ``asyncio.wait_for``, which on Python 3.11 returns a finished result instead of raising
    the ``CancelledError`` that arrived meanwhile. A background loop stopped by ``cancel()``
    calls this after each backend call, or it runs on and whoever awaits it hangs.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class KeyValueBackend(Protocol):
    """Durable string key-value storage shared by every gateway process using it.

    Atomicity each method must give:

    * :meth:`add` inserts only if the key is absent and says whether it did — exactly one
      of several concurrent callers (in any process sharing the backend) gets ``True``.
    * :meth:`replace_if` is a compare-and-set: the value changes only if it currently
      equals ``expected``; exactly one of several concurrent callers wins.
    * :meth:`replace_all_if` is a compare-and-set over several keys at once: every key
      changes only if every key currently holds its expected value (all or nothing);
      of several concurrent callers touching a common key, at most one wins.
    * :meth:`set_many` writes all items or none.
    * :meth:`set_many_counted` writes all items and adds one to a count, or does neither;
      a :meth:`get_many` whose keys start with the count reads it no later than the
      others (one snapshot, or the first key first): what it reads of the items reflects
      at least every counted write up to that count.
    * A completed write is visible to every later read, in any process.
    """

    async def get(self, key: str) -> str | None:
        """The value at ``key`` or ``None``."""
        ...

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        """The values at ``keys``, in order (``None`` where absent)."""
        ...

    async def set_many(self, items: Mapping[str, str]) -> None:
        """Write every item (atomically, all or nothing)."""
        ...

    async def set_many_counted(self, items: Mapping[str, str], counter: str) -> int:
        """Write every item and add one to the integer count at ``counter`` (absent: 0),
        atomically; the count this write made. Read the count with :meth:`get_many`."""
        ...

    async def add(self, key: str, value: str) -> bool:
        """Insert ``key`` only if absent; ``True`` when this call inserted it."""
        ...

    async def replace_if(self, key: str, expected: str, value: str) -> bool:
        """Set ``key`` to ``value`` only if it currently holds ``expected``."""
        ...

    async def replace_all_if(self, changes: Mapping[str, tuple[str, str]]) -> bool:
        """Set each ``key`` to ``value`` only if every ``key`` holds its ``expected``;
        ``changes`` maps key → ``(expected, value)``. ``True`` when this call wrote them."""
        ...

    async def delete(self, key: str) -> None:
        """Remove ``key`` (no error if absent)."""
        ...

    async def scan(self, prefix: str) -> list[tuple[str, str]]:
        """Every ``(key, value)`` whose key starts with ``prefix``, sorted by key."""
        ...

    async def close(self) -> None:
        """Release connections; the backend is unusable afterwards."""
        ...
