"""A slow SSE client (one that stops reading) is dropped after the write stall limit.

A raw socket with a tiny receive buffer posts a run whose answer is megabytes long and
then reads nothing. The gateway's HTTP protocol (``StallLimitedHttpProtocol``, a short
limit here) aborts the connection once a write has waited that long, the run ends, and
the server holds no connection for it any more.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator

import pytest

from interlock.gateway.agui import SERVER_OPTIONS, StallLimitedHttpProtocol
from tests.gateway.agui.harness import Server, binding_for, make_gateway, new_id, run_input, serve
from tests.gateway.agui.harness import user as user_message

BIG = 3 * 1024 * 1024


class QuickStall(StallLimitedHttpProtocol):
    stall_seconds = 0.5


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    gateway = make_gateway(str(tmp_path_factory.mktemp("slow-sse")), max_body=2 * BIG)
    yield from serve(binding_for(gateway), options={**SERVER_OPTIONS, "http": QuickStall})


def _open_connections(server: Server) -> int:
    assert server.server is not None
    return len(server.server.server_state.connections)


def _wait_until(condition: Callable[[], bool], seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_client_that_stops_reading_is_dropped(server: Server) -> None:
    body = json.dumps(run_input(new_id("t"), [user_message("x" * BIG)])).encode()
    head = (
        f"POST /agui/assistant HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode()
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.connect(("127.0.0.1", server.port))
    try:
        client.sendall(head + body)
        assert _wait_until(lambda: _open_connections(server) == 1, 10)
        # The client reads nothing; the server must let go of it on its own.
        assert _wait_until(lambda: _open_connections(server) == 0), "the stalled client was kept"
        received = _drain(client)
    finally:
        client.close()
    assert received.startswith(b"HTTP/1.1 200")
    assert b'"RUN_FINISHED"' not in received and len(received) < BIG  # cut off, not finished


def test_a_client_that_reads_gets_the_whole_answer(server: Server) -> None:
    body = json.dumps(run_input(new_id("t"), [user_message("y" * (BIG // 8))])).encode()
    head = (
        f"POST /agui/assistant HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as client:
        client.sendall(head + body)
        received = _drain(client)
    assert b'"RUN_FINISHED"' in received


def _drain(client: socket.socket) -> bytes:
    client.settimeout(30)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = client.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)
