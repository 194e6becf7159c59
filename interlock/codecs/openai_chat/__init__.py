"""OpenAI Chat Completions codec: requests, responses and streams, both ways.

Pure and synchronous. Reasoning travels per upstream *reasoning dialect*
(:data:`ReasoningDialect`): ``none``, ``reasoning_content``, ``reasoning``,
``openrouter`` or ``gemini-compat``; decoding reads every carrier it sees.
"""

from interlock.codecs.openai_chat._codec import HTTP, wire_codec
from interlock.codecs.openai_chat._errors import encode_error
from interlock.codecs.openai_chat._executed import vendor_response_fields
from interlock.codecs.openai_chat._pairing import PairingViolation, find_pairing_violation
from interlock.codecs.openai_chat._request import decode_request, encode_request
from interlock.codecs.openai_chat._response import decode_response, encode_response
from interlock.codecs.openai_chat._stream_decode import StreamDecoder
from interlock.codecs.openai_chat._stream_encode import StreamEncoder
from interlock.codecs.openai_chat._wire import DIALECT, REASONING_DIALECTS, ReasoningDialect

__all__ = [
    "DIALECT",
    "HTTP",
    "REASONING_DIALECTS",
    "PairingViolation",
    "ReasoningDialect",
    "StreamDecoder",
    "StreamEncoder",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
    "find_pairing_violation",
    "vendor_response_fields",
    "wire_codec",
]
