"""The loop's :class:`~interlock.core_loop.ChatModel` over a configured upstream.

A model call is the upstream's codec plus its pooled HTTP client: encode the canonical
request (refusing a lossy history before anything is sent), POST it with streaming on,
split the answer into SSE events and decode them into transcript updates as they arrive.
Every failure becomes one final :class:`~interlock.transcript.StreamFailed` whose ``code``
is an AG-UI ``RUN_ERROR`` code (:data:`UPSTREAM_CODES`); nothing is raised past the loop.
Closing the stream (the loop does on cancel) closes the upstream response.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import cast

import httpx

from interlock.codecs._sse import SseParser
from interlock.gateway import tracing
from interlock.gateway.model_field import compact_json
from interlock.gateway.tracing import Span
from interlock.gateway.upstream import Upstream, UpstreamUnavailable
from interlock.transcript import (
    Continuation,
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
    }
)
"""The ``RUN_ERROR`` codes a model call can end with."""


class UpstreamChatModel:
    """Calls ``upstream`` for the loop; one instance per agent, shared by its runs."""

    def __init__(self, upstream: Upstream, *, signatures_required: bool | None = None) -> None:
        """``signatures_required``: the model's configured thought-signature rule
        (``None``: decided by the model's name)."""
        self.upstream = upstream
        self.signatures_required = signatures_required

    def prepare(self, request: Request) -> Request:
        """The request as sent: streaming, and stateless for a Responses upstream.

        The gateway owns the thread and replays it in full, so a Responses upstream gets
        ``store: false`` (encrypted reasoning comes back inline) unless the loop is using
        service-side continuation itself.
        """
        prepared = replace(request, stream=True)
        continuation = request.continuation
        if (
            self.upstream.dialect.http.stateful_service
            and continuation.previous_response_id is None
            and continuation.store is None
        ):
            prepared = replace(prepared, continuation=Continuation(store=False))
        return prepared

    async def stream(self, request: Request) -> AsyncIterator[Update]:
        """The updates of one model call; the last one is a ``StreamFailed`` on failure."""
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
        try:
            if response.status_code >= 400:
                refused = await self._refused(response)
                span.fail(refused.code, refused.message)
                yield refused
                return
            async for update in self._decode(response):
                _observe(span, update)
                yield update
        finally:
            await response.aclose()

    def _attributes(self, prepared: Request) -> tracing.Attributes:
        upstream = self.upstream
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": tracing.provider_name(upstream.dialect.http.provider),
            "gen_ai.request.model": prepared.model,
            "interlock.upstream": upstream.name,
        }

    async def _refused(self, response: httpx.Response) -> StreamFailed:
        text = self.upstream.scrub((await response.aread()).decode("utf-8", "replace"))
        self.upstream.metrics.upstream_errors[self.upstream.name, "status"] += 1
        return StreamFailed(
            code="UPSTREAM_ERROR",
            message=f"upstream {self.upstream.name} answered HTTP {response.status_code}: "
            f"{_error_message(text)}",
            status=response.status_code,
        )

    async def _decode(self, response: httpx.Response) -> AsyncIterator[Update]:
        parser = SseParser()
        decoder = self.upstream.dialect.stream_decoder()
        name = self.upstream.name
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
