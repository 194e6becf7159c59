"""What browsers may do: ``Host`` and ``Origin`` checks and CORS, in front of every route.

:class:`BrowserGuard` is an ASGI middleware; its decisions are pure functions of the
request's ``Host`` and ``Origin`` headers and a :class:`BrowserPolicy`:

- **Host** (DNS rebinding): checked when no API keys are configured, or when
  ``server.allowed_hosts`` is set. The host (port ignored) must be a loopback name
  (``localhost``, ``*.localhost``, ``127.0.0.0/8``, ``::1``) or one of ``allowed_hosts``
  (``"*"``: any). A request without ``Host`` is refused too: every HTTP/1.1 client sends one.
- **Origin** (cross-site requests, WebSocket hijacking): a request that carries ``Origin``
  (every browser ``POST``, every browser WebSocket upgrade) must come from the gateway's own
  origin (same scheme-less ``host:port`` as ``Host``), from ``server.allowed_origins`` or
  from ``server.cors_origins``. Requests without ``Origin`` are not from a browser page and
  pass. ``OPTIONS`` preflights are answered here and never reach a route.
- **CORS**: an origin in ``cors_origins`` gets preflights answered (``204``; methods
  ``GET, POST, OPTIONS``; the requested headers; ``Max-Age`` 600) and
  ``Access-Control-Allow-Origin`` plus ``Access-Control-Expose-Headers`` on every answer.
  Keys travel in headers, never in cookies, so ``Access-Control-Allow-Credentials`` is never
  sent: a page must not use ``credentials: "include"``. With specific origins every answer
  carries ``Vary: Origin``.

Refusals are ``403`` with a JSON body in the shape of the endpoint the request was for
(``refusal_body``); a refused WebSocket gets the same ``403`` as its handshake answer.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from interlock.gateway.config import ServerConfig, normalize_origin
from interlock.gateway.lifecycle import EXEMPT_PATHS, Lifecycle
from interlock.transcript import JsonObject

RefusalBody = Callable[[str, int, str, str], JsonObject]
"""``(path, status, message, code)`` → the error body in that endpoint's shape."""

ALLOWED_METHODS = b"GET, POST, OPTIONS"
EXPOSED_HEADERS = b"x-interlock-translation"
PREFLIGHT_MAX_AGE = b"600"
_HOSTS_KEPT = 256
_TOKEN_LIST = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$")


def _dumps(body: JsonObject) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class BrowserPolicy:
    """Who may reach the gateway from a browser (see the module docstring)."""

    check_host: bool
    allowed_hosts: frozenset[str]
    allowed_origins: frozenset[str]
    cors_origins: frozenset[str]
    _hosts: dict[str, bool] = field(default_factory=dict[str, bool], compare=False, repr=False)
    """``Host`` values already judged (a client sends the same one on every request), at
    most :data:`_HOSTS_KEPT` of them."""

    @classmethod
    def from_config(cls, server: ServerConfig) -> BrowserPolicy:
        """The policy of ``[server]``."""
        return cls(
            check_host=not server.api_keys or bool(server.allowed_hosts),
            allowed_hosts=frozenset(server.allowed_hosts),
            allowed_origins=frozenset(server.allowed_origins),
            cors_origins=frozenset(server.cors_origins),
        )

    def host_allowed(self, host: str | None) -> bool:
        """True when ``Host`` passes (always, when the host is not checked)."""
        if not self.check_host:
            return True
        if host is None:
            return False
        allowed = self._hosts.get(host)
        if allowed is None:
            name = host_name(host)
            allowed = "*" in self.allowed_hosts or name in self.allowed_hosts
            allowed = allowed or is_loopback_name(name)
            if len(self._hosts) >= _HOSTS_KEPT:
                self._hosts.clear()
            self._hosts[host] = allowed
        return allowed

    def cors_origin(self, origin: str) -> str | None:
        """The ``Access-Control-Allow-Origin`` value for ``origin``, if it gets CORS."""
        if "*" in self.cors_origins:
            return "*"
        normalized = normalize_origin(origin)
        return origin if normalized is not None and normalized in self.cors_origins else None

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        """True when a request from ``origin`` may reach a route."""
        if "*" in self.allowed_origins or self.cors_origin(origin) is not None:
            return True
        normalized = normalize_origin(origin)
        if normalized is None:  # "null" (sandboxed frames, file: pages) or garbage
            return False
        if normalized in self.allowed_origins:
            return True
        return host is not None and normalized.partition("://")[2] == host.lower()

    @property
    def varies(self) -> bool:
        """True when answers differ by ``Origin`` (specific CORS origins)."""
        return bool(self.cors_origins) and "*" not in self.cors_origins


def host_name(host: str) -> str:
    """The name part of a ``Host`` value, lower-case, without the port."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.partition(":")[0]


def is_loopback_name(name: str) -> bool:
    """True for names only this machine answers to (RFC 6761 ``localhost`` included)."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


