"""Assemble the gateway: config → upstream clients, store, proxy → a Starlette app.

Routes come from *route modules*: functions ``(Gateway) -> list[BaseRoute]``. The proxy
and operational endpoints are registered here; another binding (AG-UI, say) plugs in by
passing its own module to :func:`create_app` (or appending to :data:`ROUTE_MODULES`),
without touching the handlers of the others.
"""

from __future__ import annotations

import contextlib
import gc
import os
import secrets
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp

from interlock.gateway import (
    access_log,
    agui,
    conversations,
    response_state,
    routes_admin,
    routes_models,
    routes_ops,
    routes_proxy,
)
from interlock.gateway.auth import KeyRing
from interlock.gateway.bodies import json_response
from interlock.gateway.config import (
    EMULATOR_SCHEME,
    GatewayConfig,
    ModelRoute,
    Protocol,
    UpstreamConfig,
)
from interlock.gateway.dialects import Dialect, dialect, ingress_dialects
from interlock.gateway.dispatch import GatewayApp
from interlock.gateway.guard import BrowserGuard, BrowserPolicy, FrontDoor, RefusalBody
from interlock.gateway.headers import NOT_SENT
from interlock.gateway.lifecycle import REFUSED_CODE, DrainGate, ErrorShape, Lifecycle
from interlock.gateway.metrics import Metrics
from interlock.gateway.operations import ProxyOperations
from interlock.gateway.provenance import ProvenanceIndex, vendor_dialects
from interlock.gateway.proxy import Proxy
from interlock.gateway.rate_limits import rate_limiter
from interlock.gateway.replicas import ReplicaRegistry, config_digests, is_shared
from interlock.gateway.routing_plan import plan_routes
from interlock.gateway.stores import ResponseIndex, Store, open_store
from interlock.gateway.tracing import Tracer
from interlock.gateway.upstream import Upstream, upstream_transport
from interlock.gateway.usage import UsageLedger
from interlock.gateway.vault import ReasoningVault
from interlock.transcript import JsonObject


@dataclass(slots=True, kw_only=True)
class Gateway:
    """Everything one gateway process holds; route modules read what they need from it."""

    config: GatewayConfig
    store: Store
    metrics: Metrics
    upstreams: dict[str, Upstream]
    ingress: dict[Protocol, Dialect]
    proxy: Proxy
    emulators: dict[str, object] = field(default_factory=dict[str, object])
    """In-process emulators serving ``emulator://`` upstreams, by upstream name."""
    lifecycle: Lifecycle = field(default_factory=Lifecycle)
    """Serving, draining or stopped (see :mod:`interlock.gateway.lifecycle`)."""
    replicas: ReplicaRegistry | None = None
    """With a shared store: this replica's entry among the live ones (see
    :mod:`interlock.gateway.replicas`); published while the app runs."""
    _seal_key: bytes | None = None

    def seal_key(self) -> bytes:
        """The key sealing reasoning handed to browsers (see :func:`seal_key`)."""
        if self._seal_key is None:
            self._seal_key = seal_key(self.config)
        return self._seal_key

    async def close(self) -> None:
        """Close every upstream client and the store."""
        await self.proxy.operations.close()  # flushes usage into the store first
        if self.proxy.router is not None:
            await self.proxy.router.close()
        for upstream in self.upstreams.values():
            await upstream.aclose()
        await self.store.close()


RouteModule = Callable[[Gateway], Sequence[BaseRoute]]


def proxy_routes(gateway: Gateway) -> Sequence[BaseRoute]:
    """The provider endpoints, the Responses state endpoints (:mod:`.response_state`) and
    the Conversations API (:mod:`.conversations`)."""
    responses = gateway.ingress["openai-responses"]
    return [
        *routes_proxy.routes(gateway.proxy, gateway.ingress),
        *response_state.routes(gateway.proxy, responses, gateway.upstreams),
        *conversations.routes(gateway.proxy, responses, gateway.upstreams),
    ]


def ops_routes(gateway: Gateway) -> Sequence[BaseRoute]:
    """Health, metrics and model listings."""
    return routes_ops.routes(
        gateway.proxy,
        gateway.ingress["openai-chat"],
        gateway.ingress["gemini"],
        lifecycle=gateway.lifecycle,
    ) + routes_models.routes(
        gateway.proxy, gateway.ingress["openai-chat"], gateway.ingress["gemini"]
    )


def agui_routes(gateway: Gateway) -> Sequence[BaseRoute]:
    """The AG-UI endpoints for the configured agents (see :mod:`interlock.gateway.agui`)."""
    return agui.routes(gateway)


def admin_routes(gateway: Gateway) -> Sequence[BaseRoute]:
    """The admin API behind ``[admin] key_env`` (see :mod:`interlock.gateway.routes_admin`)."""
    return routes_admin.routes(
        gateway.proxy.operations,
        gateway.config.operations.admin_key,
        gateway.ingress["openai-chat"],
    )


