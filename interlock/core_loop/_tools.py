"""Tools from plain Python callables, client-owned declarations, and tool invocation.

A local tool's JSON schema comes from its signature through pydantic; its arguments are
validated against the same model before the function body runs. Bad arguments, exceptions
and odd return values all become a :class:`~interlock.transcript.ToolResultPart` with
outcome ``failed``; nothing a tool does can crash the loop. A tool asks the user for input
by raising (or returning) :class:`NeedsInput`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast, get_type_hints, overload

import pydantic

from interlock.core_loop._state import AgentState
from interlock.transcript import (
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    OutputPart,
    TextPart,
    ToolCallPart,
    ToolOutcome,
    ToolResultPart,
    ToolSpec,
)

ApprovalMode: TypeAlias = "Literal['never', 'always'] | Callable[[JsonObject], bool]"
OnInterrupt: TypeAlias = Literal["report", "retry"]
"""What happens to an execution that started and never recorded a result (a crash, a
cancel): ``report`` (the default) closes it as ``interrupted`` and never runs it again;
``retry``, for idempotent tools, runs it once more on recovery."""
"""``never``, ``always``, or a rule on the parsed arguments (``True`` = needs approval)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InputQuestion:
    """One question a tool puts to the user, with an optional JSON schema for the answer."""

    prompt: str
    schema: JsonObject | None = None


class NeedsInput(Exception):
    """Raised (or returned) by a tool that needs the user's input before it can finish.

    The loop pauses without another model call and surfaces one input request per question,
    in order. When every question is answered the tool runs again with the answers in
    :attr:`ToolContext.answers` (same order); the execution counts once against the budget.
    """

    def __init__(
        self,
        prompt: str | None = None,
        *,
        schema: JsonObject | None = None,
        questions: Sequence[InputQuestion] = (),
    ) -> None:
        asked = ([InputQuestion(prompt=prompt, schema=schema)] if prompt is not None else []) + [
            *questions
        ]
        super().__init__(asked[0].prompt if asked else "input needed")
        self.questions: tuple[InputQuestion, ...] = tuple(asked)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """Injected into a tool parameter annotated ``ToolContext`` (never part of the schema).

    ``answers`` holds the user's answers to the questions of this occurrence's last
    :class:`NeedsInput`, in order; it is empty on the first run. ``toolset`` is the run's
    live tool set (``None`` when the tool is called outside a run): :meth:`add_tools` and
    :meth:`remove_tools` change what the run's *next* model call is offered. :attr:`state`
    is the run's shared :class:`~interlock.core_loop._state.AgentState`, if its caller
    gave one.
    """

    thread_id: str
    call: ToolCallPart
    answers: tuple[JsonValue, ...] = ()
    toolset: ToolSet | None = field(default=None, compare=False, repr=False)

    @property
    def occurrence_id(self) -> str:
        """The occurrence being executed."""
        return self.call.occurrence_id or ""

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools the run currently offers, in order."""
        return self._live().tools

    @property
    def state(self) -> AgentState | None:
        """The run's shared state (``None`` outside a run, or when the run has none)."""
        return None if self.toolset is None else self.toolset.state

    def add_tools(self, *tools: Tool) -> None:
        """Offer ``tools`` from the run's next model call on (see :meth:`ToolSet.add`)."""
        self._live().add(tools)

    def remove_tools(self, *tools: Tool | str) -> None:
        """Stop offering ``tools`` (objects or names) from the next model call on."""
        self._live().remove(tools)

    def _live(self) -> ToolSet:
        if self.toolset is None:
            raise RuntimeError("no live tool set: the tool is not running inside a loop run")
        return self.toolset


