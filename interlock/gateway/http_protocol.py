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

Invariant: the app receives the same bytes, in the same ``http.request`` messages, as from
uvicorn's own protocol; uvicorn (pinned below 0.55 in ``pyproject.toml``) only ever does
``+=``, ``len()`` and ``bytes()`` on the cycle's pending body, and sets it back to an
empty ``bytearray`` once handed on, which the next chunk replaces again.
"""

from __future__ import annotations

from typing import Any, cast

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
