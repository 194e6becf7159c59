"""The gateway's TOML configuration: typed, frozen, validated once at startup.

:func:`load_config` turns a TOML document into a :class:`GatewayConfig` or raises one
:class:`ConfigError` whose message names the offending key (``upstreams[1].protocol``).
Unknown keys, duplicate names, routes to missing upstreams or models and unreadable key
environment variables are all errors. Secrets read from the environment are kept out of
``repr`` so a config can be printed or logged safely.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast, get_args

from interlock.codecs.anthropic import EFFORT_LEVELS
from interlock.codecs.registry import DIALECT_NAMES, DialectName
from interlock.gateway._default_config import DEFAULT_CONFIG_TOML
from interlock.gateway.config_ops import Operations, check_operations, parse_operations
from interlock.gateway.config_routing import (
    MODEL_ROUTING_KEYS,
    Deployment,
    RouteReplayMode,
    RoutingConfig,
    parse_deployments,
    parse_routing,
)
from interlock.gateway.config_table import ConfigError
from interlock.gateway.config_table import Table as _Table
from interlock.gateway.config_table import choice as _choice
from interlock.gateway.config_table import non_negative_int as _non_negative_int
from interlock.gateway.config_table import positive as _positive
from interlock.gateway.config_table import strings as _strings
from interlock.gateway.vendors import VENDOR_PROTOCOLS, check_vendor, default_vendor

Protocol: TypeAlias = DialectName
"""An upstream's wire dialect: one of the codec registry's names."""
ChatReasoningDialect: TypeAlias = Literal[
    "none", "reasoning_content", "reasoning", "openrouter", "gemini-compat"
]
ApprovalStyle: TypeAlias = Literal["interrupt", "confirm_changes"]
ReplayModeName: TypeAlias = Literal["strict", "degrade"]
ThoughtSignatures: TypeAlias = Literal["required", "optional"]
TransportName: TypeAlias = Literal["interlock", "httpx"]

PROTOCOLS: tuple[Protocol, ...] = DIALECT_NAMES
EMULATOR_SCHEME = "emulator://"
"""``base_url = "emulator://<protocol>"`` serves that upstream with an in-process emulator."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKey:
    """A client key and the tenant it stands for. The key itself never appears in ``repr``."""

    key: str = field(repr=False)
    tenant: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """``[server]``: where to listen and who may call.

    Without ``api_keys`` every caller is the ``default`` tenant, and the gateway refuses to
    bind a non-loopback address unless ``allow_non_loopback`` is set.
    """

    host: str = "127.0.0.1"
    port: int = 8787
    api_keys: tuple[ApiKey, ...] = ()
    allow_non_loopback: bool = False
    seal_key_env: str | None = None
    seal_key: bytes | None = field(default=None, repr=False)
    state_dir: str = ".interlock"
    max_body_bytes: int = 16 * 1024 * 1024
    offload_bytes: int = 256 * 1024
    """Bodies this large are translated on a worker thread (0: never; see ``gateway.offload``)."""
    access_log: bool = True
    drain_seconds: float = 25.0
    """On SIGTERM, how long in-flight streams and runs may go on before they are ended
    with a resumable error (see ``interlock.gateway.lifecycle``)."""
    allowed_origins: tuple[str, ...] = ()
    """Browser origins (``scheme://host[:port]``, or ``"*"``) allowed besides the gateway's
    own; a request carrying any other ``Origin`` is refused (see ``gateway/guard.py``)."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` names accepted besides loopback ones (``"*"``: any). Checked when no
    ``api_keys`` are configured, or when this is set."""
    cors_origins: tuple[str, ...] = ()
    """Origins (or ``"*"``) that get CORS answers (preflights, ``Access-Control-*``);
    each is also an allowed origin."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreConfig:
    """``[store]``: ``memory://``, ``sqlite:///PATH`` or ``redis://HOST:PORT/DB``.

    ``thread_lease_seconds`` is how long a run's lease on its thread lasts unrenewed (what
    a killed process blocks the thread for); ``thread_lease_wait_seconds`` how long a run
    waits for a busy thread before ``THREAD_BUSY``.
    """

    url: str = "sqlite:///.interlock/interlock.db"
    thread_lease_seconds: float = 30.0
    thread_lease_wait_seconds: float = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class UpstreamConfig:
    """One ``[[upstreams]]`` entry. ``api_key`` is read from ``api_key_env`` at load time."""

    name: str
    protocol: Protocol
    base_url: str
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    reasoning_dialect: ChatReasoningDialect | None = None
    replay_mode: ReplayModeName = "strict"
    connect_timeout: float = 5.0
    read_timeout: float = 120.0
    max_retries: int = 2
    max_connections: int = 100
    max_response_bytes: int = 64 * 1024 * 1024
    """The largest answer body (and, streamed, the largest single event) accepted."""
    max_header_bytes: int = 64 * 1024
    """The largest answer head (status line and headers) the ``interlock`` transport accepts."""
    transport: TransportName = "interlock"
    """``interlock``: the lean HTTP/1.1 transport (``http1``); ``httpx``: httpx's own."""
    vendor: str | None = None
    """``openai-responses`` and ``anthropic`` only: the vendor issuing (and alone accepting)
    this upstream's opaque reasoning; set from ``base_url`` when loaded without one
    (:mod:`.vendors`)."""
    conversations: bool = False
    """``openai-responses`` only: new conversations (which carry no model) are created in
    this upstream. At most one upstream sets it; needed only with several Responses
    upstreams (:mod:`.conversations`)."""

    @property
    def issuer(self) -> str:
        """The vendor of this upstream's opaque reasoning (Responses encrypted reasoning,
        Anthropic thinking signatures; :mod:`.vendors`); ``""`` for the other protocols."""
        if self.protocol not in VENDOR_PROTOCOLS:
            return ""
        return self.vendor or default_vendor(self.base_url, self.protocol)

    @property
    def emulated(self) -> bool:
        """True when an in-process emulator serves this upstream."""
        return self.base_url.startswith(EMULATOR_SCHEME)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRoute:
    """One ``[[models]]`` entry: a client-facing name routed to an upstream model id.

    ``upstream`` and ``model`` are the first deployment's; a route with several
    ``deployments`` or with ``fallbacks`` is *routed* (see ``gateway/routing.py``).
    """

    name: str
    upstream: str
    model: str
    deployments: tuple[Deployment, ...] = ()
    """Every deployment, the first included (empty only when built by hand: then the
    route is its one ``upstream`` + ``model``)."""
    fallbacks: tuple[str, ...] = ()
    retries: int | None = None
    """Further attempts on this route's deployments after a retryable failure; ``None``:
    the first deployment's upstream's ``max_retries``."""
    replay_mode: RouteReplayMode | None = None
    """The replay policy for this route's deployments (``None``: each upstream's own) and
    its fallbacks (``None``: strict)."""
    thought_signatures: ThoughtSignatures | None = None
    """Whether the model requires Gemini thought signatures on the current turn's function
    calls; unset: by the model's name (the Gemini 3 family and unknown names require them,
    Gemini 1.x / 2.x and Gemma do not)."""
    effort_levels: tuple[str, ...] | None = None
    """The ``output_config.effort`` levels an Anthropic model takes, lowest first (``()``: a
    thinking budget only); unset: by the model's name (``codecs/anthropic/_effort.py``)."""

    @property
    def places(self) -> tuple[Deployment, ...]:
        """Every deployment (a route built without any: its ``upstream`` + ``model``)."""
        return self.deployments or (Deployment(upstream=self.upstream, model=self.model),)

    @property
    def routed(self) -> bool:
        """True when a request may go to more than one place."""
        return len(self.deployments) > 1 or bool(self.fallbacks)

    @property
    def signatures_required(self) -> bool | None:
        """The configured signature rule (``None``: decided by the model's name)."""
        if self.thought_signatures is None:
            return None
        return self.thought_signatures == "required"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentConfig:
    """One ``[[agents]]`` entry (served over AG-UI). ``tools`` are ``module:attribute`` paths."""

    name: str
    model: str
    instructions: str = ""
    tools: tuple[str, ...] = ()
    approval_required: tuple[str, ...] = ()
    approval_style: ApprovalStyle = "interrupt"
    max_iterations: int = 10
    max_function_calls: int = 20
    approval_edits_forbidden: tuple[str, ...] = ()
    trust_client_instructions: bool = False
    retry_on_interrupt: tuple[str, ...] = ()
    """Tools (idempotent ones) run once more after a crash interrupted them, instead of
    being reported ``interrupted`` (``Tool.on_interrupt = "retry"``)."""
    tool_providers: tuple[str, ...] = ()
    """``module:attribute`` callables adding server tools to each run (``agui/_agents.py``)."""
    invoke_functions: bool = True
    """``false``: the loop executes no tool; every call is handed to the client
    (``Agent.invoke_functions``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GatewayConfig:
    """The whole configuration; names are unique and every reference resolves."""

    server: ServerConfig = field(default_factory=ServerConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    upstreams: tuple[UpstreamConfig, ...] = ()
    models: tuple[ModelRoute, ...] = ()
    agents: tuple[AgentConfig, ...] = ()
    operations: Operations = field(default_factory=Operations)
    """Rate limits, usage accounting, admin API, tracing (:mod:`.config_ops`)."""
    source: str = "<embedded default>"
    routing: RoutingConfig = field(default_factory=RoutingConfig)

    def upstream(self, name: str) -> UpstreamConfig:
        """The upstream called ``name`` (validated to exist for every route)."""
        return next(upstream for upstream in self.upstreams if upstream.name == name)

    def with_overrides(self, *, host: str | None = None, port: int | None = None) -> GatewayConfig:
        """A copy with the listen address replaced where given (CLI flags win over the file)."""
        server = self.server
        server_fields = {name: getattr(server, name) for name in server.__dataclass_fields__}
        if host is not None:
            server_fields["host"] = host
        if port is not None:
            server_fields["port"] = port
        return replace(self, server=ServerConfig(**server_fields))


# ---------------------------------------------------------------- loading


def load_config(
    path: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> GatewayConfig:
    """Read and validate a config file, or the embedded default when ``path`` is ``None``."""
    environ = os.environ if environ is None else environ
    if path is None:
        return parse_config(DEFAULT_CONFIG_TOML, environ, source="<embedded default>")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError("", f"cannot read config file {path}: {error.strerror}") from error
    return parse_config(text, environ, source=str(path))


def parse_config(
    text: str, environ: Mapping[str, str], *, source: str = "<string>"
) -> GatewayConfig:
    """Validate a TOML document; raise :class:`ConfigError` naming the first bad key."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError("", f"{source} is not valid TOML: {error}") from error
    table = _Table(document, "")
    server = _server(table.table("server"), environ)
    store = StoreConfig(
        **table.table("store").take(
            {
                "url": str,
                "thread_lease_seconds": _positive(float),
                "thread_lease_wait_seconds": _positive(float),
            }
        )
    )
    upstreams = tuple(_upstream(entry, environ) for entry in table.tables("upstreams"))
    names = {upstream.name for upstream in upstreams}
    models = tuple(_model(entry, environ, names) for entry in table.tables("models"))
    routing = parse_routing(table.table("routing"))
    agents = tuple(_agent(entry) for entry in table.tables("agents"))
    operations = parse_operations(table, environ)
    table.finish()
    _check_store_url(store.url)
    config = GatewayConfig(
        server=server,
        store=store,
        upstreams=upstreams,
        models=models,
        agents=agents,
        operations=operations,
        source=source,
        routing=routing,
    )
    _check_references(config)
    check_operations(config)
    return config


