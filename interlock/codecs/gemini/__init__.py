"""The Gemini ``generateContent`` / ``streamGenerateContent`` codec (REST, camelCase).

Pure and synchronous: wire JSON ⇄ the canonical transcript, both directions, for requests,
responses, streams and errors. See ``docs/codecs/gemini.md`` for the mapping and the
replay policy.

Beyond the codec contract, :func:`find_violation` applies the service's own request checks
(unknown fields, function turn rules, current-turn thought signatures) as a pure
pre-flight; the emulator and the gateway use it.
"""

from interlock.codecs.gemini._codec import HTTP, wire_codec
from interlock.codecs.gemini._errors import encode_error
from interlock.codecs.gemini._preflight import Violation, find_violation
from interlock.codecs.gemini._request import decode_request, encode_request
from interlock.codecs.gemini._response import decode_response, encode_response
from interlock.codecs.gemini._stream import StreamDecoder
from interlock.codecs.gemini._stream_encode import StreamEncoder
from interlock.codecs.gemini._wire import DIALECT, wire_spelling

__all__ = [
    "DIALECT",
    "HTTP",
    "StreamDecoder",
    "StreamEncoder",
    "Violation",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
    "find_violation",
    "wire_codec",
    "wire_spelling",
]
