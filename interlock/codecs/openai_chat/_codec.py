"""The Chat Completions dialect behind the codec contract, and its HTTP facts.

The reasoning dialect is a per-upstream option: it decides how reasoning travels and which
opaque formats this codec carries (OpenRouter details, Gemini signatures via the
compatibility endpoint).
"""

from __future__ import annotations

from dataclasses import replace

from interlock.codecs._contract import BoundCodec, HttpFacts, IngressPath
from interlock.codecs.openai_chat._errors import encode_error
from interlock.codecs.openai_chat._request import decode_request, encode_request
from interlock.codecs.openai_chat._response import decode_response, encode_response
from interlock.codecs.openai_chat._stream_decode import StreamDecoder
from interlock.codecs.openai_chat._stream_encode import StreamEncoder
from interlock.codecs.openai_chat._usage import decode_usage
from interlock.codecs.openai_chat._wire import ReasoningDialect
from interlock.transcript import GEMINI_THOUGHT_SIGNATURE, OPENROUTER_REASONING_DETAIL

HTTP = HttpFacts(
    ingress=(IngressPath(path="/v1/chat/completions", endpoint="chat.completions"),),
    upstream_path="/chat/completions",
    upstream_stream_path="/chat/completions",
    emulator_prefix="/v1",
    auth_header="authorization",
    auth_prefix="Bearer ",
    stream_framing="sse",
    error_shape='{"error": {"message", "type", "param", "code"}}',
    provider="openai",
)

_CARRIES: dict[str, frozenset[str]] = {
    "openrouter": frozenset({OPENROUTER_REASONING_DETAIL}),
    "gemini-compat": frozenset({GEMINI_THOUGHT_SIGNATURE}),
}


def wire_codec(
    reasoning_dialect: ReasoningDialect = "none", include_usage: bool = False
) -> BoundCodec:
    """The Chat codec for an upstream (or client) of ``reasoning_dialect``.

    ``include_usage``: stream encoders send the usage chunk (a client asked for it).
    """
    return BoundCodec(
        name="openai-chat",
        http=replace(
            HTTP,
            opaque_formats=_CARRIES.get(reasoning_dialect, frozenset()),
            signed_calls=reasoning_dialect == "gemini-compat",
            reasoning_issuer="openrouter" if reasoning_dialect == "openrouter" else "",
        ),
        decode=decode_request,
        encode=lambda request, policy: encode_request(
            request, policy=policy, reasoning_dialect=reasoning_dialect
        ),
        decode_answer=decode_response,
        encode_answer=lambda response: encode_response(
            response, reasoning_dialect=reasoning_dialect
        ),
        decoder=StreamDecoder,
        encoder=lambda: StreamEncoder(
            reasoning_dialect=reasoning_dialect, include_usage=include_usage
        ),
        error=encode_error,
        usage=decode_usage,
    )
