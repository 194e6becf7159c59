"""Real replicas for deployment tests: ``interlock serve`` subprocesses, a slow emulated
upstream on loopback, and (for the soak) redis-server and HAProxy processes.

Each replica is started through the command line exactly as an operator would, with the
test's own tree first on ``PYTHONPATH`` so tools named in the config (``tests.…``) import.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from interlock.emulators import Emulator, create_emulator, emulator_app

ROOT = Path(__file__).resolve().parents[2]
TOOLS = "tests.deployment.tools"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def gated(app: ASGIApp, gate: threading.Event) -> ASGIApp:
    """``app`` whose answers stop after their first body chunk until ``gate`` is set: a
    model that holds a stream open exactly as long as the test needs, however loaded the
    machine (a delay long enough for every step would make the test slow)."""

    async def held(scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def send_held(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.body":
                if started and not gate.is_set():
                    await asyncio.to_thread(gate.wait)
                started = started or bool(message.get("body"))
            await send(message)

        await app(scope, receive, send_held)

    return held


@contextmanager
def slow_upstream(
    stream_delay: float, gate: threading.Event | None = None
) -> Iterator[tuple[str, Emulator]]:
    """A Chat Completions emulator on loopback whose streams wait ``stream_delay`` seconds
    between events (a slow model), and, with ``gate``, hold after their first event until
    it is set."""
    emulator = create_emulator("openai-chat", stream_delay=stream_delay)
    app = emulator_app(emulator)
    port = free_port()
    config = uvicorn.Config(
        app if gate is None else gated(app, gate),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the emulator did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/v1", emulator
    finally:
        if gate is not None:
            gate.set()  # a failed test must not leave a stream held
        server.should_exit = True
        thread.join(timeout=10)


def config_text(
    upstream_url: str, store_url: str, *, server: str = "", approval: bool = True
) -> str:
    """A gateway config: one Chat upstream, model ``chat``, agent ``assistant`` whose tools
    count executions in a file (``ask`` needs approval when ``approval``)."""
    approvals = 'approval_required = ["ask"]' if approval else ""
    return f"""
[server]
access_log = false
{server}

[store]
url = "{store_url}"

[[upstreams]]
name = "slow"
protocol = "openai-chat"
base_url = "{upstream_url}"
reasoning_dialect = "reasoning_content"

[[models]]
name = "chat"
upstream = "slow"
model = "chat-emulated"

[[agents]]
name = "assistant"
model = "chat"
tools = ["{TOOLS}:note", "{TOOLS}:ask"]
{approvals}
"""


class Replica:
    """One ``interlock serve`` process; :meth:`start` waits until it is ready."""

    def __init__(
        self,
        config: Path,
        workdir: Path,
        *,
        port: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.config = config
        self.workdir = workdir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.log = workdir / f"replica-{self.port}.log"

    def start(self, timeout: float = 30) -> Replica:
        command = [sys.executable, "-m", "interlock.gateway.cli", "serve"]
        command += ["--config", str(self.config), "--port", str(self.port)]
        env = os.environ | self.env
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        with self.log.open("ab") as output:
            self.process = subprocess.Popen(
                command, cwd=self.workdir, env=env, stdout=output, stderr=subprocess.STDOUT
            )
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"the replica exited: {self.output()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replica did not become ready: {self.output()}")
            time.sleep(0.05)

    def ready(self) -> bool:
        return self.probe("/readyz") == 200

    def probe(self, path: str) -> int | None:
        """The status of ``GET path``, or ``None`` when nothing answers."""
        try:
            return httpx.get(self.url + path, timeout=2).status_code
        except httpx.HTTPError:
            return None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def signal(self, number: int) -> None:
        assert self.process is not None
        self.process.send_signal(number)

    def wait_draining(self, timeout: float = 10) -> None:
        """Wait until ``/readyz`` fails after a SIGTERM (the drain has begun)."""
        deadline = time.monotonic() + timeout
        while self.probe("/readyz") == 200:
            assert time.monotonic() < deadline, "the replica never started draining"
            time.sleep(0.02)

    def wait_exit(self, timeout: float = 60) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)

    def stop(self) -> None:
        """SIGKILL if still running, and reap (tests end fast; drains are tested explicitly)."""
        process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGKILL)
        if process is not None:
            process.wait(timeout=20)
