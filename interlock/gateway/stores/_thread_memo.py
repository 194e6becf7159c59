"""What a process remembers of the threads it last loaded or saved, so a run on a long
thread does not parse or serialize the whole transcript again.

A thread is stored as one JSON text (``ThreadRecord.to_document`` written compactly, see
:mod:`._store`); every run loads it, appends a few messages and saves it whole. The memo
keeps, per thread key, the text this process last read or wrote (``raw``), the record it
is (``messages`` parsed from or serialized into ``raw``) and the JSON text of each message.
Then:

- a load whose stored text equals ``raw`` returns the remembered messages without parsing
  (state and interrupts are parsed again from their own short texts: callers may change
  those objects, never the frozen messages);
- a save serializes only the messages that are not, by identity, the remembered ones at
  the same position, and joins the texts: the result is character for character what
  serializing the whole document gives (``NaN`` stays ``NaN``, non-ASCII stays as is).

The stored form, the compare-and-set on the whole text and so what another process or a
crash can observe are unchanged: the memo only saves work, and a stored text it has not
seen (written elsewhere) is parsed as before. Memory: at most ``max_chars`` characters of
remembered texts, least recently used threads forgotten first.
"""

from __future__ import annotations

import json
import operator
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from interlock.transcript import TRANSCRIPT_VERSION, JsonValue, Message, Part, TextPart, to_json

MAX_CHARS = 16 * 1024 * 1024
"""Characters of thread texts one process remembers, each counted twice (its text and its
messages' texts); the parsed messages it keeps come on top."""


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact(value: JsonValue) -> str:
    """JSON text as the store writes it: compact separators, non-ASCII kept (what
    ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` gives, without
    building an encoder per call; an empty object or array without the encoder at all:
    a new thread's state and interrupts)."""
    if not value and type(value) in _EMPTY:
        return _EMPTY[type(value)]
    return _COMPACT.encode(value)


_EMPTY: dict[type, str] = {dict: "{}", list: "[]"}


def message_text(message: Message) -> str:
    """``compact(to_json(message))``, written by orjson for a message of plain text parts.

    orjson writes strings (every character escaped as ``json`` escapes it with
    ``ensure_ascii=False``), integers up to 64 bits, booleans and ``null`` exactly as
    ``json`` does; only floats are spelled differently, and a message whose parts are
    all bare :class:`TextPart` (no signature, citations, log-probabilities or extras) and
    whose own extras are empty holds none. A lone surrogate (orjson refuses it) and every
    other message go through :func:`compact`.
    """
    value = to_json(message)
    if not message.extra and all(map(_bare_text, message.parts)):
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # orjson.JSONEncodeError: a lone surrogate
            pass
    return compact(value)


def _bare_text(part: Part) -> bool:
    return (
        type(part) is TextPart
        and part.signature is None
        and not part.citations
        and not part.logprobs
        and not part.extra
    )


def thread_text(messages: Sequence[str], state: str, interrupts: str) -> str:
    """The stored text of a thread from its parts' texts (what :func:`compact` of
    ``ThreadRecord.to_document()`` writes)."""
    return "".join(
        (
            f'{{"transcript":{{"version":{TRANSCRIPT_VERSION},"messages":[',
            ",".join(messages),
            ']},"state":',
            state,
            ',"pending_interrupts":',
            interrupts,
            "}",
        )
    )


def identical_prefix(before: Sequence[object], after: Sequence[object]) -> int:
    """How many leading items of ``after`` are the very objects of ``before`` (by
    identity, checked at C speed when the whole shorter sequence is)."""
    count = min(len(before), len(after))
    if all(map(operator.is_, before[:count], after[:count])):
        return count
    return next(index for index in range(count) if before[index] is not after[index])


@dataclass(frozen=True, slots=True)
class Remembered:
    """One thread as last read or written: its stored text, messages and their texts
    (``texts`` covers a prefix of ``messages``, empty after a load), state and
    interrupts as text."""

    raw: str
    messages: tuple[Message, ...]
    texts: tuple[str, ...]
    state: str
    interrupts: str


class ThreadMemo:
    """Per thread key, the :class:`Remembered` form last read or written (LRU, bounded)."""

    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self.max_chars = max_chars
        self._entries: OrderedDict[str, Remembered] = OrderedDict()
        self._chars = 0

    def find(self, key: str, raw: str) -> Remembered | None:
        """The remembered thread if ``raw`` is the text remembered for ``key``."""
        entry = self._entries.get(key)
        if entry is None or (entry.raw is not raw and entry.raw != raw):
            return None
        self._entries.move_to_end(key)
        return entry

    def texts(self, key: str, messages: Sequence[Message]) -> list[str]:
        """Each message's JSON text, reusing the remembered texts of the longest prefix of
        ``messages`` that is the remembered messages (the same objects: messages are
        immutable; equal is not enough, ``1`` and ``1.0`` are equal but written apart)."""
        entry = self._entries.get(key)
        shared = (
            0 if entry is None else identical_prefix(entry.messages[: len(entry.texts)], messages)
        )
        texts = list(entry.texts[:shared]) if entry is not None else []
        texts += [message_text(message) for message in messages[shared:]]
        return texts

    def remember(self, key: str, entry: Remembered) -> None:
        """Remember ``entry`` for ``key`` (replacing what was), forgetting the least
        recently used threads past ``max_chars``; a thread larger than that is not kept."""
        self.forget(key)
        size = 2 * len(entry.raw)
        if size > self.max_chars:
            return
        self._entries[key] = entry
        self._chars += size
        while self._chars > self.max_chars:
            _, oldest = self._entries.popitem(last=False)
            self._chars -= 2 * len(oldest.raw)

    def forget(self, key: str) -> None:
        """Drop what is remembered for ``key``."""
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._chars -= 2 * len(entry.raw)
