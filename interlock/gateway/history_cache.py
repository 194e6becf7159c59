"""Work already done on an unchanged history prefix is not redone.

An agent resends its whole history every turn, one step longer than the last. The
gateway keeps, per tenant and ingress dialect, what it learned about the history of a
recent request: the request body up to the end of its last history item (the *prefix*,
the body's own bytes, held rather than copied), the top-level members before the history,
and the canonical messages decoded from that history. A later request whose body starts
with exactly that prefix (byte for byte: any changed byte misses) and goes on with more
history items gets only those new items decoded — only the bytes after the prefix are
decoded as UTF-8 and parsed — and, same dialect in and out, only those checked.

Correctness first, so the fast path only ever yields what the full path would:

* only requests that passed decoding (and, for a *checked* entry, the upstream's replay
  check) leave an entry; a prefix is a complete, valid history;
* the new items are decoded on their own, which equals decoding them after the prefix
  when none of them depends on an earlier item (:func:`decodes_alone`), and checked on
  their own, which equals checking the whole history when none of them opens a new turn
  or refers to anything before (:func:`checks_alone`);
* anything unexpected — a parse irregularity, a duplicate history member, an error while
  decoding or checking the new items — falls back to the full path, which then answers
  (so every error is the full path's own error, with its own locations).

Bounded: at most ``per_scope`` entries per tenant and dialect, at most ``max_bytes``
bytes of held bodies in all — the client's, and the upstream body a kept translation is
a view into (:attr:`Entry.held`) — least recently used dropped first. Tenants never see
each other's entries: the tenant is part of the key, and the key is the exact bytes.
:meth:`HistoryCache.render` exposes the bytes, entries and reuse counts as metrics.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import cast

from interlock.gateway import strict_json
from interlock.gateway.translation_cache import Translation
from interlock.gateway.vault import Lookup
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Message,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

_DECODER = strict_json.DECODER
"""Repeated keys inside a value are refused here as in a full parse (``strict_json``)."""
_SPACE = re.compile(r"[ \t\n\r]*")

Scope = tuple[str, str]
"""(tenant, ingress dialect name)."""


@dataclass(frozen=True, slots=True)
class Split:
    """A request body split around its history array, parsed exactly as ``json.loads``."""

    payload: JsonObject
    head: JsonObject
    """The top-level members before the history array, in order."""
    prefix_end: int
    """UTF-8 offset just after the last history item."""
    head_bytes: int
    """UTF-8 length of the text before the history member (the head members are there)."""
    model_at: int = -1
    """UTF-8 offset of the top-level ``model`` member's value, or -1 without one."""


@dataclass(frozen=True, slots=True)
class Continuation:
    """A request that starts with a known prefix: its new history items and the rest."""

    entry: Entry
    payload: JsonObject
    """The body with only the *new* history items (head and tail members as sent)."""
    new_items: int
    prefix_end: int
    """UTF-8 offset just after the last history item of this request."""
    model_at: int = -1
    """UTF-8 offset in the body of the top-level ``model`` member's value when that member
    comes after the history (a Responses ``input`` first), else -1."""


@dataclass(slots=True, eq=False)
class Entry:
    """What is known about one history prefix of one scope."""

    source: bytes
    """The body of the request the prefix was read from (held, not copied)."""
    size: int
    """The prefix is the first ``size`` bytes of ``source``: up to its last history item."""
    head: JsonObject
    head_bytes: int
    messages: tuple[Message, ...] | None
    """``None`` until a request continued this history: a one-off request keeps no decoded
    messages (held objects cost every full garbage collection), a conversation keeps them
    from its second request on."""
    call_ids: frozenset[str]
    checked_for: tuple[str, str] | None
    """(upstream name, replay mode) whose replay check every message passed, if any: the
    request went to that upstream as sent, so its body holds no id the gateway minted for
    that upstream's dialect (``proxy.minted_ids``)."""
    translation: Translation | None = None
    """The prefix as translated for another dialect's upstream (:mod:`.translation_cache`);
    kept, like ``messages``, only for a history a request continued."""
    last_item: JsonValue = None
    """The prefix's last history item as parsed (where a continuation's first new item
    must start a message, :mod:`.history_ingress`)."""
    lead: int = 0
    """How many leading messages came from outside the history (Responses
    ``instructions``): a continuation must have the same ones."""
    vault_lookup: tuple[str, Lookup] | None = None
    """(upstream name, the vault lookup of the prefix's messages for it): a continuation
    to that upstream builds only its new messages' keys (``proxy_history.vault_read``)."""
    number: int = -1
    """Its number in the cache once kept (-1 before)."""
    held: int = 0
    """Bytes it counts against ``max_bytes`` while kept: its body and its translation's."""

    @property
    def size_held(self) -> int:
        """Bytes this entry holds: its body, and the upstream body its kept translation
        is a view into."""
        translation = self.translation
        return len(self.source) + (translation.held if translation is not None else 0)

    @property
    def prefix(self) -> memoryview:
        """The prefix's bytes (a view of ``source``)."""
        return memoryview(self.source)[: self.size]


