"""Per-run event logs: the frames a run sent, kept for a while so a client can re-attach.

Every AG-UI run writes its frames (JSON text, in order) to a log; the frame's position,
counted from 1, is its *event id* (SSE ``id:``; on WebSocket the client counts the frames
of the run). A client that lost its connection reads the frames after the last id it saw,
then follows the live ones until the run's terminal event, from any process sharing the
store: the log lives in the :class:`~._backend.KeyValueBackend` (memory, SQLite, Redis).

Layout (namespace ``runlog``, tenant-scoped; one writer per run, so no compare-and-set):

- ``runlog/<tenant>/<thread>`` → ``{"runId", "ended"}``: the thread's latest run;
- ``runlog/<tenant>/<thread>/<run>`` → the head: ``{"first", "next", "chunks":
  [[start, count, chars], …], "ended", "touchedAt"}`` (``first``: the oldest id still held);
- ``runlog/<tenant>/<thread>/<run>/<start>`` → a chunk: a JSON list of frames;
- ``runlog/<tenant>/<thread>/<run>/reader`` → when a re-attached reader last checked in;
- ``runlog/<tenant>/<thread>/<run>/cancel`` → present once a client asked to cancel the
  run (from any process; the run's owner polls it, see :meth:`RunLog.request_cancel`).

Limits: a writer flushes its frames every ``flush_seconds`` (and at the end), so a reader
on another process lags by up to that plus its ``poll_seconds``; a run's log holds at most
``max_chars`` characters of frames (the oldest chunks go first: a reader asking for ids
before ``first`` gets :class:`LogGapError`, and should hydrate the thread instead); a log
expires ``ttl_seconds`` after its run's last write. Expired logs of a thread are removed
when a run on it starts, if this process has not swept the thread in the last quarter TTL
(or ``sweep_seconds`` if shorter: a sweep reads every log the thread holds, so a thread
with many runs a minute must not pay it on every run), and every expired log (with its
thread's latest-run pointer when that names it) at most every ``sweep_seconds`` (a run
opening then sweeps): what a process
keeps for its runs is bounded by the runs of the last ``ttl_seconds + sweep_seconds``, and
the sweep's cost, spread over the runs between two sweeps, does not grow with the runs
served (counting sweeps by runs did: each one read every log held and every thread's
pointer, which were never removed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, cast

from interlock.gateway.model_field import compact_json
from interlock.gateway.stores._backend import KeyValueBackend, stop_if_cancelled
from interlock.gateway.stores._store import store_key
from interlock.transcript import JsonObject, JsonValue

LOGGER = logging.getLogger("interlock.gateway.stores")

MAX_CHARS = 4 * 1024 * 1024
TTL_SECONDS = 600.0
FLUSH_SECONDS = 0.05
POLL_SECONDS = 0.2
SWEEP_SECONDS = TTL_SECONDS / 4
THREADS_REMEMBERED = 10_000
"""Threads whose last sweep a process remembers between two sweeps of every log."""
OWNER_LOST_CODE = "RUN_OWNER_LOST"
"""``RUN_ERROR`` code ending the log of a run whose replica died before its terminal event."""
OWNER_LOST_MESSAGE = (
    "the gateway replica running this run stopped before it finished; what the run saved "
    "is in the thread: load it and send the input again to continue"
)


class LogGapError(Exception):
    """The frames after the requested id are partly gone (the log was trimmed)."""

    def __init__(self, first: int) -> None:
        super().__init__(f"this run's log now starts at event {first}")
        self.first = first


@dataclass(frozen=True, slots=True)
class RunKey:
    """Which run's log: tenant, thread, run.

    Its store keys are ``store_key("runlog", tenant, thread_id[, run_id[, part]])``; the
    quoted components are joined once, when the key is made (a run writes its log's
    keys several times), and every part named below quotes to itself.
    """

    tenant: str
    thread_id: str
    run_id: str
    _head: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_head", store_key("runlog", self.tenant, self.thread_id, self.run_id)
        )

    def latest(self) -> str:
        """The key of the thread's latest-run pointer."""
        return self._head.rpartition("/")[0]

    def head(self) -> str:
        return self._head

    def chunk(self, start: int) -> str:
        return f"{self._head}/{start:012d}"

    def reader(self) -> str:
        return self._head + "/reader"

    def cancel(self) -> str:
        return self._head + "/cancel"


