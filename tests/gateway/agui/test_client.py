"""The official TypeScript client (``@ag-ui/client`` 1.0.0, in ``tests/agui_client``) as
the judge.

``HttpAgent`` drives the SSE endpoint of a real ``interlock serve`` subprocess: plain chat,
reasoning, a server tool, a frontend tool continued in a second run, an approval via
interrupt and resume. WebSocket traces recorded with the Python ``websockets`` client are
replayed through the same package's ``enforceEvents → transformChunks → verifyEvents``,
among them one from ``interlock serve`` itself (its lean WebSocket server options).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from tests.gateway.agui.harness import (
    CONFIG,
    TOOLS,
    Server,
    Socket,
    binding_for,
    make_gateway,
    new_id,
    open_socket,
    resume_all,
    run_input,
    serve,
    user,
)

ROOT = Path(__file__).resolve().parents[3]
CLIENT_DIR = ROOT / "tests" / "agui_client"
NODE = shutil.which("node")
HAVE_CLIENT = (CLIENT_DIR / "node_modules" / "@ag-ui" / "client" / "package.json").exists()

pytestmark = pytest.mark.skipif(
    NODE is None or not HAVE_CLIENT,
    reason="needs Node 20+ and `npm ci` in tests/agui_client (@ag-ui/client 1.0.0)",
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60  # generous: a loaded 2-core machine starts slowly
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"interlock serve exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("interlock serve did not start listening")


@pytest.fixture(params=["embedded-demo", "responses-upstream"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``(base URL, agent)`` of a running ``interlock serve`` subprocess."""
    port = _free_port()
    command = [sys.executable, "-m", "interlock.gateway.cli", "serve", "--port", str(port)]
    agent = "demo"
    if request.param == "responses-upstream":
        config = tmp_path / "interlock.toml"
        config.write_text(
            CONFIG.format(
                state_dir=tmp_path / "state",
                store=f"sqlite:///{tmp_path / 'interlock.db'}",
                max_body=1 << 20,
                tools=TOOLS,
            )
        )
        command += ["--config", str(config)]
        agent = "assistant"
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, cwd=tmp_path, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        _wait_for(port, process)
        yield f"http://127.0.0.1:{port}", agent
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert process.stderr is not None
        process.stderr.close()


