"""A known history prefix is not translated again for another dialect's upstream.

The history cache (:mod:`.history_cache`) saves decoding a resent prefix; across dialects
the proxy then still restored (vault) and encoded the whole history for the upstream on
every request. A kept prefix that was sent across dialects also keeps its translation:
the prefix's messages as the vault restored them, the vault keys and the entries found
for them, and the upstream history items its encoding produced. A request continuing it
has only its new messages restored and encoded; the upstream body is the new messages'
encoding with the kept items in front of their items.

Correctness first, so a spliced body is the body the full path would send:

* the prefix text matched byte for byte (the history cache), so the canonical prefix is
  the same;
* the vault is asked about every key of the whole history, as on the full path, and the
  stored texts read for the prefix's keys must equal those read when the prefix was
  translated (a new, changed or removed entry misses; the prefix's backend keys are kept,
  so they are not built again, and unchanged texts are not parsed again). The prefix's
  keys are not read again when the vault's count of writes shows none since but this
  process's own, of other keys (:class:`.vault.ReasoningVault`): then they are unchanged;
* the same upstream, replay policy and everything of the request but its messages (model,
  tools, options, service-state fields, kept wire fields: :attr:`Translation.key`), so
  the encoder is given the same context;
* the upstream's encoding of the prefix cannot change because of what follows it, and
  the new messages encode alone as after the prefix (the rules per dialect:
  :mod:`.splice_rules`), and neither the kept translation nor the new messages'
  encoding carries a warning (warnings name absolute message positions); a member taken
  from the leading system messages (Gemini ``systemInstruction``, Anthropic ``system``) is
  encoded with the new messages and must equal the kept translation's, any other member
  taken from the first messages (Responses ``instructions``) is not kept; an encoder that
  checks the whole body (Anthropic) is given the new messages after a bridge message
  standing for the prefix's last one, whose item must come out exactly as the rules say
  and is dropped;
* the bytes are ``compact_json``'s for the whole value (:mod:`.json_pieces`). A full-path
  body past ``server.offload_bytes`` is written by the standard library instead, which may
  spell a number differently (``1e-05`` for ``0.00001``): the same JSON value.

Anything else takes the full path, which answers with its own result or error.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, cast

from interlock.gateway.dialects import Dialect
from interlock.gateway.evolve import evolve
from interlock.gateway.json_pieces import Written, items_json, with_array
from interlock.gateway.model_field import compact_json
from interlock.gateway.splice_rules import (
    BRIDGE,
    LEAD_MEMBERS,
    NO_HEAD_MEMBERS,
    SPLICES,
    lead,
    splices_alone,
    without_bridge,
)
from interlock.gateway.upstream import Upstream
from interlock.gateway.vault import (
    Lookup,
    ReasoningVault,
    restore_messages,
    vault_misses,
    wanted_keys,
)
from interlock.transcript import (
    Encoded,
    JsonValue,
    LossyHistoryError,
    Message,
    ReplayPolicy,
    Request,
    TranslationWarning,
)

if TYPE_CHECKING:
    from interlock.gateway.history_cache import Entry as HeldPrefix
    from interlock.gateway.history_cache import HistoryCache, ParsedBody

TranslationKey = tuple[str, ReplayPolicy, Request]
"""(upstream name, replay policy, the request without its messages)."""


@dataclass(frozen=True, slots=True)
class Translation:
    """What translating one history prefix for one upstream produced."""

    key: TranslationKey
    restored: tuple[Message, ...]
    """The prefix's messages after the vault put back what it holds for them."""
    lookup: Lookup
    """The vault lookup of the prefix's keys when it was translated."""
    items: memoryview
    """The upstream history items of the prefix as compact JSON, without the array's
    brackets (:func:`.json_pieces.items_json`; a view into the body that carried them):
    written as they are, never encoded again."""
    misses: tuple[TranslationWarning, ...]
    """The prefix's vault-miss warnings (:func:`.vault.vault_misses` of ``restored``):
    the same in every history continuing it with no message opening a turn."""
    lead: bytes | None = None
    """The compact JSON of the member the upstream body takes from the leading system
    messages (:data:`.splice_rules.LEAD_MEMBERS`), ``None`` without one."""

    @property
    def held(self) -> int:
        """Bytes this translation keeps alive: the whole body ``items`` is a view into."""
        return memoryview(self.items.obj).nbytes


def key_of(request: Request, upstream_name: str, policy: ReplayPolicy) -> TranslationKey:
    """The key a translation of ``request``'s history is kept and found under: the
    upstream, the policy and the request without its messages (``stream`` aside: it
    changes no history item)."""
    return (upstream_name, policy, evolve(request, messages=(), stream=False))


def _history_items(dialect: str, encoded: Encoded) -> list[JsonValue] | None:
    """The history items of an encoding that can be kept or spliced, else ``None``."""
    items = encoded.payload.get(SPLICES[dialect])
    if encoded.warnings or not isinstance(items, list):
        return None
    if any(member in encoded.payload for member in NO_HEAD_MEMBERS.get(dialect, ())):
        return None
    return items


