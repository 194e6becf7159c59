"""Chat ``messages[]`` → canonical messages.

Assistant parts come out in a fixed order: reasoning, content (text / refusal parts),
the ``refusal`` field, ``tool_calls``, a deprecated ``function_call``, Groq's
``executed_tools`` (hosted parts, :mod:`._executed`). The empty
``content`` next to a ``refusal`` is no text part (only the layout remembers it). A ``tool`` message
becomes ``Message(role="tool")`` holding one :class:`ToolResultPart`. The deprecated
``function`` role becomes the same, paired with the latest ``function_call`` of that name
(whose call id is minted from its position: ``call_fn_<message index>``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from interlock.codecs.openai_chat._content import decode_content
from interlock.codecs.openai_chat._executed import FIELD as EXECUTED
from interlock.codecs.openai_chat._executed import decode_executed
from interlock.codecs.openai_chat._reasoning import decode_reasoning, take_google_signature
from interlock.codecs.openai_chat._tools import check_arguments, decode_tool_call, plain_tool_call
from interlock.codecs.openai_chat._wire import (
    DIALECT,
    LAYOUT,
    as_list,
    as_object,
    as_str,
    optional_str,
    required,
    rest,
    with_extra,
)
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    Message,
    Opaque,
    Part,
    RefusalPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from interlock.transcript import build as built

_TEXT_ONLY = frozenset({"text"})
_USER_PARTS = frozenset({"text", "image_url", "video_url", "input_audio", "file"})
_ASSISTANT_PARTS = frozenset({"text", "refusal", "thinking"})
_PLAIN_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "developer",
    "user": "user",
    "assistant": "assistant",
}


def decode_messages(value: JsonValue, path: str) -> tuple[Message, ...]:
    """The ``messages`` array.

    A tool result is given the name of the call it answers (Chat does not repeat it;
    Gemini's ``functionResponse`` needs it).
    """
    items = as_list(value, path)
    function_calls: dict[str, str] = {}
    names: dict[str, str] = {}
    messages: list[Message] = []
    for i, item in enumerate(items):
        message = common_message(item, names)
        if message is None:
            where = f"{path}[{i}]"
            message = decode_message(as_object(item, where), where, i, function_calls)
            if message.role == "tool":
                message = _named_result(message, names)
        if message.role == "assistant":
            for call in message.tool_calls:
                names[call.call_id] = call.name
        messages.append(message)
    return tuple(messages)


def common_message(item: JsonValue, names: dict[str, str]) -> Message | None:
    """A message of one of the commonest shapes, decoded directly: a system, developer,
    user or assistant message of string content and nothing else, a tool result of string
    content, an assistant message of plain tool calls (with ``content`` null or a string and
    DeepSeek's ``reasoning_content``). ``None`` for any other message, which
    :func:`decode_message` then decodes. Equal to what :func:`decode_message` (and the
    naming of a tool result after its call, from ``names``) gives for the same message."""
    if not isinstance(item, dict):
        return None
    role, content, size = item.get("role"), item.get("content"), len(item)
    if isinstance(content, str) and size == 2:
        plain = _PLAIN_ROLES.get(role) if isinstance(role, str) else None
        return None if plain is None else built.message(plain, (built.text_part(content),))
    if role == "tool":
        call_id = item.get("tool_call_id")
        if size != 3 or not isinstance(content, str) or not isinstance(call_id, str):
            return None
        result = built.tool_result_part(
            call_id, (built.text_part(content),), name=names.get(call_id)
        )
        return built.message("tool", (result,))
    if role == "assistant" and "content" in item:
        return _called(item, content, size)
    return None


def _called(item: JsonObject, content: JsonValue, size: int) -> Message | None:
    """An assistant message ``{"role", "content": null | str, "reasoning_content"?: str,
    "tool_calls": [plain calls]}`` (see :func:`common_message`)."""
    calls, reasoning = item.get("tool_calls"), item.get("reasoning_content")
    if not isinstance(calls, list) or not calls or size != 3 + (reasoning is not None):
        return None
    parts: list[Part] = []
    if reasoning is not None:
        if not isinstance(reasoning, str):
            return None
        carrier: dict[str, JsonObject] = {LAYOUT: {"carrier": "reasoning_content"}}
        parts.append(built.reasoning_part("raw", reasoning, extra=carrier))
    if isinstance(content, str):
        parts.append(built.text_part(content))
    elif content is not None:
        return None
    for call in calls:
        part = plain_tool_call(call)
        if part is None:
            return None
        parts.append(part)
    extra: dict[str, JsonObject] = {DIALECT: {"content": None}} if content is None else {}
    return built.message("assistant", tuple(parts), extra=extra)


def _named_result(message: Message, names: dict[str, str]) -> Message:
    result = message.parts[0]
    if not isinstance(result, ToolResultPart) or result.name is not None:
        return message
    name = names.get(result.call_id)
    if name is None:
        return message
    return replace(message, parts=(replace(result, name=name),))


def decode_message(
    message: JsonObject, path: str, index: int, function_calls: dict[str, str]
) -> Message:
    """One message; ``function_calls`` maps deprecated function names to minted call ids."""
    role = as_str(required(message, "role", path), f"{path}.role")
    match role:
        case "system" | "developer":
            return _instruction(message, path, role, _TEXT_ONLY)
        case "user":
            return _instruction(message, path, "user", _USER_PARTS)
        case "assistant":
            return _assistant(message, path, index, function_calls)
        case "tool":
            call_id = as_str(required(message, "tool_call_id", path), f"{path}.tool_call_id")
            return _tool_result(message, path, call_id, {"role", "tool_call_id", "content"})
        case "function":
            name = as_str(required(message, "name", path), f"{path}.name")
            call_id = function_calls.get(name)
            if call_id is None:
                raise DecodeError(f"{path}.name", f"no earlier function_call named {name!r}")
            return _tool_result(message, path, call_id, {"role", "name", "content"}, name=name)
        case _:
            raise DecodeError(f"{path}.role", f"unknown role {role!r}")


def _instruction(message: JsonObject, path: str, role: str, allow: frozenset[str]) -> Message:
    content = required(message, "content", path)
    parts = decode_content(content, f"{path}.content", allow=allow)
    layout: JsonObject | None = {"content": "parts"} if isinstance(content, list) else None
    return Message(
        role="user" if role == "user" else ("system" if role == "system" else "developer"),
        parts=tuple(parts),
        name=optional_str(message, "name", path),
        extra=with_extra(rest(message, {"role", "content", "name"}), layout),
    )


def _assistant(
    message: JsonObject, path: str, index: int, function_calls: dict[str, str]
) -> Message:
    signature, message = take_google_signature(message, path)
    reasoning, consumed = decode_reasoning(message, path)
    parts: list[Part] = list(reasoning)
    reasoning_count = len(parts)
    layout: JsonObject = {}
    content = message.get("content")
    if content == "" and message.get("refusal") is not None:
        # A refusal's empty content (what SDKs accumulate from a stream's role chunk) is
        # a layout fact, not a text part: the refusal must come back as a refusal alone.
        layout["content"] = "empty"
        consumed.add("content")
    elif isinstance(content, dict):
        # Cloudflare Workers AI answers a json_schema request with the object itself as the
        # content: it is the answer's text (the JSON), written back as the object.
        parts.append(TextPart(text=json.dumps(content, ensure_ascii=False)))
        layout["content"] = "object"
        consumed.add("content")
    elif content is not None:
        parts.extend(decode_content(content, f"{path}.content", allow=_ASSISTANT_PARTS))
        consumed.add("content")
        if isinstance(content, list):
            layout["content"] = "parts"
    elif "content" not in message:
        layout["content"] = "absent"
    if signature is not None:
        _attach_text_signature(parts, reasoning_count, signature)
    if message.get("refusal") is not None:
        parts.append(RefusalPart(text=as_str(message["refusal"], f"{path}.refusal")))
        consumed.add("refusal")
    if message.get("tool_calls") is not None and message["tool_calls"] != []:
        calls = as_list(message["tool_calls"], f"{path}.tool_calls")
        for i, call in enumerate(calls):
            where = f"{path}.tool_calls[{i}]"
            parts.append(decode_tool_call(as_object(call, where), where))
        consumed.add("tool_calls")
    if message.get("function_call") is not None:
        call = _function_call(message["function_call"], f"{path}.function_call", index)
        function_calls[call.name] = call.call_id
        parts.append(call)
        consumed.add("function_call")
    if message.get(EXECUTED):  # Groq's server-side tool runs (an empty list stays a field)
        parts.extend(decode_executed(message[EXECUTED], f"{path}.{EXECUTED}"))
        consumed.add(EXECUTED)
    consumed |= {"role", "name"}
    return Message(
        role="assistant",
        parts=tuple(parts),
        name=optional_str(message, "name", path),
        extra=with_extra(rest(message, consumed), layout),
    )


def _attach_text_signature(parts: list[Part], start: int, signature: Opaque) -> None:
    """A text turn's signature goes on its last text part (an empty one if it has none)."""
    for position in range(len(parts) - 1, start - 1, -1):
        part = parts[position]
        if isinstance(part, TextPart):
            parts[position] = TextPart(text=part.text, signature=signature, extra=part.extra)
            return
    parts.append(TextPart(text="", signature=signature, extra=with_extra({}, {"carrier": True})))


def _function_call(value: JsonValue, path: str, index: int) -> ToolCallPart:
    call = as_object(value, path)
    arguments = as_str(required(call, "arguments", path), f"{path}.arguments")
    check_arguments(arguments, f"{path}.arguments")
    return ToolCallPart(
        call_id=f"call_fn_{index}",
        name=as_str(required(call, "name", path), f"{path}.name"),
        arguments=arguments,
        extra=with_extra(rest(call, {"name", "arguments"}), {"function_call": True}),
    )


def _tool_result(
    message: JsonObject, path: str, call_id: str, known: set[str], *, name: str | None = None
) -> Message:
    content = required(message, "content", path)
    output: Sequence[TextPart] = [
        part
        for part in decode_content(content, f"{path}.content", allow=_TEXT_ONLY)
        if isinstance(part, TextPart)
    ]
    layout: JsonObject = {}
    if isinstance(content, list):
        layout["content"] = "parts"
    if name is not None:
        layout["role"] = "function"
    result = ToolResultPart(call_id=call_id, output=tuple(output), name=name)
    return Message(role="tool", parts=(result,), extra=with_extra(rest(message, known), layout))
