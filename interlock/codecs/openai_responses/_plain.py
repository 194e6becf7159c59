"""The commonest input items, decoded directly (the fast path of ``_items``).

Each function takes an item of one exact shape and gives what the general path of
``_items`` gives for it, or ``None`` for anything else (which that path then decodes,
errors included). The shapes, every key present and no other:

* ``{"type": "message"?, "role": user | system | developer, "content"}`` with string
  content or ``input_text`` parts of ``type`` and ``text`` only;
* ``{"type": "message"?, "role": "assistant", "content": str}`` and the output-shaped
  ``{"id", "type": "message", "status": "completed", "role": "assistant", "content":
  [{"type": "output_text", "text", "annotations": []}, …]}``;
* ``{"type": "function_call", "call_id", "name", "arguments"}``, also with ``"id"`` and
  ``"status": "completed"``;
* ``{"type": "function_call_output", "call_id", "output": str}``, also with ``"id"``;
* ``{"type": "reasoning", "id"?, "summary": [{"type": "summary_text", "text"}, …],
  "encrypted_content"?: str}``.

``last`` is the part before the item in the same canonical message (``None`` at a
message's start): an item continuing a part of the same item id gets the ``~item``
boundary mark, as on the general path.
"""

from __future__ import annotations

from interlock.codecs.openai_responses._wire import ABSENT, DIALECT, ITEM, encrypted, is_minted
from interlock.transcript import (
    Extra,
    JsonObject,
    JsonValue,
    Message,
    Part,
    ReasoningPart,
    RefusalPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from interlock.transcript import build as built

_INPUT_ROLES: dict[str, Role] = {"user": "user", "system": "system", "developer": "developer"}
_MESSAGE = "message"


def _message_fields(data: JsonObject) -> tuple[JsonObject, int] | None:
    """The kept fields of a message item without ``id`` (``type`` absent is recorded) and
    its expected size, or ``None`` when ``type`` is there but not ``"message"``."""
    if "type" not in data:
        return {ABSENT: ["type"]}, 2
    return ({}, 3) if data["type"] == _MESSAGE else None


def input_message(data: JsonObject) -> Message | None:
    """A user, system or developer message item of plain text content."""
    role_value = data.get("role")
    role = _INPUT_ROLES.get(role_value) if isinstance(role_value, str) else None
    shape = _message_fields(data)
    content = data.get("content")
    if role is None or shape is None or len(data) != shape[1] or content is None:
        return None
    fields = shape[0]
    if isinstance(content, str):
        fields["~content"] = "string"
        parts: tuple[Part, ...] = (built.text_part(content),)
    else:
        texts = _texts(content, "input_text")
        if texts is None:
            return None
        parts = tuple([built.text_part(text) for text in texts])
    return built.message(role, parts, extra={DIALECT: fields} if fields else None)


def _texts(entries: JsonValue, kind: str) -> list[str] | None:
    """The texts of ``entries`` when each is exactly ``{"type": kind, "text": <str>}``
    (``input_text`` content, ``summary_text`` summaries); ``None`` for any other shape."""
    if not isinstance(entries, list):
        return None
    texts: list[str] = []
    for entry in entries:
        if not isinstance(entry, dict) or len(entry) != 2 or entry.get("type") != kind:
            return None
        text = entry.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    return texts


def _boundary(last: Part | None, item_id: str | None, kinds: type | tuple[type, ...]) -> bool:
    return isinstance(last, kinds) and getattr(last, "item_id", None) == item_id


def assistant_message(data: JsonObject, last: Part | None) -> list[Part] | None:
    """An assistant message item of string content, or output-shaped with plain text."""
    content = data.get("content")
    if isinstance(content, str):
        shape = _message_fields(data)
        if shape is None or len(data) != shape[1]:
            return None
        fields = shape[0]
        boundary = _boundary(last, None, (TextPart, RefusalPart))
        marked = _marked(fields) if fields or boundary else None
        return [built.text_part(content, extra=marked)]
    wire_id = data.get("id")
    if (
        len(data) != 5
        or not isinstance(wire_id, str)
        or data.get("type") != _MESSAGE
        or data.get("status") != "completed"
    ):
        return None
    texts = _output_texts(content)
    if not texts:
        return None
    item_id = None if is_minted(wire_id) else wire_id
    parts: list[Part] = [built.text_part(text, item_id=item_id) for text in texts]
    if _boundary(last, item_id, (TextPart, RefusalPart)):
        parts[0] = built.text_part(texts[0], item_id=item_id, extra=_marked({}))
    return parts


def _output_texts(content: JsonValue) -> list[str] | None:
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    for entry in content:
        if not isinstance(entry, dict) or len(entry) != 3 or entry.get("type") != "output_text":
            return None
        text, annotations = entry.get("text"), entry.get("annotations")
        if not isinstance(text, str) or annotations != []:
            return None
        texts.append(text)
    return texts


def function_call(data: JsonObject) -> ToolCallPart | None:
    """A ``function_call`` item (with or without its output-shaped ``id`` and status)."""
    call_id, name, arguments = data.get("call_id"), data.get("name"), data.get("arguments")
    if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str)):
        return None
    if len(data) == 4:
        return built.tool_call_part(call_id, name, arguments)
    wire_id = data.get("id")
    if len(data) != 6 or not isinstance(wire_id, str) or data.get("status") != "completed":
        return None
    item_id = None if is_minted(wire_id) else wire_id
    return built.tool_call_part(call_id, name, arguments, item_id=item_id)


def function_call_output(data: JsonObject) -> ToolResultPart | None:
    """A ``function_call_output`` item of string output (with or without an ``id``)."""
    call_id, output, wire_id = data.get("call_id"), data.get("output"), data.get("id")
    if not (isinstance(call_id, str) and isinstance(output, str)):
        return None
    if wire_id is None:
        if len(data) != 3:
            return None
    elif len(data) != 4 or not isinstance(wire_id, str):
        return None
    return built.tool_result_part(call_id, (built.text_part(output),), item_id=wire_id)


def reasoning(data: JsonObject, last: Part | None, issuer: str) -> list[Part] | None:
    """A ``reasoning`` item of summary texts and, optionally, encrypted content."""
    wire_id, blob, summary = (
        data.get("id", ""),
        data.get("encrypted_content", ""),
        data.get("summary"),
    )
    size = 2 + ("id" in data) + ("encrypted_content" in data)
    if len(data) != size or not isinstance(summary, list):
        return None
    if not (isinstance(wire_id, str) and isinstance(blob, str)):
        return None
    texts = _texts(summary, "summary_text")
    if texts is None:
        return None
    item_id = wire_id if "id" in data and not is_minted(wire_id) else None
    # The first part carries the boundary mark (``_items._with_item``).
    marked = _marked({}) if _boundary(last, item_id, ReasoningPart) else None
    parts: list[Part] = []
    for text in texts:
        parts.append(built.reasoning_part("summary", text, item_id=item_id, extra=marked))
        marked = None
    if "encrypted_content" in data or not parts:
        opaque = encrypted(blob, issuer) if "encrypted_content" in data else None
        parts.append(
            built.reasoning_part("encrypted", opaque=opaque, item_id=item_id, extra=marked)
        )
    return parts


def _marked(fields: JsonObject) -> Extra:
    """The ``~item`` mark: the item's leftover fields, on the first part of an item."""
    return {DIALECT: {ITEM: fields}}
