"""Operational endpoints: liveness, readiness and Prometheus metrics.

``/livez`` (and its older name ``/healthz``) answers 200 while the process serves at all;
``/readyz`` answers 200 only while the replica takes new work, and 503 once it drains
(see :mod:`interlock.gateway.lifecycle`): load balancers route by readiness, process
supervisors restart by liveness.
"""

from __future__ import annotations

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from interlock.gateway.dialects import Dialect
from interlock.gateway.lifecycle import Lifecycle
from interlock.gateway.metrics import CONTENT_TYPE
from interlock.gateway.proxy import Proxy, ProxyError, json_response


def routes(
    proxy: Proxy, openai: Dialect, gemini: Dialect, *, lifecycle: Lifecycle | None = None
) -> list[BaseRoute]:
    """``/livez``, ``/healthz``, ``/readyz`` and ``/metrics`` (model listings: see
    :mod:`interlock.gateway.routes_models`)."""
    lifecycle = lifecycle or Lifecycle()

    async def healthz(_: HttpRequest) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(_: HttpRequest) -> Response:
        if lifecycle.accepting:
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": lifecycle.state}, status_code=503)

    async def metrics(http_request: HttpRequest) -> Response:
        try:
            proxy.tenant(http_request)  # with server.api_keys, metrics need a key too
        except ProxyError as error:
            return json_response(
                openai.error(error.status, error.message, code=error.code), error.status
            )
        text = proxy.metrics.render() + proxy.operations.render() + proxy.history.render()
        return PlainTextResponse(text, media_type=CONTENT_TYPE)

    return [
        Route("/livez", healthz, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
