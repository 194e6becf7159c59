"""Streams as a real socket delivers them: split inside characters, cut mid-event, malformed.

The upstream is :mod:`tests.gateway.loopback_upstream` (a real loopback server sending
chosen byte chunks); the gateway uses its real transport. Each of the three upstream
dialects is read by a client of the same dialect (bytes passed through) and of another
(translated).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from interlock.codecs._sse import SseParser
from interlock.gateway.config import Protocol
from interlock.gateway.dialects import dialect
from interlock.transcript import (
    PartDelta,
    PartFinished,
    PartStarted,
    ResponseFinished,
    ResponseStarted,
    TextPart,
    Update,
)
from tests.gateway.loopback_upstream import Reply, access_log, client, loopback_gateway, upstream

TEXT = "你好，世界 🌍🚀 — ok"
PIECES = ["你好，", "世界 🌍", "🚀 — ok"]

UPSTREAMS: dict[Protocol, str] = {
    "openai-chat": "to-chat",
    "openai-responses": "to-responses",
    "gemini": "to-gemini",
}


def wire(protocol: Protocol) -> bytes:
    """A complete, valid stream of ``TEXT`` in ``protocol``'s own framing."""
    updates: list[Update] = [ResponseStarted(id="resp_1", model="up", created=1)]
    updates.append(PartStarted(index=0, part=TextPart(text="")))
    updates += [PartDelta(index=0, delta=piece) for piece in PIECES]
    updates.append(PartFinished(index=0, part=TextPart(text=TEXT)))
    updates.append(ResponseFinished(finish_reason="stop", native_finish_reason="stop"))
    encoder = dialect(protocol).stream_encoder()
    events = [event for update in updates for event in encoder.encode(update)] + encoder.finish()
    text = ""
    for event in events:
        head = f"event: {event.event}\n" if event.event else ""
        text += head + "".join(f"data: {line}\n" for line in event.data.split("\n")) + "\n"
    if protocol == "gemini":
        text = text.replace("\n", "\r\n")  # Gemini frames with CRLF
    return text.encode()


def splits(body: bytes) -> Iterator[list[bytes]]:
    """For each offset 1..3: ``body`` cut inside every multi-byte character at that offset."""
    starts = [i for i, byte in enumerate(body) if byte >= 0xC0]
    for offset in (1, 2, 3):
        cuts = [
            s + offset
            for s in starts
            if all(0x80 <= b < 0xC0 for b in body[s + 1 : s + offset + 1])
        ]
        bounds = [0, *cuts, len(body)]
        yield [body[a:b] for a, b in itertools.pairwise(bounds)]


def request(ingress: Protocol, model: str) -> tuple[str, dict[str, object]]:
    if ingress == "openai-chat":
        return "/v1/chat/completions", {
            "model": model,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        }
    if ingress == "openai-responses":
        return "/v1/responses", {"model": model, "stream": True, "input": "hi"}
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return f"/v1beta/models/{model}:streamGenerateContent?alt=sse", body


def received(ingress: Protocol, body: bytes) -> tuple[str, list[Any]]:
    """The text a client of ``ingress`` reads, and every event (each must be valid JSON)."""
    parser = SseParser()
    events = [
        json.loads(event.data)
        for event in parser.feed(body) + parser.finish()
        if event.data != "[DONE]"
    ]
    text = ""
    for event in events:
        if ingress == "openai-chat":
            for choice in event.get("choices", []):
                text += choice["delta"].get("content") or ""
        elif ingress == "openai-responses":
            if event["type"] == "response.output_text.delta":
                text += str(event["delta"])
        else:
            for candidate in event.get("candidates", []):
                text += "".join(
                    p.get("text", "") for p in candidate.get("content", {}).get("parts", [])
                )
    return text, events


PAIRS = [
    (upstream_dialect, ingress)
    for upstream_dialect in UPSTREAMS
    for ingress in (
        upstream_dialect,
        "openai-responses" if upstream_dialect != "openai-responses" else "gemini",
    )
]


