"""A replica's lifecycle: serving, then draining, then stopped.

``interlock serve`` starts *serving*. On SIGTERM (or the first Ctrl-C) the replica starts
*draining* (:meth:`Lifecycle.drain`):

1. ``GET /readyz`` answers 503, so load balancers stop sending it traffic; ``/livez`` and
   ``/healthz`` stay 200 (the process is healthy, it is just leaving).
2. New requests get a 503 in their dialect's error shape with ``Retry-After`` and
   ``Connection: close`` (:class:`DrainGate`); a load balancer can retry them on another
   replica. New AG-UI runs on open WebSockets are refused; idle WebSockets are closed with
   code 1012 (service restart) so clients reconnect through the load balancer.
3. In-flight requests, proxied streams and AG-UI runs go on until they finish or
   ``server.drain_seconds`` pass. Then every :class:`Participant` still busy is stopped:
   proxied streams end with their dialect's error event (code :data:`SHUTDOWN_CODE`),
   AG-UI runs end with ``RUN_ERROR`` (code :data:`RUN_SHUTDOWN_CODE`) after saving what
   they completed. Both are *resumable*: the client sends the request (or the same AG-UI
   input) again, the load balancer picks a serving replica.
4. The state becomes *stopped* and the server closes its sockets and exits.

Invariants: the state only moves forward (serving → draining → stopped); a participant
is stopped at most once; nothing new is admitted once draining began.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from interlock.transcript import JsonObject

LOGGER = logging.getLogger("interlock.gateway.lifecycle")

State: TypeAlias = Literal["serving", "draining", "stopped"]

DRAIN_SECONDS = 25.0
"""Default of ``server.drain_seconds`` (Kubernetes waits 30 s before SIGKILL)."""

REFUSED_CODE = "replica_draining"
"""Error code of a request refused because its replica is draining (HTTP 503)."""
RUN_REFUSED_CODE = "REPLICA_DRAINING"
"""``RUN_ERROR`` code of an AG-UI run refused on a WebSocket of a draining replica."""
SHUTDOWN_CODE = "replica_shutdown"
"""Error code ending a proxied stream still open when the drain deadline passed."""
RUN_SHUTDOWN_CODE = "REPLICA_SHUTDOWN"
"""``RUN_ERROR`` code ending an AG-UI run still running when the drain deadline passed."""
SHUTDOWN_MESSAGE = (
    "this gateway replica shut down before the answer finished; send the request again "
    "(another replica will serve it)"
)
RUN_SHUTDOWN_MESSAGE = (
    "this gateway replica shut down before the run finished; what it completed is saved: "
    "send the same input again to continue (another replica will serve it)"
)
REFUSED_MESSAGE = "this gateway replica is shutting down; retry (another replica will serve it)"

EXEMPT_PATHS = frozenset({"/livez", "/healthz", "/readyz", "/metrics"})
"""Paths a draining replica still answers (health checks and metrics)."""

_POLL_SECONDS = 0.05
_STOP_GRACE_SECONDS = 5.0


class Participant(Protocol):
    """Something a drain waits for (an AG-UI run, a proxied stream) or tells to leave."""

    @property
    def busy(self) -> bool:
        """True while it holds work the drain should wait for."""
        ...

    def draining(self) -> None:
        """The replica started draining: finish what is in flight, accept nothing new."""
        ...

    def stop(self) -> None:
        """The drain deadline passed: end now with a resumable error."""
        ...


@dataclass(frozen=True, slots=True)
class DrainReport:
    """What a drain did: how long it took and how much work it had to cut short."""

    seconds: float
    stopped: int


class Lifecycle:
    """The state of one gateway process and the work a drain waits for."""

    def __init__(self, drain_seconds: float = DRAIN_SECONDS) -> None:
        self.drain_seconds = drain_seconds
        self.state: State = "serving"
        self.requests = 0
        self._participants: set[Participant] = set()

    @property
    def accepting(self) -> bool:
        """True while new requests, runs and connections are welcome."""
        return self.state == "serving"

    def join(self, participant: Participant) -> Callable[[], None]:
        """Register ``participant``; call the returned function when it is done.

        Joining while draining tells the participant at once (it must not start work).
        """
        self._participants.add(participant)
        if self.state != "serving":
            participant.draining()
        return lambda: self._participants.discard(participant)

    @property
    def idle(self) -> bool:
        """No request in flight and no participant busy."""
        return self.requests == 0 and not any(item.busy for item in self._participants)

    async def drain(self, deadline: float | None = None) -> DrainReport:
        """Drain (see the module docstring); returns once everything ended or was stopped.

        Idempotent in effect: a second call while draining just waits along.
        """
        started = time.monotonic()
        seconds = self.drain_seconds if deadline is None else deadline
        if self.state == "serving":
            self.state = "draining"
            LOGGER.warning("draining: finishing in-flight work for up to %.0f s", seconds)
            for participant in list(self._participants):
                participant.draining()
        stopped = 0
        if not await self._wait_idle(started + seconds):
            busy = [item for item in self._participants if item.busy]
            stopped = len(busy)
            LOGGER.warning("drain deadline passed: ending %d stream(s) and run(s)", stopped)
            for participant in busy:
                participant.stop()
            await self._wait_idle(time.monotonic() + _STOP_GRACE_SECONDS)
        self.state = "stopped"
        return DrainReport(seconds=time.monotonic() - started, stopped=stopped)

    async def _wait_idle(self, until: float) -> bool:
        while not self.idle:
            if time.monotonic() >= until:
                return False
            await asyncio.sleep(_POLL_SECONDS)
        return True


ErrorShape = Callable[[str], JsonObject]
"""A path's error body for a refused request: ``message → body``."""


class DrainGate:
    """ASGI middleware: counts HTTP requests in flight and refuses new ones while draining.

    ``shapes`` maps a path prefix to the error body of that API (longest prefix wins);
    other paths get ``{"error": {"message", "code"}}``. WebSocket upgrades on a draining
    replica are refused before the handshake completes.
    """

    def __init__(
        self, app: ASGIApp, lifecycle: Lifecycle, shapes: dict[str, ErrorShape] | None = None
    ) -> None:
        self.app = app
        self.lifecycle = lifecycle
        self.shapes = sorted((shapes or {}).items(), key=lambda item: -len(item[0]))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or scope["path"] in EXEMPT_PATHS:
            await self.app(scope, receive, send)
            return
        lifecycle = self.lifecycle
        if not lifecycle.accepting:
            await self._refuse(scope, receive, send)
            return
        if kind == "websocket":  # sockets are participants: idle ones close when draining
            await self.app(scope, receive, send)
            return
        lifecycle.requests += 1
        try:
            await self.app(scope, receive, send)
        finally:
            lifecycle.requests -= 1

    def body(self, path: str) -> JsonObject:
        """The refusal body for ``path``."""
        for prefix, shape in self.shapes:
            if path.startswith(prefix):
                return shape(REFUSED_MESSAGE)
        return {"error": {"message": REFUSED_MESSAGE, "code": REFUSED_CODE}}

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if (await receive())["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": 1012, "reason": "draining"})
            return
        payload = json.dumps(self.body(scope["path"])).encode()
        start: Message = {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"retry-after", b"1"),
                (b"connection", b"close"),
            ],
        }
        await send(start)
        await send({"type": "http.response.body", "body": payload})