def _lead_json(dialect: str, encoded: Encoded) -> bytes | None:
    member = LEAD_MEMBERS.get(dialect)
    value = encoded.payload.get(member) if member is not None else None
    return compact_json(value) if value is not None else None


def encode_alone(
    dialect: Dialect,
    request: Request,
    policy: ReplayPolicy,
    prefix: Sequence[Message],
    new: tuple[Message, ...],
) -> Encoded | None:
    """``new`` encoded for ``dialect`` on its own, after the prefix's leading system
    messages where the dialect takes a member from them and the dialect's bridge
    (:func:`.splice_rules.lead`), the bridge's item taken out again; ``None`` when the
    encoder refuses (the full path then answers, with the whole history's locations) or
    the bridge's item did not come out as it must."""
    name = dialect.name
    messages = lead(name, prefix) + new
    try:
        encoded = dialect.encode_request(replace(request, messages=messages), policy)
    except LossyHistoryError:
        return None
    if name not in BRIDGE:
        return encoded
    member = SPLICES[name]
    items = encoded.payload.get(member)
    rest = without_bridge(name, cast(list[JsonValue], items)) if isinstance(items, list) else None
    if rest is None:
        return None
    return Encoded(payload={**encoded.payload, member: rest}, warnings=encoded.warnings)


def bridged_check(
    dialect: Dialect, request: Request, policy: ReplayPolicy, entry: HeldPrefix
) -> bool:
    """True when ``request`` (only the new messages of a history continuing ``entry``'s
    checked prefix) passes the replay check of an encoder that checks the whole body
    (:data:`.splice_rules.BRIDGE`), standing for the whole history's check: the splice
    rules hold, the new messages encode after the bridge, and a prefix that calls tools
    has tools declared (the one rule the prefix was checked under other members for:
    tools, thinking and the other settings are this request's, and every other rule
    that reads them is judged on the new messages or the whole body alike)."""
    held = entry.messages or ()
    last = held[-1] if held else None
    if not splices_alone(dialect.name, request.messages, entry.call_ids, last):
        return False
    alone = encode_alone(dialect, request, policy, (), request.messages)
    return alone is not None and (bool(alone.payload.get("tools")) or not entry.call_ids)


def kept(
    key: TranslationKey,
    dialect: str,
    encoded: Encoded,
    restored: tuple[Message, ...],
    lookup: Lookup,
    misses: tuple[TranslationWarning, ...],
    *,
    pieces: bool = False,
) -> Translation | None:
    """The translation to keep for a whole request's history, if it can be reused
    (``pieces``: a large one, written item by item, see :func:`.json_pieces.items_json`)."""
    items = _history_items(dialect, encoded) if dialect in SPLICES else None
    written = items_json(items, pieces=pieces) if items is not None else None
    if written is None:
        return None
    lead_json = _lead_json(dialect, encoded)
    return Translation(key, restored, lookup, memoryview(written), misses, lead_json)


def prefix_found(translation: Translation, lookup: Lookup) -> bool:
    """True when ``lookup`` (the prefix's keys first) read for the prefix exactly the
    texts the vault held when it was translated."""
    known = translation.lookup.texts
    return lookup.texts[: len(known)] == known


def spliced_body(translation: Translation, dialect: str, encoded: Encoded) -> Written | None:
    """The whole request's upstream body: ``encoded`` (the new messages alone) with the
    kept items written in front of its items; ``None`` when it cannot stand for the full
    encoding."""
    items = _history_items(dialect, encoded)
    written = items_json(items) if items is not None else None
    if written is None or _lead_json(dialect, encoded) != translation.lead:
        return None
    return with_array(encoded.payload, SPLICES[dialect], (translation.items, written))


def prefix_translation(
    whole: Translation,
    whole_items: list[JsonValue],
    prefix: int,
    new_keys: int,
    upstream: Upstream,
    new_alone: Encoded,
) -> Translation | None:
    """The translation of ``whole``'s first ``prefix`` messages, when the rest of it is
    ``new_alone`` (the other messages, restored, encoded alone; ``new_keys`` vault keys):
    how a continued history that was translated whole gets its prefix's translation.
    ``whole_items`` are the items ``whole.items`` was written from."""
    items = new_alone.payload.get(SPLICES[upstream.dialect.name])
    if new_alone.warnings or not isinstance(items, list) or len(items) > len(whole_items):
        return None
    cut = len(whole_items) - len(items)
    if whole_items[cut:] != items:
        return None
    tail = items_json(whole_items[cut:])  # the very bytes ``whole.items`` ends with
    size = len(whole.items)
    if tail is None or len(tail) > size or whole.items[size - len(tail) :].tobytes() != tail:
        return None
    # Without the tail, and the comma before it unless nothing is left.
    kept_items = whole.items[: max(size - len(tail) - 1, 0)] if tail else whole.items
    lookup = whole.lookup.head(len(whole.lookup.ids) - new_keys)
    restored = whole.restored[:prefix]
    misses = vault_misses(restored, upstream.config)
    return Translation(whole.key, restored, lookup, kept_items, misses, whole.lead)


