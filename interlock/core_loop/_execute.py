"""Running one tool occurrence through function middleware.

:func:`execute` never raises for anything a tool or middleware does (cancellation
aside): every outcome is an :class:`Execution` holding a terminal result, a request for
user input, or a termination asked for by middleware.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from interlock.core_loop._ledger import ApprovalRecord
from interlock.core_loop._sendable import output_problem
from interlock.core_loop._tools import (
    InputQuestion,
    NeedsInput,
    Tool,
    ToolArgumentsError,
    ToolContext,
    ToolSet,
    make_result,
    output_parts,
)
from interlock.transcript import JsonValue, ToolCallPart, ToolResultPart


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInvocation:
    """What middleware sees for one execution. ``arguments`` are already validated.

    Middleware may pass a changed invocation on (``dataclasses.replace``), answer without
    calling ``next`` (return a value or a ``ToolResultPart``), raise to fail the call, or
    raise :class:`TerminateLoop`. ``approval`` is the consumed record when the call was
    approved by a human (``None`` for calls that needed no approval).
    """

    tool: Tool
    call: ToolCallPart
    arguments: dict[str, Any]
    context: ToolContext
    approval: ApprovalRecord | None = None


Next: TypeAlias = Callable[[ToolInvocation], Awaitable[object]]
FunctionMiddleware: TypeAlias = Callable[[ToolInvocation, Next], Awaitable[object]]
"""``async def middleware(invocation, next) -> value``; wraps every local execution."""


class TerminateLoop(Exception):
    """Raised by middleware (or a tool) to end the run after the current batch.

    ``result`` becomes the occurrence's result (a string, any tool value, or a
    ``ToolResultPart``); without one the result says the run was terminated. The run ends
    with outcome ``terminated`` and no further model call.
    """

    def __init__(self, result: object = None) -> None:
        super().__init__("loop terminated by middleware")
        self.result = result


@dataclass(slots=True, kw_only=True)
class Execution:
    """The outcome of one execution: exactly one of ``result`` or ``questions`` is set.

    Internal and short-lived (one per execution), so not frozen: a frozen dataclass costs
    several times more to build.
    """

    result: ToolResultPart | None = None
    questions: tuple[InputQuestion, ...] = ()
    terminate: bool = False


TERMINATED_TEXT = "Terminated by middleware."


def _as_result(call: ToolCallPart, value: object) -> ToolResultPart:
    if isinstance(value, ToolResultPart):
        return replace(value, call_id=call.call_id, occurrence_id=call.occurrence_id)
    return ToolResultPart(
        call_id=call.call_id,
        occurrence_id=call.occurrence_id,
        name=call.name,
        output=output_parts(value),
    )


def _chain(middleware: Sequence[FunctionMiddleware]) -> Next:
    async def run_tool(invocation: ToolInvocation) -> object:
        return await invocation.tool.call(invocation.arguments, invocation.context)

    handler: Next = run_tool
    for layer in reversed(middleware):
        handler = _wrap(layer, handler)
    return handler


def _wrap(layer: FunctionMiddleware, inner: Next) -> Next:
    async def handler(invocation: ToolInvocation) -> object:
        return await layer(invocation, inner)

    return handler


async def execute(
    tool: Tool,
    call: ToolCallPart,
    *,
    thread_id: str,
    middleware: Sequence[FunctionMiddleware] = (),
    answers: tuple[JsonValue, ...] = (),
    approval: ApprovalRecord | None = None,
    detailed_errors: bool = False,
    toolset: ToolSet | None = None,
) -> Execution:
    """Validate ``call``'s arguments and run ``tool`` through ``middleware``.

    Argument errors always carry their detail (the model needs it to correct the call);
    exception text is included only with ``detailed_errors``. ``toolset`` is the run's
    live tool set, handed to the tool through its :class:`ToolContext`. A result that no
    store, model or frontend can carry (:mod:`._sendable`) becomes a ``failed`` result
    naming the offending part, so the step is recorded like any other failure.
    """
    execution = await _invoke(
        tool,
        call,
        thread_id=thread_id,
        middleware=middleware,
        answers=answers,
        approval=approval,
        detailed_errors=detailed_errors,
        toolset=toolset,
    )
    problem = None if execution.result is None else output_problem(execution.result)
    if problem is not None:
        text = (
            f"Error: tool {tool.name!r} returned a result that cannot be sent or stored: {problem}."
        )
        execution.result = make_result(call, text, "failed")
    return execution


async def _invoke(
    tool: Tool,
    call: ToolCallPart,
    *,
    thread_id: str,
    middleware: Sequence[FunctionMiddleware],
    answers: tuple[JsonValue, ...],
    approval: ApprovalRecord | None,
    detailed_errors: bool,
    toolset: ToolSet | None,
) -> Execution:
    """:func:`execute` without the final check of the result."""
    try:
        arguments = tool.validate(call)
    except ToolArgumentsError as error:
        text = f"Error: invalid arguments for tool {tool.name!r}: {error}"
        return Execution(result=make_result(call, text, "failed"))
    context = (
        ToolContext(thread_id=thread_id, call=call, answers=answers, toolset=toolset)
        if middleware or tool.context_parameter is not None
        else None
    )
    try:
        if context is None:  # no middleware and no context parameter: call the tool directly
            value = await tool.call(arguments)
        else:
            invocation = ToolInvocation(
                tool=tool, call=call, arguments=arguments, context=context, approval=approval
            )
            value = await _chain(middleware)(invocation)
    except NeedsInput as request:
        return _asked(call, request)
    except TerminateLoop as stop:
        if stop.result is None:
            return Execution(
                result=make_result(call, TERMINATED_TEXT, "interrupted"), terminate=True
            )
        return Execution(result=_as_result(call, stop.result), terminate=True)
    except Exception as error:
        detail = f" {type(error).__name__}: {error}" if detailed_errors else ""
        text = f"Error: tool {tool.name!r} failed.{detail}"
        return Execution(result=make_result(call, text, "failed"))
    if isinstance(value, NeedsInput):
        return _asked(call, value)
    return Execution(result=_as_result(call, value))


def _asked(call: ToolCallPart, request: NeedsInput) -> Execution:
    if not request.questions:
        text = "Error: the tool asked for user input but gave no question."
        return Execution(result=make_result(call, text, "failed"))
    return Execution(questions=request.questions)
