"""The Responses dialect behind the codec contract, and its HTTP facts."""

from __future__ import annotations

from dataclasses import replace

from interlock.codecs._contract import BoundCodec, HttpFacts, IngressPath
from interlock.codecs.openai_responses._errors import encode_error
from interlock.codecs.openai_responses._request import decode_request
from interlock.codecs.openai_responses._request_encode import encode_request
from interlock.codecs.openai_responses._response import decode_response, encode_response
from interlock.codecs.openai_responses._stream_decode import StreamDecoder
from interlock.codecs.openai_responses._stream_encode import StreamEncoder
from interlock.codecs.openai_responses._usage import decode_usage
from interlock.codecs.openai_responses._wire import MINTED, PROVIDER
from interlock.transcript import OPENAI_ENCRYPTED_CONTENT

HTTP = HttpFacts(
    ingress=(IngressPath(path="/v1/responses", endpoint="responses"),),
    upstream_path="/responses",
    upstream_stream_path="/responses",
    emulator_prefix="/v1",
    auth_header="authorization",
    auth_prefix="Bearer ",
    stream_framing="sse-named",
    error_shape='{"error": {"message", "type", "param", "code"}}',
    opaque_formats=frozenset({OPENAI_ENCRYPTED_CONTENT}),
    provider="openai",
    stateful_service=True,
    reasoning_issuer=PROVIDER,
    minted_id_marker=f"_{MINTED}".encode(),
)


def wire_codec(*, issuer: str = PROVIDER) -> BoundCodec:
    """The Responses codec behind the contract, for the service of vendor ``issuer``.

    Every OpenAI-compatible Responses service (OpenAI, xAI…) encrypts reasoning with its
    own keys and refuses another's ``encrypted_content``. The codec labels the encrypted
    reasoning it decodes with ``issuer`` and replays only ``issuer``'s to the service;
    answers it encodes (for a Responses client) carry encrypted content of any issuer.
    """
    if issuer == PROVIDER:
        return _DEFAULT
    return BoundCodec(
        name="openai-responses",
        http=replace(HTTP, reasoning_issuer=issuer),
        decode=lambda payload: decode_request(payload, issuer=issuer),
        encode=lambda request, policy: encode_request(request, policy=policy, issuer=issuer),
        decode_answer=lambda payload: decode_response(payload, issuer=issuer),
        encode_answer=encode_response,
        decoder=lambda: StreamDecoder(issuer=issuer),
        encoder=StreamEncoder,
        error=encode_error,
        usage=decode_usage,
    )


_DEFAULT = BoundCodec(
    name="openai-responses",
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
