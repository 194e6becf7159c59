"""The operations sections of the config: ``[[rate_limits]]``, ``[usage]``, ``[admin]``, ``[tracing]``.

Parsed by :func:`parse_operations` from the same TOML document as the rest of
:mod:`interlock.gateway.config`; the same rules hold: every key known or startup stops with one line naming it, every
reference resolves (:func:`check_operations`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from interlock.gateway.config_table import ConfigError
from interlock.gateway.config_table import Table as ConfigTable

if TYPE_CHECKING:
    from interlock.gateway.config import GatewayConfig

DEFAULT_TENANT = "default"
"""The tenant of every caller when no ``server.api_keys`` are configured."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimit:
    """One ``[[rate_limits]]`` entry: a budget per minute, per tenant.

    ``tenant`` ``None`` applies the entry to every tenant, each with a budget of its own;
    ``model`` ``None`` counts every model together, else only requests for that model.
    At least one of ``requests_per_minute`` and ``tokens_per_minute`` is set.
    """

    tenant: str | None = None
    model: str | None = None
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TracingConfig:
    """``[tracing]``: OpenTelemetry spans exported over OTLP/HTTP to ``otlp_endpoint``."""

    otlp_endpoint: str
    service_name: str = "interlock"


@dataclass(frozen=True, slots=True, kw_only=True)
class Operations:
    """Rate limits, usage accounting, the admin API and tracing (all optional)."""

    rate_limits: tuple[RateLimit, ...] = ()
    usage_flush_seconds: float = 5.0
    """How often each process adds its token counts to the store's totals."""
    admin_key_env: str | None = None
    admin_key: str | None = field(default=None, repr=False)
    """The key of ``/admin/*`` endpoints (read from ``admin_key_env``); ``None``: disabled."""
    tracing: TracingConfig | None = None


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"expected a positive integer, got {value!r}")
    return value


def _positive_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"expected a positive number, got {value!r}")
    return float(value)


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("expected a non-empty string")
    return value


def _http_url(value: Any) -> str:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise ValueError(f"expected an http(s):// URL, got {value!r}")
    return value


def _rate_limit(table: ConfigTable) -> RateLimit:
    fields = table.take(
        {
            "tenant": _name,
            "model": _name,
            "requests_per_minute": _positive_int,
            "tokens_per_minute": _positive_int,
        }
    )
    if "requests_per_minute" not in fields and "tokens_per_minute" not in fields:
        raise ConfigError(table.path, "set requests_per_minute, tokens_per_minute or both")
    return RateLimit(**fields)


def parse_operations(document: ConfigTable, environ: Mapping[str, str]) -> Operations:
    """The operations sections of ``document`` (its other keys are left to the caller)."""
    limits = tuple(_rate_limit(entry) for entry in document.tables("rate_limits"))
    usage = document.table("usage").take({"flush_seconds": _positive_float})
    admin = document.table("admin").take({"key_env": _name})
    tracing_table = document.table("tracing")
    tracing_fields = tracing_table.take({"otlp_endpoint": _http_url, "service_name": _name})
    tracing = None
    if tracing_fields:
        if "otlp_endpoint" not in tracing_fields:
            raise ConfigError(tracing_table.key("otlp_endpoint"), "required")
        tracing = TracingConfig(**tracing_fields)
        if importlib.util.find_spec("opentelemetry.sdk") is None:
            raise ConfigError("tracing", "needs OpenTelemetry: pip install 'interlock[otel]'")
    admin_key = None
    variable = admin.get("key_env")
    if variable is not None:
        admin_key = environ.get(variable)
        if not admin_key:
            raise ConfigError(
                "admin.key_env", f"environment variable {variable} is not set or empty"
            )
    return Operations(
        rate_limits=limits,
        usage_flush_seconds=usage.get("flush_seconds", 5.0),
        admin_key_env=variable,
        admin_key=admin_key,
        tracing=tracing,
    )


def check_operations(config: GatewayConfig) -> None:
    """Every rate limit names a configured model and a tenant some key maps to."""
    models = {model.name for model in config.models}
    keys = config.server.api_keys
    tenants = {key.tenant for key in keys} if keys else {DEFAULT_TENANT}
    admin_key = config.operations.admin_key
    if admin_key is not None and any(key.key == admin_key for key in keys):
        raise ConfigError("admin.key_env", "the admin key must not also be a client key")
    for index, limit in enumerate(config.operations.rate_limits):
        if limit.model is not None and limit.model not in models:
            raise ConfigError(f"rate_limits[{index}].model", f"no model named {limit.model!r}")
        if limit.tenant is not None and limit.tenant not in tenants:
            known = ", ".join(sorted(tenants))
            raise ConfigError(
                f"rate_limits[{index}].tenant",
                f"no client key maps to tenant {limit.tenant!r} (tenants: {known})",
            )
