"""Conversations through the gateway, each owned by one tenant.

An OpenAI Responses upstream keeps conversations (the Conversations API): ``POST
/v1/conversations`` creates one (the openai SDK's ``conversations.create``), ``GET`` /
``POST`` / ``DELETE /v1/conversations/{id}`` retrieve, update and delete it,
``/v1/conversations/{id}/items`` (``GET``, ``POST``) and ``…/items/{item_id}`` (``GET``,
``DELETE``) read and change its items, and a Responses request naming it in
``conversation`` continues it. The upstream's key is shared by every tenant, so the
gateway keeps, in the configured store, which tenant owns each conversation id and which
upstream holds it (:class:`~interlock.gateway.stores.ResponseIndex`):

* a conversation created through the gateway belongs to the tenant that created it;
* an id the gateway never saw (made with the upstream's key outside the gateway) is
  claimed by the first tenant to use it through the gateway, atomically, on every store;
* another tenant's id is answered exactly as an id the upstream does not hold: a 404 in
  the Responses error shape, ``Conversation with id '…' not found.``, sent nowhere — its
  existence is not disclosed;
* deleting a conversation through the gateway drops its entry.

Conversations carry no model, so a new conversation (and an id never seen) goes to the
OpenAI Responses upstream configured with ``conversations = true``, or else to the only
one configured; with none, or several and none chosen, those requests are refused with a
404 / 400 saying so (a conversation the gateway knows goes to the upstream recorded for
it). Answers come back as the upstream gave them
(``x-interlock-translation: exact``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import quote

from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse
from starlette.routing import BaseRoute, Route

from interlock.gateway.access_log import AccessRecord
from interlock.gateway.bodies import ProxyError, read_body
from interlock.gateway.dialects import Dialect
from interlock.gateway.response_state import RESPONSES, answer_id, refused, relay
from interlock.gateway.stores import ResponseIndex
from interlock.gateway.upstream import Upstream

if TYPE_CHECKING:
    from interlock.gateway.proxy import Proxy, ProxyCall

PATH = "/conversations"
"""Where an OpenAI Responses upstream serves conversations, under its base URL."""


def not_found(conversation_id: str, param: str | None = None) -> ProxyError:
    """The service's own 404 for a conversation it does not hold (nothing disclosed)."""
    return ProxyError(404, f"Conversation with id '{conversation_id}' not found.", param=param)


async def check_conversation(proxy: Proxy, call: ProxyCall) -> None:
    """A 404 unless the request's ``conversation`` is the tenant's own or unclaimed (then
    it is claimed for the tenant and the upstream the request goes to)."""
    conversation_id = call.request.continuation.conversation_id
    index = proxy.operations.responses
    if conversation_id is None or index is None:
        return
    if call.upstream.dialect.name != RESPONSES:
        return  # refused already: state cannot cross dialects
    owner, _ = await index.claim_conversation(call.tenant, conversation_id, call.upstream.name)
    if owner != call.tenant:
        raise not_found(conversation_id, "conversation")


def _home(upstreams: Mapping[str, Upstream]) -> Upstream:
    """The Responses upstream new conversations go to (the one configured with
    ``conversations = true``, else the only one), or the refusal saying why."""
    found = [up for up in upstreams.values() if up.dialect.name == RESPONSES]
    chosen = [up for up in found if up.config.conversations]
    if chosen:
        return chosen[0]
    if len(found) == 1:
        return found[0]
    if not found:
        raise ProxyError(
            404,
            "Conversations live in an OpenAI Responses upstream; none is configured.",
            code="conversations_not_routed",
        )
    names = ", ".join(sorted(up.name for up in found))
    raise ProxyError(
        400,
        "Conversations carry no model, so the gateway sends new ones to one OpenAI "
        f"Responses upstream; several are configured ({names}): set `conversations = true` "
        "on the one that should keep them.",
        code="conversations_not_routed",
    )