@dataclass(frozen=True, slots=True)
class RunStatus:
    """A thread's latest logged run: its id, whether it ended, the last event id written."""

    run_id: str
    ended: bool
    last_event_id: int


CancelRequest: TypeAlias = Literal["unknown", "ended", "requested"]
"""What :meth:`RunLog.request_cancel` found: no log for the run, a run that already ended,
or a running run whose cancel request is now in the store."""


@dataclass(frozen=True, slots=True)
class LogRead:
    """Frames ``after + 1 …`` as far as written (``ended``: the run's last frame is among
    what was written)."""

    frames: list[str]
    ended: bool


@dataclass(slots=True)
class _Head:
    first: int = 1
    next: int = 1
    chunks: list[list[int]] = field(default_factory=list[list[int]])
    ended: bool = False
    touched_at: float = 0.0
    owner: str = ""

    def document(self) -> JsonObject:
        chunks: list[JsonValue] = [list[JsonValue](chunk) for chunk in self.chunks]
        return {
            "first": self.first,
            "next": self.next,
            "chunks": chunks,
            "ended": self.ended,
            "touchedAt": self.touched_at,
            "owner": self.owner,
        }

    @staticmethod
    def load(text: str) -> _Head:
        document = cast(JsonObject, json.loads(text))
        chunks = cast(list[list[int]], document.get("chunks") or [])
        return _Head(
            first=int(cast(int, document["first"])),
            next=int(cast(int, document["next"])),
            chunks=[list(chunk) for chunk in chunks],
            ended=bool(document.get("ended")),
            touched_at=float(cast(float, document.get("touchedAt") or 0.0)),
            owner=str(document.get("owner") or ""),
        )


