"""Tool declarations, ``tool_choice`` and assistant ``tool_calls``, both ways.

Chat nests function tools under ``function`` (Responses does not) and nests
``allowed_tools`` once more than Responses (provider-wire.md trap 26). Custom tools and
custom tool calls map onto :class:`ToolSpec` / :class:`ToolCallPart` with
``extra[LAYOUT]["type"] == "custom"``; their ``input`` is free text, not JSON.
"""

from __future__ import annotations

from collections.abc import Iterable

from interlock.codecs._json import check_json
from interlock.codecs.openai_chat._fields import AS_DECODED, FieldPolicy
from interlock.codecs.openai_chat._reasoning import take_google_signature
from interlock.codecs.openai_chat._wire import (
    DIALECT,
    LAYOUT,
    as_bool,
    as_list,
    as_object,
    as_str,
    extra_of,
    merge_unknown,
    optional_str,
    outer_unknown,
    required,
    rest,
    shadow,
    unshadow,
    with_extra,
)
from interlock.transcript import (
    DecodeError,
    HostedToolSpec,
    JsonObject,
    JsonValue,
    ToolCallPart,
    ToolChoice,
    ToolSpec,
)
from interlock.transcript import build as built

_KINDS = ("function", "custom")
HOSTED_PROVIDERS = ("openrouter", DIALECT)
"""Issuers of the hosted tools a Chat request may declare: OpenRouter's server tools
(``openrouter:web_search``…) and any other service's own tool type (Groq's
``browser_search``…), both carried verbatim and sent only to a Chat upstream."""


def hosted_provider(kind: str) -> str:
    """Who runs a hosted tool of wire type ``kind``."""
    return "openrouter" if kind.startswith("openrouter:") else DIALECT


def decode_tools(
    value: JsonValue, path: str
) -> tuple[tuple[ToolSpec, ...], tuple[HostedToolSpec, ...], str]:
    """The ``tools`` array: functions, hosted tools, and their interleaving (``f``/``h``).

    A tool of another type than ``function`` / ``custom`` is a service's hosted tool
    (OpenRouter server tools, Groq's built-in tools): kept verbatim, never rejected.
    """
    tools: list[ToolSpec] = []
    hosted: list[HostedToolSpec] = []
    order: list[str] = []
    for i, item in enumerate(as_list(value, path)):
        plain = plain_function(item)
        if plain is not None:
            tools.append(plain)
            order.append("f")
            continue
        tool = as_object(item, f"{path}[{i}]")
        kind = as_str(required(tool, "type", f"{path}[{i}]"), f"{path}[{i}].type")
        if kind in _KINDS:
            tools.append(_decode_tool(tool, f"{path}[{i}]"))
            order.append("f")
        else:
            hosted.append(HostedToolSpec(provider=hosted_provider(kind), spec=tool))
            order.append("h")
    return tuple(tools), tuple(hosted), "".join(order)


_PLAIN_FUNCTION_KEYS = frozenset({"name", "description", "parameters"})


def plain_function(item: JsonValue) -> ToolSpec | None:
    """The commonest tool decoded directly: ``{"type": "function", "function": {"name":
    string, "description"?: string or null, "parameters"?: object}}`` and nothing else.
    ``None`` for any other item. Equal to what :func:`_decode_tool` gives for it (no field
    left over to keep, so the spec's ``extra`` is empty)."""
    if not isinstance(item, dict) or len(item) != 2 or item.get("type") != "function":
        return None
    inner = item.get("function")
    if not isinstance(inner, dict) or not _PLAIN_FUNCTION_KEYS.issuperset(inner):
        return None
    name = inner.get("name")
    description = inner.get("description")
    parameters = inner.get("parameters")
    if not isinstance(name, str) or not (description is None or isinstance(description, str)):
        return None
    if parameters is None:
        if "parameters" in inner:
            return None  # a null kept verbatim in ``extra``
    elif not isinstance(parameters, dict):
        return None
    return ToolSpec(name=name, description=description, parameters=parameters, extra={})


