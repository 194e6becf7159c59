"""Anthropic Messages wire names and the small typed readers every module shares.

Fields the canonical model does not name are kept verbatim in ``extra["anthropic"]`` of the
object they came with (``fields``), so the same-dialect round trip is exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

from interlock.codecs._json import type_name
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    DecodeError,
    JsonObject,
    JsonValue,
    Opaque,
)

DIALECT: Final = "anthropic"
"""The key this codec uses in ``Part.extra`` / ``Message.extra`` / ``Request.extra``."""

PROVIDER: Final = "anthropic"
"""The issuer named on every opaque payload this codec decodes."""

API_VERSION: Final = "2023-06-01"
"""The ``anthropic-version`` this codec speaks (requests it encodes carry no 2026-10-21 rules)."""

DEFAULT_MAX_TOKENS: Final = 4096
"""``max_tokens`` is required by Anthropic; used when a request from another dialect has none."""

MIN_THINKING_BUDGET: Final = 1024
"""The smallest ``thinking.budget_tokens`` the service accepts."""


def as_object(value: JsonValue, path: str) -> JsonObject:
    """``value`` as a JSON object, or :class:`DecodeError` naming ``path``."""
    if not isinstance(value, dict):
        raise DecodeError(path, f"expected an object, got {type_name(value)}")
    return value


def as_list(value: JsonValue, path: str) -> list[JsonValue]:
    """``value`` as a JSON array, or :class:`DecodeError` naming ``path``."""
    if not isinstance(value, list):
        raise DecodeError(path, f"expected an array, got {type_name(value)}")
    return value


def as_str(value: JsonValue, path: str) -> str:
    """``value`` as a string, or :class:`DecodeError` naming ``path``."""
    if not isinstance(value, str):
        raise DecodeError(path, f"expected a string, got {type_name(value)}")
    return value


def as_int(value: JsonValue, path: str) -> int:
    """``value`` as an integer (bools refused), or :class:`DecodeError` naming ``path``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(path, f"expected an integer, got {type_name(value)}")
    return value


def as_number(value: JsonValue, path: str) -> float:
    """``value`` as a number (bools refused), or :class:`DecodeError` naming ``path``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DecodeError(path, f"expected a number, got {type_name(value)}")
    return value


def as_bool(value: JsonValue, path: str) -> bool:
    """``value`` as a boolean, or :class:`DecodeError` naming ``path``."""
    if not isinstance(value, bool):
        raise DecodeError(path, f"expected a boolean, got {type_name(value)}")
    return value


def split(value: JsonObject, known: frozenset[str]) -> tuple[JsonObject, JsonObject]:
    """``value`` split into its known fields and the rest (kept verbatim)."""
    fields: JsonObject = {}
    rest: JsonObject = {}
    for key, item in value.items():
        (fields if key in known else rest)[key] = item
    return fields, rest


def thinking_signature(data: str) -> Opaque:
    """A thinking block's signature as the canonical opaque envelope (exactly as received)."""
    return Opaque(provider=PROVIDER, format=ANTHROPIC_THINKING_SIGNATURE, data=data)


def redacted_thinking(data: str) -> Opaque:
    """A ``redacted_thinking`` block's ``data`` as the canonical opaque envelope."""
    return Opaque(provider=PROVIDER, format=ANTHROPIC_REDACTED_THINKING, data=data)


def is_own(opaque: Opaque | None, format: str) -> bool:
    """True when ``opaque`` is an Anthropic payload of ``format`` with string data."""
    return (
        opaque is not None
        and opaque.provider == PROVIDER
        and opaque.format == format
        and isinstance(opaque.data, str)
    )


def own_extra(extra: Mapping[str, JsonObject]) -> JsonObject:
    """This dialect's entry of an ``extra`` mapping (empty when absent)."""
    return extra.get(DIALECT) or {}


def object_entry(extra: JsonObject, key: str) -> JsonObject:
    """A JSON-object entry of this codec's extra (empty when absent or not an object)."""
    value = extra.get(key)
    return cast(JsonObject, value) if isinstance(value, dict) else {}


def marks(**entries: JsonValue) -> dict[str, JsonObject]:
    """An ``extra`` mapping holding this dialect's non-empty entries (``{}`` when none)."""
    kept: JsonObject = {key: value for key, value in entries.items() if value}
    return {DIALECT: kept} if kept else {}
