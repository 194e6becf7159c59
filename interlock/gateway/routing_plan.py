"""Building the routing table from the config: every model's route and the router.

Each routed deployment gets its own :class:`~interlock.gateway.upstream.Upstream` copy
(its key, the route's replay policy, no retries of its own: the router retries) sharing
the configured upstream's pooled transport, built once at startup. Health is shared by
every route using the same upstream, model and key, and, with a Redis store, its
cooldowns by every process on it (:mod:`.routing_shared`).
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import quote

from interlock.gateway.config import GatewayConfig, ModelRoute
from interlock.gateway.config_routing import Deployment
from interlock.gateway.metrics import Metrics
from interlock.gateway.proxy import Route
from interlock.gateway.replicas import is_shared
from interlock.gateway.routing import Router
from interlock.gateway.routing_shared import SharedCooldowns
from interlock.gateway.routing_targets import Group, Health, Target
from interlock.gateway.upstream import Upstream


def plan_routes(
    config: GatewayConfig, upstreams: dict[str, Upstream], metrics: Metrics
) -> tuple[dict[str, Route], Router | None]:
    """Every model's route (a routed model's is its first deployment's) and the router
    for the routed ones (``None`` when no model is routed)."""
    health: dict[tuple[str, str, str | None], Health] = {}
    models = {model.name: model for model in config.models}

    def target(model: ModelRoute, deployment: Deployment, replay_mode: str | None) -> Target:
        key = (deployment.upstream, deployment.model, deployment.api_key_env)
        shared = health.get(key)
        if shared is None:
            variable = deployment.api_key_env
            identity = deployment.label + (f"/{variable}" if variable else "")
            shared = health[key] = Health(deployment.label, quote(identity, safe="/"))
        upstream = _deployment_upstream(upstreams[deployment.upstream], deployment, replay_mode)
        single = ModelRoute(
            name=model.name,
            upstream=deployment.upstream,
            model=deployment.model,
            deployments=(deployment,),
            thought_signatures=model.thought_signatures,
            effort_levels=model.effort_levels,
        )
        return Target(Route(model=single, upstream=upstream), deployment.weight, shared)

    def group(model: ModelRoute, replay_mode: str | None, fallback: bool) -> Group:
        retries = model.retries
        if retries is None:
            retries = upstreams[model.upstream].config.max_retries
        targets = tuple(target(model, each, replay_mode) for each in model.places)
        return Group(model.name, targets, retries, fallback)

    routes: dict[str, Route] = {}
    groups: dict[str, tuple[Group, ...]] = {}
    for model in config.models:
        if not model.routed:
            routes[model.name] = Route(model=model, upstream=_single(upstreams, model))
            continue
        own = group(model, model.replay_mode, fallback=False)
        fallback_mode = model.replay_mode or "strict"
        fallbacks = tuple(group(models[name], fallback_mode, True) for name in model.fallbacks)
        groups[model.name] = (own, *fallbacks)
        routes[model.name] = Route(model=model, upstream=own.targets[0].route.upstream)
    if not groups:
        return routes, None
    router = Router(groups, config.routing, metrics)
    if is_shared(config):  # replicas on one Redis avoid each other's failed deployments
        router.shared = SharedCooldowns(config.store.url, tuple(health.values()), metrics)
    return routes, router


def _single(upstreams: dict[str, Upstream], model: ModelRoute) -> Upstream:
    """A plain route's upstream: the configured one, with the route's own key or policy."""
    base = upstreams[model.upstream]
    deployment = model.places[0]
    if deployment.api_key is None and model.replay_mode in (None, base.config.replay_mode):
        return base
    return _copy(base, deployment, model.replay_mode, base.config.max_retries)


def _deployment_upstream(
    base: Upstream, deployment: Deployment, replay_mode: str | None
) -> Upstream:
    """A routed deployment's upstream: no retries of its own (the router retries)."""
    return _copy(base, deployment, replay_mode, 0)


def _copy(
    base: Upstream, deployment: Deployment, replay_mode: str | None, max_retries: int
) -> Upstream:
    """``base`` with the deployment's key and policy, sharing its pooled transport."""
    config = base.config
    mode = config.replay_mode if replay_mode is None else replay_mode
    return Upstream(
        config=replace(
            config,
            api_key=deployment.api_key if deployment.api_key is not None else config.api_key,
            replay_mode="strict" if mode == "strict" else "degrade",
            max_retries=max_retries,
        ),
        dialect=base.dialect,
        transport=base.transport,
        metrics=base.metrics,
        sleep=base.sleep,
    )