@dataclass(frozen=True, slots=True)
class Splice:
    """A request whose known prefix's translation stood for all but its new messages."""

    encoded: Encoded
    """The new messages alone, encoded (its payload is not the body)."""
    body: bytes
    """The upstream body: the whole history, the kept prefix written as it was."""
    request: Request
    """The request with every message, as the vault restored them."""
    translation: Translation | None
    """The translation to keep with this request's own prefix."""
    restored: int
    """Vault entries found for the whole history (the translation label's count)."""
    misses: tuple[TranslationWarning, ...]
    """The whole history's vault-miss warnings: the kept prefix's, then the new ones'."""


async def splice(
    vault: ReasoningVault,
    tenant: str,
    upstream: Upstream,
    request: Request,
    parsed: ParsedBody,
    policy: ReplayPolicy,
) -> Splice | None:
    """``request`` encoded for ``upstream`` under ``policy`` from its known prefix's
    translation and its new messages alone (restored from the vault, encoded), or
    ``None`` for the full path."""
    continuation = parsed.continuation
    entry = continuation.entry if continuation is not None else None
    translation = entry.translation if entry is not None else None
    dialect = upstream.dialect.name
    if entry is None or translation is None or dialect not in SPLICES:
        return None
    key = key_of(request, upstream.name, policy)
    last = translation.restored[-1] if translation.restored else None
    if translation.key != key or not splices_alone(dialect, parsed.new, entry.call_ids, last):
        return None
    new_keys = wanted_keys(parsed.new, upstream.config)
    lookup = await vault.look(tenant, upstream.config, new_keys, translation.lookup)
    if not prefix_found(translation, lookup):
        return None
    found = lookup.found
    new = restore_messages(parsed.new, found) if found else parsed.new
    alone = encode_alone(upstream.dialect, request, policy, translation.restored, new)
    written = spliced_body(translation, dialect, alone) if alone is not None else None
    if alone is None or written is None:
        return None
    messages = translation.restored + new
    start = len(translation.restored)  # no new message opens a turn (splices_alone)
    misses = translation.misses + vault_misses(messages, upstream.config, start=start)
    kept_now = Translation(key, messages, lookup, written.items, misses, translation.lead)
    request = replace(request, messages=messages)
    return Splice(alone, written.body, request, kept_now, len(found), misses)


def hold_translation(
    history: HistoryCache,
    parsed: ParsedBody,
    whole: Translation | None,
    whole_items: list[JsonValue],
    upstream: Upstream,
    request: Request,
    policy: ReplayPolicy,
) -> None:
    """Give the entry ``parsed`` continued (which just got its messages, see ``hold``) the
    translation of its prefix (counted by ``history``), cut from ``whole`` (this request's, written from
    ``whole_items``): the new messages are encoded alone and must be exactly the tail of
    this request's items."""
    entry = parsed.continued
    if whole is None or entry is None or entry.messages is None:
        return
    if entry.translation is not None and entry.translation.key == whole.key:
        return
    count = len(entry.messages)
    new = parsed.messages[count:]
    if not all(map(operator.is_, entry.messages, parsed.messages)):
        return
    last = entry.messages[-1] if entry.messages else None
    if not splices_alone(upstream.dialect.name, new, entry.call_ids, last):
        return
    restored = whole.restored
    alone = encode_alone(upstream.dialect, request, policy, restored[:count], restored[count:])
    if alone is None:
        return
    new_keys = len(wanted_keys(new, upstream.config))
    history.translate(
        entry, prefix_translation(whole, whole_items, count, new_keys, upstream, alone)
    )


def translated_whole(
    history: HistoryCache,
    parsed: ParsedBody,
    upstream: Upstream,
    request: Request,
    encoded: Encoded,
    lookup: Lookup,
    misses: tuple[TranslationWarning, ...],
    policy: ReplayPolicy,
    *,
    large: bool,
) -> tuple[Translation | None, bytes | None]:
    """A whole history translated on the full path (``request``, restored, is ``encoded``
    for ``upstream`` under ``policy``; ``misses`` its vault-miss warnings): the translation to keep with
    this request's prefix, after giving
    the entry it continued its prefix's (:func:`hold_translation`), and the body written
    from the kept bytes; ``(None, None)`` when it cannot be kept."""
    dialect = upstream.dialect.name
    if parsed.source is None and not large:
        return None, None  # a body the history cache does not hold (small): nothing to keep
    key = key_of(request, upstream.name, policy)
    whole = kept(key, dialect, encoded, request.messages, lookup, misses, pieces=large)
    if whole is None:
        return None, None
    items = cast(list[JsonValue], encoded.payload[SPLICES[dialect]])
    hold_translation(history, parsed, whole, items, upstream, request, policy)
    written = with_array(encoded.payload, SPLICES[dialect], (whole.items,))
    return whole, written.body if written is not None else None
