"""Which vendor issued the opaque reasoning a Responses or Anthropic client sends back.

A Responses client holds the ``encrypted_content`` of the answers it got, an Anthropic
client the ``signature`` of each thinking block and the ``data`` of each
``redacted_thinking`` block, and sends them back in its history; the wire does not say
which service issued a blob, and each vendor's service (:mod:`.vendors`) refuses another's.
The ingress decoder therefore labels a client's blob
:data:`~interlock.transcript.UNKNOWN_ISSUER`, which the dialect's encoder replays to its
service (the service judges it) — right whenever the blob came from that vendor, which is
always the case with one vendor of the dialect configured.

With two or more vendors of one dialect configured (:func:`vendor_dialects`), the gateway
records each blob it hands to a client of that dialect, as the answer passes through
(streamed or not, relayed or re-encoded, before the client can have it): a digest of the
blob → the vendor that issued it, per tenant, in the configured store
(:class:`ProvenanceIndex`; entries expire after
:data:`~interlock.gateway.stores._expiring.TTL_SECONDS`, the Responses API's own retention,
and are swept as they expire). A request's blobs are looked up (one store round trip) and a
blob recorded as another vendor's than the target's is labelled with that vendor: the
encoder then drops it (Responses: with its step's ids) with a warning, or refuses under
strict when the current turn's tool call needs it, and the body is re-encoded rather than
passed through. A blob recorded as the target's own, or not recorded at all (history from
before the gateway recorded, another gateway's, a store that lost it), stays unknown and
goes to the target as the client sent it.

The blob itself is never changed: a relayed answer stays byte-exact (wrapping the blob with
its vendor would have made the index unnecessary, but would have changed the bytes every
client sees and ended byte-exact passthrough for every vendor but one).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Final

from interlock.codecs._sse import SseEvent
from interlock.gateway.config import GatewayConfig
from interlock.gateway.proxy_call import ProxyCall
from interlock.gateway.stores._expiring import ExpiringIndex
from interlock.gateway.stores._store import store_key
from interlock.gateway.vendors import VENDOR_PROTOCOLS
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    OPENAI_ENCRYPTED_CONTENT,
    UNKNOWN_ISSUER,
    JsonValue,
    Message,
    Part,
    ReasoningPart,
    Request,
)

RESPONSES = "openai-responses"
ANTHROPIC = "anthropic"
_MARK = "encrypted_content"
_CLIENT_HELD = frozenset(
    {OPENAI_ENCRYPTED_CONTENT, ANTHROPIC_THINKING_SIGNATURE, ANTHROPIC_REDACTED_THINKING}
)
"""The opaque formats a client holds and sends back (the others stay in the vault)."""
_BLOB_FIELDS: Final = {"thinking": "signature", "redacted_thinking": "data"}
"""Anthropic: the field of each block type holding its blob."""


def digest(blob: str) -> str:
    """The key of one blob in the index (its SHA-256, hex, 32 digits)."""
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def vendor_dialects(config: GatewayConfig) -> frozenset[str]:
    """The dialects whose upstreams in ``config`` have two or more vendors (only there is a
    client's blob of uncertain issuer)."""
    vendors: dict[str, set[str]] = {}
    for upstream in config.upstreams:
        if upstream.protocol in VENDOR_PROTOCOLS:
            vendors.setdefault(upstream.protocol, set()).add(upstream.issuer)
    return frozenset(protocol for protocol, issuers in vendors.items() if len(issuers) > 1)


def vendors_to_tell_apart(config: GatewayConfig) -> bool:
    """True when some dialect's upstreams in ``config`` have two or more vendors."""
    return bool(vendor_dialects(config))


class ProvenanceIndex(ExpiringIndex):
    """Blob digest → issuing vendor, per tenant, over one backend (module docstring)."""

    namespace = "provenance"
    member = "issuer"
    dialects: frozenset[str] = frozenset(VENDOR_PROTOCOLS)
    """The dialects whose blobs are recorded and looked up (set per gateway to
    :func:`vendor_dialects` of its config)."""

    async def record(self, tenant: str, issuer: str, blobs: Iterable[str]) -> None:
        """Note that ``issuer`` issued ``blobs`` (renewing their expiry)."""
        entry = self.entry(issuer)
        items = {store_key("provenance", tenant, digest(blob)): entry for blob in blobs}
        if not items:
            return
        await self.backend.set_many(items)
        await self.written(tenant, len(items))

    async def find(self, tenant: str, blobs: Sequence[str]) -> dict[str, str]:
        """The recorded, unexpired issuer of each of ``blobs`` (unrecorded ones left out)."""
        keys = [store_key("provenance", tenant, digest(blob)) for blob in blobs]
        texts = await self.backend.get_many(keys) if keys else []
        found: dict[str, str] = {}
        for blob, text in zip(blobs, texts, strict=True):
            issuer = self.value(text)
            if issuer is not None:
                found[blob] = issuer
        return found

    def tells_apart(self, call: ProxyCall) -> bool:
        """True when ``call`` is a client of its upstream's dialect and that dialect's
        vendors are told apart: the blobs of its history are looked up before encoding and
        those of its answer recorded as the answer passes."""
        name = call.ingress.name
        return name == call.upstream.dialect.name and name in self.dialects


# ---------------------------------------------------------------- blobs on the wire


def answer_blobs(body: bytes, dialect: str = RESPONSES) -> list[str]:
    """The opaque reasoning of a non-streamed answer in ``dialect`` (read only when the
    body mentions it)."""
    if dialect == ANTHROPIC:
        if b'"signature"' not in body and b"redacted_thinking" not in body:
            return []
    elif _MARK.encode() not in body:
        return []
    try:
        document: JsonValue = json.loads(body)
    except ValueError:
        return []
    if not isinstance(document, dict):
        return []
    if dialect == ANTHROPIC:
        return _content_blobs(document.get("content"))
    return _output_blobs(document.get("output"))


def event_blobs(events: Sequence[SseEvent]) -> list[str]:
    """The encrypted reasoning of Responses stream events (finished output items and the
    final response; events that do not mention it are not parsed)."""
    blobs: list[str] = []
    for event in events:
        if _MARK not in event.data:
            continue
        try:
            data: JsonValue = json.loads(event.data)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        blobs.extend(_output_blobs([data.get("item")]))
        response = data.get("response")
        if isinstance(response, dict):
            blobs.extend(_output_blobs(response.get("output")))
    return blobs


class StreamBlobs:
    """The opaque reasoning of one answer stream in ``dialect``, as its events arrive.

    Anthropic streams a thinking block's signature as ``signature_delta`` pieces (one, in
    practice): a signature is whole, and returned, at its block's ``content_block_stop``;
    a ``redacted_thinking`` block arrives whole at its start."""

    __slots__ = ("_dialect", "_signatures")

    def __init__(self, dialect: str) -> None:
        self._dialect = dialect
        self._signatures: dict[int, str] = {}

    def events(self, events: Sequence[SseEvent]) -> list[str]:
        """The blobs completed by ``events``."""
        if self._dialect != ANTHROPIC:
            return event_blobs(events)
        blobs: list[str] = []
        for event in events:
            if '"content_block_' not in event.data or not (
                self._signatures or "signature" in event.data or "redacted" in event.data
            ):
                continue
            try:
                data: JsonValue = json.loads(event.data)
            except ValueError:
                continue
            if isinstance(data, dict):
                blobs.extend(self._event(data))
        return blobs

    def _event(self, data: dict[str, JsonValue]) -> list[str]:
        index, kind = data.get("index"), data.get("type")
        if not isinstance(index, int):
            return []
        if kind == "content_block_start":
            return _content_blobs([data.get("content_block")])
        delta = data.get("delta")
        if kind == "content_block_delta" and isinstance(delta, dict):
            piece = delta.get("signature")
            if delta.get("type") == "signature_delta" and isinstance(piece, str):
                self._signatures[index] = self._signatures.get(index, "") + piece
            return []
        signature = self._signatures.pop(index, "") if kind == "content_block_stop" else ""
        return [signature] if signature else []


def _output_blobs(items: JsonValue) -> list[str]:
    if not isinstance(items, list):
        return []
    blobs: list[str] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "reasoning":
            blob = item.get(_MARK)
            if isinstance(blob, str):
                blobs.append(blob)
    return blobs


def _content_blobs(blocks: JsonValue) -> list[str]:
    """The signatures of thinking blocks and the data of redacted ones among ``blocks``."""
    if not isinstance(blocks, list):
        return []
    blobs: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        field = _BLOB_FIELDS.get(str(block.get("type")))
        blob = block.get(field) if field is not None else None
        if isinstance(blob, str) and blob:
            blobs.append(blob)
    return blobs


# ---------------------------------------------------------------- a client's request


def unknown_blobs(request: Request) -> list[str]:
    """The client-held opaque reasoning of unrecorded issuer in ``request``'s history, in
    order."""
    return [
        blob
        for message in request.messages
        if message.role == "assistant"
        for part in message.parts
        if isinstance(part, ReasoningPart) and (blob := _unknown(part)) is not None
    ]


def _unknown(part: ReasoningPart) -> str | None:
    """The blob of ``part`` when it is client-held reasoning of unrecorded issuer."""
    opaque = part.opaque
    if opaque is None or opaque.provider != UNKNOWN_ISSUER:
        return None
    data = opaque.data
    return data if opaque.format in _CLIENT_HELD and isinstance(data, str) else None


def relabelled(request: Request, issuers: Mapping[str, str], target: str) -> Request | None:
    """``request`` with each blob recorded as another vendor's than ``target`` labelled
    with that vendor; ``None`` when there is none (the request goes as it is)."""
    foreign = {blob: issuer for blob, issuer in issuers.items() if issuer != target}
    if not foreign:
        return None
    return replace(request, messages=tuple(_message(m, foreign) for m in request.messages))


def _message(message: Message, foreign: Mapping[str, str]) -> Message:
    if message.role != "assistant":
        return message
    parts: list[Part] = []
    changed = False
    for part in message.parts:
        blob = _unknown(part) if isinstance(part, ReasoningPart) else None
        issuer = foreign.get(blob) if blob is not None else None
        if issuer is not None and isinstance(part, ReasoningPart) and part.opaque is not None:
            part = replace(part, opaque=replace(part.opaque, provider=issuer))
            changed = True
        parts.append(part)
    return replace(message, parts=tuple(parts)) if changed else message


async def resolve(
    index: ProvenanceIndex, tenant: str, request: Request, target: str
) -> Request | None:
    """``request`` with its blobs recorded as another vendor's than ``target`` labelled so
    (one store round trip when it has blobs); ``None`` when none is."""
    blobs = unknown_blobs(request)
    if not blobs:
        return None
    return relabelled(request, await index.find(tenant, blobs), target)
