"""OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from interlock.transcript import JsonObject

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
