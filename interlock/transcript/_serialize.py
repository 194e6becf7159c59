"""Versioned JSON serialization of transcripts, requests and responses.

The document form is ``{"version": N, "messages": [...]}``. Fields equal to their
default are omitted, parts carry their ``kind`` tag, tuples become lists. Loading accepts
every version up to :data:`TRANSCRIPT_VERSION`; older versions are upgraded on load.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from interlock.transcript._messages import (
    Alternative,
    Continuation,
    GenerationOptions,
    HostedToolSpec,
    Message,
    ModelUsage,
    Request,
    Response,
    ResponseFormat,
    ToolChoice,
    ToolSpec,
    Usage,
)
from interlock.transcript._parts import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    Citation,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
    TokenLogprob,
    ToolCallPart,
    ToolResultPart,
)

TRANSCRIPT_VERSION = 1

_PART_TYPES: dict[str, type[Any]] = {
    "text": TextPart,
    "refusal": RefusalPart,
    "reasoning": ReasoningPart,
    "tool_call": ToolCallPart,
    "tool_result": ToolResultPart,
    "json": JsonPart,
    "media": MediaPart,
    "approval_request": ApprovalRequestPart,
    "approval_response": ApprovalResponsePart,
    "input_request": InputRequestPart,
    "input_response": InputResponsePart,
    "hosted_tool": HostedToolPart,
}


class TranscriptFormatError(ValueError):
    """A stored transcript document is malformed or from an unknown version."""


_LEAVES = frozenset({str, int, float, bool, type(None)})
"""Exact types :func:`to_json` returns as they are (no dataclass, sequence or mapping)."""
_ALWAYS, _DEFAULT, _FACTORY = 0, 1, 2
_Plan = tuple[tuple[str, int, Any], ...]
_PLANS: dict[type[Any], _Plan] = {}
"""Per dataclass :func:`to_json` met: each field's name, whether it is written always
(``kind`` and fields without a default) or only when it differs from its default value
or from what its default factory makes, and that default (fixed once defined)."""


def _plan(cls: type[Any]) -> _Plan:
    plan: list[tuple[str, int, Any]] = []
    for spec in dataclasses.fields(cls):
        if spec.name == "kind":
            plan.append((spec.name, _ALWAYS, None))
        elif spec.default is not dataclasses.MISSING:
            plan.append((spec.name, _DEFAULT, spec.default))
        elif spec.default_factory is not dataclasses.MISSING:
            plan.append((spec.name, _FACTORY, spec.default_factory))
        else:
            plan.append((spec.name, _ALWAYS, None))
    return tuple(plan)


def to_json(value: object) -> JsonValue:
    """Any transcript value (part, message, request, response…) as plain JSON: a
    dataclass as an object of its ``kind`` and of every other field that differs from its
    default, a tuple or list as an array, a mapping as an object."""
    if type(value) in _LEAVES:  # most values: the checks below all fail for them
        leaf: JsonValue = value  # pyright: ignore[reportAssignmentType] -- one of _LEAVES
        return leaf
    plan = _PLANS.get(type(value))
    if plan is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        plan = _PLANS[type(value)] = _plan(type(value))
    if plan is not None:
        out: JsonObject = {}
        for name, rule, default in plan:
            item = getattr(value, name)
            if rule == _DEFAULT:
                if item == default:
                    continue
            elif rule == _FACTORY and item == default():
                continue
            out[name] = item if type(item) in _LEAVES else to_json(item)  # pyright: ignore[reportArgumentType] -- a leaf is JSON
        return out
    if isinstance(value, tuple | list):
        return [to_json(item) for item in cast(Sequence[object], value)]
    if isinstance(value, Mapping):
        return {
            str(key): to_json(item) for key, item in cast(Mapping[object, object], value).items()
        }
    return cast(JsonValue, value)


def _require_object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TranscriptFormatError(f"{where}: expected an object")
    return cast(dict[str, Any], value)


def _tuple_of(loader: Callable[[object, str], Any]) -> Callable[[object, str], tuple[Any, ...]]:
    def load(value: object, where: str) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise TranscriptFormatError(f"{where}: expected a list")
        return tuple(
            loader(item, f"{where}[{i}]") for i, item in enumerate(cast(list[object], value))
        )

    return load


def _build(cls: type[Any], value: object, where: str) -> Any:
    data = _require_object(value, where)
    nested = _NESTED.get(cls, {})
    kwargs: dict[str, Any] = {}
    for key, item in data.items():
        if key == "kind":
            continue
        loader = nested.get(key)
        kwargs[key] = loader(item, f"{where}.{key}") if loader else _freeze(item, key)
    try:
        return cls(**kwargs)
    except TypeError as error:
        raise TranscriptFormatError(f"{where}: {error}") from error


def _freeze(item: object, key: str) -> object:
    if key in {"stop", "names", "bytes"} and isinstance(item, list):
        return tuple(cast(list[object], item))
    return item


def load_part(value: object, where: str = "part") -> Part:
    """One part from its JSON form."""
    data = _require_object(value, where)
    kind = data.get("kind")
    cls = _PART_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise TranscriptFormatError(f"{where}.kind: unknown part kind {kind!r}")
    return cast(Part, _build(cls, data, where))


def _load_opaque(value: object, where: str) -> Opaque:
    return cast(Opaque, _build(Opaque, value, where))


def load_message(value: object, where: str = "message") -> Message:
    """One message from its JSON form."""
    return cast(Message, _build(Message, value, where))


def _loader(cls: type[Any]) -> Callable[[object, str], Any]:
    return lambda value, where: _build(cls, value, where)


_NESTED: dict[type[Any], dict[str, Callable[[object, str], Any]]] = {
    TextPart: {
        "signature": _load_opaque,
        "citations": _tuple_of(_loader(Citation)),
        "logprobs": _tuple_of(_loader(TokenLogprob)),
    },
    TokenLogprob: {"top": _tuple_of(_loader(TokenLogprob))},
    Alternative: {"message": lambda value, where: load_message(value, where)},
    ReasoningPart: {"opaque": _load_opaque},
    ToolCallPart: {"signature": _load_opaque},
    ToolResultPart: {"output": _tuple_of(load_part)},
    ApprovalRequestPart: {"call": lambda value, where: load_part(value, where)},
    Message: {"parts": _tuple_of(load_part)},
    Request: {
        "messages": _tuple_of(load_message),
        "tools": _tuple_of(_loader(ToolSpec)),
        "hosted_tools": _tuple_of(_loader(HostedToolSpec)),
        "tool_choice": _loader(ToolChoice),
        "options": _loader(GenerationOptions),
        "continuation": _loader(Continuation),
        "response_format": _loader(ResponseFormat),
    },
    Response: {
        "message": lambda value, where: load_message(value, where),
        "usage": _loader(Usage),
        "alternatives": _tuple_of(_loader(Alternative)),
    },
    Usage: {"breakdown": _tuple_of(_loader(ModelUsage))},
    ModelUsage: {"usage": _loader(Usage)},
}


def dump_transcript(messages: Sequence[Message]) -> JsonObject:
    """A transcript as a versioned JSON document."""
    return {"version": TRANSCRIPT_VERSION, "messages": [to_json(message) for message in messages]}


def load_transcript(document: object) -> tuple[Message, ...]:
    """Messages from a versioned JSON document of any supported version."""
    data = _require_object(document, "transcript")
    version = data.get("version")
    if not isinstance(version, int) or not 1 <= version <= TRANSCRIPT_VERSION:
        raise TranscriptFormatError(f"transcript.version: unsupported version {version!r}")
    return _tuple_of(load_message)(data.get("messages"), "transcript.messages")


def dump_request(request: Request) -> JsonObject:
    """A request as a versioned JSON document."""
    return {"version": TRANSCRIPT_VERSION, "request": to_json(request)}


def load_request(document: object) -> Request:
    """A request from :func:`dump_request` output."""
    data = _require_object(document, "document")
    _check_version(data)
    return cast(Request, _build(Request, data.get("request"), "request"))


def dump_response(response: Response) -> JsonObject:
    """A response as a versioned JSON document."""
    return {"version": TRANSCRIPT_VERSION, "response": to_json(response)}


def load_response(document: object) -> Response:
    """A response from :func:`dump_response` output."""
    data = _require_object(document, "document")
    _check_version(data)
    return cast(Response, _build(Response, data.get("response"), "response"))


def _check_version(data: Mapping[str, object]) -> None:
    version = data.get("version")
    if not isinstance(version, int) or not 1 <= version <= TRANSCRIPT_VERSION:
        raise TranscriptFormatError(f"version: unsupported version {version!r}")
