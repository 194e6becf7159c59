"""The Anthropic Messages (``POST /v1/messages``) codec.

Pure and synchronous: wire JSON ⇄ the canonical transcript, both directions, for requests,
responses, streams and errors. See ``docs/codecs/anthropic.md`` for the mapping and the
replay policy. Thinking signatures and redacted thinking are replayed exactly, and only to
Anthropic (``anthropic.thinking_signature`` / ``anthropic.redacted_thinking``).

Beyond the codec contract, :func:`find_violation` applies the service's own request rules
(envelope, thinking settings, alternating roles, tool pairing, leading thinking block) as a
pure pre-flight; the encoder and the emulator use it.
"""

from interlock.codecs.anthropic._codec import HTTP, wire_codec
from interlock.codecs.anthropic._effort import LEVELS as EFFORT_LEVELS
from interlock.codecs.anthropic._effort import EffortSupport, effort_support
from interlock.codecs.anthropic._errors import encode_error, error_type
from interlock.codecs.anthropic._request import decode_request, encode_request
from interlock.codecs.anthropic._response import decode_response, encode_response
from interlock.codecs.anthropic._rules import Violation, find_violation
from interlock.codecs.anthropic._stream_decode import StreamDecoder
from interlock.codecs.anthropic._stream_encode import StreamEncoder
from interlock.codecs.anthropic._wire import API_VERSION, DIALECT

__all__ = [
    "API_VERSION",
    "DIALECT",
    "EFFORT_LEVELS",
    "HTTP",
    "EffortSupport",
    "StreamDecoder",
    "StreamEncoder",
    "Violation",
    "decode_request",
    "decode_response",
    "effort_support",
    "encode_error",
    "encode_request",
    "encode_response",
    "error_type",
    "find_violation",
    "wire_codec",
]
