"""The reasoning vault: opaque reasoning a client dialect cannot carry, kept server-side.

When a response passes through, the opaque payloads bound to its tool-call step (a
Gemini thought signature on a call, OpenAI encrypted reasoning, OpenRouter reasoning
details) are stored keyed by tenant + upstream + call id + a digest of the call's name and
arguments (services reuse call ids). On the next request they are
restored into the canonical history before encoding: a signature onto the call that
lost it, the reasoning parts in front of the step's calls. What is neither in the
request nor in the vault stays missing, and the strict encoder then refuses the request
before anything is sent.

Entries are kept per upstream (its name, and for a Responses or Anthropic upstream of a
vendor other than its dialect's own the vendor too: :func:`vault_space`), and each payload keeps the issuer it was
decoded with (:mod:`.vendors`): what an upstream answered is restored only for that upstream
while its vendor stays the same, and its encoder replays only its own vendor's reasoning.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from interlock.codecs._turns import current_turn_start
from interlock.codecs.registry import wire_codec
from interlock.gateway.config import Protocol, UpstreamConfig
from interlock.gateway.stores import Store, vault_entries
from interlock.gateway.vendors import VENDOR_PROTOCOLS, home_vendor
from interlock.transcript import (
    UNKNOWN_ISSUER,
    JsonValue,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    Request,
    ToolCallPart,
    TranslationWarning,
    load_part,
    to_json,
)


@dataclass(frozen=True, slots=True)
class VaultNeeds:
    """Which opaque payloads an upstream needs replayed."""

    signatures: bool
    reasoning: bool
    provider: str = ""
    """The issuer of the reasoning payloads (``openai``, ``xai``, ``openrouter``)."""
    unrecorded: bool = False
    """Responses and Anthropic: a client's opaque reasoning of unrecorded issuer counts as
    the upstream's own (:data:`~interlock.transcript.UNKNOWN_ISSUER`)."""

    @property
    def any(self) -> bool:
        """True when the vault has anything to do for this upstream."""
        return self.signatures or self.reasoning


def needs(upstream: UpstreamConfig) -> VaultNeeds:
    """What the upstream's dialect wants back, from its HTTP facts: signatures on calls
    (Gemini, native or via Chat ``gemini-compat``) and/or reasoning payloads of one issuer
    (Responses, OpenRouter, Anthropic). A Responses or Anthropic upstream's reasoning issuer
    is its vendor (:mod:`.vendors`)."""
    return _needs(upstream.protocol, upstream.reasoning_dialect, upstream.issuer)


def vault_needed(upstream: UpstreamConfig, passthrough: bool) -> bool:
    """True when a response from ``upstream`` must be decoded to keep opaque reasoning.

    Across dialects the client cannot carry the upstream's opaque payloads; within a
    dialect (``passthrough``) only signatures are kept (clients are known to strip Gemini
    signatures).
    """
    wanted = needs(upstream)
    return wanted.any and (not passthrough or wanted.signatures)


@functools.lru_cache(maxsize=64)
def _needs(protocol: Protocol, reasoning_dialect: str | None, issuer: str) -> VaultNeeds:
    options: dict[str, str] = {"reasoning_dialect": reasoning_dialect} if reasoning_dialect else {}
    if issuer:
        options["issuer"] = issuer
    facts = wire_codec(protocol, **options).http
    issuer = facts.reasoning_issuer
    unrecorded = protocol in VENDOR_PROTOCOLS
    return VaultNeeds(
        signatures=facts.signed_calls,
        reasoning=bool(issuer),
        provider=issuer,
        unrecorded=unrecorded,
    )


def vault_space(upstream: UpstreamConfig) -> str:
    """The vault's name for ``upstream``: its name, with ``@vendor`` for a Responses or
    Anthropic upstream whose vendor is not its dialect's own (``openai``, ``anthropic``), so
    a changed ``vendor`` finds none of the other's entries; the dialect's own vendor keeps
    the plain name entries had before vendors were told apart."""
    issuer = upstream.issuer
    if issuer in ("", home_vendor(upstream.protocol)):
        return upstream.name
    return f"{upstream.name}@{issuer}"


