"""Wire ``contents[]`` / ``systemInstruction`` → canonical messages.

* ``systemInstruction`` → one leading ``system`` message (its parts kept one by one).
* A ``model`` content → one ``assistant`` message, parts in order, never merged.
* A ``user`` content → a ``tool`` message per ``functionResponse`` part and a ``user``
  message per run of other parts. Encoding groups consecutive tool messages back into one
  user content; the markers ``content: "continue"`` / ``content: "new"`` in
  ``extra["gemini"]`` record the content boundaries where that default would differ, so the
  same-dialect round trip is exact.
* Call ids: a ``functionCall`` without ``id`` gets ``gcall_<content>_<part>``; a
  ``functionResponse`` without ``id`` takes the id of the first still-open call with its
  name in the preceding call turn (so parallel same-name calls pair by order, trap 18),
  otherwise it gets a minted id of its own. Both carry the ``mintedId`` marker and the
  encoder omits such ids again.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Final

from interlock.codecs.gemini._parts import decode_part
from interlock.codecs.gemini._wire import (
    DIALECT,
    MINTED_ID_PREFIX,
    as_list,
    as_object,
    as_str,
    split_fields,
)
from interlock.transcript import JsonObject, JsonValue, Message, Part, ToolResultPart

CONTENT_FIELDS: Final = frozenset({"role", "parts"})


def decode_system_instruction(value: JsonValue, path: str) -> Message:
    """``systemInstruction`` as one system message; every other key kept in ``fields``."""
    body, rest = split_fields(as_object(value, path), frozenset({"parts"}))
    parts_value = body.get("parts", [])
    parts = tuple(
        decode_part(item, f"{path}.parts[{index}]", f"{MINTED_ID_PREFIX}s_{index}")
        for index, item in enumerate(as_list(parts_value, f"{path}.parts"))
    )
    marks: JsonObject = {"fields": rest} if rest else {}
    if "parts" not in body:
        marks["noParts"] = True
    return Message(role="system", parts=parts, extra={DIALECT: marks} if marks else {})


class ContentDecoder:
    """Decodes ``contents[]`` in order, pairing id-less function responses with their calls."""

    __slots__ = ("_open_calls", "_previous_was_tool", "messages")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._open_calls: dict[str, deque[str]] = {}
        self._previous_was_tool = False

    def add(self, value: JsonValue, index: int) -> None:
        """Decode ``contents[index]`` and append its messages."""
        path = f"contents[{index}]"
        fields, unknown = split_fields(as_object(value, path), CONTENT_FIELDS)
        role_value = fields.get("role")
        role = None if role_value is None else as_str(role_value, f"{path}.role")
        parts_value = as_list(fields.get("parts", []), f"{path}.parts")
        parts = [
            decode_part(item, f"{path}.parts[{position}]", f"{MINTED_ID_PREFIX}{index}_{position}")
            for position, item in enumerate(parts_value)
        ]
        marks: JsonObject = {}
        if role is None:
            marks["noRole"] = True
        elif role not in ("user", "model"):
            marks["role"] = role
        if unknown:
            marks["fields"] = unknown
        if "parts" not in fields:
            marks["noParts"] = True
        if role == "model":
            self._open_calls = {}
            for part in parts:
                if part.kind == "tool_call":
                    self._open_calls.setdefault(part.name, deque()).append(part.call_id)
            self._emit(Message(role="assistant", parts=tuple(parts)), marks, None)
            return
        self._add_user(parts, marks, index)

    def _add_user(self, parts: list[Part], marks: JsonObject, index: int) -> None:
        run: list[Part] = []
        boundary: str | None = "new"
        for position, part in enumerate(parts):
            if isinstance(part, ToolResultPart):
                if run:
                    self._emit(Message(role="user", parts=tuple(run)), marks, boundary)
                    run, marks, boundary = [], {}, "continue"
                paired = self._pair(part, f"{MINTED_ID_PREFIX}{index}_{position}")
                self._emit(Message(role="tool", parts=(paired,)), marks, boundary)
                marks, boundary = {}, "continue"
            else:
                run.append(part)
        if run or boundary == "new":
            self._emit(Message(role="user", parts=tuple(run)), marks, boundary)

    def _emit(self, message: Message, marks: JsonObject, boundary: str | None) -> None:
        """Append ``message``, recording a boundary only where the encoder default differs."""
        is_tool = message.role == "tool"
        default_merges = is_tool and self._previous_was_tool
        if boundary == "new" and default_merges:
            marks = {**marks, "content": "new"}
        elif boundary == "continue" and not default_merges:
            marks = {**marks, "content": "continue"}
        if marks:
            message = replace(message, extra={DIALECT: marks})
        self.messages.append(message)
        self._previous_was_tool = is_tool

    def _pair(self, result: ToolResultPart, minted_id: str) -> ToolResultPart:
        name = result.name or ""
        waiting = self._open_calls.get(name)
        if result.call_id:
            if waiting and result.call_id in waiting:
                waiting.remove(result.call_id)
            return result
        call_id = waiting.popleft() if waiting else minted_id
        return replace(result, call_id=call_id)
