"""The AG-UI binding: agents from ``[[agents]]`` served to frontends over SSE and WebSocket.

``POST /agui/{agent}`` streams one run as server-sent events; ``WS /agui/{agent}/ws``
carries runs one after another (with cancel) on one socket. Both run the core loop over a
server-owned thread and speak AG-UI 1.0 through :mod:`interlock.codecs.agui`. See
``docs/agui.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute

from interlock.gateway.agui._agents import (
    AgentRuntime,
    ProviderScope,
    RunToolsError,
    ToolNameConflictError,
    ToolProvider,
    build_agent,
    load_tool,
)
from interlock.gateway.agui._attach import handle_events, handle_thread
from interlock.gateway.agui._binding import KEEPALIVE_SECONDS, AguiBinding
from interlock.gateway.agui._cancel import CANCEL_POLL_SECONDS, handle_cancel, request_cancel
from interlock.gateway.agui._context import OUTBOX_LIMIT, STALL_SECONDS, RunContext
from interlock.gateway.agui._lease import ThreadLocks
from interlock.gateway.agui._model import UPSTREAM_CODES, UpstreamChatModel
from interlock.gateway.agui._outbox import Outbox
from interlock.gateway.agui._playground import handle_agents, handle_page, handle_script
from interlock.gateway.agui._routed import RoutedModel
from interlock.gateway.agui._run import AguiRun
from interlock.gateway.agui._server import (
    SEND_BATCH,
    SERVER_OPTIONS,
    WRITE_STALL_SECONDS,
    LeanWebSocketProtocol,
    StallLimitedHttpProtocol,
)
from interlock.gateway.agui._sse import handle_post
from interlock.gateway.agui._threads import Plan, RunRefusedError, reconcile
from interlock.gateway.agui._ws import SessionState, WebSocketEndpoint, WebSocketSession
from interlock.gateway.auth import KeyRing
from interlock.gateway.stores import MemoryBackend, RunLog

if TYPE_CHECKING:
    from interlock.gateway.app import Gateway
    from interlock.gateway.proxy import Route as ModelRouting


def binding_routes(binding: AguiBinding) -> list[BaseRoute]:
    """The AG-UI endpoints over ``binding``: runs (SSE, WebSocket), hydrate, re-attach."""

    async def post(http_request: HttpRequest) -> HttpResponse:
        return await handle_post(binding, http_request)

    async def thread(http_request: HttpRequest) -> HttpResponse:
        return await handle_thread(binding, http_request)

    async def events(http_request: HttpRequest) -> HttpResponse:
        return await handle_events(binding, http_request)

    async def agents(http_request: HttpRequest) -> HttpResponse:
        return await handle_agents(binding, http_request)

    async def cancel(http_request: HttpRequest) -> HttpResponse:
        return await handle_cancel(binding, http_request)

    return [
        Route("/", handle_page, methods=["GET"]),
        Route("/playground/app.js", handle_script, methods=["GET"]),
        Route("/agui", agents, methods=["GET"]),
        Route("/agui/{agent}", post, methods=["POST"]),
        Route("/agui/{agent}/threads/{thread}", thread, methods=["GET"]),
        Route("/agui/{agent}/threads/{thread}/runs/{run}/events", events, methods=["GET"]),
        Route("/agui/{agent}/threads/{thread}/runs/{run}/cancel", cancel, methods=["POST"]),
        WebSocketRoute("/agui/{agent}/ws", WebSocketEndpoint(binding)),
    ]


def gateway_binding(gateway: Gateway) -> AguiBinding:
    """The binding for a gateway's configured agents (models call their routed upstream)."""
    routes = gateway.proxy.routes
    agents = {
        config.name: build_agent(config, routes, chat_model(gateway, routes[config.model]))
        for config in gateway.config.agents
    }
    return AguiBinding(
        agents=agents,
        context=RunContext(
            store=gateway.store,
            seal_key=gateway.seal_key(),
            run_log=_run_log(gateway),
            lease_seconds=gateway.config.store.thread_lease_seconds,
            lease_wait_seconds=gateway.config.store.thread_lease_wait_seconds,
            tracer=gateway.proxy.operations.tracer,
            usage=gateway.proxy.operations.ledger,
            operations=gateway.proxy.operations,
            # other processes may share the store and ask for a cancel through it
            cancel_poll_seconds=None
            if isinstance(gateway.store.backend, MemoryBackend)
            else CANCEL_POLL_SECONDS,
        ),
        keys=KeyRing(gateway.config.server.api_keys),
        max_frame_bytes=gateway.config.server.max_body_bytes,
        metrics=gateway.metrics,
        lifecycle=gateway.lifecycle,
    )


def chat_model(gateway: Gateway, route: ModelRouting) -> UpstreamChatModel:
    """An agent's model: through the gateway's router when the model is routed."""
    router = gateway.proxy.router
    required = route.model.signatures_required
    if router is None or not route.model.routed:
        return UpstreamChatModel(route.upstream, signatures_required=required)
    routed = RoutedModel(router, route, gateway.proxy)
    return UpstreamChatModel(route.upstream, routed, signatures_required=required)


def _run_log(gateway: Gateway) -> RunLog:
    """The run event log; with replicas, runs record their owner, and a follower ends the
    log of a run whose owner died (``RUN_OWNER_LOST``)."""
    replicas = gateway.replicas
    if replicas is None:
        return RunLog(gateway.store.backend)
    return RunLog(gateway.store.backend, owner=replicas.replica_id, owner_alive=replicas.alive)


def routes(gateway: Gateway) -> Sequence[BaseRoute]:
    """The route module the app mounts: ``POST /agui/{agent}`` and ``WS /agui/{agent}/ws``."""
    return binding_routes(gateway_binding(gateway))


__all__ = [
    "CANCEL_POLL_SECONDS",
    "KEEPALIVE_SECONDS",
    "OUTBOX_LIMIT",
    "SEND_BATCH",
    "SERVER_OPTIONS",
    "STALL_SECONDS",
    "UPSTREAM_CODES",
    "WRITE_STALL_SECONDS",
    "AgentRuntime",
    "AguiBinding",
    "AguiRun",
    "LeanWebSocketProtocol",
    "Outbox",
    "Plan",
    "ProviderScope",
    "RunContext",
    "RunRefusedError",
    "RunToolsError",
    "SessionState",
    "StallLimitedHttpProtocol",
    "ThreadLocks",
    "ToolNameConflictError",
    "ToolProvider",
    "UpstreamChatModel",
    "WebSocketEndpoint",
    "WebSocketSession",
    "binding_routes",
    "build_agent",
    "gateway_binding",
    "load_tool",
    "reconcile",
    "request_cancel",
    "routes",
]
