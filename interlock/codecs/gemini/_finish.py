"""Gemini ``finishReason`` ⇄ canonical finish reason.

The native value is always kept in ``Response.native_finish_reason`` (traps 24 and 32), so
``SAFETY`` vs ``RECITATION`` or ``UNEXPECTED_TOOL_CALL`` vs ``MALFORMED_FUNCTION_CALL``
survive a same-dialect round trip. Gemini has no "tool_calls" reason: a function-calling
response ends with ``STOP``, which decodes to ``tool_calls`` when the message holds calls.
"""

from __future__ import annotations

from typing import Final

from interlock.codecs.gemini._wire import field
from interlock.transcript import FinishReason, JsonObject

_TO_CANONICAL: Final[dict[str, FinishReason]] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MODEL_ARMOR": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error",
    "MISSING_THOUGHT_SIGNATURE": "error",
    "MALFORMED_RESPONSE": "error",
}
"""Everything else (``LANGUAGE``, ``OTHER``, ``NO_IMAGE``, ``CONTINUATION``…) is ``other``."""

NATIVE_REASONS: Final = frozenset(
    {
        *_TO_CANONICAL,
        "FINISH_REASON_UNSPECIFIED",
        "LANGUAGE",
        "OTHER",
        "NO_IMAGE",
        "IMAGE_OTHER",
        "ESCALATION",
        "PUP_LIMITED_DISABLED",
        "CONTINUATION",
    }
)
"""The ``FinishReason`` enum of google-genai 3.6.1."""

_TO_NATIVE: Final[dict[FinishReason, str]] = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
    "refusal": "SAFETY",
    "error": "OTHER",
    "other": "OTHER",
}


def decode_finish(native: str, has_calls: bool) -> FinishReason:
    """The canonical reason for a wire ``finishReason``."""
    reason = _TO_CANONICAL.get(native, "other")
    if reason == "stop" and has_calls:
        return "tool_calls"
    return reason


def prompt_block(payload: JsonObject) -> str | None:
    """``promptFeedback.blockReason`` of a response without candidates: the prompt was
    refused. It is a content-filter finish with that native reason, never an empty success."""
    if field(payload, "candidates"):
        return None
    feedback = field(payload, "promptFeedback")
    reason = field(feedback, "blockReason") if isinstance(feedback, dict) else None
    return reason if isinstance(reason, str) and reason else None


def encode_finish(
    reason: FinishReason | None, native: str | None, *, foreign: bool = False
) -> str | None:
    """The wire ``finishReason``: the native value when it is Gemini's own, else mapped.

    A finished answer from another dialect with no finish (a Chat stream that ended on
    ``[DONE]`` alone) is ``STOP``: a Gemini client takes a candidate without
    ``finishReason`` for one cut short. A Gemini answer without one keeps it absent.
    """
    if native is not None and native in NATIVE_REASONS:
        return native
    if reason is None:
        return "STOP" if foreign else None
    return _TO_NATIVE[reason]