@pytest.mark.parametrize(("upstream_dialect", "ingress"), PAIRS)
async def test_characters_split_at_every_byte_arrive_whole(
    upstream_dialect: Protocol, ingress: Protocol
) -> None:
    body = wire(upstream_dialect)
    cases = list(splits(body))
    assert sum(len(chunks) for chunks in cases) > 3 * len(PIECES)
    replies = iter(cases)
    async with upstream(lambda _path, _body: Reply(next(replies))) as server:
        built = loopback_gateway(server.url)
        async with client(built) as http:
            for _ in cases:
                path, payload = request(ingress, UPSTREAMS[upstream_dialect])
                answer = await http.post(path, json=payload)
                text, _ = received(ingress, answer.content)
                assert answer.status_code == 200
                assert text == TEXT
                if ingress == upstream_dialect:
                    assert answer.headers["x-interlock-translation"] == "exact"
                    assert answer.content == body  # the bytes, whatever the reads were
        await built.close()


@pytest.mark.parametrize(("upstream_dialect", "ingress"), PAIRS)
async def test_a_stream_cut_mid_event_ends_with_an_error_event_of_its_own(
    upstream_dialect: Protocol, ingress: Protocol
) -> None:
    body = wire(upstream_dialect)
    cut = body.index("世".encode()) + 1  # mid-character, mid-event
    async with upstream(lambda _path, _body: Reply([body[:cut]], ending="reset")) as server:
        built = loopback_gateway(server.url)
        async with client(built) as http:
            path, payload = request(ingress, UPSTREAMS[upstream_dialect])
            with access_log() as access:
                answer = await http.post(path, json=payload)
        await built.close()
    _, events = received(ingress, answer.content)  # every event parses: nothing glued
    last = events[-1]
    if ingress == "openai-responses":
        assert last["type"] == "error" and last["code"] == "upstream_stream_broken"
    else:
        assert "error" in last
    assert access[-1]["status"] == 502 and access[-1]["error"] == "upstream_stream_broken"


@pytest.mark.parametrize(
    ("chunks", "code"),
    [
        ([b'data: {"a\xff\xfe": 1}\n\n'], "upstream_invalid_stream"),
        ([b"data: " + b"x" * 5000], "upstream_invalid_stream"),
        ([b'data: {"choices": []}\n\ndata: {"cho'], "upstream_invalid_stream"),
    ],
    ids=["invalid-utf8", "event-over-the-limit", "ends-mid-line"],
)
async def test_malformed_bytes_end_the_stream_in_shape(chunks: list[bytes], code: str) -> None:
    async with upstream(lambda _path, _body: Reply(chunks)) as server:
        built = loopback_gateway(server.url, "max_response_bytes = 4096")
        async with client(built) as http:
            path, payload = request("openai-chat", "to-chat")
            answer = await http.post(path, json=payload)
            metrics = (await http.get("/metrics")).text
        await built.close()
    _, events = received("openai-chat", answer.content)
    assert events[-1]["error"]["code"] == code
    assert 'status="502"' in metrics


async def test_one_byte_reads_through_a_mock_transport_give_the_same_answer() -> None:
    """The same split, deterministic: every byte its own read (no socket to coalesce them)."""

    class OneByteAtATime(httpx.AsyncByteStream):
        def __init__(self, body: bytes) -> None:
            self.body = body

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for index in range(len(self.body)):
                yield self.body[index : index + 1]

    from tests.gateway.helpers import client as mock_client
    from tests.gateway.helpers import gateway

    for upstream_dialect, model in UPSTREAMS.items():
        body = wire(upstream_dialect)

        def answer(_: httpx.Request, body: bytes = body) -> httpx.Response:
            return httpx.Response(200, stream=OneByteAtATime(body))

        name = model.removeprefix("to-")
        async with mock_client(gateway({name: answer})) as http:
            for ingress in UPSTREAMS:
                path, payload = request(ingress, model)
                reply = await http.post(path, json=payload)
                assert received(ingress, reply.content)[0] == TEXT, (upstream_dialect, ingress)


