"""Upstream requests as they go out, and which transport an upstream gets."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator

import httpx
import pytest

from interlock.gateway import http1
from interlock.gateway.config import parse_config
from interlock.gateway.dialects import dialect
from interlock.gateway.http1 import Http1Transport
from interlock.gateway.metrics import Metrics
from interlock.gateway.upstream import (
    Upstream,
    environment_proxy,
    read_answer,
    upstream_transport,
)
from tests.gateway.helpers import CONFIG, UPSTREAM_KEY, Recorder


def _upstream(name: str, handler: Recorder) -> Upstream:
    config = parse_config(CONFIG, {"UP_KEY": UPSTREAM_KEY}).upstream(name)
    return Upstream(
        config=config,
        dialect=dialect(config.protocol, config.reasoning_dialect),
        transport=httpx.MockTransport(handler),
        metrics=Metrics(),
    )


async def test_a_request_carries_host_length_key_and_no_cookies() -> None:
    recorder = Recorder(
        lambda _: httpx.Response(200, json={}, headers={"set-cookie": "session=tenant-a"})
    )
    upstream = _upstream("chat", recorder)
    for body in (b'{"a":1}', b'{"b":22}'):
        response = await upstream.send("/chat/completions", body, accept_stream=False)
        assert response.request.url == "https://chat.example/v1/chat/completions"
        await response.aclose()
    first, second = recorder.requests
    assert first.headers["host"] == "chat.example"
    assert first.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert (first.headers["content-length"], second.headers["content-length"]) == ("7", "8")
    assert second.content == b'{"b":22}'
    assert "cookie" not in second.headers  # no jar shared between tenants
    assert "accept" not in first.headers


async def test_a_streaming_request_asks_for_events_and_gemini_keys_go_in_a_header() -> None:
    recorder = Recorder(lambda _: httpx.Response(200, content=b""))
    upstream = _upstream("gemini", recorder)
    path = "/v1beta/models/up-gemini:streamGenerateContent?alt=sse"
    response = await upstream.send(path, b"{}", accept_stream=True)
    await response.aclose()
    sent = recorder.requests[0]
    assert str(sent.url) == f"https://gemini.example{path}"
    assert sent.headers["accept"] == "text/event-stream"
    assert sent.headers["x-goog-api-key"] == UPSTREAM_KEY


def test_the_environment_proxy_applies_unless_exempted(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    config = parse_config(CONFIG, {"UP_KEY": UPSTREAM_KEY}).upstream("chat")
    assert environment_proxy(httpx.URL("https://chat.example/v1")) is None
    assert isinstance(upstream_transport(config), Http1Transport)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert environment_proxy(httpx.URL("https://chat.example/v1")) == "http://proxy.internal:3128"
    assert environment_proxy(httpx.URL("http://chat.example/v1")) is None
    assert isinstance(upstream_transport(config), httpx.AsyncHTTPTransport)
    monkeypatch.setenv("NO_PROXY", "chat.example")
    assert environment_proxy(httpx.URL("https://chat.example/v1")) is None


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, *pieces: bytes) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, stream=_Pieces(b'{"a":', b"1}")),
        httpx.Response(
            200,
            headers={"content-encoding": "gzip"},
            stream=_Pieces(gzip.compress(b'{"a":1}')),
        ),
        httpx.Response(200, content=b'{"a":1}'),
    ],
    ids=["streamed", "compressed", "in-memory"],
)
async def test_an_answer_is_read_whole_and_decompressed_when_compressed(
    response: httpx.Response,
) -> None:
    assert await read_answer(response, 1 << 20) == b'{"a":1}'
    assert response.is_closed


@pytest.mark.parametrize("name", ["chat", "gemini", "responses"])
@pytest.mark.parametrize("accept_stream", [False, True])
async def test_the_prepared_head_is_the_head_the_headers_would_write(
    name: str, accept_stream: bool
) -> None:
    """``Http1Transport`` writes the template's prepared head instead of walking the
    headers: the same bytes, for every dialect's headers, streamed or not, with a query."""
    recorder = Recorder(lambda _: httpx.Response(200, content=b"{}"))
    upstream = _upstream(name, recorder)
    for path, body in (("/chat/completions", b'{"a":1}'), ("/x:y?alt=sse&k=1", b"")):
        response = await upstream.send(path, body, accept_stream=accept_stream)
        await response.aclose()
    for sent in recorder.requests:
        assert isinstance(sent.extensions.get(http1.PREPARED_HEAD), bytes)
        walked = httpx.Request(sent.method, sent.url, headers=sent.headers, content=sent.content)
        walked.extensions = {}  # the generic path: headers walked one by one
        assert await http1._serialize(sent) == await http1._serialize(walked)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("name", ["chat", "gemini", "responses"])
