"""Streams chunk by chunk: translated, passed through, JSON-array framed, and broken mid-way."""

from __future__ import annotations

import json

import httpx
import pytest

from interlock.codecs._sse import SseParser
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
