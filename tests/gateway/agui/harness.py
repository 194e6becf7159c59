"""A real gateway AG-UI server on a loopback port, and small WebSocket/SSE clients for it.

The server runs uvicorn in a background thread (its own event loop), serving the binding
built from a TOML config whose upstream is an in-process emulator, so every hop is real:
HTTP/WebSocket framing, the loop, the codec, the upstream codec and the emulator. It serves
with the gateway's own options (``SERVER_OPTIONS``: the lean WebSocket protocol with batched
sends) unless a test asks for stock uvicorn (``stock=True``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from websockets.asyncio.client import ClientConnection, connect

from interlock.gateway.agui import SERVER_OPTIONS, AguiBinding, binding_routes, gateway_binding
from interlock.gateway.app import Gateway, build_gateway
from interlock.gateway.config import parse_config

TOOLS = "tests.gateway.agui.tools"

CONFIG = """
[server]
state_dir = "{state_dir}"
max_body_bytes = {max_body}

[store]
url = "{store}"

[[upstreams]]
name = "emulated"
protocol = "openai-responses"
base_url = "emulator://openai-responses"

[[models]]
name = "model"
upstream = "emulated"
model = "gpt-emulated"

[[agents]]
name = "assistant"
model = "model"
instructions = "Be helpful."
tools = [
    "{tools}:get_weather", "{tools}:delete_file", "{tools}:send_email", "{tools}:slow_task",
    "{tools}:paced_task", "{tools}:cut_emoji", "{tools}:check_stock", "{tools}:shred_file",
    "{tools}:book_room", "{tools}:paced_stock",
]
approval_required = ["delete_file", "send_email", "shred_file", "book_room"]
approval_style = "interrupt"
retry_on_interrupt = ["check_stock", "paced_stock"]

[[agents]]
name = "confirmer"
model = "model"
tools = ["{tools}:get_weather", "{tools}:delete_file", "{tools}:send_email"]
approval_required = ["delete_file", "send_email"]
approval_style = "confirm_changes"
"""

TERMINAL = ("RUN_FINISHED", "RUN_ERROR")


def make_gateway(
    state_dir: str,
    *,
    store: str = "memory://",
    max_body: int = 65536,
    upstream: httpx.AsyncBaseTransport | None = None,
) -> Gateway:
    """A gateway over the test config (seal key generated under ``state_dir``).

    ``upstream`` replaces the gateway's own in-process emulator (to keep one emulator, the
    "provider", alive across gateway restarts).
    """
    text = CONFIG.format(state_dir=state_dir, store=store, max_body=max_body, tools=TOOLS)
    transports = {"emulated": upstream} if upstream is not None else None
    return build_gateway(parse_config(text, {}), transports=transports)


def make_app(binding: AguiBinding) -> Starlette:
    """Only the AG-UI routes over ``binding``."""
    return Starlette(routes=binding_routes(binding))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    """A uvicorn server in a thread; ``url`` is its base URL."""

    app: Starlette
    stock: bool = False
    options: dict[str, Any] = field(default_factory=dict[str, Any])
    port: int = field(default_factory=_free_port)
    server: uvicorn.Server | None = None
    thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def start(self) -> Server:
        options = {**({} if self.stock else SERVER_OPTIONS), **self.options}
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            **{"lifespan": "off", **options},
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        assert self.server is not None and self.thread is not None
        self.server.should_exit = True
        self.thread.join(timeout=10)


def serve(
    binding: AguiBinding, *, stock: bool = False, options: dict[str, Any] | None = None
) -> Iterator[Server]:
    """Start a server for ``binding``; stop it afterwards (use in a fixture)."""
    server = Server(make_app(binding), stock=stock, options=options or {}).start()
    try:
        yield server
    finally:
        server.stop()


running = contextlib.contextmanager(serve)
"""``with running(binding) as server``."""


def binding_for(gateway: Gateway) -> AguiBinding:
    return gateway_binding(gateway)


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def user(text: str, message_id: str | None = None) -> dict[str, Any]:
    return {"id": message_id or new_id("u"), "role": "user", "content": text}


def run_input(
    thread_id: str,
    messages: Sequence[dict[str, Any]] = (),
    *,
    run_id: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A ``RunAgentInput`` body (camelCase keys pass through ``extra``)."""
    return {
        "threadId": thread_id,
        "runId": run_id or new_id("run"),
        "messages": list(messages),
        **extra,
    }


def resume_all(finished: dict[str, Any], payload: dict[str, Any]) -> list[dict[str, Any]]:
    """A ``resume[]`` answering every interrupt of ``finished`` with ``payload``."""
    return [
        {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}
        for interrupt in finished["outcome"]["interrupts"]
    ]


class Socket:
    """A ``websockets`` client session on ``/agui/{agent}/ws`` that records every frame."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.frames: list[dict[str, Any]] = []

    async def send(self, frame: Any) -> None:
        await self.connection.send(frame if isinstance(frame, str) else json.dumps(frame))

    async def receive(self) -> dict[str, Any]:
        # A hang guard, not a timing check: generous, since a restarted gateway under a
        # loaded CI machine can take many seconds to answer its first frame.
        raw = await asyncio.wait_for(self.connection.recv(), timeout=60)
        frame = json.loads(raw)
        self.frames.append(frame)
        return frame

    async def until_terminal(self) -> list[dict[str, Any]]:
        """Frames up to and including the next terminal event."""
        events: list[dict[str, Any]] = []
        while True:
            event = await self.receive()
            events.append(event)
            if event["type"] in TERMINAL:
                return events

    async def run(self, body: dict[str, Any], *, wrapped: bool = False) -> list[dict[str, Any]]:
        await self.send({"type": "run", "input": body} if wrapped else body)
        return await self.until_terminal()


def open_socket(server: Server, agent: str = "assistant", **options: Any) -> Any:
    """``async with open_socket(server) as socket``."""

    class _Context:
        async def __aenter__(self) -> Socket:
            self.connection = await connect(f"{server.ws_url}/agui/{agent}/ws", **options)
            return Socket(self.connection)

        async def __aexit__(self, *_: object) -> None:
            await self.connection.close()

    return _Context()


async def run_over(
    server: Server,
    body: dict[str, Any],
    transport: str,
    agent: str = "assistant",
    headers: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One whole run of ``agent`` over ``transport`` (``"ws"`` or ``"sse"``): its events.
    An SSE answer must be 200."""
    if transport == "ws":
        options = {} if headers is None else {"additional_headers": headers}
        async with open_socket(server, agent, **options) as socket:
            return await socket.run(body)
    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.post(f"{server.url}/agui/{agent}", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return sse_events(response.text)


def sse_run(server: Server, body: Any, agent: str = "assistant") -> tuple[httpx.Response, str]:
    """POST a run; the response and its raw SSE text."""
    with (
        httpx.Client(timeout=20) as client,
        client.stream("POST", f"{server.url}/agui/{agent}", json=body) as response,
    ):
        text = response.read().decode()
    return response, text


def sse_events(text: str) -> list[dict[str, Any]]:
    """The ``data:`` payloads of an SSE body, in order (``id:`` lines skipped)."""
    return [
        json.loads(line.removeprefix("data: "))
        for block in text.split("\n\n")
        for line in block.split("\n")
        if line.startswith("data: ")
    ]


def of_type(events: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == kind]


def snapshot(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of the last ``MESSAGES_SNAPSHOT``."""
    return of_type(events, "MESSAGES_SNAPSHOT")[-1]["messages"]
