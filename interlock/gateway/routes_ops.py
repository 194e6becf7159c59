"""Operational endpoints: liveness, readiness, Prometheus metrics and the model list.

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
from interlock.gateway.headers import NOT_SENT
from interlock.gateway.lifecycle import Lifecycle
from interlock.gateway.metrics import CONTENT_TYPE
from interlock.gateway.proxy import Proxy, ProxyError, json_response
from interlock.transcript import JsonValue


def routes(
    proxy: Proxy, openai: Dialect, gemini: Dialect, *, lifecycle: Lifecycle | None = None
) -> list[BaseRoute]:
    """``/livez``, ``/healthz``, ``/readyz``, ``/metrics``, ``/v1/models`` (OpenAI) and
    ``/v1beta/models`` (Gemini)."""
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
        return PlainTextResponse(proxy.metrics.render(), media_type=CONTENT_TYPE)

    async def openai_models(http_request: HttpRequest) -> Response:
        try:
            proxy.tenant(http_request)
        except ProxyError as error:
            return json_response(
                openai.error(error.status, error.message, code=error.code), error.status, NOT_SENT
            )
        data: list[JsonValue] = [
            {"id": name, "object": "model", "created": 0, "owned_by": route.upstream.name}
            for name, route in sorted(proxy.routes.items())
        ]
        return json_response({"object": "list", "data": data}, 200, NOT_SENT)

    async def gemini_models(http_request: HttpRequest) -> Response:
        try:
            proxy.tenant(http_request)
        except ProxyError as error:
            return json_response(
                gemini.error(error.status, error.message, code=error.code), error.status, NOT_SENT
            )
        models: list[JsonValue] = [
            {
                "name": f"models/{name}",
                "displayName": name,
                "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
            }
            for name in sorted(proxy.routes)
        ]
        return json_response({"models": models}, 200, NOT_SENT)

    return [
        Route("/livez", healthz, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/v1/models", openai_models, methods=["GET"]),
        Route("/v1beta/models", gemini_models, methods=["GET"]),
    ]