class BrowserGuard:
    """The ASGI middleware enforcing a :class:`BrowserPolicy` (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, policy: BrowserPolicy, refusal: RefusalBody) -> None:
        self.app = app
        self.policy = policy
        self.refusal = refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        host = _header(headers, b"host")
        policy = self.policy
        if not policy.host_allowed(host):
            message = f"host {host_name(host or '')!r} is not allowed without API keys"
            await self._refuse(scope, receive, send, message, "host_not_allowed")
            return
        origin = _header(headers, b"origin")
        preflight = kind == "http" and scope["method"] == "OPTIONS"
        if origin is not None and preflight and _header(headers, b"access-control-request-method"):
            await self._preflight(scope, receive, send, origin)
            return
        if origin is not None and not policy.origin_allowed(origin, host):
            message = f"origin {origin!r} is not allowed (server.allowed_origins, cors_origins)"
            await self._refuse(scope, receive, send, message, "origin_not_allowed")
            return
        allow = policy.cors_origin(origin) if origin is not None and kind == "http" else None
        if allow is None and (kind == "websocket" or not policy.varies):
            await self.app(scope, receive, send)
            return
        extra = _cors_headers(allow, policy.varies)
        await self.app(scope, receive, _adding_headers(send, extra))

    async def _preflight(self, scope: Scope, receive: Receive, send: Send, origin: str) -> None:
        allow = self.policy.cors_origin(origin)
        if allow is None:
            message = f"origin {origin!r} is not in server.cors_origins"
            await self._refuse(scope, receive, send, message, "origin_not_allowed")
            return
        headers = _cors_headers(allow, self.policy.varies)
        headers += [
            (b"access-control-allow-methods", ALLOWED_METHODS),
            (b"access-control-max-age", PREFLIGHT_MAX_AGE),
        ]
        requested = _header(scope["headers"], b"access-control-request-headers")
        if requested and _TOKEN_LIST.match(requested) and len(requested) <= 2048:
            headers.append((b"access-control-allow-headers", requested.encode()))
        if _header(scope["headers"], b"access-control-request-private-network") == "true":
            headers.append((b"access-control-allow-private-network", b"true"))
        headers.append((b"content-length", b"0"))
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, message: str, code: str
    ) -> None:
        body = _dumps(self.refusal(scope["path"], 403, message, code))
        if scope["type"] == "websocket":
            await deny_websocket(scope, receive, send, 403, body)
            return
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        if self.policy.varies:
            headers.append((b"vary", b"Origin"))
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _cors_headers(allow: str | None, varies: bool) -> list[tuple[bytes, bytes]]:
    headers: list[tuple[bytes, bytes]] = []
    if allow is not None:
        headers.append((b"access-control-allow-origin", allow.encode("latin-1")))
        headers.append((b"access-control-expose-headers", EXPOSED_HEADERS))
    if varies:
        headers.append((b"vary", b"Origin"))
    return headers


def _adding_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": _merged(message.get("headers", ()), extra)}
        await send(message)

    return sending


def _merged(
    headers: Iterable[tuple[bytes, bytes]], extra: list[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    merged = list(headers)
    for name, value in extra:
        if name == b"vary":
            index = next((i for i, (key, _) in enumerate(merged) if key.lower() == b"vary"), None)
            if index is not None:
                merged[index] = (b"vary", merged[index][1] + b", " + value)
                continue
        merged.append((name, value))
    return merged


async def deny_websocket(
    scope: Scope, receive: Receive, send: Send, status: int, body: bytes
) -> None:
    """Refuse a WebSocket handshake with ``status`` and a JSON ``body`` (the ASGI denial
    response extension; a plain ``403`` close where the server lacks it)."""
    if (await receive())["type"] != "websocket.connect":
        return
    extensions: dict[str, Any] = scope.get("extensions") or {}
    if "websocket.http.response" not in extensions:
        await send({"type": "websocket.close", "code": 1008})
        return
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


class FrontDoor:
    """``DrainGate(BrowserGuard(app))`` (given as ``gated``) with the usual request let
    through in one step.

    An HTTP request to a path the drain gate counts, while the replica accepts requests,
    under a policy that adds no headers (no specific CORS origins), with no header named
    twice, no ``Origin`` and a ``Host`` the policy allows, passes both unchanged: the gate
    counts it in flight and the guard hands it on as it is. That request goes straight to
    ``app``, counted the same way; every other request goes through ``gated``.
    """

    __slots__ = ("app", "gated", "lifecycle", "policy", "varies")

    def __init__(
        self, app: ASGIApp, gated: ASGIApp, *, lifecycle: Lifecycle, policy: BrowserPolicy
    ) -> None:
        self.app = app
        self.gated = gated
        self.lifecycle = lifecycle
        self.policy = policy
        self.varies = policy.varies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        lifecycle = self.lifecycle
        if scope["type"] == "http" and lifecycle.state == "serving" and not self.varies:
            headers: list[tuple[bytes, bytes]] = scope["headers"]
            named = dict(headers)
            host = named.get(b"host")
            if (
                len(named) == len(headers)
                and b"origin" not in named
                and host is not None
                and self.policy.host_allowed(host.decode("latin-1"))
                and scope["path"] not in EXEMPT_PATHS
            ):
                lifecycle.requests += 1
                try:
                    await self.app(scope, receive, send)
                finally:
                    lifecycle.requests -= 1
                return
        await self.gated(scope, receive, send)
