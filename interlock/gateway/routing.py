"""Routed models: weighted deployments, health, retries and fidelity-checked fallbacks.

A *routed* model (several deployments, or fallbacks) is answered by :meth:`Router.open`,
which tries places in this order:

1. the model's own deployments, chosen by smooth weighted round-robin (deterministic:
   weights 3 and 1 give A A B A, A A B A, …) among those not cooling down, preferring one
   not yet tried for this request; at most ``1 + retries`` attempts. Retrying the same
   deployment waits (exponential backoff, at least a 429's ``retry-after``); moving to
   another one does not;
2. then each fallback model in order, the same way, with its own retries.

Only failures that cannot have run the request move on: a connect error (or connect or
pool timeout) and a 429 or 5xx answer. Anything else — a success, another 4xx, a timeout
or a connection lost after the request was written — is the answer. A 200 stream is
committed once it is returned, so nothing switches after its first byte.

Each attempt's history is encoded for that deployment (:meth:`Sender.retarget`: the
proxy's, or an AG-UI agent's). A deployment the history cannot reach without loss under
the policy (the route's
``replay_mode``, strict for fallbacks unless the route says ``degrade``) is skipped:
the skip is logged, counted, and — when a whole fallback is skipped — named in the
answer's ``x-interlock-translation`` (``; fallback NAME skipped: CODE at LOCATION``).
When every deployment of the requested model itself refuses the history, that refusal
(a 400) is the answer: fallbacks cover outages, not histories.

Every failure counts against the deployment's health (shared by every route using the
same upstream, model and key): ``failures_to_cool`` failures within
``failure_window_seconds`` cool it down for ``cooldown_seconds``. Health lives in each
process; replicas learn separately.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

import httpx

from interlock.codecs._sse import SseEvent, SseParser
from interlock.gateway import tracing
from interlock.gateway.config import GatewayConfig, ModelRoute
from interlock.gateway.config_routing import Deployment, RoutingConfig
from interlock.gateway.headers import NOT_SENT
from interlock.gateway.metrics import Metrics
from interlock.gateway.proxy import ProxyCall, ProxyError, Route
from interlock.gateway.upstream import (
    AnswerTooLarge,
    Upstream,
    UpstreamUnavailable,
    body_chunks,
    read_answer,
)
from interlock.transcript import (
    DecodeError,
    PartDelta,
    PartFinished,
    PartStarted,
    ResponseFinished,
    StreamFailed,
)

if TYPE_CHECKING:
    from interlock.gateway.operations import ProxyOperations

LOGGER = logging.getLogger("interlock.gateway")


def retryable(status: int) -> bool:
    """A 429 or any 5xx (Anthropic's 529 "overloaded" included): the request did not run."""
    return status == 429 or status >= 500


NO_DEPLOYMENT = "no_deployment_available"


class Sender(Protocol):
    """What the router sends through: the proxy, or an AG-UI agent's model
    (:mod:`interlock.gateway.agui._routed`), each encoding a call for a deployment."""

    operations: ProxyOperations

    async def retarget(self, call: ProxyCall, route: Route) -> ProxyCall:
        """``call`` encoded for ``route``; a 400 :class:`ProxyError` when lossy."""
        ...

    async def open_upstream(self, call: ProxyCall) -> httpx.Response:
        """The open answer; a :class:`ProxyError` caused by the transport error."""
        ...


@dataclass(slots=True)
class Health:
    """One deployment's recent failures and, when cooled, until when (monotonic seconds)."""

    label: str
    failures: deque[float] = field(default_factory=deque[float])
    cool_until: float = 0.0

    def available(self, now: float) -> bool:
        """True unless cooling down at ``now``."""
        return now >= self.cool_until

    def fail(self, now: float, policy: RoutingConfig) -> bool:
        """Count a failure; True when it starts a cooldown."""
        horizon = now - policy.failure_window_seconds
        while self.failures and self.failures[0] <= horizon:
            self.failures.popleft()
        self.failures.append(now)
        if len(self.failures) < policy.failures_to_cool:
            return False
        self.failures.clear()
        self.cool_until = now + policy.cooldown_seconds
        return True


@dataclass(slots=True, eq=False)
class Target:
    """One deployment as one route sees it: where to send, its weight, its shared health."""

    route: Route
    weight: int
    health: Health
    current: int = 0
    """Smooth weighted round-robin state, per route."""


@dataclass(slots=True)
class Group:
    """A model's deployments, as the requested model or as one of its fallbacks."""

    name: str
    targets: tuple[Target, ...]
    retries: int
    fallback: bool

    def pick(self, now: float, failed: set[Target], skipped: set[Target]) -> Target | None:
        """The next deployment: weighted, available, untried first; ``None`` if none is left."""
        usable = [t for t in self.targets if t not in skipped and t.health.available(now)]
        fresh = [t for t in usable if t not in failed]
        return _smooth_weighted(fresh or usable)


def _smooth_weighted(candidates: list[Target]) -> Target | None:
    """Nginx's smooth weighted round-robin over ``candidates`` (mutates their state)."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    total = 0
    best = candidates[0]
    for target in candidates:
        target.current += target.weight
        total += target.weight
        if target.current > best.current:
            best = target
    best.current -= total
    return best


@dataclass(slots=True)
class _Attempts:
    """What one routed request has done so far."""

    call: ProxyCall
    notes: list[str] = field(default_factory=list[str])
    refusal: ProxyError | None = None
    """The first lossy-history refusal among the requested model's own deployments."""
    failure: tuple[ProxyCall, httpx.Response] | tuple[ProxyCall, ProxyError] | None = None
    """The latest retryable failure: an error answer (read whole) or a clean transport error."""
    retry_after: str | None = None
    prepared: dict[Target, ProxyCall] = field(default_factory=dict[Target, ProxyCall])

    def label(self, prepared: ProxyCall | None) -> str:
        """The translation outcome with the routing notes (header and access log)."""
        base = prepared.translation if prepared is not None else NOT_SENT
        return "; ".join([base, *self.notes])


class Router:
    """Every routed model's groups (itself, then its fallbacks), and the shared health."""

    def __init__(
        self,
        groups: dict[str, tuple[Group, ...]],
        policy: RoutingConfig,
        metrics: Metrics,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.groups = groups
        self.policy = policy
        self.metrics = metrics
        self.clock = clock
        self.sleep = sleep

    async def open(self, proxy: Sender, call: ProxyCall) -> tuple[ProxyCall, httpx.Response]:
        """Send a prepared routed ``call`` somewhere; the answering call and its open response.

        Raises :class:`ProxyError` when nothing answered: the last clean transport error,
        the requested model's history refusal, or a 503 when every deployment cools down.
        """
        attempts = _Attempts(call)
        for group in self.groups[call.route.model.name]:
            answered = await self._group(proxy, group, attempts)
            if answered is not None:
                return self._finish(attempts, *answered)
            if attempts.refusal is not None and attempts.failure is None:
                raise self._raise(attempts, attempts.refusal, None)
        failure = attempts.failure
        if failure is None:
            raise self._raise(attempts, self._cooling(call.route.model.name), None)
        if isinstance(failure[1], ProxyError):
            raise self._raise(attempts, failure[1], None)
        return self._finish(attempts, failure[0], failure[1])

    async def _group(
        self, proxy: Sender, group: Group, attempts: _Attempts
    ) -> tuple[ProxyCall, httpx.Response] | None:
        """Try ``group``'s deployments: an answer, or ``None`` to go on to the next group."""
        failed: dict[Target, int] = {}
        skipped: set[Target] = set()
        refusal: ProxyError | None = None
        tries = 0
        while tries <= group.retries:
            target = group.pick(self.clock(), set(failed), skipped)
            if target is None:
                break
            prepared = await self._prepare(proxy, group, target, attempts)
            if isinstance(prepared, ProxyError):
                skipped.add(target)
                refusal = refusal or prepared
                continue
            if target in failed:
                await self._backoff(target, failed[target], attempts.retry_after)
            tries += 1
            response = await self._send(proxy, prepared, target, attempts)
            if response is not None:
                if group.fallback:
                    self._count(attempts, group, "taken")
                    attempts.notes.append(f"fallback to {group.name}")
                return prepared, response
            failed[target] = failed.get(target, 0) + 1
        if refusal is not None and not failed:
            if group.fallback:
                self._count(attempts, group, "skipped")
                where = f" at {refusal.param}" if refusal.param else ""
                attempts.notes.append(f"fallback {group.name} skipped: {refusal.code}{where}")
            elif attempts.refusal is None:
                attempts.refusal = refusal
        return None

    async def _prepare(
        self, proxy: Sender, group: Group, target: Target, attempts: _Attempts
    ) -> ProxyCall | ProxyError:
        """The call encoded for ``target``, or the refusal when its history would be lossy."""
        prepared = attempts.prepared.get(target)
        if prepared is not None:
            return prepared
        try:
            attributes = {"interlock.upstream": target.route.upstream.name}
            with tracing.span("translate", attributes=attributes):
                prepared = await proxy.retarget(attempts.call, target.route)
        except ProxyError as error:
            if error.status != 400:
                raise
            LOGGER.warning(
                "routing %s: %s %s skipped, the history would be lossy: %s at %s",
                attempts.call.route.model.name,
                f"fallback {group.name}" if group.fallback else "deployment",
                target.health.label,
                error.code,
                error.param,
            )
            return error
        attempts.prepared[target] = prepared
        return prepared

    async def _send(
        self, proxy: Sender, prepared: ProxyCall, target: Target, attempts: _Attempts
    ) -> httpx.Response | None:
        """The answer to give, or ``None`` after a retryable failure (kept in ``attempts``)."""
        try:
            with proxy.operations.calling(prepared):
                response = await proxy.open_upstream(prepared)
        except ProxyError as error:
            self._failed(target)
            cause = error.__cause__
            if not (isinstance(cause, UpstreamUnavailable) and cause.clean):
                raise self._raise(attempts, error, prepared) from cause  # may have run
            attempts.failure, attempts.retry_after = (prepared, error), None
            return None
        if not retryable(response.status_code):
            if response.status_code == 200 and prepared.request.stream:
                return await self._first_event(prepared, target, attempts, response)
            return response
        self._failed(target)
        attempts.retry_after = response.headers.get("retry-after")
        attempts.failure = (prepared, await _kept(prepared.upstream, response))
        return None

    async def _first_event(
        self, prepared: ProxyCall, target: Target, attempts: _Attempts, response: httpx.Response
    ) -> httpx.Response | None:
        """A 200 stream held until its first event, which may still be a retryable error
        (Anthropic's ``overloaded_error``, a Gemini 503 chunk): then ``None``, as for a 5xx.
        Nothing has reached the client yet, not even the status line."""
        upstream = prepared.upstream
        try:
            held, rest, failure = await _peek(upstream, response)
        except httpx.HTTPError as error:  # it may have run: the answer, never resent
            await response.aclose()
            self._failed(target)
            unavailable = upstream.unavailable(error)
            code = f"upstream_{unavailable.kind}"
            failed = ProxyError(unavailable.status, unavailable.message, code=code)
            raise self._raise(attempts, failed, prepared) from error
        except BaseException:  # the client went away (cancelled): free the connection
            await response.aclose()
            raise
        if failure is None:
            return _replayed(response, held, rest)
        await response.aclose()
        self._failed(target)
        status = failure.status or 502
        payload = upstream.dialect.error(status, f"{failure.message} ({failure.code})")
        attempts.retry_after = None
        attempts.failure = (prepared, httpx.Response(status, json=payload))
        return None

    async def _backoff(self, target: Target, failures: int, retry_after: str | None) -> None:
        """Wait before trying ``target`` again (it failed ``failures`` times already)."""
        self.metrics.upstream_retries[target.route.upstream.name] += 1
        policy = self.policy
        delay = policy.backoff_seconds * 2 ** (failures - 1)
        if retry_after is not None:
            with contextlib.suppress(ValueError):
                delay = max(delay, float(retry_after))
        await self.sleep(min(policy.backoff_max_seconds, delay))

    def _failed(self, target: Target) -> None:
        if target.health.fail(self.clock(), self.policy):
            self.metrics.deployment_cooldowns[target.health.label] += 1
            LOGGER.warning(
                "deployment %s cools down for %s s after %d failures",
                target.health.label,
                self.policy.cooldown_seconds,
                self.policy.failures_to_cool,
            )

    def _cooling(self, name: str) -> ProxyError:
        """The 503 when no deployment of ``name`` or its fallbacks was available."""
        now = self.clock()
        ends = [
            target.health.cool_until
            for group in self.groups[name]
            for target in group.targets
            if not target.health.available(now)
        ]
        wait = max(1, math.ceil(min(ends) - now)) if ends else 1
        return ProxyError(
            503,
            f"no deployment of {name} (or of its fallbacks) is available: "
            "every one is cooling down after failures or cannot take this history",
            code=NO_DEPLOYMENT,
            headers={"retry-after": str(wait)},
        )

    def _count(self, attempts: _Attempts, group: Group, outcome: str) -> None:
        self.metrics.routing_fallbacks[attempts.call.route.model.name, group.name, outcome] += 1

    def _finish(
        self, attempts: _Attempts, prepared: ProxyCall, response: httpx.Response
    ) -> tuple[ProxyCall, httpx.Response]:
        prepared.translation = attempts.label(prepared)
        record = prepared.record
        record.translation, record.upstream = prepared.translation, prepared.upstream.name
        return prepared, response

    def _raise(
        self, attempts: _Attempts, error: ProxyError, prepared: ProxyCall | None
    ) -> ProxyError:
        """``error`` to raise, with the original call labelled (its headers answer it)."""
        call = attempts.call
        call.translation = attempts.label(prepared)
        call.warnings = prepared.warnings if prepared is not None else ()
        call.record.translation = call.translation
        if prepared is not None:
            call.record.upstream = prepared.upstream.name
        return error


async def _kept(upstream: Upstream, response: httpx.Response) -> httpx.Response:
    """A retryable error answer read whole (its connection freed while others are tried)."""
    try:
        body = await read_answer(response, upstream.config.max_response_bytes)
    except (AnswerTooLarge, httpx.HTTPError):
        body = b""
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
    return httpx.Response(response.status_code, headers=headers, content=body)


async def _peek(
    upstream: Upstream, response: httpx.Response
) -> tuple[list[bytes], AsyncIterator[bytes], StreamFailed | None]:
    """The stream's bytes up to its first complete event, the rest, and the retryable
    failure that event reports before any content (``None`` when it is not one)."""
    parser = SseParser(upstream.config.max_response_bytes)
    rest = aiter(body_chunks(response))
    held: list[bytes] = []
    async for chunk in rest:
        held.append(chunk)
        start = 0
        while start < len(chunk):  # event by event: the relay parses the rest anyway
            end = _event_end(chunk, start)
            events = parser.feed(chunk[start:end])
            if events:
                return held, rest, _early_failure(upstream, events)
            start = end
    return held, rest, None


_BLANK_LINES = (b"\n\n", b"\r\n\r\n", b"\r\r")


def _event_end(chunk: bytes, start: int) -> int:
    """Where the first blank line after ``start`` ends (the chunk's end if none)."""
    ends = [
        found + len(blank) for blank in _BLANK_LINES if (found := chunk.find(blank, start)) >= 0
    ]
    return min(ends) if ends else len(chunk)


def _early_failure(upstream: Upstream, events: list[SseEvent]) -> StreamFailed | None:
    """Decoded one event at a time, up to the first content or failure (no further).

    Every dialect's error event says ``error`` (its event name or a JSON key): without
    the word, the events are not decoded at all (the relay decodes them anyway)."""
    if not any("error" in event.data or event.event == "error" for event in events):
        return None
    decoder = upstream.dialect.stream_decoder()
    for event in events:
        try:
            updates = decoder.feed(event)
        except DecodeError:
            return None  # the relay reports it, in the client's dialect
        for update in updates:
            if isinstance(update, PartStarted | PartDelta | PartFinished | ResponseFinished):
                return None
            if isinstance(update, StreamFailed):
                status = update.status
                return update if status is not None and retryable(status) else None
    return None


class _Replayed(httpx.AsyncByteStream):
    """The held bytes, then the rest of the upstream stream; closing closes the upstream."""

    def __init__(
        self, held: list[bytes], rest: AsyncIterator[bytes], upstream: httpx.Response
    ) -> None:
        self.held = held
        self.rest = rest
        self.upstream = upstream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.held:
            yield chunk
        async for chunk in self.rest:
            yield chunk

    async def aclose(self) -> None:
        await self.upstream.aclose()


def _replayed(
    response: httpx.Response, held: list[bytes], rest: AsyncIterator[bytes]
) -> httpx.Response:
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
    replayed = httpx.Response(
        response.status_code, headers=headers, stream=_Replayed(held, rest, response)
    )
    replayed.request = response.request
    return replayed


# ---------------------------------------------------------------- building


def plan_routes(
    config: GatewayConfig, upstreams: dict[str, Upstream], metrics: Metrics
) -> tuple[dict[str, Route], Router | None]:
    """Every model's route (a routed model's is its first deployment's) and the router
    for the routed ones (``None`` when no model is routed)."""
    health: dict[tuple[str, str, str | None], Health] = {}
    models = {model.name: model for model in config.models}

    def target(model: ModelRoute, deployment: Deployment, replay_mode: str | None) -> Target:
        key = (deployment.upstream, deployment.model, deployment.api_key_env)
        shared = health.setdefault(key, Health(deployment.label))
        upstream = _deployment_upstream(upstreams[deployment.upstream], deployment, replay_mode)
        single = ModelRoute(
            name=model.name,
            upstream=deployment.upstream,
            model=deployment.model,
            deployments=(deployment,),
            thought_signatures=model.thought_signatures,
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
    router = Router(groups, config.routing, metrics) if groups else None
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
