"""The wire dialects as the gateway uses them: a registry codec plus where things live.

A :class:`Dialect` bundles one codec (from :mod:`interlock.codecs.registry`, with
per-upstream options such as the Chat reasoning dialect already applied) and the HTTP facts
the proxy needs: the upstream path, where the model name sits, how a key is presented. No
dialect is named here except Chat's gateway-side usage request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import cast

from interlock.codecs import openai_chat
from interlock.codecs._contract import HttpFacts, StreamDecoder, StreamEncoder, WireCodec
from interlock.codecs.registry import DIALECT_NAMES, wire_codec
from interlock.gateway.config import ChatReasoningDialect, Protocol
from interlock.gateway.vendors import VENDOR_PROTOCOLS
from interlock.transcript import (
    UNKNOWN_ISSUER,
    Encoded,
    JsonObject,
    JsonValue,
    ReplayPolicy,
    Request,
    Response,
    Usage,
)

StreamDecoderLike = StreamDecoder
StreamEncoderLike = StreamEncoder

ErrorEncoder = Callable[..., JsonObject]


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """One wire dialect, its codec bound to the options of one side of the proxy."""

    name: Protocol
    http: HttpFacts
    decode_request: Callable[[JsonObject], Request]
    encode_request: Callable[[Request, ReplayPolicy], Encoded]
    decode_response: Callable[[JsonObject], Response]
    encode_response: Callable[[Response], JsonObject]
    stream_decoder: Callable[[], StreamDecoderLike]
    stream_encoder: Callable[[], StreamEncoderLike]
    encode_error: ErrorEncoder
    decode_usage: Callable[[JsonValue], Usage]
    """The answer's (or a streamed event's) ``http.usage_field`` member as canonical usage."""

    @classmethod
    def of(cls, name: Protocol, codec: WireCodec) -> Dialect:
        """The gateway's view of a registry codec."""
        return cls(
            name=name,
            http=codec.http,
            decode_request=codec.decode_request,
            encode_request=codec.encode_request,
            decode_response=codec.decode_response,
            encode_response=codec.encode_response,
            stream_decoder=codec.stream_decoder,
            stream_encoder=codec.stream_encoder,
            encode_error=codec.encode_error,
            decode_usage=codec.decode_usage,
        )

    @property
    def model_in_path(self) -> bool:
        """True when the model is in the URL, not the body (Gemini)."""
        return self.http.model_in_path

    def upstream_path(self, model: str, stream: bool) -> str:
        """The request path relative to the upstream base URL."""
        template = self.http.upstream_stream_path if stream else self.http.upstream_path
        return template.replace("{model}", model)

    def auth_headers(self, key: str | None) -> dict[str, str]:
        """How this provider expects its API key, plus its fixed headers (API version)."""
        headers = dict(self.http.upstream_headers)
        if key is not None:
            headers[self.http.auth_header] = f"{self.http.auth_prefix}{key}"
        return headers

    def error(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> JsonObject:
        """An error body in this dialect's own shape."""
        return self.encode_error(status, message, code=code, param=param)


def _chat(reasoning_dialect: ChatReasoningDialect, *, include_usage: bool = False) -> Dialect:
    codec = Dialect.of(
        "openai-chat",
        wire_codec("openai-chat", reasoning_dialect=reasoning_dialect, include_usage=include_usage),
    )
    encode = codec.encode_request

    def encode_request(request: Request, policy: ReplayPolicy) -> Encoded:
        encoded = encode(request, policy)
        return _asking_for_usage(encoded) if request.stream else encoded

    return replace(codec, encode_request=encode_request)


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


INGRESS_CHAT_REASONING: ChatReasoningDialect = "reasoning_content"
"""How Chat Completions *clients* of the gateway receive reasoning text."""


def dialect(
    name: Protocol, reasoning_dialect: ChatReasoningDialect | None = None, issuer: str = ""
) -> Dialect:
    """The dialect ``name``; ``reasoning_dialect`` applies to ``openai-chat`` only,
    ``issuer`` (the vendor of an upstream's opaque reasoning, see :mod:`.vendors`) to
    ``openai-responses`` and ``anthropic`` only (the dialect's own vendor when empty)."""
    if name == "openai-chat":
        return _chat(reasoning_dialect or "none")
    if name in VENDOR_PROTOCOLS and issuer:
        return Dialect.of(name, wire_codec(name, issuer=issuer))
    return Dialect.of(name, wire_codec(name))


def ingress_dialects() -> dict[Protocol, Dialect]:
    """The dialects clients speak to the gateway, by protocol name.

    A Responses or Anthropic client's history says nothing of which vendor's service issued
    its opaque reasoning: it is decoded as of :data:`UNKNOWN_ISSUER` (see :mod:`.provenance`)."""
    return {
        name: dialect(
            name,
            INGRESS_CHAT_REASONING if name == "openai-chat" else None,
            UNKNOWN_ISSUER if name in VENDOR_PROTOCOLS else "",
        )
        for name in DIALECT_NAMES
    }


def error_details(text: str, status: int) -> tuple[str, str | None]:
    """The message and code of an upstream error body in any dialect (best effort)."""
    try:
        document = json.loads(text)
    except ValueError:
        return (text[:500] or f"HTTP {status}"), None
    error = cast(JsonObject, document).get("error") if isinstance(document, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        code = next(
            (v for k in ("code", "status", "type") if isinstance(v := error.get(k), str)), None
        )
        return (str(message) if message else f"HTTP {status}"), (
            str(code) if isinstance(code, str) else None
        )
    return f"HTTP {status}", None
