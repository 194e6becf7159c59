"""``usage`` both ways.

``completion_tokens`` includes reasoning tokens (OpenAI's convention, like canonical
``output_tokens``). Detail fields the canonical model does not name stay in
``Usage.extra[DIALECT]`` under their detail object, so the wire shape round-trips.

DeepSeek counts its context cache in ``prompt_cache_hit_tokens`` (prompt tokens read from
the cache: canonical ``cached_input_tokens``) and ``prompt_cache_miss_tokens`` (the rest of
``prompt_tokens``); its answers recorded in the corpus also send
``prompt_tokens_details.cached_tokens``, equal to the hits, and that wins when present. The
two DeepSeek counters stay as they came, for a Chat client.

Groq's compound systems add a per-model ``usage_breakdown`` beside ``usage`` (a stream: in
the last chunk's ``x_groq``): canonical ``Usage.breakdown``, each model's usage a Chat usage.
"""

from __future__ import annotations

from interlock.codecs.openai_chat._fields import AS_DECODED, FieldPolicy
from interlock.codecs.openai_chat._wire import (
    DIALECT,
    LAYOUT,
    as_int,
    as_object,
    extra_of,
    rest,
    with_extra,
)
from interlock.transcript import JsonObject, JsonValue, ModelUsage, Usage

_DETAILS = {
    "prompt_tokens_details": "cached_tokens",
    "completion_tokens_details": "reasoning_tokens",
}


_COUNTS = ("prompt_tokens", "completion_tokens")
CACHE_HITS = "prompt_cache_hit_tokens"
"""DeepSeek's count of prompt tokens read from its context cache."""


def _count(usage: JsonObject, key: str, path: str) -> int:
    value = usage.get(key)
    return 0 if value is None else as_int(value, f"{path}.{key}")


def decode_usage(value: JsonValue, path: str) -> Usage:
    """A Chat ``usage`` object."""
    plain = plain_usage(value)
    if plain is not None:
        return plain
    usage = as_object(value, path)
    counts: dict[str, int] = {}
    unknown = rest(usage, {"prompt_tokens", "completion_tokens", "total_tokens", *_DETAILS})
    for detail, field in _DETAILS.items():
        if detail not in usage:
            continue
        raw = usage[detail]
        # The detail object is kept whole (its other counters, its very presence); the
        # canonical count overwrites its field on encode.
        unknown[detail] = raw
        if raw is None:
            continue
        details = as_object(raw, f"{path}.{detail}")
        if details.get(field) is not None:
            counts[field] = as_int(details[field], f"{path}.{detail}.{field}")
    hits = usage.get(CACHE_HITS)
    layout: JsonObject = {}
    if "cached_tokens" not in counts and hits is not None:
        counts["cached_tokens"] = as_int(hits, f"{path}.{CACHE_HITS}")
        layout["cached_as_hits"] = True  # no details object to write back
    # Databricks streams send ``null`` counts in the chunks before the last (not counted yet).
    nulls = [key for key in _COUNTS if key in usage and usage[key] is None]
    prompt, completion = (_count(usage, key, path) for key in _COUNTS)
    reasoning = counts.get("reasoning_tokens", 0)
    total = usage.get("total_tokens")
    if nulls:
        layout["null_counts"] = list[JsonValue](nulls)
    extra = with_extra({}, layout)
    if reasoning and total == prompt + completion + reasoning:
        # Gemini's compatibility endpoint counts thinking outside completion_tokens
        # (provider-wire.md trap 31); canonical output tokens include it.
        completion += reasoning
        extra = with_extra({}, {**extra_of(extra, LAYOUT), "completion_excludes_reasoning": True})
    elif total != prompt + completion:
        unknown["total_tokens"] = total
    if unknown:
        extra[DIALECT] = unknown
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        reasoning_tokens=reasoning,
        cached_input_tokens=counts.get("cached_tokens", 0),
        extra=extra,
    )


