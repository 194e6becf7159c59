"""The Anthropic Messages dialect behind the codec contract, and its HTTP facts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from interlock.codecs._contract import BoundCodec, HttpFacts, IngressPath
from interlock.codecs.anthropic._errors import encode_error
from interlock.codecs.anthropic._request import decode_request, encode_request
from interlock.codecs.anthropic._response import decode_response, encode_response
from interlock.codecs.anthropic._stream_decode import StreamDecoder
from interlock.codecs.anthropic._stream_encode import StreamEncoder
from interlock.codecs.anthropic._usage import decode_usage
from interlock.codecs.anthropic._vendors import (
    LabellingStreamDecoder,
    labelled_request,
    labelled_response,
    replayable,
)
from interlock.codecs.anthropic._wire import API_VERSION, PROVIDER
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    Encoded,
    JsonObject,
    ReplayPolicy,
    Request,
    Response,
)

HTTP = HttpFacts(
    ingress=(IngressPath(path="/v1/messages", endpoint="messages"),),
    upstream_path="/messages",
    upstream_stream_path="/messages",
    emulator_prefix="/v1",
    auth_header="x-api-key",
    upstream_headers=(("anthropic-version", API_VERSION),),
    required_headers=(("anthropic-version", "anthropic-version: header is required"),),
    required_fields=(("max_tokens", "max_tokens: Field required"),),
    model_not_found="model: {model}",
    stream_framing="sse-named",
    error_shape='{"type": "error", "error": {"type", "message"}}',
    opaque_formats=frozenset({ANTHROPIC_THINKING_SIGNATURE, ANTHROPIC_REDACTED_THINKING}),
    provider="anthropic",
    reasoning_issuer="anthropic",
    count_tokens=("/v1/messages/count_tokens", "input_tokens"),
    upstream_count_path="/messages/count_tokens",
)


def wire_codec(*, issuer: str = PROVIDER) -> BoundCodec:
    """The Anthropic codec behind the contract, for the service of vendor ``issuer``.

    Every Anthropic-compatible service (Anthropic, DeepSeek, Moonshot…) signs its thinking
    with its own keys and refuses another's signature: the codec labels the payloads it
    decodes with ``issuer`` and replays only ``issuer``'s (and a client's, of unrecorded
    issuer) to the service (:mod:`._vendors`); answers it encodes carry any vendor's.
    """
    if issuer == PROVIDER:
        return _bound(issuer, decode_request, decode_response, StreamDecoder)
    return _bound(
        issuer,
        lambda payload: labelled_request(decode_request(payload), issuer),
        lambda payload: labelled_response(decode_response(payload), issuer),
        lambda: LabellingStreamDecoder(issuer),
    )


def _bound(
    issuer: str,
    decode: Callable[[JsonObject], Request],
    decode_answer: Callable[[JsonObject], Response],
    decoder: Callable[[], StreamDecoder],
) -> BoundCodec:
    def encode(request: Request, policy: ReplayPolicy) -> Encoded:
        replayed, warnings = replayable(request, issuer, policy)
        encoded = encode_request(replayed, policy=policy)
        if not warnings:
            return encoded
        return replace(encoded, warnings=(*warnings, *encoded.warnings))

    return BoundCodec(
        name="anthropic",
        http=HTTP if issuer == PROVIDER else replace(HTTP, reasoning_issuer=issuer),
        decode=decode,
        encode=encode,
        decode_answer=decode_answer,
        encode_answer=encode_response,
        decoder=decoder,
        encoder=StreamEncoder,
        error=encode_error,
        usage=decode_usage,
    )
