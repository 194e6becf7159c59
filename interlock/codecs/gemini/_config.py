"""``tools``, ``toolConfig`` and ``generationConfig`` ⇄ canonical request fields.

* ``functionDeclarations[]`` → :class:`ToolSpec` (``parameters`` or ``parametersJsonSchema``
  → ``parameters``; marker ``schemaKey: "parameters"`` when the OpenAPI-subset key was used,
  otherwise ``parametersJsonSchema`` is emitted, which accepts any JSON Schema).
* Every other tool key (``googleSearch``, ``codeExecution``, ``urlContext``…) →
  :class:`HostedToolSpec` with provider ``google``, carried verbatim. The grouping of
  declarations and hosted tools into wire ``Tool`` objects is recorded in ``toolLayout``
  when it differs from the default (one object with every declaration, then one object per
  hosted tool).
* ``functionCallingConfig.mode``: ``AUTO`` ↔ ``auto``, ``ANY`` ↔ ``required``, ``NONE`` ↔
  ``none``, ``VALIDATED`` ↔ ``auto`` plus ``functionCallingMode: "VALIDATED"`` in extra;
  ``allowedFunctionNames`` ↔ ``ToolChoice.names``.
* ``generationConfig``: temperature, topP, topK, maxOutputTokens, stopSequences, seed,
  presencePenalty, frequencyPenalty and ``thinkingConfig`` (``includeThoughts`` ↔ ``include_reasoning``, ``thinkingBudget`` ↔
  ``thinking_budget``, ``thinkingLevel`` ↔ ``reasoning_effort`` lower-cased). All other keys
  are kept verbatim for the round trip.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from interlock.codecs._options import check_answer_options, unsent_options
from interlock.codecs._structured import openapi_to_json_schema
from interlock.codecs.gemini._encode import PartEncoder
from interlock.codecs.gemini._wire import (
    DIALECT,
    as_bool,
    as_int,
    as_list,
    as_number,
    as_object,
    as_str,
    camel,
    object_entry,
    split_fields,
)
from interlock.transcript import (
    GenerationOptions,
    HostedToolSpec,
    JsonObject,
    JsonValue,
    ToolChoice,
    ToolSpec,
)

DECLARATION_FIELDS: Final = frozenset({"name", "description", "parameters", "parametersJsonSchema"})
_SHARED: Final[tuple[tuple[str, str, Callable[[JsonValue, str], Any]], ...]] = (
    ("topK", "top_k", as_number),  # google-genai types it float; 20.0 is seen on the wire
    ("presencePenalty", "presence_penalty", as_number),
    ("frequencyPenalty", "frequency_penalty", as_number),
    ("candidateCount", "candidate_count", as_int),
    ("responseLogprobs", "logprobs", as_bool),
    ("logprobs", "top_logprobs", as_int),
)
"""Wire field, canonical option, reader: the shared options ``generationConfig`` carries."""
_CARRIED: Final = frozenset(name for _, name, _ in _SHARED)
_NAMES: Final = {name: f"generationConfig.{wire}" for wire, name, _ in _SHARED}
GENERATION_FIELDS: Final = frozenset(
    {"temperature", "topP", "maxOutputTokens", "stopSequences", "seed", "thinkingConfig"}
    | {wire for wire, _, _ in _SHARED}
)
THINKING_FIELDS: Final = frozenset({"includeThoughts", "thinkingBudget", "thinkingLevel"})
CALLING_FIELDS: Final = frozenset({"mode", "allowedFunctionNames"})
LEVELS: Final = frozenset({"minimal", "low", "medium", "high", "xhigh"})
UNSPECIFIED_LEVEL: Final = "THINKING_LEVEL_UNSPECIFIED"
"""The enum's zero value: no level asked for (kept as it came, never a canonical effort)."""
_T = TypeVar("_T")
_MODES: Final = {"AUTO": "auto", "ANY": "required", "NONE": "none", "VALIDATED": "auto"}


