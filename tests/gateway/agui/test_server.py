"""The lean uvicorn WebSocket protocol: batched text frames, the ASGI contract, lean parts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.types import Receive, Scope, Send
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode

from interlock.gateway.agui import SEND_BATCH
from interlock.gateway.agui._server import _Gate, _Inbox, text_frames
from tests.gateway.agui.harness import Server

TEXTS = ["", "a", "x" * 125, "y" * 126, "z" * 65535, "w" * 65536, "é✓ unicode 🎉"]


@pytest.mark.parametrize("text", TEXTS, ids=lambda text: f"{len(text.encode())}-bytes")
def test_text_frames_are_the_frames_websockets_would_write(text: str) -> None:
    expected = Frame(Opcode.TEXT, text.encode()).serialize(mask=False, extensions=[])
    assert text_frames([text]) == expected


def test_text_frames_go_back_to_back() -> None:
    assert text_frames(["a", "bc"]) == b"\x81\x01a\x81\x02bc"


class Probe:
    """A raw ASGI WebSocket app: reports its scope, sends batches, records what it saw."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        batched = SEND_BATCH in scope.get("extensions", {})
        await send({"type": "websocket.send", "text": "batched" if batched else "plain"})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                self.events.append("disconnect")
                await self._send_after_disconnect(send)
                return
            count = int(message["text"])
            await send({"type": SEND_BATCH, "texts": [*TEXTS, *map(str, range(count))]})

    async def _send_after_disconnect(self, send: Send) -> None:
        try:
            await send({"type": SEND_BATCH, "texts": ["too late"]})
        except OSError:
            self.events.append("send refused")


def probe_server(probe: Probe, **options: Any) -> Iterator[Server]:
    server = Server(Starlette(routes=[WebSocketRoute("/ws", probe)]), **options).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def server(probe: Probe) -> Iterator[Server]:
    yield from probe_server(probe)


async def test_a_batch_arrives_as_one_message_per_text_in_order(server: Server) -> None:
    async with connect(f"{server.ws_url}/ws") as connection:
        assert await connection.recv() == "batched"
        await connection.send("300")
        received = [await connection.recv() for _ in range(len(TEXTS) + 300)]
    assert received == [*TEXTS, *map(str, range(300))]


async def test_batches_pass_through_per_message_deflate() -> None:
    probe = Probe()
    lean = {"ws": "interlock.gateway.agui:LeanWebSocketProtocol"}  # deflate stays on
    server = Server(Starlette(routes=[WebSocketRoute("/ws", probe)]), stock=True, options=lean)
    server.start()
    try:
        async with connect(f"{server.ws_url}/ws", compression="deflate") as connection:
            assert connection.protocol.extensions  # negotiated
            assert await connection.recv() == "batched"
            await connection.send("3")
            received = [await connection.recv() for _ in range(len(TEXTS) + 3)]
    finally:
        server.stop()
    assert received == [*TEXTS, "0", "1", "2"]


async def test_stock_uvicorn_offers_no_batches(probe: Probe) -> None:
    for server in probe_server(probe, stock=True):
        async with connect(f"{server.ws_url}/ws") as connection:
            assert await connection.recv() == "plain"


async def test_the_app_hears_the_client_leave_and_cannot_send_after(
    server: Server, probe: Probe
) -> None:
    async with connect(f"{server.ws_url}/ws") as connection:
        assert await connection.recv() == "batched"
    for _ in range(200):
        if len(probe.events) == 2:
            break
        await asyncio.sleep(0.01)
    assert probe.events == ["disconnect", "send refused"]


async def test_the_size_limit_still_closes_with_1009() -> None:
    probe = Probe()
    server = Server(Starlette(routes=[WebSocketRoute("/ws", probe)]), options={"ws_max_size": 1000})
    server.start()
    try:
        async with connect(f"{server.ws_url}/ws") as connection:
            assert await connection.recv() == "batched"
            await connection.send("1" * 2000)
            with pytest.raises(ConnectionClosed) as closed:
                await connection.recv()
    finally:
        server.stop()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_the_inbox_hands_items_over_in_order() -> None:
    inbox = _Inbox()
    assert inbox.empty()
    getting = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    inbox.put_nowait(1)
    inbox.put_nowait(2)
    assert not inbox.empty()
    assert await getting == 1
    assert await inbox.get() == 2
    assert inbox.empty()


async def test_the_gate_holds_writers_while_closed_and_survives_a_cancelled_one() -> None:
    gate = _Gate()
    assert await gate.wait()
    gate.clear()
    first = asyncio.create_task(gate.wait())
    second = asyncio.create_task(gate.wait())
    await asyncio.sleep(0)
    assert not first.done() and not second.done()
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    gate.set()
    assert await second
    assert gate.is_set()
