"""How one step of the loop ends: a closed union, matched exhaustively.

Every step of a run (settling the resumed batches, one model call and the batch it
returns) ends in exactly one of these. :class:`RunAgain` is the only one that lets the run
go on to another model call; every other one ends the run, and :func:`stop_outcome` maps
it to the :data:`~interlock.core_loop._events.Outcome` its ``RunFinished`` reports. No
``None`` stands for "go on": a new way for a step to end is a new class here, and pyright
points at every ``match`` that must learn it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias, assert_never

from interlock.core_loop._events import Outcome
from interlock.transcript import ApprovalRequestPart, InputRequestPart, ToolCallPart


@dataclass(frozen=True, slots=True)
class RunAgain:
    """The step's results join the history; the model is called again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FinalAnswer:
    """The model answered without local calls."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AwaitingApproval:
    """Calls wait for human decisions (local requests, or hosted ones the model returned)."""

    approvals: tuple[ApprovalRequestPart, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AwaitingInput:
    """A tool asked the user; it runs again with the answers."""

    inputs: tuple[InputRequestPart, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AwaitingClient:
    """Client-owned calls wait for the caller's results."""

    calls: tuple[ToolCallPart, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Terminated:
    """Middleware (``"middleware"``) or an unknown call (``"unknown_tool"``) ended the run."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LimitReached:
    """A limit forced the final tool-less model call, which has been made."""

    reason: str | None


Stop: TypeAlias = (
    FinalAnswer | AwaitingApproval | AwaitingInput | AwaitingClient | Terminated | LimitReached
)
"""A step that ends the run."""

Step: TypeAlias = RunAgain | Stop
"""How a step ended."""

RUN_AGAIN = RunAgain()


def stop_outcome(stop: Stop) -> Outcome:
    """The outcome a run that ended on ``stop`` reports."""
    match stop:
        case FinalAnswer():
            return "final"
        case AwaitingApproval():
            return "awaiting_approval"
        case AwaitingInput():
            return "awaiting_input"
        case AwaitingClient():
            return "awaiting_client"
        case Terminated():
            return "terminated"
        case LimitReached():
            return "limit"
        case _:
            assert_never(stop)
