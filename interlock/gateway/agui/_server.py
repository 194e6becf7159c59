"""Serving the AG-UI WebSocket lean: a uvicorn WebSocket protocol for many sockets.

:class:`LeanWebSocketProtocol` is uvicorn's own ``websockets-sansio`` protocol (the one
``ws="auto"`` picks) with two changes, both measured by ``bench/agui_bench.py``:

- **Idle memory.** Every connection of the stock protocol holds an ``asyncio.Queue`` (four
  ``deque``\\ s, ~600 bytes each even when empty) and an ``asyncio.Event`` (one more) for
  traffic that is one message at a time; here they are one-slot equivalents
  (:class:`_Inbox`, :class:`_Gate`), and the handshake response is dropped once sent.
  With :data:`SERVER_OPTIONS` (no per-message deflate: ~34 KiB of zlib state per socket,
  for frames too small to compress) an idle socket costs under 20 KB instead of ~60 KiB.
- **Batched sends.** The scope advertises the ASGI extension :data:`SEND_BATCH`; an app
  may then send ``{"type": SEND_BATCH, "texts": [...]}`` and every text goes out as its
  own WebSocket text frame, all in one transport write — one system call per batch
  instead of one per AG-UI event. Apps check ``scope["extensions"]`` and fall back to
  ``websocket.send`` elsewhere.

- **Dead readers.** A peer that misses the keep-alive pong is aborted, not closed: a close
  waits for the write buffer to drain, which a client that stopped reading never allows,
  so the socket (and the app's task) would otherwise live on.

Everything else (handshake, ping/pong keep-alive, close, size limit) is uvicorn's.

:class:`StallLimitedHttpProtocol` is uvicorn's ``httptools`` HTTP protocol whose writes
give up on a client that stopped reading: when an answer's write has waited
:data:`WRITE_STALL_SECONDS` for the client's socket to drain, the connection is aborted
(not closed: a close would wait for the same drain). The app then hears
``http.disconnect``, and an SSE run ends as if the client had gone. Without it a client
that stops reading an SSE stream holds its connection, its request and its run forever.
"""

from __future__ import annotations

import asyncio
import struct
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, cast

from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

SEND_BATCH = "interlock.websocket.send_batch"
"""ASGI extension (and message type): several text messages in one write."""

WRITE_STALL_SECONDS = 60.0
"""How long an HTTP answer's write may wait for a client that reads nothing before the
connection is aborted (:class:`StallLimitedHttpProtocol`)."""

SERVER_OPTIONS: Mapping[str, Any] = {
    "http": "interlock.gateway.http_protocol:GatewayHttpProtocol",
    "ws": "interlock.gateway.agui:LeanWebSocketProtocol",
    "ws_per_message_deflate": False,
    "timeout_keep_alive": 75,
}
"""``uvicorn.run(app, **SERVER_OPTIONS)``: how the gateway serves its WebSockets and its
idle HTTP connections. An idle keep-alive connection stays open 75 s (uvicorn's default is
5 s), longer than clients keep theirs (Node's ``fetch`` 4 s, httpx 5 s): the client closes
first, so it never reuses a connection the server is closing."""

_FIN_TEXT = 0x81
_SMALL = [bytes((_FIN_TEXT, size)) for size in range(126)]
_MEDIUM = struct.Struct("!BBH")
_LARGE = struct.Struct("!BBQ")


def text_frames(texts: Sequence[str]) -> bytes:
    """``texts`` as unmasked, unfragmented server text frames (RFC 6455 §5.2), back to back."""
    chunks: list[bytes] = []
    for text in texts:
        payload = text.encode()
        size = len(payload)
        if size < 126:
            chunks.append(_SMALL[size])
        elif size < 1 << 16:
            chunks.append(_MEDIUM.pack(_FIN_TEXT, 126, size))
        else:
            chunks.append(_LARGE.pack(_FIN_TEXT, 127, size))
        chunks.append(payload)
    return b"".join(chunks)


