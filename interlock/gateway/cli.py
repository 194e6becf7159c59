"""The ``interlock`` command line: ``serve``, ``emulate``, ``conformance``."""

from __future__ import annotations

import argparse
import gc
import importlib
import ipaddress
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from interlock.gateway.config import PROTOCOLS, ConfigError, GatewayConfig, load_config
from interlock.gateway.replicas import check_shared_store
from interlock.gateway.vendors import VENDOR_PROTOCOLS, check_vendor

if TYPE_CHECKING:
    from starlette.applications import Starlette

CONFIG_ENV = "INTERLOCK_CONFIG"
"""Config path handed to worker processes (``--workers``); empty means the embedded default."""
EMULATOR_ENV = "INTERLOCK_EMULATOR"
"""``protocol`` or ``protocol:script path`` handed to emulator worker processes."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="interlock", description="A protocol gateway for agent traffic."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the gateway")
    serve.add_argument("--config", help="TOML config file (default: the embedded demo)")
    serve.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8787)")
    serve.add_argument(
        "--allow-non-loopback",
        action="store_true",
        help="bind a non-loopback address even though no server.api_keys are configured",
    )
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    emulate = commands.add_parser("emulate", help="run a provider emulator")
    emulate.add_argument("--protocol", required=True, choices=list(PROTOCOLS))
    emulate.add_argument("--host", default="127.0.0.1")
    emulate.add_argument("--port", type=int, default=8790)
    emulate.add_argument("--script", help="script file of responses / stream traces")
    emulate.add_argument(
        "--vendor",
        help="openai-responses and anthropic: the vendor whose opaque reasoning it mints and "
        "alone accepts (default: the protocol's own service)",
    )
    emulate.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes (default 1; each keeps its own script position and state)",
    )
    conformance = commands.add_parser("conformance", help="run the codec conformance suite")
    conformance.add_argument("--format", help="only this dialect")
    conformance.add_argument("--report", help="write the fidelity matrix (Markdown) here")
    conformance.add_argument("--json", action="store_true", help="print the matrix as JSON")
    conformance.add_argument(
        "--corpus",
        nargs="?",
        const="",
        metavar="DIR",
        help="also run the real-traffic corpus (default conformance/corpus)",
    )
    conformance.add_argument(
        "--write-known", action="store_true", help="with --corpus: rewrite known-failures.txt"
    )
    conformance.add_argument(
        "--draft",
        nargs="+",
        metavar="FILE",
        help="fill in the canonical form of new vector files from the codec, for review by hand",
    )
    return parser


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(config: GatewayConfig, allow_flag: bool) -> None:
    """Refuse a non-loopback bind without client keys unless explicitly allowed."""
    server = config.server
    if is_loopback(server.host) or server.api_keys or server.allow_non_loopback or allow_flag:
        return
    raise ConfigError(
        "server.host",
        f"refusing to listen on {server.host} without server.api_keys; configure keys, or "
        "pass --allow-non-loopback (server.allow_non_loopback = true) to expose it anyway",
    )


def describe(config: GatewayConfig) -> str:
    """The startup banner: where the gateway listens and what it routes."""
    server = config.server
    base = f"http://{server.host}:{server.port}"
    lines = [f"interlock gateway listening on {base}  (config: {config.source})"]
    for model in config.models:
        places: list[str] = []
        for deployment in model.places:
            upstream = config.upstream(deployment.upstream)
            weighted = f" weight {deployment.weight}" if len(model.places) > 1 else ""
            places.append(f"{upstream.name} ({upstream.protocol}, {deployment.model}){weighted}")
        then = f"; fallbacks {', '.join(model.fallbacks)}" if model.fallbacks else ""
        lines.append(f"  model {model.name:<20} -> {', '.join(places)}{then}")
    for agent in config.agents:
        lines.append(f"  agent {agent.name:<20} -> model {agent.model}")
    lines.append(f"  OpenAI SDK base_url: {base}/v1    google-genai base_url: {base}")
    lines.append(f"  store: {config.store.url}    keys required: {bool(server.api_keys)}")
    return "\n".join(lines)


def _serve(arguments: argparse.Namespace) -> int:
    # The AG-UI WebSocket protocol (lean idle sockets, batched sends, no deflate).
    from interlock.gateway.agui import SERVER_OPTIONS

    try:
        config = load_config(arguments.config).with_overrides(
            host=arguments.host, port=arguments.port
        )
        check_exposure(config, arguments.allow_non_loopback)
        check_shared_store(config)
    except ConfigError as error:
        print(f"interlock: config error: {error}", file=sys.stderr)
        return 2
    print(describe(config), flush=True)
    os.environ[CONFIG_ENV] = arguments.config or ""
    _run(
        lambda: _app(config),
        "interlock.gateway.cli:app_from_environment",
        workers=arguments.workers,
        host=config.server.host,
        port=config.server.port,
        options=SERVER_OPTIONS,
    )
    return 0


def _run(
    build: Callable[[], Starlette],
    factory: str,
    *,
    workers: int,
    host: str,
    port: int,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Serve ``build()`` here, or ``workers`` processes each calling ``factory`` (an import
    string, reading what it needs from the environment).

    One process drains on SIGTERM (:class:`~interlock.gateway.server.DrainingServer`);
    with several workers, uvicorn's own shutdown applies.
    """
    import uvicorn

    from interlock.gateway.server import DrainingServer

    # uvicorn's own access log would print query strings (``?key=…``): ours is structured.
    common: dict[str, Any] = {"host": host, "port": port, "access_log": False}
    common |= {"log_level": "warning", "timeout_graceful_shutdown": 5, **(options or {})}
    if workers > 1:
        uvicorn.run(factory, factory=True, workers=workers, **common)
    else:
        DrainingServer(uvicorn.Config(build(), **common)).run()


