"""The proxy pipeline: ingress decode → route → vault restore → egress encode → upstream → back.

Same dialect in and out, the client's bytes are forwarded unchanged except for the model
name (spliced in place, see :func:`rewrite_model`) and a Chat stream's request for usage
(:mod:`interlock.gateway.chat_usage`), after the request was still decoded
and checked against the upstream's replay rules; the upstream's answer is forwarded as
is. Across dialects every hop goes through the canonical transcript. Every failure is
answered in the ingress dialect's own error shape (:class:`ProxyError`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, cast

import httpx
from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse

from interlock.codecs._json import loads_utf8
from interlock.codecs.openai_chat._replay_check import cannot_refuse as chat_cannot_refuse
from interlock.gateway import answer_losses, strict_json
from interlock.gateway.access_log import AccessRecord
from interlock.gateway.auth import DEFAULT_TENANT, KeyRing, Unauthorized
from interlock.gateway.bodies import (
    ProxyError,
    json_response,
    parse_payload,
    read_body,
    required_fields,
    required_headers,
)
from interlock.gateway.chat_usage import ask_for_usage
from interlock.gateway.dialects import (
    Dialect,
    chat_ingress_with_usage,
    error_details,
    stream_usage_asked,
)
from interlock.gateway.evolve import evolve
from interlock.gateway.headers import translation_label
from interlock.gateway.history_cache import HistoryCache
from interlock.gateway.lifecycle import Lifecycle
from interlock.gateway.metrics import Metrics
from interlock.gateway.model_field import compact_json, rewrite_model
from interlock.gateway.offload import OFFLOAD_BYTES, encode_in_pieces, off_loop
from interlock.gateway.operations import ProxyOperations
from interlock.gateway.pairing import refuse_unpaired
from interlock.gateway.provenance import ProvenanceIndex, answer_blobs, resolve
from interlock.gateway.proxy_call import ProxyCall, Route
from interlock.gateway.proxy_history import decode, parse, remember, suffix_checks, vault_read
from interlock.gateway.splice_rules import SPLICES
from interlock.gateway.translation_cache import splice, translated_whole
from interlock.gateway.upstream import AnswerTooLarge, Upstream, UpstreamUnavailable, read_answer
from interlock.gateway.vault import (
    Lookup,
    ReasoningVault,
    restore_messages,
    vault_misses,
    vault_needed,
    wanted_keys,
)
from interlock.transcript import (
    Continuation,
    DecodeError,
    Encoded,
    JsonObject,
    LossyHistoryError,
    ReplayPolicy,
    Request,
)

if TYPE_CHECKING:
    from interlock.gateway.routing import Router

__all__ = [
    "Proxy",
    "ProxyCall",
    "ProxyError",
    "Route",
    "json_response",
    "parse_payload",
    "read_body",
]
"""Re-exported: the pipeline's call, route and HTTP edges are imported from here."""


def minted_ids(call: ProxyCall, checked: tuple[str, str]) -> bool:
    """True when the client's body holds an id the gateway minted in the upstream's
    dialect (its decoder drops those, so the request is re-encoded).

    A continued prefix whose entry was checked for ``checked`` (upstream, replay mode)
    went there unchanged, which it does only without such an id: only the bytes from just
    before the prefix's end on are searched (searching a 200 KB body costs ~75 µs).
    """
    marker = call.upstream.dialect.http.minted_id_marker
    if not marker:
        return False
    parsed = call.parsed
    continuation = parsed.continuation if parsed is not None else None
    start = 0
    if continuation is not None and continuation.entry.checked_for == checked:
        start = max(continuation.entry.size - len(marker) + 1, 0)
    return call.body.find(marker, start) >= 0


CANNOT_REFUSE: dict[str, Callable[[Request], bool]] = {"openai-chat": chat_cannot_refuse}
"""Per upstream dialect: when its encoder cannot refuse a request (under any policy)."""


def check_needless(upstream: Upstream, request: Request) -> bool:
    """True when the same-dialect replay check of ``request`` for ``upstream`` cannot
    refuse it, so the check (an encode whose payload is thrown away) is not run."""
    cannot_refuse = CANNOT_REFUSE.get(upstream.dialect.name)
    return cannot_refuse is not None and cannot_refuse(request)