class _Inbox:
    """What uvicorn uses of ``asyncio.Queue`` (``put_nowait``, ``get``, ``empty``), lean.

    One consumer (the app's ``receive``); items are few (uvicorn stops reading the socket
    while a message waits), so the ``deque`` is created only when one does.
    """

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[Any] | None = None
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Any) -> None:
        if self._items is None:
            self._items = deque()
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def empty(self) -> bool:
        return not self._items

    async def get(self) -> Any:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if not self._items:
            self._items = None
        return item


class _Gate:
    """What uvicorn uses of ``asyncio.Event`` (``set``, ``clear``, ``wait``), lean."""

    __slots__ = ("_open", "_waiter")

    def __init__(self) -> None:
        self._open = True
        self._waiter: asyncio.Future[None] | None = None

    def set(self) -> None:
        self._open = True
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def clear(self) -> None:
        self._open = False

    def is_set(self) -> bool:
        return self._open

    async def wait(self) -> bool:
        while not self._open:
            if self._waiter is None:
                self._waiter = asyncio.get_running_loop().create_future()
            # shield: one cancelled waiter must not cancel the future others share.
            await asyncio.shield(self._waiter)
        return True


class LeanWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's ``websockets-sansio`` protocol, lean when idle and batching sends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Duck-typed stand-ins: uvicorn calls only the methods the two classes have.
        self.queue = cast(Any, _Inbox())
        self.writable = cast(Any, _Gate())

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        if self.response.status_code == 101:
            self.scope.setdefault("extensions", {})[SEND_BATCH] = {}

    async def send(self, message: Any) -> None:
        kind = cast(Mapping[str, Any], message)["type"]
        if kind == SEND_BATCH:
            await self._send_batch(message["texts"])
            return
        await super().send(message)
        if kind == "websocket.accept" and self.handshake_complete:
            del self.response  # only the handshake reads it; keeping it costs ~1 KiB a socket

    def keepalive_timeout(self) -> None:
        super().keepalive_timeout()
        if self.close_sent and not self.disconnected:
            self.transport.abort()  # the app hears websocket.disconnect from connection_lost

    async def _send_batch(self, texts: Sequence[str]) -> None:
        await self.writable.wait()
        if self.disconnected or self.conn.state is not State.OPEN:
            raise ClientDisconnected()
        if self.close_sent or self.initial_response is not None:
            raise RuntimeError(f"{SEND_BATCH!r} after the socket was closed or rejected")
        conn: ServerProtocol = self.conn
        if conn.extensions:  # e.g. per-message deflate: every frame goes through them
            for text in texts:
                conn.send_frame(Frame(Opcode.TEXT, text.encode()))
            self.transport.write(b"".join(conn.data_to_send()))
        else:
            self.transport.write(text_frames(texts))


class _StallLimitedFlow(FlowControl):
    """uvicorn's write flow control, aborting the transport when a drain outlasts the limit."""

    def __init__(self, transport: asyncio.Transport, stall_seconds: float) -> None:
        super().__init__(transport)
        self.stall_seconds = stall_seconds

    async def drain(self) -> None:
        try:
            async with asyncio.timeout(self.stall_seconds):
                await super().drain()
        except TimeoutError:
            self._transport.abort()  # connection_lost follows: the app hears http.disconnect
            await asyncio.sleep(0)


class StallLimitedHttpProtocol(HttpToolsProtocol):
    """uvicorn's ``httptools`` protocol with a write stall limit (see the module docstring).

    ``stall_seconds`` is a class attribute: a subclass with another value is how a server
    (or a test) sets its own limit, since uvicorn builds protocols from a class.
    """

    stall_seconds: float = WRITE_STALL_SECONDS

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream = cast(asyncio.Transport, transport)  # uvicorn serves TCP/Unix streams only
        super().connection_made(stream)
        self.flow = _StallLimitedFlow(stream, self.stall_seconds)
