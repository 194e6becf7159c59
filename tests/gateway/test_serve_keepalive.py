"""An idle client connection outlives the clients' own idle timeouts.

Clients close idle keep-alive connections after a few seconds (Node's ``fetch``: 4 s,
httpx: 5 s). A server that closes first races them: the client reuses a connection the
server is closing, and its request fails with "other side closed" or ``EPIPE`` (seen with
``@ag-ui/client`` sending multi-megabyte turns on a loaded machine). ``interlock serve``
keeps an idle connection for 75 s, so the client always closes first.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"


def _answer(connection: socket.socket) -> bytes:
    """One whole answer to ``GET /healthz`` (head and its Content-Length body)."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        if not chunk:
            return received
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def test_an_idle_connection_is_still_served_after_the_clients_timeouts(tmp_path: Path) -> None:
    with emulators_on_loopback() as (emulator_url, _):
        config = tmp_path / "interlock.toml"
        config.write_text(gateway_config(emulator_url, f"sqlite:///{tmp_path / 'state.db'}"))
        with serve(config, tmp_path) as url:
            address = urlsplit(url)
            assert address.hostname is not None and address.port is not None
            with socket.create_connection((address.hostname, address.port), timeout=30) as raw:
                raw.sendall(REQUEST)
                assert _answer(raw).startswith(b"HTTP/1.1 200")
                time.sleep(6.5)  # past uvicorn's default idle limit (5 s) and the clients'
                raw.sendall(REQUEST)
                assert _answer(raw).startswith(b"HTTP/1.1 200")
