"""Stored Responses through the gateway: retrieve, delete, cancel, list input items.

An OpenAI Responses upstream keeps what it answers unless asked not to (``store``
defaults to true). A Responses client of such an upstream can come back for it:
``GET /v1/responses/{id}`` (the openai SDK's ``responses.retrieve``), ``DELETE
/v1/responses/{id}`` (``responses.delete``), ``POST /v1/responses/{id}/cancel``
(``responses.cancel``, for a ``background`` response), ``GET
/v1/responses/{id}/input_items`` (``responses.input_items.list``, with
``after``/``limit``/``order``/``include``). These
carry no model, so the gateway remembers, per tenant, which upstream answered each
response id (:class:`~interlock.gateway.stores.ResponseIndex`, in the configured store),
as answers pass through: a Responses client, a Responses upstream, ``store`` not false;
non-streamed from the answer, streamed from its first event (``response.created``).

A state request goes to the upstream its id was recorded for, query included, and its
answer comes back as it is (``x-interlock-translation: exact``; a deleted or missing one
is dropped from the index). An id the tenant never created through the gateway (another
tenant's, one an upstream of another dialect answered — those keep no state — or one
sent with ``store: false``) is a 404 in the Responses error shape: nothing is sent.

With API keys configured, a ``previous_response_id`` sent to a Responses upstream must
name a response the same tenant created through the gateway (else the 400 the service
gives for an unknown one): the upstream's key is shared by every tenant, so without this
check a tenant could continue, and so read, another's conversation. A ``conversation``
is checked the same way (:mod:`.conversations`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, cast
from urllib.parse import quote

import httpx
from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse
from starlette.responses import StreamingResponse
from starlette.routing import BaseRoute, Route

from interlock.codecs._sse import SseEvent
from interlock.gateway.access_log import AccessRecord
from interlock.gateway.bodies import ProxyError, json_response
from interlock.gateway.dialects import Dialect
from interlock.gateway.headers import NOT_SENT, TRANSLATION_HEADER, passed_headers
from interlock.gateway.stores import ResponseIndex
from interlock.gateway.upstream import (
    AnswerTooLarge,
    Upstream,
    UpstreamUnavailable,
    body_chunks,
    read_answer,
)
from interlock.transcript import JsonObject, JsonValue, ResponseStarted, Update

if TYPE_CHECKING:
    from interlock.gateway.proxy import Proxy, ProxyCall

RESPONSES = "openai-responses"
_LEADING_ID = re.compile(rb'\A\s*\{\s*"id"\s*:\s*"([^"\\]+)"')
"""The top-level id where the service writes it: first (read without parsing the body)."""
_CREATED = ("response.created", "response.in_progress", "response.completed")


def recorded(call: ProxyCall) -> bool:
    """True when ``call``'s answer is a stored response its client may come back for."""
    return (
        call.ingress.name == RESPONSES
        and call.upstream.dialect.name == RESPONSES
        and call.request.continuation.store is not False
    )


def answer_id(body: bytes | memoryview) -> str | None:
    """The id of a non-streamed Responses answer (``None`` if it has none)."""
    if isinstance(body, memoryview):
        body = body.tobytes()
    found = _LEADING_ID.match(body)
    if found is not None:
        return found.group(1).decode("utf-8", "replace")
    try:
        document: JsonValue = json.loads(body)
    except ValueError:
        return None
    value = cast(JsonObject, document).get("id") if isinstance(document, dict) else None
    return value if isinstance(value, str) else None


async def note_answer(
    index: ResponseIndex | None, call: ProxyCall, body: bytes | memoryview
) -> None:
    """Record the answer's response id when :func:`recorded` says it is stored."""
    if index is None or not recorded(call):
        return
    response_id = answer_id(body)
    if response_id:
        await index.remember(call.tenant, response_id, call.upstream.name)


class StreamedId:
    """Finds a streamed answer's response id (its first event carries it) and records it."""

    __slots__ = ("call", "index", "response_id", "written")

    def __init__(self, index: ResponseIndex, call: ProxyCall) -> None:
        self.index = index
        self.call = call
        self.response_id: str | None = None
        self.written = False

    @staticmethod
    def watching(index: ResponseIndex | None, call: ProxyCall) -> StreamedId | None:
        """A watcher when ``call``'s answer is recorded, else ``None``."""
        return StreamedId(index, call) if index is not None and recorded(call) else None

    def events(self, events: list[SseEvent]) -> None:
        """Look for the id among undecoded events."""
        for event in events:
            if self.response_id is not None:
                return
            if event.event is not None and event.event not in _CREATED:
                continue
            try:
                document: JsonValue = json.loads(event.data)
            except ValueError:
                continue
            inner = (
                cast(JsonObject, document).get("response") if isinstance(document, dict) else None
            )
            found = cast(JsonObject, inner).get("id") if isinstance(inner, dict) else None
            if isinstance(found, str) and found:
                self.response_id = found

    def updates(self, updates: list[Update]) -> None:
        """Look for the id among decoded updates."""
        for update in updates:
            if self.response_id is None and isinstance(update, ResponseStarted) and update.id:
                self.response_id = update.id

    async def flush(self) -> None:
        """Record the id once it is known (once)."""
        if self.response_id is not None and not self.written:
            self.written = True
            await self.index.remember(self.call.tenant, self.response_id, self.call.upstream.name)


