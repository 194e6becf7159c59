"""The codec contract every wire dialect implements, and the HTTP facts it declares.

A dialect package (``interlock.codecs.<package>``) exports ``HTTP`` (its :class:`HttpFacts`)
and ``wire_codec(**options)``, which returns a :class:`WireCodec` with the dialect's options
(e.g. Chat's reasoning dialect) applied. The gateway, the CLI, the emulators and conformance
reach dialects only through :mod:`interlock.codecs.registry`; what differs between dialects
on the wire (paths, key header, where the model sits, framing, opaque formats) is data here,
not a branch in their code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

from interlock.codecs._sse import SseEvent, SseParser, format_sse
from interlock.transcript import (
    Encoded,
    JsonObject,
    JsonValue,
    ReplayPolicy,
    Request,
    Response,
    Update,
    Usage,
)

StreamFraming: TypeAlias = Literal["sse", "sse-named", "sse-or-json-array"]
"""``sse``: data-only events; ``sse-named``: every event named after its ``type``;
``sse-or-json-array``: SSE when asked (``?alt=sse``), else one streamed JSON array."""


class StreamDecoder(Protocol):
    """A sans-I/O stream decoder: SSE events in, canonical updates out."""

    def feed(self, event: SseEvent) -> list[Update]:
        """Updates for one wire event."""
        ...

    def finish(self) -> list[Update]:
        """Updates still held when the stream ends (a failure if it never finished)."""
        ...


class StreamEncoder(Protocol):
    """A stream encoder: canonical updates in, SSE events out."""

    def encode(self, update: Update) -> list[SseEvent]:
        """Wire events for one update."""
        ...

    def finish(self) -> list[SseEvent]:
        """Wire events still held when the updates end."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class IngressPath:
    """One client-facing endpoint: a Starlette path pattern and its metric name.

    ``stream`` is fixed by the path (Gemini's two methods) or ``None`` (the body says).
    """

    path: str
    endpoint: str
    stream: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpFacts:
    """Where things live on one dialect's wire, as the gateway needs them.

    ``upstream_path`` / ``upstream_stream_path`` are relative to the upstream base URL and
    may contain ``{model}``. ``model_not_found`` is the service's 404 text (``{model}``).
    ``opaque_formats`` are the payload formats this dialect replays to their issuer.
    ``stateful_service``: the service keeps conversation state, so the gateway (which
    replays full histories) asks it not to (``store: false``). ``required_headers`` are
    request headers a client must send, with the service's error text when missing;
    ``required_fields`` likewise top-level body fields (absent or null), refused at ingress
    whatever the upstream, so an answer never depends on where a request is routed.
    ``count_tokens`` is ``(ingress path, response key)`` of a token-counting endpoint.
    ``signed_calls``: the service signs tool calls and wants the signatures back on them;
    ``reasoning_issuer``: the issuer of opaque reasoning the service wants back (``openai``…).
    ``minted_id_marker``: bytes inside every item id the codec mints for output that had
    none (another dialect's answer); the decoder drops such ids, so a body holding the
    marker is re-encoded rather than passed through (the service would 404 on them).
    ``usage_field``: the member holding token usage in an answer, or in a streamed event
    (at its top level or one object down: ``response.usage``, ``message.usage``).
    """

    ingress: tuple[IngressPath, ...]
    upstream_path: str
    upstream_stream_path: str
    emulator_prefix: str
    auth_header: str
    auth_prefix: str = ""
    upstream_headers: tuple[tuple[str, str], ...] = ()
    required_headers: tuple[tuple[str, str], ...] = ()
    required_fields: tuple[tuple[str, str], ...] = ()
    model_in_path: bool = False
    model_not_found: str = "The model `{model}` does not exist or you do not have access to it."
    stream_framing: StreamFraming = "sse"
    error_shape: str = ""
    opaque_formats: frozenset[str] = frozenset()
    provider: str = ""
    stateful_service: bool = False
    count_tokens: tuple[str, str] | None = None
    upstream_count_path: str = ""
    """The service's own token-counting path (relative, may hold ``{model}``), if any."""
    signed_calls: bool = False
    reasoning_issuer: str = ""
    minted_id_marker: bytes = b""
    usage_field: str = "usage"


class WireCodec(Protocol):
    """One dialect's codec, bound to its options: what every consumer calls."""

    @property
    def name(self) -> str:
        """The dialect's protocol name (``openai-chat``, ``anthropic``…)."""
        ...

    @property
    def http(self) -> HttpFacts:
        """The dialect's HTTP facts."""
        ...

    def decode_request(self, payload: JsonObject) -> Request:
        """A wire request body as a canonical request (``DecodeError`` naming the path)."""
        ...

    def encode_request(self, request: Request, policy: ReplayPolicy) -> Encoded:
        """The wire body (``LossyHistoryError`` before anything is sent)."""
        ...

    def decode_response(self, payload: JsonObject) -> Response:
        """A wire response as a canonical response."""
        ...

    def encode_response(self, response: Response) -> JsonObject:
        """The wire response for a canonical response."""
        ...

    def stream_decoder(self) -> StreamDecoder:
        """A fresh stream decoder."""
        ...

    def decode_usage(self, value: JsonValue) -> Usage:
        """A wire usage object (the :attr:`HttpFacts.usage_field` member) as canonical usage."""
        ...

    def stream_encoder(self) -> StreamEncoder:
        """A fresh stream encoder."""
        ...

    def encode_error(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> JsonObject:
        """An error body in the dialect's own shape."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundCodec:
    """A :class:`WireCodec` made of a dialect's functions with its options applied."""

    name: str
    http: HttpFacts
    decode: Callable[[JsonObject], Request]
    encode: Callable[[Request, ReplayPolicy], Encoded]
    decode_answer: Callable[[JsonObject], Response]
    encode_answer: Callable[[Response], JsonObject]
    decoder: Callable[[], StreamDecoder]
    encoder: Callable[[], StreamEncoder]
    error: Callable[..., JsonObject]
    usage: Callable[[JsonValue, str], Usage]

    def decode_request(self, payload: JsonObject) -> Request:
        """See :class:`WireCodec`."""
        return self.decode(payload)

    def encode_request(self, request: Request, policy: ReplayPolicy) -> Encoded:
        """See :class:`WireCodec`."""
        return self.encode(request, policy)

    def decode_response(self, payload: JsonObject) -> Response:
        """See :class:`WireCodec`."""
        return self.decode_answer(payload)

    def encode_response(self, response: Response) -> JsonObject:
        """See :class:`WireCodec`."""
        return self.encode_answer(response)

    def stream_decoder(self) -> StreamDecoder:
        """See :class:`WireCodec`."""
        return self.decoder()

    def stream_encoder(self) -> StreamEncoder:
        """See :class:`WireCodec`."""
        return self.encoder()

    def decode_usage(self, value: JsonValue) -> Usage:
        """See :class:`WireCodec`."""
        return self.usage(value, self.http.usage_field)

    def encode_error(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> JsonObject:
        """See :class:`WireCodec`."""
        return self.error(status, message, code=code, param=param)


__all__ = [
    "BoundCodec",
    "HttpFacts",
    "IngressPath",
    "SseEvent",
    "SseParser",
    "StreamDecoder",
    "StreamEncoder",
    "StreamFraming",
    "WireCodec",
    "format_sse",
]
