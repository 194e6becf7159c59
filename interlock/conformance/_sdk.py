"""Encoded payloads checked against the official SDK types, item by item.

OpenAI's request types are ``TypedDict``s: validating a whole body against the
non-discriminated item union produces hundreds of errors, and pydantic silently *drops* unknown
keys (``extra="forbid"`` only reaches the outermost dict). So each item is dispatched on its
``type`` (Chat messages on ``role``) to its single TypedDict, validated, and the validated value
(lazy iterators consumed) is compared with the input: a key present in the input but absent
after validation is an unknown key — at any depth. Response-side OpenAI models keep unknown
fields in ``model_extra``, which is walked the same way. google-genai models forbid unknown
fields themselves (REST camelCase accepted through their aliases).

Each function returns a list of problems (``path: message``); empty means valid.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any, cast

from google.genai import types as genai
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessageParam,
    ChatCompletionToolUnionParam,
)
from openai.types.chat.completion_create_params import CompletionCreateParamsBase
from openai.types.responses import Response as OpenAIResponse
from openai.types.responses import ResponseStreamEvent
from openai.types.responses.response_create_params import ResponseCreateParamsBase
from openai.types.responses.response_input_item_param import ResponseInputItemParam
from openai.types.responses.tool_param import ToolParam
from pydantic import BaseModel, TypeAdapter, ValidationError

from interlock.transcript import JsonObject, JsonValue

Problems = list[str]


def _literal_values(member: Any, field: str) -> tuple[str, ...]:
    hint = typing.get_type_hints(member, include_extras=True).get(field)
    while typing.get_origin(hint) in (typing.Required, typing.NotRequired):
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) is typing.Literal:
        return tuple(str(value) for value in typing.get_args(hint))
    return ()


@cache
def _dispatch(union: Any, field: str) -> dict[str, tuple[TypeAdapter[Any], ...]]:
    """``field`` value → adapters of the union members that declare it (a few share one)."""
    table: dict[str, list[TypeAdapter[Any]]] = {}
    for member in typing.get_args(union):
        for value in _literal_values(member, field):
            table.setdefault(value, []).append(TypeAdapter(member))
    return {value: tuple(adapters) for value, adapters in table.items()}


@cache
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def _materialize(value: Any) -> Any:
    """The validated value with pydantic's lazy iterators consumed (that validates them)."""
    if isinstance(value, Mapping):
        return {key: _materialize(item) for key, item in cast(Mapping[str, Any], value).items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [_materialize(item) for item in cast(Iterable[Any], value)]
    return value


def _dropped_keys(original: Any, validated: Any, path: str) -> Problems:
    """Keys of ``original`` that validation dropped: the SDK type does not declare them."""
    if isinstance(original, dict) and isinstance(validated, dict):
        source = cast(dict[str, Any], original)
        kept = cast(dict[str, Any], validated)
        problems = [
            f"{path}.{key}: not declared by the SDK type" for key in source if key not in kept
        ]
        for key in source:
            if key in kept:
                problems += _dropped_keys(source[key], kept[key], f"{path}.{key}")
        return problems
    if isinstance(original, list) and isinstance(validated, list):
        pairs = zip(cast(list[Any], original), cast(list[Any], validated), strict=False)
        return [
            problem
            for i, (a, b) in enumerate(pairs)
            for problem in _dropped_keys(a, b, f"{path}[{i}]")
        ]
    return []


def _check_typed(adapters: Iterable[TypeAdapter[Any]], value: JsonValue, path: str) -> Problems:
    """Valid when some candidate accepts ``value`` without dropping a key."""
    best: Problems | None = None
    for adapter in adapters:
        try:
            validated = _materialize(adapter.validate_python(value))
        except ValidationError as error:
            first = error.errors()[0]
            problems = [f"{path}{_loc(first['loc'])}: {first['msg']}"]
        else:
            problems = _dropped_keys(value, validated, path)
        if not problems:
            return []
        best = problems if best is None or len(problems) < len(best) else best
    return best or [f"{path}: no SDK type to check it against"]


def _loc(location: tuple[int | str, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in location)


def _check_union_items(
    items: JsonValue, union: Any, field: str, path: str, default: str | None = None
) -> Problems:
    table = _dispatch(union, field)
    problems: Problems = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        where = f"{path}[{index}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected an object")
            continue
        tag = item.get(field, default)
        candidates = table.get(tag) if isinstance(tag, str) else None
        if candidates is None:
            problems.append(f"{where}.{field}: {tag!r} is not an SDK {field}")
            continue
        problems += _check_typed(candidates, item, where)
    return problems


def _top_level(annotation: Any, payload: JsonObject, nested: Iterable[str]) -> Problems:
    skipped = set(nested)
    rest = {key: value for key, value in payload.items() if key not in skipped}
    stubs: dict[str, JsonValue] = {
        key: [] for key in skipped if key in payload and key != "tool_choice"
    }
    return _check_typed([_adapter(annotation)], {**rest, **stubs}, "body") if rest else []


def responses_request(payload: JsonObject, vendor_keys: frozenset[str] = frozenset()) -> Problems:
    """An OpenAI Responses request body: top level, each input item, each tool."""
    body = _without(payload, vendor_keys)
    problems = _top_level(ResponseCreateParamsBase, body, ("input", "tools"))
    if isinstance(body.get("input"), list):
        items = [_typed_message(item) for item in cast(list[JsonValue], body["input"])]
        problems += _check_union_items(items, ResponseInputItemParam, "type", "input")
    problems += _check_union_items(body.get("tools", []), ToolParam, "type", "tools")
    return problems


def _typed_message(item: JsonValue) -> JsonValue:
    """Easy input messages and item references may omit ``type``; give them theirs."""
    if isinstance(item, dict) and "type" not in item:
        return {**item, "type": "message" if "role" in item else "item_reference"}
    return item


def chat_request(payload: JsonObject, vendor_keys: frozenset[str] = frozenset()) -> Problems:
    """A Chat Completions request body: top level, each message (by role), each tool."""
    body = _without(payload, vendor_keys)
    problems = _top_level(CompletionCreateParamsBase, body, ("messages", "tools"))
    problems += _check_union_items(
        body.get("messages", []), ChatCompletionMessageParam, "role", "messages"
    )
    problems += _check_union_items(
        body.get("tools", []), ChatCompletionToolUnionParam, "type", "tools"
    )
    return problems


_GEMINI_BODY: dict[str, Callable[[JsonValue, str], Problems]] = {}


def _genai(model: type[BaseModel]) -> Callable[[JsonValue, str], Problems]:
    def check(value: JsonValue, path: str) -> Problems:
        try:
            model.model_validate(value)
        except ValidationError as error:
            return [f"{path}{_loc(item['loc'])}: {item['msg']}" for item in error.errors()[:3]]
        return []

    return check


def _genai_list(model: type[BaseModel]) -> Callable[[JsonValue, str], Problems]:
    one = _genai(model)

    def check(value: JsonValue, path: str) -> Problems:
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        return [problem for i, item in enumerate(value) for problem in one(item, f"{path}[{i}]")]

    return check


_GEMINI_BODY.update(
    {
        "contents": _genai_list(genai.Content),
        "systemInstruction": _genai(genai.Content),
        "tools": _genai_list(genai.Tool),
        "toolConfig": _genai(genai.ToolConfig),
        "generationConfig": _genai(genai.GenerationConfig),
        "safetySettings": _genai_list(genai.SafetySetting),
        "cachedContent": lambda value, path: (
            [] if isinstance(value, str) else [f"{path}: expected a string"]
        ),
        "labels": lambda value, path: (
            [] if isinstance(value, dict) else [f"{path}: expected an object"]
        ),
    }
)


def gemini_request(payload: JsonObject, vendor_keys: frozenset[str] = frozenset()) -> Problems:
    """A Gemini ``generateContent`` body: every field against its google-genai model."""
    problems: Problems = []
    for key, value in _without(payload, vendor_keys).items():
        check = _GEMINI_BODY.get(key)
        problems += check(value, key) if check else [f"{key}: not a generateContent field"]
    return problems


def _model_extras(model: Any, path: str) -> Problems:
    """Unknown fields an ``extra="allow"`` pydantic model kept, at any depth."""
    if isinstance(model, BaseModel):
        extra = model.model_extra or {}
        problems = [f"{path}.{key}: not declared by the SDK model" for key in extra]
        for name in type(model).model_fields:
            problems += _model_extras(getattr(model, name), f"{path}.{name}")
        return problems
    if isinstance(model, list | tuple):
        items = cast(Iterable[Any], model)
        return [
            problem
            for i, item in enumerate(items)
            for problem in _model_extras(item, f"{path}[{i}]")
        ]
    return []


def _openai_model(annotation: Any, value: JsonValue, path: str) -> Problems:
    try:
        parsed = _adapter(annotation).validate_python(value)
    except ValidationError as error:
        first = error.errors()[0]
        return [f"{path}{_loc(first['loc'])}: {first['msg']}"]
    return _model_extras(parsed, path)


def responses_response(payload: JsonObject) -> Problems:
    """An OpenAI Responses response object."""
    return _openai_model(OpenAIResponse, payload, "response")


def responses_event(data: JsonObject) -> Problems:
    """One Responses stream event, by ``type`` (``obfuscation`` is the documented undeclared key)."""
    event = _without(data, frozenset({"obfuscation"}))
    model = _event_models().get(str(event.get("type")))
    if model is None:
        return [f"event.type: {event.get('type')!r} is not an SDK stream event"]
    return _openai_model(model, event, "event")


@cache
def _event_models() -> dict[str, type[BaseModel]]:
    """Responses stream event ``type`` → its SDK model (the union is not discriminated)."""
    union = typing.get_args(ResponseStreamEvent)[0]
    table: dict[str, type[BaseModel]] = {}
    for member in typing.get_args(union):
        annotation = member.model_fields["type"].annotation
        for value in typing.get_args(annotation):
            table[str(value)] = member
    return table


def chat_response(payload: JsonObject, vendor_keys: frozenset[str] = frozenset()) -> Problems:
    """A Chat Completions response object (the target's vendor keys removed)."""
    return _openai_model(ChatCompletion, _without(payload, vendor_keys), "response")


def chat_chunk(data: JsonObject, vendor_keys: frozenset[str] = frozenset()) -> Problems:
    """One Chat Completions stream chunk (``obfuscation`` and a delta's ``annotations``, which
    OpenAI sends for search models, are the service's own fields the SDK does not declare)."""
    keys = vendor_keys | {"obfuscation", "annotations"}
    return _openai_model(ChatCompletionChunk, _without(data, keys), "chunk")


def gemini_response(payload: JsonObject) -> Problems:
    """A Gemini ``GenerateContentResponse`` (also each stream chunk)."""
    return _genai(genai.GenerateContentResponse)(payload, "response")


def _without(value: JsonObject, keys: frozenset[str]) -> JsonObject:
    """``value`` with ``keys`` removed wherever they occur (a dialect's vendor extensions)."""
    return cast(JsonObject, _strip(value, keys)) if keys else value


def _strip(value: JsonValue, keys: frozenset[str]) -> JsonValue:
    if isinstance(value, dict):
        return {key: _strip(item, keys) for key, item in value.items() if key not in keys}
    if isinstance(value, list):
        return [_strip(item, keys) for item in value]
    return value
