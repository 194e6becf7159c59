"""A failure a provider reports *in-band* (in a stream whose HTTP status already said 200),
folded into one :class:`StreamFailed` whatever dialect wrote it.

Each provider says the failure its own way:

* OpenRouter: an HTTP-like integer ``code`` (``{"error": {"code": 502, "message": …}}``);
* OpenAI (Chat chunks, Responses ``error`` / ``response.failed``): a string ``code`` or
  ``type`` (``server_error``, ``rate_limit_exceeded``);
* Anthropic: the error ``type`` of an ``error`` event (``overloaded_error``);
* Gemini: the HTTP status in ``code`` and the google.rpc name in ``status``.

:func:`failure` keeps the provider's code as a string (an integer as its digits) and sets
``status`` to the HTTP status any of these imply (:data:`STATUS_OF_CODE`), so that every
encoder can say the failure in its own dialect's terms: a Gemini client gets that status as
``code`` with the google.rpc name of it, an Anthropic client the error type of it.
"""

from __future__ import annotations

from typing import Final

from interlock.transcript import JsonValue, StreamFailed

STATUS_OF_CODE: Final = {
    # OpenAI error codes and types
    "server_error": 500,
    "rate_limit_exceeded": 429,
    "insufficient_quota": 429,
    "invalid_prompt": 400,
    "context_length_exceeded": 400,
    "invalid_api_key": 401,
    "model_not_found": 404,
    # Anthropic error types
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "conflict_error": 409,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
    # google.rpc status names (their HTTP mapping in google/rpc/code.proto)
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INTERNAL": 500,
    "DATA_LOSS": 500,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""The HTTP status each provider's string error code stands for."""


def _http_status(value: JsonValue) -> int | None:
    """``value`` when it is an HTTP-like status (an integer from 100 to 599)."""
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
        return value
    return None


def failure(
    code: JsonValue, message: str, status: JsonValue = None, *, implies: bool = True
) -> StreamFailed:
    """The stream failure a provider reported with ``code`` (string or integer) and an
    optional HTTP ``status``: the status given, else the one ``code`` implies (unless
    ``implies`` is false: a coarse category such as an OpenAI error ``type`` standing in for
    a missing code, which could be anything), else none."""
    text = code if isinstance(code, str) and code else "error" if code is None else str(code)
    implied = (_http_status(code) or STATUS_OF_CODE.get(text)) if implies else None
    return StreamFailed(code=text, message=message, status=_http_status(status) or implied)


def named_code(update: StreamFailed) -> str | None:
    """The failure's code unless it only repeats its status's digits (OpenRouter's
    integer codes): what a dialect with separate code and status fields writes as code."""
    return None if update.status is not None and update.code == str(update.status) else update.code