def split_body(text: str, history_key: str) -> Split | None:
    """``text`` parsed as a JSON object, noting where its ``history_key`` array ends.

    ``None`` when the text is not a plain JSON object with exactly one such array (the
    caller then parses it the ordinary way, and gets the ordinary errors).
    """
    position = _skip(text, 0)
    if not text.startswith("{", position):
        return None
    members, _, prefix_end, history_start, model_at = _members(
        text, position + 1, history_key, first=True
    )
    if members is None or prefix_end < 0:
        return None
    head: JsonObject = {}
    for key, value in members:
        if key == history_key:
            break
        head[key] = value
    return Split(
        payload=dict(members),
        head=head,
        prefix_end=_utf8_offset(text, prefix_end),
        head_bytes=_utf8_offset(text, history_start),
        model_at=_utf8_offset(text, model_at) if model_at >= 0 else -1,
    )


def _utf8_offset(text: str, offset: int) -> int:
    """The UTF-8 offset of ``text[offset]`` (``isascii`` is a flag CPython keeps)."""
    return offset if text.isascii() else len(text[:offset].encode())


_Members = tuple[list[tuple[str, JsonValue]] | None, int, int, int, int]
"""(members or ``None``, offset after the object, offset after the last history item or
-1, offset of the history member's key or -1, offset of the ``model`` member's value or
-1)."""


def _members(text: str, position: int, history_key: str, *, first: bool) -> _Members:
    """The members of an object from ``position`` (after ``{`` or inside it) to its end.

    ``None`` for members on anything :func:`split_body` declines, a repeated key included
    (``json.loads`` keeps the last; declining keeps every offset here unambiguous).
    """
    members: list[tuple[str, JsonValue]] = []
    keys: set[str] = set()
    prefix_end = history_start = model_at = -1
    position = _skip(text, position)
    if first and text.startswith("}", position):
        return None, position, -1, -1, -1
    try:
        while True:
            start = position
            key, position = _DECODER.raw_decode(text, position)
            position = _skip(text, position)
            if not isinstance(key, str) or key in keys or not text.startswith(":", position):
                return None, position, -1, -1, -1
            keys.add(key)
            value_at = _skip(text, position + 1)
            decoded, end = _DECODER.raw_decode(text, value_at)
            value = cast(JsonValue, decoded)
            if key == history_key:
                if not isinstance(value, list) or not value:
                    return None, position, -1, -1, -1
                prefix_end, history_start = _last_item_end(text, end), start
            elif key == "model":
                model_at = value_at
            members.append((key, value))
            position = _skip(text, end)
            if text.startswith("}", position):
                break
            if not text.startswith(",", position):
                return None, position, -1, -1, -1
            position = _skip(text, position + 1)
    except ValueError:
        return None, position, -1, -1, -1
    if _skip(text, position + 1) != len(text):
        return None, position, -1, -1, -1
    return members, position + 1, prefix_end, history_start, model_at


def _last_item_end(text: str, array_end: int) -> int:
    """Offset after the last item of the array that ends (``]``) just before ``array_end``."""
    end = array_end - 1
    while text[end - 1] in " \t\n\r":
        end -= 1
    return end if text[end - 1] == "}" else -1


def continue_body(entry: Entry, body: bytes, history_key: str) -> Continuation | None:
    """``body`` (which starts with ``entry.prefix``) parsed from the end of the prefix on:
    only the rest is decoded (the prefix ends after ``}``, so on a character boundary)."""
    try:
        text = str(memoryview(body)[entry.size :], "utf-8")
    except UnicodeDecodeError:
        return None
    position = _skip(text, 0)
    items: list[JsonValue] = []
    try:
        while text.startswith(",", position):
            item, end = _DECODER.raw_decode(text, _skip(text, position + 1))
            if not isinstance(item, dict):
                return None
            items.append(cast(JsonObject, item))
            position = _skip(text, end)
    except ValueError:
        return None
    if not text.startswith("]", position):
        return None
    end = _last_item_end(text, position + 1) if items else 0
    prefix_end = entry.size + _utf8_offset(text, end)
    position = _skip(text, position + 1)
    model_at = -1
    if text.startswith("}", position):
        tail: list[tuple[str, JsonValue]] | None = []
        if _skip(text, position + 1) != len(text):
            return None
    elif text.startswith(",", position):
        tail, _, _, _, model_at = _members(text, position + 1, history_key, first=False)
    else:
        return None
    if tail is None or any(key == history_key or key in entry.head for key, _ in tail):
        return None
    payload: JsonObject = {**entry.head, history_key: items}
    payload.update(tail)
    if model_at >= 0:
        model_at = entry.size + _utf8_offset(text, model_at)
    return Continuation(entry, payload, len(items), prefix_end, model_at)


