"""``WS /agui/{agent}/ws``: runs one after another on one socket, with cancel.

Client → server text frames: a ``RunAgentInput`` (bare, or ``{"type": "run", "input": …}``),
``{"type": "cancel", "runId": …}``, or ``{"type": "attach", "threadId", "runId",
"lastEventId"?}`` to re-attach to a run this socket did not start (its frames after the
``lastEventId``-th, then the live ones; see :mod:`._attach`). Server → client: one text frame per AG-UI event,
verbatim. The session is an explicit state machine (:class:`SessionState`):

======== ============== =========================================================
state    frame/event    result
======== ============== =========================================================
idle     run            start the run → ``running``
idle     attach         follow the run's event log → ``running``
running  run            refused: ``RUN_ERROR`` ``RUN_IN_PROGRESS`` (run goes on)
running  cancel runId   the run ends with ``RUN_FINISHED`` outcome ``cancelled`` (an
                        attached run: through its owner, wherever it runs, ``._cancel``)
running  cancel other   refused: ``RUN_ERROR`` ``UNKNOWN_RUN``
idle     cancel         refused: ``RUN_ERROR`` ``NO_ACTIVE_RUN``
running  run ended      → ``idle``
any      bad frame      ``RUN_ERROR`` with a code (``INVALID_FRAME``, ``INVALID_INPUT``…)
any      oversized      close 1009 → ``closed``
any      disconnect     the run goes on detached (``._attach``) → ``closed``
======== ============== =========================================================

The endpoint is a plain ASGI app (no Starlette ``WebSocket`` wrapper): every idle socket
keeps its coroutine frames alive, so the fewer layers, the more sockets a worker holds.
A run's frames go out in batches (one ``SEND_BATCH`` message when the server offers the
extension, see :mod:`._server`); the next batch is taken only once this one is written,
so a client that reads slowly holds its run back (:mod:`._outbox`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias, cast

from starlette.datastructures import Headers, QueryParams
from starlette.types import Receive, Scope, Send

from interlock.codecs.agui import RunInput
from interlock.gateway.agui._agents import AgentRuntime
from interlock.gateway.agui._binding import AguiBinding, error_event
from interlock.gateway.agui._cancel import request_cancel
from interlock.gateway.agui._context import dumps
from interlock.gateway.agui._observe import RunAccount
from interlock.gateway.agui._run import AguiRun
from interlock.gateway.agui._server import SEND_BATCH
from interlock.gateway.agui._threads import RunRefusedError
from interlock.gateway.auth import SUBPROTOCOL, Unauthorized
from interlock.gateway.guard import deny_websocket
from interlock.gateway.lifecycle import REFUSED_MESSAGE, RUN_REFUSED_CODE
from interlock.gateway.stores import LogGapError, RunKey, RunLog
from interlock.transcript import DecodeError, JsonObject, JsonValue

SessionState: TypeAlias = Literal["idle", "running", "closed"]

CLOSE_TOO_BIG = 1009
CLOSE_SERVICE_RESTART = 1012
"""Close code for sockets of a draining replica: reconnect (through the load balancer)."""

_TRANSITIONS: dict[tuple[SessionState, str], SessionState] = {
    ("idle", "run"): "running",
    ("running", "ended"): "idle",
    ("idle", "close"): "closed",
    ("running", "close"): "closed",
}

_GONE = (OSError, RuntimeError)
"""What an ASGI ``send`` raises once the client is gone or the socket is closed."""


class IllegalTransitionError(RuntimeError):
    """The session was asked to move along a transition its table does not have."""


class _FrameError(Exception):
    def __init__(self, code: str, message: str, address: JsonObject | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.address = address
        """``{"threadId", "runId"}`` of the refused run, when the frame named one."""


DEFERRED_LIMIT = 32
"""Refusals held while a run is active; past it the socket is closed (1008)."""


class WebSocketSession:
    """One accepted socket's state machine; see the module docstring for the table.

    ``receive``/``send`` are the socket's ASGI callables; ``batched`` says the server
    takes :data:`~._server.SEND_BATCH` messages.
    """

    __slots__ = (
        "_deferred",
        "_pump",
        "_receive",
        "_send",
        "_send_lock",
        "agent",
        "attached",
        "batched",
        "binding",
        "leaving",
        "path",
        "run",
        "runtime",
        "state",
        "tenant",
    )

    def __init__(
        self,
        binding: AguiBinding,
        runtime: AgentRuntime,
        tenant: str,
        channel: tuple[Receive, Send],
        *,
        batched: bool = False,
        agent: str = "",
        path: str = "",
    ) -> None:
        self.binding = binding
        self.agent = agent
        self.path = path
        self._deferred: list[str] = []
        self.runtime = runtime
        self.tenant = tenant
        self._receive, self._send = channel
        self.batched = batched
        self.state: SessionState = "idle"
        self.run: AguiRun | None = None
        self.attached: RunKey | None = None
        """The run this socket follows after an ``attach`` (``run`` is then ``None``)."""
        self._pump: asyncio.Task[None] | None = None
        self._send_lock = asyncio.Lock()
        self.leaving = False
        """The replica is draining: close once no run is active, start no new one."""

    def _move(self, action: str) -> None:
        target = _TRANSITIONS.get((self.state, action))
        if target is None:
            raise IllegalTransitionError(f"no transition from {self.state!r} on {action!r}")
        self.state = target

    @property
    def busy(self) -> bool:
        """Never: a drain waits for the socket's run, which is a participant of its own."""
        return False

    def draining(self) -> None:
        """The replica is draining: close now if idle, else once the active run ends."""
        self.leaving = True
        if self.state == "idle":
            self._pump = asyncio.create_task(self._close_leaving())

    def stop(self) -> None:
        """Nothing to do: the run ends itself (``REPLICA_SHUTDOWN``), then the socket closes."""

    async def _close_leaving(self) -> None:
        async with self._send_lock:
            with contextlib.suppress(*_GONE):
                message = {"type": "websocket.close", "code": CLOSE_SERVICE_RESTART}
                await self._send(message | {"reason": "replica draining; reconnect"})

    async def serve(self) -> None:
        """Receive frames until the client goes away or a frame is too large."""
        lifecycle = self.binding.lifecycle
        leave = lifecycle.join(self) if lifecycle is not None else None
        try:
            while self.state != "closed":
                message = await self._receive()
                if message["type"] != "websocket.receive":
                    break  # websocket.disconnect
                await self._frame(message.get("text"), message.get("bytes"))
        finally:
            if self.state != "closed":
                self._move("close")
            await self._stop_run()
            if leave is not None:
                leave()

    async def _frame(self, text: str | None, data: bytes | None) -> None:
        if text is None:
            size = len(data or b"")
            if size > self.binding.max_frame_bytes:
                await self._close_too_big()
                return
            await self._send_error("INVALID_FRAME", "frames are JSON text, not binary")
            return
        if len(text) > self.binding.max_frame_bytes // 4 and (
            len(text.encode()) > self.binding.max_frame_bytes
        ):
            await self._close_too_big()
            return
        try:
            kind, body = _classify(text)
            if kind == "cancel":
                await self._cancel(body)
            elif kind == "attach":
                await self._attach(body)
            else:
                await self._start(body)
        except _FrameError as error:
            await self._send_error(error.code, error.message, error.address)

    async def _close_too_big(self) -> None:
        self._move("close")
        await self._stop_run()
        reason = f"frame exceeds {self.binding.max_frame_bytes} bytes"
        with contextlib.suppress(*_GONE):
            await self._send({"type": "websocket.close", "code": CLOSE_TOO_BIG, "reason": reason})

    async def _cancel(self, body: JsonObject) -> None:
        run_id = body.get("runId")
        if not isinstance(run_id, str):
            raise _FrameError("INVALID_FRAME", "a cancel frame needs a string runId")
        run, attached = self.run, self.attached
        if self.state != "running" or (run is None and attached is None):
            raise _FrameError(
                "NO_ACTIVE_RUN", f"no run is active on this socket (runId {run_id!r})"
            )
        if run is not None and run_id == run.run_id:
            run.cancel(by_client=True)
        elif run is None and attached is not None and run_id == attached.run_id:
            await request_cancel(self.binding, attached)  # its end reaches us in its log
        else:
            raise _FrameError("UNKNOWN_RUN", f"run {run_id!r} is not the active run")

    async def _start(self, body: JsonObject) -> None:
        address = _address(body)
        account = RunAccount.open(
            self.binding.metrics,
            agent=self.agent,
            transport="websocket",
            path=self.path,
            tenant=self.tenant,
            run_id=str((address or {}).get("runId", "-")),
        )
        try:
            run_input = self._decode(body, address)
        except _FrameError as error:
            account.close(refused_code=error.code)
            raise
        self._move("run")
        self.run = self.binding.start(self.runtime, run_input, self.tenant)
        self._pump = asyncio.create_task(self._forward(self.run, account))

    def _decode(self, body: JsonObject, address: JsonObject | None) -> RunInput:
        if self.state == "running":
            message = "a run is already active on this socket"
            raise _FrameError("RUN_IN_PROGRESS", message, address)
        if self.leaving or not self.binding.accepting:
            raise _FrameError(RUN_REFUSED_CODE, REFUSED_MESSAGE, address)
        try:
            return self.binding.decode(body, self.tenant)
        except DecodeError as error:
            raise _FrameError("INVALID_INPUT", str(error), address) from None
        except RunRefusedError as error:
            raise _FrameError(error.code, error.message, address) from None

    async def _attach(self, body: JsonObject) -> None:
        if self.state == "running":
            raise _FrameError("RUN_IN_PROGRESS", "a run is already active on this socket")
        thread_id, run_id, after = body.get("threadId"), body.get("runId"), body.get("lastEventId")
        after = 0 if after is None else after
        if not isinstance(thread_id, str) or not isinstance(run_id, str):
            raise _FrameError("INVALID_FRAME", "an attach frame needs string threadId and runId")
        if not isinstance(after, int) or isinstance(after, bool) or after < 0:
            raise _FrameError("INVALID_FRAME", "lastEventId counts frames received: an int >= 0")
        log = self.binding.context.run_log
        key = RunKey(self.tenant, thread_id, run_id)
        try:
            known = log is not None and await log.read(key, after) is not None
        except LogGapError as error:
            raise _FrameError(
                "EVENTS_EXPIRED", f"events up to {error.first - 1} are no longer held"
            ) from None
        if log is None or not known:
            raise _FrameError("UNKNOWN_RUN", f"no event log for run {run_id!r}")
        self._move("run")
        self.attached = key
        self._pump = asyncio.create_task(self._follow(log, key, after))

    async def _follow(self, log: RunLog, key: RunKey, after: int) -> None:
        """Send an attached run's logged and live frames, then go back to ``idle``."""
        try:
            async for batch in log.follow(key, after):
                async with self._send_lock:
                    await self._send_texts(batch)
        except (LookupError, LogGapError, *_GONE):
            pass
        finally:
            self.attached = None
            if self.state == "running" and self.run is None:
                await self._flush_deferred()
                self._move("ended")

    async def _forward(self, run: AguiRun, account: RunAccount) -> None:
        """Send the run's frames, batch by batch, then the refusals held back while it ran
        (:meth:`_send_error`), then go back to ``idle``."""
        try:
            while (batch := await run.next_batch()) is not None:
                async with self._send_lock:
                    await self._send_texts(batch)
                account.sent(batch)
        except _GONE:
            await run.aclose()
        finally:
            account.resumed(run.decisions)
            account.close()
            if self.run is run:
                self.run = None
                if self.state == "running":
                    await self._flush_deferred()
                    self._move("ended")
                    if self.leaving:
                        await self._close_leaving()

    async def _send_texts(self, texts: Sequence[str]) -> None:
        if self.batched:
            await self._send({"type": SEND_BATCH, "texts": texts})
            return
        for text in texts:
            await self._send({"type": "websocket.send", "text": text})

    async def _send_error(self, code: str, message: str, address: JsonObject | None = None) -> None:
        """A refusal: sent now when no run is active, else held back until the active run's
        terminal event is out, so it never lands among that run's events. ``address``
        (the refused run's ids) rides in ``metadata.interlock``."""
        frame = error_event(message, code)
        if address is not None:
            frame["metadata"] = {"interlock": address}
        if self.state == "running":
            if len(self._deferred) >= DEFERRED_LIMIT:
                await self._close_flooded()
                return
            self._deferred.append(dumps(frame))
            return
        async with self._send_lock:
            with contextlib.suppress(*_GONE):
                await self._send_texts([dumps(frame)])

    async def _flush_deferred(self) -> None:
        """Send the held-back refusals (the caller then moves to ``idle`` without awaiting,
        so none is appended after the last check)."""
        while self._deferred:
            frames, self._deferred = self._deferred, []
            async with self._send_lock:
                with contextlib.suppress(*_GONE):
                    await self._send_texts(frames)

    async def _close_flooded(self) -> None:
        reason = f"more than {DEFERRED_LIMIT} refused frames while a run was active"
        async with self._send_lock:
            with contextlib.suppress(*_GONE):
                await self._send({"type": "websocket.close", "code": 1008, "reason": reason})

    async def _stop_run(self) -> None:
        run, pump = self.run, self._pump
        if run is not None:
            await run.aclose()
        if pump is not None and not pump.done():
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump


