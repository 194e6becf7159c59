"""Tools for the AG-UI binding tests: each counts its executions per argument."""

from __future__ import annotations

import asyncio
from collections import Counter

from interlock.core_loop import NeedsInput, ToolContext

EXECUTIONS: Counter[tuple[str, str]] = Counter()
"""(tool, key argument) → completed executions. Tests use unique arguments."""
STARTED: Counter[str] = Counter()


def get_weather(city: str = "Paris") -> str:
    """Today's weather for ``city``."""
    EXECUTIONS["get_weather", city] += 1
    return f"sunny in {city}"


def delete_file(path: str = "default") -> str:
    """Delete ``path`` (needs approval)."""
    EXECUTIONS["delete_file", path] += 1
    return f"deleted {path}"


def check_stock(item: str = "default") -> str:
    """How many of ``item`` are in stock (idempotent)."""
    EXECUTIONS["check_stock", item] += 1
    return f"7 of {item} in stock"


async def paced_stock(item: str = "default", seconds: float = 60.0) -> str:
    """How many of ``item`` are in stock (idempotent: declared ``on_interrupt = "retry"``).
    The first execution per item takes ``seconds`` (long enough to leave or cancel while
    it runs: a cancelled run stops it); any later one answers at once."""
    STARTED[item] += 1
    if STARTED[item] == 1:
        await asyncio.sleep(seconds)
    EXECUTIONS["paced_stock", item] += 1
    return f"3 of {item} in stock"


def shred_file(path: str = "default") -> str:
    """Shred ``path`` (needs approval); always fails after it started."""
    EXECUTIONS["shred_file", path] += 1
    raise OSError(f"cannot shred {path}")


def book_room(context: ToolContext, hotel: str = "default") -> str:
    """Book ``hotel`` (needs approval); asks which day before it books."""
    if not context.answers:
        raise NeedsInput("Which day?", schema={"type": "string"})
    EXECUTIONS["book_room", hotel] += 1
    return f"booked {hotel} on {context.answers[0]}"


def send_email(to: str = "default") -> str:
    """Send an email to ``to`` (needs approval)."""
    EXECUTIONS["send_email", to] += 1
    return f"sent to {to}"


def cut_emoji(tag: str = "default") -> str:
    """Returns half of an emoji (a lone UTF-16 surrogate)."""
    EXECUTIONS["cut_emoji", tag] += 1
    return f"{tag} \ud83d"


async def slow_task(tag: str = "default") -> str:
    """Takes a long time; cancelled runs never finish it."""
    STARTED[tag] += 1
    await asyncio.sleep(30)
    EXECUTIONS["slow_task", tag] += 1
    return "finished"


async def paced_task(tag: str = "default", seconds: float = 1.0) -> str:
    """Takes ``seconds``: long enough to leave and come back while it runs."""
    STARTED[tag] += 1
    await asyncio.sleep(seconds)
    EXECUTIONS["paced_task", tag] += 1
    return f"paced {tag}"
