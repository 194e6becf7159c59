"""Request bodies in, JSON answers out: the proxy's error type and its HTTP edges.

:class:`ProxyError` is every failure the gateway answers itself (in the ingress dialect's
error shape); :func:`read_body` reads a body under a limit, :func:`parse_payload` parses
it strictly, :func:`json_response` writes a compact JSON answer with the bounded
translation header.
"""

from __future__ import annotations

from typing import cast

from starlette.requests import ClientDisconnect
from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse

from interlock.gateway import strict_json
from interlock.gateway.dialects import Dialect
from interlock.gateway.headers import TRANSLATION_HEADER, header_value
from interlock.gateway.model_field import compact_json
from interlock.transcript import JsonObject


class ProxyError(Exception):
    """A failure answered in the ingress dialect's error shape with ``status``.

    ``headers`` go on the error answer too (``retry-after``, say).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.headers = headers or {}


async def read_body(http_request: HttpRequest, limit: int) -> bytes:
    """The request body, refusing (413) past ``limit`` bytes without reading it all.

    A body that arrived as one piece is returned as that piece, not copied. The client
    leaving first raises Starlette's ``ClientDisconnect``, as ``Request.stream()`` does;
    nothing reads the body through the ``Request`` afterwards.
    """
    declared = http_request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ProxyError(413, f"request body exceeds the limit of {limit} bytes", code="too_large")
    receive = http_request.receive
    chunks: list[bytes] = []
    size = 0
    while True:  # Starlette's ``Request.stream()``, without its async generator
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        if message["type"] != "http.request":
            continue
        chunk: bytes = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise ProxyError(
                    413, f"request body exceeds the limit of {limit} bytes", code="too_large"
                )
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    if len(chunks) == 1:
        return chunks[0]
    return b"".join(chunks)


def parse_payload(body: bytes) -> JsonObject:
    """The JSON object in ``body`` or a 400 (strictly: see :mod:`.strict_json`)."""
    try:
        payload = strict_json.loads(body)
    except strict_json.StrictJsonError as error:
        raise ProxyError(400, str(error), code="invalid_json", param=error.path or None) from error
    except (ValueError, UnicodeDecodeError) as error:
        raise ProxyError(
            400, f"malformed JSON in request body: {error}", code="invalid_json"
        ) from error
    if not isinstance(payload, dict):
        raise ProxyError(400, "request body must be a JSON object", code="invalid_json")
    return cast(JsonObject, payload)


def required_headers(ingress: Dialect, http_request: HttpRequest) -> None:
    """A 400 in the dialect's words when a header its clients must send is missing."""
    for header, missing in ingress.http.required_headers:
        if not http_request.headers.get(header):
            raise ProxyError(400, missing, code="missing_header", param=header)


def required_fields(ingress: Dialect, payload: JsonObject) -> None:
    """A 400 in the service's words when the client left out (or nulled) a body field its
    dialect requires (Anthropic's ``max_tokens``), whichever upstream the request would go
    to: the answer never depends on routing."""
    for name, missing in ingress.http.required_fields:
        if payload.get(name) is None:
            raise ProxyError(400, missing)


def json_response(
    payload: JsonObject,
    status: int,
    translation: str | None = None,
    *,
    headers: dict[str, str] | None = None,
) -> HttpResponse:
    """A compact JSON response; ``translation`` (bounded) or ``headers`` when given."""
    if translation is not None:
        headers = {**(headers or {}), TRANSLATION_HEADER: header_value(translation)}
    body = compact_json(payload)
    return HttpResponse(body, status_code=status, media_type="application/json", headers=headers)
