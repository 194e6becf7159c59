"""What the proxy does around each call for operators: rate limits, usage accounting (and
the index of stored Responses answers, :mod:`.response_state`).

:class:`ProxyOperations` is held by the :class:`~interlock.gateway.proxy.Proxy`. Before a
prepared call goes upstream, :meth:`ProxyOperations.admit` checks its tenant's limits (a
refused call is a 429 in the client's dialect with ``retry-after``; nothing is sent);
when the answer is over — non-streamed, streamed to the end, or cut short —
:meth:`ProxyOperations.finished` counts its usage (:mod:`.usage`) and charges its tokens
to the token limits (:mod:`.rate_limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections import defaultdict
from typing import TYPE_CHECKING, cast

import httpx

from interlock.codecs._sse import SseEvent
from interlock.gateway import tracing
from interlock.gateway.headers import NOT_SENT, TRANSLATION_HEADER
from interlock.gateway.rate_limits import RateLimiter, Refusal
from interlock.gateway.stores import ResponseIndex
from interlock.gateway.tracing import Tracer
from interlock.gateway.usage import UsageLedger, labels
from interlock.transcript import DecodeError, JsonObject, JsonValue, Update, Usage, UsageUpdate

if TYPE_CHECKING:
    from starlette.responses import Response as HttpResponse

    from interlock.gateway.dialects import Dialect
    from interlock.gateway.proxy import ProxyCall

LOGGER = logging.getLogger("interlock.gateway")
RATE_LIMITED = "rate_limit_exceeded"
"""The error code of a 429 the gateway answers itself."""
LIMITER_UNAVAILABLE = "rate_limiter_unavailable"
"""The error code of the 503 when the shared rate limits cannot be read."""


class ProxyOperations:
    """Rate limits and usage accounting for one gateway process (both optional)."""

    def __init__(
        self,
        *,
        limiter: RateLimiter | None = None,
        ledger: UsageLedger | None = None,
        tracer: Tracer | None = None,
        responses: ResponseIndex | None = None,
    ) -> None:
        self.limiter = limiter
        self.ledger = ledger
        self.tracer = tracer
        """With ``[tracing]``: spans of every proxied request and AG-UI run (:mod:`.tracing`)."""
        self.responses = responses
        """Which upstream holds each stored Responses answer (:mod:`.response_state`)."""
        self.refused: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        self._charges: set[asyncio.Task[None]] = set()

    async def admit(self, ingress: Dialect, call: ProxyCall) -> HttpResponse | None:
        """``None`` when ``call`` may go upstream; else the 429 answer to send instead."""
        if self.limiter is None:
            return None
        model = call.route.model.name
        try:
            refusal = await self.limiter.admit(call.tenant, model)
        except Exception:  # Redis unreachable: refuse rather than run unmetered
            LOGGER.warning("rate limits of %s cannot be checked", call.tenant, exc_info=True)
            self.routed(call)
            call.record.error = LIMITER_UNAVAILABLE
            call.record.translation = NOT_SENT
            message = "rate limits cannot be checked now (the shared store is unreachable)"
            body = ingress.error(503, message, code=LIMITER_UNAVAILABLE)
            return _json(body, 503, {"retry-after": "1", TRANSLATION_HEADER: NOT_SENT})
        if refusal is None:
            return None
        self.routed(call)
        self.refused[call.tenant, model, refusal.bucket.kind] += 1
        call.record.error = RATE_LIMITED
        call.record.translation = NOT_SENT
        return rate_limited_answer(ingress, refusal, call.tenant)

    def routed(self, call: ProxyCall) -> None:
        """Name the request's trace after its model (tracing on)."""
        trace = tracing.request()
        if trace is None:
            return
        model = call.route.model.name
        trace.record = call.record
        trace.root.rename(f"chat {model}")
        trace.root.set({"gen_ai.request.model": model, "interlock.ingress": call.ingress.name})

    def calling(self, call: ProxyCall) -> contextlib.AbstractContextManager[object]:
        """Open the span of the call to the upstream (current for the block; it ends with
        the answer, see :meth:`finished`). Nothing without tracing."""
        trace = tracing.request()
        if trace is None:
            return contextlib.nullcontext()
        if trace.upstream is not tracing.NULL_SPAN:  # a deployment retried or a fallback
            trace.upstream.fail("retried")
            trace.upstream.end()
        name = f"chat {call.request.model}"
        trace.upstream = tracing.start(name, "client", upstream_attributes(call))
        return tracing.within(trace.upstream)

    def finished(self, call: ProxyCall, usage: Usage | None) -> None:
        """Count a finished answer's usage; charge its tokens (in the background)."""
        model = call.route.model.name
        trace = tracing.request()
        if trace is not None:
            if usage is not None:
                attributes = tracing.usage_attributes(usage)
                trace.root.set(attributes)
                trace.upstream.set(attributes)
            if call.record.error:
                trace.upstream.fail(call.record.error)
            trace.upstream.end()
        if self.ledger is not None:
            self.ledger.record(call.tenant, model, call.upstream.name, usage)
        self.charge(call.tenant, model, usage)

    def charge(self, tenant: str, model: str, usage: Usage | None) -> asyncio.Task[None] | None:
        """Charge an answer's input and output tokens to the token limits in the
        background (the task; ``None`` without limits or usage). A failed charge is logged."""
        if self.limiter is None or usage is None:
            return None
        tokens = usage.input_tokens + usage.output_tokens + usage.tool_prompt_tokens
        task = asyncio.create_task(self._charge(tenant, model, tokens))
        self._charges.add(task)
        task.add_done_callback(self._charges.discard)
        return task

    async def _charge(self, tenant: str, model: str, tokens: int) -> None:
        assert self.limiter is not None, "charges are scheduled only with a limiter"
        try:
            await self.limiter.charge(tenant, model, tokens)
        except Exception:  # the answer went out already: a lost charge is only logged
            LOGGER.warning("charging %d tokens to %s failed", tokens, tenant, exc_info=True)

    def render(self) -> str:
        """``/metrics`` lines: usage counters and refusals."""
        lines: list[str] = []
        if self.ledger is not None:
            self.ledger.counters.render(lines)
        name = "interlock_rate_limited_total"
        lines.append(
            f"# HELP {name} Requests refused with 429 by a rate limit (tenant, model, limit)."
        )
        lines.append(f"# TYPE {name} counter")
        for scope, count in sorted(self.refused.items()):
            lines.append(f"{name}{labels(('tenant', 'model', 'limit'), scope)} {count}")
        return "\n".join(lines) + "\n"

    async def start(self) -> None:
        """Start the periodic usage flush."""
        if self.ledger is not None:
            await self.ledger.start()

    async def close(self) -> None:
        """Finish pending charges, flush usage, release the limiter's connections."""
        if self._charges:
            await asyncio.gather(*self._charges, return_exceptions=True)
        if self.ledger is not None:
            await self.ledger.stop()
        if self.limiter is not None:
            await self.limiter.close()
        if self.tracer is not None:
            self.tracer.shutdown()


