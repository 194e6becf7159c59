"""Sealing: authentic values open; anything altered, cut, foreign or unknown is refused."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest

from interlock.codecs.agui import SealError, open_sealed, seal, unseal
from interlock.transcript import Opaque

KEY = b"k" * 32
OTHER_KEY = b"q" * 32
OPENAI = Opaque(provider="openai", format="openai.responses.encrypted_content", data="gAAAAB-enc")
OPENROUTER = Opaque(
    provider="openrouter",
    format="openrouter.reasoning_detail",
    data={"type": "reasoning.encrypted", "data": "x", "id": None},
)


@pytest.mark.parametrize("opaque", [OPENAI, OPENROUTER], ids=["string", "object"])
def test_round_trip(opaque: Opaque) -> None:
    assert unseal(seal(opaque, key=KEY, tenant="acme"), key=KEY, tenant="acme") == opaque


def test_attributes_are_authenticated_and_returned() -> None:
    value = seal(OPENAI, key=KEY, tenant="acme", attributes={"kind": "summary", "itemId": "rs_1"})
    opened = open_sealed(value, key=KEY, tenant="acme")
    assert opened.opaque == OPENAI
    assert opened.attributes == {"kind": "summary", "itemId": "rs_1"}


def test_tenant_is_bound_but_not_written() -> None:
    value = seal(OPENAI, key=KEY, tenant="acme-secret-tenant")
    assert "acme" not in base64.urlsafe_b64decode(value.split(".")[1] + "==").decode()


def _swap_payload(value: str, change: dict[str, object]) -> str:
    version, payload, tag = value.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body.update(change)
    raw = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return ".".join((version, base64.urlsafe_b64encode(raw).rstrip(b"=").decode(), tag))


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (lambda v: _swap_payload(v, {"d": "forged"}), "bad_tag"),
        (lambda v: _swap_payload(v, {"p": "google"}), "bad_tag"),
        (lambda v: v[:-4], "bad_tag"),
        (lambda v: v.rsplit(".", 1)[0], "malformed"),
        (lambda v: v + ".extra", "malformed"),
        (lambda v: "ilk2" + v[4:], "unsupported_version"),
        (lambda v: v[:-1] + "*", "malformed"),
        (lambda v: "", "malformed"),
    ],
    ids=[
        "data",
        "provider",
        "truncated-tag",
        "no-tag",
        "extra-field",
        "version",
        "bad-b64",
        "empty",
    ],
)
def test_tampering_is_refused(mutate: Callable[[str], str], code: str) -> None:
    value = seal(OPENAI, key=KEY, tenant="acme")
    with pytest.raises(SealError) as raised:
        unseal(mutate(value), key=KEY, tenant="acme")
    assert raised.value.code == code


def test_foreign_tenant_and_foreign_key_are_refused() -> None:
    value = seal(OPENAI, key=KEY, tenant="acme")
    with pytest.raises(SealError) as wrong_tenant:
        unseal(value, key=KEY, tenant="globex")
    with pytest.raises(SealError) as wrong_key:
        unseal(value, key=OTHER_KEY, tenant="acme")
    assert wrong_tenant.value.code == wrong_key.value.code == "bad_tag"


def test_tenant_binding_is_unambiguous() -> None:
    """Tenant "a" + payload must never collide with tenant "a." + a shifted payload."""
    value = seal(OPENAI, key=KEY, tenant="a")
    with pytest.raises(SealError):
        unseal(value, key=KEY, tenant="a\x00")


def test_short_keys_are_refused() -> None:
    with pytest.raises(SealError) as raised:
        seal(OPENAI, key=b"short", tenant="acme")
    assert raised.value.code == "bad_key"


def test_a_validly_tagged_non_object_payload_is_refused() -> None:
    from interlock.codecs.agui._seal import SEAL_VERSION, _b64encode, _tag

    payload = _b64encode(b"[1,2]")
    value = f"{SEAL_VERSION}.{payload}.{_b64encode(_tag(KEY, 'acme', payload))}"
    with pytest.raises(SealError) as raised:
        unseal(value, key=KEY, tenant="acme")
    assert raised.value.code == "malformed"


def test_located_errors_name_the_path() -> None:
    error = SealError("bad_tag", "altered").at("messages[3].encryptedValue")
    assert error.path == "messages[3].encryptedValue"
    assert str(error) == "messages[3].encryptedValue: altered"