ROUTE_MODULES: list[RouteModule] = [ops_routes, proxy_routes, agui_routes, admin_routes]
"""Route modules every app gets, in order."""


def _emulator_transport(
    config: UpstreamConfig, models: Sequence[ModelRoute] = ()
) -> tuple[object, httpx.AsyncBaseTransport]:
    from interlock.emulators import create_emulator, emulator_app

    options: dict[str, Any] = {}
    if config.reasoning_dialect:
        options["reasoning_dialect"] = config.reasoning_dialect
    if config.issuer:
        options["issuer"] = config.issuer  # mints and accepts only its vendor's reasoning
    if config.protocol == "gemini":
        # The emulated models require thought signatures the way the config says they do.
        options["signature_rules"] = signature_rules(config.name, models)
    if config.protocol == "anthropic":
        # The emulated models take the effort levels the config gives them (else by name).
        options["effort_levels"] = effort_rules(config.name, models)
    # offload: the emulator's work runs on a worker thread, never on the gateway's event loop
    emulator = create_emulator(config.protocol, offload=True, **options)
    return emulator, httpx.ASGITransport(app=emulator_app(emulator))


def signature_rules(upstream: str, models: Sequence[ModelRoute]) -> dict[str, bool]:
    """Upstream model name → whether it requires Gemini thought signatures, for every model
    routed to ``upstream`` with ``thought_signatures`` set (``required`` wins a conflict)."""
    rules: dict[str, bool] = {}
    for model in models:
        required = model.signatures_required
        if required is None:
            continue
        for place in model.places:
            if place.upstream == upstream:
                rules[place.model] = rules.get(place.model, False) or required
    return rules


def effort_rules(upstream: str, models: Sequence[ModelRoute]) -> dict[str, tuple[str, ...]]:
    """Upstream model name → its configured Anthropic effort levels, for every model routed
    to ``upstream`` with ``effort_levels`` set (the first model naming it wins)."""
    rules: dict[str, tuple[str, ...]] = {}
    for model in models:
        if model.effort_levels is None:
            continue
        for place in model.places:
            if place.upstream == upstream:
                rules.setdefault(place.model, model.effort_levels)
    return rules


def build_gateway(
    config: GatewayConfig,
    *,
    transports: Mapping[str, httpx.AsyncBaseTransport] | None = None,
    store: Store | None = None,
    tracer: Tracer | None = None,
) -> Gateway:
    """A gateway for ``config``. ``transports`` (by upstream name) replace the network,
    e.g. an ``httpx.MockTransport`` in tests; ``emulator://`` upstreams get an in-process
    emulator through ``httpx.ASGITransport``. ``tracer`` replaces the one ``[tracing]``
    configures (tests hand in one exporting to memory)."""
    metrics = Metrics()
    emulators: dict[str, object] = {}
    upstreams: dict[str, Upstream] = {}
    for upstream_config in config.upstreams:
        transport = (transports or {}).get(upstream_config.name)
        if transport is None and upstream_config.base_url.startswith(EMULATOR_SCHEME):
            emulator, transport = _emulator_transport(upstream_config, config.models)
            emulators[upstream_config.name] = emulator
        upstreams[upstream_config.name] = Upstream(
            config=upstream_config,
            dialect=dialect(
                upstream_config.protocol, upstream_config.reasoning_dialect, upstream_config.issuer
            ),
            transport=transport or upstream_transport(upstream_config),
            metrics=metrics,
        )
    store = store or open_store(config.store.url)
    lifecycle = Lifecycle(config.server.drain_seconds)
    routes, router = plan_routes(config, upstreams, metrics)
    proxy = Proxy(
        routes=routes,
        keys=KeyRing(config.server.api_keys),
        vault=ReasoningVault(store),
        metrics=metrics,
        max_body_bytes=config.server.max_body_bytes,
        offload_bytes=config.server.offload_bytes,
        lifecycle=lifecycle,
        operations=ProxyOperations(
            limiter=rate_limiter(config.operations.rate_limits, config.store.url),
            ledger=UsageLedger(store.backend, flush_seconds=config.operations.usage_flush_seconds),
            tracer=tracer or configured_tracer(config),
            responses=ResponseIndex(store.backend),
        ),
    )
    proxy.router = router
    told_apart = vendor_dialects(config)
    if told_apart:
        proxy.provenance = ProvenanceIndex(store.backend)
        proxy.provenance.dialects = told_apart
    return Gateway(
        config=config,
        store=store,
        metrics=metrics,
        upstreams=upstreams,
        ingress=ingress_dialects(),
        proxy=proxy,
        emulators=emulators,
        lifecycle=lifecycle,
        replicas=ReplicaRegistry(store.backend, config_digests(config))
        if is_shared(config)
        else None,
    )


