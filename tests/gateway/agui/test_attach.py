"""Hydrate and re-attach over real HTTP and WebSockets: a page that reloads gets its thread,
its open approval and the run it left (which went on without it), from this process or
another one sharing the store."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from interlock.codecs.agui import verify_events
from tests.gateway.agui.harness import (
    Server,
    binding_for,
    make_gateway,
    new_id,
    open_socket,
    run_input,
    serve,
    snapshot,
    sse_events,
    sse_run,
    user,
)
from tests.gateway.agui.tools import EXECUTIONS, STARTED


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(binding_for(make_gateway(str(tmp_path_factory.mktemp("agui-attach")))))


def paced(tag: str, seconds: float = 1.5) -> dict[str, Any]:
    return user(f'call paced_task with {{"tag":"{tag}","seconds":{seconds}}}')


def sse_blocks(text: str) -> list[tuple[int, dict[str, Any]]]:
    """``(id, event)`` of every SSE block carrying one."""
    out: list[tuple[int, dict[str, Any]]] = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line)
        if "data" in lines and "id" in lines:
            out.append((int(lines["id"]), json.loads(lines["data"])))
    return out


def leave_mid_run(server: Server, body: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """POST a run, read until its tool call is issued, then drop the connection."""
    seen: list[tuple[int, dict[str, Any]]] = []
    with (
        httpx.Client(timeout=20) as client,
        client.stream("POST", f"{server.url}/agui/assistant", json=body) as response,
    ):
        block: list[str] = []
        for line in response.iter_lines():
            if line:
                block.append(line)
                continue
            seen += sse_blocks("\n".join(block))
            block = []
            if seen and seen[-1][1]["type"] == "TOOL_CALL_END":
                break
    return seen


def thread_view(server: Server, thread: str, agent: str = "assistant") -> httpx.Response:
    return httpx.get(f"{server.url}/agui/{agent}/threads/{thread}", timeout=20)


def events_url(server: Server, thread: str, run: str) -> str:
    return f"{server.url}/agui/assistant/threads/{thread}/runs/{run}/events"


async def test_a_reloaded_page_gets_the_thread_and_its_open_approval(server: Server) -> None:
    thread, path = new_id("t"), new_id("hydrate")
    async with open_socket(server) as socket:
        body = run_input(thread, [user(f'call delete_file with {{"path":"{path}"}}')])
        events = await socket.run(body)
    finished = events[-1]
    view = thread_view(server, thread)
    assert view.status_code == 200
    document = view.json()
    assert document["threadId"] == thread
    assert document["events"][-1] == {"type": "MESSAGES_SNAPSHOT", "messages": snapshot(events)}
    assert document["interrupts"] == finished["outcome"]["interrupts"]
    assert document["pendingToolCallIds"] == []
    assert document["run"] == {
        "runId": body["runId"],
        "running": False,
        "lastEventId": len(events),
    }
    resume = [
        {"interruptId": entry["id"], "status": "resolved", "payload": {"approved": True}}
        for entry in document["interrupts"]
    ]
    _, text = sse_run(server, run_input(thread, resume=resume))
    assert sse_events(text)[-1]["outcome"] == {"type": "success"}
    assert EXECUTIONS["delete_file", path] == 1
    assert thread_view(server, thread).json()["interrupts"] == []


async def test_hydrating_confirm_changes_lists_the_waiting_call(server: Server) -> None:
    thread = new_id("t")
    async with open_socket(server, "confirmer") as socket:
        events = await socket.run(run_input(thread, [user('call delete_file with {"path":"h"}')]))
    pending = events[-1]["outcome"]["pendingToolCallIds"]
    document = thread_view(server, thread, "confirmer").json()
    assert document["pendingToolCallIds"] == pending and document["interrupts"] == []


def test_hydrating_what_does_not_exist_is_a_404(server: Server) -> None:
    response = thread_view(server, new_id("never"))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_thread"
    response = httpx.get(f"{server.url}/agui/nobody/threads/t", timeout=20)
    assert response.json()["error"]["code"] == "unknown_agent"
    response = httpx.get(events_url(server, "t", new_id("run")), timeout=20)
    assert (response.status_code, response.json()["error"]["code"]) == (404, "unknown_run")


def test_an_sse_client_that_left_re_attaches_with_last_event_id(server: Server) -> None:
    thread, tag = new_id("t"), new_id("sse")
    body = run_input(thread, [paced(tag)])
    first = leave_mid_run(server, body)
    assert [n for n, _ in first] == list(range(1, len(first) + 1))
    assert thread_view(server, thread).json()["run"]["running"] is True
    last_id = first[-1][0]
    with httpx.Client(timeout=20) as client:
        response = client.get(
            events_url(server, thread, body["runId"]), headers={"Last-Event-ID": str(last_id)}
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    rest = sse_blocks(response.text)
    assert [n for n, _ in rest] == list(range(last_id + 1, last_id + 1 + len(rest)))
    trace = [event for _, event in first + rest]
    verify_events(trace, thread_id=thread, run_id=body["runId"])
    assert any(event["type"] == "TOOL_CALL_RESULT" for event in trace)
    assert trace[-1]["outcome"] == {"type": "success"}
    assert EXECUTIONS["paced_task", tag] == 1 and STARTED[tag] == 1
    from_start = httpx.get(events_url(server, thread, body["runId"]), timeout=20)
    assert [event for _, event in sse_blocks(from_start.text)] == trace
    again = httpx.get(events_url(server, thread, body["runId"]) + f"?after={len(trace)}")
    assert sse_blocks(again.text) == []


def test_a_bad_last_event_id_is_refused(server: Server) -> None:
    thread = new_id("t")
    body = run_input(thread, [user("hello")])
    sse_run(server, body)
    for bad in ("x", "-1", "1.5"):
        response = httpx.get(
            events_url(server, thread, body["runId"]), headers={"Last-Event-ID": bad}, timeout=20
        )
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_last_event_id"


async def test_a_websocket_client_re_attaches_on_a_new_socket(server: Server) -> None:
    thread, tag = new_id("t"), new_id("ws")
    body = run_input(thread, [paced(tag)])
    async with open_socket(server) as socket:
        await socket.send(body)
        while (await socket.receive())["type"] != "TOOL_CALL_END":
            pass
        first = list(socket.frames)
    async with open_socket(server) as socket:
        attach = {"type": "attach", "threadId": thread, "runId": body["runId"]}
        await socket.send({**attach, "lastEventId": len(first)})
        rest = await socket.until_terminal()
        trace = first + rest
        verify_events(trace, thread_id=thread, run_id=body["runId"])
        assert trace[-1]["outcome"] == {"type": "success"}
        assert EXECUTIONS["paced_task", tag] == 1
        # the socket is idle again: it runs, and attaching from 0 replays the whole run
        await socket.send(attach)
        assert await socket.until_terminal() == trace
        events = await socket.run(run_input(thread, [user("thanks")]))
        assert events[-1]["type"] == "RUN_FINISHED"


async def test_attach_refusals(server: Server) -> None:
    async with open_socket(server) as socket:
        await socket.send({"type": "attach", "threadId": "t", "runId": new_id("nope")})
        assert (await socket.receive())["code"] == "UNKNOWN_RUN"
        for bad in ({"runId": "r"}, {"threadId": "t", "runId": "r", "lastEventId": -1}):
            await socket.send({"type": "attach", **bad})
            assert (await socket.receive())["code"] == "INVALID_FRAME"
        events = await socket.run(run_input(new_id("t"), [user("still usable")]))
        assert events[-1]["type"] == "RUN_FINISHED"


def test_a_run_nobody_re_attaches_to_is_cancelled(tmp_path: Path) -> None:
    binding = binding_for(make_gateway(str(tmp_path)))
    binding.context.reattach_seconds = 0.3
    for server in serve(binding):
        thread, tag = new_id("t"), new_id("gone")
        body = run_input(thread, [user(f'call slow_task with {{"tag":"{tag}"}}')])
        leave_mid_run(server, body)
        deadline = time.monotonic() + 10
        while thread_view(server, thread).json().get("run", {}).get("running", True):
            assert time.monotonic() < deadline, "the detached run was never cancelled"
            time.sleep(0.05)
        events = [
            e for _, e in sse_blocks(httpx.get(events_url(server, thread, body["runId"])).text)
        ]
        assert events[-1]["outcome"] == {"type": "cancelled"}
        assert STARTED[tag] == 1 and EXECUTIONS["slow_task", tag] == 0


def test_a_run_started_on_one_replica_is_followed_on_another(tmp_path: Path) -> None:
    """Two gateways over one SQLite store: the client leaves A and re-attaches on B."""
    store = f"sqlite:///{tmp_path / 'shared.db'}"
    first_gateway = make_gateway(str(tmp_path), store=store)  # one state_dir: one seal key
    second_gateway = make_gateway(str(tmp_path), store=store)
    for replica_a in serve(binding_for(first_gateway)):
        for replica_b in serve(binding_for(second_gateway)):
            thread, tag = new_id("t"), new_id("replica")
            body = run_input(thread, [paced(tag)])
            first = leave_mid_run(replica_a, body)
            url = events_url(replica_b, thread, body["runId"])
            rest = sse_blocks(httpx.get(url, params={"after": len(first)}, timeout=20).text)
            trace = [event for _, event in first + rest]
            verify_events(trace, thread_id=thread, run_id=body["runId"])
            assert trace[-1]["outcome"] == {"type": "success"}
            assert EXECUTIONS["paced_task", tag] == 1
            document = thread_view(replica_b, thread).json()
            assert document["events"][-1]["messages"] == snapshot(trace)
