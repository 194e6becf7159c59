"""Client API keys → tenant.

A key may come as ``Authorization: Bearer KEY`` (OpenAI SDKs, anthropic 2.x), in any
dialect's own key header (``x-goog-api-key`` for google-genai, ``x-api-key`` for Anthropic:
the registry's HTTP facts), ``?key=KEY`` (Gemini REST) or, for a browser's WebSocket (which cannot set
headers), as the offered subprotocol ``interlock.key.KEY`` (:data:`KEY_SUBPROTOCOL`; the
server then answers with the subprotocol ``interlock``, never echoing the key). Keys are compared by SHA-256 digest, so a
lookup's timing says nothing about how much of a guess was right.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence

from interlock.codecs.registry import DIALECT_NAMES, http_facts
from interlock.gateway.config import ApiKey

DEFAULT_TENANT = "default"
KEY_SUBPROTOCOL = "interlock.key."
"""Prefix of the WebSocket subprotocol that carries a key (``interlock.key.KEY``)."""
SUBPROTOCOL = "interlock"
"""The subprotocol the AG-UI WebSocket selects when a client offers it."""


class Unauthorized(Exception):
    """The request carries no key, or an unknown one."""


class KeyRing:
    """Resolves a request's key to its tenant; without configured keys everyone is ``default``."""

    def __init__(self, keys: Sequence[ApiKey]) -> None:
        self._tenants = {_digest(key.key): key.tenant for key in keys}

    @property
    def required(self) -> bool:
        """True when requests must carry a key."""
        return bool(self._tenants)

    def tenant(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str:
        """The caller's tenant; raises :class:`Unauthorized` when a key is required and bad."""
        if not self._tenants:
            return DEFAULT_TENANT
        key = presented_key(headers, query)
        if key is None:
            raise Unauthorized("missing API key")
        tenant = self._tenants.get(_digest(key))
        if tenant is None:
            raise Unauthorized("invalid API key")
        return tenant


def presented_key(headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
    """The key a client sent, from whichever carrier it used."""
    authorization = headers.get("authorization")
    if authorization and authorization[:7].lower() == "bearer ":
        return authorization[7:].strip() or None
    for header in _key_headers():
        value = headers.get(header)
        if value:
            return value
    return query.get("key") or _subprotocol_key(headers)


@functools.cache
def _key_headers() -> tuple[str, ...]:
    """Every dialect's own key header (``x-goog-api-key``, ``x-api-key``…), from the registry."""
    found = (http_facts(name).auth_header for name in DIALECT_NAMES)
    return tuple(dict.fromkeys(header for header in found if header != "authorization"))


def _subprotocol_key(headers: Mapping[str, str]) -> str | None:
    offered = headers.get("sec-websocket-protocol")
    if not offered:
        return None
    for value in offered.split(","):
        value = value.strip()
        if value.startswith(KEY_SUBPROTOCOL) and len(value) > len(KEY_SUBPROTOCOL):
            return value[len(KEY_SUBPROTOCOL) :]
    return None


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()
