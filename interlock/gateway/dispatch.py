"""The gateway's ASGI app: Starlette's, with one lean path in front for the usual request.

A Starlette app answers every request through ``ServerErrorMiddleware`` (a wrapper around
every ``send``), the user middleware, ``ExceptionMiddleware`` (another ``send`` wrapper and
a closure per request), its ``Router`` (each route's regex tried in order, a scope dict
built per try) and, for function endpoints, ``request_response`` (a third wrapper). For a
request that matches one route and whose method that route allows, none of this changes
the answer; it is work per request, and per streamed chunk for the ``send`` wrappers.

:class:`GatewayApp` builds its stack as :func:`front` says (the drain gate and the browser
guard, in that order, with :class:`~interlock.gateway.guard.FrontDoor` passing the usual
request through both in one step) around :class:`DirectRoutes`, which answers those
requests itself:

- the path is looked up in a dict of the routes without parameters (a route is left out
  when an earlier route's pattern matches its path too, so the first match still wins),
  then the routes with parameters are tried in order;
- the route's own ASGI app is called with the scope Starlette's router would give it
  (``router``, ``route``, ``endpoint``, ``path_params``); a function endpoint is called
  with a ``Request`` and its response sent, and an ``HTTPException`` it raises gets the
  app's handler for that status (Starlette's default answer otherwise);
- everything else (no route, a method the route does not allow, a ``root_path``, a
  WebSocket, a synchronous endpoint, lifespan) goes to Starlette's full stack, unchanged:
  404 and 405 in the caller's dialect, redirects, the lifespan.
  Middleware added with ``add_middleware`` turns the direct path off (it must see every
  request). Under ``interlock serve`` uvicorn's ``X-Forwarded-*`` handling sits in front
  of Starlette's stack only (:meth:`GatewayApp.take_proxy_headers`).

An exception escaping a direct route is answered as Starlette's ``ServerErrorMiddleware``
answers it: by the app's handler for 500 when nothing was sent yet (the gateway's answers
in the shape of the endpoint's API, see ``app.internal_error_handler``), then re-raised,
so uvicorn logs it and closes the connection (its own plain-text 500 without a handler).
Every gateway endpoint answers its own errors in its dialect's shape; this is for bugs.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, Router, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

Front = Callable[[ASGIApp], ASGIApp]
"""Wraps the dispatcher in the gateway's own middleware (drain gate, browser guard)."""
FunctionEndpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class _Direct:
    """One route the dispatcher answers: its pattern (``None`` for a fixed path), methods,
    what to call, and the scope entries Starlette's router would add."""

    route: Route
    methods: frozenset[str]
    app: ASGIApp | None
    function: FunctionEndpoint | None


class DirectRoutes:
    """ASGI app: answers an HTTP request that one route fully matches, else hands it on
    to ``fallback`` (Starlette's stack); see the module docstring."""

    def __init__(
        self,
        router: Router,
        fallback: ASGIApp,
        handlers: Mapping[Any, Callable[..., Any]],
    ) -> None:
        self.router = router
        self.fallback = fallback
        self.handlers = handlers
        self.fixed: dict[str, _Direct] = {}
        """Routes without parameters that no earlier route's pattern matches, by path."""
        self.scanned: list[tuple[re.Pattern[str], frozenset[str] | None, _Direct | None]] = []
        """Every other HTTP route in order: pattern, methods (``None``: any), and how to
        call it (``None``: Starlette answers it)."""
        self._defaults = ExceptionMiddleware(fallback)
        self._plan(router.routes)

    def _plan(self, routes: Sequence[BaseRoute]) -> None:
        if any(not isinstance(key, int) for key in self.handlers) or any(
            type(route) not in (Route, WebSocketRoute) for route in routes
        ):
            return  # exception handlers by class, mounts, hosts: Starlette answers all
        earlier: list[re.Pattern[str]] = []
        for route in routes:
            if not isinstance(route, Route):
                continue  # a WebSocket route never matches an HTTP request
            direct = _direct(route)
            path = route.path
            fixed = not route.param_convertors and path not in self.fixed
            if direct is not None and fixed and not any(seen.match(path) for seen in earlier):
                self.fixed[path] = direct
            else:
                methods = None if route.methods is None else frozenset(route.methods)
                self.scanned.append((route.path_regex, methods, direct))
            earlier.append(route.path_regex)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("root_path"):
            await self.fallback(scope, receive, send)
            return
        path: str = scope["path"]
        direct = self.fixed.get(path)
        params: dict[str, Any] = {}
        if direct is None:
            direct, params = self._match(path, scope["method"])
        if direct is None or scope["method"] not in direct.methods:
            await self.fallback(scope, receive, send)
            return
        scope["router"] = self.router
        scope["route"] = direct.route
        scope["endpoint"] = direct.route.endpoint
        scope["path_params"] = params
        try:
            if direct.app is not None:
                await direct.app(scope, receive, send)
            else:
                assert direct.function is not None
                await self._function(direct.function, scope, receive, send)
        except Exception as error:
            await self._server_error(scope, receive, send, error)
            raise

    async def _server_error(
        self, scope: Scope, receive: Receive, send: Send, error: Exception
    ) -> None:
        """What ``ServerErrorMiddleware`` does for a route's exception before re-raising
        it: the app's handler for 500 answers, unless the answer had started (the server
        then refuses a second start, and closes the connection once the error reaches it).
        Without a handler for 500 the server answers its own plain 500."""
        handler = self.handlers.get(500)
        if handler is None:
            return
        answer = handler(Request(scope, receive), error)
        response: Response = await answer if inspect.isawaitable(answer) else answer
        with contextlib.suppress(RuntimeError):  # started: "Expected ... body" / "after ..."
            await response(scope, receive, send)

    def _match(self, path: str, method: str) -> tuple[_Direct | None, dict[str, Any]]:
        """The first route matching path and method, as Starlette's router picks it (a
        route matching the path only is passed over); ``None`` when Starlette answers."""
        for pattern, methods, direct in self.scanned:
            found = pattern.match(path)
            if found is None or (methods is not None and method not in methods):
                continue
            if direct is None:
                return None, {}
            convertors = direct.route.param_convertors
            params = {
                key: convertors[key].convert(value) for key, value in found.groupdict().items()
            }
            return direct, params
        return None, {}

    async def _function(
        self, function: FunctionEndpoint, scope: Scope, receive: Receive, send: Send
    ) -> None:
        request = Request(scope, receive, send)
        try:
            response = await function(request)
        except HTTPException as error:
            response = await self._http_error(request, error)
        await response(scope, receive, send)

    async def _http_error(self, request: Request, error: HTTPException) -> Response:
        handler = self.handlers.get(error.status_code)
        if handler is None:
            return await self._defaults.http_exception(request, error)
        answer = handler(request, error)
        return await answer if inspect.isawaitable(answer) else answer


