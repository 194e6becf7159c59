"""CPU-heavy work on large bodies runs on a worker thread, off the event loop.

Parsing, decoding, checking and encoding a request are pure CPU: about 0.05 s per MB of
JSON. On the event loop, a 9 MB request would hold every other request of the process
(``/healthz`` included) for half a second. :func:`off_loop` runs such work on the
default executor's threads once the body reaches ``threshold`` bytes (the gateway's
``server.offload_bytes``); smaller work runs in place, where a thread hop (tens of
microseconds) would cost more than it saves. The GIL still serialises Python code, but
the interpreter hands it to the event loop's thread every switch interval (5 ms), so the
loop keeps answering while the worker translates.

Work passed here must be safe on another thread: pure functions, or state guarded by its
own lock (the history cache's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from interlock.gateway.model_field import COMPACT
from interlock.transcript import JsonValue

OFFLOAD_BYTES = 256 * 1024
"""Default threshold: bodies of at least this many bytes are translated on a thread."""

Result = TypeVar("Result")


async def off_loop(size: int, threshold: int, work: Callable[[], Result]) -> Result:
    """``work()`` on a worker thread when ``size`` reaches ``threshold`` (``0``: never), else here."""
    if threshold <= 0 or size < threshold:
        return work()
    return await asyncio.to_thread(work)


def encode_in_pieces(value: JsonValue, depth: int = 3) -> str:
    """``COMPACT.encode(value)``, the same text, written container by container.

    The C encoder holds the GIL for a whole call: 0.1 s for a 9 MB payload, all of it
    stolen from the event loop. Encoding the top ``depth`` levels of objects and arrays
    item by item lets the interpreter switch threads between items.
    """
    if depth > 0 and isinstance(value, dict):
        members = (
            f"{COMPACT.encode(key)}:{encode_in_pieces(item, depth - 1)}"
            for key, item in value.items()
        )
        return "{" + ",".join(members) + "}"
    if depth > 0 and isinstance(value, list):
        return "[" + ",".join(encode_in_pieces(item, depth - 1) for item in value) + "]"
    return COMPACT.encode(value)