_SORTED = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""``json.dumps`` with these options is these encoders' ``encode`` (built once, not per call)."""


def _arguments_text(arguments: str) -> str:
    """Arguments by meaning (parsed JSON re-serialized with sorted keys), else the raw text:
    a client that re-serializes the arguments it got still names the same call."""
    try:
        parsed: JsonValue = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
    return _SORTED.encode(parsed)


Named = tuple[tuple[str, str, str], ...]
"""Calls as (id, name, arguments), in order."""

DIGESTS_REMEMBERED = 1024
"""Digests of calls with short arguments kept: a step's key is built when its answer is
kept, then again for every request that sends it back (and for its vault-miss check)."""
SHORT_ARGUMENTS = 2048
"""Characters of arguments, all calls together, up to which a digest is kept."""


def _calls_digest(calls: Sequence[ToolCallPart]) -> str:
    """A digest of the calls' ids, names and arguments, in order."""
    named = tuple((call.call_id, call.name, call.arguments) for call in calls)
    if sum(len(call.arguments) for call in calls) <= SHORT_ARGUMENTS:
        return _kept_digest(named)
    return _digest(named)


@functools.lru_cache(maxsize=DIGESTS_REMEMBERED)
def _kept_digest(named: Named) -> str:
    return _digest(named)


