"""Which vendor issues (and alone accepts) an upstream's opaque reasoning.

Every OpenAI-compatible Responses service encrypts its reasoning (``encrypted_content``)
with its own keys and refuses a blob another service issued: OpenAI's, xAI's and Azure's
are not interchangeable though the wire format is one. An ``openai-responses`` upstream
therefore names its vendor (``vendor`` in the config); encrypted reasoning is labelled with
it when it is decoded and replayed only to an upstream of the same vendor.

Without ``vendor``, it follows from the host of ``base_url`` (:func:`default_vendor`):
``api.openai.com`` (any ``*.openai.com``) is ``openai``; ``api.x.ai`` (any ``*.x.ai``) is
``xai``; Azure OpenAI hosts (``*.openai.azure.com``, ``*.cognitiveservices.azure.com``,
``*.services.ai.azure.com``) are ``azure``, a vendor of their own (Azure encrypts with its
own keys, not OpenAI's); an ``emulator://`` upstream is ``openai``; any other host is its
own vendor, named by the host name (so two services the gateway cannot tell apart never
share reasoning: a switch between them drops it with a warning rather than risking the
service's refusal). Two upstreams that do accept each other's reasoning (two deployments of
one service) are given the same ``vendor``.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

from interlock.transcript import UNKNOWN_ISSUER

DEFAULT_VENDOR: Final = "openai"
"""The vendor of the Responses dialect's own service (and of ``emulator://`` upstreams)."""

_HOST_VENDORS: Final[tuple[tuple[str, str], ...]] = (
    ("openai.com", "openai"),
    ("x.ai", "xai"),
    ("openai.azure.com", "azure"),
    ("cognitiveservices.azure.com", "azure"),
    ("services.ai.azure.com", "azure"),
)
"""Known hosts (the domain itself or any subdomain of it) → vendor."""

_VENDOR_NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


def default_vendor(base_url: str) -> str:
    """The vendor of an upstream at ``base_url`` without a configured one (module docstring)."""
    if base_url.startswith("emulator://"):
        return DEFAULT_VENDOR
    host = (urlsplit(base_url).hostname or "").lower().rstrip(".")
    for domain, vendor in _HOST_VENDORS:
        if host == domain or host.endswith("." + domain):
            return vendor
    return host or DEFAULT_VENDOR


def check_vendor(value: object) -> str:
    """A configured ``vendor``, or a :class:`ValueError` saying what one looks like."""
    if value == UNKNOWN_ISSUER:
        raise ValueError(f"{value!r} is reserved (the issuer of client-held reasoning)")
    if not isinstance(value, str) or _VENDOR_NAME.fullmatch(value) is None:
        raise ValueError(
            f"expected a vendor name (lower-case letters, digits, '.', '-', '_'; at most 63 "
            f'characters), such as "openai" or "xai"; got {value!r}'
        )
    return value
