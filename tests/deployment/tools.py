"""Tools for deployment tests, run inside ``interlock serve`` subprocesses.

Each execution appends one line ``<tool> <key>`` to the file named by the environment
variable ``INTERLOCK_TEST_EXECUTIONS``, so counts hold across processes, restarts and
kill -9. ``note`` needs no approval; ``ask`` is the one the test config guards.
"""

from __future__ import annotations

import asyncio
import os


def _record(tool: str, key: str) -> None:
    path = os.environ["INTERLOCK_TEST_EXECUTIONS"]
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"{tool} {key}\n")
        handle.flush()
        os.fsync(handle.fileno())


async def note(key: str = "default", seconds: float = 0.0) -> str:
    """Record ``key`` after ``seconds`` (a slow tool when asked)."""
    await asyncio.sleep(seconds)
    _record("note", key)
    return f"noted {key}"


async def ask(key: str = "default", seconds: float = 0.0) -> str:
    """Record ``key`` after ``seconds``; the test config makes it need approval."""
    await asyncio.sleep(seconds)
    _record("ask", key)
    return f"asked {key}"


def executions(path: str) -> dict[tuple[str, str], int]:
    """(tool, key) → executions recorded in ``path``."""
    counts: dict[tuple[str, str], int] = {}
    if not os.path.exists(path):
        return counts
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            tool, _, key = line.strip().partition(" ")
            counts[tool, key] = counts.get((tool, key), 0) + 1
    return counts
