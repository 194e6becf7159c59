"""Tools for multi-process tests: each execution appends its key argument to a file.

The files live in the directory named by ``INTERLOCK_TEST_COUNTS``, so counts hold across
gateway processes and survive a ``kill -9``. ``started`` lines are written when a tool
begins, ``finished`` lines when it returns.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path


def _log(tool: str, key: str, event: str) -> None:
    directory = Path(os.environ["INTERLOCK_TEST_COUNTS"])
    with (directory / f"{tool}.log").open("a", encoding="utf-8") as handle:
        handle.write(f"{event} {key}\n")
        handle.flush()
        os.fsync(handle.fileno())


def executions(directory: Path, tool: str, key: str, event: str = "finished") -> int:
    """How many times ``tool`` reached ``event`` for ``key`` (any process)."""
    path = directory / f"{tool}.log"
    if not path.exists():
        return 0
    return path.read_text(encoding="utf-8").splitlines().count(f"{event} {key}")


def get_weather(city: str = "Paris") -> str:
    """Today's weather for ``city``."""
    _log("get_weather", city, "started")
    _log("get_weather", city, "finished")
    return f"sunny in {city}"


def delete_file(path: str = "default") -> str:
    """Delete ``path`` (needs approval)."""
    _log("delete_file", path, "started")
    _log("delete_file", path, "finished")
    return f"deleted {path}"


def send_email(to: str = "default") -> str:
    """Send an email to ``to`` (needs approval)."""
    _log("send_email", to, "started")
    _log("send_email", to, "finished")
    return f"sent to {to}"


def slow_task(tag: str = "default") -> str:
    """Runs until the file ``<counts>/release-<tag>`` exists (a sync tool, in a thread)."""
    _log("slow_task", tag, "started")
    release = Path(os.environ["INTERLOCK_TEST_COUNTS"]) / f"release-{tag}"
    deadline = time.monotonic() + 30
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    _log("slow_task", tag, "finished")
    return f"slow {tag} done"


def paced_task(tag: str = "default", seconds: float = 1.0) -> str:
    """Takes ``seconds`` (a sync tool, in a thread)."""
    _log("paced_task", tag, "started")
    time.sleep(seconds)
    _log("paced_task", tag, "finished")
    return f"paced {tag}"


async def until_count(directory: Path, tool: str, key: str, event: str, at_least: int = 1) -> None:
    """Wait (up to 20 s) until ``tool`` reached ``event`` for ``key`` ``at_least`` times."""
    deadline = time.monotonic() + 20
    while True:
        if executions(directory, tool, key, event) >= at_least:
            return
        assert time.monotonic() < deadline, f"{tool} {key} never reached {event}"
        await asyncio.sleep(0.02)
