"""``tools`` and ``tool_choice`` ⇄ canonical tool specs and choice.

A custom tool (no ``type``, or ``"custom"``) is a :class:`ToolSpec` (``input_schema`` is
``parameters``); every Anthropic-defined tool (``web_search_20250305``, ``bash_20250124``…) is a
:class:`HostedToolSpec` carried verbatim. ``extra["anthropic"]["toolLayout"]`` records the order
of the two kinds when they were interleaved. ``tool_choice`` ``any`` is ``required``; ``tool`` is
``required`` with one name; ``disable_parallel_tool_use`` is ``parallel_tool_calls`` negated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from interlock.codecs.anthropic._encode import PartEncoder
from interlock.codecs.anthropic._wire import (
    PROVIDER,
    as_bool,
    as_list,
    as_object,
    as_str,
    object_entry,
    split,
)
from interlock.transcript import (
    DecodeError,
    HostedToolSpec,
    JsonObject,
    JsonValue,
    ToolChoice,
    ToolSpec,
)

_TOOL: Final = frozenset({"name", "description", "input_schema", "strict"})
_CHOICE: Final = frozenset({"type", "name", "disable_parallel_tool_use"})


def decode_tools(
    value: JsonValue, path: str, own: JsonObject
) -> tuple[tuple[ToolSpec, ...], tuple[HostedToolSpec, ...]]:
    """Custom tools and Anthropic-defined tools; their interleaving is kept in ``own``."""
    tools: list[ToolSpec] = []
    hosted: list[HostedToolSpec] = []
    layout: list[str] = []
    for index, item in enumerate(as_list(value, path)):
        where = f"{path}[{index}]"
        tool = as_object(item, where)
        kind = tool.get("type")
        if kind is not None and kind != "custom":
            hosted.append(HostedToolSpec(provider=PROVIDER, spec=tool))
            layout.append("hosted")
            continue
        fields, rest = split(tool, _TOOL)
        description = fields.get("description")
        schema = fields.get("input_schema")
        strict = fields.get("strict")
        tools.append(
            ToolSpec(
                name=as_str(fields.get("name"), f"{where}.name"),
                description=None if description is None else as_str(description, where),
                parameters=None if schema is None else as_object(schema, f"{where}.input_schema"),
                strict=None if strict is None else as_bool(strict, f"{where}.strict"),
                extra={"anthropic": {"fields": rest}} if rest else {},
            )
        )
        layout.append("custom")
    if tools and hosted and layout != sorted(layout):
        own["toolLayout"] = list[JsonValue](layout)
    return tuple(tools), tuple(hosted)


def encode_tools(
    tools: Sequence[ToolSpec],
    hosted: Sequence[HostedToolSpec],
    own: JsonObject,
    encoder: PartEncoder,
) -> list[JsonValue]:
    """The wire ``tools``; another provider's hosted tool is refused (strict) or dropped
    with a warning (degrade), as by every encoder."""
    custom = [_custom(tool) for tool in tools]
    native: list[JsonValue] = []
    for index, spec in enumerate(hosted):
        if spec.provider == PROVIDER:
            native.append(dict(spec.spec))
        else:
            encoder.lossy(
                "hosted_tool_unsupported",
                f"hosted_tools[{index}]",
                f"{spec.provider} hosted tool has no Anthropic form",
            )
    layout = own.get("toolLayout")
    if not isinstance(layout, list) or len(layout) != len(custom) + len(native):
        return [*custom, *native]
    ordered: list[JsonValue] = []
    for kind in layout:
        ordered.append(custom.pop(0) if kind == "custom" else native.pop(0))
    return ordered


def _empty_schema() -> JsonObject:
    return {"type": "object", "properties": {}}


def _custom(tool: ToolSpec) -> JsonObject:
    wire: JsonObject = {"name": tool.name}
    if tool.description is not None:
        wire["description"] = tool.description
    wire["input_schema"] = tool.parameters if tool.parameters is not None else _empty_schema()
    if tool.strict is not None:
        wire["strict"] = tool.strict
    wire.update(object_entry(tool.extra.get("anthropic") or {}, "fields"))
    return wire


def decode_tool_choice(
    value: JsonValue, path: str, own: JsonObject
) -> tuple[ToolChoice, bool | None]:
    """``(choice, parallel_tool_calls)`` for a ``tool_choice`` object."""
    fields, rest = split(as_object(value, path), _CHOICE)
    if rest:
        own["toolChoice"] = rest
    kind = as_str(fields.get("type"), f"{path}.type")
    disable = fields.get("disable_parallel_tool_use")
    parallel = (
        None if disable is None else not as_bool(disable, f"{path}.disable_parallel_tool_use")
    )
    match kind:
        case "auto":
            return ToolChoice(mode="auto"), parallel
        case "none":
            return ToolChoice(mode="none"), parallel
        case "any":
            return ToolChoice(mode="required"), parallel
        case "tool":
            name = as_str(fields.get("name"), f"{path}.name")
            return ToolChoice(mode="required", names=(name,)), parallel
        case _:
            raise DecodeError(f"{path}.type", f"unknown tool_choice type {kind!r}")


def encode_tool_choice(
    choice: ToolChoice | None, parallel: bool | None, own: JsonObject, encoder: PartEncoder
) -> JsonObject | None:
    """The wire ``tool_choice`` (``None`` when neither a choice nor a parallel rule is set)."""
    if choice is None and parallel is None:
        return None
    wire: JsonObject
    if choice is None or choice.mode == "auto":
        wire = {"type": "auto"}
    elif choice.mode == "none":
        wire = {"type": "none"}
    elif len(choice.names) == 1:
        wire = {"type": "tool", "name": choice.names[0]}
    else:
        wire = {"type": "any"}
        if choice.names:
            encoder.warn(
                "allowed_tools_widened",
                "tool_choice",
                "Anthropic cannot restrict the choice to a subset of tools; any tool may be used",
            )
    if parallel is not None:
        wire["disable_parallel_tool_use"] = not parallel
    wire.update(object_entry(own, "toolChoice"))
    return wire
