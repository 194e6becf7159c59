"""The OpenAI Responses codec (``POST /v1/responses``): requests, responses and streams.

Pure and synchronous. See ``docs/codecs/openai_responses.md`` for the mapping and the
replay rules.
"""

from interlock.codecs.openai_responses._codec import HTTP, wire_codec
from interlock.codecs.openai_responses._errors import encode_error
from interlock.codecs.openai_responses._request import decode_request
from interlock.codecs.openai_responses._request_encode import encode_request
from interlock.codecs.openai_responses._response import decode_response, encode_response
from interlock.codecs.openai_responses._stream_decode import StreamDecoder
from interlock.codecs.openai_responses._stream_encode import StreamEncoder
from interlock.codecs.openai_responses._wire import DIALECT, ENCRYPTED_FORMAT

__all__ = [
    "DIALECT",
    "ENCRYPTED_FORMAT",
    "HTTP",
    "StreamDecoder",
    "StreamEncoder",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_response",
    "wire_codec",
]
