"""The browser harness, Python side: skip markers, ``interlock serve`` for a browser test,
and running a Node script of this folder (``chromium.mjs`` has the Node side).

Debian's ``chromium`` (``/usr/bin/chromium``, or ``$CHROMIUM``) driven by
``playwright-core`` from ``tests/browser/node_modules`` (``npm ci`` there; ``.ci/run``
installs both). Without them every browser test is skipped with the reason shown.

    from tests.browser.harness import requires_browser, interlock_serve, run_node

    @requires_browser
    def test_something(tmp_path):
        with interlock_serve(tmp_path, 'cors_origins = ["http://127.0.0.1:1234"]') as url:
            verdict = run_node("my_script.mjs", url, ...)   # prints one JSON object
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gateway.agui.harness import CONFIG
from tests.gateway.serving import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
BROWSER_DIR = ROOT / "tests" / "browser"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
NODE = shutil.which("node")
COUNTED_TOOLS = "tests.gateway.agui.counted"
"""Tools that append each execution to a file under ``INTERLOCK_TEST_COUNTS``."""
THINKER = """
[[upstreams]]
name = "emulated-chat"
protocol = "openai-chat"
base_url = "emulator://openai-chat"
reasoning_dialect = "reasoning_content"

[[models]]
name = "chat-model"
upstream = "emulated-chat"
model = "chat-emulated"

[[agents]]
name = "thinker"
model = "chat-model"
tools = []
"""
"""An agent whose upstream (the Chat Completions emulator, ``reasoning_content`` dialect, as
DeepSeek streams it) streams readable reasoning text before every answer."""


def _missing() -> str | None:
    if NODE is None:
        return "needs Node.js 20+"
    if not Path(CHROMIUM).exists():
        return "needs Debian's chromium (apt-get install chromium; .ci/run installs it)"
    if not (BROWSER_DIR / "node_modules" / "playwright-core" / "package.json").exists():
        return "needs `npm ci` in tests/browser (playwright-core, @ag-ui/client, esbuild)"
    return None


requires_browser = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def run_node(script: str, *arguments: str, timeout: float = 180) -> dict[str, Any]:
    """Run ``tests/browser/<script>`` with ``arguments``; the JSON object it prints."""
    assert NODE is not None
    environment = {**os.environ, "CHROMIUM": CHROMIUM}
    completed = subprocess.run(
        [NODE, str(BROWSER_DIR / script), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=environment,
    )
    try:
        return json.loads(completed.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise AssertionError(f"{script} printed no verdict: {completed.stderr[-3000:]}") from None


@contextmanager
def interlock_serve(directory: Path, server_lines: str = "") -> Iterator[str]:
    """``interlock serve`` (a subprocess) on a free loopback port with the AG-UI test agents
    (``assistant``, ``confirmer``) using :data:`COUNTED_TOOLS`, and :data:`THINKER`; ``server_lines`` go into
    ``[server]``. Executions are counted under ``directory / "counts"``; the log is
    ``directory / "serve.log"``."""
    counts = directory / "counts"
    counts.mkdir(exist_ok=True)
    text = (
        CONFIG.format(
            state_dir=directory / "state",
            store=f"sqlite:///{directory / 'interlock.db'}",
            max_body=1 << 20,
            tools=COUNTED_TOOLS,
        ).replace("[server]\n", "[server]\n" + server_lines + "\n", 1)
        + THINKER
    )
    config = directory / "interlock.toml"
    config.write_text(text)
    port = free_port()
    command = [sys.executable, "-m", "interlock.gateway.cli", "serve"]
    command += ["--config", str(config), "--port", str(port)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "INTERLOCK_TEST_COUNTS": str(counts)}
    with (directory / "serve.log").open("wb") as log:
        process = subprocess.Popen(
            command, cwd=directory, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
        yield url
    finally:
        stop(process)


def _wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"interlock serve exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise RuntimeError("interlock serve did not become healthy")
