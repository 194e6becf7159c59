"""The one store interface: threads, the run ledger (approvals, journal), the vault.

Written once over a :class:`KeyValueBackend`, so memory, SQLite and Redis behave alike.
Everything is scoped by tenant. Values are JSON; messages use the transcript's versioned
serialization, so stored threads survive upgrades.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from interlock.gateway.stores._backend import KeyValueBackend
from interlock.gateway.stores._ledger import KeyValueLedgerStore
from interlock.gateway.stores._quote import quoted as _quoted
from interlock.gateway.stores._thread_memo import Remembered, ThreadMemo, compact, thread_text
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Message,
    dump_transcript,
    load_transcript,
)

Namespace = Literal[
    "vault",
    "vault_count",
    "thread",
    "approval",
    "journal",
    "ledger",
    "runlog",
    "lease",
    "replica",
    "usage",
    "response",
    "conversation",
    "provenance",
]


_dumps = compact


def vault_entries(ids: Sequence[str], values: Sequence[str | None]) -> dict[str, JsonValue]:
    """The vault entries read as :meth:`Store.vault_raw` texts of ``ids`` (absent left out)."""
    return {
        item: json.loads(value)
        for item, value in zip(ids, values, strict=True)
        if value is not None
    }


def store_key(namespace: Namespace, tenant: str, *parts: str) -> str:
    """``namespace/tenant/part/…`` with every component percent-encoded (no collisions)."""
    return "/".join([namespace, _quoted(tenant), *map(_quoted, parts)])


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadRecord:
    """A server-owned thread: history, state and interrupts awaiting an answer.

    ``revision`` is the stored form this record was loaded from (empty for a new thread);
    :meth:`Store.save_thread` succeeds only if the stored thread is still at that revision.
    """

    messages: tuple[Message, ...] = ()
    state: JsonValue = None
    pending_interrupts: tuple[JsonObject, ...] = ()
    revision: str = field(default="", compare=False, repr=False)

    def to_document(self) -> JsonObject:
        """The JSON form stored in the backend."""
        return {
            "transcript": dump_transcript(self.messages),
            "state": self.state,
            "pending_interrupts": list(self.pending_interrupts),
        }


class CorruptThreadError(ValueError):
    """A stored thread cannot be read; ``thread_id`` names it, the message says why."""

    def __init__(self, thread_id: str, detail: str) -> None:
        super().__init__(f"stored thread {thread_id!r} is corrupted: {detail}")
        self.thread_id = thread_id


def _thread_record(raw: str) -> ThreadRecord:
    """A :class:`ThreadRecord` from its stored JSON, validated whole."""
    document = json.loads(raw)
    if not isinstance(document, dict):
        raise ValueError("the stored thread is not a JSON object")
    fields = cast(JsonObject, document)
    if "transcript" not in fields:
        raise ValueError("the stored thread has no transcript")
    interrupts = fields.get("pending_interrupts") or []
    if not isinstance(interrupts, list) or not all(
        isinstance(entry, dict) and isinstance(entry.get("id"), str) for entry in interrupts
    ):
        raise ValueError("pending_interrupts: expected a list of objects with a string id")
    return ThreadRecord(
        messages=load_transcript(fields["transcript"]),
        state=fields.get("state"),
        pending_interrupts=tuple(cast(list[JsonObject], interrupts)),
        revision=raw,
    )


def _lease(owner: str, seconds: float) -> str:
    return _dumps({"owner": owner, "expires": time.time() + seconds})


def _holder(raw: str) -> tuple[str, float]:
    """``(owner, expiry)`` of a stored lease; an unreadable one counts as expired."""
    try:
        document = json.loads(raw)
        return str(document["owner"]), float(document["expires"])
    except (ValueError, KeyError, TypeError):
        return "", 0.0


class Store:
    """Tenant-scoped gateway state over one backend (see :class:`KeyValueBackend`).

    ``threads`` remembers the threads this process last loaded or saved
    (:mod:`._thread_memo`): what is stored is the same, a run on a long thread just does
    not parse and serialize its whole transcript again.
    """

    def __init__(self, backend: KeyValueBackend) -> None:
        self.backend = backend
        self.threads = ThreadMemo()

    async def close(self) -> None:
        """Close the backend."""
        await self.backend.close()

    # ---------------------------------------------------------------- vault

    async def vault_get(
        self, tenant: str, upstream: str, ids: Sequence[str]
    ) -> dict[str, JsonValue]:
        """The stored entries among ``ids`` (absent ids are left out)."""
        values = await self.vault_raw(self.vault_keys(tenant, upstream, ids))
        return vault_entries(ids, values)

    @staticmethod
    def vault_keys(tenant: str, upstream: str, ids: Sequence[str]) -> list[str]:
        """The backend keys of the vault entries ``ids`` (what :meth:`vault_raw` reads)."""
        return [store_key("vault", tenant, upstream, item) for item in ids]

    async def vault_raw(self, keys: Sequence[str]) -> list[str | None]:
        """The stored text under each backend key (``None`` where absent), one round trip."""
        return await self.backend.get_many(keys) if keys else []

    async def vault_put(self, tenant: str, upstream: str, entries: Mapping[str, JsonValue]) -> int:
        """Store entries keyed by tenant + upstream + id (last write wins), counting the
        write at :meth:`vault_count_key`; the count this write made."""
        return await self.backend.set_many_counted(
            {
                store_key("vault", tenant, upstream, item): _dumps(value)
                for item, value in entries.items()
            },
            self.vault_count_key(tenant, upstream),
        )

    @staticmethod
    def vault_count_key(tenant: str, upstream: str) -> str:
        """The backend key of the count of vault writes for ``tenant`` and ``upstream``
        (read first in a :meth:`vault_raw`, it is read no later than the entries)."""
        return store_key("vault_count", tenant, upstream)

    # ---------------------------------------------------------------- threads

    async def load_thread(self, tenant: str, thread_id: str) -> ThreadRecord | None:
        """The thread, or ``None`` if it was never saved.

        The stored row is validated whole (JSON, transcript, interrupts) before anything
        is returned: a corrupted or hand-edited row raises :class:`CorruptThreadError`
        naming the thread, never a half-loaded record.
        """
        key = store_key("thread", tenant, thread_id)
        raw = await self.backend.get(key)
        if raw is None:
            return None
        known = self.threads.find(key, raw)
        if known is not None:
            return ThreadRecord(
                messages=known.messages,
                state=json.loads(known.state),
                pending_interrupts=tuple(json.loads(known.interrupts)),
                revision=raw,
            )
        try:
            record = _thread_record(raw)
        except (ValueError, KeyError, TypeError) as error:
            raise CorruptThreadError(thread_id, str(error) or type(error).__name__) from None
        interrupts = _dumps(list(record.pending_interrupts))
        remembered = Remembered(raw, record.messages, (), _dumps(record.state), interrupts)
        self.threads.remember(key, remembered)
        return record

    async def save_thread(
        self, tenant: str, thread_id: str, record: ThreadRecord
    ) -> ThreadRecord | None:
        """Save ``record`` if the stored thread is still at ``record.revision``.

        Returns the saved record (with its new revision), or ``None`` when another writer
        saved first — the caller reloads and decides again; nothing is overwritten blindly.
        """
        key = store_key("thread", tenant, thread_id)
        texts = self.threads.texts(key, record.messages)
        state, interrupts = _dumps(record.state), _dumps(list(record.pending_interrupts))
        raw = thread_text(texts, state, interrupts)
        if record.revision:
            saved = await self.backend.replace_if(key, record.revision, raw)
        else:
            saved = await self.backend.add(key, raw)
        if not saved:
            return None
        self.threads.remember(
            key, Remembered(raw, record.messages, tuple(texts), state, interrupts)
        )
        return ThreadRecord(
            messages=record.messages,
            state=record.state,
            pending_interrupts=record.pending_interrupts,
            revision=raw,
        )

    # ---------------------------------------------------------------- leases

    async def acquire_lease(self, tenant: str, thread_id: str, owner: str, seconds: float) -> bool:
        """Take the thread's lease for ``seconds`` unless another owner holds a live one.

        At most one owner holds a live lease, across every process sharing the backend
        (insert-if-absent, or compare-and-set over an expired or released lease). A lease
        whose holder died (``kill -9``) frees itself when it expires.
        """
        key = store_key("lease", tenant, thread_id)
        value = _lease(owner, seconds)
        if await self.backend.add(key, value):
            return True
        current = await self.backend.get(key)
        if current is None:
            return await self.backend.add(key, value)
        holder, expires = _holder(current)
        if holder == owner or expires <= time.time():
            return await self.backend.replace_if(key, current, value)
        return False

    async def renew_lease(self, tenant: str, thread_id: str, owner: str, seconds: float) -> bool:
        """Extend a lease ``owner`` still holds; ``False`` if it was lost (expired and taken)."""
        key = store_key("lease", tenant, thread_id)
        current = await self.backend.get(key)
        if current is None or _holder(current)[0] != owner:
            return False
        return await self.backend.replace_if(key, current, _lease(owner, seconds))

    async def release_lease(self, tenant: str, thread_id: str, owner: str) -> None:
        """Give the lease up (marks it expired; a lease held by another owner is left)."""
        key = store_key("lease", tenant, thread_id)
        current = await self.backend.get(key)
        if current is not None and _holder(current)[0] == owner:
            await self.backend.replace_if(key, current, _lease("", -1.0))

    # ---------------------------------------------------------------- ledger

    def ledger(self, tenant: str) -> KeyValueLedgerStore:
        """The core loop's :class:`~interlock.core_loop.LedgerStore` for one tenant."""
        return KeyValueLedgerStore(self.backend, tenant)
