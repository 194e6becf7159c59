"""Provider-compatible endpoints: thin handlers over :class:`~interlock.gateway.proxy.Proxy`."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from starlette.requests import ClientDisconnect
from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from interlock.gateway import conversations, response_state, tracing
from interlock.gateway.access_log import AccessRecord
from interlock.gateway.client_watch import ClientWatch
from interlock.gateway.config import Protocol
from interlock.gateway.counting import count_request
from interlock.gateway.dialects import Dialect
from interlock.gateway.headers import NOT_SENT, TRANSLATION_HEADER
from interlock.gateway.operations import answer_usage
from interlock.gateway.proxy import Proxy, ProxyCall, ProxyError, json_response
from interlock.gateway.streaming import CLIENT_GONE, stream_response
from interlock.gateway.strict_json import TOO_DEEP

LOGGER = logging.getLogger("interlock.gateway")


async def handle(
    proxy: Proxy,
    ingress: Dialect,
    http_request: HttpRequest,
    *,
    endpoint: str,
    path_model: str | None = None,
    stream: bool | None = None,
    watch: ClientWatch | None = None,
) -> HttpResponse:
    """Proxy one request; every failure comes back in ``ingress``'s error shape.

    ``watch`` starts once the body is read: a client that goes away from then on cancels
    the request wherever it is (recorded with status 499).
    """
    scope = http_request.scope
    path = scope.get("root_path", "") + scope["path"]
    record = AccessRecord(scope["method"], path, endpoint, time.perf_counter())
    call: ProxyCall | None = None
    # Without an active tracer the "translate" span and the upstream call's span are
    # no-ops (``tracing.request()`` is set only inside ``proxied``, within ``serving``,
    # which makes the tracer active): their blocks run without the context managers.
    traced = tracing.active() is not None
    try:
        if traced:
            with tracing.span("translate", attributes={"interlock.ingress": ingress.name}):
                call = await proxy.prepare(
                    ingress, http_request, record, path_model=path_model, stream=stream
                )
        else:
            call = await proxy.prepare(
                ingress, http_request, record, path_model=path_model, stream=stream
            )
        record.translation = call.translation
        await response_state.check_previous(proxy, call)
        await conversations.check_conversation(proxy, call)
        limited = await proxy.operations.admit(ingress, call)
        if limited is not None:
            proxy.finish(record, limited.status_code)
            return limited
        if watch is not None:
            watch.start(http_request.receive, streamed=call.request.stream)
        proxy.operations.routed(call)
        if proxy.router is not None and call.route.model.routed:
            call, response = await proxy.router.open(proxy, call)
        elif traced:
            with proxy.operations.calling(call):
                response = await proxy.open_upstream(call)
        else:
            response = await proxy.open_upstream(call)
        if response.status_code >= 400:
            answer = await proxy.upstream_error(call, response)
        elif call.request.stream:
            return stream_response(proxy, call, response)
        else:
            answer = await proxy.complete(call, response)
            proxy.operations.finished(call, answer_usage(call.ingress, answer.body))
            await response_state.note_answer(proxy.operations.responses, call, answer.body)
    except asyncio.CancelledError:
        if watch is not None and watch.gone:
            record.error = "client_disconnected"
            proxy.finish(record, CLIENT_GONE)
        raise
    except ClientDisconnect:
        record.error = "client_disconnected"
        proxy.finish(record, CLIENT_GONE)
        return HttpResponse(status_code=CLIENT_GONE)  # nobody is left to read it
    except Exception as error:
        answer = _failure(ingress, call, record, error)
    proxy.finish(record, answer.status_code)
    return answer


def _failure(
    ingress: Dialect, call: ProxyCall | None, record: AccessRecord, error: Exception
) -> HttpResponse:
    """The answer to a request that failed with ``error`` (called while it is handled)."""
    if isinstance(error, ProxyError):
        record.error = error.code or "error"
        body = ingress.error(error.status, error.message, code=error.code, param=error.param)
        return json_response(body, error.status, headers={**_headers(call), **error.headers})
    if isinstance(error, RecursionError):  # nested deeper than some codec can walk
        record.error = "invalid_json"
        error_body = ingress.error(400, TOO_DEEP, code="invalid_json")
        return json_response(error_body, 400, headers=_headers(call))
    # a bug must still answer in the client's dialect, never a stack trace
    LOGGER.exception("unhandled error proxying %s", record.path)
    record.error = "internal_error"
    error_body = ingress.error(500, "internal gateway error")
    return json_response(error_body, 500, headers=_headers(call))


def _headers(call: ProxyCall | None) -> dict[str, str]:
    return call.headers() if call is not None else {TRANSLATION_HEADER: NOT_SENT}


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One provider endpoint as a bare ASGI app.

    Starlette's ``Route`` hands an ASGI app the scope directly: no per-request wrapper
    functions, and no exception-handling wrapper around every ``send`` (a stream sends
    once per chunk). :func:`handle` answers every failure itself.
    """

    proxy: Proxy
    ingress: Dialect
    name: str
    stream: bool | None = None
    """Fixed by the path (Gemini's two methods); ``None`` reads the body's ``stream``."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tracer = self.proxy.operations.tracer
        if tracer is None:
            await self.serve(scope, receive, send)
            return
        with tracing.proxied(tracer, self.name) as trace:
            status = await self.serve(scope, receive, send)
            if trace.record is None:  # refused before routing: the answer's status says it
                trace.root.set({"http.response.status_code": status})
                if status >= 400:
                    trace.root.fail(str(status))

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> int:
        """Answer one request; the status of the answer (0 if the client left first)."""
        http_request = HttpRequest(scope, receive)
        path_model = scope["path_params"].get("model") if self.ingress.model_in_path else None
        watch = ClientWatch()
        try:
            response = await handle(
                self.proxy,
                self.ingress,
                http_request,
                endpoint=self.name,
                path_model=path_model,
                stream=self.stream,
                watch=watch,
            )
            await response(scope, receive, watch.sender(send))
            return response.status_code
        except asyncio.CancelledError:
            if not watch.gone:
                raise
            watch.absorb()
            return 0
        finally:
            watch.stop()


def routes(proxy: Proxy, dialects: dict[Protocol, Dialect]) -> list[BaseRoute]:
    """Every ingress endpoint each dialect declares in its HTTP facts."""
    found: list[BaseRoute] = []
    for ingress in dialects.values():
        for path in ingress.http.ingress:
            endpoint = Endpoint(proxy, ingress, path.endpoint, stream=path.stream)
            found.append(Route(path.path, endpoint, methods=["POST"]))
        if ingress.http.count_tokens is not None:
            where, key = ingress.http.count_tokens
            found.append(Route(where, CountTokens(proxy, ingress, key), methods=["POST"]))
    return found


@dataclass(frozen=True, slots=True)
class CountTokens:
    """A token-counting endpoint (Anthropic's), answered through :mod:`.counting`: the
    upstream's own count when it has an endpoint for it, else an estimate; the
    ``x-interlock-translation`` header says which."""

    proxy: Proxy
    ingress: Dialect
    key: str

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        http_request = HttpRequest(scope, receive)
        record = AccessRecord(
            method="POST", path=scope["path"], endpoint="count_tokens", started=time.perf_counter()
        )
        try:
            counted = await count_request(self.proxy, self.ingress, http_request, record)
            answer = json_response({self.key: counted.tokens}, 200, counted.label)
        except ProxyError as error:
            record.error = error.code or "error"
            body = self.ingress.error(
                error.status, error.message, code=error.code, param=error.param
            )
            answer = json_response(body, error.status, NOT_SENT)
        self.proxy.finish(record, answer.status_code)
        await answer(scope, receive, send)
