"""Token counting: Anthropic's ``/v1/messages/count_tokens`` and Gemini's ``:countTokens``.

The request is checked like a generation request (key, required headers, model route,
decode). The count comes from the upstream's own counting endpoint when its dialect has
one (``HttpFacts.upstream_count_path``: Anthropic and Gemini): the client's request as
is to an upstream of its own dialect (labelled ``exact``), or the canonical request
encoded for the upstream (``translated``). Otherwise, or when the upstream's count fails
or the history cannot be encoded for it, the gateway estimates: about four characters of
the prompt per token (``estimated``). ``x-interlock-translation`` says which.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import cast

from starlette.requests import Request as HttpRequest

from interlock.gateway.access_log import AccessRecord
from interlock.gateway.bodies import ProxyError, parse_payload, read_body, required_headers
from interlock.gateway.dialects import Dialect
from interlock.gateway.model_field import COMPACT
from interlock.gateway.proxy import Proxy, Route
from interlock.gateway.upstream import read_answer
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    LossyHistoryError,
    ReplayPolicy,
    Request,
)

ESTIMATED = "estimated"
_RESULT_KEYS = {"anthropic": "input_tokens", "gemini": "totalTokens"}
_ANTHROPIC_FIELDS = ("model", "messages", "system", "tools", "tool_choice", "thinking")
_COUNT_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class Count:
    """A token count and where it came from (``exact``, ``translated``, ``estimated``)."""

    tokens: int
    label: str


def decoded(ingress: Dialect, payload: JsonObject) -> Request:
    """The canonical request of a count request (a 400 when it does not decode)."""
    inner = payload.get("generateContentRequest")
    body = cast(JsonObject, inner) if isinstance(inner, dict) else payload
    try:
        return ingress.decode_request({key: value for key, value in body.items() if key != "model"})
    except DecodeError as error:
        raise ProxyError(400, str(error), code="invalid_request", param=error.path) from error


async def count_tokens(
    ingress: Dialect, route: Route, payload: JsonObject, request: Request
) -> Count:
    """The upstream's own count of ``request`` when it has a counting endpoint, else an
    estimate (see the module docstring)."""
    upstream = route.upstream
    path = upstream.dialect.http.upstream_count_path
    key = _RESULT_KEYS.get(upstream.dialect.name)
    if not path or key is None:
        return Count(estimate_tokens(payload), ESTIMATED)
    model = route.model.model
    same = ingress.name == upstream.dialect.name
    try:
        body = (
            _same_body(payload, model)
            if same
            else _translated_body(upstream.dialect, request, model)
        )
    except LossyHistoryError:
        return Count(estimate_tokens(payload), ESTIMATED)
    try:
        response = await upstream.send(path.replace("{model}", model), body, accept_stream=False)
        answer = await read_answer(response, _COUNT_LIMIT)
    except Exception:  # unreachable, too large, anything: the estimate still answers
        return Count(estimate_tokens(payload), ESTIMATED)
    tokens = _tokens(answer, key) if response.status_code == 200 else None
    if tokens is None:
        return Count(estimate_tokens(payload), ESTIMATED)
    return Count(tokens, "exact" if same else "translated")


def _same_body(payload: JsonObject, model: str) -> bytes:
    if "model" in payload:
        payload = {**payload, "model": model}
    return COMPACT.encode(payload).encode()


def _translated_body(upstream: Dialect, request: Request, model: str) -> bytes:
    encoded = upstream.encode_request(replace(request, model=model), ReplayPolicy()).payload
    if upstream.name == "anthropic":
        body: JsonObject = {key: encoded[key] for key in _ANTHROPIC_FIELDS if key in encoded}
        body["model"] = model
    else:  # Gemini counts a whole generateContent request
        body = {"generateContentRequest": {**encoded, "model": f"models/{model}"}}
    return COMPACT.encode(body).encode()


def _tokens(answer: bytes, key: str) -> int | None:
    try:
        document = json.loads(answer)
    except ValueError:
        return None
    value = cast(JsonObject, document).get(key) if isinstance(document, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def estimate_tokens(payload: JsonValue) -> int:
    """About four characters of text per token, over every string in ``payload``."""
    return max(1, (_characters(payload) + 3) // 4)


def _characters(value: JsonValue) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_characters(item) for item in value)
    if isinstance(value, dict):
        return sum(_characters(item) for key, item in value.items() if key != "model")
    return 0


async def count_request(
    proxy: Proxy,
    ingress: Dialect,
    http_request: HttpRequest,
    record: AccessRecord,
    *,
    path_model: str | None = None,
) -> Count:
    """A counting request read, checked, routed and counted (any failure a :class:`ProxyError`)."""
    record.tenant = proxy.tenant(http_request)
    required_headers(ingress, http_request)
    body = await read_body(http_request, proxy.max_body_bytes)
    payload = parse_payload(body) if body.strip() else {}
    model = path_model if path_model is not None else payload.get("model")
    if not isinstance(model, str) or not model:
        raise ProxyError(400, "model: Field required", param="model")
    route = proxy.route(model, ingress)
    record.model, record.upstream = route.model.name, route.upstream.name
    counted = await count_tokens(ingress, route, payload, decoded(ingress, payload))
    record.translation = counted.label
    return counted