async def test_the_sdks_raise_their_api_errors_for_a_stream_cut_mid_event() -> None:
    from google import genai
    from google.genai import errors as genai_errors
    from google.genai import types
    from openai import APIError, AsyncOpenAI

    def script(path: str, _body: bytes) -> Reply:
        body = wire("gemini" if "models/" in path else "openai-chat")
        return Reply([body[: body.index("世".encode()) + 2]], ending="reset")

    async with upstream(script) as server:
        built = loopback_gateway(server.url)
        async with client(built) as http:
            openai = AsyncOpenAI(base_url="http://localhost/v1", api_key="k", http_client=http)
            with pytest.raises(APIError, match="broke off"):
                async for _ in await openai.chat.completions.create(
                    model="to-chat", messages=[{"role": "user", "content": "hi"}], stream=True
                ):
                    pass
            kinds = [
                event.type
                async for event in await openai.responses.create(
                    model="to-gemini", input="hi", stream=True
                )
            ]
            assert kinds[-1] == "error"
            options = types.HttpOptions(base_url="http://localhost", httpx_async_client=http)
            google = genai.Client(api_key="k", http_options=options)
            with pytest.raises(genai_errors.APIError, match="broke off"):
                async for _ in await google.aio.models.generate_content_stream(
                    model="to-chat", contents="hi"
                ):
                    pass
        await built.close()


@pytest.mark.parametrize(
    ("path", "model"),
    [("/v1/chat/completions", "to-chat"), ("/v1/responses", "to-chat")],
    ids=["passthrough", "translated"],
)
async def test_an_answer_over_the_size_limit_is_a_502_in_the_clients_shape(
    path: str, model: str
) -> None:
    big = json.dumps({"id": "x", "choices": [], "pad": "y" * 6000}).encode()
    async with upstream(
        lambda _path, _body: Reply(
            [big[:3000], big[3000:]], headers=[("content-type", "application/json")]
        )
    ) as server:
        built = loopback_gateway(server.url, "max_response_bytes = 4096")
        async with client(built) as http:
            payload = {
                "model": model,
                "messages": [{"role": "user", "content": "hi"}],
                "input": "hi",
            }
            answer = await http.post(path, json=payload)
        await built.close()
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "upstream_too_large"


def _without_final_event(protocol: Protocol) -> bytes:
    """``wire(protocol)`` cut cleanly after its first text delta: whole events, no ending."""
    body = wire(protocol)
    separator = b"\r\n\r\n" if protocol == "gemini" else b"\n\n"
    first_delta = body.index("你好".encode())
    return body[: body.index(separator, first_delta) + len(separator)]


@pytest.mark.parametrize(("upstream_dialect", "ingress"), PAIRS)
async def test_a_stream_closed_cleanly_before_its_final_event_is_flagged(
    upstream_dialect: Protocol, ingress: Protocol
) -> None:
    """Whole events, a clean close, no final event: the answer is cut short, and the client
    is told so with an error event, passed through (undecoded) or translated alike."""
    body = _without_final_event(upstream_dialect)
    async with upstream(lambda _path, _body: Reply([body])) as server:
        built = loopback_gateway(server.url)
        async with client(built) as http:
            path, payload = request(ingress, UPSTREAMS[upstream_dialect])
            with access_log() as access:
                answer = await http.post(path, json=payload)
        await built.close()
    _, events = received(ingress, answer.content)
    last = events[-1]
    if ingress == "openai-responses":
        assert last["type"] == "error"
    else:
        assert "error" in last
    assert access[-1]["status"] == 502
    if ingress == upstream_dialect:
        # relayed undecoded (recognised by its events), or decoded (the vault reads Gemini's)
        assert access[-1]["error"] in ("upstream_truncated", "incomplete_stream")
        assert answer.content.startswith(body), "what did arrive was passed on first"