def _direct(route: Route) -> _Direct | None:
    """The route as the dispatcher calls it, or ``None`` to leave it to Starlette."""
    if route.methods is None:
        return None
    methods = frozenset(route.methods)
    if route.app is route.endpoint:  # a bare ASGI app: Starlette calls it as it is
        return _Direct(route, methods, route.app, None)
    wrapped = getattr(route.app, "__qualname__", "") == "request_response.<locals>.app"
    if wrapped and inspect.iscoroutinefunction(route.endpoint):
        return _Direct(route, methods, None, route.endpoint)
    return None


class GatewayApp(Starlette):
    """A Starlette app whose stack is ``front(DirectRoutes(router, Starlette's stack))``.

    Starlette's own stack (``ServerErrorMiddleware``, ``ExceptionMiddleware``, router) is
    built as usual and serves every request the direct path leaves to it; ``front`` wraps
    both, so the drain gate and the browser guard see every request exactly once.
    """

    def __init__(self, *, front: Front, **options: Any) -> None:
        super().__init__(**options)
        self.front = front
        self.trusted_proxies: list[str] | str | None = None
        """Set by :meth:`take_proxy_headers`: the addresses whose ``X-Forwarded-*``
        headers Starlette's stack reads."""

    def take_proxy_headers(self, trusted: list[str] | str) -> None:
        """Read ``X-Forwarded-Proto`` / ``-For`` from ``trusted`` proxies (uvicorn's
        ``ProxyHeadersMiddleware``) in Starlette's stack only, not on the direct path.

        uvicorn wraps the whole app in that middleware (one more layer and a scan of the
        headers per request) to set the scope's ``scheme`` and ``client``; no route the
        direct path answers reads either (the gateway's handlers never look at the
        client's address or scheme), while Starlette's stack does (a redirect's URL, a
        route added with middleware). The server calls this instead of letting uvicorn
        wrap the app (:class:`~interlock.gateway.server.DrainingServer`).
        """
        self.trusted_proxies = trusted
        self.middleware_stack = None  # built again, with it, on the next request

    def build_middleware_stack(self) -> ASGIApp:
        """``front`` around the direct routes around Starlette's stack; with middleware
        added through ``add_middleware``, ``front`` around Starlette's stack alone, so that
        middleware sees every request."""
        full = super().build_middleware_stack()
        if self.trusted_proxies is not None:
            wrapped = ProxyHeadersMiddleware(cast(Any, full), trusted_hosts=self.trusted_proxies)
            full = cast(ASGIApp, wrapped)  # uvicorn's ASGI types, the same protocol
        if self.user_middleware:
            return self.front(full)
        return self.front(DirectRoutes(self.router, full, self.exception_handlers))
