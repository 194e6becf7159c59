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
from interlock.gateway.upstream import Upstream, UpstreamUnavailable, body_chunks
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
        A call the run's rate limits refuse is not sent (see :mod:`._calls`).

        One generator from the upstream's bytes to the loop: the answer is opened by
        plain coroutines and decoded chunk by chunk into lists (:class:`_Answer`), so an
        update passes through no generator but this one.
        """
        refused = await admit()
        if refused is not None:
            yield refused
            return
        if self.routed is not None:
            opened = await self._open_routed(self.routed, replace(request, stream=True))
        else:
            opened = await self._open(request)
        if isinstance(opened, StreamFailed):
            yield opened
            return
        answer = opened
        try:
            if answer.response.status_code >= 400:
                yield await answer.refused()
                return
            try:
                async for chunk in body_chunks(answer.response):
                    for update in answer.feed(chunk):
                        yield update
                for update in answer.finish():
                    yield update
            except (DecodeError, httpx.HTTPError) as error:
                for update in answer.failed(error):
                    yield update
        finally:
            try:
                await answer.response.aclose()
            finally:
                answer.span.end()

    async def _open(self, request: Request) -> _Answer | StreamFailed:
        """The upstream's open answer to ``request``, or why there is none."""
        upstream = self.upstream
        prepared = self.prepare(request)
        try:
            policy = ReplayPolicy(
                mode=upstream.config.replay_mode, signatures_required=self.signatures_required
            )
            encoded = upstream.dialect.encode_request(prepared, policy)
        except LossyHistoryError as error:
            return StreamFailed(code="LOSSY_HISTORY", message=str(error), status=400)
        body = compact_json(encoded.payload)
        span = tracing.NULL_SPAN
        if tracing.active() is not None:
            span = tracing.start(f"chat {prepared.model}", "client", self._attributes(prepared))
        path = upstream.dialect.upstream_path(prepared.model, True)
        try:
            with tracing.within(span):
                response = await upstream.send(path, body, accept_stream=True)
        except UpstreamUnavailable as error:
            code = "UPSTREAM_TIMEOUT" if error.kind == "timeout" else "UPSTREAM_UNAVAILABLE"
            span.fail(code, error.message)
            span.end()
            return StreamFailed(code=code, message=error.message, status=error.status)
        except BaseException:
            span.end()
            raise
        return _Answer(upstream, response, span, "")

    async def _open_routed(self, routed: RoutedModel, request: Request) -> _Answer | StreamFailed:
        """A call through the router: the answering deployment decodes its own answer."""
        span = tracing.NULL_SPAN
        if tracing.active() is not None:
            span = tracing.start(f"chat {request.model}", "client", self._attributes(request))
        try:
            with tracing.within(span):
                opened = await routed.open(request)
        except BaseException:
            span.end()
            raise
        if isinstance(opened, Refused):
            span.fail(opened.code, opened.message)
            span.end()
            return StreamFailed(code=opened.code, message=opened.message, status=opened.status)
        span.set({"interlock.upstream": opened.upstream.name})
        answered_by(opened.upstream.name, opened.upstream.dialect.http.provider)
        return _Answer(opened.upstream, opened.response, span, opened.notes)

    def _attributes(self, prepared: Request) -> tracing.Attributes:
        upstream = self.upstream
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": tracing.provider_name(
                upstream.dialect.http.provider, upstream.config.issuer, upstream.config.base_url
            ),
            "gen_ai.request.model": prepared.model,
            "interlock.upstream": upstream.name,
        }


class _Answer:
    """An open upstream answer being decoded: SSE framing, then the dialect's decoder.

    :meth:`feed` and :meth:`finish` return the updates of a chunk as a list (relabelled,
    and observed onto ``span`` when tracing); ``notes`` end a refusal's message.
    """

    __slots__ = ("decoded", "decoder", "notes", "parser", "response", "span", "upstream")

    def __init__(
        self, upstream: Upstream, response: httpx.Response, span: Span, notes: str
    ) -> None:
        self.upstream = upstream
        self.response = response
        self.span = span
        self.notes = notes
        self.parser = SseParser()
        self.decoder = upstream.dialect.stream_decoder()
        self.decoded: list[Update] = []
        """The updates of the chunk being decoded: :meth:`failed` still delivers them."""

    def feed(self, chunk: bytes) -> list[Update]:
        """The updates completed by ``chunk``."""
        decoder = self.decoder
        updates = self.decoded = []
        for event in self.parser.feed(chunk):
            updates += decoder.feed(event)
        self.decoded = []
        return self._checked(updates)

    def finish(self) -> list[Update]:
        """The updates of the stream's end."""
        decoder = self.decoder
        updates = self.decoded = []
        for event in self.parser.finish():
            updates += decoder.feed(event)
        updates += decoder.finish()
        self.decoded = []
        return self._checked(updates)

    def _checked(self, updates: list[Update]) -> list[Update]:
        """``updates`` with a provider's own error relabelled, observed onto the span."""
        for update in updates:  # (no generator per chunk: any() over one costs more)
            if type(update) is StreamFailed:
                updates = [_relabel(update, self.upstream.name) for update in updates]
                break
        if self.span is not tracing.NULL_SPAN:
            for update in updates:
                _observe(self.span, update)
        return updates

    async def refused(self) -> StreamFailed:
        """The failure of an answer with an HTTP error status."""
        upstream, response = self.upstream, self.response
        text = upstream.scrub((await response.aread()).decode("utf-8", "replace"))
        upstream.metrics.upstream_errors[upstream.name, "status"] += 1
        refused = StreamFailed(
            code="UPSTREAM_ERROR",
            message=f"upstream {upstream.name} answered HTTP {response.status_code}: "
            f"{_error_message(text)}{self.notes}",
            status=response.status_code,
        )
        self.span.fail(refused.code, refused.message)
        return refused

    def failed(self, error: DecodeError | httpx.HTTPError) -> list[Update]:
        """What a stream that broke off or was malformed still delivers, then its failure."""
        name = self.upstream.name
        if isinstance(error, DecodeError):
            failure = StreamFailed(
                code="UPSTREAM_INVALID_STREAM",
                message=f"upstream {name} sent a malformed stream: {error}",
                status=502,
            )
        elif isinstance(error, httpx.TimeoutException):
            failure = StreamFailed(
                code="UPSTREAM_TIMEOUT", message=f"upstream {name} timed out", status=504
            )
        else:
            failure = StreamFailed(
                code="UPSTREAM_ERROR", message=f"upstream {name}: the stream broke off", status=502
            )
        decoded, self.decoded = self.decoded, []
        return self._checked([*decoded, failure])


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