def _address(body: JsonObject) -> JsonObject | None:
    """The ``threadId``/``runId`` a run frame names (strings only, each cut to 128 chars)."""
    input_body = body.get("input") if body.get("type") == "run" else body
    if not isinstance(input_body, dict):
        return None
    address: JsonObject = {}
    for key in ("threadId", "runId"):
        value = input_body.get(key)
        if isinstance(value, str):
            address[key] = value[:128]
    return address or None


def _classify(text: str) -> tuple[Literal["run", "cancel", "attach"], JsonObject]:
    """What a client frame asks for; raises :class:`_FrameError` for anything else."""
    try:
        frame: JsonValue = json.loads(text)
    except ValueError as error:
        raise _FrameError("INVALID_FRAME", f"the frame is not JSON: {error}") from None
    if not isinstance(frame, dict):
        raise _FrameError("INVALID_FRAME", "a frame is a JSON object")
    kind = frame.get("type")
    if kind in ("cancel", "attach"):
        return kind, frame
    if kind == "run":
        body = frame.get("input")
        if not isinstance(body, dict):
            raise _FrameError("INVALID_FRAME", 'a run frame carries its RunAgentInput in "input"')
        return "run", cast(JsonObject, body)
    if kind is None and "threadId" in frame:
        return "run", frame
    raise _FrameError(
        "INVALID_FRAME", 'expected a RunAgentInput, {"type":"run",…} or {"type":"cancel",…}'
    )


