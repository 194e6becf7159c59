"""An agent's routed model: each model call goes through the gateway's :class:`Router`.

The router picks the deployment (weighted, healthy), retries clean failures (a connect
error, a 429 or 5xx answer, a stream whose first event is such an error) and takes the
model's fallbacks only when the thread's history reaches them without loss under the
route's policy — exactly as for proxied requests, with the same health and metrics. A
200 stream is held until its first event and is the loop's from then on: nothing
switches after the loop saw an update.

Here a call is encoded from the loop's canonical request for each deployment tried
(:meth:`AgentSender.retarget`); it never passes through the proxy's ingress, vault or
rate limits. The outcome is the chosen deployment's upstream and its open answer, or a
``StreamFailed`` with a ``RUN_ERROR`` code; routing notes (fallbacks taken or skipped)
are named in the failure's message.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, fields, replace

import httpx

from interlock.gateway.access_log import AccessRecord
from interlock.gateway.bodies import ProxyError
from interlock.gateway.headers import translation_label
from interlock.gateway.model_field import compact_json
from interlock.gateway.operations import ProxyOperations
from interlock.gateway.proxy import Proxy, ProxyCall, Route
from interlock.gateway.routing import NO_DEPLOYMENT, Router
from interlock.gateway.upstream import Upstream
from interlock.transcript import Continuation, ReplayPolicy, Request


def prepared_for(upstream: Upstream, request: Request) -> Request:
    """``request`` as sent to ``upstream``: streaming, and stateless for a Responses one.

    The gateway owns the thread and replays it in full, so a Responses upstream gets
    ``store: false`` (encrypted reasoning comes back inline) unless the loop is using
    service-side continuation itself.
    """
    prepared = _streaming(request)
    continuation = request.continuation
    if (
        upstream.dialect.http.stateful_service
        and continuation.previous_response_id is None
        and continuation.store is None
    ):
        prepared = replace(prepared, continuation=Continuation(store=False))
    return prepared


_REQUEST_FIELDS = tuple(field.name for field in fields(Request))
_request_values = operator.attrgetter(*_REQUEST_FIELDS)
_REQUEST_SETTERS = tuple(getattr(Request, name).__set__ for name in _REQUEST_FIELDS)
_set_stream = _REQUEST_SETTERS[_REQUEST_FIELDS.index("stream")]


def _streaming(request: Request) -> Request:
    """``replace(request, stream=True)``: every field read in one ``attrgetter`` call and
    written through its slot, as the dataclass's own ``__init__`` writes them (``Request``
    has no ``__post_init__``), without ``replace``'s pass over its fields and keyword
    call (~21k instructions less, once per model call)."""
    copy = object.__new__(Request)
    for setter, value in zip(_REQUEST_SETTERS, _request_values(request), strict=True):
        setter(copy, value)
    _set_stream(copy, True)
    return copy


class AgentSender:
    """The router's :class:`~interlock.gateway.routing.Sender` for agents' model calls.

    ``operations`` has no limiter or ledger (a run's usage is counted by the run itself);
    opening the answer is the proxy's own :meth:`Proxy.open_upstream`.
    """

    def __init__(self, proxy: Proxy) -> None:
        self.proxy = proxy
        self.operations = ProxyOperations()

    async def retarget(self, call: ProxyCall, route: Route) -> ProxyCall:
        """The loop's request encoded for ``route``; a 400 naming the loss when lossy."""
        assert call.source is not None, "a routed agent call keeps the loop's request"
        upstream = route.upstream
        request = prepared_for(upstream, replace(call.source, model=route.model.model))
        policy = ReplayPolicy(
            mode=upstream.config.replay_mode,
            signatures_required=route.model.signatures_required,
        )
        encoded = self.proxy.encode_checked(upstream, request, policy)
        body = compact_json(encoded.payload)
        translation = translation_label(encoded.warnings, 0)
        return replace(call, route=route, request=request, body=body, translation=translation)

    async def open_upstream(self, call: ProxyCall) -> httpx.Response:
        """The deployment's open answer (see :meth:`Proxy.open_upstream`)."""
        return await self.proxy.open_upstream(call)


@dataclass(frozen=True, slots=True)
class Opened:
    """The deployment that answered, its open answer, and the routing notes."""

    upstream: Upstream
    response: httpx.Response
    notes: str


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing answered: the ``RUN_ERROR`` code, message and status."""

    code: str
    message: str
    status: int


class RoutedModel:
    """An agent's routed model: its route (the model as configured) and the router."""

    def __init__(self, router: Router, route: Route, proxy: Proxy) -> None:
        self.router = router
        self.route = route
        self.sender = AgentSender(proxy)

    async def open(self, request: Request) -> Opened | Refused:
        """One model call sent through the router (``request`` not yet encoded)."""
        route = self.route
        call = ProxyCall(
            ingress=route.upstream.dialect,
            route=route,
            tenant="",
            request=request,
            body=b"",
            payload={},
            passthrough=False,
            translation="",
            record=AccessRecord(method="POST", path="", endpoint="agui", started=0.0),
            client_model=route.model.name,
            source=request,
        )
        try:
            answered, response = await self.router.open(self.sender, call)
        except ProxyError as error:
            message = error.message + routing_notes(call.translation)
            return Refused(code=_code(error), message=message, status=error.status)
        return Opened(answered.upstream, response, routing_notes(answered.translation))


def routing_notes(label: str) -> str:
    """The router's notes in a translation label (fallbacks taken or skipped), as a
    message suffix (``""`` when there are none)."""
    notes = [part for part in label.split("; ") if part.startswith("fallback ")]
    return f" (routing: {'; '.join(notes)})" if notes else ""


def _code(error: ProxyError) -> str:
    """The ``RUN_ERROR`` code of a routed call that nothing answered."""
    if error.code == "upstream_timeout":
        return "UPSTREAM_TIMEOUT"
    if error.status == 400 and error.code != NO_DEPLOYMENT:
        return "LOSSY_HISTORY"
    return "UPSTREAM_UNAVAILABLE"
