"""Agent configuration, limits, id minting and the loop's errors."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from interlock.core_loop._execute import FunctionMiddleware
from interlock.core_loop._tools import Tool
from interlock.transcript import GenerationOptions, HostedToolSpec, Message, ToolCallPart

IdSource: TypeAlias = Callable[[str], str]
"""Mints a fresh id for a prefix (``msg``, ``occ``, ``approval``, ``input``, ``batch``)."""

FALLBACK_TEXT = "I stopped before finishing: the tool-call limit for this request was reached."


_PROCESS_NONCE = uuid.uuid4().hex[:16]
_COUNTER = itertools.count(1)


def random_ids(prefix: str) -> str:
    """A unique id such as ``msg_3f2a…`` (the default).

    A random per-process nonce plus a counter: unique across processes and restarts,
    and much cheaper than a fresh UUID per id.
    """
    return f"{prefix}_{_PROCESS_NONCE}{next(_COUNTER):x}"


def sequential_ids() -> IdSource:
    """Deterministic ids (``msg_1``, ``occ_2``, …) for tests and reproducible runs."""
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Loop limits; all are shared by every re-entry (resume) of one run.

    ``max_iterations`` counts model calls with tools enabled; ``max_function_calls``
    counts executions started (``None``: unlimited) and is never exceeded, calls beyond it
    get an ``interrupted`` result; ``max_consecutive_errors`` counts batches in a row with a
    failed result (``None``: no cap); with ``terminate_on_unknown_calls`` a batch with any
    unknown tool ends the run and nothing in it executes. Reaching a limit makes one final
    model call with tools disabled.
    """

    max_iterations: int = 40
    max_function_calls: int | None = None
    max_consecutive_errors: int | None = 3
    terminate_on_unknown_calls: bool = False

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ValueError("max_iterations must be at least 1")
        if self.max_function_calls is not None and self.max_function_calls < 1:
            raise ValueError("max_function_calls must be at least 1 or None")
        if self.max_consecutive_errors is not None and self.max_consecutive_errors < 1:
            raise ValueError("max_consecutive_errors must be at least 1 or None")


def _no_tools() -> tuple[Tool, ...]:
    return ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Agent:
    """What the loop runs: a model name, instructions, tools, limits and policies.

    ``auto_approve`` sees each call that would need approval and may approve it (no
    record is kept for auto-approved calls). ``service_state`` makes the loop use the
    provider's stored conversation (``store`` + ``previous_response_id``) whenever the
    model reports a response id. ``compaction`` maps the model-bound history before each
    stateless model call (for example ``lambda h: keep_last_groups(h, 20)``).
    With ``invoke_functions=False`` the loop executes nothing: every local call the
    model makes is handed to the caller like a client tool's (outcome
    ``awaiting_client``), with no approval asked; the model request is the same (tools,
    options, continuation), and results the caller sends back resume the loop.
    """

    model: str
    instructions: str | None = None
    tools: tuple[Tool, ...] = field(default_factory=_no_tools)
    hosted_tools: tuple[HostedToolSpec, ...] = ()
    limits: Limits = field(default_factory=Limits)
    middleware: tuple[FunctionMiddleware, ...] = ()
    auto_approve: Callable[[ToolCallPart], bool] | None = None
    service_state: bool = False
    options: GenerationOptions = field(default_factory=GenerationOptions)
    detailed_errors: bool = False
    fallback_text: str = FALLBACK_TEXT
    compaction: Callable[[Sequence[Message]], Sequence[Message]] | None = None
    invoke_functions: bool = True

    def __post_init__(self) -> None:
        names = [tool.name for tool in self.tools]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate tool names: {', '.join(duplicates)}")


class DecisionRefusedError(ValueError):
    """A caller's decision does not match live server-held state; nothing was executed.

    ``code`` is one of ``unknown_approval``, ``approval_consumed``, ``approval_tampered``,
    ``approval_call_missing``, ``invalid_edit``, ``invalid_rule`` (``remember`` on a
    rejection or on a hosted tool's decision), ``duplicate_decision``,
    ``unknown_input_request``. ``target`` is the approval or input request id.
    ``approval_consumed`` means the approval was already decided and this decision is not
    an identical replay of it whose result is journaled (such a replay is accepted and runs
    nothing; see :mod:`interlock.core_loop._decisions`).
    """

    def __init__(self, code: str, target: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.target = target


class ModelStreamError(RuntimeError):
    """The model stream reported a failure. Results already executed are in the journal."""

    def __init__(self, code: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.status = status
