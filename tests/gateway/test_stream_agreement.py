"""Streamed and non-streamed answers agree, item for item, for every client dialect in
front of every upstream dialect (``docs/gateway.md``, "Streams").

The gateway runs its embedded default (every upstream an in-process emulator). For each
client × upstream pair the same request is sent twice, once streaming and once not; each
answer is decoded with the client dialect's own codec (the stream folded with
``fold_updates``) and the two canonical answers are compared after the fields that differ
by nature are set aside (ids, timestamps, and the opaque tokens the emulators mint per
answer): roles, part kinds in order, texts, reasoning kinds, tool names and arguments,
finish reason.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from interlock.codecs._sse import SseParser
from interlock.codecs.registry import DialectName, wire_codec
from interlock.gateway._default_config import DEFAULT_CONFIG_TOML
from interlock.gateway.app import build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    GenerationOptions,
    JsonObject,
    Message,
    ReasoningPart,
    ReplayPolicy,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    ToolSpec,
    fold_updates,
)

CLIENTS: list[DialectName] = ["openai-chat", "openai-responses", "gemini", "anthropic"]
MODELS = {
    "openai-responses": "demo-responses",
    "openai-chat": "demo-chat",
    "gemini": "demo-gemini",
    "anthropic": "demo-anthropic",
}
WEATHER = ToolSpec(
    name="get_weather",
    description="Weather by city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
PROMPTS = {
    "text": "hello there",
    "tool": 'call get_weather with {"city": "Paris"}',
    "thinking": 'please call get_weather with {"city": "Oslo"}',
}
THINKING = GenerationOptions(
    reasoning_summary="auto", include_reasoning=True, thinking_budget=1024, max_output_tokens=2048
)


def _request(client: DialectName, model: str, prompt: str, stream: bool) -> tuple[str, JsonObject]:
    request = Request(
        model=model,
        messages=(Message(role="user", parts=(TextPart(text=PROMPTS[prompt]),)),),
        tools=(WEATHER,),
        stream=stream,
        options=THINKING if prompt == "thinking" else GenerationOptions(),
    )
    codec = wire_codec(client)
    payload = dict(codec.encode_request(request, ReplayPolicy()).payload)
    if client == "openai-responses":
        payload["store"] = False
    if client == "gemini":
        payload.pop("model", None)
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"/v1beta/models/{model}:{method}", payload
    path = next(p.path for p in codec.http.ingress if p.stream is None or p.stream == stream)
    return path, payload


def _headers(client: DialectName) -> dict[str, str]:
    return {"anthropic-version": "2023-06-01"} if client == "anthropic" else {}


def _decode(client: DialectName, answer: httpx.Response, stream: bool) -> Response:
    codec = wire_codec(client)
    assert answer.status_code == 200, answer.text
    if not stream:
        return codec.decode_response(answer.json())
    decoder, parser = codec.stream_decoder(), SseParser()
    updates = [u for event in parser.feed(answer.content) for u in decoder.feed(event)]
    updates.extend(decoder.finish())
    return fold_updates(updates)


def _gemini_signature_only(part: object) -> bool:
    """Gemini's own wire rule: streamed, a text answer's signature comes on a trailing
    empty-text part (decoded as signature-only reasoning); whole, it is on the text part."""
    return (
        isinstance(part, ReasoningPart)
        and not part.text
        and part.opaque is not None
        and part.opaque.format == GEMINI_THOUGHT_SIGNATURE
    )


def _shape(client: DialectName, response: Response) -> list[Any]:
    """What must agree: every part, in order, without ids or minted tokens."""
    parts: list[Any] = []
    for part in response.message.parts:
        if client == "gemini" and _gemini_signature_only(part):
            continue
        match part:
            case TextPart():
                parts.append(("text", part.text))
            case ReasoningPart():
                parts.append(("reasoning", part.reasoning_kind, part.text, part.opaque is not None))
            case ToolCallPart():
                parts.append(("call", part.name, part.parsed_arguments))
            case _:
                parts.append((part.kind,))
    return [response.message.role, parts, response.finish_reason]


@pytest.fixture(scope="module")
def app() -> Any:
    config = parse_config(
        DEFAULT_CONFIG_TOML.replace("sqlite:///.interlock/interlock.db", "memory://"), {}
    )
    return create_app(build_gateway(config, store=open_store("memory://")))


@pytest.mark.parametrize("prompt", sorted(PROMPTS))
@pytest.mark.parametrize("upstream", CLIENTS)
@pytest.mark.parametrize("client", CLIENTS)
async def test_streamed_and_whole_answers_agree(
    app: Any, client: DialectName, upstream: DialectName, prompt: str
) -> None:
    transport = httpx.ASGITransport(app=app)
    shapes: list[Any] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        for stream in (False, True):
            path, payload = _request(client, MODELS[upstream], prompt, stream)
            answer = await http.post(path, json=payload, headers=_headers(client))
            shapes.append(_shape(client, _decode(client, answer, stream)))
    whole, streamed = shapes
    assert streamed == whole
