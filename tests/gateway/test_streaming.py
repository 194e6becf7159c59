"""Streams chunk by chunk: translated, passed through, JSON-array framed, and broken mid-way."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.types import Message, Scope

from interlock.codecs._sse import SseParser
from interlock.gateway.app import create_app
from tests.gateway.helpers import BreakingStream, Recorder, chat_chunks, client, gateway, sse

GEMINI_BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def streaming_chat(_: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200, content=sse(chat_chunks(), done=True), headers={"content-type": "text/event-stream"}
    )


def breaking_chat(_: httpx.Request) -> httpx.Response:
    first = sse(chat_chunks()[:1])
    return httpx.Response(
        200, stream=BreakingStream([first]), headers={"content-type": "text/event-stream"}
    )


def events(body: str) -> list[dict[str, object]]:
    parsed = SseParser().feed(body) + SseParser().finish()
    return [json.loads(event.data) for event in parsed if event.data != "[DONE]"]


async def test_same_dialect_stream_is_forwarded_byte_for_byte() -> None:
    upstream = Recorder(streaming_chat)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post(
            "/v1/chat/completions",
            json={
                "model": "to-chat",
                "stream": True,
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
    assert answer.headers["x-interlock-translation"] == "exact"
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.content == sse(chat_chunks(), done=True)


async def test_cross_dialect_stream_is_re_encoded() -> None:
    upstream = Recorder(streaming_chat)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post(
            "/v1/responses", json={"model": "to-chat", "input": "hi", "stream": True}
        )
    assert upstream.bodies[0]["stream"] is True
    kinds = [event["type"] for event in events(answer.text)]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert (
        "".join(
            str(e["delta"])
            for e in events(answer.text)
            if e["type"] == "response.output_text.delta"
        )
        == "Hello"
    )


async def test_gemini_stream_without_alt_sse_is_a_json_array() -> None:
    async with client(gateway({"chat": Recorder(streaming_chat)})) as http:
        answer = await http.post("/v1beta/models/to-chat:streamGenerateContent", json=GEMINI_BODY)
    assert answer.headers["content-type"].startswith("application/json")
    chunks = json.loads(answer.text)
    candidates = [chunk["candidates"][0] for chunk in chunks]
    text = "".join(
        part["text"]
        for candidate in candidates
        for part in candidate.get("content", {}).get("parts", [])
    )
    assert text == "Hello"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1/chat/completions",
            {"model": "to-chat", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        ),
        ("/v1/responses", {"model": "to-chat", "stream": True, "input": "hi"}),
        ("/v1beta/models/to-chat:streamGenerateContent?alt=sse", GEMINI_BODY),
    ],
)
async def test_a_stream_broken_mid_way_ends_with_the_dialects_error_event(
    path: str, body: dict[str, object]
) -> None:
    async with client(gateway({"chat": Recorder(breaking_chat)})) as http:
        answer = await http.post(path, json=body)
        metrics = (await http.get("/metrics")).text
    assert answer.status_code == 200  # the headers were already sent
    received = events(answer.text)
    last = received[-1]
    if path.startswith("/v1/responses"):
        assert last["type"] in {"error", "response.failed"}
    else:
        assert "error" in last
    assert "interlock_active_streams 0" in metrics
    assert 'status="502"' in metrics


async def test_upstream_error_before_the_stream_is_a_plain_error_answer() -> None:
    upstream = Recorder(lambda _: httpx.Response(404, json={"error": {"message": "no such model"}}))
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post(
            "/v1beta/models/to-chat:streamGenerateContent?alt=sse", json=GEMINI_BODY
        )
    assert answer.status_code == 404 and answer.json()["error"]["status"] == "NOT_FOUND"


class EndlessStream(httpx.AsyncByteStream):
    """An upstream that would stream for a long time; records when it is closed."""

    def __init__(self) -> None:
        self.sent = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for _ in range(10_000):
            self.sent += 1
            yield sse(chat_chunks()[:1])
            await asyncio.sleep(0)

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.parametrize(
    ("path", "payload"),
    [
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
        ("/v1/responses", {"input": "hi"}),
    ],
    ids=["passthrough", "translated"],
)
async def test_a_client_that_goes_away_stops_the_upstream_stream(
    path: str, payload: dict[str, object]
) -> None:
    stream = EndlessStream()
    built = gateway({"chat": Recorder(lambda _: httpx.Response(200, stream=stream))})
    app = create_app(built)
    body = json.dumps({**payload, "model": "to-chat", "stream": True})
    gone = asyncio.Event()
    sent: list[Message] = []

    async def receive() -> Message:
        if not sent:
            return {"type": "http.request", "body": body.encode(), "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)
        if len(sent) == 3:  # the headers and two pieces, then the client hangs up
            gone.set()

    await app(_scope(path), receive, send)
    assert stream.closed
    assert stream.sent < 100
    assert built.metrics.active_streams == 0
    assert any(status == "499" for (_, _, status) in built.metrics.requests)


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
