"""The Dockerfile's steps, run as plain commands (there is no Docker engine here).

The image's build context (minus ``.dockerignore``) is copied, installed into a fresh
virtual environment the way ``RUN pip install .`` does, and the image's ``CMD`` is
started from an empty working directory; then the ``HEALTHCHECK`` command must pass.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

from tests.gateway.serving import stop

ROOT = Path(__file__).resolve().parents[2]


def instructions() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    logical = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    for line in logical.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.setdefault(keyword.upper(), []).append(rest.strip())
    return found


def exec_form(text: str) -> list[str]:
    return json.loads(text[text.index("[") :]) if "[" in text else shlex.split(text)


def test_dockerfile_has_the_required_shape() -> None:
    steps = instructions()
    assert steps["FROM"][0].startswith("python:3.11-slim")
    assert steps["USER"] == ["interlock"]
    command = exec_form(steps["CMD"][0])
    assert command[:2] == ["interlock", "serve"] and "0.0.0.0" in command
    assert "--allow-non-loopback" in command
    assert "HEALTHCHECK" in steps


def _ignored(relative: str, patterns: list[str]) -> bool:
    return any(
        fnmatch.fnmatch(relative, pattern) or relative.startswith(pattern.rstrip("/") + "/")
        for pattern in patterns
    )


def _copy_context(target: Path) -> None:
    patterns = [
        p for p in (ROOT / ".dockerignore").read_text().splitlines() if p and not p.startswith("#")
    ]
    for source in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / source, target / source)
    for path in (ROOT / "interlock").rglob("*"):
        relative = str(path.relative_to(ROOT))
        if path.is_file() and not _ignored(relative, patterns):
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, destination)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_dockerfile_steps_build_and_serve(tmp_path: Path) -> None:
    context = tmp_path / "app"
    context.mkdir()
    _copy_context(context)
    environment = tmp_path / "venv"
    venv.create(environment, system_site_packages=True, with_pip=False)
    python = environment / "bin" / "python"
    # RUN pip install .   (dependencies come from the system site here: no network needed)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            str(context),
        ],
        check=True,
        timeout=300,
    )
    data = tmp_path / "data"
    data.mkdir()
    port = _free_port()
    command = exec_form(instructions()["CMD"][0])
    command[command.index("--port") + 1] = str(port)
    command[0] = str(environment / "bin" / "interlock")
    log = tmp_path / "serve.log"
    path = f"{environment / 'bin'}:{os.environ['PATH']}"
    with log.open("wb") as output:
        server = subprocess.Popen(
            command,
            cwd=data,
            env={**os.environ, "PATH": path},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        health = exec_form(instructions()["HEALTHCHECK"][0].split("CMD", 1)[1])
        health[health.index("-c") + 1] = health[health.index("-c") + 1].replace("8787", str(port))
        health[0] = str(python)
        deadline = time.monotonic() + 30
        while True:
            if subprocess.run(health, capture_output=True, timeout=10).returncode == 0:
                break
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the container command never became healthy"
            time.sleep(0.2)
        assert (data / ".interlock").is_dir()  # the embedded default keeps its state here
    finally:
        stop(server)
