"""Which vendor issues (and alone accepts) an upstream's opaque reasoning.

Two dialects are spoken by several vendors whose opaque reasoning looks alike on the wire but
verifies only at the service that issued it:

* every OpenAI-compatible Responses service encrypts its reasoning (``encrypted_content``)
  with its own keys and refuses a blob another service issued: OpenAI's, xAI's and Azure's
  are not interchangeable though the wire format is one;
* every Anthropic-compatible Messages service (Anthropic, DeepSeek's and Moonshot's
  ``/anthropic`` endpoints, MiniMax's…) signs its thinking blocks (``signature``) and
  ``redacted_thinking`` ``data`` with its own keys and refuses another's.

An ``openai-responses`` or ``anthropic`` upstream therefore names its vendor (``vendor`` in
the config); its opaque reasoning is labelled with it when it is decoded and replayed only
to an upstream of the same vendor (:data:`VENDOR_PROTOCOLS`).

Without ``vendor``, it follows from the host of ``base_url`` (:func:`default_vendor`), the
domain itself or any subdomain of it: ``openai.com`` is ``openai``; ``x.ai`` is ``xai``;
Azure OpenAI hosts (``openai.azure.com``, ``cognitiveservices.azure.com``,
``services.ai.azure.com``) are ``azure``, a vendor of their own (Azure encrypts with its own
keys, not OpenAI's); ``anthropic.com`` is ``anthropic``; ``deepseek.com`` is ``deepseek``;
``moonshot.ai`` and ``moonshot.cn`` are ``moonshot``; ``minimax.io`` and ``minimaxi.com`` are
``minimax``. An ``emulator://`` upstream is its dialect's own vendor (``openai``,
``anthropic``); any other host is its own vendor, named by the host name (so two services the
gateway cannot tell apart never share reasoning: a switch between them drops it with a
warning rather than risking the service's refusal). Two upstreams that do accept each other's
reasoning (two deployments of one service) are given the same ``vendor``.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

from interlock.transcript import UNKNOWN_ISSUER

VENDOR_PROTOCOLS: Final[dict[str, str]] = {
    "openai-responses": "openai",
    "anthropic": "anthropic",
}
"""The protocols whose upstreams have a vendor → the vendor of the dialect's own service
(also the vendor of its ``emulator://`` upstreams)."""

DEFAULT_VENDOR: Final = VENDOR_PROTOCOLS["openai-responses"]
"""The vendor of the Responses dialect's own service."""

_HOST_VENDORS: Final[tuple[tuple[str, str], ...]] = (
    ("openai.com", "openai"),
    ("x.ai", "xai"),
    ("openai.azure.com", "azure"),
    ("cognitiveservices.azure.com", "azure"),
    ("services.ai.azure.com", "azure"),
    ("anthropic.com", "anthropic"),
    ("deepseek.com", "deepseek"),
    ("moonshot.ai", "moonshot"),
    ("moonshot.cn", "moonshot"),
    ("minimax.io", "minimax"),
    ("minimaxi.com", "minimax"),
)
"""Known hosts (the domain itself or any subdomain of it) → vendor."""

_VENDOR_NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


def default_vendor(base_url: str, protocol: str = "openai-responses") -> str:
    """The vendor of a ``protocol`` upstream at ``base_url`` without a configured one
    (module docstring)."""
    own = VENDOR_PROTOCOLS.get(protocol, DEFAULT_VENDOR)
    if base_url.startswith("emulator://"):
        return own
    host = (urlsplit(base_url).hostname or "").lower().rstrip(".")
    for domain, vendor in _HOST_VENDORS:
        if host == domain or host.endswith("." + domain):
            return vendor
    return host or own


def home_vendor(protocol: str) -> str:
    """The vendor of ``protocol``'s own service; ``""`` for a protocol without vendors."""
    return VENDOR_PROTOCOLS.get(protocol, "")


def check_vendor(value: object) -> str:
    """A configured ``vendor``, or a :class:`ValueError` saying what one looks like."""
    if value == UNKNOWN_ISSUER:
        raise ValueError(f"{value!r} is reserved (the issuer of client-held reasoning)")
    if not isinstance(value, str) or _VENDOR_NAME.fullmatch(value) is None:
        raise ValueError(
            f"expected a vendor name (lower-case letters, digits, '.', '-', '_'; at most 63 "
            f'characters), such as "openai", "xai", "anthropic" or "deepseek"; got {value!r}'
        )
    return value