class Proxy:
    """Routes and translates provider requests; one per gateway process."""

    def __init__(
        self,
        *,
        routes: dict[str, Route],
        keys: KeyRing,
        vault: ReasoningVault,
        metrics: Metrics,
        max_body_bytes: int,
        offload_bytes: int = OFFLOAD_BYTES,
        history: HistoryCache | None = None,
        lifecycle: Lifecycle | None = None,
        operations: ProxyOperations | None = None,
        provenance: ProvenanceIndex | None = None,
    ) -> None:
        self.routes = routes
        self.keys = keys
        self.vault = vault
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.offload_bytes = offload_bytes
        """Bodies this large are parsed and translated on a worker thread (:mod:`.offload`)."""
        self.history = history if history is not None else HistoryCache()
        self.operations = operations if operations is not None else ProxyOperations()
        """Rate limits and usage accounting (:mod:`.operations`)."""
        self.lifecycle = lifecycle
        """Streams join it, so a drain waits for them (or ends them) before exit."""
        self.router: Router | None = None
        """Chooses, retries and falls back among a routed model's deployments."""
        self.provenance = provenance
        """With two or more vendors of a dialect: which vendor issued the opaque reasoning
        a client of that dialect holds (:mod:`.provenance`)."""

    def tenant(self, http_request: HttpRequest) -> str:
        """The caller's tenant, or a 401."""
        if not self.keys.required:
            return DEFAULT_TENANT
        try:
            return self.keys.tenant(http_request.headers, http_request.query_params)
        except Unauthorized as error:
            raise ProxyError(401, f"{error}", code="invalid_api_key") from error

    def route(self, model: str, ingress: Dialect) -> Route:
        """The route for a client model name, or a 404 in the dialect's words."""
        route = self.routes.get(model.removeprefix("models/"))
        if route is None:
            message = ingress.http.model_not_found.replace("{model}", model)
            raise ProxyError(404, message, code="model_not_found", param="model")
        return route

    async def prepare(
        self,
        ingress: Dialect,
        http_request: HttpRequest,
        record: AccessRecord,
        *,
        path_model: str | None,
        stream: bool | None,
    ) -> ProxyCall:
        """Everything up to the upstream request: checks, routing, vault, encoding."""
        tenant = self.tenant(http_request)
        record.tenant = tenant
        required_headers(ingress, http_request)
        body = await read_body(http_request, self.max_body_bytes)
        parsed = await off_loop(
            len(body), self.offload_bytes, lambda: parse(self.history, ingress, tenant, body)
        )
        payload = parsed.payload
        required_fields(ingress, payload)
        stream_field = payload.get("stream")
        if stream_field is not None and not isinstance(stream_field, bool):
            raise ProxyError(
                400, "stream: expected a boolean", code="invalid_request", param="stream"
            )
        model = path_model if path_model is not None else payload.get("model")
        if not isinstance(model, str) or not model:
            raise ProxyError(400, "you must provide a model parameter", param="model")
        route = self.route(model, ingress)
        record.model, record.upstream = route.model.name, route.upstream.name
        parsed, request = await off_loop(
            len(body), self.offload_bytes, lambda: decode(self.history, ingress, parsed, body)
        )
        wants_stream = stream if stream is not None else payload.get("stream") is True
        record.stream = wants_stream
        request = evolve(request, model=route.model.model, stream=wants_stream)
        if ingress.name == "openai-chat" and wants_stream and stream_usage_asked(request):
            ingress = chat_ingress_with_usage()  # the client's usage chunk, whatever the upstream
        call = ProxyCall(
            ingress=ingress,
            route=route,
            tenant=tenant,
            request=request,
            body=body,
            payload=payload,
            passthrough=False,
            translation="",
            record=record,
            parsed=parsed,
            json_array=ingress.http.stream_framing == "sse-or-json-array"
            and wants_stream
            and http_request.query_params.get("alt") != "sse",
            client_model=model,
            source=request,
            source_body=body,
        )
        if self.router is None or not route.model.routed:
            await self._encode(call, model)  # a routed call is encoded per deployment tried
        return call

    async def retarget(self, call: ProxyCall, route: Route) -> ProxyCall:
        """A prepared routed ``call`` encoded for ``route`` (one of its deployments).

        Raises the same 400 :class:`ProxyError` as :meth:`prepare` when the history
        cannot go to that deployment under its replay policy.
        """
        assert call.source is not None, "prepare keeps the decoded request"
        source = replace(call.source, model=route.model.model)
        target = replace(call, route=route, request=source, body=call.source_body)
        await self._encode(target, call.client_model)
        return target

    async def _encode(self, call: ProxyCall, client_model: str) -> None:
        upstream = call.upstream
        same = call.ingress.name == upstream.dialect.name
        request = call.request
        foreign = None
        if same and self.provenance is not None and self.provenance.tells_apart(call):
            foreign = await resolve(self.provenance, call.tenant, request, upstream.config.issuer)
            request = foreign or request  # another vendor's reasoning: re-encoded without it
        if not same:
            request = self._cross_dialect(request, upstream)
            if call.parsed is not None:
                policy = self.policy(call)
                spliced = await splice(
                    self.vault, call.tenant, upstream, request, call.parsed, policy
                )
                if spliced is not None:  # what is left to do is small: here, on the loop
                    self.history.translations_reused += 1
                    call.request, call.translated = spliced.request, spliced.translation
                    call.warnings = spliced.misses
                    self._translated(call, spliced.encoded, spliced.restored, spliced.body)
                    return
        known, unread = vault_read(call, request)
        keys = wanted_keys(unread, upstream.config)
        if keys or known is not None:
            lookup = await self.vault.look(call.tenant, upstream.config, keys, known)
        else:
            lookup = Lookup((), (), (), {})  # what ``look`` finds for no keys, no round trip
        call.vault_lookup = (upstream.name, lookup)
        if lookup.found:
            request = replace(request, messages=restore_messages(request.messages, lookup.found))
        call.request = request
        call.warnings = vault_misses(request.messages, upstream.config)
        size = len(call.body)
        relay = foreign is None
        await off_loop(
            size, self.offload_bytes, lambda: self._encoded(call, client_model, lookup, relay)
        )

    def _encoded(
        self, call: ProxyCall, client_model: str, lookup: Lookup, relay: bool = True
    ) -> None:
        """The body for the upstream: the client's (checked, model spliced) or re-encoded
        (always when not ``relay``: the request was changed before the vault)."""
        upstream, request = call.upstream, call.request
        restored = len(lookup.found)
        same = relay and call.ingress.name == upstream.dialect.name
        policy = self.policy(call)
        checked = (upstream.name, upstream.config.replay_mode)
        if same and minted_ids(call, checked):
            same = False  # ids the gateway minted: the decoder dropped them, re-encode
        if same and not restored:
            if not suffix_checks(self.history, call, checked, policy) and not check_needless(
                upstream, request
            ):
                self.encode_checked(upstream, request, policy)
            remember(self.history, call, checked)
            call.passthrough = True
            call.translation = "exact"
            if not call.ingress.model_in_path:
                parsed = call.parsed
                within, at = (parsed.model_within, parsed.model_at) if parsed else (None, -1)
                call.body = rewrite_model(call.body, client_model, request.model, within, at)
            call.body, call.hide_usage = ask_for_usage(call.body, request, call.ingress.name)
            return
        encoded = self.encode_checked(upstream, request, policy)
        dialect = upstream.dialect.name
        body: bytes | None = None
        if call.ingress.name != dialect and dialect in SPLICES and call.parsed is not None:
            large = 0 < self.offload_bytes <= len(call.body)
            call.translated, body = translated_whole(
                self.history,
                call.parsed,
                upstream,
                request,
                encoded,
                lookup,
                call.warnings,
                policy,
                large=large,
            )
        self._translated(call, encoded, restored, body)

    def _translated(
        self, call: ProxyCall, encoded: Encoded, restored: int, body: bytes | None = None
    ) -> None:
        """The translated body: ``body`` when given (written from pieces), else encoded."""
        remember(self.history, call, None)
        call.warnings = call.warnings + encoded.warnings  # vault misses first
        call.translation = translation_label(call.warnings, restored)
        if body is None:
            large = 0 < self.offload_bytes <= len(call.body)
            payload = encoded.payload
            body = encode_in_pieces(payload).encode() if large else compact_json(payload)
        call.body = body

    @staticmethod
    def policy(call: ProxyCall) -> ReplayPolicy:
        """The replay policy ``call``'s history is encoded under for its upstream."""
        return ReplayPolicy(
            mode=call.upstream.config.replay_mode,
            signatures_required=call.route.model.signatures_required,
            effort_levels=call.route.model.effort_levels,
        )

    def encode_checked(self, upstream: Upstream, request: Request, policy: ReplayPolicy) -> Encoded:
        """``request`` encoded for ``upstream``; a 400 naming the loss when it would be lossy."""
        refuse_unpaired(upstream, request, self.metrics)
        try:
            return upstream.dialect.encode_request(request, policy)
        except LossyHistoryError as error:
            self.metrics.lossy_refused[upstream.name, error.code] += 1
            raise ProxyError(
                400,
                f"history cannot be sent to {upstream.name} without loss: {error}",
                code=error.code,
                param=error.location,
            ) from error

    @staticmethod
    def _cross_dialect(request: Request, upstream: Upstream) -> Request:
        continuation = request.continuation
        if continuation.previous_response_id or continuation.conversation_id:
            raise ProxyError(
                400,
                "previous_response_id / conversation state lives in the OpenAI Responses "
                f"service and cannot be sent to {upstream.name} ({upstream.dialect.name}); "
                "send the full history instead",
                code="lossy_history",
                param="previous_response_id",
            )
        if upstream.dialect.http.stateful_service:
            # The gateway replays full histories: stateless, with encrypted reasoning back.
            return evolve(request, continuation=Continuation(store=False))
        return request

    async def open_upstream(self, call: ProxyCall) -> httpx.Response:
        """Send the prepared body upstream; the response is open and must be closed."""
        upstream = call.upstream
        path = upstream.dialect.upstream_path(call.request.model, call.request.stream)
        try:
            return await upstream.send(path, call.body, accept_stream=call.request.stream)
        except UpstreamUnavailable as error:
            raise ProxyError(error.status, error.message, code=f"upstream_{error.kind}") from error

    async def read(self, call: ProxyCall, response: httpx.Response) -> bytes:
        """The whole upstream answer, or a 502 past the upstream's size limit."""
        try:
            return await read_answer(response, call.upstream.config.max_response_bytes)
        except AnswerTooLarge as error:
            self.metrics.upstream_errors[call.upstream.name, "too_large"] += 1
            raise ProxyError(
                502, f"upstream {call.upstream.name}: {error}", code="upstream_too_large"
            ) from error
        except httpx.HTTPError as error:  # cut off mid-answer: it may have run, never resent
            failure = call.upstream.unavailable(error)
            code = f"upstream_{failure.kind}"
            raise ProxyError(failure.status, failure.message, code=code) from error

    async def upstream_error(self, call: ProxyCall, response: httpx.Response) -> HttpResponse:
        """An upstream error answer, translated (status preserved, key scrubbed)."""
        body = await self.read(call, response)
        upstream = call.upstream
        self.metrics.upstream_errors[upstream.name, "status"] += 1
        text = upstream.scrub(body.decode("utf-8", "replace"))
        if call.passthrough:
            return HttpResponse(
                text,
                status_code=response.status_code,
                media_type=response.headers.get("content-type", "application/json"),
                headers=call.headers(response),
            )
        message, code = error_details(text, response.status_code)
        error = call.ingress.error(
            response.status_code, f"upstream {upstream.name}: {message}", code=code
        )
        return json_response(error, response.status_code, headers=call.headers(response))

    async def complete(self, call: ProxyCall, response: httpx.Response) -> HttpResponse:
        """A non-streaming upstream answer, forwarded or translated (and vaulted)."""
        body = await self.read(call, response)
        if self.provenance is not None and self.provenance.tells_apart(call):
            blobs = answer_blobs(body, call.upstream.dialect.name)
            await self.provenance.record(call.tenant, call.upstream.config.issuer, blobs)
        headers = call.headers(response)
        media_type = response.headers.get("content-type", "application/json")
        if call.passthrough and not vault_needed(call.upstream.config, call.passthrough):
            if not strict_json.object_shaped(body):
                self.metrics.upstream_errors[call.upstream.name, "invalid_response"] += 1
                raise ProxyError(
                    502,
                    f"upstream {call.upstream.name} sent a 200 that is not a JSON object",
                    code="upstream_invalid_response",
                )
            return HttpResponse(body, media_type=media_type, headers=headers)
        upstream, size = call.upstream, len(body)
        try:
            decoded = await off_loop(
                size,
                self.offload_bytes,
                lambda: upstream.dialect.decode_response(cast(JsonObject, loads_utf8(body))),
            )
        except (ValueError, DecodeError) as error:
            self.metrics.upstream_errors[upstream.name, "invalid_response"] += 1
            raise ProxyError(
                502,
                f"upstream {upstream.name} sent an invalid response: {error}",
                code="upstream_invalid_response",
            ) from error
        await self.vault.remember(call.tenant, upstream.config, decoded.message)
        if call.passthrough:
            return HttpResponse(body, media_type=media_type, headers=headers)
        requested = call.warnings
        answer, losses = await off_loop(
            size,
            self.offload_bytes,
            lambda: answer_losses.translated_answer(call, decoded, headers),
        )
        answer_losses.count(self.metrics, call.ingress, requested, losses, streamed=False)
        return answer

    def finish(self, record: AccessRecord, status: int) -> None:
        """Account for a finished request (metrics and access log)."""
        record.status = status
        self.metrics.request_done(
            record.endpoint, record.model or "-", status, time.perf_counter() - record.started
        )
        record.write()
