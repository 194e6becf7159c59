"""Accounting for AG-UI runs: one access-log line per run and the ``interlock_agui_*`` metrics.

A transport makes a :class:`RunAccount` when a run starts (or is refused before it
starts), passes it every batch of frames it sends (:meth:`RunAccount.sent`) and closes it
once (:meth:`RunAccount.close`). Frames are JSON text; only a batch's last frame is ever
parsed, and only when it may be the terminal event, so accounting costs a count per batch.

Outcomes (a fixed vocabulary, like every label): ``success``, ``interrupt``, ``cancelled``
(the run's ``RUN_FINISHED`` outcomes), ``error`` (``RUN_ERROR``), ``refused`` (refused
before the run started, e.g. ``INVALID_INPUT``), ``disconnected`` (the client left before
the terminal event).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, cast

import orjson

from interlock.codecs.agui import parse_confirm_changes_call_id
from interlock.gateway.access_log import AccessRecord
from interlock.gateway.metrics import Metrics
from interlock.transcript import JsonObject, JsonValue

Transport: TypeAlias = Literal["sse", "websocket"]
_RUN_ID_LIMIT = 128


@dataclass(slots=True, kw_only=True)
class RunAccount:
    """One run's accounting; see the module docstring."""

    metrics: Metrics
    agent: str
    transport: Transport
    record: AccessRecord
    events: int = 0
    terminal: JsonObject | None = None
    closed: bool = field(default=False)

    @classmethod
    def open(
        cls,
        metrics: Metrics,
        *,
        agent: str,
        transport: Transport,
        path: str,
        tenant: str,
        run_id: str,
    ) -> RunAccount:
        """The account of a run that is starting."""
        record = AccessRecord(
            method="POST" if transport == "sse" else "WS",
            path=path,
            endpoint="agui",
            started=time.perf_counter(),
            status=200 if transport == "sse" else 101,
            tenant=tenant,
            model=agent,
            stream=True,
        )
        record.run_id = run_id[:_RUN_ID_LIMIT]
        return cls(metrics=metrics, agent=agent, transport=transport, record=record)

    def sent(self, frames: list[str]) -> None:
        """Count a batch that went out; keep the terminal event if it is in it."""
        if not frames:
            return
        self.events += len(frames)
        last = frames[-1]
        if '"RUN_FINISHED"' in last or '"RUN_ERROR"' in last:
            parsed = _parsed(last)
            if isinstance(parsed, dict) and parsed.get("type") in ("RUN_FINISHED", "RUN_ERROR"):
                self.terminal = parsed

    def close(self, *, refused_code: str | None = None) -> None:
        """Write the access line and the metrics (once)."""
        if self.closed:
            return
        self.closed = True
        outcome, code = self._outcome(refused_code)
        metrics = self.metrics
        metrics.agui_runs[self.agent, self.transport, outcome] += 1
        metrics.agui_events[self.agent, self.transport] += self.events
        if code is not None:
            metrics.agui_errors[self.agent, code] += 1
        requested = _approvals_requested(self.terminal)
        if requested:
            metrics.agui_approvals[self.agent, "requested"] += requested
        record = self.record
        record.outcome = outcome
        record.events = self.events
        if code is not None:
            record.error = code
        record.write()

    def resumed(self, decisions: int) -> None:
        """The run applied ``decisions`` answers to approvals or input requests (``resume[]``
        entries and ``confirm_changes`` answers, repeats not counted)."""
        if decisions:
            self.metrics.agui_approvals[self.agent, "resolved"] += decisions

    def _outcome(self, refused_code: str | None) -> tuple[str, str | None]:
        if refused_code is not None:
            return "refused", refused_code
        terminal = self.terminal
        if terminal is None:
            return "disconnected", None
        if terminal.get("type") == "RUN_ERROR":
            code = terminal.get("code")
            return "error", code if isinstance(code, str) else "RUN_ERROR"
        outcome = terminal.get("outcome")
        kind = cast(JsonObject, outcome).get("type") if isinstance(outcome, dict) else None
        if kind in ("interrupt", "cancelled"):
            return cast(str, kind), None
        return "success", None


def _parsed(frame: str) -> JsonValue:
    """A frame's value (orjson; ``json`` for what orjson refuses, e.g. a ``NaN`` a tool
    put in the state: only the terminal's type, code and outcome are read)."""
    try:
        return cast(JsonValue, orjson.loads(frame))
    except orjson.JSONDecodeError:
        return cast(JsonValue, json.loads(frame))


def _approvals_requested(terminal: JsonObject | None) -> int:
    """What a terminal event asks a human for: its interrupts (``outcome.interrupts``),
    or its pending synthetic ``confirm_changes`` calls (``outcome.pendingToolCallIds``)."""
    if terminal is None or terminal.get("type") != "RUN_FINISHED":
        return 0
    outcome = terminal.get("outcome")
    if not isinstance(outcome, dict):
        return 0
    interrupts = outcome.get("interrupts")
    if isinstance(interrupts, list):
        return len(interrupts)
    pending = outcome.get("pendingToolCallIds")
    if not isinstance(pending, list):
        return 0
    return sum(
        1
        for call_id in pending
        if isinstance(call_id, str) and parse_confirm_changes_call_id(call_id) is not None
    )
