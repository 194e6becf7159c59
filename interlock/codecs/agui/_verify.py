"""A Python mirror of the official client's event checks, plus the gateway's own.

:func:`verify_events` applies, in order, what ``@ag-ui/client`` 1.0 enforces on a stream
(reference §4.2 schema rules through the ``ag_ui.core`` models, §4.4 ``verifyEvents``
sequencing) and, with ``strict`` (the default), what the client does *not* check but a
gateway must guarantee: ids that match the request, ``protocolVersion "1.0"`` on
``RUN_STARTED``, exactly one terminal event per run with nothing after it, no ``null``
optional fields, no unknown fields, integer timestamps and non-empty deltas.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from ag_ui.core import PROTOCOL_VERSION, Event
from pydantic import BaseModel, TypeAdapter, ValidationError

from interlock.transcript import JsonObject

_EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)
_NULL_ALLOWED = {("CUSTOM", "value"), ("RAW", "event")}
_DELTA_EVENTS = {"TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "TOOL_CALL_ARGS"}
_TERMINAL = {"RUN_FINISHED", "RUN_ERROR"}
_WIRE_REQUIRED = {"REASONING_MESSAGE_START": ("role",)}
"""Keys the client requires that the Python models would default (so they must be checked raw)."""


class EventSequenceError(ValueError):
    """A stream breaks a rule; ``index`` is the offending event's position."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(f"event[{index}]: {message}")
        self.index = index
        self.detail = message


@dataclass(slots=True)
class _RunState:
    phase: str = "idle"
    run_id: str | None = None
    thread_id: str | None = None
    text: set[str] = field(default_factory=set[str])
    calls: set[str] = field(default_factory=set[str])
    reasoning: set[str] = field(default_factory=set[str])
    spans: set[str] = field(default_factory=set[str])
    steps: set[str] = field(default_factory=set[str])

    def reset(self) -> None:
        """Forget everything: a new run starts (the client resets all tracking too)."""
        for ids in (self.text, self.calls, self.reasoning, self.spans, self.steps):
            ids.clear()
        self.phase, self.run_id, self.thread_id = "idle", None, None


def verify_events(
    events: Iterable[JsonObject],
    *,
    thread_id: str | None = None,
    run_id: str | None = None,
    strict: bool = True,
) -> None:
    """Raise :class:`EventSequenceError` at the first event that breaks a rule."""
    state = _RunState()
    for index, event in enumerate(events):
        try:
            _check_schema(event, strict)
            _check_sequence(event, state, strict)
            if strict:
                _check_ids(event, state, thread_id, run_id)
        except ValueError as error:
            raise EventSequenceError(index, str(error)) from None
    if strict and state.phase == "running":
        raise EventSequenceError(-1, "the stream ended without a terminal event")


def _check_schema(event: JsonObject, strict: bool) -> None:
    try:
        model = _EVENT_ADAPTER.validate_python(event)
    except ValidationError as error:
        first = error.errors()[0]
        location = ".".join(str(step) for step in first["loc"])
        raise ValueError(f"schema: {location}: {first['msg']}") from None
    kind = str(event.get("type"))
    for key in _WIRE_REQUIRED.get(kind, ()):
        if key not in event:
            raise ValueError(f"schema: {kind}.{key} is required")
    if not strict:
        return
    for key, value in event.items():
        if value is None and (kind, key) not in _NULL_ALLOWED:
            raise ValueError(f"{kind}.{key} is null; optional fields are omitted")
    if "timestamp" in event and not isinstance(event["timestamp"], int):
        raise ValueError("timestamp must be integer milliseconds")
    if kind in _DELTA_EVENTS and event.get("delta") == "":
        raise ValueError(f"{kind} with an empty delta")
    _check_no_unknown(model, kind)


def _check_no_unknown(model: BaseModel, where: str) -> None:
    if model.model_extra:
        raise ValueError(f"{where}: unknown field {sorted(model.model_extra)[0]!r}")
    for name in type(model).model_fields:
        value = getattr(model, name)
        items = cast(list[object], value) if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, BaseModel):
                _check_no_unknown(item, f"{where}.{name}")