class ToolSet:
    """The tools of one run: what each model call is offered and what its calls resolve to.

    Each run builds its own from ``Agent.tools`` (the agent is never changed); tools
    change it through :class:`ToolContext` while a batch executes. Changes take effect on
    the run's next model call, never in the batch being executed (that batch was resolved
    before anything ran), and never in another run, even a resume of this one. ``specs``
    is rebuilt only on a change, so a run whose tools change nothing pays nothing per
    iteration. Mutations are serialized by a lock (sync tools run in worker threads).
    """

    __slots__ = ("_lock", "by_name", "specs", "state")

    def __init__(self, tools: Iterable[Tool], state: AgentState | None = None) -> None:
        self.state = state
        self.by_name: dict[str, Tool] = {tool.name: tool for tool in tools}
        self.specs: tuple[ToolSpec, ...] = tuple(tool.spec for tool in self.by_name.values())
        self._lock = threading.Lock()

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The current tools, in the order they were offered."""
        return tuple(self.by_name.values())

    def add(self, tools: Iterable[Tool]) -> None:
        """Add ``tools``; all or nothing.

        Adding a tool that is already offered (the same object, or an equal one) is a
        no-op; a different tool with an offered name raises ``ValueError`` and adds none.
        """
        with self._lock:
            new: dict[str, Tool] = {}
            for tool in tools:
                known = self.by_name.get(tool.name) or new.get(tool.name)
                if known is not None and not (known is tool or known == tool):
                    raise ValueError(f"a different tool named {tool.name!r} is already offered")
                if known is None:
                    new[tool.name] = tool
            if new:
                self.by_name.update(new)
                self._changed()

    def remove(self, tools: Iterable[Tool | str]) -> None:
        """Remove tools by object or name; a name not offered is ignored."""
        with self._lock:
            names = [item if isinstance(item, str) else item.name for item in tools]
            removed = [self.by_name.pop(name) for name in names if name in self.by_name]
            if removed:
                self._changed()

    def _changed(self) -> None:
        self.specs = tuple(tool.spec for tool in self.by_name.values())


class ToolArgumentsError(ValueError):
    """The call's arguments are not valid JSON or fail the tool's schema."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A tool the model may call.

    ``function`` is ``None`` for a client-owned (declaration-only) tool: its calls end the
    run with the calls pending for the client. ``approval`` decides which calls need a
    human decision first. ``on_interrupt`` is the policy for an execution that was
    interrupted before its result was recorded (:data:`OnInterrupt`). Build local tools
    with :meth:`from_function` or :func:`tool`.
    """

    name: str
    description: str | None = None
    parameters: JsonObject = field(default_factory=lambda: {"type": "object", "properties": {}})
    function: Callable[..., Any] | None = None
    approval: ApprovalMode = "never"
    arguments_model: type[pydantic.BaseModel] | None = None
    context_parameter: str | None = None
    on_interrupt: OnInterrupt = "report"
    _coroutine: bool = field(default=False, init=False, repr=False, compare=False)
    """Whether ``function`` is a coroutine function (worked out once, not per call)."""
    _argument_names: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    """The fields of ``arguments_model``, in order."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_coroutine", inspect.iscoroutinefunction(self.function))
        if self.arguments_model is not None:
            object.__setattr__(self, "_argument_names", tuple(self.arguments_model.model_fields))

    @property
    def client_owned(self) -> bool:
        """True for a declaration-only tool the client executes."""
        return self.function is None

    @property
    def spec(self) -> ToolSpec:
        """The declaration sent to the model."""
        return ToolSpec(
            name=self.name,
            description=self.description,
            parameters=self.parameters,
            owner="client" if self.client_owned else "local",
        )

    def needs_approval(self, call: ToolCallPart) -> bool:
        """Whether ``call`` needs a decision; a rule that cannot judge the call says yes."""
        approval = self.approval
        if approval == "never":
            return False
        if approval == "always":
            return True
        try:
            arguments = call.parsed_arguments
            return bool(
                approval(cast(JsonObject, arguments) if isinstance(arguments, dict) else {})
            )
        except Exception:
            return True

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        approval: ApprovalMode = "never",
        on_interrupt: OnInterrupt = "report",
    ) -> Tool:
        """A local tool from a sync or async callable; schema from its signature."""
        model, context_parameter = _arguments_model(function)
        schema = model.model_json_schema()
        schema.pop("title", None)
        return cls(
            name=name or function.__name__,
            description=description or _first_paragraph(inspect.getdoc(function)),
            parameters=cast(JsonObject, schema),
            function=function,
            approval=approval,
            arguments_model=model,
            context_parameter=context_parameter,
            on_interrupt=on_interrupt,
        )

    @classmethod
    def client(
        cls, name: str, *, description: str | None = None, parameters: JsonObject | None = None
    ) -> Tool:
        """A client-owned, declaration-only tool."""
        return cls(
            name=name,
            description=description,
            parameters=parameters or {"type": "object", "properties": {}},
        )

    def validate(self, call: ToolCallPart) -> dict[str, Any]:
        """The call's arguments as keyword arguments; raises :class:`ToolArgumentsError`."""
        try:
            arguments = call.parsed_arguments
        except ValueError as error:
            raise ToolArgumentsError(f"arguments are not valid JSON: {error}") from error
        if not isinstance(arguments, dict):
            raise ToolArgumentsError("arguments must be a JSON object")
        if self.arguments_model is None:
            return dict(arguments)
        try:
            validated = self.arguments_model.model_validate(arguments)
        except pydantic.ValidationError as error:
            raise ToolArgumentsError(_validation_message(error)) from error
        return {name: getattr(validated, name) for name in self._argument_names}

    async def call(
        self, arguments: Mapping[str, Any], context: ToolContext | None = None
    ) -> object:
        """Run the function (sync functions in a worker thread) and return its value.

        ``context`` is required when the function takes a :class:`ToolContext`.
        """
        function = self.function
        if function is None:
            raise RuntimeError(f"tool {self.name!r} is client-owned and cannot run here")
        keywords = dict(arguments)
        if self.context_parameter is not None:
            if context is None:
                raise ValueError(f"tool {self.name!r} needs a ToolContext")
            keywords[self.context_parameter] = context
        if self._coroutine:
            return await function(**keywords)
        value = await asyncio.to_thread(function, **keywords)
        if inspect.isawaitable(value):
            return await cast(Awaitable[object], value)
        return value


