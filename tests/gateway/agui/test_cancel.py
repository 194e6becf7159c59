"""Cancel a run from anywhere: ``POST …/runs/{runId}/cancel`` and ``cancel`` on a socket
attached to the run, in the run's own process and from another ``interlock serve``
process sharing the store (a SQLite file, a real redis-server). The cancelled tool never
finishes, is recorded ``interrupted`` and never runs again; the thread keeps the turn."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlock.codecs.agui import verify_events
from interlock.gateway.auth import KeyRing
from interlock.gateway.config import ApiKey
from tests.gateway.agui import counted
from tests.gateway.agui.harness import (
    Server,
    binding_for,
    make_gateway,
    new_id,
    of_type,
    open_socket,
    run_input,
    serve,
    snapshot,
    user,
)
from tests.gateway.agui.processes import Process, Shared
from tests.gateway.agui.tools import EXECUTIONS, STARTED

CANCELLED = {"type": "cancelled"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(binding_for(make_gateway(str(tmp_path_factory.mktemp("agui-cancel")))))


def paced(tag: str, seconds: float = 60) -> dict[str, Any]:
    return user(f'call paced_task with {{"tag":"{tag}","seconds":{seconds}}}')


def cancel_url(server: Server | Process, thread: str, run: str, agent: str = "assistant") -> str:
    return f"{server.url}/agui/{agent}/threads/{thread}/runs/{run}/cancel"


async def post_run(
    http: httpx.AsyncClient,
    server: Server | Process,
    body: Any,
    headers: dict[str, str] | None = None,
) -> list[Any]:
    """A whole SSE run: its events."""
    url = f"{server.url}/agui/assistant"
    async with http.stream("POST", url, json=body, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        return [
            json.loads(line.removeprefix("data: "))
            async for line in response.aiter_lines()
            if line.startswith("data: ")
        ]


async def leave_after_call(http: httpx.AsyncClient, server: Server | Process, body: Any) -> int:
    """POST a run, read until its tool call is issued, drop the connection; the last id."""
    last_id = 0
    async with http.stream("POST", f"{server.url}/agui/assistant", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                last_id = int(line.removeprefix("id: "))
            if line.startswith("data: ") and '"TOOL_CALL_END"' in line:
                return last_id
    raise AssertionError("the run ended before its tool call")


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


def interrupted_result(events: list[dict[str, Any]]) -> str:
    """The content of the (one) tool result in the last snapshot."""
    (result,) = [message for message in snapshot(events) if message["role"] == "tool"]
    return result["content"]


# One process ------------------------------------------------------------------------------


async def test_an_sse_client_cancels_its_run_over_http(server: Server) -> None:
    thread, tag = new_id("t"), new_id("sse")
    body = run_input(thread, [paced(tag)])
    async with httpx.AsyncClient(timeout=30) as http:
        stream = asyncio.create_task(post_run(http, server, body))
        await until(lambda: STARTED[tag] == 1, "the tool never started")
        answer = await http.post(cancel_url(server, thread, body["runId"]))
        events = await stream
        again = await http.post(cancel_url(server, thread, body["runId"]))
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "threadId": thread,
        "runId": body["runId"],
        "status": "cancelled",
        "event": events[-1],
    }
    verify_events(events, thread_id=thread, run_id=body["runId"])
    assert events[-1]["outcome"] == CANCELLED
    assert "Interrupted" in interrupted_result(events)
    assert EXECUTIONS["paced_task", tag] == 0
    assert again.status_code == 409
    error = again.json()["error"]
    assert error["code"] == "run_finished" and "outcome cancelled" in error["message"]


async def test_cancel_refusals(server: Server) -> None:
    thread = new_id("t")
    finished = run_input(thread, [user("hello")])
    async with httpx.AsyncClient(timeout=30) as http:
        events = await post_run(http, server, finished)
        done = await http.post(cancel_url(server, thread, finished["runId"]))
        unknown = await http.post(cancel_url(server, thread, new_id("never")))
        other_thread = await http.post(cancel_url(server, new_id("t"), finished["runId"]))
        no_agent = await http.post(cancel_url(server, thread, finished["runId"], "nobody"))
    assert events[-1]["outcome"] == {"type": "success"}
    assert done.status_code == 409
    assert done.json()["error"]["code"] == "run_finished"
    assert "outcome success" in done.json()["error"]["message"]
    for refused in (unknown, other_thread):
        assert refused.status_code == 404
        assert refused.json()["error"]["code"] == "unknown_run"
    assert no_agent.status_code == 404 and no_agent.json()["error"]["code"] == "unknown_agent"


async def test_a_socket_attached_to_a_run_cancels_it(server: Server) -> None:
    thread, tag = new_id("t"), new_id("ws")
    body = run_input(thread, [paced(tag)])
    async with open_socket(server) as owner, open_socket(server) as follower:
        await owner.send(body)
        await until(lambda: STARTED[tag] == 1, "the tool never started")
        await follower.send({"type": "attach", "threadId": thread, "runId": body["runId"]})
        await follower.send({"type": "cancel", "runId": "another-run"})
        await follower.send({"type": "cancel", "runId": body["runId"]})
        followed = await follower.until_terminal()
        refusal = await follower.receive()  # held back until the followed run ended
        own = await owner.until_terminal()
        await follower.send({"type": "cancel", "runId": body["runId"]})
        idle = await follower.receive()
    verify_events(own, thread_id=thread, run_id=body["runId"])
    assert own[-1]["outcome"] == CANCELLED and followed == own
    assert refusal["type"] == "RUN_ERROR" and refusal["code"] == "UNKNOWN_RUN"
    assert idle["code"] == "NO_ACTIVE_RUN"
    assert EXECUTIONS["paced_task", tag] == 0


async def test_only_the_runs_tenant_can_cancel_it(tmp_path: Path) -> None:
    binding = binding_for(make_gateway(str(tmp_path)))
    binding.keys = KeyRing([ApiKey(key="key-a", tenant="a"), ApiKey(key="key-b", tenant="b")])
    thread, tag = new_id("t"), new_id("tenant")
    body = run_input(thread, [paced(tag)])
    for server in serve(binding):
        url = cancel_url(server, thread, body["runId"])
        async with httpx.AsyncClient(timeout=30) as http:
            owner = {"authorization": "Bearer key-a"}
            stream = asyncio.create_task(post_run(http, server, body, headers=owner))
            await until(lambda: STARTED[tag] == 1, "the tool never started")
            stranger = await http.post(url, headers={"authorization": "Bearer key-b"})
            anonymous = await http.post(url)
            answer = await http.post(url, headers=owner)
            events = await stream
        assert stranger.status_code == 404 and stranger.json()["error"]["code"] == "unknown_run"
        assert anonymous.status_code == 401
        assert anonymous.json()["error"]["code"] == "invalid_api_key"
        assert answer.status_code == 200 and events[-1]["outcome"] == CANCELLED


async def test_a_run_not_ended_within_the_wait_is_cancelling(tmp_path: Path) -> None:
    binding = binding_for(make_gateway(str(tmp_path)))
    binding.cancel_wait_seconds = 0.0
    thread, tag = new_id("t"), new_id("pending")
    body = run_input(thread, [paced(tag)])
    for server in serve(binding):
        async with httpx.AsyncClient(timeout=30) as http:
            stream = asyncio.create_task(post_run(http, server, body))
            await until(lambda: STARTED[tag] == 1, "the tool never started")
            answer = await http.post(cancel_url(server, thread, body["runId"]))
            events = await stream
        assert answer.status_code == 202
        assert answer.json() == {"threadId": thread, "runId": body["runId"], "status": "cancelling"}
        assert events[-1]["outcome"] == CANCELLED


# Several processes on one store ------------------------------------------------------------


async def test_a_run_is_cancelled_from_another_process(shared: Shared) -> None:
    """The owner's SSE client, the cancelling client on another process and the thread
    all agree; the next turn (on the other process) runs nothing again."""
    cluster, (owner, other) = shared.cluster, shared.processes[:2]
    thread, tag = new_id("t"), new_id("remote")
    body = run_input(thread, [paced(tag)])
    async with httpx.AsyncClient(timeout=60) as http:
        stream = asyncio.create_task(post_run(http, owner, body))
        await counted.until_count(cluster.counts, "paced_task", tag, "started")
        answer = await http.post(cancel_url(other, thread, body["runId"]))
        events = await stream
        following = await post_run(http, other, run_input(thread, [user("and now?")]))
        late = await http.post(cancel_url(owner, thread, body["runId"]))
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "cancelled" and answer.json()["event"] == events[-1]
    verify_events(events, thread_id=thread, run_id=body["runId"])
    assert events[-1]["outcome"] == CANCELLED
    assert "Interrupted" in interrupted_result(events)
    assert following[-1]["outcome"] == {"type": "success"}
    texts = [m["content"] for m in snapshot(following) if m["role"] == "user"]
    assert texts[0].startswith("call paced_task") and texts[-1] == "and now?"
    assert of_type(following, "TOOL_CALL_START") == []
    assert counted.executions(cluster.counts, "paced_task", tag, "started") == 1
    assert counted.executions(cluster.counts, "paced_task", tag) == 0
    assert late.status_code == 409 and late.json()["error"]["code"] == "run_finished"


async def test_clients_re_attached_on_another_process_cancel_the_run(shared: Shared) -> None:
    """A WebSocket attached on another process sends ``cancel``; an SSE client re-attached
    there with ``Last-Event-ID`` posts the cancel to that process."""
    cluster, (owner, other) = shared.cluster, shared.processes[:2]
    ws_thread, ws_tag = new_id("t"), new_id("ws-remote")
    ws_body = run_input(ws_thread, [paced(ws_tag)])
    async with open_socket(owner) as socket, open_socket(other) as attached:
        await socket.send(ws_body)
        await counted.until_count(cluster.counts, "paced_task", ws_tag, "started")
        await attached.send({"type": "attach", "threadId": ws_thread, "runId": ws_body["runId"]})
        await attached.send({"type": "cancel", "runId": ws_body["runId"]})
        followed = await attached.until_terminal()
        own = await socket.until_terminal()
    assert own[-1]["outcome"] == CANCELLED and followed == own

    sse_thread, sse_tag = new_id("t"), new_id("sse-remote")
    sse_body = run_input(sse_thread, [paced(sse_tag)])
    events_url = f"{other.url}/agui/assistant/threads/{sse_thread}/runs/{sse_body['runId']}/events"
    async with httpx.AsyncClient(timeout=60) as http:
        last_id = await leave_after_call(http, owner, sse_body)
        await counted.until_count(cluster.counts, "paced_task", sse_tag, "started")
        headers = {"Last-Event-ID": str(last_id)}
        async with http.stream("GET", events_url, headers=headers) as response:
            assert response.status_code == 200  # re-attached: now cancel from here
            answer = await http.post(cancel_url(other, sse_thread, sse_body["runId"]))
            rest = [
                json.loads(line.removeprefix("data: "))
                async for line in response.aiter_lines()
                if line.startswith("data: ")
            ]
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    assert rest[-1]["outcome"] == CANCELLED and answer.json()["event"] == rest[-1]
    for tag in (ws_tag, sse_tag):
        assert counted.executions(cluster.counts, "paced_task", tag, "started") == 1
        assert counted.executions(cluster.counts, "paced_task", tag) == 0
