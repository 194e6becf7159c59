"""Tools for multi-process tests: each execution appends its key argument to a file.

The files live in the directory named by ``INTERLOCK_TEST_COUNTS``, so counts hold across
gateway processes and survive a ``kill -9``. ``started`` lines are written when a tool
begins, ``finished`` lines when it returns.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

from interlock.core_loop import NeedsInput, ToolContext


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
    _boundary("tool_running")
    _log("get_weather", city, "finished")
    _boundary("tool_returned")
    return f"sunny in {city}"


def delete_file(path: str = "default") -> str:
    """Delete ``path`` (needs approval)."""
    _log("delete_file", path, "started")
    _boundary("tool_running")
    _log("delete_file", path, "finished")
    _boundary("tool_returned")
    return f"deleted {path}"


def check_stock(item: str = "default") -> str:
    """How many of ``item`` are in stock (idempotent: declared ``on_interrupt = "retry"``)."""
    _log("check_stock", item, "started")
    _boundary("tool_running")
    _log("check_stock", item, "finished")
    _boundary("tool_returned")
    return f"7 of {item} in stock"


async def paced_stock(item: str = "default", seconds: float = 60.0) -> str:
    """How many of ``item`` are in stock (idempotent: declared ``on_interrupt = "retry"``);
    the first execution per item takes ``seconds``, any later one answers at once."""
    _log("paced_stock", item, "started")
    if executions(Path(os.environ["INTERLOCK_TEST_COUNTS"]), "paced_stock", item, "started") == 1:
        await asyncio.sleep(seconds)
    _log("paced_stock", item, "finished")
    return f"3 of {item} in stock"


def shred_file(path: str = "default") -> str:
    """Shred ``path`` (needs approval); always fails after it started."""
    _log("shred_file", path, "started")
    raise OSError(f"cannot shred {path}")


def book_room(context: ToolContext, hotel: str = "default") -> str:
    """Book ``hotel`` (needs approval); asks which day before it books."""
    if not context.answers:
        raise NeedsInput("Which day?", schema={"type": "string"})
    _log("book_room", hotel, "finished")
    return f"booked {hotel} on {context.answers[0]}"


def send_email(to: str = "default") -> str:
    """Send an email to ``to`` (needs approval)."""
    _log("send_email", to, "started")
    _log("send_email", to, "finished")
    return f"sent to {to}"


def cut_emoji(tag: str = "default") -> str:
    """Returns half of an emoji (a lone UTF-16 surrogate), as a text cut mid-character."""
    _log("cut_emoji", tag, "started")
    _log("cut_emoji", tag, "finished")
    return f"{tag} \ud83d"


def slow_task(tag: str = "default") -> str:
    """Runs until the file ``<counts>/release-<tag>`` exists (a sync tool, in a thread)."""
    _log("slow_task", tag, "started")
    release = Path(os.environ["INTERLOCK_TEST_COUNTS"]) / f"release-{tag}"
    deadline = time.monotonic() + 30
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    _log("slow_task", tag, "finished")
    return f"slow {tag} done"


async def paced_task(tag: str = "default", seconds: float = 1.0) -> str:
    """Takes ``seconds`` (async: a cancelled run stops it, and it never finishes)."""
    _log("paced_task", tag, "started")
    await asyncio.sleep(seconds)
    _log("paced_task", tag, "finished")
    return f"paced {tag}"


async def until_count(directory: Path, tool: str, key: str, event: str, at_least: int = 1) -> None:
    """Wait (up to 60 s) until ``tool`` reached ``event`` for ``key`` ``at_least`` times."""
    deadline = time.monotonic() + 60
    while True:
        if executions(directory, tool, key, event) >= at_least:
            return
        assert time.monotonic() < deadline, f"{tool} {key} never reached {event}"
        await asyncio.sleep(0.02)


# Fault injection -------------------------------------------------------------------------
#
# ``INTERLOCK_TEST_KILL_AT=<boundary>`` makes the gateway process that imports these tools
# SIGKILL itself the first time it reaches that step boundary (test-only: the gateway has
# no such hook; the wrappers below are installed when this module is imported).

BOUNDARIES = (
    "journal_started",  # the journal says "started"; the tool has not run
    "tool_running",  # inside the tool, after it began
    "tool_returned",  # the tool returned; nothing recorded yet
    "journal_finished",  # the result is journaled; the thread is not saved
    "before_save",  # about to save the thread after the result was journaled
    "after_save",  # the thread with the result is saved; the run has not ended
)


def _boundary(name: str) -> None:
    if os.environ.get("INTERLOCK_TEST_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _install_kill_hooks() -> None:
    from interlock.gateway.stores import KeyValueLedgerStore, Store

    begin = KeyValueLedgerStore.begin_execution
    complete = KeyValueLedgerStore.complete_execution
    save = Store.save_thread
    journaled: list[bool] = []

    async def begin_execution(self: KeyValueLedgerStore, thread_id: str, occurrence: str) -> bool:
        began = await begin(self, thread_id, occurrence)
        if began:
            _boundary("journal_started")
        return began

    async def complete_execution(
        self: KeyValueLedgerStore, thread_id: str, occurrence: str, result: Any
    ) -> None:
        await complete(self, thread_id, occurrence, result)
        journaled.append(True)
        _boundary("journal_finished")

    async def save_thread(self: Store, tenant: str, thread_id: str, record: Any) -> Any:
        if journaled:
            _boundary("before_save")
        saved = await save(self, tenant, thread_id, record)
        if journaled:
            _boundary("after_save")
        return saved

    KeyValueLedgerStore.begin_execution = begin_execution  # type: ignore[method-assign]  # test-only hook
    KeyValueLedgerStore.complete_execution = complete_execution  # type: ignore[method-assign]  # test-only hook
    Store.save_thread = save_thread  # type: ignore[method-assign]  # test-only hook


if os.environ.get("INTERLOCK_TEST_KILL_AT"):
    _install_kill_hooks()
