"""Upstream transport faults through the gateway, on a real loopback socket: a request is
never sent twice, oversized answers are refused in the client's shape, either transport."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from starlette.types import Message, Scope

from interlock.gateway import client_watch
from interlock.gateway.agui import SERVER_OPTIONS
from interlock.gateway.app import create_app
from tests.gateway.agui.harness import Server
from tests.gateway.loopback_upstream import (
    Reply,
    access_log,
    client,
    gateway_config,
    loopback_gateway,
    until,
    upstream,
)
from tests.gateway.serving import serve

CHAT = {"model": "to-chat", "messages": [{"role": "user", "content": "hi"}]}
OK_CHAT = json.dumps(
    {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "up-chat",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
    }
).encode()
JSON = [("content-type", "application/json")]


@pytest.mark.parametrize("transport", ["interlock", "httpx"])
async def test_a_request_the_upstream_read_is_never_sent_twice(transport: str) -> None:
    replies = iter([Reply([OK_CHAT], headers=JSON), Reply([], ending="drop")])
    async with upstream(lambda _path, _body: next(replies)) as server:
        built = loopback_gateway(server.url, f'transport = "{transport}"\nmax_retries = 2')
        async with client(built) as http:
            assert (await http.post("/v1/chat/completions", json=CHAT)).status_code == 200
            # the second goes on the kept-alive connection; the upstream reads it, then closes
            answer = await http.post("/v1/chat/completions", json=CHAT)
        await built.close()
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "upstream_protocol"
    assert len(server.requests) == 2  # one each: the dropped one was not resent


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
async def test_an_answer_head_over_the_limit_is_a_502_in_the_clients_shape(path: str) -> None:
    headers = [*JSON, ("x-padding", "p" * 3000)]
    async with upstream(lambda _path, _body: Reply([OK_CHAT], headers=headers)) as server:
        built = loopback_gateway(server.url, "max_header_bytes = 2048")
        async with client(built) as http:
            answer = await http.post(path, json={**CHAT, "input": "hi"})
        await built.close()
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "upstream_too_large"


async def test_the_httpx_transport_is_selectable_and_streams() -> None:
    body = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    async with upstream(lambda _path, _body: Reply([body[:20], body[20:]])) as server:
        built = loopback_gateway(server.url, 'transport = "httpx"')
        async with client(built) as http:
            answer = await http.post("/v1/chat/completions", json={**CHAT, "stream": True})
        await built.close()
    assert answer.content == body


def _scope(path: str) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"localhost"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8787),
    }


@pytest.mark.parametrize(
    ("path", "payload"),
    [
        ("/v1/chat/completions", CHAT),
        ("/v1/responses", {"model": "to-chat", "input": "hi"}),
        ("/v1/chat/completions", {**CHAT, "stream": True}),
        ("/v1/responses", {"model": "to-chat", "input": "hi", "stream": True}),
    ],
    ids=["passthrough", "translated", "passthrough-stream", "translated-stream"],
)
async def test_a_client_gone_before_the_answer_cancels_the_upstream_call(
    path: str, payload: dict[str, object]
) -> None:
    async with upstream(lambda _path, _body: Reply([], ending="hang")) as server:
        built = loopback_gateway(server.url)
        app = create_app(built)
        gone = asyncio.Event()
        sent: list[Message] = []
        read: list[bool] = []

        async def receive() -> Message:
            if not read:
                read.append(True)
                return {"type": "http.request", "body": json.dumps(payload).encode()}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            sent.append(message)

        with access_log() as access:
            call = asyncio.ensure_future(app(_scope(path), receive, send))
            await until(lambda: bool(server.requests))  # the upstream is "thinking"
            assert server.open_connections == 1
            gone.set()
            await asyncio.wait_for(call, 5)
            await until(lambda: not server.open_connections)  # closed by the gateway
        await built.close()
    assert sent == []
    assert access[-1]["status"] == 499 and access[-1]["error"] == "client_disconnected"
    assert any(status == "499" for (_, _, status) in built.metrics.requests)


async def test_a_client_hanging_up_on_interlock_serve_cancels_the_upstream_call(
    tmp_path: Path,
) -> None:
    """The same through uvicorn and real sockets at both ends (``interlock serve``)."""
    async with upstream(lambda _path, _body: Reply([], ending="hang")) as server:
        config = tmp_path / "interlock.toml"
        config.write_text(gateway_config(server.url))
        with serve(config, tmp_path) as url:
            port = int(url.rsplit(":", 1)[1])
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            body = json.dumps(CHAT).encode()
            head = f"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
            writer.write(head.encode() + body)
            await writer.drain()
            await until(lambda: bool(server.requests))
            assert server.open_connections == 1
            writer.close()  # the client hangs up while the model "thinks"
            await until(lambda: not server.open_connections)
            assert not await reader.read()
        log = _serve_log(tmp_path)
    assert '"status":499' in log and '"error":"client_disconnected"' in log


def _serve_log(directory: Path) -> str:
    return next(directory.glob("serve-*.log")).read_text()


async def test_the_gateway_protocol_notices_a_client_gone_without_a_watching_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Served by the gateway's protocol, a non-streamed request is cancelled from the
    connection's ``connection_lost``: no watching task or timer is needed (the delay
    before one would start is an hour here)."""
    monkeypatch.setattr(client_watch, "WATCH_AFTER", 3600.0)
    async with upstream(lambda _path, _body: Reply([], ending="hang")) as server:
        built = loopback_gateway(server.url)
        running = Server(create_app(built), options=dict(SERVER_OPTIONS)).start()
        try:
            with access_log() as access:
                reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
                body = json.dumps(CHAT).encode()
                head = (
                    "POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\n"
                    f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
                )
                writer.write(head.encode() + body)
                await writer.drain()
                await until(lambda: bool(server.requests))
                writer.close()  # the client hangs up while the model "thinks"
                await until(lambda: not server.open_connections)  # the call was cancelled
                assert not await reader.read()
                await until(lambda: bool(access))
        finally:
            running.stop()
        await built.close()
    assert access[-1]["status"] == 499 and access[-1]["error"] == "client_disconnected"