def rate_limited_answer(ingress: Dialect, refusal: Refusal, tenant: str) -> HttpResponse:
    """The 429 in ``ingress``'s error shape, with ``retry-after`` (seconds) and
    ``retry-after-ms``; nothing was sent upstream."""
    body = ingress.error(429, refusal.message(tenant), code=RATE_LIMITED)
    headers = {
        "retry-after": str(refusal.retry_after_seconds),
        "retry-after-ms": str(max(1, round(refusal.retry_after * 1000))),
        TRANSLATION_HEADER: NOT_SENT,
    }
    return _json(body, 429, headers)


def _json(body: JsonObject, status: int, headers: dict[str, str]) -> HttpResponse:
    from interlock.gateway.proxy import json_response  # proxy imports this module

    return json_response(body, status, headers=headers)


def upstream_attributes(call: ProxyCall) -> tracing.Attributes:
    """The GenAI attributes of the call to the upstream."""
    upstream = call.upstream
    url = httpx.URL(upstream.config.base_url)
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": tracing.provider_name(
            upstream.dialect.http.provider, upstream.config.issuer, upstream.config.base_url
        ),
        "gen_ai.request.model": call.request.model,
        "server.address": url.host,
        "server.port": url.port or (443 if url.scheme == "https" else 80),
        "interlock.upstream": upstream.name,
        "interlock.egress": upstream.dialect.name,
    }


def answer_usage(dialect: Dialect, body: bytes | memoryview) -> Usage | None:
    """The usage a non-streamed answer in ``dialect`` reports, or ``None``.

    Only the usage member is parsed: its key is found from the end (where every dialect
    puts it). In JSON a quoted name followed by a colon is always a key — a quote inside
    a string is escaped — so the search cannot land inside text.
    """
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError:
        return None
    key = f'"{dialect.http.usage_field}"'
    at = text.rfind(key)
    colon = _COLON.match(text, at + len(key)) if at >= 0 else None
    if colon is None:
        return None
    try:
        value, _ = _DECODER.raw_decode(text, colon.end())
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    try:
        return dialect.decode_usage(cast(JsonObject, value))
    except DecodeError:
        return None


_COLON = re.compile(r"\s*:\s*")
_DECODER = json.JSONDecoder()


class StreamUsage:
    """A stream's usage: from its decoded updates (the last wins) or, for a stream relayed
    undecoded, from the usage members of its events (merged, later values winning)."""

    __slots__ = ("_dialect", "_field", "_merged", "_usage")

    def __init__(self, dialect: Dialect) -> None:
        self._dialect = dialect
        self._field = dialect.http.usage_field
        self._usage: Usage | None = None
        self._merged: dict[str, JsonValue] | None = None

    def updates(self, updates: list[Update]) -> None:
        """Note usage among decoded updates."""
        for update in updates:
            if isinstance(update, UsageUpdate):
                self._usage = update.usage

    def events(self, events: list[SseEvent]) -> None:
        """Note usage members among undecoded events."""
        for event in events:
            if self._field in event.data:
                self._merge(event.data)

    def _merge(self, data: str) -> None:
        try:
            document = json.loads(data)
        except ValueError:
            return
        if not isinstance(document, dict):
            return
        found = _usage_member(cast(JsonObject, document), self._field)
        if found is not None:
            merged = self._merged if self._merged is not None else {}
            merged.update((key, value) for key, value in found.items() if value is not None)
            self._merged = merged

    def result(self) -> Usage | None:
        """The stream's usage so far (``None``: none reported)."""
        if self._usage is not None or self._merged is None:
            return self._usage
        try:
            return self._dialect.decode_usage(self._merged)
        except DecodeError:
            return None


def _usage_member(document: JsonObject, field: str) -> JsonObject | None:
    """``document[field]``, or one object down (``response.usage``, ``message.usage``)."""
    value = document.get(field)
    if isinstance(value, dict):
        return cast(JsonObject, value)
    for inner in document.values():
        if isinstance(inner, dict):
            nested = cast(JsonObject, inner).get(field)
            if isinstance(nested, dict):
                return cast(JsonObject, nested)
    return None
