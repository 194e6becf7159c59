"""A run's model calls as operators see them: rate limits, and usage under the deployment
that answered.

An agent's :class:`~interlock.gateway.agui._model.UpstreamChatModel` is shared by all its
runs, so what a call needs from its run, and tells it, goes through :data:`CURRENT`, a
context variable each run sets to its own :class:`RunCalls` in its task:

* before a call is sent, :func:`admit` checks the ``[[rate_limits]]`` of the run's tenant
  and the agent's model, exactly as for a proxied request (every model call of a run is
  one request; its input and output tokens are charged to the token limits once it
  ends). A refused call is never sent: it ends the run with ``RUN_ERROR``
  :data:`RATE_LIMITED` (or :data:`LIMITER_UNAVAILABLE` when a shared limiter's Redis is
  unreachable), and :meth:`RunCalls.error_labels` gives the wait for the
  ``RUN_ERROR``'s ``metadata.interlock`` (``retryAfterSeconds``, ``retryAfterMs``);
* the model notes which deployment answered a call, and its provider (:func:`answered_by`;
  a routed model's call may be answered by a retried deployment or a fallback's); the
  provider goes to ``on_answer`` (the run's encoder, whose usage entries name it).

The run feeds every loop event to :meth:`RunCalls.observe`, which counts each call that
was sent, once it ends, in the usage ledger (:mod:`interlock.gateway.usage`) under the
run's tenant, the agent's model and the deployment that answered it. A call cut short
before it finished (a cancel) is neither counted nor charged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Callable
from contextvars import ContextVar

from interlock.core_loop import LoopEvent, ModelUpdate
from interlock.gateway.operations import ProxyOperations
from interlock.gateway.usage import UsageLedger
from interlock.transcript import JsonObject, ResponseFinished, StreamFailed, Usage, UsageUpdate

LOGGER = logging.getLogger("interlock.gateway.agui")

RATE_LIMITED = "RATE_LIMITED"
"""The ``RUN_ERROR`` code of a model call a rate limit refused (nothing was sent)."""
LIMITER_UNAVAILABLE = "RATE_LIMITER_UNAVAILABLE"
"""The ``RUN_ERROR`` code when the shared rate limits cannot be read (nothing was sent)."""


class RunCalls:
    """One run's model calls (see the module docstring).

    ``deployment`` labels a call no deployment was noted for (an unrouted model's one
    upstream, or a routed call nothing answered); ``operations`` holds the rate limits.
    """

    __slots__ = (
        "_answered",
        "_charge",
        "_deployment",
        "_ledger",
        "_model",
        "_operations",
        "_refused_for",
        "_tenant",
        "_usage",
        "on_answer",
    )

    def __init__(
        self,
        ledger: UsageLedger | None,
        tenant: str,
        model: str,
        deployment: str,
        operations: ProxyOperations | None = None,
    ) -> None:
        self._ledger = ledger
        self._tenant = tenant
        self._model = model
        self._deployment = deployment
        self._operations = operations
        self.on_answer: Callable[[str], None] | None = None
        """Told the provider of each deployment that answers a call (the run's encoder)."""
        self._answered: str | None = None
        self._usage: Usage | None = None
        self._refused_for: float | None = None
        self._charge: asyncio.Task[None] | None = None

    async def admit(self) -> StreamFailed | None:
        """``None`` when the next call may be sent (and is counted); else the failure
        ending the run. The previous call's token charge is settled first."""
        limiter = None if self._operations is None else self._operations.limiter
        if limiter is None:
            return None
        if self._charge is not None:
            with contextlib.suppress(Exception):  # a failed charge was logged
                await self._charge
            self._charge = None
        try:
            refusal = await limiter.admit(self._tenant, self._model)
        except Exception:  # Redis unreachable: refuse rather than run unmetered
            LOGGER.warning("rate limits of %s cannot be checked", self._tenant, exc_info=True)
            self._refused_for = 1.0
            message = "rate limits cannot be checked now (the shared store is unreachable)"
            return StreamFailed(code=LIMITER_UNAVAILABLE, message=message, status=503)
        if refusal is None:
            return None
        assert self._operations is not None, "a limiter comes with its operations"
        self._operations.refused[self._tenant, self._model, refusal.bucket.kind] += 1
        self._refused_for = refusal.retry_after
        return StreamFailed(code=RATE_LIMITED, message=refusal.message(self._tenant), status=429)

    def answered_by(self, deployment: str, provider: str) -> None:
        """The current call is being answered by ``deployment`` (an upstream's name), of
        ``provider``."""
        self._answered = deployment
        if self.on_answer is not None:
            self.on_answer(provider)

    def observe(self, event: LoopEvent) -> None:
        """Note a model call's usage; count and charge the call when it ends (finished or
        failed), unless it was refused before being sent."""
        if not isinstance(event, ModelUpdate):
            return
        update = event.update
        if isinstance(update, UsageUpdate):
            self._usage = update.usage
        elif isinstance(update, ResponseFinished | StreamFailed):
            usage, self._usage = self._usage, None
            deployment, self._answered = self._answered or self._deployment, None
            if isinstance(update, StreamFailed) and self._refused_for is not None:
                return  # refused by the limits: nothing was sent
            if self._ledger is not None:
                self._ledger.record(self._tenant, self._model, deployment, usage)
            if self._operations is not None:
                self._charge = self._operations.charge(self._tenant, self._model, usage)

    def error_labels(self, code: str) -> JsonObject | None:
        """What a ``RUN_ERROR`` with ``code`` adds in ``metadata.interlock``: when to come
        back, after a refusal by the limits (``None`` otherwise)."""
        wait = self._refused_for
        if wait is None or code not in (RATE_LIMITED, LIMITER_UNAVAILABLE):
            return None
        return {
            "retryAfterSeconds": max(1, math.ceil(wait)),
            "retryAfterMs": max(1, round(wait * 1000)),
        }


CURRENT: ContextVar[RunCalls | None] = ContextVar("interlock_agui_run_calls", default=None)
"""The running run's calls (``None`` outside a run: no limits, nothing noted)."""


async def admit() -> StreamFailed | None:
    """Admit the current run's next model call (see :meth:`RunCalls.admit`)."""
    calls = CURRENT.get()
    return None if calls is None else await calls.admit()


def answered_by(deployment: str, provider: str) -> None:
    """Note on the current run (if any) that ``deployment`` (of ``provider``) answers its
    current call."""
    calls = CURRENT.get()
    if calls is not None:
        calls.answered_by(deployment, provider)
