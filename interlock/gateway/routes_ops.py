"""Operational endpoints: liveness, Prometheus metrics and the model list."""

from __future__ import annotations

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from interlock.gateway.dialects import Dialect
from interlock.gateway.metrics import CONTENT_TYPE
from interlock.gateway.proxy import Proxy, ProxyError, json_response


def routes(proxy: Proxy, openai: Dialect, gemini: Dialect) -> list[BaseRoute]:
    """``/healthz``, ``/metrics``, ``/v1/models`` (OpenAI) and ``/v1beta/models`` (Gemini)."""

    async def healthz(_: HttpRequest) -> Response:
        return JSONResponse({"status": "ok"})

    async def metrics(_: HttpRequest) -> Response:
        return PlainTextResponse(proxy.metrics.render(), media_type=CONTENT_TYPE)

    async def openai_models(http_request: HttpRequest) -> Response:
        try:
            proxy.tenant(http_request)
        except ProxyError as error:
            return json_response(
                openai.error(error.status, error.message, code=error.code), error.status
            )
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": route.upstream.name}
            for name, route in sorted(proxy.routes.items())
        ]
        return JSONResponse({"object": "list", "data": data})

    async def gemini_models(http_request: HttpRequest) -> Response:
        try:
            proxy.tenant(http_request)
        except ProxyError as error:
            return json_response(
                gemini.error(error.status, error.message, code=error.code), error.status
            )
        models = [
            {
                "name": f"models/{name}",
                "displayName": name,
                "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
            }
            for name in sorted(proxy.routes)
        ]
        return JSONResponse({"models": models})

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/v1/models", openai_models, methods=["GET"]),
        Route("/v1beta/models", gemini_models, methods=["GET"]),
    ]
