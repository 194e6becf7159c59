"""Hydrate and re-attach: a reloaded page gets its thread back and the run it left.

- ``GET /agui/{agent}/threads/{threadId}`` → JSON: the thread as a run would end it
  (``events``: ``STATE_SNAPSHOT``?, ``MESSAGES_SNAPSHOT``), its open ``interrupts`` and
  ``pendingToolCallIds``, and ``run``: the thread's latest logged run (``runId``,
  ``running``, ``lastEventId``) while its event log is held.
- ``GET /agui/{agent}/threads/{threadId}/runs/{runId}/events`` → server-sent events: the
  run's frames after ``Last-Event-ID`` (header, or ``?after=``; none: from the first),
  then the live ones until its terminal event. Each frame carries ``id: <n>``.

Both are scoped to the caller's tenant; another tenant's thread or run is unknown (404).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse
from starlette.responses import StreamingResponse

from interlock.codecs.agui import parse_confirm_changes_call_id
from interlock.codecs.agui import thread_view as render_thread
from interlock.gateway.agui._binding import AguiBinding
from interlock.gateway.agui._sse import PING, SSE_HEADERS, error_response, sse_frames
from interlock.gateway.agui._threads import open_client_calls
from interlock.gateway.auth import Unauthorized
from interlock.gateway.proxy import json_response
from interlock.gateway.stores import CorruptThreadError, LogGapError, RunKey, RunLog
from interlock.transcript import JsonObject


def request_tenant(binding: AguiBinding, http_request: HttpRequest) -> str | HttpResponse:
    """The caller's tenant (an error response for an unknown agent or a bad key)."""
    name = http_request.path_params["agent"]
    if binding.agent(name) is None:
        return error_response(404, f"no agent named {name!r}", "unknown_agent")
    try:
        return binding.keys.tenant(http_request.headers, http_request.query_params)
    except Unauthorized as error:
        return error_response(401, str(error), "invalid_api_key")


async def handle_thread(binding: AguiBinding, http_request: HttpRequest) -> HttpResponse:
    """``GET /agui/{agent}/threads/{threadId}`` (module docstring)."""
    tenant = request_tenant(binding, http_request)
    if isinstance(tenant, HttpResponse):
        return tenant
    runtime = binding.agents[http_request.path_params["agent"]]
    thread_id: str = http_request.path_params["thread"]
    context = binding.context
    try:
        thread = await context.store.load_thread(tenant, thread_id)
    except CorruptThreadError as error:
        return error_response(500, str(error), "thread_corrupt")
    log = context.run_log
    status = None if log is None else await log.latest(tenant, thread_id)
    if thread is None and status is None:
        return error_response(404, f"no thread {thread_id!r}", "unknown_thread")
    messages = thread.messages if thread is not None else ()
    pending = [str(entry.get("id")) for entry in thread.pending_interrupts] if thread else []
    confirms = [entry for entry in pending if parse_confirm_changes_call_id(entry) is not None]
    waiting = [*open_client_calls(messages), *confirms]
    body: JsonObject = {
        "threadId": thread_id,
        **render_thread(
            messages,
            state=thread.state if thread is not None else None,
            pending=pending,
            waiting_calls=waiting,
            seal_key=context.seal_key,
            tenant=tenant,
            approval_style=runtime.approval_style,
            limit=context.snapshot_limit,
            fixed_tools=runtime.fixed_tools,
        ),
    }
    if status is not None:
        body["run"] = {
            "runId": status.run_id,
            "running": not status.ended,
            "lastEventId": status.last_event_id,
        }
    return json_response(body, 200)


def _after(http_request: HttpRequest) -> int | None:
    raw = http_request.headers.get("last-event-id") or http_request.query_params.get("after")
    if raw is None or raw == "":
        return 0
    return int(raw) if raw.isdigit() else None


async def handle_events(binding: AguiBinding, http_request: HttpRequest) -> HttpResponse:
    """``GET …/runs/{runId}/events`` (module docstring)."""
    tenant = request_tenant(binding, http_request)
    if isinstance(tenant, HttpResponse):
        return tenant
    after = _after(http_request)
    if after is None:
        message = "Last-Event-ID (or ?after=) is the number of a frame already received"
        return error_response(400, message, "invalid_last_event_id")
    log = binding.context.run_log
    params = http_request.path_params
    key = RunKey(tenant, params["thread"], params["run"])
    try:
        known = log is not None and await log.read(key, after) is not None
    except LogGapError as error:
        message = f"events up to {error.first - 1} are no longer held; reload the thread"
        return error_response(410, message, "events_expired")
    if log is None or not known:
        return error_response(404, f"no event log for run {key.run_id!r}", "unknown_run")
    stream = follow_stream(log, key, after, binding.keepalive_seconds)
    return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)


async def follow_stream(
    log: RunLog, key: RunKey, after: int, keepalive_seconds: float
) -> AsyncIterator[bytes]:
    """The SSE body of a re-attached run: logged frames with their ids, then live ones."""
    position = after
    try:
        async for batch in log.follow(key, after, idle_seconds=keepalive_seconds):
            if not batch:
                yield PING
                continue
            yield sse_frames(batch, first_id=position + 1)
            position += len(batch)
    except (LookupError, LogGapError):  # expired while followed: the stream just ends
        return
