"""The codec registry: every dialect behind the contract, its HTTP facts, and its consumers
covering exactly the registry's names (a dialect cannot be half-added)."""

from __future__ import annotations

import pytest

from interlock.codecs._contract import WireCodec
from interlock.codecs.registry import DIALECT_NAMES, DialectName, http_facts, package, wire_codec
from interlock.conformance._codecs import PROVIDER_TARGETS
from interlock.conformance._same import SDK_CHECKS
from interlock.conformance._vectors import DIALECTS
from interlock.emulators import create_emulator
from interlock.gateway.config import PROTOCOLS
from interlock.transcript import OPAQUE_FORMATS, Message, ReplayPolicy, Request, TextPart


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_each_dialect_round_trips_a_request_through_the_contract(name: DialectName) -> None:
    codec: WireCodec = wire_codec(name)
    assert codec.name == name
    request = Request(model="m", messages=(Message(role="user", parts=(TextPart(text="hi"),)),))
    encoded = codec.encode_request(request, ReplayPolicy())
    again = codec.decode_request(encoded.payload)
    assert again.messages[-1].text == "hi"
    assert codec.encode_error(404, "gone")
    assert codec.stream_decoder().finish()  # a stream that never finished failed


@pytest.mark.parametrize("name", DIALECT_NAMES)
def test_http_facts_are_complete(name: DialectName) -> None:
    facts = http_facts(name)
    assert facts.ingress and facts.upstream_path and facts.auth_header and facts.provider
    assert facts.opaque_formats <= OPAQUE_FORMATS
    assert facts.error_shape


def test_every_consumer_covers_exactly_the_registry() -> None:
    packages = [package(name) for name in DIALECT_NAMES]
    assert list(PROTOCOLS) == list(DIALECT_NAMES)
    assert list(DIALECTS) == [*packages, "agui"]
    assert sorted(PROVIDER_TARGETS) == sorted(packages)
    assert sorted(SDK_CHECKS) == sorted(packages)
    for name in DIALECT_NAMES:
        assert create_emulator(name).routes()


def test_ingress_paths_never_collide() -> None:
    paths = [path.path for name in DIALECT_NAMES for path in http_facts(name).ingress]
    assert len(paths) == len(set(paths))
