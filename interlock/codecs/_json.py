"""JSON helpers shared by the wire codecs."""

from __future__ import annotations

import json
from typing import cast

import orjson

from interlock.transcript import DecodeError, JsonObject, JsonValue

_MARKS = bytes(
    0x30 if 0x30 <= byte <= 0x39 else 0x5B if byte in b"[{" else 0x20 for byte in range(256)
)
"""A translation of UTF-8 text keeping only where digits (``0``) and brackets (``[``) are."""
_DIGIT_RUN = b"0" * 19
"""Looked for with ``bytes.find``: ``pattern in data`` first tries the pattern as an
integer and raises (then clears) a ``TypeError`` inside, ~1k instructions more per call."""
_SHALLOW = 512
"""A text this long or shorter nests at most 256 levels (orjson and json both take them)."""
_BRACKETS = 256


def loads(text: str) -> JsonValue:
    """``json.loads(text)`` exactly: the same value, or the same exception; parsed by
    orjson (about 3x fewer instructions) whenever orjson cannot answer differently.

    Where the two differ, ``json`` decides: orjson turns an integer beyond 64 bits into a
    float (a text holding a run of 19 digits anywhere goes to ``json``); it refuses ``NaN``
    / ``Infinity``, a number overflowing to infinity, a lone surrogate (escaped or not) and
    everything ``json`` refuses too (on any refusal ``json`` parses again and answers);
    ``json`` refuses nesting deeper than the interpreter's recursion limit while orjson
    takes 1,024 levels (a long text with more than 256 brackets goes to ``json``). Both keep
    the last of repeated keys, members in order and floats correctly rounded.
    """
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return cast(JsonValue, json.loads(text))
    marks = data.translate(_MARKS)
    if marks.find(_DIGIT_RUN) < 0 and (len(data) <= _SHALLOW or marks.count(b"[") <= _BRACKETS):
        try:
            value: JsonValue = orjson.loads(data)  # not cast(): a call, on every chunk
            return value
        except orjson.JSONDecodeError:
            pass
    return cast(JsonValue, json.loads(text))


_OPENERS = frozenset(b"{[")
_SMALL = 4096
"""Up to this many bytes, :func:`loads_utf8` checks the bytes as :func:`loads` does."""


def loads_utf8(data: bytes) -> JsonValue:
    """``json.loads(data)`` exactly (an upstream's answer body): the same value, or the same
    exception; parsed by orjson whenever it cannot answer differently.

    ``json.loads`` reads bytes in the encoding it detects, as UTF-8 (lone surrogates
    passed) unless they start with a byte order mark or a zero byte in their first two:
    so only bytes opening with ``{`` or ``[`` and a non-zero second byte are given to
    orjson, which refuses invalid UTF-8 (encoded surrogates included: ``json`` answers
    those) and otherwise reads the text UTF-8 gives. orjson's value is kept when a walk
    of its containers (:func:`_plain_parse`, no pass over the bytes: a large tool result
    is one string) finds it nested at most 256 levels and holding no float past 2**63,
    where orjson may have read an integer beyond 64 bits (see :func:`loads`); a short
    answer (up to 4 KB) is checked by :func:`loads`' byte rules instead.
    """
    if len(data) < 2 or data[0] not in _OPENERS or not data[1]:
        return cast(JsonValue, json.loads(data))
    if len(data) <= _SMALL:  # a short answer: the byte checks of loads cost less than a walk
        marks = data.translate(_MARKS)
        if marks.find(_DIGIT_RUN) >= 0 or (len(data) > _SHALLOW and marks.count(b"[") > _BRACKETS):
            return cast(JsonValue, json.loads(data))
    try:
        value: JsonValue = orjson.loads(data)
    except orjson.JSONDecodeError:
        return cast(JsonValue, json.loads(data))
    if len(data) <= _SMALL or _plain_parse(value, _BRACKETS):
        return value
    return cast(JsonValue, json.loads(data))


_FLOAT_LIMIT = 2.0**63


def _plain_parse(value: JsonValue, levels: int) -> bool:
    """True when ``value``'s arrays and objects nest at most ``levels`` deep and it holds
    no float of magnitude 2**63 or more."""
    if isinstance(value, dict):
        children = value.values()
    elif isinstance(value, list):
        children = value
    elif isinstance(value, float):
        return -_FLOAT_LIMIT < value < _FLOAT_LIMIT
    else:
        return True
    if levels <= 0:
        return False
    for child in children:
        if isinstance(child, (dict, list, float)) and not _plain_parse(child, levels - 1):
            return False
    return True


_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_SCALAR_TYPES = frozenset({str, int, bool, type(None)})
_DEEP = 32


def compact(value: JsonValue) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``: the same text, or
    the same exception; written by orjson (about 5x fewer instructions) when it cannot
    differ, else by one ``json`` encoder built once.

    orjson writes the same text for objects with string keys, arrays, strings, integers,
    booleans and null, and refuses (so ``json`` answers) an integer beyond 64 bits and a
    lone surrogate. It writes floats differently (``1e-05`` is ``1e-5``, ``NaN`` ``null``)
    and takes types ``json`` refuses (dataclasses, dates, tuples as arrays are alike): so
    ``json`` writes any value holding anything but those exact types, or nested deeper than
    32 levels (a cycle included).
    """
    if _plain(value, 0):
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:
            pass
    return _compact(value)


def _plain(value: JsonValue, depth: int) -> bool:
    """True when ``value`` holds only dicts with string keys, lists and the scalar types
    orjson writes as ``json`` does, at most :data:`_DEEP` levels deep."""
    kind = type(value)
    if kind in _SCALAR_TYPES:
        return True
    if depth > _DEEP:
        return False
    if kind is dict:
        for key, item in cast(JsonObject, value).items():
            if type(key) is not str:
                return False
            if type(item) not in _SCALAR_TYPES and not _plain(item, depth + 1):
                return False
        return True
    if kind is list:
        for item in cast(list[JsonValue], value):
            if type(item) not in _SCALAR_TYPES and not _plain(item, depth + 1):
                return False
        return True
    return False


def check_json(text: str) -> None:
    """Raise what ``json.loads(text)`` raises, if anything (its ``ValueError`` for text it
    refuses); orjson decides faster when it takes the text, as ``json`` then does too (the
    values may differ, see :func:`loads`, but not whether there is one)."""
    if len(text) <= _SHALLOW or text.count("[") + text.count("{") <= _BRACKETS:
        try:
            orjson.loads(text)
            return
        except orjson.JSONDecodeError:
            pass
    json.loads(text)


def type_name(value: object) -> str:
    """The JSON name of ``value``'s type, for decode error messages."""
    match value:
        case None:
            return "null"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case dict():
            return "object"
        case _:
            return type(value).__name__


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