def _decode_tool(tool: JsonObject, path: str) -> ToolSpec:
    kind = as_str(required(tool, "type", path), f"{path}.type")
    if kind not in _KINDS:
        raise DecodeError(f"{path}.type", f"unknown tool type {kind!r}")
    where = f"{path}.{kind}"
    inner = as_object(required(tool, kind, path), where)
    name = as_str(required(inner, "name", where), f"{where}.name")
    known = {"name", "description"}
    parameters: JsonObject | None = None
    strict: bool | None = None
    if kind == "function":
        if inner.get("parameters") is not None:
            parameters = as_object(inner["parameters"], f"{where}.parameters")
            known.add("parameters")
        if inner.get("strict") is not None:
            strict = as_bool(inner["strict"], f"{where}.strict")
            known.add("strict")
    unknown = shadow(rest(tool, {"type", kind}), kind, rest(inner, known))
    return ToolSpec(
        name=name,
        description=optional_str(inner, "description", where),
        parameters=parameters,
        strict=strict,
        extra=with_extra(unknown, {"type": "custom"} if kind == "custom" else None),
    )


def encode_tools(
    tools: Iterable[ToolSpec], hosted: Iterable[JsonObject] = (), order: object = None
) -> list[JsonValue]:
    """The ``tools`` array: functions first, then hosted tools, unless ``order`` (the
    decoded interleaving) says otherwise and still fits."""
    functions: list[JsonValue] = [_encode_tool(tool) for tool in tools]
    specs: list[JsonValue] = [dict(spec) for spec in hosted]
    if (
        not isinstance(order, str)
        or order.count("f") != len(functions)
        or order.count("h") != len(specs)
    ):
        return [*functions, *specs]
    function_iter, spec_iter = iter(functions), iter(specs)
    return [next(function_iter) if kind == "f" else next(spec_iter) for kind in order]


def _encode_tool(tool: ToolSpec) -> JsonObject:
    kind = "custom" if extra_of(tool.extra, LAYOUT).get("type") == "custom" else "function"
    inner: JsonObject = {"name": tool.name}
    if tool.description is not None:
        inner["description"] = tool.description
    if tool.parameters is not None:
        inner["parameters"] = tool.parameters
    if tool.strict is not None:
        inner["strict"] = tool.strict
    unknown = extra_of(tool.extra)
    built: JsonObject = {"type": kind, kind: unshadow(inner, unknown, kind)}
    return merge_unknown(built, outer_unknown(unknown, kind))


def custom_tool_names(tools: Iterable[ToolSpec]) -> frozenset[str]:
    """Names of the declared custom (free-text) tools."""
    return frozenset(t.name for t in tools if extra_of(t.extra, LAYOUT).get("type") == "custom")


def decode_tool_choice(value: JsonValue, path: str) -> tuple[ToolChoice, str | None]:
    """The canonical choice and the wire form it came in (``allowed_tools`` / ``custom``)."""
    if isinstance(value, str):
        if value not in ("none", "auto", "required"):
            raise DecodeError(path, f"unknown tool_choice {value!r}")
        return ToolChoice(mode=value), None
    choice = as_object(value, path)
    kind = as_str(required(choice, "type", path), f"{path}.type")
    if kind in _KINDS:
        return ToolChoice(mode="required", names=(_named(choice, kind, path),)), kind
    if kind != "allowed_tools":
        # A hosted tool forced by its type (OpenRouter's {"type": "openrouter:web_search"}):
        # canonically "a tool is required"; the wire form is kept by the caller.
        return ToolChoice(mode="required"), "hosted"
    where = f"{path}.allowed_tools"
    allowed = as_object(required(choice, "allowed_tools", path), where)
    mode = as_str(required(allowed, "mode", where), f"{where}.mode")
    if mode not in ("auto", "required"):
        raise DecodeError(f"{where}.mode", f"unknown allowed_tools mode {mode!r}")
    tools = as_list(required(allowed, "tools", where), f"{where}.tools")
    names: list[str] = []
    for index, item in enumerate(tools):
        entry_path = f"{where}.tools[{index}]"
        entry = as_object(item, entry_path)
        names.append(
            _named(entry, as_str(required(entry, "type", entry_path), entry_path), entry_path)
        )
    return ToolChoice(mode=mode, names=tuple(names)), "allowed_tools"


def _named(choice: JsonObject, kind: str, path: str) -> str:
    if kind not in _KINDS:
        raise DecodeError(f"{path}.type", f"unknown tool type {kind!r}")
    inner = as_object(required(choice, kind, path), f"{path}.{kind}")
    return as_str(required(inner, "name", f"{path}.{kind}"), f"{path}.{kind}.name")