class RunLog:
    """Event logs of runs over one backend (module docstring); one per gateway process."""

    def __init__(
        self,
        backend: KeyValueBackend,
        *,
        max_chars: int = MAX_CHARS,
        ttl_seconds: float = TTL_SECONDS,
        flush_seconds: float = FLUSH_SECONDS,
        poll_seconds: float = POLL_SECONDS,
        sweep_seconds: float = SWEEP_SECONDS,
        clock: Callable[[], float] = time.time,
        owner: str = "",
        owner_alive: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        self.backend = backend
        self.owner = owner
        """This process's replica id, recorded as the owner of the runs it writes."""
        self.owner_alive = owner_alive
        """Whether a run's owner is still alive; a follower ends the log of a dead owner's
        run with :data:`OWNER_LOST_CODE` (see :meth:`follow`)."""
        self.max_chars = max_chars
        self.ttl_seconds = ttl_seconds
        self.flush_seconds = flush_seconds
        self.poll_seconds = poll_seconds
        self.sweep_seconds = sweep_seconds
        self.clock = clock
        self._written: dict[RunKey, asyncio.Event] = {}
        self._swept_at = clock()
        self._threads_swept: dict[str, float] = {}
        """When this process last swept a thread's logs (prefix → time), since the last
        sweep of every log (which empties it)."""

    # ------------------------------------------------------------- writing

    async def open(self, key: RunKey) -> RunLogWriter:
        """A writer for a new run; the run becomes its thread's latest."""
        now = self.clock()
        if now - self._swept_at >= self.sweep_seconds:
            self._swept_at = now
            self._threads_swept.clear()
            await self.sweep("runlog/")
        else:
            prefix = key.latest() + "/"
            swept = self._threads_swept.get(prefix)
            if swept is None or now - swept >= min(self.sweep_seconds, self.ttl_seconds / 4):
                if len(self._threads_swept) >= THREADS_REMEMBERED:
                    self._threads_swept.clear()  # forgetting only makes a sweep come sooner
                self._threads_swept[prefix] = now
                await self.sweep(prefix)
        writer = RunLogWriter(self, key)
        writer.head.owner = self.owner
        await self.backend.delete(key.cancel())  # a run id used again starts uncancelled
        await writer.flush()
        return writer

    def _wake(self, key: RunKey) -> None:
        event = self._written.pop(key, None)
        if event is not None:
            event.set()

    async def sweep(self, prefix: str) -> None:
        """Delete every expired run log under ``prefix``, and its thread's latest-run
        pointer when that names the expired run."""
        now = self.clock()
        for stored_key, value in await self.backend.scan(prefix):
            if stored_key.rsplit("/", 1)[-1].isdigit() or stored_key.endswith(
                ("/reader", "/cancel")
            ):
                continue
            document = json.loads(value)
            if not isinstance(document, dict) or "first" not in document:
                continue
            head = _Head.load(value)
            if head.touched_at + self.ttl_seconds < now:
                doomed = [stored_key, stored_key + "/reader", stored_key + "/cancel"]
                doomed += [stored_key + f"/{start:012d}" for start, _, _ in head.chunks]
                for doomed_key in doomed:
                    await self.backend.delete(doomed_key)
                await self._forget_pointer(stored_key)

    async def _forget_pointer(self, head_key: str) -> None:
        """Delete the latest-run pointer of ``head_key``'s thread if it names that run."""
        pointer_key, _, quoted_run = head_key.rpartition("/")
        text = await self.backend.get(pointer_key)
        if text is None:
            return
        run_id = json.loads(text).get("runId")
        if isinstance(run_id, str) and store_key("runlog", run_id).partition("/")[2] == quoted_run:
            await self.backend.delete(pointer_key)

    # ------------------------------------------------------------- reading

    async def latest(self, tenant: str, thread_id: str) -> RunStatus | None:
        """The thread's latest run whose log is still held, if any."""
        text = await self.backend.get(store_key("runlog", tenant, thread_id))
        if text is None:
            return None
        run_id = str(json.loads(text)["runId"])
        head = await self._head(RunKey(tenant, thread_id, run_id))
        if head is None:
            return None
        return RunStatus(run_id=run_id, ended=head.ended, last_event_id=head.next - 1)

    async def _head(self, key: RunKey) -> _Head | None:
        text = await self.backend.get(key.head())
        if text is None:
            return None
        head = _Head.load(text)
        if head.touched_at + self.ttl_seconds < self.clock():
            return None
        return head

    async def read(self, key: RunKey, after: int) -> LogRead | None:
        """Frames after event id ``after``; ``None`` for an unknown or expired run.

        Raises :class:`LogGapError` when some of them were trimmed away.
        """
        head = await self._head(key)
        if head is None:
            return None
        if after + 1 < head.first:
            raise LogGapError(head.first)
        wanted = [chunk for chunk in head.chunks if chunk[0] + chunk[1] - 1 > after]
        texts = await self.backend.get_many([key.chunk(chunk[0]) for chunk in wanted])
        frames: list[str] = []
        for chunk, text in zip(wanted, texts, strict=True):
            if text is None:
                raise LogGapError(head.first)
            held = cast(list[str], json.loads(text))
            frames += held[max(0, after + 1 - chunk[0]) :]
        return LogRead(frames=frames, ended=head.ended)

    async def follow(
        self, key: RunKey, after: int, *, idle_seconds: float | None = None
    ) -> AsyncIterator[list[str]]:
        """Batches of frames after ``after``, live, until the run's last frame; an empty
        batch after ``idle_seconds`` without frames (a keep-alive cue).

        Raises ``LookupError`` for an unknown run and :class:`LogGapError` as :meth:`read`.
        """
        position = after
        checked_in = 0.0
        quiet_since = self.clock()
        while True:
            written = self._written.setdefault(key, asyncio.Event())
            read = await self.read(key, position)
            if read is None:
                raise LookupError(f"no event log for run {key.run_id!r}")
            if read.frames:
                position += len(read.frames)
                quiet_since = self.clock()
                yield read.frames
            elif idle_seconds is not None and self.clock() - quiet_since >= idle_seconds:
                quiet_since = self.clock()
                yield []
            if read.ended:
                return
            if self.clock() - checked_in >= 1.0:
                checked_in = self.clock()
                await self.backend.set_many({key.reader(): json.dumps(checked_in)})
                if not read.frames and await self.end_if_orphaned(key):
                    continue  # the log now ends with the owner-lost frame: read it
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_seconds):
                    await written.wait()

    async def end_if_orphaned(self, key: RunKey) -> bool:
        """End the log of a run whose owner died (no terminal frame will ever come).

        Appends one ``RUN_ERROR`` (code :data:`OWNER_LOST_CODE`, resumable: the thread
        holds what the run saved) and marks the log ended, by compare-and-set on the head,
        so of several followers exactly one writes it. ``True`` when the log is ended now.
        """
        if self.owner_alive is None:
            return False
        text = await self.backend.get(key.head())
        if text is None:
            return False
        head = _Head.load(text)
        if head.ended or not head.owner or await self.owner_alive(head.owner):
            return head.ended
        frame = json.dumps(
            {"type": "RUN_ERROR", "message": OWNER_LOST_MESSAGE, "code": OWNER_LOST_CODE}
        )
        start = head.next
        head.chunks.append([start, 1, len(frame)])
        head.next += 1
        head.ended = True
        head.touched_at = self.clock()
        chunk = json.dumps([frame])
        # insert-if-absent: every follower writes the same chunk; an owner that was only
        # slow wrote its own frames there, and then nothing is ended
        inserted = await self.backend.add(key.chunk(start), chunk)
        if not inserted and await self.backend.get(key.chunk(start)) != chunk:
            return False
        if not await self.backend.replace_if(key.head(), text, json.dumps(head.document())):
            current = await self.backend.get(key.head())  # another follower, or the owner
            return current is not None and _Head.load(current).ended
        latest = {"runId": key.run_id, "ended": True}
        await self.backend.set_many({key.latest(): json.dumps(latest)})
        LOGGER.warning("run %s lost its replica %s: its log is ended", key.run_id, head.owner)
        return True

    # ------------------------------------------------------------- cancelling

    async def request_cancel(self, key: RunKey) -> CancelRequest:
        """Ask the run's owner, wherever it runs, to cancel it: the request is a key in
        the store, which the owner polls (:meth:`cancel_requested`). Idempotent."""
        head = await self._head(key)
        if head is None:
            return "unknown"
        if head.ended:
            return "ended"
        await self.backend.add(key.cancel(), json.dumps(self.clock()))
        return "requested"

    async def cancel_requested(self, key: RunKey) -> bool:
        """Whether a client asked (through :meth:`request_cancel`) to cancel the run."""
        return await self.backend.get(key.cancel()) is not None

    async def until_cancel_requested(self, key: RunKey, poll_seconds: float) -> None:
        """Return once a cancel of the run was requested, checking every ``poll_seconds``
        (the run's owner runs this in a task while the run runs)."""
        while True:
            await asyncio.sleep(poll_seconds)
            try:
                requested = await self.cancel_requested(key)
            except Exception:  # a store hiccup delays a cancel, never ends the run
                LOGGER.exception("checking run %s for a cancel failed", key.run_id)
                requested = False
            stop_if_cancelled()
            if requested:
                return

    async def terminal(self, key: RunKey, *, wait_seconds: float) -> str | None:
        """The run's last frame (its terminal event) once its log has ended, waiting up
        to ``wait_seconds`` for that; ``None`` if it has not ended by then (or the log is
        gone). A follower's duties come with the wait: a run whose owner died ends with
        ``RUN_OWNER_LOST`` (see :meth:`follow`)."""
        head = await self._head(key)
        if head is None:
            return None
        after = max(head.next - 2, head.first - 1)
        last: str | None = None
        try:
            read = await self.read(key, after)
            if read is None or read.ended:
                return read.frames[-1] if read is not None and read.frames else None
            async with asyncio.timeout(wait_seconds):
                async for batch in self.follow(key, after):
                    last = batch[-1] if batch else last
        except (TimeoutError, LookupError, LogGapError):
            return None
        return last

    async def reader_seen(self, key: RunKey) -> float | None:
        """When a re-attached reader of the run last checked in (epoch seconds)."""
        text = await self.backend.get(key.reader())
        return None if text is None else float(json.loads(text))