def configured_tracer(config: GatewayConfig) -> Tracer | None:
    """The OTLP tracer ``[tracing]`` asks for; ``None`` (nothing imported) without it."""
    if config.operations.tracing is None:
        return None
    from interlock.gateway.tracing_otel import otlp_tracer

    return otlp_tracer(config.operations.tracing)


GATEWAY_GC_THRESHOLDS = (10_000, 10, 10)
"""``gc.set_threshold`` while the app serves (the default is ``(700, 10, 10)``): measured on
a 500-turn conversation, 1–5 % fewer instructions per turn (docs/benchmarks/history.md)."""


def create_app(gateway: Gateway, extra_routes: Sequence[RouteModule] = ()) -> Starlette:
    """The ASGI app; the gateway is closed when the app shuts down."""
    access_log.configure(gateway.config.server.access_log)
    routes = [route for module in (*ROUTE_MODULES, *extra_routes) for route in module(gateway)]

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncGenerator[None]:
        # What exists once the server starts (modules, config, codec tables) lives as long
        # as the process: keep it out of every later collection, so the rare full
        # collection scans only what requests made (a ~20 ms pause without this).
        gc.freeze()
        # Young objects of a request die by reference counting; a larger young generation
        # runs the collector (which walks the kept history prefixes) far less often.
        thresholds = gc.get_threshold()
        gc.set_threshold(*GATEWAY_GC_THRESHOLDS)
        if gateway.replicas is not None:
            await gateway.replicas.start()
        await gateway.proxy.operations.start()
        if gateway.proxy.router is not None:
            await gateway.proxy.router.start()
        try:
            yield
        finally:
            if gateway.replicas is not None:
                await gateway.replicas.stop()
            await gateway.close()
            gc.set_threshold(*thresholds)

    policy = BrowserPolicy.from_config(gateway.config.server)
    refusal, shapes = refusal_body(gateway.ingress), _refusal_shapes(gateway)

    def front(app: ASGIApp) -> ASGIApp:
        guarded = BrowserGuard(app, policy=policy, refusal=refusal)
        gated = DrainGate(guarded, lifecycle=gateway.lifecycle, shapes=shapes)
        return FrontDoor(app, gated, lifecycle=gateway.lifecycle, policy=policy)

    not_found = routes_models.not_found_handler(
        gateway.ingress["openai-chat"], gateway.ingress["gemini"]
    )
    app = GatewayApp(
        front=front,
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            404: not_found,
            405: not_found,
            500: internal_error_handler(refusal),
        },
    )
    app.state.gateway = gateway
    return app


def _refusal_shapes(gateway: Gateway) -> dict[str, ErrorShape]:
    """How a draining replica words its 503 for each API (see :class:`DrainGate`)."""
    openai, gemini = gateway.ingress["openai-chat"], gateway.ingress["gemini"]
    return {
        "/v1/": lambda message: openai.error(503, message, code=REFUSED_CODE),
        "/v1beta/": lambda message: gemini.error(503, message, code=REFUSED_CODE),
    }


_GEMINI_METHODS = (":generateContent", ":streamGenerateContent")


def refusal_body(ingress: Mapping[Protocol, Dialect]) -> RefusalBody:
    """Error bodies for the browser guard, in the shape of the endpoint a path belongs to:
    Gemini's for Gemini paths, OpenAI's for the other ``/v1/`` paths, AG-UI's
    (``{"error": {"message", "code"}}``) for everything else."""

    def body(path: str, status: int, message: str, code: str) -> JsonObject:
        if path.startswith("/v1beta/") or any(method in path for method in _GEMINI_METHODS):
            return ingress["gemini"].error(status, message, code=code)
        if path.startswith("/v1/"):
            return ingress["openai-chat"].error(status, message, code=code)
        return {"error": {"message": message, "code": code}}

    return body


INTERNAL_ERROR = "internal gateway error"
"""What a client is told of a bug (the details go to the log)."""


def internal_error_handler(refusal: RefusalBody) -> Callable[[Request, Exception], Response]:
    """Starlette's handler for 500 (an exception a route did not answer itself, or an
    ``HTTPException(500)``): a JSON error in the shape of the endpoint the request was
    for (:func:`refusal_body`), code ``internal_error``, so an SDK reads it as an API
    error rather than a plain-text page."""

    def handler(http_request: Request, error: Exception) -> Response:
        message = error.detail if isinstance(error, HTTPException) else INTERNAL_ERROR
        body = refusal(http_request.scope["path"], 500, message, "internal_error")
        return json_response(body, 500, NOT_SENT)

    return handler


def seal_key(config: GatewayConfig) -> bytes:
    """The key that seals reasoning handed to browsers.

    From ``server.seal_key_env`` when configured; otherwise generated once and kept in
    ``<state_dir>/seal.key`` (mode 0600), so restarts can still open sealed values.
    """
    if config.server.seal_key is not None:
        return config.server.seal_key
    path = Path(config.server.state_dir) / "seal.key"
    if path.exists():
        return path.read_bytes().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(32).encode()
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(key)
    return key
