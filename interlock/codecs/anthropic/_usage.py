"""``usage`` ⇄ canonical :class:`Usage`.

Anthropic's ``input_tokens`` counts only uncached input: the total is ``input_tokens +
cache_creation_input_tokens + cache_read_input_tokens``. The canonical ``input_tokens`` is
that total (OpenAI's convention), ``cached_input_tokens`` the cache reads; cache writes and
every other field (``cache_creation``, ``service_tier``, ``server_tool_use``…) stay in
``extra["anthropic"]``. ``output_tokens`` includes thinking (``output_tokens_details``).
"""

from __future__ import annotations

from typing import Final

from interlock.codecs.anthropic._wire import DIALECT, as_int, as_object, own_extra, split
from interlock.transcript import JsonObject, JsonValue, Usage

_KNOWN: Final = frozenset(
    {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
)


def _count(value: JsonValue, path: str) -> int:
    return 0 if value is None else as_int(value, path)


def decode_usage(value: JsonValue, path: str) -> Usage:
    """A wire ``usage`` object as canonical usage."""
    fields, rest = split(as_object(value, path), _KNOWN)
    uncached = _count(fields.get("input_tokens"), f"{path}.input_tokens")
    written = _count(
        fields.get("cache_creation_input_tokens"), f"{path}.cache_creation_input_tokens"
    )
    read = _count(fields.get("cache_read_input_tokens"), f"{path}.cache_read_input_tokens")
    details = rest.get("output_tokens_details")
    thinking = details.get("thinking_tokens") if isinstance(details, dict) else None
    own: JsonObject = {"fields": rest} if rest else {}
    for key in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        if key in fields:
            own[key] = fields[key]
    return Usage(
        input_tokens=uncached + written + read,
        output_tokens=_count(fields.get("output_tokens"), f"{path}.output_tokens"),
        reasoning_tokens=thinking
        if isinstance(thinking, int) and not isinstance(thinking, bool)
        else 0,
        cached_input_tokens=read,
        extra={DIALECT: own} if own else {},
    )


def encode_usage(usage: Usage | None) -> JsonObject:
    """The wire ``usage`` (zeros when unknown; cache fields when known or non-zero)."""
    if usage is None:
        return {"input_tokens": 0, "output_tokens": 0}
    own = own_extra(usage.extra)
    written = own.get("cache_creation_input_tokens")
    written_count = written if isinstance(written, int) else 0
    # Gemini's tool-use prompt tokens are input tokens here (trap 31).
    prompt = usage.input_tokens + usage.tool_prompt_tokens
    wire: JsonObject = {"input_tokens": max(0, prompt - usage.cached_input_tokens - written_count)}
    if "cache_creation_input_tokens" in own:
        wire["cache_creation_input_tokens"] = written
    if "cache_read_input_tokens" in own or usage.cached_input_tokens:
        wire["cache_read_input_tokens"] = (
            usage.cached_input_tokens
            if usage.cached_input_tokens or own.get("cache_read_input_tokens") is not None
            else None
        )
    wire["output_tokens"] = usage.output_tokens
    fields = own.get("fields")
    if isinstance(fields, dict):
        wire.update(fields)
    elif usage.reasoning_tokens and DIALECT not in usage.extra:
        wire["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    return wire
