"""Gemini REST wire field names and the small typed readers every module shares.

The REST API speaks camelCase; proto3-JSON servers also accept the original snake_case
names (and some clients and recordings send them), so every field name is normalised with
:func:`camel` before lookup. Output is always camelCase (a snake_case ``thinking_budget``
has been seen silently ignored, provider-wire.md §3.1). Fields the canonical model does not
name are kept in ``extra["gemini"]`` of the object they came with, under their camelCase
name with the value verbatim (user data inside is never renamed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, cast

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
    as_str as as_str,
)
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    JsonObject,
    JsonValue,
    Opaque,
)

DIALECT: Final = "gemini"
"""The key this codec uses in ``Part.extra`` / ``Message.extra`` / ``Request.extra``."""

SIGNATURE_PROVIDER: Final = "google"
SIGNATURE_FORMAT: Final = GEMINI_THOUGHT_SIGNATURE

MINTED_ID_PREFIX: Final = "gcall_"
"""Prefix of call ids minted for function calls that arrived without one."""

_CAMEL_CACHE: dict[str, str] = {}


def camel(key: str) -> str:
    """``thought_signature`` → ``thoughtSignature``; camelCase keys are unchanged."""
    cached = _CAMEL_CACHE.get(key)
    if cached is not None:
        return cached
    head, *rest = key.split("_")
    result = head + "".join(word[:1].upper() + word[1:] for word in rest) if rest else key
    if len(_CAMEL_CACHE) < 4096:
        _CAMEL_CACHE[key] = result
    return result


def split_fields(
    value: Mapping[str, JsonValue], known: frozenset[str]
) -> tuple[dict[str, JsonValue], JsonObject]:
    """Split an object into its known fields and the rest, both under camelCase names (the
    values are kept verbatim)."""
    fields: dict[str, JsonValue] = {}
    unknown: JsonObject = {}
    for key, item in value.items():
        name = key if key in known else camel(key)
        if name in known:
            fields[name] = item
        else:
            unknown[name] = item
    return fields, unknown


def camel_fields(value: Mapping[str, JsonValue]) -> JsonObject:
    """The object with its own field names camelCased; values verbatim (one level only)."""
    return {camel(key): item for key, item in value.items()}


def field(value: Mapping[str, JsonValue], name: str) -> JsonValue:
    """The field ``name`` (camelCase) of a wire object in either spelling; ``None`` if absent."""
    if name in value:
        return value[name]
    for key, item in value.items():
        if "_" in key and camel(key) == name:
            return item
    return None


def signature(data: str) -> Opaque:
    """A Gemini thought signature as the canonical opaque envelope (data exactly as received)."""
    return Opaque(provider=SIGNATURE_PROVIDER, format=SIGNATURE_FORMAT, data=data)


def is_signature(opaque: Opaque | None) -> bool:
    """True when ``opaque`` is a Gemini thought signature this codec may replay."""
    return (
        opaque is not None
        and opaque.provider == SIGNATURE_PROVIDER
        and opaque.format == SIGNATURE_FORMAT
        and isinstance(opaque.data, str)
    )


def own_extra(extra: Mapping[str, JsonObject]) -> JsonObject:
    """This dialect's entry of an ``extra`` mapping (empty when absent)."""
    return extra.get(DIALECT) or {}


def object_entry(extra: JsonObject, key: str) -> JsonObject:
    """A JSON-object entry of this codec's extra (empty when absent or not an object)."""
    value = extra.get(key)
    return cast(JsonObject, value) if isinstance(value, dict) else {}


USER_DATA_FIELDS: Final = frozenset(
    {
        "args",
        "response",
        "parameters",
        "parametersJsonSchema",
        "responseSchema",
        "responseJsonSchema",
        "labels",
        "partMetadata",
    }
)
"""Fields whose value is the caller's data (call arguments, tool results, schemas, labels):
its keys are never field names and are never renamed."""


def wire_spelling(value: JsonValue) -> JsonValue:
    """``value`` with every Gemini field name camelCased, user data left as it is.

    Decoding treats both spellings alike and encoding writes camelCase, so a payload sent in
    snake_case comes back as ``wire_spelling(payload)``; the conformance runner compares
    same-dialect round trips in this spelling.
    """
    if isinstance(value, list):
        return [wire_spelling(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: JsonObject = {}
    for key, item in value.items():
        name = camel(key)
        out[name] = item if name in USER_DATA_FIELDS else wire_spelling(item)
    return out
