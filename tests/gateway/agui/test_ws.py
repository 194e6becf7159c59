"""The WebSocket session: runs in sequence, cancel, bad and oversized frames."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from websockets.exceptions import ConnectionClosed

from interlock.gateway.agui._ws import DEFERRED_LIMIT
from tests.gateway.agui.harness import (
    Server,
    binding_for,
    make_gateway,
    new_id,
    of_type,
    open_socket,
    run_input,
    serve,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS, STARTED

MAX_FRAME = 8192


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    gateway = make_gateway(str(tmp_path_factory.mktemp("agui-ws")), max_body=MAX_FRAME)
    yield from serve(binding_for(gateway))


async def test_runs_follow_one_another_bare_and_wrapped(server: Server) -> None:
    thread = new_id("t")
    async with open_socket(server) as socket:
        first = await socket.run(run_input(thread, [user("hello")], run_id="r-1"))
        second = await socket.run(run_input(thread, [user("again")], run_id="r-2"), wrapped=True)
    for events, run_id in ((first, "r-1"), (second, "r-2")):
        started, finished = events[0], events[-1]
        assert started == {
            **started,
            "type": "RUN_STARTED",
            "threadId": thread,
            "runId": run_id,
            "protocolVersion": "1.0",
        }
        assert finished == {**finished, "type": "RUN_FINISHED", "threadId": thread, "runId": run_id}
        assert [e["type"] for e in events].count("RUN_FINISHED") == 1
        assert all(isinstance(e["timestamp"], int) for e in events)
    texts = "".join(e["delta"] for e in of_type(second, "TEXT_MESSAGE_CONTENT"))
    assert texts == "You said: again"
    history = of_type(second, "MESSAGES_SNAPSHOT")[-1]["messages"]
    assert [m["content"] for m in history if m["role"] == "user"] == ["hello", "again"]


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("not json", "INVALID_FRAME"),
        ("[1, 2]", "INVALID_FRAME"),
        ('{"type": "ping"}', "INVALID_FRAME"),
        ('{"type": "run", "input": 3}', "INVALID_FRAME"),
        ('{"threadId": "t", "runId": "r"}', "INVALID_INPUT"),
        ('{"threadId": "t", "runId": "r", "messages": [{"role": "user"}]}', "INVALID_INPUT"),
        ('{"type": "cancel"}', "INVALID_FRAME"),
        ('{"type": "cancel", "runId": "nope"}', "NO_ACTIVE_RUN"),
    ],
)
async def test_bad_frames_get_run_error_and_the_socket_stays_usable(
    server: Server, frame: str, code: str
) -> None:
    async with open_socket(server) as socket:
        await socket.send(frame)
        error = await socket.receive()
        assert error["type"] == "RUN_ERROR" and error["code"] == code and error["message"]
        events = await socket.run(run_input(new_id("t"), [user("still there?")]))
    assert events[-1]["type"] == "RUN_FINISHED"


async def test_binary_frames_are_refused(server: Server) -> None:
    async with open_socket(server) as socket:
        await socket.connection.send(b"\x00\x01")
        assert (await socket.receive())["code"] == "INVALID_FRAME"


async def test_an_oversized_frame_closes_with_1009(server: Server) -> None:
    async with open_socket(server) as socket:
        await socket.send(run_input(new_id("t"), [user("x" * (MAX_FRAME + 10))]))
        with pytest.raises(ConnectionClosed) as closed:
            await socket.receive()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_cancel_stops_the_tool_ends_cancelled_and_records_it_interrupted(
    server: Server,
) -> None:
    tag, thread = new_id("slow"), new_id("t")
    text = f'call slow_task with {{"tag":"{tag}"}}'
    async with open_socket(server) as socket:
        body = run_input(thread, [user(text)])
        await socket.send(body)
        while (await socket.receive())["type"] != "TOOL_CALL_END":
            pass
        # The tool runs on the server's thread: poll its counter (no shared event loop).
        while STARTED[tag] == 0:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        await socket.send({"type": "cancel", "runId": "someone-else"})
        await socket.send({"type": "cancel", "runId": body["runId"]})
        events = await socket.until_terminal()
        finished = events[-1]
        assert finished == {
            **finished,
            "type": "RUN_FINISHED",
            "runId": body["runId"],
            "outcome": {"type": "cancelled"},
        }
        # The cancelled call stays in the thread, closed with an ``interrupted`` result.
        history = of_type(events, "MESSAGES_SNAPSHOT")[-1]["messages"]
        calls = [call for message in history for call in message.get("toolCalls", [])]
        assert [call["function"]["name"] for call in calls] == ["slow_task"]
        results = [message for message in history if message["role"] == "tool"]
        assert [message["toolCallId"] for message in results] == [calls[0]["id"]]
        assert results[0]["content"].startswith("Interrupted:")
        # The refused cancel is answered after the run's terminal event, never among them.
        refused = await socket.receive()
        assert refused == {**refused, "type": "RUN_ERROR", "code": "UNKNOWN_RUN"}
        after = await socket.run(run_input(thread, [user("what now")]))
    assert after[-1]["type"] == "RUN_FINISHED"
    assert EXECUTIONS["slow_task", tag] == 0


async def test_a_run_while_one_is_active_is_refused_after_it_addressed_to_itself(
    server: Server,
) -> None:
    tag = new_id("busy")
    async with open_socket(server) as socket:
        body = run_input(new_id("t"), [user(f'call slow_task with {{"tag":"{tag}"}}')])
        await socket.send(body)
        second = run_input(new_id("t"), [user("me too")])
        await socket.send(second)
        await socket.send({"type": "run", "input": {**second, "runId": "third"}})
        while STARTED[tag] == 0:  # noqa: ASYNC110  # the tool runs on the server's thread
            await asyncio.sleep(0.01)
        await socket.send({"type": "cancel", "runId": body["runId"]})
        events = await socket.until_terminal()
        refusals = [await socket.receive(), await socket.receive()]
        after = await socket.run(run_input(new_id("t"), [user("now")]))
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "cancelled"}
    assert all(event["type"] != "RUN_ERROR" for event in events)
    assert [(r["type"], r["code"]) for r in refusals] == [("RUN_ERROR", "RUN_IN_PROGRESS")] * 2
    assert [r["metadata"]["interlock"] for r in refusals] == [
        {"threadId": second["threadId"], "runId": second["runId"]},
        {"threadId": second["threadId"], "runId": "third"},
    ]
    assert after[-1]["type"] == "RUN_FINISHED"


async def test_a_flood_of_refusals_during_a_run_closes_the_socket(server: Server) -> None:
    tag = new_id("flood")
    async with open_socket(server) as socket:
        await socket.send(run_input(new_id("t"), [user(f'call slow_task with {{"tag":"{tag}"}}')]))
        for _ in range(DEFERRED_LIMIT + 1):
            await socket.send("not json")
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                assert (await socket.receive())["type"] != "RUN_ERROR"
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
