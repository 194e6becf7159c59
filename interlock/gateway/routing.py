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
``failure_window_seconds`` cool it down for ``cooldown_seconds``. Failures are counted
in each process; with a Redis store the cooldowns they start are shared by every process
on it (:mod:`.routing_shared`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import httpx

from interlock.gateway import tracing
from interlock.gateway.config_routing import RoutingConfig
from interlock.gateway.headers import NOT_SENT
from interlock.gateway.metrics import Metrics
from interlock.gateway.proxy import ProxyCall, ProxyError, Route
from interlock.gateway.routing_stream import kept, peek, replayed, retryable
from interlock.gateway.routing_targets import Group, Target
from interlock.gateway.upstream import UpstreamUnavailable

if TYPE_CHECKING:
    from interlock.gateway.operations import ProxyOperations
    from interlock.gateway.routing_shared import SharedCooldowns

LOGGER = logging.getLogger("interlock.gateway")


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
        self.shared: SharedCooldowns | None = None
        """With a Redis store: cooldowns shared with the other processes on it."""

    async def start(self) -> None:
        """Start sharing cooldowns (when shared); call once an event loop runs."""
        if self.shared is not None:
            await self.shared.start()

    async def close(self) -> None:
        """Stop sharing cooldowns and release the connection."""
        if self.shared is not None:
            await self.shared.close()

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
            if attempts.failure is not None:  # something failed before: this is a retry
                self._count_retry(target, group, target in failed)
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
        attempts.failure = (prepared, await kept(prepared.upstream, response))
        return None

    async def _first_event(
        self, prepared: ProxyCall, target: Target, attempts: _Attempts, response: httpx.Response
    ) -> httpx.Response | None:
        """A 200 stream held until its first event, which may still be a retryable error
        (Anthropic's ``overloaded_error``, a Gemini 503 chunk): then ``None``, as for a 5xx.
        Nothing has reached the client yet, not even the status line."""
        upstream = prepared.upstream
        try:
            held, rest, failure = await peek(upstream, response)
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
            return replayed(response, held, rest)
        await response.aclose()
        self._failed(target)
        status = failure.status or 502
        payload = upstream.dialect.error(status, f"{failure.message} ({failure.code})")
        attempts.retry_after = None
        attempts.failure = (prepared, httpx.Response(status, json=payload))
        return None

    async def _backoff(self, target: Target, failures: int, retry_after: str | None) -> None:
        """Wait before trying ``target`` again (it failed ``failures`` times already)."""
        policy = self.policy
        delay = policy.backoff_seconds * 2 ** (failures - 1)
        if retry_after is not None:
            with contextlib.suppress(ValueError):
                delay = max(delay, float(retry_after))
        await self.sleep(min(policy.backoff_max_seconds, delay))

    def _count_retry(self, target: Target, group: Group, again: bool) -> None:
        """Count an attempt after a failure: the same deployment ``again``, another of
        the model's deployments, or a fallback's."""
        kind = "same_deployment" if again else "fallback" if group.fallback else "other_deployment"
        self.metrics.upstream_retries[target.route.upstream.name, kind] += 1

    def _failed(self, target: Target) -> None:
        if target.health.fail(self.clock(), self.policy):
            self.metrics.deployment_cooldowns[target.health.label] += 1
            if self.shared is not None:
                self.shared.cooled(target.health, self.policy.cooldown_seconds)
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
