"""Wire constants, typed accessors for untrusted JSON, and the extra/hint convention.

Every wire field the canonical model does not name is kept verbatim in
``extra[DIALECT]`` of the part, message or request it came with. Besides those, the
codec records a few *shape hints* there, under keys starting with ``~`` (no OpenAI field
starts with ``~``):

* ``~absent``: fields the encoder adds by default but that were absent on the wire;
* ``~content`` / ``~output``: ``"string"`` or ``"list"`` when the wire used the other
  form than the encoder's default;
* ``~item``: on the first part of a multi-part item (message, reasoning), the item's own
  leftover fields; its presence also marks an item boundary;
* ``~instructions``: on the leading system message that came from ``instructions``;
* ``~raw``: a content part the canonical model cannot name, carried verbatim.

A hint is recorded only when the wire differs from what the encoder would produce by
default, so canonical values without hints encode to the default shapes and decode back
unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from interlock.codecs._json import type_name
from interlock.transcript import (
    OPENAI_ENCRYPTED_CONTENT,
    UNKNOWN_ISSUER,
    DecodeError,
    Extra,
    JsonObject,
    JsonValue,
    Opaque,
)

DIALECT = "openai-responses"
PROVIDER = "openai"
ENCRYPTED_FORMAT = OPENAI_ENCRYPTED_CONTENT
ENCRYPTED_INCLUDE = "reasoning.encrypted_content"
LOGPROBS_INCLUDE = "message.output_text.logprobs"
"""The ``include`` entry that asks for the answer's token log-probabilities."""

MINTED = "interlock_"
"""Follows the type prefix (``msg_``, ``rs_``, ``fc_``) of every item id this codec mints.

OpenAI's item ids are the prefix and hexadecimal digits, so no id the service issued
starts this way. A minted id names nothing stored upstream: sent back to a Responses
service it fails with 404 ``Item with id '…' not found.`` (provider-wire §1.6), so the
decoder drops it (:func:`server_item_id`).
"""
MINTED_PREFIXES = ("msg", "rs", "fc")

ABSENT = "~absent"
ITEM = "~item"
_NO_KEYS: frozenset[str] = frozenset()


def encrypted(data: str, issuer: str = PROVIDER) -> Opaque:
    """The envelope for a Responses ``encrypted_content`` blob issued by ``issuer``.

    ``issuer`` is the vendor of the service that produced it (``openai``, ``xai``…): every
    OpenAI-compatible Responses service encrypts reasoning with its own keys and refuses
    another's blob, so the format alone does not say where the blob may go back to.
    """
    return Opaque(provider=issuer, format=ENCRYPTED_FORMAT, data=data)


def is_encrypted(opaque: Opaque) -> bool:
    """True for a Responses ``encrypted_content`` blob of any issuer (what an answer to a
    Responses client carries: the client holds it and sends it back)."""
    return opaque.format == ENCRYPTED_FORMAT and isinstance(opaque.data, str)


def is_own_opaque(opaque: Opaque, issuer: str = PROVIDER) -> bool:
    """True for payloads this codec may replay to the service of ``issuer``: its own
    encrypted reasoning, or encrypted reasoning of unrecorded issuer (``UNKNOWN_ISSUER``:
    a client's history; the service judges it)."""
    return opaque.provider in (issuer, UNKNOWN_ISSUER) and is_encrypted(opaque)


def is_minted(item_id: str) -> bool:
    """True for an item id this codec minted (never one a service issued)."""
    prefix, _, rest = item_id.partition("_")
    return prefix in MINTED_PREFIXES and rest.startswith(MINTED)


def server_item_id(data: JsonObject, path: str) -> str | None:
    """The item's ``id`` when a service could have issued it; a minted id reads as none."""
    item_id = optional_str(data, "id", path)
    if item_id is None or is_minted(item_id):
        return None
    return item_id


# ---------------------------------------------------------------- reading untrusted JSON


