"""Usage accounting: tokens per tenant, model and deployment, counted here, kept in the store.

Every finished proxied answer (streamed or not, any dialect) adds its usage — input,
cached input, output and reasoning tokens, and one request — to this process's counters
(:class:`UsageCounters`, exposed in ``/metrics``) and to a pending delta that
:meth:`UsageLedger.flush` adds to the store's totals (every ``usage.flush_seconds``, on
shutdown, and before every admin read). The store's totals are shared by every process on
the same store; adding a delta is a compare-and-set loop on one key per (tenant, model,
deployment), so concurrent flushes from several processes never lose a count.

Where usage comes from: a non-streamed answer's usage member (the client's dialect: what
the client was told), a stream's usage updates (the last wins) or, for a stream relayed
byte for byte, the usage members of its events (later values replace earlier ones, which
holds for every dialect: cumulative counts, or one final report).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import operator
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from interlock.gateway.stores import KeyValueBackend, stop_if_cancelled, store_key
from interlock.transcript import JsonObject, JsonValue, Usage

LOGGER = logging.getLogger("interlock.gateway")

COUNTS = ("requests", "input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")
"""What is counted per (tenant, model, deployment); output includes reasoning."""

Scope = tuple[str, str, str]
"""(tenant, model, deployment)."""


def counts_of(usage: Usage | None) -> tuple[int, ...]:
    """One request's counts, in :data:`COUNTS` order (zeros when no usage was reported)."""
    if usage is None:
        return (1, 0, 0, 0, 0)
    return (
        1,
        usage.input_tokens + usage.tool_prompt_tokens,
        usage.cached_input_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
    )


class UsageCounters:
    """This process's totals since it started (what ``/metrics`` shows)."""

    def __init__(self) -> None:
        self.totals: defaultdict[Scope, list[int]] = defaultdict(lambda: [0] * len(COUNTS))

    def add(self, scope: Scope, counts: tuple[int, ...]) -> None:
        total = self.totals[scope]
        total[:] = map(operator.add, total, counts)

    def render(self, lines: list[str]) -> None:
        """``interlock_usage_requests_total`` and ``interlock_usage_tokens_total``."""
        scope_names = ("tenant", "model", "deployment")
        name = "interlock_usage_requests_total"
        lines.append(
            f"# HELP {name} Answers (and AG-UI model calls) counted, by tenant, model, deployment."
        )
        lines.append(f"# TYPE {name} counter")
        for scope, total in sorted(self.totals.items()):
            lines.append(f"{name}{labels(scope_names, scope)} {total[0]}")
        name = "interlock_usage_tokens_total"
        lines.append(
            f"# HELP {name} Tokens by tenant, model, deployment and kind "
            "(input, cached_input, output, reasoning; output includes reasoning)."
        )
        lines.append(f"# TYPE {name} counter")
        for scope, total in sorted(self.totals.items()):
            for kind, count in zip(COUNTS[1:], total[1:], strict=True):
                kind_label = kind.removesuffix("_tokens")
                lines.append(
                    f"{name}{labels((*scope_names, 'kind'), (*scope, kind_label))} {count}"
                )


def labels(names: tuple[str, ...], values: tuple[str, ...]) -> str:
    """Prometheus labels ``{name="value",…}``, values escaped."""

    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

    return "{" + ",".join(f'{n}="{escape(v)}"' for n, v in zip(names, values, strict=True)) + "}"


@dataclass(frozen=True, slots=True)
class UsageRow:
    """The store's totals for one (tenant, model, deployment)."""

    tenant: str
    model: str
    deployment: str
    counts: tuple[int, ...]

    def to_json(self) -> JsonObject:
        row: JsonObject = {
            "tenant": self.tenant,
            "model": self.model,
            "deployment": self.deployment,
        }
        row.update(zip(COUNTS, self.counts, strict=True))
        return row


class UsageLedger:
    """Counts usage in this process and adds it to the store's totals."""

    def __init__(self, backend: KeyValueBackend, *, flush_seconds: float = 5.0) -> None:
        self.backend = backend
        self.flush_seconds = flush_seconds
        self.counters = UsageCounters()
        self._pending: dict[Scope, list[int]] = {}
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    def record(self, tenant: str, model: str, deployment: str, usage: Usage | None) -> None:
        """Count one finished answer (no I/O: the store sees it at the next flush)."""
        scope = (tenant, model, deployment)
        counts = counts_of(usage)
        self.counters.add(scope, counts)
        pending = self._pending.setdefault(scope, [0] * len(COUNTS))
        pending[:] = map(operator.add, pending, counts)

    async def flush(self) -> None:
        """Add every pending count to the store's totals (one scope at a time)."""
        async with self._lock:
            pending, self._pending = self._pending, {}
            for scope, counts in pending.items():
                try:
                    await self._add(scope, counts)
                except Exception:
                    self._merge_back(scope, counts)  # kept for the next flush
                    raise

    def _merge_back(self, scope: Scope, counts: list[int]) -> None:
        kept = self._pending.setdefault(scope, [0] * len(COUNTS))
        for index, count in enumerate(counts):
            kept[index] += count

    async def _add(self, scope: Scope, counts: list[int]) -> None:
        key = store_key("usage", scope[0], scope[1], scope[2])
        while True:
            current = await self.backend.get(key)
            if current is None:
                if await self.backend.add(key, _encode(counts)):
                    return
                continue
            total = [a + b for a, b in zip(_decode(current), counts, strict=True)]
            if await self.backend.replace_if(key, current, _encode(total)):
                return

    async def rows(self, *, tenant: str | None = None, model: str | None = None) -> list[UsageRow]:
        """The store's totals (after flushing this process's), filtered when asked."""
        await self.flush()
        prefix = store_key("usage", tenant) + "/" if tenant is not None else "usage/"
        found: list[UsageRow] = []
        for key, value in await self.backend.scan(prefix):
            parts = _unquoted(key.split("/")[1:])
            if len(parts) != 3 or (model is not None and parts[1] != model):
                continue
            found.append(UsageRow(parts[0], parts[1], parts[2], _decode(value)))
        return found

    async def start(self) -> None:
        """Flush every ``flush_seconds`` until :meth:`stop`."""
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.flush_seconds)
            try:
                await self.flush()
            except Exception:  # the store may be down for a while: counts wait for it
                LOGGER.warning("usage flush failed; counts kept for the next one", exc_info=True)
            stop_if_cancelled()

    async def stop(self) -> None:
        """Stop the periodic flush and flush what is left."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            await self.flush()
        except Exception:
            LOGGER.warning("usage flush at shutdown failed; counts lost", exc_info=True)


def _encode(counts: Iterable[int]) -> str:
    return json.dumps(dict(zip(COUNTS, counts, strict=True)), separators=(",", ":"))


def _decode(value: str) -> tuple[int, ...]:
    document = cast(dict[str, JsonValue], json.loads(value))
    return tuple(int(cast(int, document.get(name, 0))) for name in COUNTS)


def _unquoted(parts: list[str]) -> list[str]:
    from urllib.parse import unquote

    return [unquote(part) for part in parts]


def totals(rows: Iterable[UsageRow]) -> JsonObject:
    """The sum of ``rows``' counts."""
    summed = [0] * len(COUNTS)
    for row in rows:
        for index, count in enumerate(row.counts):
            summed[index] += count
    return dict(zip(COUNTS, summed, strict=True))