def _tenant_for(key: str) -> str:
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def _api_keys(value: Any) -> tuple[ApiKey, ...]:
    if not isinstance(value, list):
        raise ValueError("expected a list of keys or {key, tenant} tables")
    keys: list[ApiKey] = []
    for index, entry in enumerate(cast(list[object], value)):
        if isinstance(entry, str) and entry:
            keys.append(ApiKey(key=entry, tenant=_tenant_for(entry)))
            continue
        table = _Table(entry, f"[{index}]")
        fields = table.take({"key": str, "tenant": str})
        if not fields.get("key") or not fields.get("tenant"):
            raise ValueError(f"entry {index} needs a non-empty key and tenant")
        keys.append(ApiKey(key=fields["key"], tenant=fields["tenant"]))
    if len({key.key for key in keys}) != len(keys):
        raise ValueError("duplicate key")
    return tuple(keys)


def _server(table: _Table, environ: Mapping[str, str]) -> ServerConfig:
    fields = table.take(
        {
            "host": str,
            "port": _port,
            "api_keys": _api_keys,
            "allow_non_loopback": bool,
            "seal_key_env": str,
            "state_dir": str,
            "max_body_bytes": _positive(int),
            "offload_bytes": _non_negative_int,
            "access_log": bool,
            "drain_seconds": _positive(float),
            "allowed_origins": _origins,
            "allowed_hosts": _hosts,
            "cors_origins": _origins,
        }
    )
    variable = fields.get("seal_key_env")
    if variable is not None:
        value = environ.get(variable)
        if not value:
            raise ConfigError(
                "server.seal_key_env", f"environment variable {variable} is not set or empty"
            )
        fields["seal_key"] = value.encode()
    return ServerConfig(**fields)