def _digest(named: Named) -> str:
    text = _COMPACT.encode(
        [[call_id, name, _arguments_text(arguments)] for call_id, name, arguments in named]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def signature_key(call: ToolCallPart) -> str:
    """``sig:<digest of the call>:<call id>``: services reuse call ids across turns and
    conversations (OpenRouter and Novita number them ``0``, ``1``…), so the id alone could
    replay another call's signature; the call's name and arguments are part of the key."""
    return f"sig:{_calls_digest((call,))}:{call.call_id}"


def reasoning_key(calls: Sequence[ToolCallPart]) -> str:
    """``reasoning:<digest of the step's calls>:<first call id>`` (see :func:`signature_key`)."""
    return f"reasoning:{_calls_digest(calls)}:{calls[0].call_id}"


def _call_id_of(key: str) -> str:
    return key.split(":", 2)[-1]


def entries_for(message: Message, wanted: VaultNeeds) -> dict[str, JsonValue]:
    """What to keep from one model step: signatures per call, the step's reasoning under
    its first call id (only when some reasoning part carries an opaque payload)."""
    calls = message.tool_calls
    if not calls:
        return {}
    entries: dict[str, JsonValue] = {}
    if wanted.signatures:
        for call in calls:
            if call.signature is not None:
                entries[signature_key(call)] = to_json(call.signature)
    if wanted.reasoning:
        reasoning = [part for part in message.parts if isinstance(part, ReasoningPart)]
        if any(part.opaque is not None for part in reasoning):
            entries[reasoning_key(calls)] = [to_json(part) for part in reasoning]
    return entries


def _has_own_reasoning(message: Message, wanted: VaultNeeds) -> bool:
    """True when the step carries reasoning of the upstream's issuer, or (Responses) of an
    unrecorded issuer: a client's blob, the upstream's own unless recorded otherwise."""
    for part in message.parts:
        opaque = part.opaque if isinstance(part, ReasoningPart) else None
        if opaque is None:
            continue
        if opaque.provider == wanted.provider:
            return True
        if wanted.unrecorded and opaque.provider == UNKNOWN_ISSUER:
            return True
    return False


def _wanted_keys(messages: Sequence[Message], wanted: VaultNeeds) -> list[str]:
    keys: list[str] = []
    for message in messages:
        calls = message.tool_calls if message.role == "assistant" else ()
        if not calls:
            continue
        if wanted.signatures:
            keys.extend(signature_key(call) for call in calls if call.signature is None)
        if wanted.reasoning and not _has_own_reasoning(message, wanted):
            keys.append(reasoning_key(calls))
    return keys


def _restore_message(message: Message, found: dict[str, JsonValue]) -> Message:
    calls = message.tool_calls
    stored = found.get(reasoning_key(calls)) if calls else None
    parts: list[Part] = []
    if isinstance(stored, list):
        parts.extend(load_part(item, "vault.reasoning") for item in stored)
    changed = bool(parts)
    for part in message.parts:
        if parts and isinstance(part, ReasoningPart):
            continue  # replaced by the stored reasoning of this step
        if isinstance(part, ToolCallPart) and part.signature is None:
            signature = found.get(signature_key(part))
            if isinstance(signature, dict):
                part = replace(part, signature=load_opaque(signature))
                changed = True
        parts.append(part)
    return replace(message, parts=tuple(parts)) if changed else message


def load_opaque(value: dict[str, JsonValue]) -> Opaque:
    """An :class:`Opaque` from its JSON form."""
    return Opaque(provider=str(value["provider"]), format=str(value["format"]), data=value["data"])


WRITES_REMEMBERED = 1024
"""How many of its own vault writes a process remembers (:meth:`ReasoningVault.look`)."""


class ReasoningVault:
    """Stores and restores opaque reasoning for one gateway, over its :class:`Store`.

    Every write is counted per tenant and vault space (:meth:`.Store.vault_put`), and the
    count is read first with every lookup. This process remembers its own last writes
    (count → ids written), so a lookup that continues an earlier one (a continued history's
    prefix, :mod:`.translation_cache`) need not read the earlier keys again when every
    write counted since was this process's own and wrote none of them: then what the
    vault holds for them is what was read. Any other write since (another worker or
    replica, or one this process no longer remembers) reads them all again. (A store
    emptied under running gateways and written to as often again before their next
    lookup is not told apart: restart them after emptying one.)
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._written: OrderedDict[tuple[str, str, int], tuple[str, ...]] = OrderedDict()
        """(tenant, space, count) → the ids that write stored, oldest first."""

    async def remember(self, tenant: str, upstream: UpstreamConfig, message: Message) -> int:
        """Keep what ``message`` (one model step) carries; returns how many entries."""
        entries = entries_for(message, needs(upstream))
        if entries:
            space = vault_space(upstream)
            count = await self.store.vault_put(tenant, space, entries)
            self._written[tenant, space, count] = tuple(entries)
            if len(self._written) > WRITES_REMEMBERED:
                self._written.popitem(last=False)
        return len(entries)

    async def restore(
        self, tenant: str, upstream: UpstreamConfig, request: Request
    ) -> tuple[Request, int]:
        """``request`` with missing opaque payloads put back; returns how many entries."""
        keys = wanted_keys(request.messages, upstream)
        found = await self.lookup(tenant, upstream, keys)
        if not found:
            return request, 0
        messages = restore_messages(request.messages, found)
        return replace(request, messages=messages), len(found)

    async def lookup(
        self, tenant: str, upstream: UpstreamConfig, keys: Sequence[str]
    ) -> dict[str, JsonValue]:
        """The stored entries among ``keys`` (one store round trip; none without keys)."""
        return (await self.look(tenant, upstream, keys)).found

    async def look(
        self,
        tenant: str,
        upstream: UpstreamConfig,
        keys: Sequence[str],
        known: Lookup | None = None,
    ) -> Lookup:
        """The entries among ``keys``, after those of ``known`` (an earlier lookup: its
        keys are read again only when a write since may have changed them, see the class;
        then in the same round trip, and the texts of an unchanged ``known`` part are not
        parsed again)."""
        if not keys and (known is None or not known.ids):
            return _NOTHING  # nothing to read (an upstream that wants nothing kept)
        space = vault_space(upstream)
        counter = self.store.vault_count_key(tenant, space)
        new_keys = tuple(self.store.vault_keys(tenant, space, keys))
        if known is not None and known.count is not None:
            read = await self.store.vault_raw((counter, *new_keys))
            count = _count(read[0])
            if count is not None and self._unchanged(tenant, space, known, count):
                texts = tuple(read[1:])
                found = {**known.found, **vault_entries(keys, texts)}
                ids = known.ids + tuple(keys)
                return Lookup(ids, known.backend_keys + new_keys, known.texts + texts, found, count)
        before = known if known is not None else _NOTHING
        backend_keys = before.backend_keys + new_keys
        read = await self.store.vault_raw((counter, *backend_keys))
        texts = tuple(read[1:])
        ids = before.ids + tuple(keys)
        if texts[: len(before.texts)] == before.texts:
            found = {**before.found, **vault_entries(keys, texts[len(before.texts) :])}
        else:
            found = vault_entries(ids, texts)
        return Lookup(ids, backend_keys, texts, found, _count(read[0]))

    def _unchanged(self, tenant: str, space: str, known: Lookup, count: int) -> bool:
        """True when every write counted after ``known`` was read, up to ``count``, is one
        of this process's remembered writes and stored none of ``known``'s ids."""
        since = known.count
        if since is None or count < since:  # (fewer: the store was emptied since)
            return False
        for number in range(since + 1, count + 1):
            written = self._written.get((tenant, space, number))
            if written is None or any(item in known.ids for item in written):
                return False
        return True


def _count(text: str | None) -> int | None:
    """A vault write count as read (absent: no write yet), ``None`` when unreadable."""
    if text is None:
        return 0
    try:
        return int(text)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Lookup:
    """One vault lookup: the ids asked for, their backend keys, the stored texts (``None``
    where absent), the entries parsed from them, and the vault's write count read before
    them (``None``: unknown, the texts are never reused unread)."""

    ids: tuple[str, ...]
    backend_keys: tuple[str, ...]
    texts: tuple[str | None, ...]
    found: dict[str, JsonValue]
    count: int | None = None

    def head(self, count: int) -> Lookup:
        """The lookup of the first ``count`` ids alone."""
        ids = self.ids[:count]
        found = {key: self.found[key] for key in ids if key in self.found}
        return Lookup(ids, self.backend_keys[:count], self.texts[:count], found, self.count)


_NOTHING = Lookup((), (), (), {})


def wanted_keys(messages: Sequence[Message], upstream: UpstreamConfig) -> list[str]:
    """The vault keys ``messages`` would be restored from, in message order (each message's
    keys depend on that message alone)."""
    wanted = needs(upstream)
    return _wanted_keys(messages, wanted) if wanted.any else []


def vault_misses(
    messages: Sequence[Message], upstream: UpstreamConfig, *, start: int = 0
) -> tuple[TranslationWarning, ...]:
    """A ``vault_miss`` warning per payload the current turn's tool steps still lack after
    the vault restored what it had (``messages`` as restored): neither the request nor the
    vault had it.

    Earlier turns are left alone (services ignore or drop reasoning of finished turns), and
    so is a step that carries another provider's reasoning: another service answered it (a
    model switch), so there was never anything of this one's to keep.

    ``start``: exactly the warnings of the whole history at positions from ``start`` on
    (each depends on its message and on where the current turn starts, which is found
    among those messages alone when one of them opens a turn, else lies at or before
    ``start``): a continued history's earlier warnings are known (:mod:`.translation_cache`).
    """
    wanted = needs(upstream)
    if not wanted.any:
        return ()
    warnings: list[TranslationWarning] = []
    first = start + current_turn_start(messages[start:]) if start else current_turn_start(messages)
    for index in range(first, len(messages)):
        message = messages[index]
        if message.role != "assistant" or _carries_reasoning(message):
            continue
        for key in _wanted_keys((message,), wanted):
            kind, call_id = key.partition(":")[0], _call_id_of(key)
            what = "thought signature of call" if kind == "sig" else "reasoning of the step of call"
            text = f"the {what} {call_id} is in neither the request nor the vault: sent without it"
            location = f"messages[{index}]"
            warnings.append(TranslationWarning(code="vault_miss", location=location, message=text))
    return tuple(warnings)


def _carries_reasoning(message: Message) -> bool:
    return any(
        isinstance(part, ReasoningPart) and part.opaque is not None for part in message.parts
    )


def restore_messages(
    messages: Sequence[Message], found: dict[str, JsonValue]
) -> tuple[Message, ...]:
    """``messages`` with the ``found`` entries put back (each message from its own keys)."""
    return tuple(
        _restore_message(message, found)
        if message.role == "assistant" and message.tool_calls
        else message
        for message in messages
    )
