"""Gemini's error body: ``{"error": {"code": <http status>, "message", "status": <rpc code>}}``."""

from __future__ import annotations

from typing import Final

from interlock.transcript import JsonObject

_RPC_STATUS: Final = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    412: "FAILED_PRECONDITION",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
    529: "UNAVAILABLE",
}
"""google/rpc/code.proto's HTTP mapping, read backwards; a bad gateway (502, a proxy's word
for an upstream that failed) and Anthropic's overloaded (529) are ``UNAVAILABLE``, as gRPC
maps an intermediary's 502 and 503."""
RPC_STATUSES: Final = frozenset(
    {*_RPC_STATUS.values(), "OUT_OF_RANGE", "ALREADY_EXISTS", "DATA_LOSS", "UNKNOWN"}
)


def rpc_status(status: int) -> str:
    """The google.rpc status name Gemini pairs with an HTTP status."""
    known = _RPC_STATUS.get(status)
    if known is not None:
        return known
    return "INVALID_ARGUMENT" if 400 <= status < 500 else "INTERNAL" if status >= 500 else "UNKNOWN"


def encode_error(
    status: int, message: str, *, code: str | None = None, param: str | None = None
) -> JsonObject:
    """Gemini's error body for ``status``.

    ``code`` may be a google.rpc status name (``"NOT_FOUND"``), used as ``status``; any
    other code (``"lossy_history"``) and ``param`` travel in a ``google.rpc.ErrorInfo``
    detail, the place Google's APIs put machine-readable reasons.
    """
    error: JsonObject = {
        "code": status,
        "message": message,
        "status": code if code in RPC_STATUSES else rpc_status(status),
    }
    if (code is not None and code not in RPC_STATUSES) or param is not None:
        info: JsonObject = {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": code or rpc_status(status),
            "domain": "interlock",
        }
        if param is not None:
            info["metadata"] = {"param": param}
        error["details"] = [info]
    return {"error": error}
