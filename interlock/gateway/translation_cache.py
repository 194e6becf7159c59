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
  so they are not built again, and unchanged texts are not parsed again);
* the same upstream, replay mode and service-state regime (:attr:`Translation.key`);
* the upstream encodes each message on its own (:data:`SPLICES`), the new messages are
  of the kinds that cannot change how an earlier message is encoded
  (:func:`splices_alone`), and neither the kept translation nor the new messages'
  encoding carries a warning (warnings name absolute message positions) or a member
  taken from the first messages (Responses ``instructions``);
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

from interlock.gateway.json_pieces import Written, items_json, with_array
from interlock.gateway.upstream import Upstream
from interlock.gateway.vault import (
    Lookup,
    ReasoningVault,
    restore_messages,
    vault_misses,
    wanted_keys,
)
from interlock.transcript import (
    Continuation,
    Encoded,
    JsonValue,
    LossyHistoryError,
    Message,
    ReasoningPart,
    ReplayPolicy,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    TranslationWarning,
)

if TYPE_CHECKING:
    from interlock.gateway.history_cache import ParsedBody

SPLICES: dict[str, str] = {"openai-responses": "input"}
"""Upstream dialects whose encoding is one run of items per message, in order, with the
history array each request carries them in. Responses: ``encode_message`` per message;
what spans messages is the leading ``instructions`` message, hosted approvals (ruled out
below) and the *current turn* (it starts after the last user message: with none among the
new messages, the prefix's steps keep the turn they had and every new step is current, as
when encoded alone). Gemini (adjacent contents merged, results
paired by position) and Anthropic (consecutive same-role turns merged) need rules of
their own and are not here."""

_NO_HEAD_MEMBERS: dict[str, tuple[str, ...]] = {"openai-responses": ("instructions",)}
"""Members an upstream body takes from the first messages: a translation holding one is
not kept (the new messages' body would not carry it)."""

TranslationKey = tuple[str, str, Continuation]
"""(upstream name, replay mode, the request's service-state fields)."""


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


def key_of(request: Request, upstream_name: str, replay_mode: str) -> TranslationKey:
    """The key a translation of ``request``'s history is kept and found under."""
    return (upstream_name, replay_mode, request.continuation)


_PLAIN_PARTS = (TextPart, ReasoningPart, ToolCallPart, ToolResultPart)


def splices_alone(new: Sequence[Message]) -> bool:
    """True when encoding ``new`` alone gives the items encoding them after the prefix
    would, and cannot change the prefix's items.

    Assistant steps and tool results made of text, reasoning, calls and results, without a
    participant name: no approval (hosted approvals are looked up across the history), no
    user, system or developer message, nothing carrying a refusal or media.
    """
    if not new:
        return False
    for message in new:
        if message.role not in ("assistant", "tool") or message.name:
            return False
        if not all(type(part) in _PLAIN_PARTS for part in message.parts):
            return False
    return True


def _history_items(dialect: str, encoded: Encoded) -> list[JsonValue] | None:
    """The history items of an encoding that can be kept or spliced, else ``None``."""
    items = encoded.payload.get(SPLICES[dialect])
    if encoded.warnings or not isinstance(items, list):
        return None
    if any(member in encoded.payload for member in _NO_HEAD_MEMBERS.get(dialect, ())):
        return None
    return items


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
    return Translation(key, restored, lookup, memoryview(written), misses)


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
    if written is None:
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
    return Translation(whole.key, restored, lookup, kept_items, misses)


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
    vault: ReasoningVault, tenant: str, upstream: Upstream, request: Request, parsed: ParsedBody
) -> Splice | None:
    """``request`` encoded for ``upstream`` from its known prefix's translation and its new
    messages alone (restored from the vault, encoded), or ``None`` for the full path."""
    continuation = parsed.continuation
    translation = continuation.entry.translation if continuation is not None else None
    key = key_of(request, upstream.name, upstream.config.replay_mode)
    if translation is None or translation.key != key or not splices_alone(parsed.new):
        return None
    new_keys = wanted_keys(parsed.new, upstream.config)
    lookup = await vault.look(tenant, upstream.config, new_keys, translation.lookup)
    if not prefix_found(translation, lookup):
        return None
    found = lookup.found
    new = restore_messages(parsed.new, found) if found else parsed.new
    policy = ReplayPolicy(mode=upstream.config.replay_mode)
    try:
        alone = upstream.dialect.encode_request(replace(request, messages=new), policy)
    except LossyHistoryError:
        return None  # the full path answers, with the whole history's locations
    written = spliced_body(translation, upstream.dialect.name, alone)
    if written is None:
        return None
    messages = translation.restored + new
    start = len(translation.restored)  # no new message opens a turn (splices_alone)
    misses = translation.misses + vault_misses(messages, upstream.config, start=start)
    kept_now = Translation(key, messages, lookup, written.items, misses)
    request = replace(request, messages=messages)
    return Splice(alone, written.body, request, kept_now, len(found), misses)


def hold_translation(
    parsed: ParsedBody,
    whole: Translation | None,
    whole_items: list[JsonValue],
    upstream: Upstream,
    request: Request,
) -> None:
    """Give the entry ``parsed`` continued (which just got its messages, see ``hold``) the
    translation of its prefix, cut from ``whole`` (this request's, written from
    ``whole_items``): the new messages are encoded alone and must be exactly the tail of
    this request's items."""
    entry = parsed.continued
    if whole is None or entry is None or entry.messages is None:
        return
    if entry.translation is not None and entry.translation.key == whole.key:
        return
    count = len(entry.messages)
    new = parsed.messages[count:]
    if not all(map(operator.is_, entry.messages, parsed.messages)) or not splices_alone(new):
        return
    policy = ReplayPolicy(mode=upstream.config.replay_mode)
    try:
        alone = upstream.dialect.encode_request(
            replace(request, messages=whole.restored[count:]), policy
        )
    except LossyHistoryError:
        return
    new_keys = len(wanted_keys(new, upstream.config))
    entry.translation = prefix_translation(whole, whole_items, count, new_keys, upstream, alone)


def translated_whole(
    parsed: ParsedBody,
    upstream: Upstream,
    request: Request,
    encoded: Encoded,
    lookup: Lookup,
    misses: tuple[TranslationWarning, ...],
    *,
    large: bool,
) -> tuple[Translation | None, bytes | None]:
    """A whole history translated on the full path (``request``, restored, is ``encoded``
    for ``upstream``; ``misses`` its vault-miss warnings): the translation to keep with
    this request's prefix, after giving
    the entry it continued its prefix's (:func:`hold_translation`), and the body written
    from the kept bytes; ``(None, None)`` when it cannot be kept."""
    dialect = upstream.dialect.name
    key = key_of(request, upstream.name, upstream.config.replay_mode)
    whole = kept(key, dialect, encoded, request.messages, lookup, misses, pieces=large)
    if whole is None:
        return None, None
    items = cast(list[JsonValue], encoded.payload[SPLICES[dialect]])
    hold_translation(parsed, whole, items, upstream, request)
    written = with_array(encoded.payload, SPLICES[dialect], (whole.items,))
    return whole, written.body if written is not None else None
