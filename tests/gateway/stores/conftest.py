"""One parametrized ``store`` fixture: every store test runs on memory, SQLite and Redis
(``redis_url`` comes from ``tests/gateway/conftest.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlock.gateway.stores import Store, open_store


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    kind = request.param
    if kind == "memory":
        url = "memory://"
    elif kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'state.db'}"
    else:
        base = request.getfixturevalue("redis_url")
        url = base[: base.rindex("/")] + f"/{_next_db()}"
    opened = open_store(url)
    if kind == "redis":
        await _flush(opened)
    try:
        yield opened
    finally:
        await opened.close()


_DB = [0]


def _next_db() -> int:
    _DB[0] = (_DB[0] + 1) % 16
    return _DB[0]


async def _flush(store: Store) -> None:
    for key, _ in await store.backend.scan(""):
        await store.backend.delete(key)
