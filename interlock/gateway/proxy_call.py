"""One proxied request as the pipeline carries it (:class:`ProxyCall`) and its route."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from interlock.gateway.access_log import AccessRecord
from interlock.gateway.config import ModelRoute
from interlock.gateway.dialects import Dialect
from interlock.gateway.headers import (
    PASSED_HEADERS,
    PASSED_PREFIXES,
    TRANSLATION_HEADER,
    header_value,
    passed_headers,
)
from interlock.gateway.history_cache import ParsedBody
from interlock.gateway.translation_cache import Translation
from interlock.gateway.upstream import Upstream
from interlock.gateway.vault import Lookup
from interlock.transcript import JsonObject, Request, TranslationWarning


@dataclass(frozen=True, slots=True)
class Route:
    """A client-facing model name and the upstream that serves it."""

    model: ModelRoute
    upstream: Upstream


@dataclass(slots=True, kw_only=True)
class ProxyCall:
    """One proxied request, as far as it got."""

    ingress: Dialect
    route: Route
    tenant: str
    request: Request
    body: bytes
    payload: JsonObject
    passthrough: bool
    translation: str
    record: AccessRecord
    json_array: bool = False
    """Gemini ``streamGenerateContent`` without ``?alt=sse``: answer a streamed JSON array."""
    hide_usage: bool = False
    """The gateway asked a relayed Chat stream for usage the client did not ask for."""
    parsed: ParsedBody | None = None
    warnings: tuple[TranslationWarning, ...] = ()
    client_model: str = ""
    """The model name as the client wrote it."""
    source: Request | None = None
    """The decoded request before any upstream's vault or encoding (:meth:`Proxy.retarget`)."""
    source_body: bytes = b""
    translated: Translation | None = None
    """This request's history as translated for its upstream, to keep with its prefix."""
    vault_lookup: tuple[str, Lookup] | None = None
    """(upstream name, the vault lookup of this request's whole history for it), to keep
    with its prefix."""

    @property
    def upstream(self) -> Upstream:
        """The upstream serving this call."""
        return self.route.upstream

    def headers(self, response: httpx.Response | None = None) -> dict[str, str]:
        """The answer's headers: the bounded translation outcome, the upstream's passed ones."""
        headers = answer_headers(response) if response is not None else {}
        headers[TRANSLATION_HEADER] = header_value(self.translation, self.warnings)
        return headers


_PASSED_NAMES = frozenset(name.encode() for name in PASSED_HEADERS)
_PASSED_STARTS = tuple(prefix.encode() for prefix in PASSED_PREFIXES)


def answer_headers(response: httpx.Response) -> dict[str, str]:
    """``passed_headers(response.headers.multi_items())``: only the headers passed on are
    decoded (all of them when a header is not ASCII, where ``bytes.lower`` and ``str.lower``
    could differ)."""
    headers = response.headers
    if headers.encoding != "ascii":
        return passed_headers(headers.multi_items())
    passed: dict[str, str] = {}
    for name, value in headers.raw:
        lowered = name.lower()
        if lowered in _PASSED_NAMES or lowered.startswith(_PASSED_STARTS):
            passed[lowered.decode("ascii")] = value.decode("ascii")
    return passed