def _check_sequence(event: JsonObject, state: _RunState, strict: bool) -> None:
    kind = str(event["type"])
    if kind == "RUN_STARTED":
        if state.phase == "running":
            raise ValueError("Cannot send 'RUN_STARTED' while a run is still active")
        if strict and state.phase == "ended" and state.run_id == event.get("runId"):
            raise ValueError("a run id was started twice")
        state.reset()
        state.phase = "running"
        state.run_id = _text(event.get("runId"))
        state.thread_id = _text(event.get("threadId"))
        return
    if state.phase == "idle" and kind != "RUN_ERROR":
        raise ValueError("First event must be 'RUN_STARTED'")
    if state.phase == "errored" or (state.phase == "ended" and (strict or kind != "RUN_ERROR")):
        raise ValueError(f"Cannot send event type '{kind}': the run has already ended")
    if kind == "RUN_FINISHED":
        _check_nothing_open(state)
    if kind in _TERMINAL:
        state.phase = "errored" if kind == "RUN_ERROR" else "ended"
        return
    _check_stream(kind, event, state)


def _check_nothing_open(state: _RunState) -> None:
    for label, ids in (
        ("steps", state.steps),
        ("text messages", state.text),
        ("reasoning messages", state.reasoning),
        ("reasoning spans", state.spans),
        ("tool calls", state.calls),
    ):
        if ids:
            raise ValueError(
                f"Cannot send 'RUN_FINISHED' while {label} are still active: {sorted(ids)}"
            )


_OPENERS = {
    "TEXT_MESSAGE_START": ("text", "messageId"),
    "TOOL_CALL_START": ("calls", "toolCallId"),
    "REASONING_START": ("spans", "messageId"),
    "REASONING_MESSAGE_START": ("reasoning", "messageId"),
    "STEP_STARTED": ("steps", "stepName"),
}
_CONTINUATIONS = {
    "TEXT_MESSAGE_CONTENT": ("text", "messageId", False),
    "TEXT_MESSAGE_END": ("text", "messageId", True),
    "TOOL_CALL_ARGS": ("calls", "toolCallId", False),
    "TOOL_CALL_END": ("calls", "toolCallId", True),
    "REASONING_MESSAGE_CONTENT": ("reasoning", "messageId", False),
    "REASONING_MESSAGE_END": ("reasoning", "messageId", True),
    "REASONING_END": ("spans", "messageId", True),
    "STEP_FINISHED": ("steps", "stepName", True),
}


def _check_stream(kind: str, event: JsonObject, state: _RunState) -> None:
    if kind in _OPENERS:
        name, key = _OPENERS[kind]
        ids: set[str] = getattr(state, name)
        value = _text(event.get(key)) or ""
        if value in ids:
            raise ValueError(f"Cannot send '{kind}': '{value}' is already in progress")
        ids.add(value)
    elif kind in _CONTINUATIONS:
        name, key, closes = _CONTINUATIONS[kind]
        ids = getattr(state, name)
        value = _text(event.get(key)) or ""
        if value not in ids:
            raise ValueError(f"Cannot send '{kind}': no active {name} with id '{value}'")
        if closes:
            ids.discard(value)


def _check_ids(
    event: JsonObject, state: _RunState, thread_id: str | None, run_id: str | None
) -> None:
    kind = event["type"]
    if kind == "RUN_STARTED":
        if event.get("protocolVersion") != PROTOCOL_VERSION:
            raise ValueError(f"RUN_STARTED.protocolVersion must be {PROTOCOL_VERSION!r}")
        if thread_id is not None and event.get("threadId") != thread_id:
            raise ValueError("RUN_STARTED.threadId does not match the request")
        if run_id is not None and event.get("runId") != run_id:
            raise ValueError("RUN_STARTED.runId does not match the request")
    if kind == "RUN_FINISHED" and (
        event.get("threadId") != state.thread_id or event.get("runId") != state.run_id
    ):
        raise ValueError("RUN_FINISHED ids do not match RUN_STARTED")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