def decode_tools(
    value: JsonValue, path: str, marks: JsonObject
) -> tuple[tuple[ToolSpec, ...], tuple[HostedToolSpec, ...]]:
    """``tools[]`` as declarations and hosted specs; records a non-default layout in ``marks``."""
    tools: list[ToolSpec] = []
    hosted: list[HostedToolSpec] = []
    layout: list[tuple[int, bool]] = []
    if isinstance(value, dict):  # one Tool object instead of a list of them (seen in traffic)
        marks["toolsObject"] = True
        value = [value]
    for index, item in enumerate(as_list(value, path)):
        where = f"{path}[{index}]"
        body = as_object(item, where)
        declarations: list[JsonValue] = []
        rest: JsonObject = {}
        for key, entry in body.items():
            if camel(key) == "functionDeclarations":
                declarations = as_list(entry, f"{where}.{key}")
            else:
                rest[camel(key)] = entry
        for position, declaration in enumerate(declarations):
            tools.append(
                _decode_declaration(declaration, f"{where}.functionDeclarations[{position}]")
            )
        if rest:
            hosted.append(HostedToolSpec(provider="google", spec=rest))
        layout.append((len(declarations), bool(rest)))
    if layout != _layout(None, len(tools), len(hosted)):
        marks["toolLayout"] = [[count, has_hosted] for count, has_hosted in layout]
    return tuple(tools), tuple(hosted)


def _decode_declaration(value: JsonValue, path: str) -> ToolSpec:
    fields, unknown = split_fields(as_object(value, path), DECLARATION_FIELDS)
    marks: JsonObject = {"fields": unknown} if unknown else {}
    schema = fields.get("parametersJsonSchema")
    if "parameters" in fields:
        if schema is not None:
            unknown["parametersJsonSchema"] = schema
            marks["fields"] = unknown
        schema = fields["parameters"]
        marks["schemaKey"] = "parameters"
        if isinstance(schema, dict):
            # The OpenAPI-subset Schema ("type": "OBJECT", "nullable") as JSON Schema, which
            # every other dialect takes; the original is written back to Gemini unchanged.
            converted = openapi_to_json_schema(schema)
            if converted != schema:
                marks["openapi"] = schema
                schema = converted
    description = fields.get("description")
    if description is None and "description" in fields:
        unknown["description"] = None  # an explicit null, written back as it came
        marks["fields"] = unknown
    return ToolSpec(
        name=as_str(fields.get("name"), f"{path}.name"),
        description=None if description is None else as_str(description, f"{path}.description"),
        parameters=None if schema is None else as_object(schema, f"{path}.parameters"),
        extra={DIALECT: marks} if marks else {},
    )


def encode_tools(
    tools: tuple[ToolSpec, ...],
    hosted: tuple[HostedToolSpec, ...],
    marks: JsonObject,
    encoder: PartEncoder,
) -> list[JsonValue]:
    """The wire ``tools[]``; another provider's hosted tool is refused (strict) or dropped
    with a warning (degrade)."""
    declarations = [_encode_declaration(tool, index, encoder) for index, tool in enumerate(tools)]
    specs: list[JsonObject] = []
    for index, spec in enumerate(hosted):
        if spec.provider == "google":
            specs.append(dict(spec.spec))
        else:
            encoder.lossy(
                "hosted_tool_unsupported",
                f"hosted_tools[{index}]",
                f"{spec.provider} hosted tool has no Gemini form",
            )
    out: list[JsonValue] = []
    taken_declarations = taken_specs = 0
    for count, has_hosted in _layout(marks.get("toolLayout"), len(declarations), len(specs)):
        tool: JsonObject = {}
        if count or not has_hosted:
            end = taken_declarations + count
            tool["functionDeclarations"] = list(declarations[taken_declarations:end])
            taken_declarations = end
        if has_hosted:
            tool.update(specs[taken_specs])
            taken_specs += 1
        out.append(tool)
    return out


def _layout(recorded: JsonValue, declarations: int, hosted: int) -> list[tuple[int, bool]]:
    """The recorded tool grouping if it still fits the tools, else the default grouping."""
    default = [(declarations, False)] if declarations else []
    default += [(0, True)] * hosted
    if not isinstance(recorded, list):
        return default
    layout: list[tuple[int, bool]] = []
    for entry in recorded:
        if not (isinstance(entry, list) and len(entry) == 2):
            return default
        count, has_hosted = entry
        if not isinstance(count, int) or not isinstance(has_hosted, bool):
            return default
        layout.append((count, has_hosted))
    if sum(count for count, _ in layout) != declarations or sum(h for _, h in layout) != hosted:
        return default
    return layout