def join(path: str, key: str) -> str:
    """``path.key`` (or ``key`` at the top level)."""
    return f"{path}.{key}" if path else key


def as_object(value: object, path: str) -> JsonObject:
    """``value`` as a JSON object, or a :class:`DecodeError` naming ``path``."""
    if not isinstance(value, dict):
        raise DecodeError(path, f"expected an object, got {type_name(value)}")
    return cast(JsonObject, value)


def as_list(value: object, path: str) -> list[JsonValue]:
    """``value`` as a JSON array, or a :class:`DecodeError` naming ``path``."""
    if not isinstance(value, list):
        raise DecodeError(path, f"expected an array, got {type_name(value)}")
    return cast("list[JsonValue]", value)


def required_str(data: JsonObject, key: str, path: str) -> str:
    """A required string field."""
    if key not in data:
        raise DecodeError(join(path, key), "required field is missing")
    return string(data[key], join(path, key))


def string(value: object, path: str) -> str:
    """``value`` as a string."""
    if not isinstance(value, str):
        raise DecodeError(path, f"expected a string, got {type_name(value)}")
    return value


def optional_str(data: JsonObject, key: str, path: str) -> str | None:
    """An optional, nullable string field."""
    value = data.get(key)
    return None if value is None else string(value, join(path, key))


def optional_bool(data: JsonObject, key: str, path: str) -> bool | None:
    """An optional, nullable boolean field."""
    value = data.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise DecodeError(join(path, key), f"expected a boolean, got {type_name(value)}")


def optional_number(data: JsonObject, key: str, path: str) -> float | None:
    """An optional, nullable number field (booleans are not numbers)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DecodeError(join(path, key), f"expected a number, got {type_name(value)}")
    return value


def optional_int(data: JsonObject, key: str, path: str) -> int | None:
    """An optional, nullable integer field."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(join(path, key), f"expected an integer, got {type_name(value)}")
    return value


# ---------------------------------------------------------------- extras and hints


def split_fields(
    data: Mapping[str, JsonValue],
    known: Iterable[str],
    defaults: Mapping[str, JsonValue] | None = None,
) -> JsonObject:
    """The fields of ``data`` the codec does not map, plus ``~absent`` for missing defaults.

    A field equal to its default is not kept (the encoder re-adds it); a default field
    that is absent is listed under ``~absent`` (the encoder leaves it out).
    """
    skip = set(known)
    defaults = defaults or {}
    out: JsonObject = {}
    for key, value in data.items():
        if key in skip or (key in defaults and value == defaults[key]):
            continue
        out[key] = value
    absent: list[JsonValue] = [key for key in defaults if key not in data]
    if absent:
        out[ABSENT] = absent
    return out


def merge_fields(
    core: JsonObject, kept: Mapping[str, JsonValue], defaults: Mapping[str, JsonValue] | None = None
) -> JsonObject:
    """Inverse of :func:`split_fields`: ``core`` plus defaults not marked absent plus kept fields.

    ``core`` wins over a kept field of the same name (the canonical value is current).
    """
    if not kept and not defaults:
        return core
    absent = kept.get(ABSENT)
    absent_keys = set(cast("list[str]", absent)) if isinstance(absent, list) else _NO_KEYS
    out = dict(core)
    for key, value in kept.items():
        if not key.startswith("~") and key not in out:
            out[key] = value
    for key, value in (defaults or {}).items():
        if key not in absent_keys and key not in out:
            out[key] = value
    return out


def own(extra: Extra) -> JsonObject:
    """This dialect's slot of ``extra`` (empty when absent)."""
    return extra.get(DIALECT) or {}


def wrap(fields: JsonObject) -> Extra:
    """``fields`` as an ``extra`` mapping (empty when there is nothing to keep)."""
    return {DIALECT: fields} if fields else {}


def hint(extra: Extra, key: str) -> JsonValue:
    """One shape hint (or ``None``)."""
    return own(extra).get(key)