def _origins(value: Any) -> tuple[str, ...]:
    origins = _strings(value)
    for origin in origins:
        if origin != "*" and normalize_origin(origin) is None:
            raise ValueError(f'{origin!r} is not an origin (scheme://host[:port], or "*")')
    return tuple(
        origin if origin == "*" else cast(str, normalize_origin(origin)) for origin in origins
    )


def normalize_origin(origin: str) -> str | None:
    """``origin`` as browsers send it (lower-case, no path), or ``None`` if it is not one."""
    scheme, separator, rest = origin.strip().lower().partition("://")
    if scheme not in ("http", "https") or not separator or not rest:
        return None
    if any(character in rest for character in "/?#@ "):
        return None
    return f"{scheme}://{rest}"


def _hosts(value: Any) -> tuple[str, ...]:
    hosts = _strings(value)
    for host in hosts:
        bracketed = host.startswith("[") and host.endswith("]")  # an IPv6 address
        if not host or any(character in host for character in "/?#@ " + ":" * (not bracketed)):
            raise ValueError(f"{host!r} is not a host name (no scheme, port or path)")
    return tuple(host.lower() for host in hosts)


def _port(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
        raise ValueError(f"expected a port number 0-65535, got {value!r}")
    return value


def _upstream(table: _Table, environ: Mapping[str, str]) -> UpstreamConfig:
    for required in ("name", "protocol", "base_url"):
        if required not in table.values:
            raise ConfigError(table.key(required), "required")
    fields = table.take(
        {
            "name": str,
            "protocol": _choice(PROTOCOLS),
            "base_url": str,
            "api_key_env": str,
            "reasoning_dialect": _choice(get_args(ChatReasoningDialect)),
            "replay_mode": _choice(get_args(ReplayModeName)),
            "connect_timeout": _positive(float),
            "read_timeout": _positive(float),
            "max_retries": _non_negative_int,
            "max_connections": _positive(int),
            "max_response_bytes": _positive(int),
            "max_header_bytes": _positive(int),
            "transport": _choice(get_args(TransportName)),
            "vendor": check_vendor,
            "conversations": bool,
        }
    )
    if fields.get("reasoning_dialect") and fields["protocol"] != "openai-chat":
        raise ConfigError(table.key("reasoning_dialect"), "only for protocol openai-chat")
    if fields.get("vendor") and fields["protocol"] not in VENDOR_PROTOCOLS:
        raise ConfigError(table.key("vendor"), "only for protocol openai-responses or anthropic")
    if fields.get("conversations") and fields["protocol"] != "openai-responses":
        raise ConfigError(table.key("conversations"), "only for protocol openai-responses")
    base_url = cast(str, fields["base_url"])
    if base_url.startswith(EMULATOR_SCHEME):
        if base_url.removeprefix(EMULATOR_SCHEME).strip("/") not in PROTOCOLS:
            raise ConfigError(table.key("base_url"), f"emulator://<one of {', '.join(PROTOCOLS)}>")
    elif not base_url.startswith(("http://", "https://")):
        raise ConfigError(table.key("base_url"), "expected an http(s):// or emulator:// URL")
    variable = fields.get("api_key_env")
    if variable is not None:
        value = environ.get(variable)
        if not value:
            raise ConfigError(
                table.key("api_key_env"), f"environment variable {variable} is not set or empty"
            )
        fields["api_key"] = value
    if fields["protocol"] in VENDOR_PROTOCOLS:
        fields.setdefault("vendor", default_vendor(base_url, cast(str, fields["protocol"])))
    return UpstreamConfig(**fields)


def _model(table: _Table, environ: Mapping[str, str], upstreams: set[str]) -> ModelRoute:
    if "name" not in table.values:
        raise ConfigError(table.key("name"), "required")
    table.seen.add("deployments")  # read by parse_deployments below
    signatures = {
        "thought_signatures": _choice(get_args(ThoughtSignatures)),
        "effort_levels": _effort_levels,
    }
    fields = table.take(
        {"name": str, "upstream": str, "model": str, **MODEL_ROUTING_KEYS, **signatures}
    )
    deployments = parse_deployments(table, fields, environ, upstreams)
    fields |= {"upstream": deployments[0].upstream, "model": deployments[0].model}
    return ModelRoute(**fields, deployments=deployments)


def _effort_levels(value: Any) -> tuple[str, ...]:
    """Anthropic effort levels, each once, lowest first."""
    levels = _strings(value)
    for level in levels:
        if level not in EFFORT_LEVELS:
            raise ValueError(f"{level!r} is not one of {', '.join(EFFORT_LEVELS)}")
    return tuple(level for level in EFFORT_LEVELS if level in levels)


def _agent(table: _Table) -> AgentConfig:
    for required in ("name", "model"):
        if required not in table.values:
            raise ConfigError(table.key(required), "required")
    fields = table.take(
        {
            "name": str,
            "model": str,
            "instructions": str,
            "tools": _strings,
            "approval_required": _strings,
            "approval_style": _choice(get_args(ApprovalStyle)),
            "max_iterations": _positive(int),
            "max_function_calls": _non_negative_int,
            "approval_edits_forbidden": _strings,
            "trust_client_instructions": bool,
            "retry_on_interrupt": _strings,
            "tool_providers": _strings,
            "invoke_functions": bool,
        }
    )
    for listed in ("tools", "tool_providers"):
        for index, path in enumerate(fields.get(listed, ())):
            module, _, attribute = cast(str, path).partition(":")
            if not module or not attribute:
                raise ConfigError(f"{table.key(listed)}[{index}]", "expected 'module:attribute'")
    tool_names = {cast(str, tool).rpartition(":")[2] for tool in fields.get("tools", ())}
    for listed in ("approval_required", "approval_edits_forbidden", "retry_on_interrupt"):
        for index, name in enumerate(fields.get(listed, ())):
            if name not in tool_names:
                raise ConfigError(
                    f"{table.key(listed)}[{index}]", f"{name!r} is not one of the tools"
                )
    return AgentConfig(**fields)


def _check_store_url(url: str) -> None:
    if url == "memory://" or url.startswith(("sqlite:///", "redis://", "rediss://")):
        return
    raise ConfigError("store.url", "expected memory://, sqlite:///PATH or redis://HOST:PORT/DB")


def _check_unique(names: Sequence[str], key: str) -> None:
    seen: set[str] = set()
    for index, name in enumerate(names):
        if not name:
            raise ConfigError(f"{key}[{index}].name", "must not be empty")
        if name in seen:
            raise ConfigError(f"{key}[{index}].name", f"duplicate name {name!r}")
        seen.add(name)


def _check_references(config: GatewayConfig) -> None:
    _check_unique([upstream.name for upstream in config.upstreams], "upstreams")
    homes = [index for index, up in enumerate(config.upstreams) if up.conversations]
    if len(homes) > 1:
        first = config.upstreams[homes[0]].name
        raise ConfigError(
            f"upstreams[{homes[1]}].conversations",
            f"upstream {first!r} already receives new conversations; set it on one upstream",
        )
    _check_unique([model.name for model in config.models], "models")
    _check_unique([agent.name for agent in config.agents], "agents")
    models = {model.name for model in config.models}
    for index, model in enumerate(config.models):
        _check_fallbacks(model, f"models[{index}]", models)
    for index, agent in enumerate(config.agents):
        if agent.model not in models:
            raise ConfigError(f"agents[{index}].model", f"no model named {agent.model!r}")


def _check_fallbacks(model: ModelRoute, key: str, models: set[str]) -> None:
    """Every fallback names another model, once."""
    for index, fallback in enumerate(model.fallbacks):
        if fallback == model.name or fallback not in models:
            what = "itself" if fallback == model.name else f"no model named {fallback!r}"
            raise ConfigError(f"{key}.fallbacks[{index}]", f"cannot fall back to {what}")
        if fallback in model.fallbacks[:index]:
            raise ConfigError(f"{key}.fallbacks[{index}]", f"{fallback!r} is listed twice")
