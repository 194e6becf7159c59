"""A fault-injecting upstream on a real loopback socket, and a gateway in front of it.

The server answers every request with a scripted :class:`Reply`: chosen body chunks (each
written and flushed on its own, with a pause between, so a split lands in a separate read
on the gateway's side), and a chosen ending: complete, reset mid-body, never answering, stalling after its head (and chunks), or closing without an
answer after reading the request.
The gateway is built in-process with its real upstream transport (no mock), so every byte
crosses a socket; clients reach it through ``httpx.ASGITransport``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import httpx

from interlock.gateway.app import Gateway, build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store

Ending = Literal["complete", "reset", "hang", "drop", "stall"]


@dataclass
class Reply:
    """One scripted answer."""

    chunks: list[bytes]
    status: int = 200
    headers: list[tuple[str, str]] = field(
        default_factory=lambda: [("content-type", "text/event-stream")]
    )
    ending: Ending = "complete"
    pause: float = 0.002
    """Seconds between chunks (so that each arrives in its own read)."""


@dataclass
class Upstream:
    """The server: answers with ``script(path, body)``; counts what it saw."""

    script: Callable[[str, bytes], Reply]
    url: str = ""
    requests: list[tuple[str, bytes]] = field(default_factory=list[tuple[str, bytes]])
    connections: int = 0
    open_connections: int = 0
    finished: int = 0
    """Answers written to their end (a client that went away stops the count)."""
    writers: set[asyncio.StreamWriter] = field(default_factory=set[asyncio.StreamWriter])

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open_connections += 1
        self.writers.add(writer)
        try:
            while await self._exchange(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.open_connections -= 1
            self.writers.discard(writer)
            writer.close()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        lines = head.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1]
        length = next(
            (
                int(line.split(":", 1)[1])
                for line in lines
                if line.lower().startswith("content-length")
            ),
            0,
        )
        body = await reader.readexactly(length)
        self.requests.append((path, body))
        reply = self.script(path, body)
        if reply.ending == "hang":
            await reader.read()  # until the gateway closes the connection
            return False
        if reply.ending == "drop":  # read the request, close without a word
            return False
        status = f"HTTP/1.1 {reply.status} X\r\n"
        fields = "".join(f"{name}: {value}\r\n" for name, value in reply.headers)
        writer.write(f"{status}{fields}transfer-encoding: chunked\r\n\r\n".encode("latin-1"))
        for chunk in reply.chunks:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
            await asyncio.sleep(reply.pause)
        if reply.ending == "reset":
            transport = writer.transport
            transport.abort()
            return False
        if reply.ending == "stall":  # the head and chunks, then nothing until closed
            await reader.read()
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        self.finished += 1
        return True


@contextlib.asynccontextmanager
async def upstream(script: Callable[[str, bytes], Reply]) -> AsyncIterator[Upstream]:
    """The scripted server on a free loopback port for the duration of the block."""
    server_state = Upstream(script)
    server = await asyncio.start_server(server_state.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server_state.url = f"http://127.0.0.1:{port}"
    try:
        yield server_state
    finally:
        server.close()
        for writer in list(server_state.writers):
            writer.transport.abort()
        await asyncio.sleep(0)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 1)


def gateway_config(url: str, upstream_options: str = "", server_options: str = "") -> str:
    """One upstream per dialect at ``url``; models ``to-chat``, ``to-responses``, ``to-gemini``."""
    if "max_retries" not in upstream_options:
        upstream_options += "\nmax_retries = 0"
    upstreams = "".join(
        f"""
[[upstreams]]
name = "{name}"
protocol = "{protocol}"
base_url = "{url}{suffix}"
{upstream_options}

[[models]]
name = "to-{name}"
upstream = "{name}"
model = "up-{name}"
"""
        for name, protocol, suffix in (
            ("chat", "openai-chat", "/v1"),
            ("responses", "openai-responses", "/v1"),
            ("gemini", "gemini", ""),
        )
    )
    return f"""
[server]
access_log = true
{server_options}

[store]
url = "memory://"
{upstreams}"""


def loopback_gateway(url: str, upstream_options: str = "", server_options: str = "") -> Gateway:
    """A gateway whose upstreams are all at ``url``, through their real transports."""
    config = parse_config(gateway_config(url, upstream_options, server_options), {})
    return build_gateway(config, store=open_store("memory://"))


def client(built: Gateway) -> httpx.AsyncClient:
    """An HTTP client for the in-process gateway."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(built)), base_url="http://localhost"
    )


@contextlib.contextmanager
def access_log() -> Iterator[list[dict[str, object]]]:
    """The access lines written inside the block, parsed."""
    lines: list[dict[str, object]] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.loads(record.getMessage()))

    handler = Capture()
    logger = logging.getLogger("interlock.access")
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


async def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Poll ``condition`` until true (failing after ``seconds``: a bound, not a timing claim)."""
    for _ in range(int(seconds / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never became true")
