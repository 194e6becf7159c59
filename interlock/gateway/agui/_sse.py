"""``POST /agui/{agent}``: one run per request, streamed as server-sent events.

Frames are ``data: <json>\\n\\n`` (LF only, one ``data:`` line: JSON text never holds a raw
newline), flushed as they come; a ``: ping`` comment goes out whenever the stream has
been silent for the keep-alive interval. Anything wrong with the request itself (unknown
agent, a body that is not ``content-type: application/json`` — an HTML form cannot post
one —, bad key, oversized or malformed body, invalid ``RunAgentInput``) is an HTTP 4xx
with a JSON body and no stream; a refusal that needs the thread or the seal key is a
``RUN_ERROR`` inside the stream. A client that goes away leaves its run detached (it goes on
while a client may re-attach, see :mod:`._attach`; without a run log it is cancelled).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from interlock.codecs.agui import RunInput
from interlock.gateway.agui._binding import AguiBinding, error_event
from interlock.gateway.agui._context import dumps
from interlock.gateway.agui._observe import RunAccount
from interlock.gateway.agui._outbox import Outbox
from interlock.gateway.agui._run import AguiRun
from interlock.gateway.agui._threads import RunRefusedError
from interlock.gateway.auth import DEFAULT_TENANT, Unauthorized
from interlock.gateway.proxy import ProxyError, json_response, parse_payload, read_body
from interlock.transcript import DecodeError, JsonObject

PING = b": ping\n\n"
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def error_response(status: int, message: str, code: str, param: str | None = None) -> HttpResponse:
    """A 4xx answer: ``{"error": {"message", "code", "param"?}}``."""
    error: JsonObject = {"message": message, "code": code}
    if param:
        error["param"] = param
    return json_response({"error": error}, status)


def is_json(content_type: str) -> bool:
    """True for ``application/json`` with or without parameters (``; charset=utf-8``)."""
    return content_type.partition(";")[0].strip().lower() == "application/json"


def sse_frames(frames: Sequence[str], first_id: int | None = None) -> bytes:
    """Frames (JSON text) as SSE ``data:`` blocks, with ``id: <n>`` lines counting from
    ``first_id`` (the frames' event ids in their run's log) when given."""
    if first_id is None:
        return "".join([f"data: {frame}\n\n" for frame in frames]).encode()
    return "".join(
        [f"id: {first_id + offset}\ndata: {frame}\n\n" for offset, frame in enumerate(frames)]
    ).encode()


async def send_run(
    run: AguiRun, send: Send, keepalive_seconds: float, account: RunAccount | None = None
) -> None:
    """Send the SSE body of one run (after its head), with keep-alive comments; a run
    whose client went away is left detached or cancelled (:meth:`AguiRun.aclose`).

    Each ``http.response.body`` is everything the run has ready, so the server writes once
    per batch; the next batch is taken only once this one is sent (the ASGI server waits
    for a slow client's socket to drain), which is what makes a slow client hold its run
    back. ``account`` (if any) counts what went out and is closed when the body ends.
    """
    connections = account.metrics.agui_connections if account is not None else None
    if connections is not None:
        connections["sse"] += 1
    sent = 0
    keepalive = Keepalive(keepalive_seconds, run.outbox)
    try:
        while True:
            keepalive.waiting = True
            keepalive.since = keepalive.clock()
            batch = await run.next_batch()
            keepalive.waiting = False
            if batch is None:
                return
            if not batch:  # silent for keepalive_seconds: nudged by the keep-alive timer
                await send({"type": "http.response.body", "body": PING, "more_body": True})
                continue
            body = sse_frames(batch, first_id=sent + 1)
            await send({"type": "http.response.body", "body": body, "more_body": True})
            sent += len(batch)
            if account is not None:
                account.sent(batch)
    finally:
        keepalive.stop()
        if connections is not None:
            connections["sse"] -= 1
        await run.aclose()
        if account is not None:
            account.resumed(run.decisions)
            account.close()


class Keepalive:
    """One timer per SSE body that nudges its run's outbox (:meth:`Outbox.nudge`) once the
    body has waited ``seconds`` for a batch: a ``: ping`` is then due.

    The body sets :attr:`waiting` and :attr:`since` (:attr:`clock` time) around each wait;
    the timer, when it fires early (the body sent something meanwhile, or is sending),
    sets itself again for the wait's own deadline, so a ping goes out after exactly the
    silences an ``asyncio.timeout`` around each wait would find, without a timeout per
    batch. :meth:`stop` cancels the timer.
    """

    __slots__ = ("_loop", "_outbox", "_timer", "clock", "seconds", "since", "waiting")

    def __init__(self, seconds: float, outbox: Outbox) -> None:
        self._loop = asyncio.get_running_loop()
        self._outbox = outbox
        self.seconds = seconds
        self.clock = self._loop.time
        self.since = self.clock()
        self.waiting = False
        self._timer = self._loop.call_at(self.since + seconds, self._fire)

    def _fire(self) -> None:
        now = self.clock()
        if not self.waiting:
            due = now + self.seconds  # a wait that starts later is due later still
        elif now >= (due := self.since + self.seconds) - _EARLY:
            self._outbox.nudge()
            due = now + self.seconds
        self._timer = self._loop.call_at(due, self._fire)

    def stop(self) -> None:
        self._timer.cancel()


_EARLY = 0.001
"""A timer may fire up to a millisecond before its time (libuv counts milliseconds)."""


async def _refused(frame: JsonObject) -> AsyncIterator[bytes]:
    yield sse_frames([dumps(frame)])


async def handle_post(binding: AguiBinding, http_request: HttpRequest) -> HttpResponse:
    """Parse, delegate to a run, stream it back; every request is accounted for."""
    name = http_request.path_params["agent"]
    runtime = binding.agent(name)
    account = RunAccount.open(
        binding.metrics,
        agent=name if runtime is not None else "unknown",
        transport="sse",
        path=http_request.scope["path"],
        tenant="",
        run_id="-",
    )
    prepared = await _prepare(binding, http_request, runtime is not None)
    if isinstance(prepared, _Refusal):
        account.record.status = prepared.response.status_code
        account.close(refused_code=prepared.code)
        return prepared.response
    assert runtime is not None
    run_input, tenant = prepared
    account.record.tenant = tenant
    account.record.run_id = run_input.run_id[:128]
    run = binding.start(runtime, run_input, tenant)
    return RunResponse(run, binding.keepalive_seconds, account)


class RunResponse(StreamingResponse):
    """A run's SSE answer (``text/event-stream``, :data:`SSE_HEADERS`): the head, then
    :func:`send_run`, ended early when the client disconnects.

    Starlette's own response watches for the disconnect in an extra task group and
    cancels the body; this one watches in one plain task and closes the run's outbox
    instead, which ends the body at its next wait the same way (the body then leaves the
    run detached or cancels it) at a fraction of the cost per request. It writes the same
    messages as Starlette's streaming response (the head Starlette builds for it once).
    """

    def __init__(self, run: AguiRun, keepalive_seconds: float, account: RunAccount) -> None:
        # Starlette's __init__ builds the same head every time: taken from _SSE_HEAD.
        self.status_code = 200
        self.media_type = "text/event-stream"
        self.background = None
        self.raw_headers = list(_SSE_HEAD)
        self.run = run
        self.keepalive_seconds = keepalive_seconds
        self.account = account

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        listener = asyncio.get_running_loop().create_task(self._until_disconnect(receive))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            await send_run(self.run, send, self.keepalive_seconds, self.account)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            listener.cancel()

    async def _until_disconnect(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.run.outbox.close()


_SSE_HEAD: tuple[tuple[bytes, bytes], ...] = tuple(
    StreamingResponse((), media_type="text/event-stream", headers=SSE_HEADERS).raw_headers
)
"""The head Starlette writes for a streaming ``text/event-stream`` answer with
:data:`SSE_HEADERS` (built once)."""


@dataclass(frozen=True, slots=True)
class _Refusal:
    response: HttpResponse
    code: str


async def _prepare(
    binding: AguiBinding, http_request: HttpRequest, known_agent: bool
) -> tuple[RunInput, str] | _Refusal:
    """The decoded input and tenant of a run request, or its refusal."""
    if not known_agent:
        name = http_request.path_params["agent"]
        return _error(404, f"no agent named {name!r}", "unknown_agent")
    if not is_json(http_request.headers.get("content-type", "")):
        message = "a run is posted as content-type: application/json"
        return _error(415, message, "unsupported_media_type")
    keys = binding.keys
    try:  # without keys everyone is the default tenant: no query string parsed for it
        tenant = (
            keys.tenant(http_request.headers, http_request.query_params)
            if keys.required
            else DEFAULT_TENANT
        )
    except Unauthorized as error:
        return _error(401, str(error), "invalid_api_key")
    try:
        payload = parse_payload(await read_body(http_request, binding.max_frame_bytes))
        return binding.decode(payload, tenant), tenant
    except ProxyError as error:
        return _error(error.status, error.message, error.code or "invalid_request")
    except DecodeError as error:
        return _error(400, str(error), "invalid_input", error.path)
    except RunRefusedError as error:
        refused = error_event(error.message, error.code)
        stream = StreamingResponse(
            _refused(refused), media_type="text/event-stream", headers=SSE_HEADERS
        )
        return _Refusal(stream, error.code)


def _error(status: int, message: str, code: str, param: str | None = None) -> _Refusal:
    return _Refusal(error_response(status, message, code, param), code)
