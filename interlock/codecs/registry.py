"""The one list of wire dialects: name → codec package.

Everything that serves, proxies, emulates or checks a dialect reaches it from here:
:func:`wire_codec` (the codec with its options applied) and :func:`http_facts` (paths, key
header, model location, framing, opaque formats). Adding a dialect is adding its package
and one entry to :data:`DialectName` and :data:`_PACKAGES`; a consumer that still branches
per dialect does it with an exhaustive ``match`` the type checker holds to this list.
"""

from __future__ import annotations

import importlib
from typing import Any, Final, Literal, TypeAlias, get_args

from interlock.codecs._contract import HttpFacts, WireCodec

DialectName: TypeAlias = Literal["openai-responses", "openai-chat", "gemini", "anthropic"]
"""A wire dialect's protocol name (the ``protocol`` of an upstream in the config)."""

DIALECT_NAMES: Final[tuple[DialectName, ...]] = get_args(DialectName)

_PACKAGES: Final[dict[DialectName, str]] = {
    "openai-responses": "openai_responses",
    "openai-chat": "openai_chat",
    "gemini": "gemini",
    "anthropic": "anthropic",
}


def package(name: DialectName) -> str:
    """The codec package of ``name`` under ``interlock.codecs`` (also the vector folder)."""
    return _PACKAGES[name]


def wire_codec(name: DialectName, **options: Any) -> WireCodec:
    """The codec of ``name`` with its options applied (e.g. Chat's ``reasoning_dialect``)."""
    module = importlib.import_module(f"interlock.codecs.{_PACKAGES[name]}")
    codec: WireCodec = module.wire_codec(**options)
    return codec


def http_facts(name: DialectName) -> HttpFacts:
    """The HTTP facts of ``name`` (with default options)."""
    facts: HttpFacts = importlib.import_module(f"interlock.codecs.{_PACKAGES[name]}").HTTP
    return facts
