"""Anthropic's error body: ``{"type": "error", "error": {"type", "message"}}``."""

from __future__ import annotations

from typing import Final

from interlock.transcript import JsonObject

_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def error_type(status: int) -> str:
    """Anthropic's ``error.type`` for an HTTP status (other 4xx are ``invalid_request_error``)."""
    known = _TYPES.get(status)
    if known is not None:
        return known
    return "api_error" if status >= 500 else "invalid_request_error"


def encode_error(
    status: int, message: str, *, code: str | None = None, param: str | None = None
) -> JsonObject:
    """The error body Anthropic returns with ``status``.

    ``code`` (a stable cause such as ``lossy_history``) travels as ``details.error_code``,
    where Anthropic puts its own stable codes; ``param`` as ``details.param``.
    """
    error: JsonObject = {"type": error_type(status), "message": message}
    details: JsonObject = {}
    if code is not None:
        details["error_code"] = code
    if param is not None:
        details["param"] = param
    if details:
        error["details"] = details
    return {"type": "error", "error": error}