@overload
def tool(function: Callable[..., Any], /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    approval: ApprovalMode = "never",
    on_interrupt: OnInterrupt = "report",
) -> Callable[[Callable[..., Any]], Tool]: ...
def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    approval: ApprovalMode = "never",
    on_interrupt: OnInterrupt = "report",
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Decorator: ``@tool`` or ``@tool(approval="always", on_interrupt="retry")`` turns a
    callable into a Tool."""

    def wrap(inner: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            inner,
            name=name,
            description=description,
            approval=approval,
            on_interrupt=on_interrupt,
        )

    return wrap(function) if function is not None else wrap


def _arguments_model(function: Callable[..., Any]) -> tuple[type[pydantic.BaseModel], str | None]:
    signature = inspect.signature(function)
    hints = get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    context_parameter: str | None = None
    for parameter in signature.parameters.values():
        annotation = hints.get(parameter.name, Any)
        if annotation is ToolContext:
            context_parameter = parameter.name
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        default = ... if parameter.default is parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    model = pydantic.create_model(  # pyright: ignore[reportCallIssue, reportUnknownVariableType] - dynamic fields
        f"{function.__name__}_arguments",
        __config__=pydantic.ConfigDict(extra="forbid"),
        **fields,
    )
    return model, context_parameter


def _first_paragraph(doc: str | None) -> str | None:
    if not doc:
        return None
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")


def _validation_message(error: pydantic.ValidationError) -> str:
    problems = [
        f"{'.'.join(str(item) for item in issue['loc']) or '(root)'}: {issue['msg']}"
        for issue in error.errors()
    ]
    return "invalid arguments: " + "; ".join(problems)


def output_parts(value: object) -> tuple[OutputPart, ...]:
    """A tool's return value as result output parts.

    ``None`` gives no output; a string is text; an output part (or a sequence of them) is
    kept; a pydantic model or any JSON-compatible value becomes a JSON part; anything else
    is its ``str``.
    """
    if value is None:
        return ()
    if isinstance(value, str):
        return (TextPart(text=value),)
    if isinstance(value, TextPart | JsonPart | MediaPart):
        return (value,)
    if isinstance(value, pydantic.BaseModel):
        return (JsonPart(value=cast(JsonValue, value.model_dump(mode="json"))),)
    if isinstance(value, list | tuple) and value:
        items = cast(Sequence[object], value)
        if all(isinstance(item, TextPart | JsonPart | MediaPart) for item in items):
            return tuple(cast(Sequence[OutputPart], items))
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return (TextPart(text=str(cast(object, value))),)
    return (JsonPart(value=cast(JsonValue, value)),)


def make_result(call: ToolCallPart, text: str, outcome: ToolOutcome) -> ToolResultPart:
    """A result for ``call`` carrying one text part."""
    return ToolResultPart(
        call_id=call.call_id,
        occurrence_id=call.occurrence_id,
        name=call.name,
        output=(TextPart(text=text),),
        outcome=outcome,
    )