class RunLogWriter:
    """Appends one run's frames to its log; see :class:`RunLog`.

    :meth:`append` only buffers (no I/O); ``flush_seconds`` after the first frame buffered
    since the last timed flush, a task flushes the buffer (a timer until then: a run that
    ends sooner never starts one); :meth:`close` flushes the rest and marks the run ended.
    """

    def __init__(self, log: RunLog, key: RunKey) -> None:
        self.log = log
        self.key = key
        self.head = _Head()
        self._pending: list[str] = []
        self._dirty = False
        self._timer: asyncio.TimerHandle | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    @property
    def last_event_id(self) -> int:
        """The id of the last frame appended."""
        return self.head.next - 1 + len(self._pending)

    def append(self, frames: Sequence[str]) -> None:
        """Buffer ``frames`` (their ids follow on from :attr:`last_event_id`)."""
        if not frames:
            return
        self._pending += frames
        self._dirty = True
        if self._timer is None and self._flusher is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.log.flush_seconds, self._due)

    def _due(self) -> None:
        self._timer = None
        self._dirty = False
        if self._pending:  # else an explicit flush wrote them: rewriting the head would undo
            # what another process wrote since (a follower ending a dead owner's log)
            self._flusher = asyncio.create_task(self._timed_flush())

    async def _timed_flush(self) -> None:
        try:
            await self.flush()
        except Exception:  # a store hiccup costs re-attachment, never the run
            LOGGER.exception("writing the event log of run %s failed", self.key.run_id)
        self._flusher = None
        if self._dirty and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.log.flush_seconds, self._due)

    async def flush(self, *, ended: bool = False) -> None:
        """Write what is buffered (and the head); ``ended`` marks the run's end."""
        async with self._lock:
            frames, self._pending = self._pending, []
            head = self.head
            items: dict[str, str] = {}
            if frames:
                start = head.next
                items[self.key.chunk(start)] = _dumps(cast(JsonValue, frames))
                head.chunks.append([start, len(frames), sum(map(len, frames))])
                head.next += len(frames)
            doomed = self._trim()
            head.ended = head.ended or ended
            head.touched_at = self.log.clock()
            items[self.key.head()] = _dumps(head.document())
            latest: JsonObject = {"runId": self.key.run_id, "ended": head.ended}
            items[self.key.latest()] = _dumps(latest)
            await self.log.backend.set_many(items)
            for doomed_key in doomed:
                await self.log.backend.delete(doomed_key)
        self.log._wake(self.key)  # pyright: ignore[reportPrivateUsage] -- same module

    def _trim(self) -> list[str]:
        """Drop the oldest chunks beyond ``max_chars`` (keeping the newest one)."""
        head = self.head
        doomed: list[str] = []
        while len(head.chunks) > 1 and sum(c[2] for c in head.chunks) > self.log.max_chars:
            start, count, _ = head.chunks.pop(0)
            head.first = start + count
            doomed.append(self.key.chunk(start))
        return doomed

    async def close(self) -> None:
        """Flush everything and mark the run ended; stop the timed flushes."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        flusher, self._flusher = self._flusher, None
        if flusher is not None:
            # Let a timed flush finish, never cancel it: its frames have left the buffer and
            # its chunk may still wait for the store's thread; cancelled there, the chunk
            # would never be written while the next head lists it (a reader's LogGapError).
            await flusher
        if self._timer is not None:  # the flush may have set one for frames it raced
            self._timer.cancel()
            self._timer = None
        self._dirty = False
        await self.flush(ended=True)


def _dumps(value: JsonValue) -> str:
    """Compact JSON text of a log document (frames are JSON text: only ever strings here;
    the head holds integers, booleans, short strings and a finite time)."""
    return compact_json(value).decode()
