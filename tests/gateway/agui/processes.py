"""Gateways as ``interlock serve`` subprocesses sharing one store (SQLite file or Redis).

Their tools (:mod:`tests.gateway.agui.counted`) count executions in files, so a test can
see every execution in every process, even one killed with ``-9``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.gateway.agui.harness import CONFIG
from tests.gateway.serving import free_port, stop

ROOT = Path(__file__).resolve().parents[3]
TOOLS = "tests.gateway.agui.counted"
SEAL_ENV = "INTERLOCK_TEST_SEAL_KEY"


@dataclass
class Process:
    """One running ``interlock serve``; ``url``/``ws_url`` as the harness's ``Server``."""

    process: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"


@dataclass
class Cluster:
    """Where the gateways keep their config, state and execution counts."""

    directory: Path
    store_url: str
    upstream_url: str
    """The one upstream every gateway calls (the emulators in this process, on loopback)."""
    lease_seconds: float = 30.0
    lease_wait_seconds: float = 10.0

    @property
    def counts(self) -> Path:
        return self.directory / "counts"

    def config(self, name: str = "interlock.toml") -> Path:
        path = self.directory / name
        if not path.exists():
            state = self.directory / "state"
            text = CONFIG.format(
                state_dir=state, store=self.store_url, max_body=1 << 20, tools=TOOLS
            ).replace("emulator://openai-responses", f"{self.upstream_url}/v1")
            store = f'url = "{self.store_url}"'
            text = text.replace(
                store,
                f"{store}\nthread_lease_seconds = {self.lease_seconds}"
                f"\nthread_lease_wait_seconds = {self.lease_wait_seconds}",
            )
            # a shared store needs one configured seal key (interlock.gateway.replicas)
            text = text.replace("[server]\n", f'[server]\nseal_key_env = "{SEAL_ENV}"\n', 1)
            path.write_text(text)
            self.counts.mkdir(exist_ok=True)
        return path

    def start(
        self, extra_env: Mapping[str, str] | None = None, config: str = "interlock.toml"
    ) -> Process:
        """Start one gateway and wait until it answers ``/healthz``."""
        return wait_healthy(self.spawn(extra_env, config))

    def spawn(
        self, extra_env: Mapping[str, str] | None = None, config: str = "interlock.toml"
    ) -> Process:
        """Start one gateway without waiting for it (see :func:`wait_healthy`)."""
        port = free_port()
        command = [sys.executable, "-m", "interlock.gateway.cli", "serve"]
        command += ["--config", str(self.config(config)), "--port", str(port)]
        environment = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "INTERLOCK_TEST_COUNTS": str(self.counts),
            SEAL_ENV: "one-seal-key-every-test-gateway-shares",
            **(extra_env or {}),
        }
        log = (self.directory / f"serve-{port}.log").open("wb")
        with log:
            process = subprocess.Popen(
                command, cwd=self.directory, env=environment, stdout=log, stderr=subprocess.STDOUT
            )
        return Process(process, port)


def wait_healthy(started: Process) -> Process:
    """``started`` once it answers ``/healthz`` (stopped, and an error, after 120 s: a
    loaded machine starting a dozen gateways at once is slow)."""
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{started.url}/healthz", timeout=1).status_code == 200:
                return started
        except httpx.HTTPError:
            pass
        if started.process.poll() is not None or time.monotonic() > deadline:
            stop(started.process)
            raise RuntimeError(f"interlock serve on port {started.port} did not start")
        time.sleep(0.05)


@contextmanager
def gateways(cluster: Cluster, count: int) -> Iterator[list[Process]]:
    """``count`` gateways on the cluster's store, stopped afterwards."""
    with ExitStack() as stack:
        started: list[Process] = []
        for _ in range(count):  # one after the other: the first creates the seal key
            process = cluster.start()
            stack.callback(stop, process.process)
            started.append(process)
        yield started


@dataclass
class Shared:
    """Gateways started once per test session and store kind: three patient ones and an
    impatient one (waits ``0.3`` s for a busy thread)."""

    cluster: Cluster
    processes: list[Process]
    impatient: Process


@contextmanager
def shared_cluster(directory: Path, store: str, upstream: str) -> Iterator[Shared]:
    """Start the :class:`Shared` gateways; stop them afterwards."""
    cluster = Cluster(directory, store, upstream)
    with gateways(cluster, 3) as processes:
        cluster.lease_wait_seconds = 0.3
        impatient = cluster.start(config="impatient.toml")
        try:
            yield Shared(cluster, processes, impatient)
        finally:
            stop(impatient.process)


def store_url(kind: str, directory: Path, redis_url: str | None) -> str:
    """A fresh store URL of ``kind`` (``sqlite`` or ``redis``)."""
    if kind == "sqlite":
        return f"sqlite:///{directory / 'state.db'}"
    assert redis_url is not None
    return redis_url
