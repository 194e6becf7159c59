"""The request settings a translation must carry, warn about or refuse.

:func:`setting_items` lists every setting a decoded request holds — the canonical ones
(generation options, tools, tool choice, structured output…) and every wire field the
decoder kept verbatim in ``Request.extra`` because it has no canonical home — as
:class:`~interlock.conformance._features.Item` values. The list is computed from the decoded
request alone, never from the codec's warnings, so a field an encoder drops without a word
shows up as lost. Transport fields (``stream``, ``stream_options``) are not settings.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from interlock.codecs import _structured as structured
from interlock.codecs._fields import kept_wire_fields
from interlock.conformance._compare import ItemResult
from interlock.conformance._features import Item, canonical_json
from interlock.transcript import JsonObject, JsonValue, Request, TranslationWarning

STRUCTURED = frozenset(
    {"response_format", "format", "responseMimeType", "responseSchema", "responseJsonSchema"}
)
"""Wire names (at any depth) that ask for structured output."""

_DIALECT_KEYS = ("openai-chat", "openai-responses", "gemini", "anthropic")


def setting_items(request: Request) -> list[Item]:
    """Every setting of ``request``, each keyed by its name and value."""
    items = list(_canonical(request))
    for dialect in _DIALECT_KEYS:
        for path, value in kept_wire_fields(request.extra, dialect):
            leaf = path.rpartition(".")[2]
            feature = "structured_output" if leaf in STRUCTURED else "settings"
            items.append(_item(feature, path, value))
    return items


def _item(feature: str, name: str, value: JsonValue) -> Item:
    return Item(feature, f"settings.{name}", ("setting", name, canonical_json(value)))


def _canonical(request: Request) -> Iterator[Item]:
    options = request.options
    for name in (
        "temperature",
        "top_p",
        "top_k",
        "max_output_tokens",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "user",
        "metadata",
        "reasoning_effort",
        "reasoning_summary",
        "include_reasoning",
        "thinking_budget",
    ):
        value = getattr(options, name)
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # the same setting (Gemini's SDK sends topK 20.0, Anthropic 20)
        if value is not None:
            yield _item("settings", name, value)
    if options.stop:
        yield _item("settings", "stop", list(options.stop))
    for tool in request.tools:
        yield Item(
            "tools",
            f"tools.{tool.name}",
            ("tool", tool.name, canonical_json(tool.parameters or {})),
        )
    if request.response_format is not None:
        response_format = request.response_format
        shape: JsonObject = {
            "kind": response_format.type,
            "schema": structured.json_schema(response_format),
        }
        yield _item("structured_output", "response_format", shape)
    if request.tool_choice is not None:
        choice = request.tool_choice
        yield _item("tools", "tool_choice", [choice.mode, *choice.names])
    if request.parallel_tool_calls is not None:
        yield _item("tools", "parallel_tool_calls", request.parallel_tool_calls)
    for index, hosted in enumerate(request.hosted_tools):
        yield Item(
            "hosted_tool",
            f"hosted_tools[{index}]",
            ("hosted_spec", hosted.provider, canonical_json(hosted.spec)),
        )


def _tokens(location: str) -> set[str]:
    return {token for token in location.replace("[", ".").replace("]", "").split(".") if token}


def compare_settings(
    source: Sequence[Item], back: Sequence[Item], warnings: Sequence[TranslationWarning]
) -> list[ItemResult]:
    """Each source setting: found again, warned about (a warning naming it), or lost."""
    available = {item.key for item in back}
    results: list[ItemResult] = []
    for item in source:
        if item.key in available:
            results.append(ItemResult(item, "translated"))
            continue
        names = _tokens(item.location.removeprefix("settings."))
        warning = next((w for w in warnings if names & _tokens(w.location)), None)
        if warning is not None:
            results.append(ItemResult(item, "degraded", detail=warning.code, code=warning.code))
        else:
            results.append(ItemResult(item, None, "lost", "setting missing, no warning"))
    return results
