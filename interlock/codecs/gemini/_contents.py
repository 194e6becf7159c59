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
from dataclasses import dataclass, replace
from typing import Final, Literal, cast

from interlock.codecs.gemini._partial import (
    StreamedCall,
    continue_call,
    start_call,
    streamed_fragment,
)
from interlock.codecs.gemini._parts import decode_part, plain_part
from interlock.codecs.gemini._wire import (
    DIALECT,
    MINTED_ID_PREFIX,
    as_list,
    as_object,
    as_str,
    split_fields,
)
from interlock.codecs.gemini._wire import field as wire_field
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Message,
    Part,
    Role,
    ToolResultPart,
)
from interlock.transcript import build as built

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


PlainKind = Literal["model", "user", "answers"]


def plain_content(value: JsonValue, index: int) -> tuple[PlainKind, list[Part]] | None:
    """A content of the commonest shape, decoded directly: exactly ``role`` (``user`` or
    ``model``) and a non-empty ``parts`` list of parts :func:`plain_part` takes (so none is
    a streamed call's fragment). Its parts, and ``model``, ``user`` (no function response
    among them) or ``answers`` (a user content with function responses). ``None`` for any
    other content, which :meth:`ContentDecoder.add` then decodes the general way, to the
    same messages."""
    if not isinstance(value, dict) or len(value) != 2:
        return None
    role, items = value.get("role"), value.get("parts")
    if (role != "user" and role != "model") or not isinstance(items, list) or not items:
        return None
    parts: list[Part] = []
    answers = False
    for position, item in enumerate(items):
        if isinstance(item, dict) and len(item) == 1:  # the commonest part: text alone
            text = item.get("text")
            if isinstance(text, str):
                parts.append(built.text_part(text))
                continue
        part = plain_part(item, index, position)
        if part is None:
            return None
        answers = answers or part.kind == "tool_result"
        parts.append(part)
    return "model" if role == "model" else "answers" if answers else "user", parts


@dataclass(slots=True)
class _Streamed:
    """A Vertex call streamed in fragments (``partialArgs``) being put together from
    history, and where its part sits (message, part) so later fragments can complete it."""

    call: StreamedCall
    message: int
    position: int


