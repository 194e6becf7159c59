"""A tool declared ``on_interrupt = "retry"`` (idempotent) that a run cut off mid-execution.

When the run stops without its client asking — the client left (WebSocket closed, SSE
connection dropped) and nobody re-attached — the call is left open, and the next run on
the thread (here a reconnect: an input with no messages) runs it once more and records
its result. When the client cancels, the user asked for the work to stop: it is reported
``interrupted`` like any tool and never runs again. Over WebSocket and SSE, on a SQLite
file and a real redis-server; the tool counts its executions (``tests.gateway.agui.tools``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from interlock.gateway.agui import binding_routes
from tests.gateway.agui.harness import (
    Server,
    binding_for,
    make_gateway,
    new_id,
    open_socket,
    run_input,
    snapshot,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS, STARTED

TRANSPORTS = ("ws", "sse")


@pytest.fixture(scope="module", params=["sqlite", "redis"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp(f"agui-retry-{request.param}")
    if request.param == "sqlite":
        store = f"sqlite:///{directory / 'state.db'}"
    else:
        store = str(request.getfixturevalue("redis_url"))
    gateway = make_gateway(str(directory), store=store)
    binding = binding_for(gateway)
    binding.context.reattach_seconds = 0.3  # a run nobody re-attaches to stops soon

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await gateway.close()  # on the server's loop, which the store's connections use

    app = Starlette(routes=binding_routes(binding), lifespan=lifespan)
    server = Server(app, options={"lifespan": "on"}).start()
    try:
        yield server
    finally:
        server.stop()


def stock(item: str) -> dict[str, Any]:
    return user(f'call paced_stock with {{"item":"{item}","seconds":60}}')


async def until_started(item: str) -> None:
    deadline = time.monotonic() + 60
    while STARTED[item] < 1:
        assert time.monotonic() < deadline, "the tool never started"
        await asyncio.sleep(0.02)


async def until_ended(server: Server, thread: str) -> None:
    """Wait (a hang guard of 60 s) until the thread's latest run has ended."""
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient(timeout=30) as http:
        while True:
            view = (await http.get(f"{server.url}/agui/assistant/threads/{thread}")).json()
            if not view.get("run", {}).get("running", True):
                return
            assert time.monotonic() < deadline, "the run never ended"
            await asyncio.sleep(0.05)


async def send(server: Server, body: dict[str, Any], transport: str) -> list[dict[str, Any]]:
    """One whole run: its events."""
    if transport == "ws":
        async with open_socket(server) as socket:
            return await socket.run(body)
    async with (
        httpx.AsyncClient(timeout=60) as http,
        http.stream("POST", f"{server.url}/agui/assistant", json=body) as response,
    ):
        return [
            json.loads(line.removeprefix("data: "))
            async for line in response.aiter_lines()
            if line.startswith("data: ")
        ]


async def leave_while_running(server: Server, body: dict[str, Any], transport: str) -> None:
    """Start the run, and leave (close the socket, drop the SSE connection) once its tool
    runs."""
    item = body["messages"][0]["content"].split('"item":"')[1].split('"')[0]
    if transport == "ws":
        async with open_socket(server) as socket:
            await socket.send(body)
            await until_started(item)
        return
    async with (
        httpx.AsyncClient(timeout=60) as http,
        http.stream("POST", f"{server.url}/agui/assistant", json=body) as response,
    ):
        assert response.status_code == 200
        await until_started(item)


async def cancel_while_running(
    server: Server, body: dict[str, Any], transport: str, item: str
) -> list[dict[str, Any]]:
    """Start the run, cancel it once its tool runs (a ``cancel`` frame on the socket, or
    ``POST …/cancel`` beside the SSE stream); the run's events."""
    if transport == "ws":
        async with open_socket(server) as socket:
            await socket.send(body)
            await until_started(item)
            await socket.send({"type": "cancel", "runId": body["runId"]})
            return await socket.until_terminal()
    stream = asyncio.create_task(send(server, body, "sse"))
    await until_started(item)
    url = f"{server.url}/agui/assistant/threads/{body['threadId']}/runs/{body['runId']}/cancel"
    async with httpx.AsyncClient(timeout=60) as http:
        answer = await http.post(url)
    assert answer.status_code in (200, 202), answer.text
    return await stream


def the_result(events: list[dict[str, Any]]) -> str:
    """The content of the one result of the thread's one ``paced_stock`` call."""
    messages = snapshot(events)
    calls = [
        call
        for message in messages
        for call in message.get("toolCalls", [])
        if call["function"]["name"] == "paced_stock"
    ]
    assert len(calls) == 1, messages
    results = [m for m in messages if m["role"] == "tool" and m["toolCallId"] == calls[0]["id"]]
    assert len(results) == 1, messages
    return results[0]["content"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_retry_tool_cut_off_when_its_client_left_runs_once_more_on_the_next_run(
    server: Server, transport: str
) -> None:
    thread, item = new_id("t"), new_id("left")
    await leave_while_running(server, run_input(thread, [stock(item)]), transport)
    await until_ended(server, thread)  # nobody re-attached: the run stopped, tool cut off
    assert (STARTED[item], EXECUTIONS["paced_stock", item]) == (1, 0)
    reconnected = await send(server, run_input(thread), transport)
    assert reconnected[-1]["type"] == "RUN_FINISHED", reconnected[-1]
    assert (STARTED[item], EXECUTIONS["paced_stock", item]) == (2, 1)
    assert the_result(reconnected) == f"3 of {item} in stock"
    later = await send(server, run_input(thread, [user("thanks")]), transport)
    assert later[-1]["type"] == "RUN_FINISHED", later[-1]
    assert the_result(later) == f"3 of {item} in stock"
    assert (STARTED[item], EXECUTIONS["paced_stock", item]) == (2, 1)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_retry_tool_the_client_cancels_is_reported_and_never_runs_again(
    server: Server, transport: str
) -> None:
    thread, item = new_id("t"), new_id("cancel")
    body = run_input(thread, [stock(item)])
    events = await cancel_while_running(server, body, transport, item)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"] == {"type": "cancelled"}
    assert the_result(events).startswith("Interrupted")
    for follow_up in (run_input(thread), run_input(thread, [user("thanks")])):
        later = await send(server, follow_up, transport)
        assert later[-1]["type"] == "RUN_FINISHED", later[-1]
        assert the_result(later).startswith("Interrupted")
    assert (STARTED[item], EXECUTIONS["paced_stock", item]) == (1, 0)
