"""What every AG-UI run of one gateway shares (:class:`RunContext`), and how a frame is written."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from interlock.codecs.agui import SNAPSHOT_LIMIT
from interlock.gateway.agui._lease import LEASE_SECONDS, LEASE_WAIT_SECONDS, ThreadLocks
from interlock.gateway.agui._snapshots import SnapshotMemo
from interlock.gateway.model_field import compact_json
from interlock.gateway.operations import ProxyOperations
from interlock.gateway.stores import RunLog, Store
from interlock.gateway.tracing import Tracer
from interlock.gateway.usage import UsageLedger
from interlock.transcript import JsonValue

OUTBOX_LIMIT = 64 * 1024
"""Characters of serialized frames a run may have waiting for its client before it waits."""

STALL_SECONDS = 60.0
"""A client that takes no frame for this long while its run waits is treated as gone."""

REATTACH_SECONDS = 30.0
"""How long a run whose client left goes on without any client re-attached to it."""


def dumps(frame: JsonValue) -> str:
    """Compact JSON text of one frame (UTF-8 kept, no spaces), as :func:`compact_json`
    writes it (orjson: ~10× the standard library's C encoder on an AG-UI event)."""
    return compact_json(frame).decode()


def epoch_millis() -> int:
    """Integer milliseconds since the epoch (AG-UI ``timestamp``)."""
    return time.time_ns() // 1_000_000


@dataclass(slots=True, kw_only=True)
class RunContext:
    """What every run of one gateway shares.

    ``outbox_limit`` and ``stall_seconds`` bound what a run holds for a slow client (see
    :mod:`interlock.gateway.agui._outbox`). With a ``run_log`` every frame is also logged
    (:mod:`interlock.gateway.stores._runlog`), and a run whose client leaves goes on: it
    is cancelled only once no client has been re-attached for ``reattach_seconds``.
    ``lease_seconds`` and ``lease_wait_seconds`` govern the per-thread lease
    (:mod:`interlock.gateway.agui._lease`); a run checks the store for a cancel from another
    process every ``cancel_poll_seconds`` (``None``: no other process shares the store).
    """

    store: Store
    seal_key: bytes
    locks: ThreadLocks = field(default_factory=ThreadLocks)
    clock: Callable[[], int] = epoch_millis
    outbox_limit: int = OUTBOX_LIMIT
    stall_seconds: float | None = STALL_SECONDS
    snapshot_limit: int = SNAPSHOT_LIMIT
    run_log: RunLog | None = None
    reattach_seconds: float = REATTACH_SECONDS
    lease_seconds: float = LEASE_SECONDS
    lease_wait_seconds: float = LEASE_WAIT_SECONDS
    tracer: Tracer | None = None
    """With ``[tracing]``: every run's spans (:mod:`interlock.gateway.agui._trace`)."""
    usage: UsageLedger | None = None
    """Counts every model call of every run (:class:`~._calls.RunCalls`)."""
    operations: ProxyOperations | None = None
    """The gateway's rate limits, which every model call of a run is admitted by."""
    cancel_poll_seconds: float | None = None
    snapshots: SnapshotMemo = field(default_factory=SnapshotMemo)
    """Each thread's last ``MESSAGES_SNAPSHOT`` rendering, reused message by message."""
