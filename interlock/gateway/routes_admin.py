"""The admin API: ``GET /admin/usage``, behind the admin key (``[admin] key_env``).

The admin key is presented like a client key (``Authorization: Bearer``, ``x-api-key``,
``x-goog-api-key``); it is never a client key, and client keys never open the admin API.
No key: 401. A wrong key, or no admin key configured: 403. Errors are OpenAI-shaped
(``{"error": {message, type, param, code}}``), like the other operational endpoints.
"""

from __future__ import annotations

import hashlib
import hmac

from starlette.requests import Request as HttpRequest
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from interlock.gateway.auth import presented_key
from interlock.gateway.dialects import Dialect
from interlock.gateway.operations import ProxyOperations
from interlock.gateway.proxy import json_response
from interlock.gateway.usage import totals
from interlock.transcript import JsonValue


def routes(operations: ProxyOperations, admin_key: str | None, openai: Dialect) -> list[BaseRoute]:
    """``GET /admin/usage``: the store's usage totals (``?tenant=``, ``?model=`` filter)."""
    expected = hashlib.sha256(admin_key.encode()).digest() if admin_key else None

    def refused(http_request: HttpRequest) -> Response | None:
        key = presented_key(http_request.headers, {})
        if key is None:
            message = "missing admin key (Authorization: Bearer <admin key>)"
            return json_response(openai.error(401, message, code="missing_admin_key"), 401)
        if expected is None:
            message = "the admin API is disabled: set [admin] key_env in the config"
            return json_response(openai.error(403, message, code="admin_disabled"), 403)
        if not hmac.compare_digest(hashlib.sha256(key.encode()).digest(), expected):
            return json_response(
                openai.error(403, "invalid admin key", code="invalid_admin_key"), 403
            )
        return None

    async def usage(http_request: HttpRequest) -> Response:
        refusal = refused(http_request)
        if refusal is not None:
            return refusal
        unknown = sorted(set(http_request.query_params) - {"tenant", "model"})
        if unknown:
            message = f"unknown query parameter {unknown[0]!r} (known: tenant, model)"
            body = openai.error(400, message, code="invalid_request", param=unknown[0])
            return json_response(body, 400)
        ledger = operations.ledger
        rows = (
            []
            if ledger is None
            else await ledger.rows(
                tenant=http_request.query_params.get("tenant"),
                model=http_request.query_params.get("model"),
            )
        )
        listed: list[JsonValue] = [row.to_json() for row in rows]
        return json_response({"usage": listed, "totals": totals(rows)}, 200)

    return [Route("/admin/usage", usage, methods=["GET"])]
