"""Usage and finish reasons.

``usage.output_tokens`` already includes ``output_tokens_details.reasoning_tokens``
(provider-wire §1.3), which is also the canonical convention, so nothing is added.
Finish: ``status`` + ``incomplete_details.reason`` → a canonical finish reason, and the
native value (the incomplete reason, else the status) is kept so nothing collapses.
"""

from __future__ import annotations

from typing import cast

from interlock.codecs.openai_responses._wire import (
    as_object,
    merge_fields,
    optional_int,
    own,
    split_fields,
    wrap,
)
from interlock.transcript import FinishReason, JsonObject, JsonValue, Usage

_DETAIL_DEFAULTS: dict[str, JsonObject] = {
    # The SDK's ``Response`` model requires ``cache_write_tokens`` (openai 3.57).
    "input_tokens_details": {"cache_write_tokens": 0},
    "output_tokens_details": {},
}
STATUSES = frozenset({"completed", "failed", "in_progress", "cancelled", "queued", "incomplete"})
_INCOMPLETE: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
    "max_messages": "other",
    "steered": "other",
}


def plain_usage(value: JsonValue) -> Usage | None:
    """The commonest ``usage`` object (the service's five fields, its details exactly
    ``cached_tokens`` with ``cache_write_tokens: 0`` and ``reasoning_tokens``, integers, the
    total their sum) as :func:`decode_usage` decodes it; ``None`` for any other value."""
    if not isinstance(value, dict) or len(value) != 5:
        return None
    given, produced, total = (
        value.get("input_tokens"),
        value.get("output_tokens"),
        value.get("total_tokens"),
    )
    inputs, outputs = value.get("input_tokens_details"), value.get("output_tokens_details")
    if type(given) is not int or type(produced) is not int or type(total) is not int:
        return None
    if not isinstance(inputs, dict) or not isinstance(outputs, dict):
        return None
    if len(inputs) != 2 or len(outputs) != 1:
        return None
    cached, write, reasoning = (
        inputs.get("cached_tokens"),
        inputs.get("cache_write_tokens"),
        outputs.get("reasoning_tokens"),
    )
    if type(cached) is not int or type(write) is not int or type(reasoning) is not int:
        return None
    if write != 0 or total != given + produced:
        return None
    return Usage(
        input_tokens=given,
        output_tokens=produced,
        reasoning_tokens=reasoning,
        cached_input_tokens=cached,
        extra={},
    )


def decode_usage(value: JsonValue, path: str) -> Usage:
    """A ``usage`` object; unknown detail fields are kept in ``extra``."""
    plain = plain_usage(value)
    if plain is not None:
        return plain
    data = as_object(value, path)
    fields = split_fields(
        data,
        {
            "input_tokens",
            "output_tokens",
            "total_tokens",
            "input_tokens_details",
            "output_tokens_details",
        },
    )
    cached = reasoning = 0
    for key, inner in (
        ("input_tokens_details", "cached_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
    ):
        if key not in data:
            fields[f"~no_{key}"] = True
            continue
        details = as_object(data[key], f"{path}.{key}")
        amount = optional_int(details, inner, f"{path}.{key}") or 0
        cached, reasoning = (amount, reasoning) if inner == "cached_tokens" else (cached, amount)
        rest = split_fields(details, {inner} if inner in details else set(), _DETAIL_DEFAULTS[key])
        if rest:
            fields[f"~{key}"] = rest
    usage = Usage(
        input_tokens=optional_int(data, "input_tokens", path) or 0,
        output_tokens=optional_int(data, "output_tokens", path) or 0,
        reasoning_tokens=reasoning,
        cached_input_tokens=cached,
    )
    total = optional_int(data, "total_tokens", path)
    if total != usage.total_tokens:
        fields["~total"] = total
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        reasoning_tokens=reasoning,
        cached_input_tokens=cached,
        extra=wrap(fields),
    )


def encode_usage(usage: Usage) -> JsonObject:
    """The wire ``usage`` object (details always present, as the service sends them)."""
    fields = own(usage.extra)
    total = fields.get("~total", usage.total_tokens)
    # Gemini's tool-use prompt tokens are prompt tokens here, as in the total (trap 31).
    body: JsonObject = {"input_tokens": usage.input_tokens + usage.tool_prompt_tokens}
    for key, inner, amount in (
        ("input_tokens_details", "cached_tokens", usage.cached_input_tokens),
        ("output_tokens_details", "reasoning_tokens", usage.reasoning_tokens),
    ):
        if fields.get(f"~no_{key}") is True:
            continue
        rest = fields.get(f"~{key}")
        kept = cast(JsonObject, rest) if isinstance(rest, dict) else {}
        body[key] = merge_fields({inner: amount}, kept, _DETAIL_DEFAULTS[key])
    body["output_tokens"] = usage.output_tokens
    body["total_tokens"] = total
    ordered: JsonObject = {
        key: body[key]
        for key in (
            "input_tokens",
            "input_tokens_details",
            "output_tokens",
            "output_tokens_details",
            "total_tokens",
        )
        if key in body
    }
    return merge_fields(ordered, fields)


def decode_finish(
    status: str | None, reason: str | None, has_calls: bool
) -> tuple[FinishReason | None, str | None]:
    """``(finish_reason, native_finish_reason)`` from a status and an incomplete reason."""
    match status:
        case "completed":
            return ("tool_calls" if has_calls else "stop"), "completed"
        case "incomplete":
            return _INCOMPLETE.get(reason or "", "other"), reason or "incomplete"
        case "failed":
            return "error", "failed"
        case "cancelled":
            return "other", "cancelled"
        case _:
            return None, status


def encode_finish(finish: FinishReason | None, native: str | None) -> tuple[str, JsonObject | None]:
    """``(status, incomplete_details)`` for a canonical finish (native value first)."""
    if native in STATUSES and native != "incomplete":
        return native, None
    if native == "incomplete":
        return "incomplete", None
    if native is not None and native in _INCOMPLETE:
        return "incomplete", {"reason": native}
    match finish:
        case "length":
            return "incomplete", {"reason": "max_output_tokens"}
        case "content_filter":
            return "incomplete", {"reason": "content_filter"}
        case "error":
            return "failed", None
        case _:
            return "completed", None  # a response being encoded is finished: never in_progress