def hold(continuation: Continuation, kept: tuple[Message, ...]) -> None:
    """Give a continued entry its messages: ``kept``, the leading messages of the whole
    request's decode that are its prefix's (:func:`.history_ingress.prefix_count`)."""
    continuation.entry.messages = kept
    ids = {part.call_id for message in kept for part in message.tool_calls}
    continuation.entry.call_ids = frozenset(ids)


def _skip(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return match.end() if match else position


_PLAIN_PARTS = (TextPart, RefusalPart, ReasoningPart, ToolCallPart, ToolResultPart)


def decodes_alone(entry: Entry, new: tuple[Message, ...], items: list[JsonValue]) -> bool:
    """True when decoding ``new`` after the prefix gives what decoding them alone gave.

    Chat decoding carries two things from earlier messages: the name of the call a tool
    result answers, and the deprecated ``function_call`` / ``function`` pairing (whose
    call ids are minted from message positions). So: no deprecated function messages,
    every tool result answers a call among the new messages, and no call id repeats
    one of the prefix.
    """
    for item in items:
        if isinstance(item, dict) and ("function_call" in item or item.get("role") == "function"):
            return False
    calls = {part.call_id for message in new for part in message.tool_calls}
    if calls & entry.call_ids:
        return False
    return all(
        part.call_id in calls
        for message in new
        for part in message.parts
        if isinstance(part, ToolResultPart)
    )


def checks_alone(entry: Entry, new: tuple[Message, ...]) -> bool:
    """True when checking ``new`` alone is checking the whole history (prefix checked).

    The Chat encoder's rules that span messages are tool-call pairing (a prefix that
    passed has every call answered, and :func:`decodes_alone` keeps new results to new
    calls), the *current turn* (it starts after the last user message: with no user,
    system or developer message among the new ones it stays where it was, so the prefix
    is judged as before and every new message is current, as when alone) and approval
    ids (only plain text, reasoning, refusal, call and result parts are allowed here).
    The Responses encoder's are the same plus the leading ``instructions`` message (never
    among new assistant and tool messages); its pairing is the gateway's, checked on the
    new messages by the caller (a prefix that passed leaves no call waiting).
    """
    for message in new:
        if message.role not in ("assistant", "tool"):
            return False
        if not all(isinstance(part, _PLAIN_PARTS) for part in message.parts):
            return False
    return True


class HistoryCache:
    """The bounded, per-tenant store of history prefixes; one per gateway process."""

    def __init__(
        self, *, max_bytes: int = 16_000_000, per_scope: int = 8, min_bytes: int = 8192
    ) -> None:
        self.max_bytes = max_bytes
        self.per_scope = per_scope
        self.min_bytes = min_bytes
        """Requests shorter than this are neither looked up nor kept (nothing to save)."""
        self._scopes: dict[Scope, OrderedDict[int, Entry]] = {}
        self._order: OrderedDict[int, Scope] = OrderedDict()
        """Every entry's id and scope, least recently used first (ids, not the prefixes
        themselves, are the keys: hashing a long prefix would cost as much as reading it)."""
        self._ids = itertools.count()
        self.reused = 0
        """Requests whose known prefix was not decoded again."""
        self.checks_reused = 0
        """Requests whose known prefix was not checked again either."""
        self.translations_reused = 0
        """Cross-dialect requests whose known prefix was not restored and encoded again."""
        self._bytes = 0
        self._lock = threading.Lock()
        """Held by :meth:`find` and :meth:`keep`: large requests use the cache from a worker
        thread (:mod:`interlock.gateway.offload`) while small ones use it on the loop."""

    def __len__(self) -> int:
        return len(self._order)

    @property
    def held_bytes(self) -> int:
        """Bytes of bodies held (each entry holds its whole body)."""
        return self._bytes

    def find(self, scope: Scope, body: bytes) -> Entry | None:
        """The longest kept prefix of ``body`` in ``scope``."""
        with self._lock:
            return self._find(scope, body)

    def _find(self, scope: Scope, body: bytes) -> Entry | None:
        entries = self._scopes.get(scope)
        if entries is None or len(body) < self.min_bytes:
            return None
        best: tuple[int, Entry] | None = None
        # Newest first: a conversation's newest prefix is its longest, so the older ones
        # (each a prefix of it) are passed over by size, not compared byte by byte. Of
        # equal ones (the same bytes kept twice) the oldest is taken, as it always was.
        for number, entry in reversed(entries.items()):
            size = entry.size
            if best is not None and size < best[1].size:
                continue
            prefix = entry.prefix
            # The end first: branches of one conversation differ near the end.
            if body.startswith(prefix[-64:], size - 64 if size > 64 else 0) and body.startswith(
                prefix
            ):
                best = number, entry
        if best is None:
            return None
        entries.move_to_end(best[0])
        self._order.move_to_end(best[0])
        return best[1]

    def keep(self, scope: Scope, entry: Entry) -> None:
        """Remember ``entry``, then enforce the bounds (least recently used out first).

        The caller keeps only prefixes no entry of the scope already holds: a request that
        starts with a known prefix is a continuation of it (and one with nothing new
        keeps nothing), so the only way to keep a prefix twice is a continuation whose
        tail could not be parsed; that costs one slot until it ages out.
        """
        if not self.min_bytes <= entry.size <= len(entry.source) <= self.max_bytes:
            return
        with self._lock:
            self._keep(scope, entry)

    def _keep(self, scope: Scope, entry: Entry) -> None:
        entries = self._scopes.setdefault(scope, OrderedDict())
        number = next(self._ids)
        entries[number] = entry
        self._order[number] = scope
        entry.number, entry.held = number, entry.size_held
        self._bytes += entry.held
        while len(entries) > self.per_scope:
            self._drop(next(iter(entries)))
        self._bound()

    def _bound(self) -> None:
        while self._bytes > self.max_bytes:
            self._drop(next(iter(self._order)))

    def _drop(self, number: int) -> None:
        scope = self._order.pop(number)
        entries = self._scopes[scope]
        self._bytes -= entries.pop(number).held
        if not entries:
            del self._scopes[scope]

    def translate(self, entry: Entry, translation: Translation | None) -> None:
        """Give a kept ``entry`` its prefix's translation (or none), counting its bytes
        (the bounds are enforced again: the least recently used entries go first)."""
        with self._lock:
            entry.translation = translation
            if self._order.get(entry.number) is None:
                return  # not kept (or dropped since): counted nowhere
            size = entry.size_held
            self._bytes += size - entry.held
            entry.held = size
            self._bound()

    def render(self) -> str:
        """Prometheus exposition lines for this cache (see ``metrics.py``)."""
        reused = (
            ("decode", self.reused),
            ("check", self.checks_reused),
            ("translation", self.translations_reused),
        )
        lines = [
            "# HELP interlock_history_cache_bytes Bytes of client and translated bodies the "
            "history cache holds (16 MB at most, least recently used out first).",
            "# TYPE interlock_history_cache_bytes gauge",
            f"interlock_history_cache_bytes {self._bytes}",
            "# HELP interlock_history_cache_entries History prefixes the cache holds.",
            "# TYPE interlock_history_cache_entries gauge",
            f"interlock_history_cache_entries {len(self._order)}",
            "# HELP interlock_history_reused_total Requests whose known history prefix was "
            "not decoded, checked or translated again, by the work saved.",
            "# TYPE interlock_history_reused_total counter",
        ]
        lines += [f'interlock_history_reused_total{{work="{w}"}} {n}' for w, n in reused]
        return "\n".join(lines) + "\n"


HISTORY_KEYS: dict[str, str] = {
    "openai-chat": "messages",
    "openai-responses": "input",
    "anthropic": "messages",
}
"""Ingress dialects whose history prefixes are remembered, and their history member
(the rules for each: :mod:`.history_ingress`)."""


@dataclass(slots=True)
class ParsedBody:
    """A request body parsed, and what the history cache needs to know about it."""

    payload: JsonObject
    source: bytes | None = None
    """The body, when its history prefix can be remembered."""
    head: JsonObject | None = None
    head_bytes: int = 0
    prefix_end: int = 0
    continuation: Continuation | None = None
    messages: tuple[Message, ...] = ()
    """All decoded messages (before the vault), once decoded."""
    new: tuple[Message, ...] = ()
    """The messages after a known prefix (a continuation only)."""
    continues: bool = False
    """True when this request continued a known prefix (so its own prefix keeps messages)."""
    continued: Entry | None = None
    """The kept entry this request continues (also when it was decoded whole)."""
    known_bytes: int = 0
    """Bytes at the start of the body that an earlier request passed with (a continued
    prefix): its surrogate check searches only the rest."""
    model_at: int = -1
    """UTF-8 offset of the top-level ``model`` member's value in the body when the parse
    noted it (:class:`Split`, :class:`Continuation`), else -1."""

    def __post_init__(self) -> None:
        if self.model_at < 0 and self.continuation is not None:
            self.model_at = self.continuation.model_at

    @property
    def model_within(self) -> int | None:
        """Bytes of the body that hold its one top-level ``model`` member, when known."""
        return self.head_bytes if self.head is not None and "model" in self.head else None
