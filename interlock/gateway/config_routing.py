"""The routing half of the config: ``[routing]`` and the routing keys of ``[[models]]``.

A model route names its deployments (``upstream``, ``model``, ``weight``, optionally its
own ``api_key_env``), its ``fallbacks`` (other model names, tried in order once its own
deployments failed), how many ``retries`` it makes, and the ``replay_mode`` its history
must translate under. The single-deployment form (``upstream`` + ``model`` on the route
itself) is one deployment of weight 1. ``[routing]`` holds the health policy every
deployment shares: how many failures within a window cool a deployment down, for how
long, and the retry backoff.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

from interlock.gateway.config_table import (
    ConfigError,
    Table,
    choice,
    non_negative_int,
    positive,
    strings,
)

RouteReplayMode: TypeAlias = Literal["strict", "degrade"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Deployment:
    """One place a model route can send a request: an upstream and its model id.

    ``api_key`` (read from ``api_key_env`` at load time) replaces the upstream's own key
    for this deployment only; it never appears in ``repr``.
    """

    upstream: str
    model: str
    weight: int = 1
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """``upstream/model``: how logs, metrics and the health table name it."""
        return f"{self.upstream}/{self.model}"


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutingConfig:
    """``[routing]``: the health policy and retry backoff every routed model shares.

    A deployment that fails ``failures_to_cool`` times within ``failure_window_seconds``
    is not chosen for ``cooldown_seconds``. Retries of the same deployment wait
    ``backoff_seconds`` × 2^(n-1), at least a 429's ``retry-after``, at most
    ``backoff_max_seconds``; a retry on another deployment does not wait.
    """

    failures_to_cool: int = 3
    failure_window_seconds: float = 60.0
    cooldown_seconds: float = 30.0
    backoff_seconds: float = 0.05
    backoff_max_seconds: float = 2.0


def parse_routing(table: Table) -> RoutingConfig:
    """``[routing]`` (every key optional)."""
    return RoutingConfig(
        **table.take(
            {
                "failures_to_cool": positive(int),
                "failure_window_seconds": positive(float),
                "cooldown_seconds": positive(float),
                "backoff_seconds": positive(float),
                "backoff_max_seconds": positive(float),
            }
        )
    )


MODEL_ROUTING_KEYS: dict[str, Any] = {
    "fallbacks": strings,
    "retries": non_negative_int,
    "replay_mode": choice(get_args(RouteReplayMode)),
}
"""The routing keys a ``[[models]]`` entry may carry besides its deployments."""


def parse_deployments(
    table: Table, fields: dict[str, Any], environ: Mapping[str, str], upstreams: set[str]
) -> tuple[Deployment, ...]:
    """A route's deployments: ``deployments = [...]``, or ``upstream`` + ``model``.

    ``fields`` are the route's keys taken so far (``upstream`` and ``model`` among them
    when given); exactly one of the two forms must be used, naming known ``upstreams``.
    """
    single = "upstream" in fields or "model" in fields
    if "deployments" not in table.values:
        for required in ("upstream", "model"):
            if required not in fields:
                raise ConfigError(table.key(required), "required (or give deployments)")
        _known(table, fields["upstream"], upstreams)
        return (Deployment(upstream=fields["upstream"], model=fields["model"]),)
    if single:
        raise ConfigError(
            table.key("deployments"), "give either upstream + model or deployments, not both"
        )
    entries = table.tables("deployments")
    if not entries:
        raise ConfigError(table.key("deployments"), "needs at least one deployment")
    return tuple(_deployment(entry, environ, upstreams) for entry in entries)


def _known(table: Table, upstream: str, upstreams: set[str]) -> None:
    if upstream not in upstreams:
        raise ConfigError(table.key("upstream"), f"no upstream named {upstream!r}")


def _deployment(table: Table, environ: Mapping[str, str], upstreams: set[str]) -> Deployment:
    for required in ("upstream", "model"):
        if required not in table.values:
            raise ConfigError(table.key(required), "required")
    fields = table.take(
        {"upstream": str, "model": str, "weight": positive(int), "api_key_env": str}
    )
    _known(table, fields["upstream"], upstreams)
    variable = fields.get("api_key_env")
    if variable is not None:
        value = environ.get(variable)
        if not value:
            raise ConfigError(
                table.key("api_key_env"), f"environment variable {variable} is not set or empty"
            )
        fields["api_key"] = value
    return Deployment(**fields)
