"""Structured output (:class:`~interlock.transcript.ResponseFormat`) in each dialect's wire form.

* Chat: ``response_format`` ``{"type": "text" | "json_object"}`` or
  ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"?, "description"?}}``.
* Responses: ``text.format``, the same but flat: ``{"type": "json_schema", "name", "schema", …}``.
* Gemini: ``generationConfig.responseMimeType`` (``text/plain`` / ``application/json``) with
  ``responseJsonSchema`` (JSON Schema) or ``responseSchema`` (the OpenAPI 3.0 subset).

A wire value is decoded only when encoding the result gives it back exactly; anything else
(an unknown key, another MIME type) stays verbatim in the decoder's kept fields, so a
same-dialect round trip is exact either way. Across dialects the schema is carried as is,
except that an OpenAPI schema sent to OpenAI is converted (:func:`json_schema`): upper-case
type names become lower-case and ``nullable: true`` becomes a ``"null"`` type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, cast

from interlock.transcript import JsonObject, JsonValue, ResponseFormat

_KINDS = ("text", "json_object", "json_schema")
_META = ("name", "description", "strict")
DEFAULT_NAME = "response"
"""OpenAI requires a schema name; Gemini has none, so one coming from Gemini is called this."""


def _schema_meta(value: Mapping[str, JsonValue]) -> ResponseFormat | None:
    schema, name, description, strict = (
        value.get("schema"),
        value.get("name"),
        value.get("description"),
        value.get("strict"),
    )
    if not isinstance(schema, dict) or not isinstance(name, str):
        return None
    if description is not None and not isinstance(description, str):
        return None
    if strict is not None and not isinstance(strict, bool):
        return None
    return ResponseFormat(
        type="json_schema", schema=schema, name=name, description=description, strict=strict
    )


def _meta(response_format: ResponseFormat) -> JsonObject:
    out: JsonObject = {"name": response_format.name or DEFAULT_NAME}
    if response_format.description is not None:
        out["description"] = response_format.description
    out["schema"] = json_schema(response_format)
    if response_format.strict is not None:
        out["strict"] = response_format.strict
    return out


def _exactly(value: JsonValue, decoded: ResponseFormat | None, encoded: JsonValue) -> bool:
    return decoded is not None and encoded == value


def decode_chat(value: JsonValue) -> ResponseFormat | None:
    """Chat ``response_format`` → canonical, or ``None`` to keep it verbatim."""
    decoded = _plain(value)
    if decoded is None and isinstance(value, dict) and value.get("type") == "json_schema":
        inner = value.get("json_schema")
        if isinstance(inner, dict) and set(value) == {"type", "json_schema"}:
            decoded = _schema_meta(inner)
    if decoded is None or not _exactly(value, decoded, encode_chat(decoded)):
        return None
    return decoded


def encode_chat(response_format: ResponseFormat) -> JsonObject:
    """Canonical → Chat ``response_format``."""
    if response_format.type != "json_schema":
        return {"type": response_format.type}
    return {"type": "json_schema", "json_schema": _meta(response_format)}


def decode_responses(value: JsonValue) -> ResponseFormat | None:
    """Responses ``text.format`` → canonical, or ``None`` to keep it verbatim."""
    decoded = _plain(value)
    if decoded is None and isinstance(value, dict) and value.get("type") == "json_schema":
        decoded = _schema_meta(value)
    if decoded is None or not _exactly(value, decoded, encode_responses(decoded)):
        return None
    return decoded


def encode_responses(response_format: ResponseFormat) -> JsonObject:
    """Canonical → Responses ``text.format``."""
    if response_format.type != "json_schema":
        return {"type": response_format.type}
    return {"type": "json_schema", **_meta(response_format)}


def _plain(value: JsonValue) -> ResponseFormat | None:
    if isinstance(value, dict) and len(value) == 1 and value.get("type") in _KINDS[:2]:
        return ResponseFormat(type=cast(Literal["text", "json_object"], value["type"]))
    return None


GEMINI_KEYS = ("responseMimeType", "responseJsonSchema", "responseSchema")


def decode_gemini(config: Mapping[str, JsonValue]) -> ResponseFormat | None:
    """The structured-output keys of a ``generationConfig`` → canonical, or ``None``."""
    mime = config.get("responseMimeType")
    json_form, openapi_form = config.get("responseJsonSchema"), config.get("responseSchema")
    decoded: ResponseFormat | None = None
    if mime == "text/plain" and json_form is None and openapi_form is None:
        decoded = ResponseFormat(type="text")
    elif mime == "application/json":
        if isinstance(json_form, dict) and openapi_form is None:
            decoded = ResponseFormat(type="json_schema", schema=json_form)
        elif isinstance(openapi_form, dict) and json_form is None:
            decoded = ResponseFormat(
                type="json_schema", schema=openapi_form, schema_dialect="openapi"
            )
        elif json_form is None and openapi_form is None:
            decoded = ResponseFormat(type="json_object")
    return decoded


def encode_gemini(response_format: ResponseFormat) -> tuple[JsonObject, list[str]]:
    """Canonical → ``generationConfig`` keys, and the metadata Gemini has no field for."""
    dropped = [
        key
        for key in ("description", "strict")
        if getattr(response_format, key) not in (None, False)
    ]
    if response_format.type == "text":
        return {"responseMimeType": "text/plain"}, dropped
    fields: JsonObject = {"responseMimeType": "application/json"}
    if response_format.type == "json_schema" and response_format.schema is not None:
        key = (
            "responseSchema"
            if response_format.schema_dialect == "openapi"
            else "responseJsonSchema"
        )
        fields[key] = response_format.schema
    return fields, dropped


def json_schema(response_format: ResponseFormat) -> JsonObject:
    """The schema as JSON Schema (an OpenAPI-subset schema converted)."""
    schema = response_format.schema or {}
    if response_format.schema_dialect == "json_schema":
        return schema
    return openapi_to_json_schema(schema)


def openapi_to_json_schema(schema: JsonObject) -> JsonObject:
    """An OpenAPI-subset schema (Gemini ``Schema``: upper-case ``type``, ``nullable``) as JSON
    Schema; a schema that is JSON Schema already comes back equal."""
    converted = _from_openapi(schema)
    assert isinstance(converted, dict)
    return converted


_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
"""Keywords whose value maps names (never keywords) to subschemas."""
_SCHEMA_ONE = frozenset({"items", "additionalProperties", "not"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})


def _from_openapi(value: JsonValue) -> JsonValue:
    """One schema converted; only subschema positions are walked (a property named ``type``
    or ``nullable``, an ``enum`` or ``default`` value, are data and stay as they are)."""
    if not isinstance(value, dict):
        return value
    out: JsonObject = {}
    for key, item in value.items():
        if key == "type" and isinstance(item, str):
            out[key] = item.lower()
        elif key == "nullable" and isinstance(item, bool):
            continue
        elif key in _SCHEMA_MAPS and isinstance(item, dict):
            out[key] = {name: _from_openapi(entry) for name, entry in item.items()}
        elif key in _SCHEMA_ONE:
            out[key] = _from_openapi(item)
        elif key in _SCHEMA_LISTS and isinstance(item, list):
            out[key] = [_from_openapi(entry) for entry in item]
        else:
            out[key] = item
    if value.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out
