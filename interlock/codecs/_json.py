"""JSON helpers shared by the wire codecs."""

from __future__ import annotations

import json
import re
from typing import cast

import orjson

from interlock.transcript import DecodeError, JsonObject, JsonValue

_LONG_DIGITS = re.compile(r"[0-9]{19}")
_BRACKETS_ORJSON_TAKES = 256


def loads(text: str) -> JsonValue:
    """``json.loads(text)`` exactly: the same value, or the same exception; parsed by
    orjson (3-5x faster) whenever orjson cannot answer differently.

    Where the two differ, the text goes to ``json``: orjson turns an integer beyond 64 bits
    into a float (any run of 19 digits, even inside a string, goes to ``json``); it refuses
    ``NaN`` / ``Infinity``, a number overflowing to infinity, a lone surrogate escape,
    invalid UTF-8 and everything ``json`` refuses too (on any refusal ``json`` parses again
    and decides); ``json`` refuses nesting deeper than the interpreter's recursion limit
    while orjson takes 1,024 levels (a text with more than 256 brackets goes to ``json``).
    Both keep the last of repeated keys, members in order and floats correctly rounded.
    """
    if (
        text.count("[") + text.count("{") <= _BRACKETS_ORJSON_TAKES
        and _LONG_DIGITS.search(text) is None
    ):
        try:
            return cast(JsonValue, orjson.loads(text))
        except orjson.JSONDecodeError:
            pass
    return cast(JsonValue, json.loads(text))


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
