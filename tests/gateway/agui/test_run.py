"""Runs over a scripted model: upstream failures leave no orphaned call; cancel reaches
the model call."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from interlock.core_loop import Agent, ChatModel, ScriptedModel, ScriptEntry, Tool
from interlock.gateway.agui import AgentRuntime, AguiBinding, RunContext
from interlock.gateway.auth import KeyRing
from interlock.gateway.stores import open_store
from interlock.transcript import (
    Message,
    PartDelta,
    PartStarted,
    Request,
    Response,
    ResponseStarted,
    StreamFailed,
    ToolCallPart,
    Update,
)
from tests.gateway.agui.harness import (
    Server,
    new_id,
    of_type,
    open_socket,
    run_input,
    running,
    snapshot,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS, get_weather


def binding(model: ChatModel) -> AguiBinding:
    runtime = AgentRuntime(
        name="scripted",
        agent=Agent(model="scripted-model", tools=(Tool.from_function(get_weather),)),
        model=model,
        approval_style="interrupt",
        provider="openai",
    )
    return AguiBinding(
        agents={"scripted": runtime},
        context=RunContext(store=open_store("memory://"), seal_key=b"k" * 32),
        keys=KeyRing(()),
    )


def weather_call(call_id: str, city: str) -> Response:
    call = ToolCallPart(call_id=call_id, name="get_weather", arguments=f'{{"city":"{city}"}}')
    return Response(message=Message(role="assistant", parts=(call,)), finish_reason="tool_calls")


def broken_step(call_id: str) -> Sequence[Update]:
    return [
        ResponseStarted(),
        PartStarted(index=0, part=ToolCallPart(call_id=call_id, name="get_weather")),
        PartDelta(index=0, delta='{"ci'),
        StreamFailed(code="UPSTREAM_TIMEOUT", message="upstream timed out", status=504),
    ]


class SlowModel:
    """Starts answering, then hangs until cancelled; records that it was closed."""

    def __init__(self) -> None:
        self.closed = False

    async def stream(self, request: Request) -> AsyncIterator[Update]:
        try:
            yield ResponseStarted()
            await asyncio.sleep(30)
        finally:
            self.closed = True


def scripted(script: Sequence[ScriptEntry]) -> contextlib.AbstractContextManager[Server]:
    return running(binding(ScriptedModel(script)))


async def test_an_upstream_failure_leaves_no_orphaned_call() -> None:
    city, thread = new_id("city"), new_id("t")
    with scripted([weather_call("c1", city), broken_step("c2")]) as server:
        async with open_socket(server, "scripted") as socket:
            events = await socket.run(run_input(thread, [user("weather twice")]))
            replay = await socket.run(run_input(thread, []))
    assert events[-1] == {**events[-1], "type": "RUN_ERROR", "code": "UPSTREAM_TIMEOUT"}
    assert [e["toolCallId"] for e in of_type(events, "TOOL_CALL_START")] == ["c1", "c2"]
    saved = snapshot(events)
    calls = [call["id"] for message in saved for call in message.get("toolCalls", [])]
    results = [message["toolCallId"] for message in saved if message["role"] == "tool"]
    assert calls == results == ["c1"]
    assert snapshot(replay) == saved
    assert EXECUTIONS["get_weather", city] == 1


async def test_a_failure_in_the_first_step_keeps_only_the_input() -> None:
    with scripted([broken_step("c9")]) as server:
        async with open_socket(server, "scripted") as socket:
            events = await socket.run(run_input(new_id("t"), [user("hello")]))
    assert events[-1]["code"] == "UPSTREAM_TIMEOUT"
    assert [message["role"] for message in snapshot(events)] == ["user"]


async def test_cancel_reaches_the_model_call() -> None:
    model = SlowModel()
    with running(binding(model)) as server:
        async with open_socket(server, "scripted") as socket:
            body = run_input(new_id("t"), [user("take your time")])
            await socket.send(body)
            assert (await socket.receive())["type"] == "RUN_STARTED"
            await asyncio.sleep(0.05)
            await socket.send({"type": "cancel", "runId": body["runId"]})
            events = await socket.until_terminal()
    assert events[-1]["outcome"] == {"type": "cancelled"}
    assert model.closed
