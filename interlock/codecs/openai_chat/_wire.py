"""Shared vocabulary of the Chat Completions codec: dialect keys and typed JSON access.

Unknown wire fields travel in ``extra[DIALECT]`` of the part, message or request they came
with, verbatim. Layout facts that the canonical model has no field for (``content`` was a
list, ``max_tokens`` instead of ``max_completion_tokens``, a custom tool call…) travel in
``extra[LAYOUT]``; only this codec reads either key. Together they make a same-dialect
round trip exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias

# The shared JSON accessors, re-exported so this dialect's modules import them from here.
from interlock.codecs._json import (
    as_bool as as_bool,
)
from interlock.codecs._json import (
    as_int as as_int,
)
from interlock.codecs._json import (
    as_list as as_list,
)
from interlock.codecs._json import (
    as_number as as_number,
)
from interlock.codecs._json import (
    as_object as as_object,
)
from interlock.codecs._json import (
    as_str,
)
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    OPENROUTER_REASONING_DETAIL,
    DecodeError,
    JsonObject,
    JsonValue,
)

DIALECT = "openai-chat"
"""The key this codec uses in ``Part.extra`` / ``Message.extra`` / ``Request.extra``."""

LAYOUT = "openai-chat:layout"
"""Codec-private layout hints, never wire fields (see the module docstring)."""

ReasoningDialect: TypeAlias = Literal[
    "none", "reasoning_content", "reasoning", "openrouter", "gemini-compat"
]
"""Where an upstream carries reasoning on Chat messages (provider-wire.md §2.3).

``none``: nowhere (OpenAI). ``reasoning_content``: DeepSeek's raw-text sibling of
``content``. ``reasoning``: vLLM / flat OpenRouter raw text. ``openrouter``:
``reasoning_details`` kept whole and in order. ``gemini-compat``: Gemini's OpenAI
compatibility endpoint, thought signatures in ``extra_content.google``.
"""

REASONING_DIALECTS: tuple[ReasoningDialect, ...] = (
    "none",
    "reasoning_content",
    "reasoning",
    "openrouter",
    "gemini-compat",
)

GOOGLE_SIGNATURE = GEMINI_THOUGHT_SIGNATURE
OPENROUTER_DETAIL = OPENROUTER_REASONING_DETAIL
OPENAI_ENCRYPTED = "openai.responses.encrypted_content"


def required(obj: JsonObject, key: str, path: str) -> JsonValue:
    """``obj[key]``; a missing key is a :class:`DecodeError` naming ``path.key``."""
    if key not in obj:
        raise DecodeError(join(path, key), "required field is missing")
    return obj[key]


def optional_str(obj: JsonObject, key: str, path: str) -> str | None:
    """``obj[key]`` as a string; absent or ``null`` gives ``None``."""
    value = obj.get(key)
    return None if value is None else as_str(value, join(path, key))


def join(path: str, key: str) -> str:
    """``path.key`` (just ``key`` at the top level)."""
    return f"{path}.{key}" if path else key


def rest(obj: Mapping[str, JsonValue], consumed: frozenset[str] | set[str]) -> JsonObject:
    """The fields of ``obj`` this codec did not consume, in wire order."""
    return {key: value for key, value in obj.items() if key not in consumed}


def extra_of(extra: Mapping[str, JsonObject], key: str = DIALECT) -> JsonObject:
    """This codec's entry in an ``extra`` mapping (empty when absent)."""
    return extra.get(key, {})


def with_extra(unknown: JsonObject, layout: JsonObject | None = None) -> dict[str, JsonObject]:
    """An ``extra`` mapping holding only the non-empty entries."""
    out: dict[str, JsonObject] = {}
    if unknown:
        out[DIALECT] = unknown
    if layout:
        out[LAYOUT] = layout
    return out


def merge_unknown(built: JsonObject, extra: Mapping[str, JsonObject]) -> JsonObject:
    """``built`` plus the unknown wire fields kept at decode; built fields win."""
    unknown = extra.get(DIALECT)
    if not unknown:
        return built
    merged = dict(built)
    for key, value in unknown.items():
        if key not in merged:
            merged[key] = value
    return merged


def shadow(outer: JsonObject, key: str, inner: JsonObject) -> JsonObject:
    """Unknown fields of an object plus, under ``key``, those of its nested ``key`` object."""
    if inner:
        return {**outer, key: inner}
    return outer


def unshadow(built_inner: JsonObject, unknown: JsonObject, key: str) -> JsonObject:
    """``built_inner`` plus the nested unknown fields :func:`shadow` kept under ``key``."""
    kept = unknown.get(key)
    if not isinstance(kept, dict):
        return built_inner
    return {**built_inner, **{k: v for k, v in kept.items() if k not in built_inner}}


def outer_unknown(unknown: JsonObject, key: str) -> dict[str, JsonObject]:
    """An ``extra`` mapping of the outer unknown fields (without the nested ``key``)."""
    outer = {k: v for k, v in unknown.items() if k != key}
    return {DIALECT: outer} if outer else {}


def nested(obj: JsonObject, *keys: str) -> JsonValue:
    """``obj[k1][k2]…`` or ``None`` when any level is missing or not an object."""
    current: JsonValue = obj
    for key in keys:
        if not isinstance(current, dict):
            return None
        current = current.get(key)
    return current
