"""The soak: three real replicas on one redis-server behind a real HAProxy, under traffic,
while one replica is drained (SIGTERM, then restarted) and another is killed -9 (then
restarted).

Traffic, for :data:`TRAFFIC_SECONDS`: proxied Chat Completions streams through the official
OpenAI SDK, and AG-UI tasks over SSE and over WebSockets — ask for ``ask`` (needs approval),
approve it, get the answer — whose tool appends one line per execution to a file shared by
every replica. Clients behave as a careful frontend would: a dropped proxied stream is sent
again; a dropped AG-UI run is re-attached (SSE: ``GET …/runs/{runId}/events`` with
``Last-Event-ID``; WebSocket: a new socket through the load balancer and ``{"type":
"attach"}`` with the count of frames seen) or, if that fails, the thread is hydrated
(``GET …/threads/{threadId}``) and the task goes on from what the server saved (answer the
open approval, or send the input again). A socket closed by a draining replica (1012) is
opened again through the load balancer.

Counted: executions per tool call (double = a key executed more than once), lost tasks (never
completed), failed requests (given up after the retries), dropped and resumed streams. The
figures are written to ``soak.json`` in the test's directory and printed; docs/deployment.md
quotes a run. Marked ``slow`` (``-m "not slow"`` leaves it out); CI runs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import ClientConnection, connect

from interlock.gateway.agui._recover import INTERRUPTED_TEXT, NOT_STARTED_TEXT
from tests.deployment.agui import new_id, run_input
from tests.deployment.cluster import SEAL_ENV, LoadBalancer, haproxy_binary
from tests.deployment.harness import Replica, config_text, slow_upstream
from tests.deployment.tools import executions

pytestmark = pytest.mark.slow

TRAFFIC_SECONDS = 24.0
STREAM_WORKERS = 3
AGUI_WORKERS = 3
WEBSOCKET_WORKERS = 2
ATTEMPTS = 10
SETTLE_SECONDS = 60.0
REATTACH_SECONDS = 20.0


@dataclass
class Figures:
    """What the soak counted (one instance shared by every client thread, under ``lock``)."""

    streams: int = 0
    streams_dropped: int = 0
    streams_resumed: int = 0
    streams_failed: int = 0
    tasks: int = 0
    tasks_completed: int = 0
    tasks_lost: int = 0
    runs: int = 0
    runs_dropped: int = 0
    runs_reattached: int = 0
    runs_hydrated: int = 0
    tasks_websocket: int = 0
    tasks_websocket_completed: int = 0
    runs_websocket: int = 0
    sockets_reopened: int = 0
    errors: Counter[str] = field(default_factory=Counter[str])
    executions: int = 0
    double_executions: int = 0
    tasks_interrupted: int = 0
    """Completed tasks whose approved tool a killed replica had started (or was about to):
    reported to the model and the client as ``interrupted``, never run again."""
    unexecuted_unreported: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what] += 1


def stream_worker(url: str, until: float, figures: Figures, worker: int) -> None:
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="-", max_retries=0, timeout=60)
    number = 0
    with client:
        while time.monotonic() < until:
            number += 1
            text = f"stream {worker}-{number}"
            figures.add(streams=1)
            for attempt in range(ATTEMPTS):
                try:
                    chunks = list(
                        client.chat.completions.create(
                            model="chat", messages=[{"role": "user", "content": text}], stream=True
                        )
                    )
                    got = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                    assert got == f"You said: {text}", got
                except (openai.APIError, httpx.HTTPError) as error:
                    code = getattr(error, "code", None) or type(error).__name__
                    figures.error(f"stream: {code}")
                    if attempt == 0:
                        figures.add(streams_dropped=1)
                    time.sleep(0.3)
                    continue
                if attempt:
                    figures.add(streams_resumed=1)
                break
            else:
                figures.add(streams_failed=1)


class AguiClient:
    """One task at a time over SSE through the load balancer, recovering like a frontend."""

    def __init__(self, url: str, figures: Figures) -> None:
        self.base = f"{url}/agui/assistant"
        self.figures = figures
        self.http = httpx.Client(timeout=httpx.Timeout(30, read=20))

    def task(self, key: str, thread: str) -> bool:
        ask = run_input(thread, f'call ask with {{"key": "{key}", "seconds": 1.5}}')
        body = ask
        for _ in range(ATTEMPTS):
            terminal = self.run(body)
            if terminal is not None and terminal["type"] == "RUN_FINISHED":
                interrupts = (terminal.get("outcome") or {}).get("interrupts")
                if not interrupts:
                    return True
                body = self.approve(thread, interrupts)
                continue
            self.figures.add(runs_dropped=1)
            if terminal is not None:
                self.figures.error(f"agui: {terminal.get('code')}")
            time.sleep(0.3)
            next_body = self.from_saved(thread, key, ask)
            if next_body is True:
                return True
            body = next_body or {**body, "runId": new_id("run")}
        return False

    def approve(self, thread: str, interrupts: list[dict[str, Any]]) -> dict[str, Any]:
        resume = [
            {"interruptId": item["id"], "status": "resolved", "payload": {"approved": True}}
            for item in interrupts
        ]
        return run_input(thread, resume=resume)

    def from_saved(
        self, thread: str, key: str, ask: dict[str, Any]
    ) -> dict[str, Any] | bool | None:
        """Hydrate the thread: ``True`` when the task is done, else the input to send next."""
        self.figures.add(runs_hydrated=1)
        try:
            response = self.http.get(f"{self.base}/threads/{thread}")
        except httpx.HTTPError as error:
            self.figures.error(f"hydrate: {type(error).__name__}")
            return None
        if response.status_code == 404:
            return {**ask, "runId": new_id("run")}
        if response.status_code != 200:
            self.figures.error(f"hydrate: {response.status_code}")
            return None
        view = response.json()
        if view.get("interrupts"):
            return self.approve(thread, view["interrupts"])
        messages = view["events"][-1]["messages"]
        if any(f"asked {key}" in json.dumps(message) for message in messages[-1:]):
            return True
        if not any(message.get("role") == "user" for message in messages):
            return {**ask, "runId": new_id("run")}
        return None

    def run(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """One run; on a dropped connection, re-attach once. The terminal event, or ``None``."""
        self.figures.add(runs=1)
        last = 0
        try:
            with self.http.stream("POST", self.base, json=body) as response:
                if response.status_code != 200:
                    self.figures.error(f"agui: HTTP {response.status_code}")
                    return None
                for event_id, event in events(response):
                    last = event_id or last
                    if event.get("type") in ("RUN_FINISHED", "RUN_ERROR"):
                        return event
        except httpx.HTTPError as error:
            self.figures.error(f"agui: {type(error).__name__}")
        return self.reattach(body, last)

    def reattach(self, body: dict[str, Any], last: int) -> dict[str, Any] | None:
        url = f"{self.base}/threads/{body['threadId']}/runs/{body['runId']}/events"
        try:
            headers = {"last-event-id": str(last)}
            with self.http.stream("GET", url, headers=headers) as response:
                if response.status_code != 200:
                    return None
                for _, event in events(response, time.monotonic() + REATTACH_SECONDS):
                    if event.get("type") in ("RUN_FINISHED", "RUN_ERROR"):
                        if event["type"] == "RUN_FINISHED":
                            self.figures.add(runs_reattached=1)
                        return event
        except httpx.HTTPError as error:
            self.figures.error(f"reattach: {type(error).__name__}")
        return None


class WebSocketAguiClient(AguiClient):
    """The same tasks over one WebSocket through the load balancer: runs one after another
    on the socket; a dropped socket is opened again and the run re-attached."""

    def __init__(self, url: str, figures: Figures) -> None:
        super().__init__(url, figures)
        self.ws_url = url.replace("http://", "ws://", 1) + "/agui/assistant/ws"
        self.socket: ClientConnection | None = None
        self.scope = contextlib.ExitStack()

    def connected(self) -> ClientConnection:
        if self.socket is None:
            opened = connect(self.ws_url, open_timeout=10, close_timeout=2)
            self.socket = self.scope.enter_context(opened)
        return self.socket

    def drop(self, *, reopen: bool = True) -> None:
        if self.socket is not None:
            self.scope.close()
            self.socket = None
            if reopen:
                self.figures.add(sockets_reopened=1)

    def run(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """One run on the socket; the terminal event, or ``None`` (dropped, not recovered)."""
        self.figures.add(runs=1, runs_websocket=1)
        try:
            socket = self.send(json.dumps(body))
        except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError) as error:
            self.figures.error(f"websocket: {type(error).__name__}")
            self.drop()
            return None
        seen = 0
        try:
            while True:
                event = json.loads(socket.recv(timeout=REATTACH_SECONDS))
                seen += 1
                if event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    if event["type"] == "RUN_ERROR":
                        self.drop()  # e.g. REPLICA_DRAINING: the next run goes elsewhere
                    return event
        except (ConnectionClosed, OSError, TimeoutError) as error:
            self.figures.error(f"websocket: {type(error).__name__}")
            self.drop()
        return self.attach(body, seen)

    def send(self, text: str) -> ClientConnection:
        """Send on the socket; a socket the server already closed (a drained replica's
        1012) never got the frame, so it goes once more on a new one."""
        socket = self.connected()
        try:
            socket.send(text)
        except ConnectionClosed:
            self.drop()
            socket = self.connected()
            socket.send(text)
        return socket

    def attach(self, body: dict[str, Any], seen: int) -> dict[str, Any] | None:
        frame = {"type": "attach", "threadId": body["threadId"], "runId": body["runId"]}
        try:
            socket = self.send(json.dumps({**frame, "lastEventId": seen}))
            while True:
                event = json.loads(socket.recv(timeout=REATTACH_SECONDS))
                if event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                    if event["type"] == "RUN_FINISHED":
                        self.figures.add(runs_reattached=1)
                    return event
        except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError) as error:
            self.figures.error(f"websocket attach: {type(error).__name__}")
            self.drop()
        return None


def events(response: httpx.Response, deadline: float | None = None) -> Any:
    """``(id, event)`` pairs of an SSE response (``id`` 0 when the frame has none), until
    ``deadline`` (checked at each line: keep-alive comments arrive every 15 s)."""
    event_id = 0
    for line in response.iter_lines():
        if deadline is not None and time.monotonic() > deadline:
            return
        if line.startswith("id: "):
            event_id = int(line.removeprefix("id: "))
        elif line.startswith("data: "):
            yield event_id, json.loads(line.removeprefix("data: "))
            event_id = 0


def reported_interrupted(url: str, thread: str) -> bool:
    """The thread holds a tool result saying the call was interrupted or never started."""
    view = httpx.get(f"{url}/agui/assistant/threads/{thread}", timeout=30).json()
    text = json.dumps(view["events"][-1]["messages"])
    return INTERRUPTED_TEXT in text or NOT_STARTED_TEXT in text


def agui_worker(
    url: str, until: float, figures: Figures, worker: int, keys: dict[str, str]
) -> None:
    client = AguiClient(url, figures)
    number = 0
    with client.http:
        while time.monotonic() < until:
            number += 1
            key = f"{worker}-{number}"
            figures.add(tasks=1)
            thread = new_id("t")
            if client.task(key, thread):
                keys[key] = thread
                figures.add(tasks_completed=1)
            else:
                figures.add(tasks_lost=1)


def websocket_worker(
    url: str, until: float, figures: Figures, worker: int, keys: dict[str, str]
) -> None:
    client = WebSocketAguiClient(url, figures)
    number = 0
    try:
        while time.monotonic() < until:
            number += 1
            key = f"ws{worker}-{number}"
            figures.add(tasks=1, tasks_websocket=1)
            thread = new_id("t")
            if client.task(key, thread):
                keys[key] = thread
                figures.add(tasks_completed=1, tasks_websocket_completed=1)
            else:
                figures.add(tasks_lost=1)
    finally:
        client.drop(reopen=False)
        client.http.close()


def chaos(replicas: list[Replica], start: float, log: list[str]) -> None:
    """Drain replica 2 at +6 s (restart it once it exited); kill -9 replica 3 at +12 s
    (restart it 2 s later)."""
    time.sleep(max(0.0, start + 6 - time.monotonic()))
    log.append(f"{time.monotonic() - start:.1f}s SIGTERM replica 2")
    replicas[1].signal(signal.SIGTERM)
    status = replicas[1].wait_exit(timeout=60)
    log.append(f"{time.monotonic() - start:.1f}s replica 2 drained, exit status {status}")
    replicas[1].start(timeout=90)
    log.append(f"{time.monotonic() - start:.1f}s replica 2 restarted")
    time.sleep(max(0.0, start + 12 - time.monotonic()))
    log.append(f"{time.monotonic() - start:.1f}s kill -9 replica 3")
    replicas[2].signal(signal.SIGKILL)
    replicas[2].wait_exit(timeout=10)
    time.sleep(2)
    replicas[2].start(timeout=90)
    log.append(f"{time.monotonic() - start:.1f}s replica 3 restarted")


def test_three_replicas_behind_haproxy_survive_a_drain_and_a_kill(
    tmp_path: Path, redis_url: str
) -> None:
    if haproxy_binary() is None:
        pytest.skip("haproxy is not installed (.ci/run installs Debian's haproxy)")
    import redis

    store = redis_url[: redis_url.rindex("/")] + "/12"
    redis.Redis.from_url(store).flushdb()
    counts = tmp_path / "executions.log"
    env = {"INTERLOCK_TEST_EXECUTIONS": str(counts), SEAL_ENV: "soak-seal-key-shared"}
    server = f'seal_key_env = "{SEAL_ENV}"\ndrain_seconds = 4'
    with slow_upstream(stream_delay=0.1) as (upstream, _):
        text = config_text(upstream, store, server=server).replace(
            f'url = "{store}"',
            f'url = "{store}"\nthread_lease_seconds = 3\nthread_lease_wait_seconds = 10',
        )
        config = tmp_path / "interlock.toml"
        config.write_text(text)
        replicas = [Replica(config, tmp_path, env=env) for _ in range(3)]
        balancer = LoadBalancer(replicas, tmp_path)
        checked = balancer.check()
        assert checked.returncode == 0, checked.stdout + checked.stderr
        figures, keys, log = Figures(), dict[str, str](), list[str]()
        try:
            for replica in replicas:
                replica.start(timeout=90)  # a loaded 2-core machine starts slowly
            balancer.start()
            start = time.monotonic()
            until = start + TRAFFIC_SECONDS
            threads = [
                threading.Thread(target=stream_worker, args=(balancer.url, until, figures, n))
                for n in range(STREAM_WORKERS)
            ]
            threads += [
                threading.Thread(target=agui_worker, args=(balancer.url, until, figures, n, keys))
                for n in range(AGUI_WORKERS)
            ]
            threads += [
                threading.Thread(
                    target=websocket_worker, args=(balancer.url, until, figures, n, keys)
                )
                for n in range(WEBSOCKET_WORKERS)
            ]
            threads.append(threading.Thread(target=chaos, args=(replicas, start, log)))
            for thread in threads:
                thread.start()
            settle = time.monotonic() + TRAFFIC_SECONDS + SETTLE_SECONDS
            for thread in threads:
                thread.join(timeout=max(0.0, settle - time.monotonic()))
            counted = executions(str(counts))
            unexecuted = [key for key in keys if counted.get(("ask", key), 0) == 0]
            figures.unexecuted_unreported = sum(
                1 for key in unexecuted if not reported_interrupted(balancer.url, keys[key])
            )
            figures.tasks_interrupted = len(unexecuted) - figures.unexecuted_unreported
            held = redis.Redis.from_url(store)
            redis_figures = {
                "keys": held.dbsize(),
                "used_memory_bytes": held.info("memory")["used_memory"],
            }
            held.close()
        finally:
            balancer.stop()
            for replica in replicas:
                replica.stop()
    figures.executions = sum(counted.values())
    figures.double_executions = sum(1 for value in counted.values() if value > 1)
    report: dict[str, Any] = {
        item.name: getattr(figures, item.name) for item in fields(figures) if item.name != "lock"
    }
    report["chaos"] = log
    report["redis"] = redis_figures
    report["load_average"] = list(os.getloadavg())
    (tmp_path / "soak.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    assert not any(thread.is_alive() for thread in threads), "a client never settled"
    assert figures.double_executions == 0, report
    assert figures.tasks_lost == 0, report
    assert figures.streams_failed == 0, report
    assert figures.unexecuted_unreported == 0, report
    assert figures.tasks > 0 and figures.streams > 0, report
    assert figures.tasks_websocket_completed > 0, report
    assert len(log) == 5, report  # the drain, both restarts and the kill all happened
