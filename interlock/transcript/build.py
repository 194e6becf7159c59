"""Cheaper constructors of the parts and messages a history decoder builds most, and of
the stream decoders' commonest update (:func:`part_delta`).

A frozen dataclass sets each field through ``object.__setattr__`` after a class call that
packs its keyword arguments into a dict: a :class:`TextPart` costs about 12.6k
instructions, a :class:`ToolCallPart` 19k, a :class:`Message` 11.3k. These functions build
the same objects by writing each slot through its descriptor (about half of that); they
are the decoders' hot-path constructors, nothing else changes.

Invariants: a built object is equal to (and indistinguishable from) the one the class
constructor gives for the same arguments: every field is set, defaults are the class's
(a fresh empty ``extra`` dict each time), and the object is as frozen as any other. No
checks are skipped: the classes have none (a decoder checks the wire before building).
Each builder names every field of its class; importing this module fails when a class
gains or loses a field until its builder follows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, cast

from interlock.transcript._messages import Message, Role
from interlock.transcript._parts import (
    Citation,
    Extra,
    Opaque,
    OutputPart,
    Part,
    ReasoningKind,
    ReasoningPart,
    TextPart,
    TokenLogprob,
    ToolCallPart,
    ToolOutcome,
    ToolResultPart,
)
from interlock.transcript._stream import PartDelta

_Setter = Callable[[object, object], None]
_new = object.__new__


def _setters(cls: type, *names: str) -> tuple[_Setter, ...]:
    """The slot writers of ``cls``'s fields, which must be exactly ``names`` in order."""
    declared = tuple(item.name for item in fields(cls))
    if names != declared:
        raise TypeError(f"transcript.build: {cls.__name__} has fields {declared}, not {names}")
    slots = cast("dict[str, Any]", vars(cls))
    return tuple(cast(_Setter, slots[name].__set__) for name in names)


_TEXT = _setters(TextPart, "kind", "text", "signature", "item_id", "citations", "logprobs", "extra")
_REASONING = _setters(ReasoningPart, "kind", "reasoning_kind", "text", "opaque", "item_id", "extra")
_CALL = _setters(
    ToolCallPart,
    "kind",
    "call_id",
    "name",
    "arguments",
    "occurrence_id",
    "owner",
    "server_label",
    "signature",
    "item_id",
    "extra",
)
_RESULT = _setters(
    ToolResultPart,
    "kind",
    "call_id",
    "output",
    "outcome",
    "occurrence_id",
    "name",
    "item_id",
    "extra",
)
_MESSAGE = _setters(Message, "role", "parts", "id", "name", "extra")
_DELTA = _setters(PartDelta, "index", "delta", "logprobs")


def text_part(
    text: str,
    *,
    signature: Opaque | None = None,
    item_id: str | None = None,
    citations: tuple[Citation, ...] = (),
    logprobs: tuple[TokenLogprob, ...] = (),
    extra: Extra | None = None,
) -> TextPart:
    """``TextPart(text=text, …)`` (``extra`` ``None`` is the class's fresh empty dict)."""
    part = _new(TextPart)
    kind, text_, signature_, item_id_, citations_, logprobs_, extra_ = _TEXT
    kind(part, "text")
    text_(part, text)
    signature_(part, signature)
    item_id_(part, item_id)
    citations_(part, citations)
    logprobs_(part, logprobs)
    extra_(part, {} if extra is None else extra)
    return part


def reasoning_part(
    reasoning_kind: ReasoningKind,
    text: str = "",
    *,
    opaque: Opaque | None = None,
    item_id: str | None = None,
    extra: Extra | None = None,
) -> ReasoningPart:
    """``ReasoningPart(reasoning_kind=…, text=…, …)``."""
    part = _new(ReasoningPart)
    kind, reasoning_kind_, text_, opaque_, item_id_, extra_ = _REASONING
    kind(part, "reasoning")
    reasoning_kind_(part, reasoning_kind)
    text_(part, text)
    opaque_(part, opaque)
    item_id_(part, item_id)
    extra_(part, {} if extra is None else extra)
    return part


def tool_call_part(
    call_id: str,
    name: str,
    arguments: str = "",
    *,
    signature: Opaque | None = None,
    item_id: str | None = None,
    extra: Extra | None = None,
) -> ToolCallPart:
    """``ToolCallPart(call_id=…, name=…, arguments=…, …)`` of a local call (no occurrence
    id yet, no server label: what a decoder builds)."""
    part = _new(ToolCallPart)
    kind, call_id_, name_, arguments_, occurrence_, owner, label, signature_, item_, extra_ = _CALL
    kind(part, "tool_call")
    call_id_(part, call_id)
    name_(part, name)
    arguments_(part, arguments)
    occurrence_(part, None)
    owner(part, "local")
    label(part, None)
    signature_(part, signature)
    item_(part, item_id)
    extra_(part, {} if extra is None else extra)
    return part


def tool_result_part(
    call_id: str,
    output: tuple[OutputPart, ...],
    *,
    outcome: ToolOutcome = "success",
    name: str | None = None,
    item_id: str | None = None,
    extra: Extra | None = None,
) -> ToolResultPart:
    """``ToolResultPart(call_id=…, output=…, …)`` without an occurrence id (what a decoder
    builds)."""
    part = _new(ToolResultPart)
    kind, call_id_, output_, outcome_, occurrence, name_, item_id_, extra_ = _RESULT
    kind(part, "tool_result")
    call_id_(part, call_id)
    output_(part, output)
    outcome_(part, outcome)
    occurrence(part, None)
    name_(part, name)
    item_id_(part, item_id)
    extra_(part, {} if extra is None else extra)
    return part


def message(
    role: Role,
    parts: tuple[Part, ...],
    *,
    id: str | None = None,
    name: str | None = None,
    extra: Extra | None = None,
) -> Message:
    """``Message(role=…, parts=…, …)``."""
    built = _new(Message)
    role_, parts_, id_, name_, extra_ = _MESSAGE
    role_(built, role)
    parts_(built, parts)
    id_(built, id)
    name_(built, name)
    extra_(built, {} if extra is None else extra)
    return built


def part_delta(index: int, delta: str) -> PartDelta:
    """``PartDelta(index=index, delta=delta)`` (no logprobs): a stream decoder's commonest
    update, built once per streamed chunk."""
    update = _new(PartDelta)
    index_, delta_, logprobs = _DELTA
    index_(update, index)
    delta_(update, delta)
    logprobs(update, ())
    return update
