"""OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from interlock.codecs._failures import named_code
from interlock.transcript import JsonObject, JsonValue, StreamFailed

_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    429: "rate_limit_error",
}


def error_type(status: int) -> str:
    """OpenAI's error ``type`` for an HTTP status."""
    if status >= 500:
        return "server_error"
    return _TYPES.get(status, "invalid_request_error")


def encode_error(
    status: int, message: str, *, code: str | None = None, param: str | None = None
) -> JsonObject:
    """The error body OpenAI returns with ``status`` (every key present, ``null`` when unset)."""
    return {"error": {"message": message, "type": error_type(status), "param": param, "code": code}}


def failure_body(update: StreamFailed) -> JsonObject:
    """The ``error`` of an in-band failure chunk: OpenAI's error object, its ``type`` from the
    failure's HTTP status (500 when unknown); an integer code (OpenRouter's) stays an integer."""
    status = update.status or 500
    code: JsonValue = update.code if named_code(update) is not None else status
    return {"message": update.message, "type": error_type(status), "param": None, "code": code}
