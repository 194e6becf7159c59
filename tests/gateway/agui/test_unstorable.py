"""Input no store can hold is refused before anything runs, over SSE and WebSocket.

A lone UTF-16 surrogate (what ``JSON.stringify`` writes for an emoji cut in half) or a
non-JSON number anywhere in ``RunAgentInput`` gets ``RUN_ERROR`` ``UNSTORABLE_INPUT``
naming the field; the tool the input asks for never runs, and the thread stays usable.
The gateway stores on a real SQLite file, where such a value would fail the save.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway.agui.harness import (
    Server,
    binding_for,
    make_gateway,
    new_id,
    of_type,
    open_socket,
    run_input,
    serve,
    sse_events,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory: Path = tmp_path_factory.mktemp("agui-unstorable")
    gateway = make_gateway(str(directory), store=f"sqlite:///{directory / 'state.db'}")
    yield from serve(binding_for(gateway))


def weather(city: str, message_id: str | None = None) -> dict[str, Any]:
    return user(f'call get_weather with {{"city":"{city}"}}', message_id)


def bodies(thread: str, city: str) -> list[tuple[str, dict[str, Any]]]:
    """(field named in the error, input) for each kind of unstorable value."""
    ask = weather(city)
    return [
        ("$.state.draft", run_input(thread, [ask], state={"draft": "\ud83d"})),
        ("$.messages[0].content", run_input(thread, [weather(city + "\udc00")])),
        ("$.state.score", run_input(thread, [ask], state={"score": float("nan")})),
        ("$.forwardedProps.<key>", run_input(thread, [ask], forwardedProps={"\ud800": 1})),
    ]


def post(server: Server, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST ``body`` as JSON text with ``\\u`` escapes (how a browser sends a lone surrogate)."""
    with httpx.Client(timeout=20) as client:
        response = client.post(
            f"{server.url}/agui/assistant",
            content=json.dumps(body),
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 200
    return sse_events(response.text)


def assert_refused(events: list[dict[str, Any]], field: str) -> None:
    assert [event["type"] for event in events] == ["RUN_ERROR"], events
    assert events[0]["code"] == "UNSTORABLE_INPUT"
    assert events[0]["message"].startswith(field + ":"), events[0]


def test_sse_refuses_unstorable_input_before_the_tool_runs(server: Server) -> None:
    thread, city = new_id("t"), new_id("sse")
    for field, body in bodies(thread, city):
        for _ in range(3):  # resending the same input never runs anything either
            assert_refused(post(server, body), field)
    assert EXECUTIONS["get_weather", city] == 0
    events = post(server, run_input(thread, [weather(city)], state={"draft": "fine"}))
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    assert EXECUTIONS["get_weather", city] == 1
    assert of_type(events, "STATE_SNAPSHOT")[-1]["snapshot"] == {"draft": "fine"}


async def test_websocket_refuses_unstorable_input_before_the_tool_runs(server: Server) -> None:
    thread, city = new_id("t"), new_id("ws")
    async with open_socket(server) as socket:
        for field, body in bodies(thread, city):
            await socket.send(json.dumps(body))
            assert_refused([await socket.receive()], field)
        assert EXECUTIONS["get_weather", city] == 0
        events = await socket.run(run_input(thread, [weather(city)]))
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    assert EXECUTIONS["get_weather", city] == 1
