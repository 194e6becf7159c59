"""The three wire dialects as the gateway uses them: a codec plus where things live on the wire.

A :class:`Dialect` bundles one codec's functions (with per-upstream options such as the
Chat reasoning dialect already applied) and the HTTP facts the proxy needs: the upstream
path, where the model name sits, how a key is presented.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol as TypingProtocol

from interlock.codecs import gemini, openai_chat, openai_responses
from interlock.codecs._sse import SseEvent
from interlock.gateway.config import ChatReasoningDialect, Protocol
from interlock.transcript import (
    Encoded,
    JsonObject,
    ReplayPolicy,
    Request,
    Response,
    Update,
)


class StreamDecoderLike(TypingProtocol):
    """A codec's sans-I/O stream decoder."""

    def feed(self, event: SseEvent) -> list[Update]: ...

    def finish(self) -> list[Update]: ...


class StreamEncoderLike(TypingProtocol):
    """A codec's stream encoder."""

    def encode(self, update: Update) -> list[SseEvent]: ...

    def finish(self) -> list[SseEvent]: ...


ErrorEncoder = Callable[..., JsonObject]


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """One wire dialect, its codec bound to the options of one side of the proxy."""

    name: Protocol
    decode_request: Callable[[JsonObject], Request]
    encode_request: Callable[[Request, ReplayPolicy], Encoded]
    decode_response: Callable[[JsonObject], Response]
    encode_response: Callable[[Response], JsonObject]
    stream_decoder: Callable[[], StreamDecoderLike]
    stream_encoder: Callable[[], StreamEncoderLike]
    encode_error: ErrorEncoder

    @property
    def model_in_path(self) -> bool:
        """True for Gemini: the model is in the URL, not the body."""
        return self.name == "gemini"

    def upstream_path(self, model: str, stream: bool) -> str:
        """The request path relative to the upstream base URL."""
        if self.name == "openai-chat":
            return "/chat/completions"
        if self.name == "openai-responses":
            return "/responses"
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"/v1beta/models/{model}:{method}"

    def auth_headers(self, key: str | None) -> dict[str, str]:
        """How this provider expects its API key."""
        if key is None:
            return {}
        if self.name == "gemini":
            return {"x-goog-api-key": key}
        return {"authorization": f"Bearer {key}"}

    def error(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> JsonObject:
        """An error body in this dialect's own shape."""
        return self.encode_error(status, message, code=code, param=param)


def _responses() -> Dialect:
    codec = openai_responses
    return Dialect(
        name="openai-responses",
        decode_request=codec.decode_request,
        encode_request=lambda request, policy: codec.encode_request(request, policy=policy),
        decode_response=codec.decode_response,
        encode_response=codec.encode_response,
        stream_decoder=codec.StreamDecoder,
        stream_encoder=codec.StreamEncoder,
        encode_error=codec.encode_error,
    )


def _chat(reasoning_dialect: ChatReasoningDialect, *, include_usage: bool = False) -> Dialect:
    codec = openai_chat

    def encode_request(request: Request, policy: ReplayPolicy) -> Encoded:
        encoded = codec.encode_request(request, policy=policy, reasoning_dialect=reasoning_dialect)
        return _asking_for_usage(encoded) if request.stream else encoded

    return Dialect(
        name="openai-chat",
        decode_request=codec.decode_request,
        encode_request=encode_request,
        decode_response=codec.decode_response,
        encode_response=lambda response: codec.encode_response(
            response, reasoning_dialect=reasoning_dialect
        ),
        stream_decoder=codec.StreamDecoder,
        stream_encoder=lambda: codec.StreamEncoder(
            reasoning_dialect=reasoning_dialect, include_usage=include_usage
        ),
        encode_error=codec.encode_error,
    )


def _asking_for_usage(encoded: Encoded) -> Encoded:
    """A streamed Chat request asks for the usage chunk (``stream_options.include_usage``):
    without it a Chat upstream never reports usage and no client dialect can be told it."""
    options = encoded.payload.get("stream_options")
    if isinstance(options, dict) and "include_usage" in options:
        return encoded
    kept = options if isinstance(options, dict) else {}
    payload = {**encoded.payload, "stream_options": {**kept, "include_usage": True}}
    return replace(encoded, payload=payload)


def stream_usage_asked(request: Request) -> bool:
    """True when a Chat client asked for the usage chunk (``stream_options.include_usage``)."""
    options = request.extra.get(openai_chat.DIALECT, {}).get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


def chat_ingress_with_usage() -> Dialect:
    """The Chat ingress dialect for a client that asked for the usage chunk."""
    return _chat(INGRESS_CHAT_REASONING, include_usage=True)


def _gemini() -> Dialect:
    codec = gemini
    return Dialect(
        name="gemini",
        decode_request=codec.decode_request,
        encode_request=lambda request, policy: codec.encode_request(request, policy=policy),
        decode_response=codec.decode_response,
        encode_response=codec.encode_response,
        stream_decoder=codec.StreamDecoder,
        stream_encoder=codec.StreamEncoder,
        encode_error=codec.encode_error,
    )


INGRESS_CHAT_REASONING: ChatReasoningDialect = "reasoning_content"
"""How Chat Completions *clients* of the gateway receive reasoning text."""


def dialect(name: Protocol, reasoning_dialect: ChatReasoningDialect | None = None) -> Dialect:
    """The dialect ``name``; ``reasoning_dialect`` applies to ``openai-chat`` only."""
    if name == "openai-responses":
        return _responses()
    if name == "openai-chat":
        return _chat(reasoning_dialect or "none")
    return _gemini()


def ingress_dialects() -> dict[Protocol, Dialect]:
    """The dialects clients speak to the gateway, by protocol name."""
    return {
        "openai-responses": dialect("openai-responses"),
        "openai-chat": dialect("openai-chat", INGRESS_CHAT_REASONING),
        "gemini": dialect("gemini"),
    }