class WebSocketEndpoint:
    """The ASGI app of ``WS /agui/{agent}/ws``: authenticate, accept, serve one socket."""

    __slots__ = ("binding",)

    def __init__(self, binding: AguiBinding) -> None:
        self.binding = binding

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name: str = scope["path_params"]["agent"]
        runtime = self.binding.agent(name)
        try:
            tenant = self.binding.keys.tenant(
                Headers(scope=scope), QueryParams(scope.get("query_string", b""))
            )
        except Unauthorized as error:
            await _refuse(scope, receive, send, 401, str(error), "invalid_api_key")
            return
        if runtime is None:
            await _refuse(scope, receive, send, 404, f"no agent named {name!r}", "unknown_agent")
            return
        if (await receive())["type"] != "websocket.connect":
            return
        offered: list[str] = scope.get("subprotocols") or []
        accept: dict[str, Any] = {"type": "websocket.accept"}
        if SUBPROTOCOL in offered:
            accept["subprotocol"] = SUBPROTOCOL
        await send(accept)
        extensions: dict[str, Any] = scope.get("extensions") or {}
        session = WebSocketSession(
            self.binding,
            runtime,
            tenant,
            (receive, send),
            batched=SEND_BATCH in extensions,
            agent=name,
            path=scope["path"],
        )
        connections = self.binding.metrics.agui_connections
        connections["websocket"] += 1
        try:
            await session.serve()
        finally:
            connections["websocket"] -= 1


async def _refuse(
    scope: Scope, receive: Receive, send: Send, status: int, message: str, code: str
) -> None:
    """Refuse the handshake: ``status`` with ``{"error": {"message", "code"}}``."""
    body = json.dumps({"error": {"message": message, "code": code}}).encode()
    await deny_websocket(scope, receive, send, status, body)