class ContentDecoder:
    """Decodes ``contents[]`` in order, pairing id-less function responses with their calls.

    A call whose arguments Vertex streamed in fragments (a named ``functionCall`` with
    ``willContinue``, then nameless ones with ``partialArgs``; see :mod:`._partial`) comes
    back in history as the fragments a client kept, in one model content or one per
    streamed chunk: it is put together into one whole call where its first fragment was,
    and a model content holding nothing but continuing fragments adds no message.
    """

    __slots__ = ("_ended", "_open_calls", "_previous_was_tool", "_streamed", "messages")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._open_calls: dict[str, deque[str]] = {}
        self._previous_was_tool = False
        self._streamed: _Streamed | None = None
        self._ended = False

    def extend(self, contents: list[JsonValue]) -> None:
        """Decode ``contents`` in order and append their messages (each content of the
        commonest shape directly, see :func:`plain_content`; any other with :meth:`add`)."""
        for index, value in enumerate(contents):
            plain = plain_content(value, index)
            if plain is None:
                self.add(value, index)
                continue
            kind, parts = plain
            self._streamed, self._ended = None, False
            if kind == "model":
                self._called(parts, {})
            elif kind == "user":  # what _add_user does for parts without a result
                self.messages.append(built.message("user", tuple(parts)))
                self._previous_was_tool = False
            elif len(parts) == 1:  # what _add_user does for one function response
                result = self._pair(cast(ToolResultPart, parts[0]), index, 0)
                self._emit("tool", (result,), {}, "new")
            else:
                self._add_user(parts, {}, index)

    def add(self, value: JsonValue, index: int) -> None:
        """Decode ``contents[index]`` and append its messages."""
        path = f"contents[{index}]"
        fields, unknown = split_fields(as_object(value, path), CONTENT_FIELDS)
        role_value = fields.get("role")
        role = None if role_value is None else as_str(role_value, f"{path}.role")
        parts_value = as_list(fields.get("parts", []), f"{path}.parts")
        if role == "model":
            parts = self._model_parts(parts_value, index)
            if parts_value and not parts:
                return  # nothing but fragments of a call started in an earlier content
        else:
            self._streamed, self._ended = None, False
            parts = [
                decode_part(
                    item, f"{path}.parts[{position}]", f"{MINTED_ID_PREFIX}{index}_{position}"
                )
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
            self._called(parts, marks)
            return
        self._add_user(parts, marks, index)

    def _called(self, parts: list[Part], marks: JsonObject) -> None:
        """Append a model content's message; its calls are the ones results may answer."""
        calls: dict[str, deque[str]] = {}
        for part in parts:
            if part.kind == "tool_call":
                calls.setdefault(part.name, deque()).append(part.call_id)
        self._open_calls = calls
        self._emit("assistant", tuple(parts), marks, None)

    def _model_parts(self, items: list[JsonValue], index: int) -> list[Part]:
        """A model content's parts, streamed call fragments put together."""
        parts: list[Part] = []
        for position, item in enumerate(items):
            path = f"contents[{index}].parts[{position}]"
            call = wire_field(as_object(item, path), "functionCall")
            if isinstance(call, dict) and self._fragment(item, call, path, parts):
                continue
            self._streamed, self._ended = None, False
            parts.append(decode_part(item, path, f"{MINTED_ID_PREFIX}{index}_{position}"))
        return parts

    def _fragment(self, item: JsonValue, call: JsonObject, path: str, parts: list[Part]) -> bool:
        """True when ``item`` was a fragment of a streamed call (opening, continuing, or the
        empty ``functionCall`` after its end); the call's part is in ``parts`` or earlier."""
        named = wire_field(call, "name") is not None
        opened = self._streamed
        if named or opened is None:
            if not named:
                ended, self._ended = self._ended, False
                return ended and not call
            if not streamed_fragment(call):
                return False
            minted = f"{MINTED_ID_PREFIX}{len(self.messages)}_{len(parts)}"
            started = start_call(as_object(item, path), 0, minted, path)
            self._streamed = _Streamed(started, len(self.messages), len(parts))
            parts.append(started.part())
            self._ended = started.done
            self._streamed = None if started.done else self._streamed
            return True
        continue_call(opened.call, as_object(item, path), path)
        whole = opened.call.part()
        if opened.message == len(self.messages):
            parts[opened.position] = whole
        else:
            message = self.messages[opened.message]
            held = list(message.parts)
            held[opened.position] = whole
            self.messages[opened.message] = replace(message, parts=tuple(held))
        if opened.call.done:
            self._streamed, self._ended = None, True
        return True

    def _add_user(self, parts: list[Part], marks: JsonObject, index: int) -> None:
        run: list[Part] = []
        boundary: str | None = "new"
        for position, part in enumerate(parts):
            if isinstance(part, ToolResultPart):
                if run:
                    self._emit("user", tuple(run), marks, boundary)
                    run, marks, boundary = [], {}, "continue"
                paired = self._pair(part, index, position)
                self._emit("tool", (paired,), marks, boundary)
                marks, boundary = {}, "continue"
            else:
                run.append(part)
        if run or boundary == "new":
            self._emit("user", tuple(run), marks, boundary)

    def _emit(
        self, role: Role, parts: tuple[Part, ...], marks: JsonObject, boundary: str | None
    ) -> None:
        """Append a message, recording a boundary only where the encoder default differs."""
        is_tool = role == "tool"
        default_merges = is_tool and self._previous_was_tool
        if boundary == "new" and default_merges:
            marks = {**marks, "content": "new"}
        elif boundary == "continue" and not default_merges:
            marks = {**marks, "content": "continue"}
        extra = {DIALECT: marks} if marks else None
        self.messages.append(built.message(role, parts, extra=extra))
        self._previous_was_tool = is_tool

    def _pair(self, result: ToolResultPart, index: int, position: int) -> ToolResultPart:
        """The result at ``contents[index].parts[position]`` with the id of its call."""
        waiting = self._open_calls.get(result.name or "")
        if result.call_id:
            if waiting and result.call_id in waiting:
                waiting.remove(result.call_id)
            return result
        call_id = waiting.popleft() if waiting else f"{MINTED_ID_PREFIX}{index}_{position}"
        return replace(result, call_id=call_id)
