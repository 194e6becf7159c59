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
from interlock.gateway.agui._run import AguiRun
from interlock.gateway.agui._threads import RunRefusedError
from interlock.gateway.auth import Unauthorized
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


async def run_stream(
    run: AguiRun, keepalive_seconds: float, account: RunAccount | None = None
) -> AsyncIterator[bytes]:
    """The SSE body of one run, with keep-alive comments; cancels the run on disconnect.

    Each chunk is everything the run has ready, so the server writes once per batch; the
    next batch is taken only once this one is sent (the ASGI server waits for a slow
    client's socket to drain), which is what makes a slow client hold its run back.
    ``account`` (if any) counts what went out and is closed when the stream ends.
    """
    connections = account.metrics.agui_connections if account is not None else None
    if connections is not None:
        connections["sse"] += 1
    sent = 0
    try:
        while True:
            try:
                async with asyncio.timeout(keepalive_seconds):
                    batch = await run.next_batch()
            except TimeoutError:
                yield PING
                continue
            if batch is None:
                return
            yield sse_frames(batch, first_id=sent + 1)
            sent += len(batch)
            if account is not None:
                account.sent(batch)
    finally:
        if connections is not None:
            connections["sse"] -= 1
        await run.aclose()
        if account is not None:
            account.resumed(run.decisions)
            account.close()


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
    return RunResponse(run, run_stream(run, binding.keepalive_seconds, account))


class RunResponse(StreamingResponse):
    """A run's SSE body (``text/event-stream``, :data:`SSE_HEADERS`), ended early when
    the client disconnects.

    Starlette's own response watches for the disconnect in an extra task group and
    cancels the body; this one watches in one plain task and closes the run's outbox
    instead, which ends the body at its next wait the same way (the body's ``finally``
    then leaves the run detached or cancels it) at a fraction of the cost per request.
    """

    def __init__(self, run: AguiRun, body: AsyncIterator[bytes]) -> None:
        super().__init__(body, media_type="text/event-stream", headers=SSE_HEADERS)
        self.run = run

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        listener = asyncio.get_running_loop().create_task(self._until_disconnect(receive))
        try:
            await self.stream_response(send)
        finally:
            listener.cancel()

    async def _until_disconnect(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        self.run.outbox.close()


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
    try:
        tenant = binding.keys.tenant(http_request.headers, http_request.query_params)
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
