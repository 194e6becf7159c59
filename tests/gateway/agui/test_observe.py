"""AG-UI runs in the access log and in ``/metrics``: runs by outcome, events, errors,
approvals and open connections, over real SSE and WebSocket connections."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator

import httpx
import pytest
from websockets.asyncio.client import connect

from interlock.gateway.access_log import LOGGER
from interlock.gateway.agui import SERVER_OPTIONS
from interlock.gateway.app import build_gateway, create_app
from interlock.gateway.config import parse_config
from tests.gateway.agui.harness import (
    CONFIG,
    TOOLS,
    Server,
    Socket,
    new_id,
    resume_all,
    run_input,
    sse_events,
    user,
)


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, object]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(record.getMessage()))


@pytest.fixture
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, _Lines]]:
    text = CONFIG.format(
        state_dir=tmp_path_factory.mktemp("observe"), store="memory://", max_body=65536, tools=TOOLS
    ).replace("[server]\n", "[server]\naccess_log = true\n", 1)
    server = Server(create_app(build_gateway(parse_config(text, {}))), options=dict(SERVER_OPTIONS))
    lines = _Lines()
    LOGGER.addHandler(lines)
    server.start()
    try:
        yield server, lines
    finally:
        server.stop()
        LOGGER.removeHandler(lines)


def _sample(metrics: str, name: str, **labels: str) -> float:
    inner = ",".join(f'{key}="{value}"' for key, value in labels.items())
    match = re.search(rf"^{name}\{{{re.escape(inner)}\}} (\S+)$", metrics, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


async def test_runs_are_logged_and_counted(served: tuple[Server, _Lines]) -> None:
    server, log = served
    thread = new_id("t")
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
        first = await http.post(
            "/agui/assistant",
            json=run_input(
                thread, [user('call delete_file with {"path":"observed"}')], run_id="r1"
            ),
        )
        finished = sse_events(first.text)[-1]
        resumed = await http.post(
            "/agui/assistant",
            json=run_input(thread, run_id="r2", resume=resume_all(finished, {"approved": True})),
        )
        bad = await http.post("/agui/assistant", json={"threadId": "t"})
        async with connect(f"{server.ws_url}/agui/assistant/ws") as connection:
            socket = Socket(connection)
            ws_events = await socket.run(run_input(new_id("t"), [user("hi")], run_id="w1"))
            while_open = (await http.get("/metrics")).text
        after = (await http.get("/metrics")).text
    assert finished["outcome"]["type"] == "interrupt" and resumed.status_code == 200
    assert bad.status_code == 400
    sse = {"agent": "assistant", "transport": "sse"}
    assert _sample(after, "interlock_agui_runs_total", **sse, outcome="interrupt") == 1
    assert _sample(after, "interlock_agui_runs_total", **sse, outcome="success") == 1
    assert _sample(after, "interlock_agui_runs_total", **sse, outcome="refused") == 1
    ws = {"agent": "assistant", "transport": "websocket"}
    assert _sample(after, "interlock_agui_runs_total", **ws, outcome="success") == 1
    assert _sample(after, "interlock_agui_events_total", **ws) == len(ws_events)
    assert _sample(after, "interlock_agui_events_total", **sse) == len(
        sse_events(first.text)
    ) + len(sse_events(resumed.text))
    assert (
        _sample(after, "interlock_agui_errors_total", agent="assistant", code="invalid_input") == 1
    )
    assert (
        _sample(after, "interlock_agui_approvals_total", agent="assistant", stage="requested") == 1
    )
    assert (
        _sample(after, "interlock_agui_approvals_total", agent="assistant", stage="resolved") == 1
    )
    assert _sample(while_open, "interlock_agui_connections", transport="websocket") == 1
    assert _sample(after, "interlock_agui_connections", transport="websocket") == 0
    assert _sample(after, "interlock_agui_connections", transport="sse") == 0
    runs = [line for line in log.lines if line.get("run_id")]
    assert [(line["method"], line["run_id"], line["outcome"]) for line in runs] == [
        ("POST", "r1", "interrupt"),
        ("POST", "r2", "success"),
        ("POST", "-", "refused"),
        ("WS", "w1", "success"),
    ]
    assert all(line["path"] in ("/agui/assistant", "/agui/assistant/ws") for line in runs)
    assert runs[2]["status"] == 400 and runs[2]["error"] == "invalid_input"
    assert runs[3]["events"] == len(ws_events) and runs[0]["model"] == "assistant"


async def test_confirm_changes_approvals_are_counted_like_interrupts(
    served: tuple[Server, _Lines],
) -> None:
    """A ``confirm_changes`` call is an approval requested; its answer one resolved; a
    repeated answer (a replay) and a refused one count nothing."""
    server, _ = served
    thread = new_id("t")
    labels = {"agent": "confirmer"}
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
        before = (await http.get("/metrics")).text
        asked = sse_events(
            (
                await http.post(
                    "/agui/confirmer",
                    json=run_input(thread, [user('call delete_file with {"path":"counted"}')]),
                )
            ).text
        )
        (confirm_id,) = asked[-1]["outcome"]["pendingToolCallIds"]
        requested = (await http.get("/metrics")).text
        answer = {
            "id": new_id("tm"),
            "role": "tool",
            "toolCallId": confirm_id,
            "content": json.dumps({"accepted": True}),
        }
        async with connect(f"{server.ws_url}/agui/confirmer/ws") as connection:
            socket = Socket(connection)
            answered = await socket.run(run_input(thread, [answer]))
            repeated = await socket.run(run_input(thread, [answer]))
            tampered = {**answer, "id": new_id("tm"), "content": '{"accepted": "yes"}'}
            refused = await socket.run(run_input(new_id("t"), [tampered]))
        after = (await http.get("/metrics")).text
    assert answered[-1]["type"] == "RUN_FINISHED" and repeated[-1]["type"] == "RUN_FINISHED"
    assert refused[-1]["type"] == "RUN_ERROR"
    counted = [
        (
            _sample(metrics, "interlock_agui_approvals_total", **labels, stage="requested"),
            _sample(metrics, "interlock_agui_approvals_total", **labels, stage="resolved"),
        )
        for metrics in (before, requested, after)
    ]
    assert counted == [(0, 0), (1, 0), (1, 1)]


async def test_a_repeated_resume_is_not_counted_again(served: tuple[Server, _Lines]) -> None:
    server, _ = served
    thread = new_id("t")
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as http:
        asked = await http.post(
            "/agui/assistant",
            json=run_input(thread, [user('call delete_file with {"path":"twice"}')]),
        )
        resume = resume_all(sse_events(asked.text)[-1], {"approved": True})
        for _ in range(2):
            resumed = await http.post("/agui/assistant", json=run_input(thread, resume=resume))
            assert sse_events(resumed.text)[-1]["type"] == "RUN_FINISHED"
        after = (await http.get("/metrics")).text
    stage = {"agent": "assistant", "stage": "resolved"}
    assert _sample(after, "interlock_agui_approvals_total", **stage) == 1
