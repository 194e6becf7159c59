"""JSON helpers shared by the wire codecs."""

from __future__ import annotations


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