def _encode_declaration(tool: ToolSpec, index: int, encoder: PartEncoder) -> JsonObject:
    own = tool.extra.get(DIALECT, {})
    wire: JsonObject = {"name": tool.name}
    if tool.description is not None:
        wire["description"] = tool.description
    if tool.parameters is not None:
        key = "parameters" if own.get("schemaKey") == "parameters" else "parametersJsonSchema"
        original = own.get("openapi")
        unchanged = (
            isinstance(original, dict) and openapi_to_json_schema(original) == tool.parameters
        )
        wire[key] = original if unchanged else tool.parameters
    wire.update(object_entry(own, "fields"))
    if tool.strict:
        encoder.warn(
            "tool_strict_dropped",
            f"tools[{index}]",
            "Gemini function declarations have no strict flag; the schema is not enforced",
        )
    return wire


def decode_tool_choice(value: JsonValue, path: str, marks: JsonObject) -> ToolChoice | None:
    """``toolConfig`` as a tool choice; unmapped keys kept in ``marks``."""
    body = as_object(value, path)
    config_value: JsonValue = None
    rest: JsonObject = {}
    for key, item in body.items():
        if camel(key) == "functionCallingConfig":
            config_value = item
        else:
            rest[camel(key)] = item
    marks["toolConfig"] = rest
    if config_value is None:
        return None
    where = f"{path}.functionCallingConfig"
    fields, unknown = split_fields(as_object(config_value, where), CALLING_FIELDS)
    marks["functionCallingConfig"] = unknown
    names_value = fields.get("allowedFunctionNames")
    names = (
        ()
        if names_value is None
        else tuple(
            as_str(name, f"{where}.allowedFunctionNames[{index}]")
            for index, name in enumerate(as_list(names_value, f"{where}.allowedFunctionNames"))
        )
    )
    mode_value = fields.get("mode")
    mode = None if mode_value is None else as_str(mode_value, f"{where}.mode")
    if mode is None or mode not in _MODES:
        marks["functionCallingConfig"] = {**unknown, **fields}
        return None
    if mode == "VALIDATED":
        marks["functionCallingMode"] = "VALIDATED"
    if names_value is not None and not names:
        marks["emptyAllowedNames"] = True
    return ToolChoice(mode=_MODES[mode], names=names)  # pyright: ignore[reportArgumentType] -- _MODES values are ToolChoice modes


def encode_tool_config(choice: ToolChoice | None, marks: JsonObject) -> JsonObject | None:
    """The wire ``toolConfig``, or ``None`` when there is nothing to send."""
    if choice is None and "toolConfig" not in marks:
        return None
    config: JsonObject = dict(object_entry(marks, "toolConfig"))
    calling: JsonObject = dict(object_entry(marks, "functionCallingConfig"))
    if choice is not None:
        if choice.mode == "none":
            calling["mode"] = "NONE"
        elif choice.mode == "required":
            calling["mode"] = "ANY"
        else:
            calling["mode"] = "VALIDATED" if marks.get("functionCallingMode") else "AUTO"
        if choice.names or marks.get("emptyAllowedNames"):
            calling["allowedFunctionNames"] = list(choice.names)
    if calling or "functionCallingConfig" in marks:
        config["functionCallingConfig"] = calling
    return config


