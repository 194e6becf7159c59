"""One parametrized ``store`` fixture: every store test runs on memory, SQLite and Redis."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from interlock.gateway.stores import Store, open_store


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private redis-server on a free loopback port (skipped, visibly, when absent)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (.ci/run installs it)")
    port = _free_port()
    directory = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(directory),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.05)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


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
