"""Three replicas on one redis-server behind a real HAProxy (``examples/deployment/haproxy.cfg``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import httpx

from tests.deployment.harness import ROOT, Replica, free_port

HAPROXY_CONFIG = ROOT / "examples" / "deployment" / "haproxy.cfg"
SEAL_ENV = "INTERLOCK_SEAL_KEY"


def system_binary(name: str) -> str | None:
    """A Debian server binary such as haproxy or nginx (``/usr/sbin`` may be missing from
    a user's ``PATH``)."""
    found = shutil.which(name)
    if found is None and Path("/usr/sbin", name).exists():
        return f"/usr/sbin/{name}"
    return found


def haproxy_binary() -> str | None:
    """Debian's haproxy."""
    return system_binary("haproxy")


class LoadBalancer:
    """``haproxy -f examples/deployment/haproxy.cfg`` in front of ``replicas``."""

    def __init__(self, replicas: list[Replica], workdir: Path) -> None:
        self.binary = haproxy_binary() or "haproxy"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = os.environ | {"INTERLOCK_LB_BIND": f"127.0.0.1:{self.port}"}
        for number, replica in enumerate(replicas, start=1):
            self.env[f"INTERLOCK_REPLICA_{number}"] = f"127.0.0.1:{replica.port}"
        self.log = workdir / "haproxy.log"
        self.process: subprocess.Popen[bytes] | None = None

    def check(self) -> subprocess.CompletedProcess[str]:
        command = [self.binary, "-c", "-f", str(HAPROXY_CONFIG)]
        return subprocess.run(command, env=self.env, capture_output=True, text=True, check=False)

    def start(self) -> None:
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(
                [self.binary, "-db", "-f", str(HAPROXY_CONFIG)],
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 15
        while True:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, "haproxy never routed to a ready replica"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
