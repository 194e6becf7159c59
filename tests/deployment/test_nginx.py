"""``examples/deployment/nginx.conf`` in front of three real replicas on one redis-server:
the file is valid (``nginx -t``), and through it proxied model streams, AG-UI runs over SSE
(streamed as they come, approved, cancelled) and over a WebSocket work; requests keep
being served while one replica is killed -9 and another drains (retried elsewhere)."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from websockets.sync.client import connect

from tests.deployment.agui import new_id, of_type, run_input, run_sse, sse_events
from tests.deployment.cluster import SEAL_ENV, system_binary
from tests.deployment.harness import ROOT, Replica, config_text, free_port, slow_upstream
from tests.deployment.tools import executions

NGINX_CONFIG = ROOT / "examples" / "deployment" / "nginx.conf"


def nginx_binary() -> str | None:
    """Debian's nginx."""
    return system_binary("nginx")


class Nginx:
    """The example config with only its addresses replaced, run in the foreground."""

    def __init__(self, replicas: list[Replica], workdir: Path) -> None:
        self.binary = nginx_binary() or "nginx"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        text = NGINX_CONFIG.read_text()
        text, listens = re.subn(
            r"listen 127\.0\.0\.1:8080;", f"listen 127.0.0.1:{self.port};", text
        )
        servers = iter(replica.port for replica in replicas)
        text, count = re.subn(r"127\.0\.0\.1:878\d", lambda _: f"127.0.0.1:{next(servers)}", text)
        assert (listens, count) == (1, len(replicas)), "the example's addresses moved"
        self.config = workdir / "nginx.conf"
        self.config.write_text(text)
        self.globals = f"pid {workdir / 'nginx.pid'}; error_log {workdir / 'nginx-error.log'};"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = workdir / "nginx.log"

    def check(self) -> subprocess.CompletedProcess[str]:
        command = [self.binary, "-t", "-c", str(self.config), "-g", self.globals]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    def start(self) -> None:
        command = [self.binary, "-c", str(self.config), "-g", f"daemon off; {self.globals}"]
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while True:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, "nginx never routed to a ready replica"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextmanager
def cluster(tmp_path: Path, redis_url: str) -> Iterator[tuple[Nginx, list[Replica], Path]]:
    """Three replicas (``drain_seconds = 30``) on one redis-server behind nginx."""
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (.ci/run installs Debian's nginx)")
    import redis

    store = redis_url[: redis_url.rindex("/")] + "/13"
    redis.Redis.from_url(store).flushdb()
    counts = tmp_path / "executions.log"
    env = {"INTERLOCK_TEST_EXECUTIONS": str(counts), SEAL_ENV: "nginx-seal-key-shared"}
    server = f'seal_key_env = "{SEAL_ENV}"\ndrain_seconds = 30'
    with ExitStack() as stack, slow_upstream(stream_delay=0.05) as (upstream, _):
        config = tmp_path / "interlock.toml"
        config.write_text(config_text(upstream, store, server=server))
        replicas = [Replica(config, tmp_path, env=env) for _ in range(3)]
        for replica in replicas:
            stack.callback(replica.stop)
            replica.start()
        balancer = Nginx(replicas, tmp_path)
        checked = balancer.check()
        assert checked.returncode == 0, checked.stderr
        stack.callback(balancer.stop)
        balancer.start()
        yield balancer, replicas, counts


def test_streams_sse_and_websockets_through_nginx(tmp_path: Path, redis_url: str) -> None:
    with cluster(tmp_path, redis_url) as (balancer, _, counts):
        sdk = openai.OpenAI(base_url=f"{balancer.url}/v1", api_key="-", max_retries=0)
        with sdk:
            chunks = list(
                sdk.chat.completions.create(
                    model="chat", messages=[{"role": "user", "content": "via nginx"}], stream=True
                )
            )
        streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        agui = f"{balancer.url}/agui/assistant"
        with httpx.Client(timeout=60) as http:
            asked = run_sse(http, agui, run_input(new_id("t"), 'call ask with {"key":"sse"}'))
            thread = asked[0]["threadId"]
            answered = run_sse(http, agui, resume(thread, asked[-1]))
            running, cancel, cancelled = cancel_mid_tool(http, agui, counts)
        with connect(f"{balancer.url.replace('http', 'ws', 1)}/agui/assistant/ws") as socket:
            body = run_input(new_id("t"), 'call ask with {"key":"ws"}')
            socket.send(json.dumps(body))
            interrupted = until_terminal(socket)
            socket.send(json.dumps(resume(body["threadId"], interrupted[-1])))
            finished = until_terminal(socket)
    assert streamed == "You said: via nginx"
    assert asked[-1]["outcome"]["type"] == "interrupt"
    assert answered[-1]["outcome"] == {"type": "success"} and of_type(answered, "TOOL_CALL_RESULT")
    # the tool was still running when its call reached the client: nothing was buffered
    assert running == 0
    assert cancel.status_code == 200 and cancel.json()["status"] == "cancelled", cancel.text
    assert cancelled[-1]["outcome"] == {"type": "cancelled"}
    assert interrupted[-1]["outcome"]["type"] == "interrupt"
    assert finished[-1]["outcome"] == {"type": "success"}
    assert executions(str(counts)) == {("ask", "sse"): 1, ("ask", "ws"): 1}


def test_requests_go_on_while_a_replica_is_killed_and_another_drains(
    tmp_path: Path, redis_url: str
) -> None:
    with cluster(tmp_path, redis_url) as (balancer, replicas, _):
        killed, draining, _ = replicas
        killed.signal(signal.SIGKILL)
        killed.wait_exit(timeout=10)
        # an unfinished run keeps the draining replica draining (refusing with 503)
        busy = threading.Thread(target=slow_run, args=(draining.url,), daemon=True)
        busy.start()
        deadline = time.monotonic() + 30
        while not draining_has_run(draining):
            assert time.monotonic() < deadline, "the slow run never started"
            time.sleep(0.05)
        draining.signal(signal.SIGTERM)
        draining.wait_draining()
        statuses: list[int] = []
        with httpx.Client(timeout=60) as http:
            for number in range(6):
                body = run_input(new_id("t"), f"hello {number}")
                with http.stream("POST", f"{balancer.url}/agui/assistant", json=body) as response:
                    statuses.append(response.status_code)
                    events = list(sse_events(response)) if response.status_code == 200 else []
                assert events and events[-1]["type"] == "RUN_FINISHED", (number, events)
        assert draining.probe("/readyz") == 503  # it was draining the whole time
    assert statuses == [200] * 6


def slow_run(url: str) -> None:
    body = run_input(new_id("t"), 'call note with {"key":"slow","seconds":20}')
    with httpx.Client(timeout=60) as http, contextlib.suppress(httpx.HTTPError):
        run_sse(http, f"{url}/agui/assistant", body)  # the test may end before the run


def draining_has_run(replica: Replica) -> bool:
    """The replica's metrics show the slow run's stream open."""
    metrics = httpx.get(f"{replica.url}/metrics", timeout=5).text
    return 'interlock_agui_connections{transport="sse"} 1' in metrics


def resume(thread: str, finished: dict[str, Any]) -> dict[str, Any]:
    decisions = [
        {"interruptId": item["id"], "status": "resolved", "payload": {"approved": True}}
        for item in finished["outcome"]["interrupts"]
    ]
    return run_input(thread, resume=decisions)


def cancel_mid_tool(
    http: httpx.Client, agui: str, counts: Path
) -> tuple[int, httpx.Response, list[dict[str, Any]]]:
    """Start a run whose tool takes 30 s; once its call arrives (the tool running), cancel
    it through nginx. Executions of the tool seen then, the cancel's answer, the events."""
    body = run_input(new_id("t"), 'call note with {"key":"cancelled","seconds":30}')
    events: list[dict[str, Any]] = []
    with http.stream("POST", agui, json=body) as response:
        stream = sse_events(response)
        for event in stream:
            events.append(event)
            if event["type"] == "TOOL_CALL_END":
                break
        running = executions(str(counts)).get(("note", "cancelled"), 0)
        url = f"{agui}/threads/{body['threadId']}/runs/{body['runId']}/cancel"
        cancel = http.post(url)
        events += list(stream)
    return running, cancel, events


def until_terminal(socket: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    while True:
        event = json.loads(socket.recv(timeout=60))
        events.append(event)
        if event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
            return events
