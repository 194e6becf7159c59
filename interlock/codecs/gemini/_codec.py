"""The Gemini dialect behind the codec contract, and its HTTP facts."""

from __future__ import annotations

from interlock.codecs._contract import BoundCodec, HttpFacts, IngressPath
from interlock.codecs.gemini._errors import encode_error
from interlock.codecs.gemini._preflight import EMPTY_CONTENTS
from interlock.codecs.gemini._request import decode_request, encode_request
from interlock.codecs.gemini._response import decode_response, encode_response
from interlock.codecs.gemini._stream import StreamDecoder
from interlock.codecs.gemini._stream_encode import StreamEncoder
from interlock.codecs.gemini._usage import decode_usage
from interlock.transcript import GEMINI_THOUGHT_SIGNATURE

HTTP = HttpFacts(
    ingress=tuple(
        IngressPath(
            path=f"/{version}/models/{{model}}:{method}",
            endpoint=method,
            stream=method == "streamGenerateContent",
        )
        for version in ("v1beta", "v1")  # google-genai uses v1 with a custom base_url
        for method in ("generateContent", "streamGenerateContent")
    ),
    upstream_path="/v1beta/models/{model}:generateContent",
    upstream_stream_path="/v1beta/models/{model}:streamGenerateContent?alt=sse",
    upstream_count_path="/v1beta/models/{model}:countTokens",
    emulator_prefix="",
    auth_header="x-goog-api-key",
    model_in_path=True,
    model_not_found=(
        "models/{model} is not found for API version v1beta, or is not supported for "
        "generateContent."
    ),
    stream_framing="sse-or-json-array",
    error_shape='{"error": {"code", "message", "status"}}',
    opaque_formats=frozenset({GEMINI_THOUGHT_SIGNATURE}),
    provider="google",
    signed_calls=True,
    usage_field="usageMetadata",
    required_fields=(("contents", EMPTY_CONTENTS),),
)


def wire_codec() -> BoundCodec:
    """The Gemini codec behind the contract (the model and stream flag are in the URL)."""
    return BoundCodec(
        name="gemini",
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
