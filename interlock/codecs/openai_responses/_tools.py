"""Tools and tool choice ↔ canonical :class:`ToolSpec`, :class:`HostedToolSpec`, :class:`ToolChoice`.

Function tools are flat on the Responses wire (``{"type":"function","name",…}``, not
nested under ``function`` as in Chat Completions: trap 26). Every other tool type is a
hosted tool and travels verbatim.
"""

from __future__ import annotations

from typing import Literal, TypeAlias, cast

from interlock.codecs.openai_responses._wire import (
    ABSENT,
    PROVIDER,
    as_list,
    as_object,
    merge_fields,
    optional_bool,
    own,
    required_str,
    split_fields,
    string,
    wrap,
)
from interlock.transcript import (
    DecodeError,
    HostedToolSpec,
    JsonObject,
    JsonValue,
    ToolChoice,
    ToolSpec,
)

ChoiceMode: TypeAlias = Literal["auto", "none", "required"]
_FUNCTION_KNOWN = {"type", "name", "description", "parameters", "strict"}


def decode_tools(value: JsonValue, path: str) -> tuple[list[ToolSpec], list[HostedToolSpec], str]:
    """Function and hosted tools, plus their interleaving (``f``/``h`` per tool, in order)."""
    functions: list[ToolSpec] = []
    hosted: list[HostedToolSpec] = []
    order: list[str] = []
    for index, entry in enumerate(as_list(value, path)):
        tool_path = f"{path}[{index}]"
        data = as_object(entry, tool_path)
        if string(data.get("type"), f"{tool_path}.type") != "function":
            hosted.append(HostedToolSpec(provider=PROVIDER, spec=data))
            order.append("h")
            continue
        functions.append(_decode_function(data, tool_path))
        order.append("f")
    return functions, hosted, "".join(order)


def _decode_function(data: JsonObject, path: str) -> ToolSpec:
    parameters = data.get("parameters")
    if parameters is not None:
        parameters = as_object(parameters, f"{path}.parameters")
    description = data.get("description")
    if description is not None:
        description = string(description, f"{path}.description")
    fields = split_fields(data, _FUNCTION_KNOWN)
    absent: list[JsonValue] = [key for key in ("parameters", "strict") if key not in data]
    if absent:
        fields[ABSENT] = absent
    if description is None and "description" in data:
        fields["~null_description"] = True
    return ToolSpec(
        name=required_str(data, "name", path),
        description=description,
        parameters=parameters,
        strict=optional_bool(data, "strict", path),
        extra=wrap(fields),
    )


def encode_function_tool(tool: ToolSpec) -> JsonObject:
    """A flat function tool; ``parameters`` and ``strict`` are always sent (nullable, required)."""
    fields = own(tool.extra)
    absent = fields.get(ABSENT)
    absent_keys = set(cast(list[str], absent)) if isinstance(absent, list) else set[str]()
    core: JsonObject = {"type": "function", "name": tool.name}
    if tool.description is not None or fields.get("~null_description") is True:
        core["description"] = tool.description
    if "parameters" not in absent_keys:
        core["parameters"] = tool.parameters
    if "strict" not in absent_keys:
        core["strict"] = tool.strict
    return merge_fields(core, fields)


def encode_tools(
    functions: tuple[ToolSpec, ...], hosted: tuple[HostedToolSpec, ...], order: object
) -> list[JsonValue]:
    """Tools in wire order (functions first unless the decoded interleaving says otherwise)."""
    own_hosted = [tool.spec for tool in hosted if tool.provider == PROVIDER]
    encoded = [encode_function_tool(tool) for tool in functions]
    if not isinstance(order, str) or order.count("f") != len(encoded):
        return [*encoded, *own_hosted]
    if order.count("h") != len(own_hosted):
        return [*encoded, *own_hosted]
    function_iter, hosted_iter = iter(encoded), iter(own_hosted)
    return [next(function_iter) if kind == "f" else next(hosted_iter) for kind in order]


_MODES: dict[str, ChoiceMode] = {"auto": "auto", "none": "none", "required": "required"}


def decode_tool_choice(value: JsonValue, path: str) -> ToolChoice:
    """Every tool-choice shape as a canonical choice (hosted choices mean ``required``)."""
    if isinstance(value, str):
        if value not in _MODES:
            raise DecodeError(path, "expected 'auto', 'none' or 'required'")
        return ToolChoice(mode=_MODES[value])
    data = as_object(value, path)
    kind = string(data.get("type"), f"{path}.type")
    if kind == "function":
        return ToolChoice(mode="required", names=(required_str(data, "name", path),))
    if kind == "allowed_tools":
        mode = data.get("mode")
        if mode != "auto" and mode != "required":
            raise DecodeError(f"{path}.mode", "expected 'auto' or 'required'")
        mode = _MODES[str(mode)]
        names: list[str] = []
        for index, entry in enumerate(as_list(data.get("tools"), f"{path}.tools")):
            tool = as_object(entry, f"{path}.tools[{index}]")
            if tool.get("type") == "function":
                names.append(required_str(tool, "name", f"{path}.tools[{index}]"))
        return ToolChoice(mode=mode, names=tuple(names))
    return ToolChoice(mode="required")


def encode_tool_choice(choice: ToolChoice) -> JsonValue:
    """The default wire shape of a canonical choice."""
    if not choice.names:
        return choice.mode
    if choice.mode == "required" and len(choice.names) == 1:
        return {"type": "function", "name": choice.names[0]}
    mode = "auto" if choice.mode == "none" else choice.mode
    tools: list[JsonValue] = [{"type": "function", "name": name} for name in choice.names]
    return {"type": "allowed_tools", "mode": mode, "tools": tools}
