"""The gateway's HTTP/1.1 server protocol: request bodies handed on as they arrived.

uvicorn's ``httptools`` protocol gathers a request body in a ``bytearray`` (``+=`` copies
every chunk in) and hands it to the app as ``bytes(bytearray)`` (a second copy of all of
it). A 200 KB tool result was copied twice more that way before the gateway read a byte
of it. :class:`GatewayHttpProtocol` keeps the chunks llhttp gave instead
(:class:`BodyChunks`), and a body that arrived in one chunk reaches the app as that very
``bytes`` object; several chunks are joined once.

Everything else is :class:`~interlock.gateway.agui.StallLimitedHttpProtocol` (uvicorn's
protocol with the write stall limit): flow control (reading pauses past uvicorn's high
water mark of buffered body, resumes when the app asks for more), ``Expect:
100-continue``, pipelining, disconnects.

An answer whose length is known (``content-length``, not ``HEAD``) goes out in one write
with its first body bytes: uvicorn writes the head as soon as the app starts the answer and
the body separately (two system calls, and often two wake-ups for the client), so each
request cycle writes through :class:`HeadWithBody`, which holds the head until the body's
first bytes (or a close) come.

Invariants: the client receives the same bytes as from uvicorn's own protocol, in the same
order (a held head goes out before anything else, a close included); the app receives the
same bytes, in the same ``http.request`` messages, as from uvicorn's own protocol; uvicorn (pinned below 0.55 in ``pyproject.toml``) only ever does
``+=``, ``len()`` and ``bytes()`` on the cycle's pending body, and sets it back to an
empty ``bytearray`` once handed on, which the next chunk replaces again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import RequestResponseCycle

from interlock.gateway.agui import StallLimitedHttpProtocol


class BodyChunks:
    """Request body bytes received and not yet handed to the app, as received."""

    __slots__ = ("chunks", "size")

    def __init__(self, pending: bytes | bytearray = b"") -> None:
        """Starting with ``pending`` (what uvicorn's own ``bytearray`` held, if anything)."""
        self.chunks: list[bytes] = [bytes(pending)] if pending else []
        self.size = len(pending)

    def __iadd__(self, chunk: bytes) -> BodyChunks:
        self.chunks.append(chunk)
        self.size += len(chunk)
        return self

    def __len__(self) -> int:
        return self.size

    def __bytes__(self) -> bytes:
        """The body so far: the one chunk itself (no copy), or the chunks joined once."""
        chunks = self.chunks
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class GatewayHttpProtocol(StallLimitedHttpProtocol):
    """uvicorn's ``httptools`` protocol (with the write stall limit) keeping request body
    chunks uncopied (see the module docstring)."""

    def on_body(self, body: bytes) -> None:
        cycle = cast(Any, self.cycle)  # uvicorn types the pending body as a bytearray
        if not isinstance(cycle.body, BodyChunks):
            cycle.body = BodyChunks(cycle.body)
        super().on_body(body)

    def on_headers_complete(self) -> None:
        previous = self.cycle
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not previous:  # a new request (an upgrade makes none)
            # Its task has not run yet: nothing was written through the transport.
            cycle.transport = cast(asyncio.Transport, HeadWithBody(self.transport, cycle))


class HeadWithBody:
    """The connection's transport as one request cycle writes to it: the answer's head,
    when body bytes of a known length follow, is held and written with the first of them
    (``writelines``: one ``writev`` under uvloop)."""

    __slots__ = ("_cycle", "_head_seen", "_held", "_transport")

    def __init__(self, transport: asyncio.Transport, cycle: RequestResponseCycle) -> None:
        self._transport = transport
        self._cycle = cycle
        self._head_seen = False
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.writelines((held, data))
            return
        if not self._head_seen and self._cycle.response_started:
            self._head_seen = True  # uvicorn writes the whole head at once, first
            if self._body_follows():
                self._held = data
                return
        self._transport.write(data)

    def _body_follows(self) -> bool:
        cycle = self._cycle
        return (
            cycle.chunked_encoding is False
            and cycle.expected_content_length > 0
            and cycle.scope["method"] != "HEAD"
        )

    def writelines(self, pieces: Iterable[bytes]) -> None:
        self.write(b"".join(pieces))

    def close(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