def encode_tool_choice(
    choice: ToolChoice, form: str | None, custom_names: frozenset[str]
) -> JsonValue:
    """``tool_choice`` in its Chat shape; ``form`` is the wire form a decode recorded."""
    if not choice.names or choice.mode == "none":
        return choice.mode
    if choice.mode == "required" and len(choice.names) == 1 and form != "allowed_tools":
        return _name_ref(choice.names[0], custom_names)
    tools: list[JsonValue] = [_name_ref(name, custom_names) for name in choice.names]
    return {"type": "allowed_tools", "allowed_tools": {"mode": choice.mode, "tools": tools}}


def _name_ref(name: str, custom_names: frozenset[str]) -> JsonObject:
    kind = "custom" if name in custom_names else "function"
    return {"type": kind, kind: {"name": name}}


def decode_tool_call(call: JsonObject, path: str) -> ToolCallPart:
    """One ``tool_calls[]`` entry of an assistant message (arguments must be JSON text)."""
    signature, call = take_google_signature(call, path)
    kind = optional_str(call, "type", path) or "function"
    if kind not in _KINDS:
        raise DecodeError(f"{path}.type", f"unknown tool call type {kind!r}")
    where = f"{path}.{kind}"
    inner = as_object(required(call, kind, path), where)
    field = "arguments" if kind == "function" else "input"
    layout: JsonObject = {}
    if kind == "function" and field not in inner:
        layout["no_arguments"] = True  # a call with no arguments at all: empty, and sent so
        arguments = ""
    else:
        arguments = as_str(required(inner, field, where), f"{where}.{field}")
    if kind == "function":
        check_arguments(arguments, f"{where}.arguments")
    if kind == "custom":
        layout["type"] = "custom"
    if "type" not in call:
        layout["untyped"] = True
    unknown = shadow(rest(call, {"id", "type", kind}), kind, rest(inner, {"name", field}))
    return ToolCallPart(
        call_id=as_str(required(call, "id", path), f"{path}.id"),
        name=as_str(required(inner, "name", where), f"{where}.name"),
        arguments=arguments,
        signature=signature,
        extra=with_extra(unknown, layout),
    )


def check_arguments(arguments: str, path: str) -> None:
    """Function arguments are JSON text (or empty); anything else is a decode error."""
    if not arguments.strip():
        return
    try:
        check_json(arguments)
    except ValueError as error:
        raise DecodeError(path, f"malformed JSON arguments: {error}") from None


def plain_tool_call(call: JsonValue) -> ToolCallPart | None:
    """The commonest ``tool_calls[]`` entry, ``{"id", "type": "function", "function":
    {"name", "arguments"}}`` with well-formed arguments and nothing else, decoded directly;
    ``None`` for any other entry (:func:`decode_tool_call` then decodes it, or names what
    is wrong). Equal to what :func:`decode_tool_call` gives for the same entry."""
    if not isinstance(call, dict) or len(call) != 3 or call.get("type") != "function":
        return None
    function, call_id = call.get("function"), call.get("id")
    if not isinstance(function, dict) or len(function) != 2 or not isinstance(call_id, str):
        return None
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, str):
        return None
    if arguments.strip():
        try:
            check_json(arguments)
        except ValueError:
            return None
    return built.tool_call_part(call_id, name, arguments)


def encode_tool_call(
    part: ToolCallPart, fields: FieldPolicy = AS_DECODED, location: str = ""
) -> JsonObject:
    """One ``tool_calls[]`` entry (signatures are the caller's business).

    Kept fields go out as ``fields`` admits them for the target (:mod:`._fields`).
    """
    if not part.extra:  # the common case, kept cheap for long histories
        function: JsonObject = {"name": part.name, "arguments": part.arguments}
        return {"id": part.call_id, "type": "function", "function": function}
    layout = extra_of(part.extra, LAYOUT)
    kind = "custom" if layout.get("type") == "custom" else "function"
    field = "input" if kind == "custom" else "arguments"
    unknown = extra_of(fields.kept(part.extra, "tool_call", location))
    inner = unshadow({"name": part.name, field: part.arguments}, unknown, kind)
    if layout.get("no_arguments") and not part.arguments:
        inner.pop(field, None)
    built: JsonObject = {"id": part.call_id}
    if not layout.get("untyped"):
        built["type"] = kind
    built[kind] = inner
    return merge_unknown(built, outer_unknown(unknown, kind))
