"""Anthropic Messages wire names and the small typed readers every module shares.

Fields the canonical model does not name are kept verbatim in ``extra["anthropic"]`` of the
object they came with (``fields``), so the same-dialect round trip is exact.
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
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    UNKNOWN_ISSUER,
    JsonObject,
    JsonValue,
    Opaque,
)

DIALECT: Final = "anthropic"
"""The key this codec uses in ``Part.extra`` / ``Message.extra`` / ``Request.extra``."""

PROVIDER: Final = "anthropic"
"""The vendor of the dialect's own service: the default issuer named on the opaque payloads
this codec decodes (a codec bound to another vendor names that one, see :mod:`._vendors`)."""

API_VERSION: Final = "2023-06-01"
"""The ``anthropic-version`` this codec speaks (requests it encodes carry no 2026-10-21 rules)."""

DEFAULT_MAX_TOKENS: Final = 4096
"""``max_tokens`` is required by Anthropic; used when a request from another dialect has none."""

MIN_THINKING_BUDGET: Final = 1024
"""The smallest ``thinking.budget_tokens`` the service accepts."""


def split(value: JsonObject, known: frozenset[str]) -> tuple[JsonObject, JsonObject]:
    """``value`` split into its known fields and the rest (kept verbatim)."""
    fields: JsonObject = {}
    rest: JsonObject = {}
    for key, item in value.items():
        (fields if key in known else rest)[key] = item
    return fields, rest


def thinking_signature(data: str, issuer: str = PROVIDER) -> Opaque:
    """A thinking block's signature (exactly as received) as the canonical opaque envelope,
    issued by vendor ``issuer``."""
    return Opaque(provider=issuer, format=ANTHROPIC_THINKING_SIGNATURE, data=data)


def redacted_thinking(data: str, issuer: str = PROVIDER) -> Opaque:
    """A ``redacted_thinking`` block's ``data`` as the canonical opaque envelope."""
    return Opaque(provider=issuer, format=ANTHROPIC_REDACTED_THINKING, data=data)


def is_own(opaque: Opaque | None, format: str, issuer: str = PROVIDER) -> bool:
    """True when ``opaque`` is a payload of ``format`` with string data that the service of
    vendor ``issuer`` accepts: its own, or of unrecorded issuer (a client's history, which
    the service judges)."""
    return (
        is_signed(opaque, format)
        and opaque is not None
        and opaque.provider
        in (
            issuer,
            UNKNOWN_ISSUER,
        )
    )


def is_signed(opaque: Opaque | None, format: str) -> bool:
    """True when ``opaque`` is a payload of ``format`` with string data, whichever vendor's
    Anthropic-compatible service issued it (what an answer to a client carries)."""
    return opaque is not None and opaque.format == format and isinstance(opaque.data, str)


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
