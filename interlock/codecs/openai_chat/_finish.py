"""``finish_reason`` both ways; the wire value is always kept as the native reason."""

from __future__ import annotations

from interlock.transcript import FinishReason

_DECODE: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "eos": "stop",  # Together (and other TGI/vLLM-backed services): the model's end of sequence
}
_ENCODE: dict[FinishReason, str] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
    "refusal": "stop",
    "error": "stop",
    "other": "stop",
}


def decode_finish_reason(native: str) -> FinishReason:
    """The canonical reason for a Chat ``finish_reason`` (vendor values become ``other``)."""
    return _DECODE.get(native, "other")


def encode_finish_reason(reason: FinishReason | None, native: str | None) -> str:
    """The Chat ``finish_reason``.

    The native value is sent back when it is Chat's own (it decodes to ``reason``), so a
    same-dialect round trip is exact; another dialect's native value (Gemini ``SAFETY``,
    ``STOP``) is mapped from the canonical reason instead.
    """
    if native is not None and native.islower() and decode_finish_reason(native) == reason:
        return native
    return _ENCODE[reason or "stop"]
