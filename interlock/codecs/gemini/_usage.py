"""``usageMetadata`` ⇄ canonical :class:`Usage`.

Gemini's ``candidatesTokenCount`` *excludes* thinking (``thoughtsTokenCount``); canonical
``output_tokens`` includes it (OpenAI's convention, trap 31). So ``output_tokens =
candidates + thoughts``, ``reasoning_tokens = thoughts``, and encoding subtracts again.
``toolUsePromptTokenCount`` is kept apart from the prompt. Keys present with value 0, a
missing or inconsistent ``totalTokenCount`` and every other field (token details,
``trafficType``) are recorded in ``extra["gemini"]`` so the round trip is exact.
"""

from __future__ import annotations

from typing import Final

from interlock.codecs.gemini._wire import DIALECT, as_int, as_object, own_extra, split_fields
from interlock.transcript import JsonObject, JsonValue, Usage

_COUNTS: Final = (
    "promptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
)
USAGE_FIELDS: Final = frozenset({*_COUNTS, "totalTokenCount"})


def decode_usage(value: JsonValue, path: str) -> Usage:
    """A wire ``usageMetadata`` object as canonical usage."""
    fields, unknown = split_fields(as_object(value, path), USAGE_FIELDS)
    counts = {key: as_int(fields.get(key, 0), f"{path}.{key}") for key in _COUNTS}
    usage = Usage(
        input_tokens=counts["promptTokenCount"],
        output_tokens=counts["candidatesTokenCount"] + counts["thoughtsTokenCount"],
        reasoning_tokens=counts["thoughtsTokenCount"],
        cached_input_tokens=counts["cachedContentTokenCount"],
        tool_prompt_tokens=counts["toolUsePromptTokenCount"],
    )
    marks: JsonObject = {"fields": unknown} if unknown else {}
    zeros: list[JsonValue] = [key for key in _COUNTS if key in fields and counts[key] == 0]
    if zeros:
        marks["zeros"] = zeros
    if "totalTokenCount" not in fields:
        marks["noTotal"] = True
    else:
        total = as_int(fields["totalTokenCount"], f"{path}.totalTokenCount")
        if total != usage.total_tokens:
            marks["totalTokenCount"] = total
    if not marks:
        return usage
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        tool_prompt_tokens=usage.tool_prompt_tokens,
        extra={DIALECT: marks},
    )


def encode_usage(usage: Usage) -> JsonObject:
    """Canonical usage as a wire ``usageMetadata`` object."""
    marks = own_extra(usage.extra)
    zeros = marks.get("zeros")
    kept = set(zeros) if isinstance(zeros, list) else set[JsonValue]()
    counts = {
        "promptTokenCount": usage.input_tokens,
        "cachedContentTokenCount": usage.cached_input_tokens,
        "candidatesTokenCount": max(usage.output_tokens - usage.reasoning_tokens, 0),
        "thoughtsTokenCount": usage.reasoning_tokens,
        "toolUsePromptTokenCount": usage.tool_prompt_tokens,
    }
    wire: JsonObject = {key: count for key, count in counts.items() if count or key in kept}
    if not marks.get("noTotal"):
        total = marks.get("totalTokenCount")
        wire["totalTokenCount"] = total if isinstance(total, int) else usage.total_tokens
    fields = marks.get("fields")
    if isinstance(fields, dict):
        wire.update(fields)
    return wire
