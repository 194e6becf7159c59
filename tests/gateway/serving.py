"""Real servers on loopback for end-to-end tests: emulators in a thread, the gateway as a
subprocess started through the ``interlock serve`` command line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from starlette.types import ASGIApp

from interlock.codecs.registry import DialectName
from interlock.emulators import Emulator, create_emulator, emulator_app

# The repository root: put first on the server's PYTHONPATH so that tools a test config names
# (``tests.…``) import, and the server runs this tree even where another checkout is installed.
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def emulators_on_loopback() -> Iterator[tuple[str, dict[str, Emulator]]]:
    """The four emulators on one loopback port (in this process: ``received`` is readable)."""
    emulators = four_emulators()
    with app_on_loopback(emulator_app(*emulators.values())) as url:
        yield url, emulators


def four_emulators() -> dict[str, Emulator]:
    """One emulator per dialect, as the gateway tests configure them."""
    return {
        "openai-responses": create_emulator("openai-responses"),
        "openai-chat": create_emulator("openai-chat", reasoning_dialect="reasoning_content"),
        "gemini": create_emulator("gemini"),
        "anthropic": create_emulator("anthropic"),
    }


@contextmanager
def app_on_loopback(app: ASGIApp, log_level: str = "warning") -> Iterator[str]:
    """``app`` served by uvicorn on a free loopback port, in a thread of this process."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level=log_level, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "emulators did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def gateway_config(emulator_url: str, store_url: str) -> str:
    return f"""
[server]
access_log = false

[store]
url = "{store_url}"

[[upstreams]]
name = "up-responses"
protocol = "openai-responses"
base_url = "{emulator_url}/v1"

[[upstreams]]
name = "up-chat"
protocol = "openai-chat"
base_url = "{emulator_url}/v1"
reasoning_dialect = "reasoning_content"

[[upstreams]]
name = "up-gemini"
protocol = "gemini"
base_url = "{emulator_url}"

[[upstreams]]
name = "up-anthropic"
protocol = "anthropic"
base_url = "{emulator_url}/v1"

[[models]]
name = "via-responses"
upstream = "up-responses"
model = "gpt-5-emulated"

[[models]]
name = "via-chat"
upstream = "up-chat"
model = "chat-emulated"

[[models]]
name = "via-gemini"
upstream = "up-gemini"
model = "gemini-3-flash-emulated"

[[models]]
name = "via-anthropic"
upstream = "up-anthropic"
model = "claude-emulated"
"""


@contextmanager
def serve(config_path: Path, cwd: Path) -> Iterator[str]:
    """``interlock serve --config …`` on a free port until healthy; terminated afterwards."""
    port = free_port()
    log = cwd / f"serve-{port}.log"
    command = [sys.executable, "-m", "interlock.gateway.cli", "serve"]
    command += ["--config", str(config_path), "--port", str(port)]
    with log.open("wb") as output:
        environment = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        }
        process = subprocess.Popen(
            command, cwd=cwd, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60  # generous: a loaded 2-core machine starts slowly
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"interlock serve did not become healthy: {log.read_text()}")
        time.sleep(0.05)
    try:
        yield url
    finally:
        stop(process)


@contextmanager
def serve_on_emulators(
    directory: Path, extra: str = ""
) -> Iterator[tuple[str, dict[str, Emulator]]]:
    """``interlock serve`` on the four emulators with :func:`gateway_config` (a SQLite store in
    ``directory``) plus ``extra`` configuration; yields the gateway's URL and the emulators."""
    with emulators_on_loopback() as (emulator_url, emulators):
        config = directory / "interlock.toml"
        store = f"sqlite:///{directory / 'state.db'}"
        config.write_text(gateway_config(emulator_url, store) + extra)
        with serve(config, directory) as url:
            yield url, emulators


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process`` and reap it, killing it if it does not exit in time.

    A child left unreaped (``wait`` timing out on a loaded machine) surfaces later as a
    ResourceWarning at some other test's garbage collection.
    """
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def serve_two_vendors(
    directory: Path,
    protocol: DialectName,
    vendors: tuple[str, str],
    config: Callable[[str, str, str], str],
) -> Iterator[tuple[str, dict[str, Emulator], dict[str, str]]]:
    """``interlock serve`` in front of two ``protocol`` emulators standing for ``vendors``
    (each mints opaque reasoning only it accepts), configured by ``config(first_url,
    second_url, store_url)`` with a SQLite store in ``directory``; yields the gateway's URL,
    the emulators and their own URLs, by vendor."""
    first, second = vendors
    emulators = {vendor: create_emulator(protocol, issuer=vendor) for vendor in vendors}
    with (
        app_on_loopback(emulator_app(emulators[first])) as first_url,
        app_on_loopback(emulator_app(emulators[second])) as second_url,
    ):
        path = directory / "interlock.toml"
        path.write_text(config(first_url, second_url, f"sqlite:///{directory / 'state.db'}"))
        with serve(path, directory) as url:
            yield url, emulators, {first: first_url, second: second_url}
