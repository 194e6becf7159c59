"""Runs over a scripted model: upstream failures leave no orphaned call; cancel reaches
the model call; a client that stops reading holds its run back (bounded outbox) until it
reads again, goes away or stalls too long."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable, Sequence

import httpx
import pytest
from websockets.asyncio.client import connect

from interlock.codecs.agui import RunInput
from interlock.core_loop import Agent, ChatModel, ScriptedModel, ScriptEntry, Tool
from interlock.gateway.agui import AgentRuntime, AguiBinding, AguiRun, RunContext
from interlock.gateway.agui._context import dumps
from interlock.gateway.auth import KeyRing
from interlock.gateway.stores import open_store
from interlock.transcript import (
    Message,
    PartDelta,
    PartFinished,
    PartStarted,
    Request,
    Response,
    ResponseFinished,
    ResponseStarted,
    StreamFailed,
    TextPart,
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
    sse_events,
    sse_run,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS, get_weather


class RecordingBinding(AguiBinding):
    """Keeps every run it starts, so a test can look at the server side of a stream."""

    runs: list[AguiRun]

    def start(self, runtime: AgentRuntime, run_input: RunInput, tenant: str) -> AguiRun:
        run = super().start(runtime, run_input, tenant)
        self.runs.append(run)
        return run


def binding(model: ChatModel, **context: object) -> RecordingBinding:
    runtime = AgentRuntime(
        name="scripted",
        agent=Agent(model="scripted-model", tools=(Tool.from_function(get_weather),)),
        model=model,
        approval_style="interrupt",
        provider="openai",
    )
    recording = RecordingBinding(
        agents={"scripted": runtime},
        context=RunContext(store=open_store("memory://"), seal_key=b"k" * 32, **context),
        keys=KeyRing(()),
    )
    recording.runs = []
    return recording


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


class FloodModel:
    """Answers ``flood`` with ``count`` text deltas of ``size`` characters, as fast as it
    can (it never waits by itself: only a full outbox can hold it back); anything else
    with ``ok``. Records how many deltas it produced and whether it was closed.

    16 MiB in all: far more than loopback socket buffers absorb from a client that does
    not read, in few deltas (the codec's cost grows with deltas × text so far)."""

    def __init__(self, count: int = 64, size: int = 256 * 1024) -> None:
        self.count, self.size = count, size
        self.produced = 0
        self.closed = False

    async def stream(self, request: Request) -> AsyncIterator[Update]:
        flood = request.messages[-1].text == "flood"
        try:
            yield ResponseStarted()
            yield PartStarted(index=0, part=TextPart(text=""))
            for _ in range(self.count if flood else 1):
                self.produced += flood
                yield PartDelta(index=0, delta="x" * self.size if flood else "ok")
            text = "x" * (self.count * self.size) if flood else "ok"
            yield PartFinished(index=0, part=TextPart(text=text))
            yield ResponseFinished(finish_reason="stop")
        finally:
            self.closed = self.closed or flood


def small_buffer_client() -> httpx.AsyncClient:
    """An HTTP client whose socket buffers little, so a stream it does not read stops."""
    option = (socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    transport = httpx.AsyncHTTPTransport(socket_options=[option])
    return httpx.AsyncClient(timeout=20, transport=transport)


async def until(condition: Callable[[], object]) -> None:
    """Wait (polling) until ``condition()`` holds; fail after 20 s."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


async def held_back(recording: RecordingBinding, model: FloodModel) -> AguiRun:
    """The run, once it waits for its client; checks it holds only a bounded outbox."""
    await until(lambda: recording.runs and recording.runs[-1].outbox.waiting)
    run = recording.runs[-1]
    assert run.outbox.size <= run.context.outbox_limit + model.size + 200  # one frame over
    assert model.produced < model.count // 2  # held back: most deltas were never made
    return run


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


async def test_a_websocket_client_that_stops_reading_holds_its_run_until_it_reads() -> None:
    model = FloodModel()
    recording = binding(model)
    with running(recording) as server:
        url = f"{server.ws_url}/agui/scripted/ws"
        # max_queue=1: the client library stops reading the socket after one frame
        async with connect(url, max_queue=1, max_size=None) as connection:
            await connection.send(json.dumps(run_input(new_id("t"), [user("flood")])))
            await held_back(recording, model)
            events = [json.loads(await connection.recv())]
            while events[-1]["type"] not in ("RUN_FINISHED", "RUN_ERROR"):
                events.append(json.loads(await connection.recv()))
    assert events[-1] == {**events[-1], "type": "RUN_FINISHED", "outcome": {"type": "success"}}
    deltas = of_type(events, "TEXT_MESSAGE_CONTENT")
    assert sum(len(event["delta"]) for event in deltas) == model.count * model.size


async def test_a_websocket_client_that_stops_reading_and_leaves_cancels_its_run() -> None:
    model = FloodModel()
    recording = binding(model)
    thread = new_id("t")
    with running(recording) as server:
        url = f"{server.ws_url}/agui/scripted/ws"
        connection = await connect(url, max_queue=1)
        await connection.send(json.dumps(run_input(thread, [user("flood")])))
        run = await held_back(recording, model)
        connection.transport.abort()  # gone, without reading another frame
        await until(lambda: run.phase == "ended")
        assert model.closed
        async with open_socket(server, "scripted") as socket:  # the thread is free and clean
            events = await socket.run(run_input(thread, [user("after")]))
    assert events[-1]["type"] == "RUN_FINISHED"
    assert [(m["role"], m["content"]) for m in snapshot(events)] == [
        ("user", "flood"),
        ("user", "after"),
        ("assistant", "ok"),
    ]


async def test_a_websocket_client_that_stops_reading_for_good_is_dropped_by_the_pings() -> None:
    model = FloodModel()
    recording = binding(model, stall_seconds=None)  # only the keep-alive can end it
    pings = {"ws_ping_interval": 0.2, "ws_ping_timeout": 0.2}
    with running(recording, options=pings) as server:
        url = f"{server.ws_url}/agui/scripted/ws"
        connection = await connect(url, max_queue=1, ping_interval=None)
        await connection.send(json.dumps(run_input(new_id("t"), [user("flood")])))
        run = await held_back(recording, model)  # the client never reads again
        await until(lambda: run.phase == "ended")
        assert run.outbox.closed
        assert model.closed
        connection.transport.abort()


async def test_an_sse_client_that_stops_reading_and_leaves_cancels_its_run() -> None:
    model = FloodModel()
    recording = binding(model)
    with running(recording) as server:
        async with (
            small_buffer_client() as client,
            client.stream(
                "POST",
                f"{server.url}/agui/scripted",
                json=run_input(new_id("t"), [user("flood")]),
            ) as response,
        ):
            assert response.status_code == 200
            run = await held_back(recording, model)
        await until(lambda: run.phase == "ended")
    assert model.closed


async def test_a_client_that_stalls_past_the_limit_loses_its_run() -> None:
    model = FloodModel()
    recording = binding(model, stall_seconds=0.2)
    thread = new_id("t")
    with running(recording) as server:
        async with (
            small_buffer_client() as client,
            client.stream(
                "POST", f"{server.url}/agui/scripted", json=run_input(thread, [user("flood")])
            ) as response,
        ):
            await until(lambda: recording.runs)
            run = recording.runs[0]
            await until(lambda: run.phase == "ended")  # while the client is still connected
            assert response.status_code == 200
            assert run.outbox.closed
        _, text = sse_run(server, run_input(thread, [user("after")]), "scripted")
    assert model.closed
    assert model.produced < model.count
    assert [(m["role"], m["content"]) for m in snapshot(sse_events(text))] == [
        ("user", "flood"),
        ("user", "after"),
        ("assistant", "ok"),
    ]


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 'é\n"\u2028', "timestamp": 1},
        {"nested": [1, 2.5, None, True, {"a": []}], "empty": {}},
        "bare string",
        [],
    ],
)
def test_frames_are_compact_json_with_utf8_kept(frame: object) -> None:
    assert dumps(frame) == json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