async def _holder(
    index: ResponseIndex | None,
    upstreams: Mapping[str, Upstream],
    tenant: str,
    conversation_id: str,
) -> tuple[Upstream, bool]:
    """The upstream holding ``tenant``'s conversation and whether this call claimed it;
    the not-found 404 when another tenant owns it."""
    if index is None:
        return _home(upstreams), False
    found = await index.conversation(conversation_id)
    claimed = False
    if found is None:
        home = _home(upstreams)
        found = await index.claim_conversation(tenant, conversation_id, home.name)
        claimed = found[0] == tenant
    owner, name = found
    upstream = upstreams.get(name)
    if owner != tenant or upstream is None or upstream.dialect.name != RESPONSES:
        raise not_found(conversation_id)
    return upstream, claimed


def routes(proxy: Proxy, responses: Dialect, upstreams: Mapping[str, Upstream]) -> list[BaseRoute]:
    """The Conversations API, answered through the upstream holding each conversation."""

    async def endpoint(http_request: HttpRequest) -> HttpResponse:
        params = http_request.path_params
        conversation_id = params.get("conversation_id")
        item_id = params.get("item_id")
        name = "items" if http_request.url.path.endswith("/items") or item_id else ""
        method = http_request.method
        record = AccessRecord(
            method=method,
            path=http_request.url.path,
            endpoint=f"conversations{'.' + name if name else ''}.{method.lower()}",
            started=time.perf_counter(),
        )
        try:
            record.tenant = tenant = proxy.tenant(http_request)
            body = await read_body(http_request, proxy.max_body_bytes) if method == "POST" else None
            if conversation_id is None:
                answer = await _create(proxy.operations.responses, upstreams, tenant, body)
            else:
                answer = await _existing(
                    proxy.operations.responses, upstreams, tenant, http_request, body
                )
            record.translation = "exact"
        except ProxyError as failure:
            answer = refused(responses, record, failure)
        proxy.finish(record, answer.status_code)
        return answer

    where = "/v1/conversations"
    return [
        Route(where, endpoint, methods=["POST"]),
        Route(where + "/{conversation_id}", endpoint, methods=["GET", "POST", "DELETE"]),
        Route(where + "/{conversation_id}/items", endpoint, methods=["GET", "POST"]),
        Route(where + "/{conversation_id}/items/{item_id}", endpoint, methods=["GET", "DELETE"]),
    ]


async def _create(
    index: ResponseIndex | None,
    upstreams: Mapping[str, Upstream],
    tenant: str,
    body: bytes | None,
) -> HttpResponse:
    """``POST /v1/conversations`` to the home upstream; the new id is the tenant's."""
    home = _home(upstreams)
    answer = await relay(home, "POST", PATH, body or b"{}")
    created = answer_id(answer.body) if answer.status_code < 300 else None
    if index is not None and created:
        await index.claim_conversation(tenant, created, home.name)
    return answer


async def _existing(
    index: ResponseIndex | None,
    upstreams: Mapping[str, Upstream],
    tenant: str,
    http_request: HttpRequest,
    body: bytes | None,
) -> HttpResponse:
    """A request about one conversation, sent to its upstream if it is the tenant's."""
    params = http_request.path_params
    conversation_id = str(params["conversation_id"])
    upstream, claimed = await _holder(index, upstreams, tenant, conversation_id)
    path = f"{PATH}/{quote(conversation_id, safe='')}"
    if http_request.url.path.endswith("/items") or "item_id" in params:
        path += "/items"
    if "item_id" in params:
        path += f"/{quote(str(params['item_id']), safe='')}"
    query = http_request.url.query
    method = http_request.method
    answer = await relay(upstream, method, f"{path}?{query}" if query else path, body)
    whole = path.count("/") == 2
    gone = (method == "DELETE" and whole and answer.status_code < 300) or (
        claimed and answer.status_code == 404 and "item_id" not in params
    )
    if index is not None and gone:
        await index.forget_conversation(conversation_id)
    return answer
