"""Token counting endpoints (Anthropic's ``/v1/messages/count_tokens``).

The request is checked like a generation request (key, required headers, model route,
decode); the count is an estimate: the prompt's compact JSON length over four, the usual
rule of thumb, whatever the upstream.
"""

from __future__ import annotations

from starlette.requests import Request as HttpRequest

from interlock.gateway.access_log import AccessRecord
from interlock.gateway.bodies import ProxyError, parse_payload, read_body, required_headers
from interlock.gateway.dialects import Dialect
from interlock.gateway.model_field import COMPACT
from interlock.gateway.proxy import Proxy
from interlock.transcript import DecodeError


async def count_tokens(
    proxy: Proxy, ingress: Dialect, http_request: HttpRequest, record: AccessRecord
) -> int:
    """An estimate of a request's input tokens, checked like a generation request.

    About four characters per token of the prompt's JSON (system, messages, tools).
    """
    record.tenant = proxy.tenant(http_request)
    required_headers(ingress, http_request)
    payload = parse_payload(await read_body(http_request, proxy.max_body_bytes))
    model = payload.get("model")
    if not isinstance(model, str) or not model:
        raise ProxyError(400, "model: Field required", param="model")
    route = proxy.route(model, ingress)
    record.model, record.upstream = route.model.name, route.upstream.name
    try:
        ingress.decode_request(payload)
    except DecodeError as error:
        raise ProxyError(400, str(error), code="invalid_request", param=error.path) from error
    prompt = {key: payload[key] for key in ("system", "messages", "tools") if key in payload}
    return max(1, -(-len(COMPACT.encode(prompt)) // 4))
