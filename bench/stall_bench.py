"""Does a large request stall the gateway? ``/healthz`` latency while 9 MB requests are
translated, with large-body work on a worker thread (``server.offload_bytes``, the
default) and, in the same run, with everything on the event loop (``offload_bytes = 0``).

Starts ``interlock emulate`` (Chat and Gemini) and ``interlock serve`` (one worker) as
subprocesses on loopback. For each setting and each route (Chat client → Chat upstream,
same dialect; Chat client → Gemini upstream, cross-dialect) one thread sends a 9 MB Chat
request (about 8,000 messages) again and again over a keep-alive connection, while
another sends ``GET /healthz`` every 20 ms on its own connection and times each answer.
Printed: the probe's p50 / p99 / max, how many large requests completed and their mean
time, and the load average. The probes of an idle gateway come first, as the floor.

Usage: python bench/stall_bench.py [--seconds 20] [--megabytes 9]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

INTERLOCK = [sys.executable, "-m", "interlock.gateway.cli"]
MS = 1000.0
PROBE_EVERY = 0.02


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(arguments: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*INTERLOCK, *arguments], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"process exited: {process.args}") from None
            time.sleep(0.05)
    raise RuntimeError(f"port {port} never opened")


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


class Connection:
    """One keep-alive HTTP/1.1 connection that reads answers with a Content-Length."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def exchange(self, request: bytes) -> int:
        """Send ``request``; the answer's status."""
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(self.buffer) < length:
            self._fill()
        self.buffer = self.buffer[length:]
        return int(head.split(b" ", 2)[1])

    def _fill(self) -> None:
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("closed by the server")
        self.buffer += data

    def close(self) -> None:
        self.sock.close()


def large_request(model: str, megabytes: float) -> bytes:
    messages: list[dict[str, str]] = []
    size = 0
    while size < megabytes * 1_000_000:
        role = "user" if len(messages) % 2 == 0 else "assistant"
        content = f"message {len(messages)} " + "lorem ipsum dolor sit amet " * 40
        messages.append({"role": role, "content": content})
        size += len(content) + 40
    body = json.dumps({"model": model, "messages": messages}).encode()
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def probe(port: int, seconds: float) -> list[float]:
    """``GET /healthz`` every :data:`PROBE_EVERY` seconds for ``seconds``: latencies (s)."""
    connection = Connection(port)
    request = b"GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n"
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    try:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            assert connection.exchange(request) == 200
            latencies.append(time.perf_counter() - started)
            time.sleep(max(0.0, PROBE_EVERY - (time.perf_counter() - started)))
    finally:
        connection.close()
    return latencies


def load(port: int, request: bytes, stop_flag: threading.Event, times: list[float]) -> None:
    connection = Connection(port)
    try:
        while not stop_flag.is_set():
            started = time.perf_counter()
            status = connection.exchange(request)
            assert status == 200, f"large request answered {status}"
            times.append(time.perf_counter() - started)
    finally:
        connection.close()


def summary(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(ordered) * MS:6.1f} ms  p99 {p99 * MS:6.1f} ms  "
        f"max {ordered[-1] * MS:6.1f} ms  ({len(ordered)} probes)"
    )


def config_text(chat_port: int, gemini_port: int, offload_bytes: int) -> str:
    return f"""
[server]
max_body_bytes = 33554432
offload_bytes = {offload_bytes}
access_log = false
[store]
url = "memory://"
[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "http://127.0.0.1:{chat_port}/v1"
max_response_bytes = 33554432
read_timeout = 120
[[upstreams]]
name = "gemini"
protocol = "gemini"
base_url = "http://127.0.0.1:{gemini_port}"
read_timeout = 120
[[models]]
name = "same"
upstream = "chat"
model = "M"
[[models]]
name = "cross"
upstream = "gemini"
model = "gemini-3-flash"
"""


def measure(port: int, model: str, megabytes: float, seconds: float) -> None:
    request = large_request(model, megabytes)
    stop_flag, times = threading.Event(), list[float]()
    sender = threading.Thread(target=load, args=(port, request, stop_flag, times), daemon=True)
    sender.start()
    time.sleep(1.0)  # the first large request is under way
    latencies = probe(port, seconds)
    stop_flag.set()
    sender.join(timeout=120)
    mean = statistics.mean(times) if times else float("nan")
    print(f"  {model:5}  /healthz {summary(latencies)}")
    print(
        f"         {len(times)} × {len(request) / 1e6:.1f} MB requests, mean {mean:.2f} s; "
        f"load average {load_average()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--megabytes", type=float, default=9.0)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        cwd = Path(directory)
        chat_port, gemini_port = free_port(), free_port()
        emulators = [
            start(["emulate", "--protocol", "openai-chat", "--port", str(chat_port)], cwd),
            start(["emulate", "--protocol", "gemini", "--port", str(gemini_port)], cwd),
        ]
        try:
            for process, port in zip(emulators, (chat_port, gemini_port), strict=True):
                wait_listening(port, process)
            for offload_bytes, label in ((256 * 1024, "offload (default)"), (0, "all on the loop")):
                config = cwd / f"interlock-{offload_bytes}.toml"
                config.write_text(config_text(chat_port, gemini_port, offload_bytes))
                port = free_port()
                arguments_ = ["serve", "--config", str(config), "--port", str(port)]
                gateway = start(arguments_, cwd)
                try:
                    wait_listening(port, gateway)
                    print(f"{label}: offload_bytes = {offload_bytes}")
                    print(f"  idle   /healthz {summary(probe(port, 3.0))}")
                    for model in ("same", "cross"):
                        measure(port, model, arguments.megabytes, arguments.seconds)
                finally:
                    stop(gateway)
        finally:
            for process in emulators:
                stop(process)


if __name__ == "__main__":
    main()
