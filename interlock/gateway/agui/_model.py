"""The loop's :class:`~interlock.core_loop.ChatModel` over a configured upstream.

A model call is the upstream's codec plus its pooled HTTP client: encode the canonical
request (refusing a lossy history before anything is sent), POST it with streaming on,
split the answer into SSE events and decode them into transcript updates as they arrive.
Every failure becomes one final :class:`~interlock.transcript.StreamFailed` whose ``code``
is an AG-UI ``RUN_ERROR`` code (:data:`UPSTREAM_CODES`); nothing is raised past the loop.
Closing the stream (the loop does on cancel) closes the upstream response.
A routed model's calls go through the gateway's router (:mod:`._routed`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import cast

import httpx

from interlock.codecs._sse import SseParser
from interlock.gateway import tracing
from interlock.gateway.agui._calls import LIMITER_UNAVAILABLE, RATE_LIMITED, admit, answered_by
from interlock.gateway.agui._routed import Refused, RoutedModel, prepared_for
from interlock.gateway.model_field import compact_json
from interlock.gateway.tracing import Span
from interlock.gateway.upstream import Upstream, UpstreamUnavailable
from interlock.transcript import (
    DecodeError,
    JsonObject,
    LossyHistoryError,
    ReplayPolicy,
    Request,
    ResponseFinished,
    StreamFailed,
    Update,
    UsageUpdate,
)

UPSTREAM_CODES = frozenset(
    {
        "LOSSY_HISTORY",
        "UPSTREAM_TIMEOUT",
        "UPSTREAM_UNAVAILABLE",
        "UPSTREAM_ERROR",
        "UPSTREAM_INVALID_STREAM",
        RATE_LIMITED,
        LIMITER_UNAVAILABLE,
    }
)
"""The ``RUN_ERROR`` codes a model call can end with."""


class UpstreamChatModel:
    """Calls ``upstream`` for the loop; one instance per agent, shared by its runs.

    With ``routed`` (the agent's model is routed), every call goes through the gateway's
    router instead (:mod:`._routed`): ``upstream`` is then its first deployment's.
    """

    def __init__(
        self,
        upstream: Upstream,
        routed: RoutedModel | None = None,
        *,
        signatures_required: bool | None = None,
    ) -> None:
        """``signatures_required``: the model's configured thought-signature rule
        (``None``: decided by the model's name)."""
        self.upstream = upstream
        self.routed = routed
        self.signatures_required = signatures_required

    def prepare(self, request: Request) -> Request:
        """The request as sent: streaming, and stateless for a Responses upstream."""
        return prepared_for(self.upstream, request)

    async def stream(self, request: Request) -> AsyncIterator[Update]:
        """The updates of one model call; the last one is a ``StreamFailed`` on failure.
        A call the run's rate limits refuse is not sent (see :mod:`._calls`)."""
        refused = await admit()
        if refused is not None:
            yield refused
            return
        if self.routed is not None:
            async for update in self._routed(self.routed, replace(request, stream=True)):
                yield update
            return
        upstream = self.upstream
        prepared = self.prepare(request)
        try:
            policy = ReplayPolicy(
                mode=upstream.config.replay_mode, signatures_required=self.signatures_required
            )
            encoded = upstream.dialect.encode_request(prepared, policy)
        except LossyHistoryError as error:
            yield StreamFailed(code="LOSSY_HISTORY", message=str(error), status=400)
            return
        body = compact_json(encoded.payload)
        span = tracing.NULL_SPAN
        if tracing.active() is not None:
            span = tracing.start(f"chat {prepared.model}", "client", self._attributes(prepared))
        try:
            async for update in self._call(prepared, body, span):
                yield update
        finally:
            span.end()

    async def _call(self, prepared: Request, body: bytes, span: Span) -> AsyncIterator[Update]:
        upstream = self.upstream
        path = upstream.dialect.upstream_path(prepared.model, True)
        try:
            with tracing.within(span):
                response = await upstream.send(path, body, accept_stream=True)
        except UpstreamUnavailable as error:
            code = "UPSTREAM_TIMEOUT" if error.kind == "timeout" else "UPSTREAM_UNAVAILABLE"
            span.fail(code, error.message)
            yield StreamFailed(code=code, message=error.message, status=error.status)
            return
        async for update in _answer(upstream, response, span, ""):
            yield update

    async def _routed(self, routed: RoutedModel, request: Request) -> AsyncIterator[Update]:
        """A call through the router: the answering deployment decodes its own answer."""
        span = tracing.NULL_SPAN
        if tracing.active() is not None:
            span = tracing.start(f"chat {request.model}", "client", self._attributes(request))
        try:
            with tracing.within(span):
                opened = await routed.open(request)
            if isinstance(opened, Refused):
                span.fail(opened.code, opened.message)
                yield StreamFailed(code=opened.code, message=opened.message, status=opened.status)
                return
            span.set({"interlock.upstream": opened.upstream.name})
            answered_by(opened.upstream.name, opened.upstream.dialect.http.provider)
            async for update in _answer(opened.upstream, opened.response, span, opened.notes):
                yield update
        finally:
            span.end()

    def _attributes(self, prepared: Request) -> tracing.Attributes:
        upstream = self.upstream
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": tracing.provider_name(upstream.dialect.http.provider),
            "gen_ai.request.model": prepared.model,
            "interlock.upstream": upstream.name,
        }


async def _answer(
    upstream: Upstream, response: httpx.Response, span: Span, notes: str
) -> AsyncIterator[Update]:
    """The updates of an open answer (closed at the end); ``notes`` end a refusal's message."""
    try:
        if response.status_code >= 400:
            refused = await _refused(upstream, response, notes)
            span.fail(refused.code, refused.message)
            yield refused
            return
        async for update in _decode(upstream, response):
            _observe(span, update)
            yield update
    finally:
        await response.aclose()


async def _refused(upstream: Upstream, response: httpx.Response, notes: str) -> StreamFailed:
    text = upstream.scrub((await response.aread()).decode("utf-8", "replace"))
    upstream.metrics.upstream_errors[upstream.name, "status"] += 1
    return StreamFailed(
        code="UPSTREAM_ERROR",
        message=f"upstream {upstream.name} answered HTTP {response.status_code}: "
        f"{_error_message(text)}{notes}",
        status=response.status_code,
    )


async def _decode(upstream: Upstream, response: httpx.Response) -> AsyncIterator[Update]:
    parser = SseParser()
    decoder = upstream.dialect.stream_decoder()
    name = upstream.name
    try:
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                for update in decoder.feed(event):
                    yield _relabel(update, name)
        for event in parser.finish():
            for update in decoder.feed(event):
                yield _relabel(update, name)
        for update in decoder.finish():
            yield _relabel(update, name)
    except DecodeError as error:
        yield StreamFailed(
            code="UPSTREAM_INVALID_STREAM",
            message=f"upstream {name} sent a malformed stream: {error}",
            status=502,
        )
    except httpx.TimeoutException:
        yield StreamFailed(
            code="UPSTREAM_TIMEOUT", message=f"upstream {name} timed out", status=504
        )
    except httpx.HTTPError:
        yield StreamFailed(
            code="UPSTREAM_ERROR", message=f"upstream {name}: the stream broke off", status=502
        )


def _observe(span: Span, update: Update) -> None:
    """Usage, finish reason and failure of a model call onto its span."""
    if span is tracing.NULL_SPAN:
        return
    if isinstance(update, UsageUpdate):
        span.set(tracing.usage_attributes(update.usage))
    elif isinstance(update, ResponseFinished) and update.finish_reason is not None:
        span.set({"gen_ai.response.finish_reasons": [update.finish_reason]})
    elif isinstance(update, StreamFailed):
        span.fail(update.code, update.message)


def _relabel(update: Update, upstream: str) -> Update:
    """A provider's own mid-stream error event, under the binding's code."""
    if isinstance(update, StreamFailed) and update.code not in UPSTREAM_CODES:
        return StreamFailed(
            code="UPSTREAM_ERROR",
            message=f"upstream {upstream}: {update.message} ({update.code})",
            status=update.status,
        )
    return update


def _error_message(text: str) -> str:
    try:
        document: object = json.loads(text)
    except ValueError:
        return text[:300]
    error = cast(JsonObject, document).get("error") if isinstance(document, dict) else None
    message = cast(JsonObject, error).get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else text[:300]
