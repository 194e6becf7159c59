"""One AG-UI run: the core loop driven over a server-owned thread, encoded as AG-UI events.

:class:`AguiRun` runs in its own task and hands frames (AG-UI events as JSON text,
serialized once) to the transport through a bounded :class:`~._outbox.Outbox`, so SSE and
WebSocket share one producer, a slow client makes the run wait instead of piling frames
up, and a cancel reaches the model call and the tools wherever the loop is waiting. Every run emits exactly one
terminal event; before it, the thread is saved and re-sent as ``MESSAGES_SNAPSHOT`` (and
``STATE_SNAPSHOT``), so the client holds the server's ids and nothing half-done.

What a run saves: the accepted input, then the loop's messages — first as a checkpoint
before the first tool of each batch runs, then at the end. A run that fails or is
cancelled keeps its finished model steps with every call closed (a journaled result, or
``interrupted``: see :mod:`._recover`), and the next run closes what a crashed one left
open, so no orphaned call is ever left in the thread and no tool runs twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias

import orjson

from interlock.codecs.agui import (
    AguiEventEncoder,
    RunInput,
    application_block,
    stamp_result_ids,
)
from interlock.core_loop import (
    Agent,
    AgentState,
    DecisionRefusedError,
    EventFolder,
    LedgerStore,
    LoopEvent,
    ModelStreamError,
    ModelUpdate,
    RunFinished,
    ToolStarted,
    run_loop,
)
from interlock.gateway.agui._agents import AgentRuntime, ProviderScope, RunToolsError
from interlock.gateway.agui._calls import CURRENT, RunCalls
from interlock.gateway.agui._context import RunContext, dumps
from interlock.gateway.agui._frames import close_loop, event_frames
from interlock.gateway.agui._lease import thread_lease
from interlock.gateway.agui._outbox import Outbox
from interlock.gateway.agui._patch import state_patch
from interlock.gateway.agui._recover import close_open_calls, fold_partial, settle_stopped
from interlock.gateway.agui._threads import Plan, RunRefusedError, interrupt_entries, reconcile
from interlock.gateway.agui._trace import RunTrace
from interlock.gateway.stores import (
    CorruptThreadError,
    RunKey,
    RunLog,
    RunLogWriter,
    ThreadRecord,
)
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Message,
    PartDelta,
    assign_occurrences,
)

LOGGER = logging.getLogger("interlock.gateway.agui")

Phase: TypeAlias = Literal["new", "preparing", "looping", "saving", "ended"]


class AguiRun:
    """One run of ``runtime`` over ``run_input`` for ``tenant``.

    Call :meth:`start`, read frames with :meth:`next_batch` until it returns ``None``, and
    :meth:`cancel` to stop it (the run then ends with outcome ``cancelled``). The phases go
    ``new → preparing → looping → saving → ended``; a cancel is honoured only while the
    loop runs (before that the run has not started anything; after it, saving must finish).
    While the client has not taken ``context.outbox_limit`` characters of frames, the run
    waits; once the client is gone (:meth:`aclose`) or has taken nothing for
    ``context.stall_seconds``, its frames are dropped and, without a run log, the run
    stops as if cancelled; with one it goes on *detached* (every frame still logged, see
    :class:`RunContext`).
    """

    def __init__(
        self, context: RunContext, runtime: AgentRuntime, run_input: RunInput, tenant: str
    ) -> None:
        self.context = context
        self.runtime = runtime
        self.input = run_input
        self.tenant = tenant
        self.phase: Phase = "new"
        self.cancel_requested = False
        self.client_cancelled = False  # the client asked (not: it left, the gateway stops)
        self._agent: Agent | None = None
        self.stop_error: tuple[str, str] | None = None
        """``(code, message)`` of the ``RUN_ERROR`` a :meth:`cancel` asked to end with."""
        self.decisions = 0  # interrupts and confirmations the input answered (Plan.decisions)
        self.outbox = Outbox(context.outbox_limit, context.stall_seconds)
        self.writer: RunLogWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._cancel_watch: asyncio.Task[None] | None = None
        self._terminal: list[JsonObject] = []
        self.encoder = AguiEventEncoder(
            thread_id=run_input.thread_id,
            run_id=run_input.run_id,
            seal_key=context.seal_key,
            tenant=tenant,
            approval_style=runtime.approval_style,
            client_tools=[tool.name for tool in run_input.tools],
            clock=context.clock,
            provider=runtime.provider,
            parent_run_id=run_input.parent_run_id,
            fixed_tools=runtime.fixed_tools,
        )
        self.state = AgentState(None)
        self._sent_state: tuple[int, JsonValue] = (0, None)
        self._client_state_known = False
        self.trace = RunTrace(context.tracer)
        self.calls = RunCalls(
            context.usage, tenant, runtime.usage_model, runtime.deployment, context.operations
        )
        self.calls.on_answer = self.encoder.answered_by  # usage names who answered

    @property
    def run_id(self) -> str:
        """The client's run id."""
        return self.input.run_id

    def start(self) -> None:
        """Start producing frames in a task of the running event loop."""
        if self.phase != "new":
            raise RuntimeError("the run was already started")
        self.phase = "preparing"
        self._task = asyncio.create_task(self._drive())

    def cancel(self, error: tuple[str, str] | None = None, *, by_client: bool = False) -> bool:
        """Stop the run (``RUN_FINISHED`` outcome ``cancelled``, or ``RUN_ERROR`` with
        ``error = (code, message)`` after saving the same way); ``False`` if too late.
        ``by_client``: the client asked (a cancel frame or request), so even a tool
        declared ``on_interrupt="retry"`` that it cut off is reported, not run again."""
        if self.phase in ("saving", "ended") or self._task is None:
            return False
        self.cancel_requested = True
        self.client_cancelled = self.client_cancelled or by_client
        self.stop_error = self.stop_error or error
        if self.phase == "looping":
            self._task.cancel()
        return True

    def add_done_callback(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once the run has ended (its terminal event is queued)."""
        if self._task is None:
            raise RuntimeError("the run was not started")
        self._task.add_done_callback(lambda _: callback())

    async def next_batch(self) -> list[str] | None:
        """Every frame (JSON text) available now, waiting for one; ``None`` after the last
        (``[]`` when the outbox was nudged: see :meth:`Outbox.nudge`).

        Safe to cancel: no frame is lost.
        """
        return await self.outbox.take()

    async def aclose(self) -> None:
        """The client went away: drop its frames; then go on detached (with a run log) or
        cancel if still running and wait until the thread is saved."""
        self.outbox.close()
        task = self._task
        if task is None or task.done() or self.detach():
            return
        self.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(task)

    def detach(self) -> bool:
        """Go on without a client (``False``: no run log, so the run cannot)."""
        log = self.context.run_log
        if log is None or self.writer is None:
            return False
        if self._watchdog is None and self.phase not in ("saving", "ended"):
            self._watchdog = asyncio.create_task(self._watch(log, self.writer.key))
        return True

    async def _watch(self, log: RunLog, key: RunKey) -> None:
        """Cancel the detached run once no client re-attached for ``reattach_seconds``."""
        seconds = self.context.reattach_seconds
        while self.phase not in ("saving", "ended"):
            await asyncio.sleep(seconds)
            seen = await log.reader_seen(key)
            if seen is None or log.clock() - seen > seconds:
                self.cancel()
                return

    async def _emit(self, frames: Sequence[JsonObject]) -> None:
        await self.outbox.put(self._serialized(frames))

    def _serialized(self, frames: Sequence[JsonObject]) -> list[str]:
        """``frames`` as JSON text (:func:`dumps`), logged when the run has a log."""
        try:
            if len(frames) == 1:  # most events (no comprehension's call)
                texts = [orjson.dumps(frames[0]).decode()]
            else:
                texts = [orjson.dumps(frame).decode() for frame in frames]
        except TypeError:  # what orjson refuses: as dumps writes it (see compact_json)
            texts = [dumps(frame) for frame in frames]
        if self.writer is not None:
            self.writer.append(texts)
        return texts

    async def _open_log(self) -> None:
        log = self.context.run_log
        if log is None:
            return
        key = RunKey(self.tenant, self.input.thread_id, self.input.run_id)
        try:
            self.writer = await log.open(key)
        except Exception:  # without its log the run still runs; it cannot be re-attached
            LOGGER.exception("opening the event log of run %s failed", self.input.run_id)
        seconds = self.context.cancel_poll_seconds
        if seconds is not None:  # a cancel from another process: see RunContext
            self._cancel_watch = asyncio.create_task(log.until_cancel_requested(key, seconds))
            self._cancel_watch.add_done_callback(
                lambda watch: watch.cancelled() or self.cancel(by_client=True)
            )

    async def _drive(self) -> None:
        CURRENT.set(self.calls)  # this run's task only: the shared model reports to it
        with self.trace.running(self.runtime.name, self.input.thread_id, self.input.run_id):
            await self._drive_traced()

    async def _drive_traced(self) -> None:
        try:
            await self._open_log()
            await self._emit(self.encoder.start())
            context, thread_id = self.context, self.input.thread_id
            async with (
                context.locks.hold(self.tenant, thread_id),
                thread_lease(
                    context.store,
                    self.tenant,
                    thread_id,
                    seconds=context.lease_seconds,
                    wait_seconds=context.lease_wait_seconds,
                ),
            ):
                await self._run()
            # The terminal event goes out only once the thread is saved and its lease
            # released: a client that sends its next input on seeing it never finds the
            # thread (or this socket) still busy with this run.
            await self._emit(self._terminal)
        except RunRefusedError as error:
            await self._fail(error.message, error.code)
        except Exception:  # a bug must still end the run with RUN_ERROR, never a hang
            LOGGER.exception("AG-UI run %s failed", self.input.run_id)
            await self._fail("internal gateway error", "INTERNAL_ERROR")
        finally:
            self.phase = "ended"
            self.outbox.end()
            await self._close_log()

    async def _close_log(self) -> None:
        for watcher in (self._watchdog, self._cancel_watch):
            if watcher is not None:
                watcher.cancel()
        if self.writer is not None:
            try:
                await self.writer.close()
            except Exception:  # the run's own end must not depend on the log
                LOGGER.exception("closing the event log of run %s failed", self.input.run_id)

    async def _fail(self, message: str, code: str) -> None:
        self.trace.root.fail(code, message)
        if not self.encoder.ended:
            await self._emit(self.encoder.fail(message, code=code))

    async def _run(self) -> None:
        store = self.context.store
        thread_id = self.input.thread_id
        ledger = store.ledger(self.tenant)
        try:
            loaded = await store.load_thread(self.tenant, thread_id)
        except CorruptThreadError as error:
            raise RunRefusedError("THREAD_CORRUPT", str(error)) from None
        loaded = loaded or ThreadRecord()
        state = self.input.state if self.input.state is not None else loaded.state
        shared = application_block(self.input.context, state)
        scope = ProviderScope(
            tenant=self.tenant,
            thread_id=thread_id,
            state=state,
            forwarded_props=self.input.forwarded_props,
        )
        try:
            agent = self.runtime.for_run(self.input.tools, shared, scope)
        except RunToolsError as error:
            raise RunRefusedError(error.code, str(error)) from None
        self._agent = agent
        thread = await self._recovered(loaded, ledger, agent)
        if self.input.state is None:
            state = thread.state
        plan: Plan = await reconcile(
            thread,
            self.input,
            ledger,
            thread_id,
            fixed_tools=self.runtime.fixed_tools,
            trust_instructions=self.runtime.trust_client_instructions,
        )
        self.decisions = plan.decisions
        self.state = AgentState(state, forwarded_props=self.input.forwarded_props)
        self._sent_state = (0, self.state.value)
        self._client_state_known = self.input.state is not None
        self.trace.decisions(plan.accepted, thread.messages)
        if plan.replay or self.cancel_requested:
            await self._finish_replay(thread, state)
            return
        messages = assign_occurrences([*thread.messages, *plan.accepted])
        events: list[LoopEvent] = []
        folder = EventFolder()  # the loop folds its events as it yields them
        ending = _Ending(thread)
        self.phase = "looping"
        loop = run_loop(
            agent,
            self.runtime.model,
            messages,
            ledger=ledger,
            thread_id=thread_id,
            exclusive=True,
            state=self.state,
            folder=folder,
        )
        try:
            # A cancel may land while the run waits for its client, outside the loop's own
            # awaits: closing the loop explicitly still closes the model stream and tools.
            try:
                await self._consume(loop, messages, events, ending)
            finally:
                await close_loop(loop)
        except DecisionRefusedError as error:
            raise RunRefusedError(error.code.upper(), str(error)) from None
        except ModelStreamError as error:
            self.trace.root.fail(error.code)
            ending.failure = (error.code, str(error).partition(": ")[2] or error.code)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            ending.cancelled = True
        self.phase = "saving"
        await self._save_and_finish(ending.thread, messages, events, folder, ending)

    async def _consume(
        self,
        loop: AsyncIterator[LoopEvent],
        messages: Sequence[Message],
        events: list[LoopEvent],
        ending: _Ending,
    ) -> None:
        """Collect, encode and queue the loop's events until it ends or the client is gone
        (``ending.cancelled``); ``ending.thread`` follows the checkpoints."""
        checkpointed: list[str] = []  # the message whose batch was checkpointed last
        outbox, encoder, state, writer = self.outbox, self.encoder, self.state, self.writer
        append, encode, offer = events.append, encoder.encode, outbox.offer
        async for event in loop:
            append(event)
            if type(event) is ModelUpdate and type(event.update) is PartDelta:
                # most events: no span, no usage, no checkpoint to look at
                frames = encode(event.update, message_id=event.message_id)
            else:
                await self._observe(event, messages, events, ending, checkpointed)
                frames = event_frames(self.encoder, event)
            if state.version != self._sent_state[0]:
                frames = frames + self._state_delta()
            if len(frames) == 1:  # most events: _serialized without its call
                try:
                    texts = [orjson.dumps(frames[0]).decode()]
                except TypeError:  # what orjson refuses: as dumps writes it
                    texts = [dumps(frames[0])]
                if writer is not None:
                    writer.append(texts)
            else:
                texts = self._serialized(frames)
            if not offer(texts):
                await outbox.put(texts)
            if outbox.closed and not self.detach():  # client gone or stalled
                ending.cancelled = True
                break

    async def _observe(
        self,
        event: LoopEvent,
        messages: Sequence[Message],
        events: list[LoopEvent],
        ending: _Ending,
        checkpointed: list[str],
    ) -> None:
        """Span, usage and checkpoint of an event other than a streamed delta: the thread
        is saved before the first tool of each batch runs (its journal entry is written),
        and ``ending.thread`` follows."""
        self.trace.observe(event)
        self.calls.observe(event)
        if isinstance(event, ToolStarted) and event.message_id not in checkpointed[-1:]:
            checkpointed[:] = [event.message_id]
            thread = ending.thread
            revision = await self._checkpoint(messages, events, self.state.value, thread)
            ending.thread = replace(thread, revision=revision)

    def _state_delta(self) -> list[JsonObject]:
        """``STATE_DELTA`` for what tools changed in the state since it was last sent
        (``STATE_SNAPSHOT`` the first time when the client sent no state of its own)."""
        version, sent = self._sent_state
        if self.state.version == version:
            return []
        current = self.state.value
        self._sent_state = (self.state.version, current)
        if not self._client_state_known:  # the client's copy may differ from ours: no patch
            self._client_state_known = True
            return self.encoder.state_snapshot(current)
        return self.encoder.state_delta(state_patch(sent, current))

    async def _finish_replay(self, thread: ThreadRecord, state: JsonValue) -> None:
        """Nothing new to act on: re-send the thread as it is and finish."""
        if state != thread.state:
            updated = ThreadRecord(
                messages=thread.messages,
                state=state,
                pending_interrupts=thread.pending_interrupts,
                revision=thread.revision,
            )
            if await self.context.store.save_thread(self.tenant, self.input.thread_id, updated):
                thread = updated
        await self._emit(self._snapshots(thread.messages, state))
        if self.stop_error is not None:
            code, message = self.stop_error
            await self._fail(message, code)
            return
        outcome = "cancelled" if self.cancel_requested else "success"
        self._terminal = self.encoder.finish(outcome=outcome)

    async def _save_and_finish(
        self,
        thread: ThreadRecord,
        messages: Sequence[Message],
        events: list[LoopEvent],
        folder: EventFolder,
        ending: _Ending,
    ) -> None:
        state = self.state.value
        finished = events[-1] if events and isinstance(events[-1], RunFinished) else None
        if finished is None:
            # the run stopped early; a retry tool it cut off waits for the next run
            # unless the client asked to stop (see _recover.settle_stopped)
            ledger = self.context.store.ledger(self.tenant)
            retrying = None if self.client_cancelled else self._agent
            produced = await settle_stopped(
                messages, fold_partial(events), ledger, self.input.thread_id, retrying
            )
            pending: tuple[JsonObject, ...] = ()
        else:
            produced = folder.result().messages  # the events, folded once by the loop
            pending = interrupt_entries(
                finished.pending_approvals, finished.pending_inputs, self.runtime.approval_style
            )
        produced = stamp_result_ids(produced, self.encoder.result_message_ids)
        record = ThreadRecord(
            messages=(*messages, *produced),
            state=state,
            pending_interrupts=pending,
            revision=thread.revision,
        )
        saved = await self.context.store.save_thread(self.tenant, self.input.thread_id, record)
        if saved is None:
            raise RunRefusedError(
                "THREAD_CONFLICT", "another run changed this thread at the same time; retry"
            )
        await self._emit(self._snapshots(saved.messages, state))
        if ending.failure is None and ending.cancelled and self.stop_error is not None:
            ending.failure = self.stop_error
        if ending.failure is not None:
            code, message = ending.failure
            labels = self.calls.error_labels(code)
            self._terminal = self.encoder.fail(message, code=code, labels=labels)
        elif ending.cancelled or finished is None:
            self._terminal = self.encoder.finish(outcome="cancelled")
        elif finished.outcome == "awaiting_client":
            calls = [call.call_id for call in finished.pending_calls]
            self._terminal = self.encoder.finish(pending_tool_call_ids=calls)
        else:
            self._terminal = self.encoder.finish()

    async def _recovered(
        self, thread: ThreadRecord, ledger: LedgerStore, agent: Agent
    ) -> ThreadRecord:
        """The thread with the calls an earlier run left open closed (see ``_recover``);
        a tool declared ``on_interrupt="retry"`` runs once more, seeing the thread's state."""
        state = AgentState(thread.state)
        closing = await close_open_calls(
            thread.messages, ledger, self.input.thread_id, retry=(agent, state)
        )
        if closing is None:
            return thread
        record = replace(
            thread,
            messages=(*thread.messages, closing),
            state=state.value if state.version else thread.state,
        )
        saved = await self.context.store.save_thread(self.tenant, self.input.thread_id, record)
        if saved is None:
            raise RunRefusedError("THREAD_CONFLICT", "the thread changed while it was recovered")
        return saved

    async def _checkpoint(
        self,
        messages: Sequence[Message],
        events: Sequence[LoopEvent],
        state: JsonValue,
        thread: ThreadRecord,
    ) -> str:
        """Save the thread with the run's steps so far (the calls about to run included),
        so a crash from here on leaves them in the thread for :meth:`_recovered`; the new
        revision."""
        produced = stamp_result_ids(fold_partial(events), self.encoder.result_message_ids)
        record = ThreadRecord(
            messages=(*messages, *produced), state=state, revision=thread.revision
        )
        saved = await self.context.store.save_thread(self.tenant, self.input.thread_id, record)
        if saved is None:
            raise RunRefusedError(
                "THREAD_CONFLICT", "another run changed this thread at the same time; retry"
            )
        return saved.revision

    def _snapshots(self, messages: Sequence[Message], state: JsonValue) -> list[JsonObject]:
        frames: list[JsonObject] = []
        if state is not None:
            frames += self.encoder.state_snapshot(state)
        context = self.context
        window, omitted = context.snapshots.window(
            (self.tenant, self.input.thread_id),
            messages,
            seal_key=context.seal_key,
            style=self.runtime.approval_style,
            limit=context.snapshot_limit,
        )
        return frames + self.encoder.messages_snapshot(window, omitted=omitted)


@dataclass(slots=True)
class _Ending:
    """How the loop stopped when it did not reach ``RunFinished`` normally, and the thread
    as last saved (each checkpoint gives it a new revision)."""

    thread: ThreadRecord
    failure: tuple[str, str] | None = None
    cancelled: bool = False