async def check_previous(proxy: Proxy, call: ProxyCall) -> None:
    """With API keys, a 400 unless ``previous_response_id`` is the tenant's own (module
    docstring)."""
    previous = call.request.continuation.previous_response_id
    index = proxy.operations.responses
    if previous is None or index is None or not proxy.keys.required:
        return
    if call.upstream.dialect.name != RESPONSES:
        return  # refused already: state cannot cross dialects
    if await index.find(call.tenant, previous) is None:
        raise ProxyError(
            400,
            f"Previous response with id '{previous}' not found.",
            code="previous_response_not_found",
            param="previous_response_id",
        )


def routes(proxy: Proxy, responses: Dialect, upstreams: Mapping[str, Upstream]) -> list[BaseRoute]:
    """The state endpoints, answered through the upstream that holds the response."""

    async def state(http_request: HttpRequest) -> HttpResponse:
        last = http_request.url.path.rsplit("/", 1)[-1]
        suffix = f"/{last}" if last in ("input_items", "cancel") else ""
        method = http_request.method
        endpoint = f"responses.{suffix[1:] or method.lower()}"
        record = AccessRecord(
            method=method,
            path=http_request.url.path,
            endpoint=endpoint,
            started=time.perf_counter(),
        )
        response_id = str(http_request.path_params["response_id"])
        try:
            tenant = record.tenant = proxy.tenant(http_request)
            upstream = await _holder(proxy.operations.responses, upstreams, tenant, response_id)
            record.upstream = upstream.name
            path = f"{upstream.dialect.http.upstream_path}/{quote(response_id, safe='')}"
            path += suffix
            query = http_request.url.query
            answer = await relay(upstream, method, f"{path}?{query}" if query else path)
            record.translation = "exact"
            if answer.status_code == 404 or (method == "DELETE" and answer.status_code < 300):
                index = proxy.operations.responses
                if index is not None:
                    await index.forget(tenant, response_id)
        except ProxyError as failure:
            answer = refused(responses, record, failure)
        proxy.finish(record, answer.status_code)
        return answer

    return [
        Route("/v1/responses/{response_id}", state, methods=["GET", "DELETE"]),
        Route("/v1/responses/{response_id}/input_items", state, methods=["GET"]),
        Route("/v1/responses/{response_id}/cancel", state, methods=["POST"]),
    ]


def refused(responses: Dialect, record: AccessRecord, failure: ProxyError) -> HttpResponse:
    """``failure`` as the Responses error JSON, with the access record saying nothing was sent."""
    record.error = failure.code or "error"
    record.translation = NOT_SENT
    body = responses.error(failure.status, failure.message, code=failure.code, param=failure.param)
    return json_response(body, failure.status, NOT_SENT)


async def _holder(
    index: ResponseIndex | None, upstreams: Mapping[str, Upstream], tenant: str, response_id: str
) -> Upstream:
    """The Responses upstream holding ``tenant``'s ``response_id``, or a 404."""
    name = await index.find(tenant, response_id) if index is not None else None
    upstream = upstreams.get(name) if name is not None else None
    if upstream is None or upstream.dialect.name != RESPONSES:
        raise ProxyError(
            404,
            f"Response with id '{response_id}' not found. Interlock serves the responses a "
            "tenant created through it that an OpenAI Responses upstream stored (store not "
            "false); upstreams of other dialects keep no responses.",
            code="response_not_found",
        )
    return upstream


async def relay(
    upstream: Upstream, method: str, path: str, body: bytes | None = None
) -> HttpResponse:
    """The upstream's answer as it is (a stream relayed as it comes), key scrubbed from
    errors; a 502/504 when the upstream cannot be reached or answers too much."""
    try:
        response = await upstream.fetch(method, path, body)
    except UpstreamUnavailable as error:
        raise ProxyError(error.status, error.message, code=f"upstream_{error.kind}") from error
    headers = {**passed_headers(response.headers.multi_items()), TRANSLATION_HEADER: "exact"}
    media_type = response.headers.get("content-type", "application/json")
    status = response.status_code
    if status < 400 and media_type.startswith("text/event-stream"):
        return StreamingResponse(
            _chunks(response), status_code=status, media_type=media_type, headers=headers
        )
    try:
        body = await read_answer(response, upstream.config.max_response_bytes)
    except AnswerTooLarge as error:
        raise ProxyError(
            502, f"upstream {upstream.name}: {error}", code="upstream_too_large"
        ) from error
    except httpx.HTTPError as error:
        failure = upstream.unavailable(error)
        raise ProxyError(
            failure.status, failure.message, code=f"upstream_{failure.kind}"
        ) from error
    if status >= 400:
        body = upstream.scrub(body.decode("utf-8", "replace")).encode()
    return HttpResponse(body, status_code=status, media_type=media_type, headers=headers)


async def _chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for chunk in body_chunks(response):
            yield chunk
    finally:
        await response.aclose()