def plain_usage(value: JsonValue) -> Usage | None:
    """The commonest usage decoded directly: integer ``prompt_tokens`` and
    ``completion_tokens``, their sum as ``total_tokens``, and at most the two detail objects
    (each an object whose canonical count, if any, is an integer). ``None`` for anything
    else. Equal to what the general path gives for it: the detail objects kept whole in
    ``extra``, nothing else left over."""
    if not isinstance(value, dict):
        return None
    prompt = value.get("prompt_tokens")
    completion = value.get("completion_tokens")
    total = value.get("total_tokens")
    if type(prompt) is not int or type(completion) is not int or type(total) is not int:
        return None
    if total != prompt + completion:
        return None
    size = len(value)
    if size == 3:
        return Usage(input_tokens=prompt, output_tokens=completion, extra={})
    kept: JsonObject = {}
    counts = [0, 0]
    for at, (detail, field) in enumerate(_DETAILS.items()):
        if detail not in value:
            continue
        details = value[detail]
        if not isinstance(details, dict):
            return None
        count = details.get(field, 0)
        if type(count) is not int:
            return None
        kept[detail], counts[at] = details, count
    if size != 3 + len(kept):
        return None  # another key: the general path keeps it
    cached, reasoning = counts
    return Usage(
        input_tokens=prompt,
        output_tokens=completion,
        reasoning_tokens=reasoning,
        cached_input_tokens=cached,
        extra={DIALECT: kept},
    )


def encode_usage(usage: Usage, fields: FieldPolicy = AS_DECODED) -> JsonObject:
    """A Chat ``usage`` object (Gemini's tool-use prompt tokens count as prompt tokens).

    Vendor counters (OpenRouter's ``cost``, DeepSeek's cache counts…) go out as ``fields``
    admits them; Gemini-compat's thinking-outside-``completion_tokens`` convention is
    kept only for a Gemini-compat (or as-decoded) client.
    """
    unknown = extra_of(fields.kept(usage.extra, "usage", "usage"))
    prompt = usage.input_tokens + usage.tool_prompt_tokens
    completion = usage.output_tokens
    excludes = extra_of(usage.extra, LAYOUT).get("completion_excludes_reasoning")
    if excludes and fields.dialect in (None, "gemini-compat"):
        completion -= usage.reasoning_tokens
    out: JsonObject = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + usage.output_tokens,
    }
    if "total_tokens" in unknown:
        out["total_tokens"] = unknown["total_tokens"]
    nulls = extra_of(usage.extra, LAYOUT).get("null_counts")
    for key in _COUNTS:
        if isinstance(nulls, list) and key in nulls and out[key] == 0:
            out[key] = None  # sent as null (not counted yet), written back the same
    values = {
        "cached_tokens": usage.cached_input_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }
    if extra_of(usage.extra, LAYOUT).get("cached_as_hits") and CACHE_HITS in unknown:
        values["cached_tokens"] = 0  # said by the DeepSeek counter it came in
        unknown = {**unknown, CACHE_HITS: usage.cached_input_tokens}
    for detail, field in _DETAILS.items():
        kept = unknown.get(detail)
        details: JsonObject = dict(kept) if isinstance(kept, dict) else {}
        if values[field] or field in details:
            details[field] = values[field]
        if details or detail in unknown:
            out[detail] = details if details or kept is not None else None
    return {**out, **{k: v for k, v in unknown.items() if k not in out}}


def decode_breakdown(value: JsonValue, path: str) -> tuple[ModelUsage, ...] | None:
    """Groq's ``usage_breakdown`` (``{"models": [{"model", "usage"}, …]}``, a compound
    system's per-model usage), or ``None`` when it holds anything else (then kept verbatim
    as an unknown field)."""
    if not isinstance(value, dict) or set(value) != {"models"}:
        return None
    models = value["models"]
    if not isinstance(models, list) or not models:
        return None
    entries: list[ModelUsage] = []
    for i, entry in enumerate(models):
        if not isinstance(entry, dict) or set(entry) != {"model", "usage"}:
            return None
        model, usage = entry["model"], entry["usage"]
        if not isinstance(model, str) or not isinstance(usage, dict):
            return None
        entries.append(
            ModelUsage(model=model, usage=decode_usage(usage, f"{path}.models[{i}].usage"))
        )
    return tuple(entries)


def encode_breakdown(breakdown: tuple[ModelUsage, ...], fields: FieldPolicy) -> JsonObject:
    """Groq's ``usage_breakdown`` of a canonical breakdown."""
    models: list[JsonValue] = [
        {"model": entry.model, "usage": encode_usage(entry.usage, fields)} for entry in breakdown
    ]
    return {"models": models}
