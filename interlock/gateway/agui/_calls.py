"""A run's model calls as operators see them: usage under the deployment that answered.

An agent's :class:`~interlock.gateway.agui._model.UpstreamChatModel` is shared by all its
runs, so what one run's calls need to tell the run goes through :data:`CURRENT`, a
context variable each run sets to its own :class:`RunCalls` in its task: the model notes
there which deployment answered a call (:meth:`RunCalls.answered_by`; a routed model's
call may be answered by a retried deployment or a fallback's). The run feeds every loop
event to :meth:`RunCalls.observe`, which counts each finished call in the usage ledger
(:mod:`interlock.gateway.usage`) under the run's tenant, the agent's model and that
deployment. A call cut short before it finished (a cancel) is not counted.
"""

from __future__ import annotations

from contextvars import ContextVar

from interlock.core_loop import LoopEvent, ModelUpdate
from interlock.gateway.usage import UsageLedger
from interlock.transcript import ResponseFinished, StreamFailed, Usage, UsageUpdate


class RunCalls:
    """One run's model calls (see the module docstring).

    ``deployment`` labels a call no deployment was noted for (an unrouted model's one
    upstream, or a routed call nothing answered).
    """

    __slots__ = ("_answered", "_deployment", "_ledger", "_model", "_tenant", "_usage")

    def __init__(
        self, ledger: UsageLedger | None, tenant: str, model: str, deployment: str
    ) -> None:
        self._ledger = ledger
        self._tenant = tenant
        self._model = model
        self._deployment = deployment
        self._answered: str | None = None
        self._usage: Usage | None = None

    def answered_by(self, deployment: str) -> None:
        """The current call is being answered by ``deployment`` (an upstream's name)."""
        self._answered = deployment

    def observe(self, event: LoopEvent) -> None:
        """Note a model call's usage; count the call when it ends (finished or failed)."""
        if not isinstance(event, ModelUpdate):
            return
        update = event.update
        if isinstance(update, UsageUpdate):
            self._usage = update.usage
        elif isinstance(update, ResponseFinished | StreamFailed):
            deployment = self._answered or self._deployment
            if self._ledger is not None:
                self._ledger.record(self._tenant, self._model, deployment, self._usage)
            self._usage = None
            self._answered = None


CURRENT: ContextVar[RunCalls | None] = ContextVar("interlock_agui_run_calls", default=None)
"""The running run's calls (``None`` outside a run: the model then notes nothing)."""


def answered_by(deployment: str) -> None:
    """Note on the current run (if any) that ``deployment`` answers its current call."""
    calls = CURRENT.get()
    if calls is not None:
        calls.answered_by(deployment)
