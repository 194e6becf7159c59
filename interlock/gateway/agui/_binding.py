"""The binding's shared half: agents by name, input decoding, starting runs.

Transports (SSE, WebSocket) stay thin: they parse frames, ask :class:`AguiBinding` for a
decoded input and a started :class:`~interlock.gateway.agui._run.AguiRun`, and write out
its frames.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from interlock.codecs.agui import RunInput, SealError, decode_run_input
from interlock.gateway.agui._agents import AgentRuntime
from interlock.gateway.agui._context import RunContext
from interlock.gateway.agui._run import AguiRun
from interlock.gateway.agui._threads import RunRefusedError
from interlock.gateway.auth import KeyRing
from interlock.gateway.lifecycle import RUN_SHUTDOWN_CODE, RUN_SHUTDOWN_MESSAGE, Lifecycle
from interlock.gateway.metrics import Metrics
from interlock.gateway.stores import RunKey, unstorable_field
from interlock.transcript import JsonObject, JsonValue

KEEPALIVE_SECONDS = 15.0
"""The longest an SSE stream stays silent: a ``: ping`` comment goes out after this."""

CANCEL_WAIT_SECONDS = 10.0
"""How long ``POST …/runs/{runId}/cancel`` waits for the run to end before answering 202."""


@dataclass(slots=True, kw_only=True)
class AguiBinding:
    """Agents served over AG-UI and everything their runs share.

    ``max_frame_bytes`` bounds an SSE body and a WebSocket text frame alike.
    """

    agents: Mapping[str, AgentRuntime]
    context: RunContext
    keys: KeyRing
    max_frame_bytes: int = 16 * 1024 * 1024
    keepalive_seconds: float = KEEPALIVE_SECONDS
    lifecycle: Lifecycle | None = None
    """The replica's lifecycle: runs join it, so a drain waits for them (or stops them)."""
    metrics: Metrics = field(default_factory=Metrics)
    """Where runs are counted (``interlock_agui_*``); the gateway's own in ``interlock serve``."""
    cancel_wait_seconds: float = CANCEL_WAIT_SECONDS
    active: dict[RunKey, AguiRun] = field(default_factory=dict[RunKey, AguiRun])
    """The runs running in this process, so a cancel for one of them acts at once."""

    def agent(self, name: str) -> AgentRuntime | None:
        """The agent called ``name``, if configured."""
        return self.agents.get(name)

    def decode(self, payload: JsonValue, tenant: str) -> RunInput:
        """A validated ``RunAgentInput``.

        Raises ``DecodeError`` (malformed input: HTTP 400 / ``INVALID_INPUT``),
        :class:`RunRefusedError` ``SEAL_INVALID`` for a tampered or foreign sealed value, or
        ``UNSTORABLE_INPUT`` naming the first field no store can hold (a lone surrogate, a
        non-JSON number): refused before any tool runs, never failing at the save after.
        """
        field = unstorable_field(payload)
        if field is not None:
            raise RunRefusedError(
                "UNSTORABLE_INPUT",
                f"{field}: not storable (a lone UTF-16 surrogate or a non-JSON number)",
            )
        try:
            return decode_run_input(payload, seal_key=self.context.seal_key, tenant=tenant)
        except SealError as error:
            raise RunRefusedError(
                "SEAL_INVALID", f"{error.path or 'encryptedValue'}: {error.detail}"
            ) from None

    def start(self, runtime: AgentRuntime, run_input: RunInput, tenant: str) -> AguiRun:
        """A started run; read its frames with :meth:`AguiRun.next_batch`."""
        run = AguiRun(self.context, runtime, run_input, tenant)
        run.start()
        key = RunKey(tenant, run_input.thread_id, run_input.run_id)
        self.active[key] = run

        def forget() -> None:
            if self.active.get(key) is run:
                del self.active[key]

        run.add_done_callback(forget)
        if self.lifecycle is not None:
            run.add_done_callback(self.lifecycle.join(DrainedRun(run)))
        return run

    @property
    def accepting(self) -> bool:
        """False once the replica is draining: no new run may start."""
        return self.lifecycle is None or self.lifecycle.accepting


class DrainedRun:
    """A run as a drain :class:`~interlock.gateway.lifecycle.Participant`: the drain waits
    for it, and past the deadline it ends with ``RUN_ERROR`` ``REPLICA_SHUTDOWN``."""

    __slots__ = ("run",)

    def __init__(self, run: AguiRun) -> None:
        self.run = run

    @property
    def busy(self) -> bool:
        return self.run.phase != "ended"

    def draining(self) -> None:
        """A started run goes on until it ends or the deadline passes."""

    def stop(self) -> None:
        self.run.cancel((RUN_SHUTDOWN_CODE, RUN_SHUTDOWN_MESSAGE))


def error_event(message: str, code: str) -> JsonObject:
    """A bare ``RUN_ERROR`` for input refused before any run started."""
    return {"type": "RUN_ERROR", "message": message, "code": code}