def _node(script: str, *arguments: str, stdin: str | None = None) -> dict[str, Any]:
    assert NODE is not None
    completed = subprocess.run(
        [NODE, str(CLIENT_DIR / script), *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    try:
        return json.loads(completed.stdout)
    except ValueError:
        raise AssertionError(f"{script} printed no verdict: {completed.stderr[-2000:]}") from None


def test_http_agent_drives_every_scenario_without_a_verification_failure(
    served: tuple[str, str],
) -> None:
    base_url, agent = served
    verdict = _node("http_agent.mjs", base_url, agent)
    failures = {s["name"]: s.get("error") for s in verdict["scenarios"] if not s["ok"]}
    assert failures == {}
    names = [scenario["name"] for scenario in verdict["scenarios"]]
    assert names == [
        "plain_chat",
        "reasoning",
        "server_tool",
        "frontend_tool",
        "approval_interrupt",
    ]


def test_a_client_that_misses_every_snapshot_continues_its_threads(
    served: tuple[str, str],
) -> None:
    """Streamed ids are the stored ids: a client dropping ``MESSAGES_SNAPSHOT`` sends back
    only ids the server holds (no ``FORGED_HISTORY``); a thread over the client's 10 MiB
    per-event limit gets a windowed snapshot and goes on (embedded demo: its body limit
    admits the 3 MiB turns)."""
    base_url, agent = served
    large = [] if agent == "demo" else ["--no-large"]
    verdict = _node("missed_snapshot.mjs", base_url, agent, *large)
    failures = {s["name"]: s.get("error") for s in verdict["scenarios"] if not s["ok"]}
    assert failures == {}
    expected = {"chat_reasoning_and_server_tool", "frontend_tool", "approval_interrupt"}
    if not large:
        expected.add("thread_over_the_event_limit")
    assert {scenario["name"] for scenario in verdict["scenarios"]} == expected


def test_a_reloaded_page_re_attaches_with_connect_agent(served: tuple[str, str]) -> None:
    """``HttpAgent`` aborted mid-run; a fresh agent hydrates with ``GET …/threads/{id}`` and
    follows the rest of the run through ``connectAgent()`` (documented ``connect()``)."""
    base_url, agent = served
    if agent == "demo":
        pytest.skip("the embedded demo agent has no tool slow enough to leave during")
    verdict = _node("reconnect.mjs", base_url, agent)
    assert verdict["ok"], verdict.get("error")
    assert "TOOL_CALL_RESULT" in verdict["types"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(binding_for(make_gateway(str(tmp_path_factory.mktemp("agui-client")))))


async def _record(server: Server) -> list[dict[str, Any]]:
    """One trace per socket: several runs each, as the client would receive them."""
    traces: list[dict[str, Any]] = []
    thread = new_id("t")
    async with open_socket(server) as ws:
        await ws.run(run_input(thread, [user("hello")]))
        await ws.run(run_input(thread, [user('call get_weather with {"city":"Oslo"}')]))
        finished = (await ws.run(run_input(thread, [user('call delete_file with {"path":"w"}')])))[
            -1
        ]
        await ws.run(run_input(thread, resume=resume_all(finished, {"approved": True})))
        await ws.send("not json")
        await ws.receive()
        await ws.run(run_input(thread, [user("bye")]), wrapped=True)
        traces.append({"name": "chat-tool-interrupt-resume", "events": ws.frames})
    tools = [{"name": "pick_color", "description": "Ask for a color"}]
    async with open_socket(server) as ws:
        thread = new_id("t")
        first = await ws.run(run_input(thread, [user("call pick_color")], tools=tools))
        (call_id,) = first[-1]["outcome"]["pendingToolCallIds"]
        result = {"id": new_id("tm"), "role": "tool", "toolCallId": call_id, "content": "red"}
        await ws.run(run_input(thread, [result], tools=tools))
        body = run_input(new_id("t"), [user('call slow_task with {"tag":"trace"}')])
        await ws.send(body)
        while (await ws.receive())["type"] != "TOOL_CALL_END":
            pass
        await ws.send({"type": "cancel", "runId": body["runId"]})
        await ws.until_terminal()
        traces.append({"name": "frontend-tool-and-cancel", "events": ws.frames})
    for accepted in (True, False):
        async with open_socket(server, "confirmer") as ws:
            thread = new_id("t")
            first = await ws.run(run_input(thread, [user('call delete_file with {"path":"c"}')]))
            (confirm_id,) = first[-1]["outcome"]["pendingToolCallIds"]
            answer = {
                "id": new_id("tm"),
                "role": "tool",
                "toolCallId": confirm_id,
                "content": json.dumps({"accepted": accepted}),
            }
            await ws.run(run_input(thread, [answer]))
            traces.append({"name": f"confirm-changes-{accepted}", "events": ws.frames})
    return traces


async def test_websocket_traces_pass_verify_events(server: Server) -> None:
    traces = await _record(server)
    assert all(trace["events"] for trace in traces)
    verdict = _node("verify.mjs", stdin=json.dumps({"traces": traces}))
    failures = {trace["name"]: trace.get("error") for trace in verdict["traces"] if not trace["ok"]}
    assert failures == {}
    assert len(verdict["traces"]) == len(traces)


async def test_interlock_serve_websocket_trace_passes_verify_events(
    served: tuple[str, str],
) -> None:
    base_url, agent = served
    url = f"ws{base_url.removeprefix('http')}/agui/{agent}/ws"
    async with connect(url, compression="deflate") as connection:
        # SERVER_OPTIONS: the offered per-message deflate is declined
        assert connection.response.headers.get("Sec-WebSocket-Extensions") is None
        ws = Socket(connection)
        thread = new_id("t")
        await ws.run(run_input(thread, [user("hello")]))
        await ws.run(run_input(thread, [user('call get_weather with {"city":"Rome"}')]))
    trace = {"name": "interlock-serve", "events": ws.frames}
    verdict = _node("verify.mjs", stdin=json.dumps({"traces": [trace]}))
    assert [(t["name"], t["ok"], t.get("error")) for t in verdict["traces"]] == [
        ("interlock-serve", True, None)
    ]
    assert [e["type"] for e in ws.frames].count("TOOL_CALL_RESULT") == 1


def test_the_verifier_rejects_a_broken_trace() -> None:
    broken = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    verdict = _node("verify.mjs", stdin=json.dumps(broken))
    assert verdict["ok"] is False


async def test_refusals_on_a_busy_socket_leave_the_active_run_valid(server: Server) -> None:
    async with open_socket(server) as ws:
        body = run_input(new_id("t"), [user('call slow_task with {"tag":"busy-trace"}')])
        await ws.send(body)
        await ws.send(run_input(new_id("t"), [user("me too")]))
        await ws.send({"type": "cancel", "runId": "not-this-one"})
        while (await ws.receive())["type"] != "TOOL_CALL_END":
            pass
        await ws.send({"type": "cancel", "runId": body["runId"]})
        active = await ws.until_terminal()
        await ws.receive()
        await ws.receive()
        await ws.run(run_input(new_id("t"), [user("next")]))
    # A WebSocket client splits the socket's frames per run: the active run, each refusal
    # (a bare RUN_ERROR), the next run. The official client accepts every one of them.
    end = ws.frames.index(active[-1]) + 1
    segments = [ws.frames[:end], [ws.frames[end]], [ws.frames[end + 1]], ws.frames[end + 2 :]]
    traces = [{"name": f"segment-{i}", "events": events} for i, events in enumerate(segments)]
    assert all(event["type"] != "RUN_ERROR" for event in segments[0])
    assert [segment[0]["code"] for segment in segments[1:3]] == ["RUN_IN_PROGRESS", "UNKNOWN_RUN"]
    verdict = _node("verify.mjs", stdin=json.dumps({"traces": traces}))
    assert [(t["name"], t["ok"], t.get("error")) for t in verdict["traces"]] == [
        (trace["name"], True, None) for trace in traces
    ]