@pytest.mark.parametrize("accept_stream", [False, True])
async def test_the_lean_path_sends_what_the_request_path_sends(
    name: str, accept_stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through ``Http1Transport`` a request goes out without an ``httpx.Request`` of its
    own: the same bytes, origin and timeouts as the request ``httpx`` would carry, and
    retried alike (a 503, then the answer)."""
    config = parse_config(CONFIG, {"UP_KEY": UPSTREAM_KEY}).upstream(name)
    transport = Http1Transport()
    posted: list[tuple[http1.Origin, list[bytes], dict[str, float | None]]] = []

    async def post(
        origin: http1.Origin,
        payload: list[bytes],
        timeouts: dict[str, float | None],
        request: httpx.Request,
    ) -> httpx.Response:
        posted.append((origin, payload, timeouts))
        return httpx.Response(503 if len(posted) % 2 else 200, content=b"{}")

    async def no_sleep(_: float) -> None:
        return None

    monkeypatch.setattr(transport, "post", post)
    metrics = Metrics()
    upstream = Upstream(
        config=config,
        dialect=dialect(config.protocol, config.reasoning_dialect),
        transport=transport,
        metrics=metrics,
        sleep=no_sleep,
    )
    for path, body in (("/chat/completions", b'{"a":1}'), ("/x:y?alt=sse&k=1", b"")):
        response = await upstream.send(path, body, accept_stream=accept_stream)
        assert response.status_code == 200
        expected = upstream._request(path, body, accept_stream)  # pyright: ignore[reportPrivateUsage]
        serialized = await http1._serialize(expected)  # pyright: ignore[reportPrivateUsage]
        assert posted[-1] == posted[-2]  # the retry sent the same
        assert posted[-1] == (
            http1.origin_of(expected.url),
            serialized,
            expected.extensions["timeout"],
        )
        assert (response.request.method, response.request.url) == ("POST", expected.url)
        await response.aclose()
    assert metrics.upstream_retries[config.name, "same_deployment"] == 2


async def _answering(raw: bytes) -> tuple[asyncio.Server, str]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(2)
        writer.write(raw)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


@pytest.mark.parametrize(
    ("head", "body", "read"),
    [
        (b"content-type: application/json\r\n", b'{"a":1}', b'{"a":1}'),
        (b"content-encoding: gzip\r\n", gzip.compress(b'{"a":1}'), b'{"a":1}'),
        (b"x-note: caf\xe9\r\n", b"{}", b"{}"),  # latin-1: httpx finds the encoding itself
    ],
    ids=["plain", "compressed", "latin-1 header"],
)
async def test_an_http1_answer_reads_and_shows_its_headers_as_httpx_would(
    head: bytes, body: bytes, read: bytes
) -> None:
    raw = b"HTTP/1.1 200 OK\r\n%scontent-length: %d\r\n\r\n%s" % (head, len(body), body)
    server, url = await _answering(raw)
    transport = Http1Transport()
    try:
        request = httpx.Request("POST", f"{url}/v1/x", content=b"{}")
        response = await transport.handle_async_request(request)
        shown = httpx.Response(200, headers=list(response.headers.raw))
        assert response.headers.encoding == shown.headers.encoding
        assert response.headers.multi_items() == shown.headers.multi_items()
        assert await read_answer(response, 1 << 20) == read
    finally:
        await transport.aclose()
        server.close()
        await server.wait_closed()
