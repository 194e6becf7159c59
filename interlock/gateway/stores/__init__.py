"""Gateway state stores: one interface (:class:`Store`) over memory, SQLite or Redis."""

from __future__ import annotations

from interlock.gateway.stores._backend import KeyValueBackend, stop_if_cancelled
from interlock.gateway.stores._ledger import KeyValueLedgerStore
from interlock.gateway.stores._responses import ResponseIndex
from interlock.gateway.stores._runlog import (
    CancelRequest,
    LogGapError,
    LogRead,
    RunKey,
    RunLog,
    RunLogWriter,
    RunStatus,
)
from interlock.gateway.stores._storable import unstorable_field
from interlock.gateway.stores._store import (
    CorruptThreadError,
    Store,
    ThreadRecord,
    store_key,
    vault_entries,
)
from interlock.gateway.stores._thread_memo import identical_prefix
from interlock.gateway.stores.memory import MemoryBackend
from interlock.gateway.stores.sqlite import SqliteBackend


def open_backend(url: str) -> KeyValueBackend:
    """The backend for a store URL: ``memory://``, ``sqlite:///PATH``, ``redis://…``."""
    if url == "memory://":
        return MemoryBackend()
    if url.startswith("sqlite:///"):
        return SqliteBackend(url.removeprefix("sqlite:///"))
    if url.startswith(("redis://", "rediss://")):
        from interlock.gateway.stores.redis import RedisBackend

        return RedisBackend(url)
    raise ValueError(f"unsupported store URL {url!r}")


def open_store(url: str) -> Store:
    """A :class:`Store` over the backend named by ``url``."""
    return Store(open_backend(url))


__all__ = [
    "CancelRequest",
    "CorruptThreadError",
    "KeyValueBackend",
    "KeyValueLedgerStore",
    "LogGapError",
    "LogRead",
    "MemoryBackend",
    "ResponseIndex",
    "RunKey",
    "RunLog",
    "RunLogWriter",
    "RunStatus",
    "SqliteBackend",
    "Store",
    "ThreadRecord",
    "identical_prefix",
    "open_backend",
    "open_store",
    "stop_if_cancelled",
    "store_key",
    "unstorable_field",
    "vault_entries",
]
