"""A small value valid against a JSON Schema: what an emulated model answers under
structured output (``response_format`` / ``text.format`` / ``responseJsonSchema``).

Covers what SDKs generate (the openai SDK's ``.parse()`` from a pydantic model, Gemini's
``responseSchema`` in OpenAPI form with upper-case type names): ``type`` (one or a list),
``properties`` (every property is given, as strict mode requires), ``items`` and
``minItems``, ``enum``, ``const``, ``anyOf`` / ``oneOf`` / ``allOf`` (the first branch),
``$ref`` into ``$defs`` / ``definitions``, ``nullable``, ``minimum``, ``minLength`` and the
common string ``format`` values. A self-referencing schema stops at :data:`MAX_DEPTH`.
"""

from __future__ import annotations

from typing import cast

from interlock.transcript import JsonObject, JsonValue

MAX_DEPTH = 12
_FORMATS: dict[str, str] = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00",
    "email": "someone@example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "duration": "P1D",
    "ipv4": "127.0.0.1",
}


def example(schema: JsonObject) -> JsonValue:
    """A value that ``schema`` accepts (``None`` where nothing better is known)."""
    return _value(schema, schema, 0)


def _resolve(schema: JsonObject, root: JsonObject) -> JsonObject:
    reference = schema.get("$ref")
    if not isinstance(reference, str) or not reference.startswith("#/"):
        return schema
    target: JsonValue = root
    for step in reference[2:].split("/"):
        target = target.get(step) if isinstance(target, dict) else None
    return cast(JsonObject, target) if isinstance(target, dict) else {}


def _type(schema: JsonObject) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        named = [str(item).lower() for item in kind if str(item).lower() != "null"]
        return named[0] if named else "null"
    return kind.lower() if isinstance(kind, str) else None


def _value(schema: JsonObject, root: JsonObject, depth: int) -> JsonValue:
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches and isinstance(branches[0], dict):
            return _value(cast(JsonObject, branches[0]), root, depth + 1)
    if depth >= MAX_DEPTH:
        return None
    kind = _type(schema)
    if kind == "object" or (kind is None and isinstance(schema.get("properties"), dict)):
        return _object(schema, root, depth)
    if kind == "array":
        items = schema.get("items")
        count = schema.get("minItems")
        count = count if isinstance(count, int) and count > 0 else 1
        item: JsonValue = _value(items, root, depth + 1) if isinstance(items, dict) else None
        return [item] * count
    return _scalar(schema, kind)


def _object(schema: JsonObject, root: JsonObject, depth: int) -> JsonObject:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        name: _value(cast(JsonObject, sub), root, depth + 1) if isinstance(sub, dict) else None
        for name, sub in properties.items()
    }


def _scalar(schema: JsonObject, kind: str | None) -> JsonValue:
    match kind:
        case "string":
            text = _FORMATS.get(str(schema.get("format")), "text")
            length = schema.get("minLength")
            if isinstance(length, int) and len(text) < length:
                text = text + "x" * (length - len(text))
            return text
        case "integer" | "number":
            low = schema.get("minimum")
            return low if isinstance(low, int | float) and not isinstance(low, bool) else 0
        case "boolean":
            return False
        case _:
            return None
