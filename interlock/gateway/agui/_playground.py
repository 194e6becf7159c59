"""The playground page ``interlock serve`` answers at ``/``: plain JavaScript, no build step.

``GET /`` is the page, ``GET /playground/app.js`` its script (both package data of
:mod:`interlock.gateway.playground`), ``GET /agui`` the agents it offers
(``{"agents": [{"name", "approvalStyle"}]}``; with API keys, only for a valid key).
"""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse

from interlock.gateway.agui._binding import AguiBinding
from interlock.gateway.agui._sse import error_response
from interlock.gateway.auth import Unauthorized
from interlock.gateway.proxy import json_response
from interlock.transcript import JsonValue

_ASSETS = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
}


def _asset(name: str) -> HttpResponse:
    text = resources.files("interlock.gateway.playground").joinpath(name).read_text("utf-8")
    return HttpResponse(text, media_type=_ASSETS[name], headers={"cache-control": "no-cache"})


async def handle_page(_: HttpRequest) -> HttpResponse:
    """``GET /``: the playground page."""
    return _asset("index.html")


async def handle_script(_: HttpRequest) -> HttpResponse:
    """``GET /playground/app.js``: its script."""
    return _asset("app.js")


async def handle_agents(binding: AguiBinding, http_request: HttpRequest) -> HttpResponse:
    """``GET /agui``: the agents served, for the page's picker."""
    try:
        binding.keys.tenant(http_request.headers, http_request.query_params)
    except Unauthorized as error:
        return error_response(401, str(error), "invalid_api_key")
    agents: list[JsonValue] = [
        {"name": name, "approvalStyle": runtime.approval_style}
        for name, runtime in binding.agents.items()
    ]
    return json_response({"agents": agents}, 200)
