"""Encoded Anthropic payloads checked against the official ``anthropic`` SDK types.

The request param types are ``TypedDict``s whose block unions also accept the response
models (which keep unknown fields), so a whole-body validation would let a stray key pass.
Each message (by ``role``), each content block (by ``type``, also inside ``tool_result``)
and each tool (by ``type``, ``custom`` when absent) is validated against its single
TypedDict instead, and a key that validation dropped is reported. Responses and stream
events are the SDK's pydantic models, walked for undeclared fields.
"""

from __future__ import annotations

from anthropic.types import (
    ContentBlockParam,
    Message,
    MessageParam,
    RawMessageStreamEvent,
    ToolParam,
    ToolUnionParam,
)
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

from interlock.conformance._sdk import (
    Problems,
    _adapter,  # pyright: ignore[reportPrivateUsage] -- one SDK-checking package
    _check_typed,  # pyright: ignore[reportPrivateUsage] -- one SDK-checking package
    _check_union_items,  # pyright: ignore[reportPrivateUsage] -- one SDK-checking package
    _openai_model,  # pyright: ignore[reportPrivateUsage] -- pydantic model walk, not OpenAI-specific
    _top_level,  # pyright: ignore[reportPrivateUsage] -- one SDK-checking package
)
from interlock.transcript import JsonObject, JsonValue


def _blocks(content: JsonValue, path: str) -> Problems:
    if isinstance(content, str) or content is None:
        return []
    problems = _check_union_items(content, ContentBlockParam, "type", path)
    for index, block in enumerate(content if isinstance(content, list) else []):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            problems += _blocks(block.get("content"), f"{path}[{index}].content")
    return problems


def _messages(value: JsonValue) -> Problems:
    stubs: list[JsonValue] = []
    problems: Problems = []
    for index, message in enumerate(value if isinstance(value, list) else []):
        if not isinstance(message, dict):
            problems.append(f"messages[{index}]: expected an object")
            continue
        problems += _blocks(message.get("content"), f"messages[{index}].content")
        stub = dict(message)
        if isinstance(stub.get("content"), list):
            stub["content"] = "stub"
        stubs.append(stub)
    return problems + _check_union_items(stubs, MessageParam, "role", "messages")


SAMPLING_KEYS = frozenset({"temperature", "top_p", "top_k"})
"""Top-level fields of API version 2023-06-01 that the 2.x SDK types no longer declare."""


def anthropic_request(payload: JsonObject, vendor_keys: frozenset[str] = SAMPLING_KEYS) -> Problems:
    """A Messages request body: top level, each message and block, each tool.

    ``vendor_keys`` are top-level keys the target deliberately sends although the SDK types
    do not declare them; the 2023-06-01 sampling fields always are.
    """
    dropped = vendor_keys | SAMPLING_KEYS
    payload = {key: value for key, value in payload.items() if key not in dropped}
    problems = _top_level(MessageCreateParamsNonStreaming, payload, ("messages", "tools", "system"))
    problems += _messages(payload.get("messages", []))
    system = payload.get("system")
    if isinstance(system, list):
        problems += _check_union_items(system, ContentBlockParam, "type", "system")
    elif system is not None and not isinstance(system, str):
        problems.append("system: expected a string or a list of text blocks")
    return problems + _tools(payload.get("tools", []))


def _tools(value: JsonValue) -> Problems:
    """Custom tools (``type`` absent or ``custom``: Optional in the SDK) and the rest by type."""
    problems: Problems = []
    for index, tool in enumerate(value if isinstance(value, list) else []):
        where = f"tools[{index}]"
        if isinstance(tool, dict) and tool.get("type", "custom") == "custom":
            problems += _check_typed([_adapter(ToolParam)], tool, where)
        else:
            problems += [
                problem.replace("tools[0]", where, 1)
                for problem in _check_union_items([tool], ToolUnionParam, "type", "tools")
            ]
    return problems


def anthropic_response(payload: JsonObject) -> Problems:
    """A Messages ``Message`` response."""
    return _openai_model(Message, payload, "response")


def anthropic_event(data: JsonObject) -> Problems:
    """One Messages stream event (the SDK's discriminated event union)."""
    return _openai_model(RawMessageStreamEvent, data, "event")
