"""Upstream requests as they go out, and which transport an upstream gets."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator

import httpx
import pytest

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
