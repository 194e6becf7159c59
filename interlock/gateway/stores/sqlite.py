"""SQLite backend: durable (WAL), one connection owned by one worker thread.

Every statement runs on a single-thread executor, so the event loop never blocks on disk
and statements never interleave; each method is one transaction. Other processes may
open the same file (SQLite's own locking serializes them; ``busy_timeout`` waits).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

_T = TypeVar("_T")

_SCHEMA = "CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID"
_COUNT = (
    "INSERT INTO kv (key, value) VALUES (?, '1') ON CONFLICT (key) DO UPDATE "
    "SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) RETURNING value"
)
"""Add one to the count at a key (absent: 1), giving the new count."""


class SqliteBackend:
    """A ``kv`` table in one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="interlock-sqlite")
        self._path = Path(path)
        self._connection: sqlite3.Connection | None = None
        self._executor.submit(self._open).result()

    def _open(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA busy_timeout=5000")
        connection.execute(_SCHEMA)
        self._connection = connection

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            raise RuntimeError("the SQLite store is closed")
        return self._connection

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: work(self._db()))

    async def get(self, key: str) -> str | None:
        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

        return await self._run(work)

    async def get_many(self, keys: Sequence[str]) -> list[str | None]:
        if not keys:
            return []

        def work(db: sqlite3.Connection) -> list[str | None]:
            found: dict[str, str] = {}
            # In order: the first key is read no later than the others (see the contract).
            for start in range(0, len(keys), 500):
                batch = keys[start : start + 500]
                marks = ",".join("?" * len(batch))
                query = f"SELECT key, value FROM kv WHERE key IN ({marks})"
                found.update((str(k), str(v)) for k, v in db.execute(query, tuple(batch)))
            return [found.get(key) for key in keys]

        return await self._run(work)

    async def set_many(self, items: Mapping[str, str]) -> None:
        if not items:
            return
        rows = list(items.items())

        def work(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.executemany("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", rows)

        await self._run(work)

    async def set_many_counted(self, items: Mapping[str, str], counter: str) -> int:
        rows = list(items.items())

        def work(db: sqlite3.Connection) -> int:
            with _transaction(db):
                db.executemany("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", rows)
                row = db.execute(_COUNT, (counter,)).fetchone()
            return int(row[0])

        return await self._run(work)

    async def add(self, key: str, value: str) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            cursor = db.execute("INSERT OR IGNORE INTO kv (key, value) VALUES (?, ?)", (key, value))
            return cursor.rowcount == 1

        return await self._run(work)

    async def replace_if(self, key: str, expected: str, value: str) -> bool:
        def work(db: sqlite3.Connection) -> bool:
            cursor = db.execute(
                "UPDATE kv SET value = ? WHERE key = ? AND value = ?", (value, key, expected)
            )
            return cursor.rowcount == 1

        return await self._run(work)

    async def replace_all_if(self, changes: Mapping[str, tuple[str, str]]) -> bool:
        rows = [(value, key, expected) for key, (expected, value) in changes.items()]

        def work(db: sqlite3.Connection) -> bool:
            # One IMMEDIATE transaction: the write lock is taken first, so no other
            # process interleaves between the checks and the writes.
            with _transaction(db):
                for row in rows:
                    cursor = db.execute("UPDATE kv SET value = ? WHERE key = ? AND value = ?", row)
                    if cursor.rowcount != 1:
                        raise _Unchanged
            return True

        try:
            return await self._run(work)
        except _Unchanged:
            return False

    async def delete(self, key: str) -> None:
        await self._run(lambda db: db.execute("DELETE FROM kv WHERE key = ?", (key,)))

    async def scan(self, prefix: str) -> list[tuple[str, str]]:
        def work(db: sqlite3.Connection) -> list[tuple[str, str]]:
            rows = db.execute(
                "SELECT key, value FROM kv WHERE key >= ? AND key < ? ORDER BY key",
                (prefix, prefix + "\U0010ffff"),
            )
            return [(str(key), str(value)) for key, value in rows]

        return await self._run(work)

    async def close(self) -> None:
        def work() -> None:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

        await asyncio.get_running_loop().run_in_executor(self._executor, work)
        self._executor.shutdown(wait=True)


class _Unchanged(Exception):
    """A compare failed inside a transaction: it rolls back and nothing is written."""


class _transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (or ``ROLLBACK`` on error) in autocommit mode."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        self._db.execute("ROLLBACK" if error is not None else "COMMIT")
