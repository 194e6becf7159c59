"""Vertex streamed function-call arguments, assembled into one call.

With ``toolConfig.functionCallingConfig.streamFunctionCallArguments`` (Vertex only) one
function call arrives over several stream chunks instead of whole:

* the first ``functionCall`` part names it (``name``, ``id``; a ``thoughtSignature`` beside
  it) and says ``willContinue: true``;
* the next ones carry no name, only ``partialArgs``: ``[{jsonPath, stringValue |
  numberValue | boolValue | nullValue, willContinue?}]``, ``jsonPath`` an RFC 9535 path such
  as ``$.location`` or ``$.stops[1].city``; a ``stringValue`` whose ``willContinue`` is true
  goes on in the next fragment for the same path (an entry with no value only announces
  one);
* the call ends with the fragment whose ``willContinue`` is false or absent; an empty
  ``functionCall: {}`` right after it carries nothing.

:class:`StreamedCall` holds one such call until it ends; its part is an ordinary
:class:`ToolCallPart` (arguments as canonical JSON text), so every client dialect gets a
whole call and a Gemini client gets ``args``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, cast

from interlock.codecs.gemini._parts import canonical_arguments
from interlock.codecs.gemini._wire import (
    DIALECT,
    as_bool,
    as_list,
    as_object,
    as_str,
    camel_fields,
    signature,
)
from interlock.transcript import DecodeError, JsonObject, JsonValue, Opaque, ToolCallPart

_PATH_STEP: Final = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")
_VALUE_KEYS: Final = ("stringValue", "numberValue", "boolValue", "nullValue")


def streamed_fragment(call: Mapping[str, JsonValue]) -> bool:
    """True when a ``functionCall`` is (part of) a call streamed in fragments."""
    fields = camel_fields(call)
    return "partialArgs" in fields or "willContinue" in fields


def _steps(json_path: str, where: str) -> list[str | int]:
    """``$.a.b[0]['c d']`` → ``["a", "b", 0, "c d"]``; anything else is a ``DecodeError``."""
    if not json_path.startswith("$"):
        raise DecodeError(where, f"jsonPath {json_path!r} does not start at the root '$'")
    steps: list[str | int] = []
    position = 1
    while position < len(json_path):
        match = _PATH_STEP.match(json_path, position)
        if match is None:
            raise DecodeError(where, f"jsonPath {json_path!r} is not a simple path")
        name, index, quoted, double = match.groups()
        steps.append(int(index) if index is not None else name or quoted or double or "")
        position = match.end()
    if not steps:
        raise DecodeError(where, "jsonPath '$' names no argument")
    return steps


def _place(root: JsonObject, steps: list[str | int], value: JsonValue, where: str) -> None:
    """Set ``value`` at ``steps`` under ``root``, creating objects and lists on the way."""
    container: JsonValue = root
    for depth, step in enumerate(steps):
        last = depth == len(steps) - 1
        following = None if last else steps[depth + 1]
        fresh: JsonValue = [] if isinstance(following, int) else {}
        if isinstance(step, int):
            if not isinstance(container, list):
                raise DecodeError(where, "jsonPath indexes something that is not a list")
            items = cast(list[JsonValue], container)
            items.extend([None] * (step + 1 - len(items)))
            if last:
                items[step] = value
            elif items[step] is None:
                items[step] = fresh
            container = items[step]
        else:
            if not isinstance(container, dict):
                raise DecodeError(where, "jsonPath names a key of something that is not an object")
            if last:
                container[step] = value
            elif step not in container:
                container[step] = fresh
            container = container[step]


@dataclass(slots=True)
class StreamedCall:
    """One call streamed in fragments, until the fragment that ends it."""

    index: int
    call_id: str
    name: str
    minted: bool
    sealed: Opaque | None = None
    args: JsonObject = field(default_factory=dict[str, JsonValue])
    continuing: set[str] = field(default_factory=set[str])
    """Paths whose string value goes on in the next fragment."""
    done: bool = False

    def apply(self, call: Mapping[str, JsonValue], path: str) -> None:
        """Take one fragment's ``partialArgs`` (and ``args``, if a whole value came)."""
        fields = camel_fields(call)
        if isinstance(fields.get("args"), dict):
            self.args.update(cast(JsonObject, fields["args"]))
        partial = fields.get("partialArgs")
        if partial is not None:
            for position, item in enumerate(as_list(partial, f"{path}.partialArgs")):
                self._partial(as_object(item, f"{path}.partialArgs[{position}]"), path)
        more = fields.get("willContinue")
        self.done = more is None or not as_bool(more, f"{path}.willContinue")

    def _partial(self, item: JsonObject, path: str) -> None:
        fields = camel_fields(item)
        where = f"{path}.partialArgs"
        json_path = as_str(fields.get("jsonPath"), f"{where}.jsonPath")
        present = [key for key in _VALUE_KEYS if key in fields]
        if len(present) > 1:
            raise DecodeError(where, f"a partial argument holds one value, got {present}")
        if not present:  # announced only: its value comes in a following fragment
            _steps(json_path, where)
            return
        key = present[0]
        value: JsonValue = None if key == "nullValue" else fields[key]
        more = fields.get("willContinue") is True
        if key == "stringValue":
            text = as_str(value, f"{where}.stringValue")
            if json_path in self.continuing:
                text = self._current_text(json_path) + text
            value = text
            self.continuing.discard(json_path)
            if more:
                self.continuing.add(json_path)
        _place(self.args, _steps(json_path, where), value, where)

    def _current_text(self, json_path: str) -> str:
        current: JsonValue = self.args
        for step in _steps(json_path, "partialArgs"):
            if isinstance(current, list) and isinstance(step, int) and step < len(current):
                current = cast(list[JsonValue], current)[step]
            elif isinstance(current, dict) and isinstance(step, str):
                current = cast(JsonObject, current).get(step)
            else:
                return ""
        return current if isinstance(current, str) else ""

    def part(self, *, opening: bool = False) -> ToolCallPart:
        """The whole call; ``opening``: as it starts, its arguments still to come."""
        marks: JsonObject = {"mintedId": True} if self.minted else {}
        return ToolCallPart(
            call_id=self.call_id,
            name=self.name,
            arguments="" if opening else canonical_arguments(self.args),
            signature=self.sealed,
            extra={DIALECT: marks} if marks else {},
        )


def start_call(
    item: Mapping[str, JsonValue], index: int, minted_id: str, path: str
) -> StreamedCall:
    """The call a named first fragment opens (``item`` is the whole wire part)."""
    part = camel_fields(item)
    call = camel_fields(as_object(part.get("functionCall"), f"{path}.functionCall"))
    call_id = call.get("id")
    sealed = part.get("thoughtSignature")
    opened = StreamedCall(
        index=index,
        call_id=minted_id if call_id is None else as_str(call_id, f"{path}.functionCall.id"),
        name=as_str(call.get("name"), f"{path}.functionCall.name"),
        minted=call_id is None,
        sealed=None if sealed is None else signature(as_str(sealed, f"{path}.thoughtSignature")),
    )
    opened.apply(call, f"{path}.functionCall")
    return opened


def continue_call(opened: StreamedCall, item: Mapping[str, JsonValue], path: str) -> None:
    """Apply a following fragment (``item`` is the whole wire part) to the open call."""
    part = camel_fields(item)
    sealed = part.get("thoughtSignature")
    if opened.sealed is None and sealed is not None:
        opened.sealed = signature(as_str(sealed, f"{path}.thoughtSignature"))
    opened.apply(
        as_object(part.get("functionCall"), f"{path}.functionCall"), f"{path}.functionCall"
    )
