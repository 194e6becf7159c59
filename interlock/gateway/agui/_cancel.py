"""Cancel a run from anywhere: ``POST /agui/{agent}/threads/{threadId}/runs/{runId}/cancel``,
and ``{"type": "cancel"}`` on a WebSocket attached to the run.

A run running in this process is cancelled at once; a run running in another process
sharing the store (another replica on Redis, another process on one SQLite file) gets
the request through the store (:meth:`~interlock.gateway.stores.RunLog.request_cancel`),
which its owner checks every ``RunContext.cancel_poll_seconds``. Either way the run ends
exactly as a cancel on its own WebSocket ends it: it saves the steps it completed (a tool
it cut off is recorded ``interrupted`` and never run again) and sends ``RUN_FINISHED``
with outcome ``cancelled`` to every client following it.

The HTTP answer waits up to ``AguiBinding.cancel_wait_seconds`` for the run's end:

- ``200`` ``{"threadId", "runId", "status": "cancelled", "event": <RUN_FINISHED>}``;
- ``202`` ``{"threadId", "runId", "status": "cancelling"}``: not ended yet (its owner is
  slow to check, or busy saving); follow its events to see the end;
- ``404`` ``unknown_run``: no such run for this caller (never started, another tenant's,
  or its log expired);
- ``409`` ``run_finished``: the run had already ended, or ended by itself before the
  cancel reached it (the message names its terminal event); nothing was cancelled.
"""

from __future__ import annotations

import json

from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse

from interlock.gateway.agui._attach import request_tenant
from interlock.gateway.agui._binding import AguiBinding
from interlock.gateway.agui._sse import error_response
from interlock.gateway.proxy import json_response
from interlock.gateway.stores import CancelRequest, RunKey
from interlock.transcript import JsonObject, JsonValue

CANCEL_POLL_SECONDS = 0.5
"""How often a run on a shared store checks for a cancel requested from another process."""


async def request_cancel(binding: AguiBinding, key: RunKey) -> CancelRequest:
    """Ask the run ``key`` to stop, wherever it runs; what was found (no waiting)."""
    run = binding.active.get(key)
    if run is not None:
        run.cancel(by_client=True)  # too late (saving) is fine: it then ends by itself
        return "requested"
    log = binding.context.run_log
    if log is None:
        return "unknown"
    return await log.request_cancel(key)


async def handle_cancel(binding: AguiBinding, http_request: HttpRequest) -> HttpResponse:
    """``POST …/runs/{runId}/cancel`` (module docstring)."""
    tenant = request_tenant(binding, http_request)
    if isinstance(tenant, HttpResponse):
        return tenant
    params = http_request.path_params
    key = RunKey(tenant, params["thread"], params["run"])
    found = await request_cancel(binding, key)
    unknown = f"no run {key.run_id!r} on thread {key.thread_id!r} (or its events expired)"
    if found == "unknown":
        return error_response(404, unknown, "unknown_run")
    log = binding.context.run_log
    wait = binding.cancel_wait_seconds if found == "requested" else 0.0
    text = None if log is None else await log.terminal(key, wait_seconds=wait)
    address: JsonObject = {"threadId": key.thread_id, "runId": key.run_id}
    if text is None:
        if found == "ended":  # its log expired in between
            return error_response(404, unknown, "unknown_run")
        return json_response({**address, "status": "cancelling"}, 202)
    terminal: JsonValue = json.loads(text)
    assert isinstance(terminal, dict)
    if found == "requested" and _cancelled(terminal):
        return json_response({**address, "status": "cancelled", "event": terminal}, 200)
    message = (
        f"run {key.run_id!r} ended ({_describe(terminal)}) before a cancel could stop it; "
        "nothing was cancelled"
    )
    return error_response(409, message, "run_finished")


def _cancelled(terminal: JsonObject) -> bool:
    outcome = terminal.get("outcome")
    return (
        terminal.get("type") == "RUN_FINISHED"
        and isinstance(outcome, dict)
        and outcome.get("type") == "cancelled"
    )


def _describe(terminal: JsonObject) -> str:
    """``RUN_FINISHED`` with its outcome, or ``RUN_ERROR`` with its code."""
    if terminal.get("type") == "RUN_ERROR":
        return f"RUN_ERROR {terminal.get('code') or ''}".strip()
    outcome = terminal.get("outcome")
    kind = outcome.get("type") if isinstance(outcome, dict) else None
    return f"RUN_FINISHED, outcome {kind or 'success'}"