def _app(config: GatewayConfig) -> Starlette:
    from interlock.gateway.app import build_gateway, create_app

    return create_app(build_gateway(config))


def app_from_environment() -> Starlette:
    """App factory for worker processes (reads :data:`CONFIG_ENV`)."""
    return _app(load_config(os.environ.get(CONFIG_ENV) or None))


def _emulate(arguments: argparse.Namespace) -> int:
    from interlock.emulators import ScriptError

    try:
        app = _emulator_app(arguments.protocol, arguments.script, arguments.vendor or "")
    except (ScriptError, ValueError) as error:
        print(f"interlock: {error}", file=sys.stderr)
        return 2
    print(
        f"interlock {arguments.protocol} emulator on http://{arguments.host}:{arguments.port}",
        flush=True,
    )
    os.environ[EMULATOR_ENV] = ":".join(
        [arguments.protocol, arguments.vendor or "", arguments.script or ""]
    )

    def serving() -> Starlette:
        quiet_collections()
        return app

    _run(
        serving,
        "interlock.gateway.cli:emulator_from_environment",
        workers=arguments.workers,
        host=arguments.host,
        port=arguments.port,
    )
    return 0


EMULATOR_GC_THRESHOLDS = (50_000, 20, 10)
"""``gc.set_threshold`` of an ``interlock emulate`` process (see :func:`quiet_collections`)."""


def quiet_collections() -> None:
    """Garbage collection for a process that serves an emulator, once its app is built.

    As ``interlock serve`` does, what exists before the first request (modules, codec
    tables) is frozen out of every later full collection. A young generation of 50,000
    objects lets a large request's objects (a parsed 2,000-message history) die young
    instead of triggering full collections over what the emulator holds; those pauses
    (up to 0.25 s of CPU) were what benchmarks read as the gateway's latency tail.
    """
    gc.freeze()
    gc.set_threshold(*EMULATOR_GC_THRESHOLDS)


def _emulator_app(protocol: str, script: str | None, vendor: str = "") -> Starlette:
    """``protocol``'s emulator app; ``vendor`` names the issuer of its opaque reasoning
    (a :class:`ValueError` for a protocol without vendors or a malformed name)."""
    from interlock.emulators import create_emulator, emulator_app

    options: dict[str, str] = {}
    if vendor:
        if protocol not in VENDOR_PROTOCOLS:
            raise ValueError(f"--vendor is only for {' and '.join(VENDOR_PROTOCOLS)}")
        options["issuer"] = check_vendor(vendor)
    for name in PROTOCOLS:  # argparse already restricted the choice; this narrows the type
        if name == protocol:
            return emulator_app(create_emulator(name, script=script or None, **options))
    raise ValueError(f"unknown protocol {protocol!r}")


def emulator_from_environment() -> Starlette:
    """App factory for emulator worker processes (reads :data:`EMULATOR_ENV`)."""
    protocol, vendor, script = os.environ[EMULATOR_ENV].split(":", 2)
    app = _emulator_app(protocol, script, vendor)
    quiet_collections()
    return app


def _conformance(arguments: argparse.Namespace) -> int:
    # Looked up at run time: the conformance runner is a separate tool that the CLI merely
    # dispatches to; the gateway itself never depends on it.
    try:
        module = importlib.import_module("interlock.conformance")
    except ImportError as error:
        print(f"interlock: the conformance runner is unavailable: {error}", file=sys.stderr)
        return 2
    runner = getattr(module, "main", None)
    if not callable(runner):
        print("interlock: the conformance runner is not available yet", file=sys.stderr)
        return 2
    forwarded: list[str] = []
    if arguments.format:
        forwarded += ["--format", arguments.format]
    if arguments.report:
        forwarded += ["--report", arguments.report]
    if arguments.json:
        forwarded.append("--json")
    if arguments.corpus is not None:
        forwarded += ["--corpus", arguments.corpus] if arguments.corpus else ["--corpus"]
    if arguments.write_known:
        forwarded.append("--write-known")
    if arguments.draft:
        forwarded += ["--draft", *arguments.draft]
    return int(cast(Callable[[list[str]], int | None], runner)(forwarded) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``interlock`` console script."""
    arguments = build_parser().parse_args(argv)
    if arguments.command == "serve":
        return _serve(arguments)
    if arguments.command == "emulate":
        return _emulate(arguments)
    return _conformance(arguments)


if __name__ == "__main__":
    sys.exit(main())
