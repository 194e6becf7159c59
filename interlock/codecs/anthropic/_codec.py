"""The Anthropic Messages dialect behind the codec contract, and its HTTP facts."""

from __future__ import annotations

from dataclasses import replace

from interlock.codecs._contract import BoundCodec, HttpFacts, IngressPath
from interlock.codecs.anthropic._errors import encode_error
from interlock.codecs.anthropic._request import decode_request, encode_request
from interlock.codecs.anthropic._response import decode_response, encode_response
from interlock.codecs.anthropic._stream_decode import StreamDecoder
from interlock.codecs.anthropic._stream_encode import StreamEncoder
from interlock.codecs.anthropic._usage import decode_usage
from interlock.codecs.anthropic._wire import API_VERSION, PROVIDER
from interlock.transcript import ANTHROPIC_REDACTED_THINKING, ANTHROPIC_THINKING_SIGNATURE

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
    with its own keys and refuses another's signature: the codec names the payloads it
    decodes as ``issuer``'s and replays only ``issuer``'s (and a client's, of unrecorded
    issuer) to the service (:mod:`._vendors`); answers it encodes carry any vendor's.
    """
    if issuer == PROVIDER:
        return _DEFAULT
    return BoundCodec(
        name="anthropic",
        http=replace(HTTP, reasoning_issuer=issuer),
        decode=lambda payload: decode_request(payload, issuer),
        encode=lambda request, policy: encode_request(request, policy=policy, issuer=issuer),
        decode_answer=lambda payload: decode_response(payload, issuer),
        encode_answer=encode_response,
        decoder=lambda: StreamDecoder(issuer),
        encoder=StreamEncoder,
        error=encode_error,
        usage=decode_usage,
    )


_DEFAULT = BoundCodec(
    name="anthropic",
    http=HTTP,
    decode=decode_request,
    encode=lambda request, policy: encode_request(request, policy=policy),
    decode_answer=decode_response,
    encode_answer=encode_response,
    decoder=StreamDecoder,
    encoder=StreamEncoder,
    error=encode_error,
    usage=decode_usage,
)
