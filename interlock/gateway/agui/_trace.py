"""The spans of one AG-UI run (see :mod:`interlock.gateway.tracing`).

``invoke_agent {agent}`` is the run's root, current while the run's task works, so the
model calls (``chat {model}``, opened by :mod:`._model`) nest under it. Tools and
approvals are seen as loop events: ``execute_tool {tool}`` spans open at ``ToolStarted``
and end at ``ToolFinished``; each approval requested, each approval decision a resumed
run brings, and each call a standing approval rule (or the agent's ``auto_approve``) let
run without a decision, is an ``approval {tool}`` span. Without tracing every method returns
at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Sequence
from typing import Literal

from interlock.core_loop import (
    ApprovalRequested,
    ApprovalRule,
    LoopEvent,
    RunFinished,
    ToolFinished,
    ToolStarted,
)
from interlock.gateway import tracing
from interlock.transcript import ApprovalRequestPart, ApprovalResponsePart, Message, ToolCallPart


class RunTrace:
    """The spans of one run; a no-op unless ``tracer`` is set."""

    def __init__(self, tracer: tracing.Tracer | None) -> None:
        self.tracer = tracer
        self.root: tracing.Span = tracing.NULL_SPAN
        self._tools: dict[str, tracing.Span] = {}

    @contextlib.contextmanager
    def running(self, agent: str, thread_id: str, run_id: str) -> Generator[None]:
        """The run's root span, current for the block (the run's whole task)."""
        if self.tracer is None:
            yield
            return
        attributes: tracing.Attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
            "gen_ai.conversation.id": thread_id,
            "interlock.run_id": run_id,
        }
        with tracing.serving(self.tracer, f"invoke_agent {agent}", "internal", attributes) as root:
            self.root = root
            try:
                yield
            finally:
                for span in self._tools.values():  # a run cut short: its tools did not finish
                    span.fail("interrupted")
                    span.end()

    def observe(self, event: LoopEvent) -> None:
        """Open or close the span a loop event starts or ends."""
        if self.tracer is None:
            return
        match event:
            case ToolStarted(call=call, approved_by=approved_by):
                if approved_by is not None:
                    _auto_approval(call, approved_by)
                attributes: tracing.Attributes = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": call.name,
                    "gen_ai.tool.call.id": call.call_id,
                    "gen_ai.tool.type": "function",
                }
                self._tools[call.call_id] = tracing.start(
                    f"execute_tool {call.name}", "internal", attributes
                )
            case ToolFinished(call=call, result=result):
                span = self._tools.pop(call.call_id, tracing.NULL_SPAN)
                span.set({"interlock.tool.outcome": result.outcome})
                if result.outcome != "success":
                    span.fail(result.outcome)
                span.end()
            case ApprovalRequested(request=request):
                _approval(request, "requested")
            case RunFinished(outcome=outcome, usage=usage):
                self.root.set({"interlock.outcome": outcome, **tracing.usage_attributes(usage)})
            case _:
                pass

    def decisions(self, accepted: Sequence[Message], history: Sequence[Message]) -> None:
        """One span per approval decision among a resumed run's new messages."""
        if self.tracer is None:
            return
        requests = {
            part.approval_id: part
            for message in history
            for part in message.parts
            if isinstance(part, ApprovalRequestPart)
        }
        for message in accepted:
            for part in message.parts:
                if isinstance(part, ApprovalResponsePart):
                    request = requests.get(part.approval_id)
                    stage = "approved" if part.approved else "rejected"
                    if request is not None:
                        _approval(request, stage)


def approval_rule(approved_by: ApprovalRule | Literal["auto_approve"]) -> str:
    """``interlock.approval.rule``: ``tool:NAME`` (a standing rule for every call of the
    tool), ``arguments:NAME:DIGEST`` (for calls with exactly those arguments) or
    ``auto_approve`` (the agent's callable)."""
    if isinstance(approved_by, str):
        return approved_by
    if approved_by.arguments_digest is None:
        return f"tool:{approved_by.tool_name}"
    return f"arguments:{approved_by.tool_name}:{approved_by.arguments_digest}"


def _auto_approval(call: ToolCallPart, approved_by: ApprovalRule | Literal["auto_approve"]) -> None:
    """The ``approval {tool}`` span of a call approved without a decision (stage
    ``auto_approved``), naming what approved it."""
    attributes: tracing.Attributes = {
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.call_id,
        "interlock.approval.stage": "auto_approved",
        "interlock.approval.rule": approval_rule(approved_by),
    }
    tracing.start(f"approval {call.name}", "internal", attributes).end()


def _approval(request: ApprovalRequestPart, stage: str) -> None:
    attributes: tracing.Attributes = {
        "gen_ai.tool.name": request.call.name,
        "gen_ai.tool.call.id": request.call.call_id,
        "interlock.approval.id": request.approval_id,
        "interlock.approval.stage": stage,
    }
    tracing.start(f"approval {request.call.name}", "internal", attributes).end()
