"""The Responses dialect behind the codec contract, and its HTTP facts."""

from __future__ import annotations

from interlock.codecs._contract import BoundCodec, HttpFacts, IngressPath
from interlock.codecs.openai_responses._errors import encode_error
from interlock.codecs.openai_responses._request import decode_request
from interlock.codecs.openai_responses._request_encode import encode_request
from interlock.codecs.openai_responses._response import decode_response, encode_response
from interlock.codecs.openai_responses._stream_decode import StreamDecoder
from interlock.codecs.openai_responses._stream_encode import StreamEncoder
from interlock.codecs.openai_responses._usage import decode_usage
from interlock.codecs.openai_responses._wire import MINTED
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
    reasoning_issuer="openai",
    minted_id_marker=f"_{MINTED}".encode(),
)


def wire_codec() -> BoundCodec:
    """The Responses codec behind the contract."""
    return BoundCodec(
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
