"""Shared scaffolding for loop tests: a fresh world per run, both renderings compared."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from interlock.core_loop import (
    Agent,
    AgentState,
    EventFolder,
    InMemoryLedgerStore,
    LedgerStore,
    LoopEvent,
    LoopResult,
    ScriptedModel,
    ScriptEntry,
    Tool,
    fold_events,
    run_agent,
    run_loop,
    sequential_ids,
)
from interlock.transcript import (
    ApprovalResponsePart,
    InputResponsePart,
    JsonValue,
    Message,
    Part,
    ReasoningPart,
    Request,
    Response,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

Mode = Literal["stream", "result"]


def user(text: str) -> Message:
    return Message(role="user", parts=(TextPart(text=text),))


def call(call_id: str, name: str, arguments: str = "{}", **fields: Any) -> ToolCallPart:
    return ToolCallPart(call_id=call_id, name=name, arguments=arguments, **fields)


def reply(*parts: Part, response_id: str | None = None) -> Response:
    return Response(message=Message(role="assistant", parts=parts), id=response_id)


def say(text: str, response_id: str | None = None) -> Response:
    return reply(TextPart(text=text), response_id=response_id)


def think(text: str = "thinking") -> ReasoningPart:
    return ReasoningPart(reasoning_kind="summary", text=text, item_id="rs_1")


def decide(*decisions: tuple[str, bool] | ApprovalResponsePart) -> Message:
    parts: list[Part] = [
        item
        if isinstance(item, ApprovalResponsePart)
        else ApprovalResponsePart(approval_id=item[0], approved=item[1])
        for item in decisions
    ]
    return Message(role="user", parts=tuple(parts))


def answer(request_id: str, value: JsonValue) -> Message:
    return Message(role="user", parts=(InputResponsePart(request_id=request_id, value=value),))


def shape(messages: Sequence[Message]) -> list[tuple[str, list[str]]]:
    """Roles and part kinds, the way a caller would eyeball a transcript."""
    return [(message.role, [part.kind for part in message.parts]) for message in messages]


def results(messages: Sequence[Message]) -> list[ToolResultPart]:
    return [part for message in messages for part in message.tool_results]


@dataclass
class World:
    """One scenario's state: the scripted model, the ledger, tools and execution counts."""

    script: Sequence[ScriptEntry]
    tools: Sequence[Tool] = ()
    agent_options: dict[str, Any] = field(default_factory=dict[str, Any])
    mode: Mode = "result"

    def __post_init__(self) -> None:
        self.model = ScriptedModel(self.script)
        self.ledger: LedgerStore = InMemoryLedgerStore()
        self.ids = sequential_ids()
        self.agent = Agent(model="test-model", tools=tuple(self.tools), **self.agent_options)
        self.runs: list[list[LoopEvent]] = []

    @property
    def requests(self) -> list[Request]:
        return self.model.requests

    async def run(
        self,
        messages: str | Sequence[Message],
        *,
        previous_response_id: str | None = None,
        exclusive: bool = False,
        state: AgentState | None = None,
    ) -> LoopResult:
        snapshot = tuple(messages)
        if self.mode == "stream":
            folder = EventFolder()
            events = [
                event
                async for event in run_loop(
                    self.agent,
                    self.model,
                    messages,
                    ledger=self.ledger,
                    thread_id="thread",
                    previous_response_id=previous_response_id,
                    ids=self.ids,
                    exclusive=exclusive,
                    state=state,
                    folder=folder,
                )
            ]
            self.runs.append(events)
            result = fold_events(events)
            # the loop's own fold (each model update folded once, as it streamed) is the
            # fold of what it yielded
            assert folder.result() == result
        else:
            result = await run_agent(
                self.agent,
                self.model,
                messages,
                ledger=self.ledger,
                thread_id="thread",
                previous_response_id=previous_response_id,
                ids=self.ids,
                exclusive=exclusive,
                state=state,
            )
        assert tuple(messages) == snapshot, "the caller's input was modified"
        return result


Scenario = Callable[[Mode], Awaitable[Any]]


async def both(scenario: Scenario) -> Any:
    """Run ``scenario`` streaming and non-streaming; they must observe exactly the same."""
    streamed = await scenario("stream")
    folded = await scenario("result")
    assert streamed == folded
    return streamed


class Calls:
    """Counts executions per tool name."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, **arguments: Any) -> None:
        self.log.append((name, arguments))

    def count(self, name: str | None = None) -> int:
        return sum(1 for logged, _ in self.log if name is None or logged == name)
