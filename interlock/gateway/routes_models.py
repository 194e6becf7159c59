"""Model metadata endpoints as both SDK families call them, and 404s in the caller's shape.

The openai SDK lists ``GET /v1/models`` and retrieves ``GET /v1/models/{id}``; google-genai
with a custom base URL lists ``GET /v1/models`` too and gets ``GET /v1/models/{name}``
(``/v1beta/…`` by default). One path, two SDKs: each answer carries both shapes' fields
(``data`` and ``models``; ``id``/``object`` and ``name``/``displayName``): each SDK reads its
own and ignores the rest. ``:countTokens`` is counted by the upstream when it can count
(:mod:`.counting`), else estimated; ``x-interlock-translation`` says which.

A path no route serves answers 404 in the caller's dialect: Gemini's when the request
carries a Google key header or the path is under ``/v1beta``, OpenAI's otherwise.
"""

from __future__ import annotations

import time

from starlette.exceptions import HTTPException
from starlette.requests import Request as HttpRequest
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from interlock.gateway.access_log import AccessRecord
from interlock.gateway.counting import count_request
from interlock.gateway.dialects import Dialect
from interlock.gateway.headers import NOT_SENT
from interlock.gateway.proxy import Proxy, ProxyError, json_response
from interlock.transcript import JsonObject, JsonValue

METHODS: list[JsonValue] = ["generateContent", "streamGenerateContent", "countTokens"]


def wants_gemini(http_request: HttpRequest) -> bool:
    """True when the caller speaks Gemini (a Google key or client header, or a v1beta path)."""
    headers = http_request.headers
    return (
        "x-goog-api-key" in headers
        or "x-goog-api-client" in headers
        or http_request.url.path.startswith("/v1beta/")
        or "key" in http_request.query_params
    )


def _model(name: str, owner: str) -> JsonObject:
    return {
        "id": name,
        "object": "model",
        "created": 0,
        "owned_by": owner,
        "name": f"models/{name}",
        "displayName": name,
        "supportedGenerationMethods": list(METHODS),
    }


def routes(proxy: Proxy, openai: Dialect, gemini: Dialect) -> list[BaseRoute]:
    """Model list and get (both SDKs), ``:countTokens``."""

    def error(http_request: HttpRequest, failure: ProxyError) -> Response:
        dialect = gemini if wants_gemini(http_request) else openai
        body = dialect.error(
            failure.status, failure.message, code=failure.code, param=failure.param
        )
        return json_response(body, failure.status, NOT_SENT)

    async def list_models(http_request: HttpRequest) -> Response:
        try:
            proxy.tenant(http_request)
        except ProxyError as failure:
            return error(http_request, failure)
        models: list[JsonValue] = [
            _model(name, route.upstream.name) for name, route in sorted(proxy.routes.items())
        ]
        return json_response({"object": "list", "data": models, "models": models}, 200, NOT_SENT)

    async def get_model(http_request: HttpRequest) -> Response:
        try:
            proxy.tenant(http_request)
            name = str(http_request.path_params["model"]).removeprefix("models/")
            ingress = gemini if wants_gemini(http_request) else openai
            route = proxy.route(name, ingress)
        except ProxyError as failure:
            return error(http_request, failure)
        return json_response(_model(name, route.upstream.name), 200, NOT_SENT)

    async def count_tokens(http_request: HttpRequest) -> Response:
        record = AccessRecord(
            method="POST",
            path=http_request.url.path,
            endpoint="countTokens",
            started=time.perf_counter(),
        )
        model = str(http_request.path_params["model"])
        try:
            counted = await count_request(proxy, gemini, http_request, record, path_model=model)
            answer = json_response({"totalTokens": counted.tokens}, 200, counted.label)
        except ProxyError as failure:
            record.error = failure.code or "error"
            answer = error(http_request, failure)
        proxy.finish(record, answer.status_code)
        return answer

    return [
        Route("/v1/models", list_models, methods=["GET"]),
        Route("/v1beta/models", list_models, methods=["GET"]),
        *(
            Route(f"/{version}/models/{{model}}:countTokens", count_tokens, methods=["POST"])
            for version in ("v1", "v1beta")
        ),
        Route("/v1/models/{model:path}", get_model, methods=["GET"]),
        Route("/v1beta/models/{model:path}", get_model, methods=["GET"]),
    ]


def not_found_handler(openai: Dialect, gemini: Dialect):
    """Starlette exception handler: 404 and 405 in the caller's dialect."""

    async def handler(http_request: HttpRequest, exception: Exception) -> Response:
        status = exception.status_code if isinstance(exception, HTTPException) else 404
        message = (
            f"no such endpoint: {http_request.method} {http_request.url.path}"
            if status == 404
            else f"method {http_request.method} is not allowed on {http_request.url.path}"
        )
        dialect = gemini if wants_gemini(http_request) else openai
        code = "not_found" if status == 404 else "method_not_allowed"
        return json_response(dialect.error(status, message, code=code), status, NOT_SENT)

    return handler
