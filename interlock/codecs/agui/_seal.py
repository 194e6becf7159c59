"""Sealing opaque provider payloads before they leave for a browser.

A sealed value is ``ilk1.<payload>.<tag>``: ``payload`` is base64url of canonical JSON
``{"p": provider, "f": format, "d": data, "a"?: attributes}`` and ``tag`` is base64url of
HMAC-SHA256 under the server's seal key over a domain-separated message binding the
version, the tenant and the payload. The tenant is bound by the tag but never written
into the value. Sealing gives integrity, not confidentiality: the payloads it carries
(encrypted reasoning, thought signatures) are already opaque to the browser; what the
seal adds is that a value comes back exactly as issued, to the tenant it was issued to.
A tampered, truncated, foreign-tenant or foreign-key value raises :class:`SealError`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, cast

from interlock.transcript import JsonValue, Opaque, ReasoningPart

SEAL_VERSION = "ilk1"
MIN_KEY_BYTES = 16
_DOMAIN = b"interlock.agui.seal"

SealErrorCode: TypeAlias = Literal["malformed", "unsupported_version", "bad_tag", "bad_key"]


class SealError(ValueError):
    """A sealed value cannot be trusted; ``code`` says why (the binding maps it to RUN_ERROR).

    ``bad_tag`` covers tampering, truncation inside the payload, a foreign tenant and a
    foreign key alike: an attacker learns nothing from which one it was.
    """

    def __init__(self, code: SealErrorCode, message: str, *, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.code: SealErrorCode = code
        self.path = path
        self.detail = message

    def at(self, path: str) -> SealError:
        """The same error, located at ``path`` in the input (e.g. ``messages[3].encryptedValue``)."""
        return SealError(self.code, self.detail, path=path)


@dataclass(frozen=True, slots=True, kw_only=True)
class Unsealed:
    """An unsealed opaque payload plus the authenticated attributes sealed with it."""

    opaque: Opaque
    attributes: Mapping[str, str] = field(default_factory=dict[str, str])


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    padded = text + "=" * (-len(text) % 4)
    return base64.b64decode(padded, altchars=b"-_", validate=True)


def _tag(key: bytes, tenant: str, payload: str) -> bytes:
    tenant_bytes = tenant.encode("utf-8")
    message = b"\x00".join(
        (
            _DOMAIN,
            SEAL_VERSION.encode("ascii"),
            len(tenant_bytes).to_bytes(4, "big") + tenant_bytes,
            payload.encode("ascii"),
        )
    )
    return hmac.new(key, message, hashlib.sha256).digest()


def _check_key(key: bytes) -> None:
    if len(key) < MIN_KEY_BYTES:
        raise SealError("bad_key", f"the seal key must be at least {MIN_KEY_BYTES} bytes")


def seal(
    opaque: Opaque,
    *,
    key: bytes,
    tenant: str,
    attributes: Mapping[str, str] | None = None,
) -> str:
    """Seal ``opaque`` for ``tenant`` under ``key``; the value is safe to hand to a browser.

    ``attributes`` (small string facts such as the reasoning kind or provider item id)
    travel inside the seal and come back authenticated through :func:`open_sealed`.
    """
    _check_key(key)
    body: dict[str, JsonValue] = {"p": opaque.provider, "f": opaque.format, "d": opaque.data}
    if attributes:
        body["a"] = dict(attributes)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    payload = _b64encode(text.encode("utf-8"))
    return f"{SEAL_VERSION}.{payload}.{_b64encode(_tag(key, tenant, payload))}"


def seal_outbound(
    opaque: Opaque,
    *,
    key: bytes | None,
    tenant: str,
    attributes: Mapping[str, str] | None = None,
) -> str:
    """:func:`seal` for a payload about to leave; without a configured key it is refused."""
    if key is None:
        raise SealError("bad_key", "an opaque payload needs a seal key to leave the gateway")
    return seal(opaque, key=key, tenant=tenant, attributes=attributes)


def reasoning_attributes(part: ReasoningPart) -> dict[str, str]:
    """What a sealed reasoning value carries besides its payload: its kind and item id."""
    attributes = {"kind": part.reasoning_kind}
    if part.item_id is not None:
        attributes["itemId"] = part.item_id
    return attributes


def unseal(value: str, *, key: bytes, tenant: str) -> Opaque:
    """The opaque payload inside ``value``; raises :class:`SealError` unless authentic."""
    return open_sealed(value, key=key, tenant=tenant).opaque


def open_sealed(value: str, *, key: bytes, tenant: str) -> Unsealed:
    """The opaque payload and attributes inside ``value``; raises :class:`SealError`.

    The tag is checked (in constant time) before the payload is parsed, so nothing
    unauthenticated is ever interpreted.
    """
    _check_key(key)
    pieces = value.split(".")
    if len(pieces) != 3:
        raise SealError("malformed", "a sealed value has three dot-separated fields")
    version, payload, tag_text = pieces
    if version != SEAL_VERSION:
        raise SealError("unsupported_version", f"unsupported seal version {version[:16]!r}")
    try:
        tag = _b64decode(tag_text)
    except (binascii.Error, ValueError) as error:
        raise SealError("malformed", "the seal tag is not base64url") from error
    if not hmac.compare_digest(tag, _tag(key, tenant, payload)):
        raise SealError("bad_tag", "the sealed value was not issued to this tenant or was altered")
    return _parse_payload(payload)


def _parse_payload(payload: str) -> Unsealed:
    try:
        body = json.loads(_b64decode(payload).decode("utf-8"))
    except (binascii.Error, ValueError) as error:
        raise SealError("malformed", "the sealed payload is not valid JSON") from error
    if not isinstance(body, dict):
        raise SealError("malformed", "the sealed payload is not an object")
    fields = cast(dict[str, JsonValue], body)
    provider, format_, attributes = fields.get("p"), fields.get("f"), fields.get("a", {})
    if not isinstance(provider, str) or not isinstance(format_, str) or "d" not in fields:
        raise SealError("malformed", "the sealed payload lacks provider, format or data")
    if not isinstance(attributes, dict) or not all(
        isinstance(item, str) for item in attributes.values()
    ):
        raise SealError("malformed", "the sealed attributes are not strings")
    return Unsealed(
        opaque=Opaque(provider=provider, format=format_, data=fields["d"]),
        attributes=cast(dict[str, str], attributes),
    )
