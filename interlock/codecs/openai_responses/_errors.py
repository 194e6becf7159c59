"""OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from interlock.transcript import JsonObject


def error_type(status: int) -> str:
    """The ``error.type`` OpenAI uses for an HTTP status."""
    if status >= 500:
        return "server_error"
    if status == 429:
        return "rate_limit_exceeded"
    if status == 403:
        return "permission_error"
    return "invalid_request_error"


def encode_error(
    status: int, message: str, *, code: str | None = None, param: str | None = None
) -> JsonObject:
    """The error body the service returns with ``status``."""
    return {"error": {"message": message, "type": error_type(status), "param": param, "code": code}}
