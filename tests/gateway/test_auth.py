"""Client keys in every dialect's own carrier (the registry's key headers)."""

from __future__ import annotations

import pytest

from interlock.gateway.auth import KeyRing, Unauthorized
from interlock.gateway.config import ApiKey

RING = KeyRing([ApiKey(key="sk-good", tenant="acme")])


@pytest.mark.parametrize(
    "headers",
    [
        {"authorization": "Bearer sk-good"},
        {"x-api-key": "sk-good"},
        {"x-goog-api-key": "sk-good"},
    ],
)
def test_each_dialect_carrier_names_the_tenant(headers: dict[str, str]) -> None:
    assert RING.tenant(headers, {}) == "acme"


def test_a_wrong_anthropic_key_is_refused() -> None:
    with pytest.raises(Unauthorized):
        RING.tenant({"x-api-key": "sk-bad"}, {})