def decode_generation(value: JsonValue, path: str, marks: JsonObject) -> GenerationOptions:
    """``generationConfig`` as canonical options; every unmapped key kept in ``marks``."""
    fields, unknown = split_fields(as_object(value, path), GENERATION_FIELDS)
    marks["generationConfig"] = unknown
    for wire, _, _ in _SHARED:
        if wire in fields and fields[wire] is None:
            unknown[wire] = None  # sent as null: nothing to carry, kept as it came
    if fields.get("stopSequences") == []:
        unknown["stopSequences"] = []  # an explicit empty list: nothing to carry, kept as it came
    thinking: dict[str, JsonValue] = {}
    if "thinkingConfig" in fields:
        where = f"{path}.thinkingConfig"
        thinking, thinking_unknown = split_fields(
            as_object(fields["thinkingConfig"], where), THINKING_FIELDS
        )
        marks["thinkingConfig"] = thinking_unknown
        if thinking.get("thinkingLevel") == UNSPECIFIED_LEVEL:
            thinking_unknown["thinkingLevel"] = thinking.pop("thinkingLevel")  # no level: kept
    stop = fields.get("stopSequences")
    level = thinking.get("thinkingLevel")
    options = GenerationOptions(
        temperature=_optional(fields, "temperature", path, as_number),
        top_p=_optional(fields, "topP", path, as_number),
        max_output_tokens=_optional(fields, "maxOutputTokens", path, as_int),
        stop=()
        if stop is None
        else tuple(
            as_str(item, f"{path}.stopSequences[{index}]")
            for index, item in enumerate(as_list(stop, f"{path}.stopSequences"))
        ),
        seed=_optional(fields, "seed", path, as_int),
        include_reasoning=_optional(thinking, "includeThoughts", f"{path}.thinkingConfig", as_bool),
        thinking_budget=_optional(thinking, "thinkingBudget", f"{path}.thinkingConfig", as_int),
        reasoning_effort=None
        if level is None
        else as_str(level, f"{path}.thinkingConfig.thinkingLevel").lower(),
        **_decode_shared(fields, path),
    )
    check_answer_options(options, _NAMES, top_needs_logprobs=False)
    return options


def _decode_shared(fields: dict[str, JsonValue], path: str) -> dict[str, Any]:
    """The options ``generationConfig`` shares with some other dialects, by canonical name."""
    return {
        name: read(fields[wire], f"{path}.{wire}")
        for wire, name, read in _SHARED
        if fields.get(wire) is not None
    }


def _optional(
    fields: dict[str, JsonValue], key: str, path: str, read: Callable[[JsonValue, str], _T]
) -> _T | None:
    value = fields.get(key)
    return None if value is None else read(value, f"{path}.{key}")


def encode_generation(
    options: GenerationOptions, marks: JsonObject, encoder: PartEncoder
) -> JsonObject | None:
    """The wire ``generationConfig``, or ``None`` when there is nothing to send."""
    config: JsonObject = dict(object_entry(marks, "generationConfig"))
    if options.temperature is not None:
        config["temperature"] = options.temperature
    if options.top_p is not None:
        config["topP"] = options.top_p
    if options.max_output_tokens is not None:
        config["maxOutputTokens"] = options.max_output_tokens
    if options.stop:
        config["stopSequences"] = list(options.stop)
    if options.seed is not None:
        config["seed"] = options.seed
    for wire, name, _ in _SHARED:
        if (value := getattr(options, name)) is not None:
            config[wire] = value
    for warning in unsent_options(options, _CARRIED, "Gemini"):
        encoder.warn(warning.code, warning.location, warning.message)
    thinking = _encode_thinking(options, marks, encoder)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config or "generationConfig" in marks:
        return config
    return None


def _encode_thinking(
    options: GenerationOptions, marks: JsonObject, encoder: PartEncoder
) -> JsonObject | None:
    thinking: JsonObject = dict(object_entry(marks, "thinkingConfig"))
    include = options.include_reasoning
    if include is None and options.reasoning_summary not in (None, "none"):
        include = True
    if options.reasoning_summary is not None:
        encoder.warn(
            "option_dropped",
            "options.reasoning_summary",
            f"Gemini has no summary setting; {options.reasoning_summary!r} is sent as "
            f"includeThoughts={include}",
        )
    if include is not None:
        thinking["includeThoughts"] = include
    if options.thinking_budget is not None:
        thinking["thinkingBudget"] = options.thinking_budget
    effort = options.reasoning_effort
    if effort is not None:
        if effort in LEVELS:
            thinking["thinkingLevel"] = effort.upper()
        else:
            encoder.warn(
                "reasoning_effort_dropped",
                "options.reasoning_effort",
                f"reasoning effort {effort!r} has no Gemini thinkingLevel; not sent",
            )
    if thinking or "thinkingConfig" in marks:
        return thinking
    return None
