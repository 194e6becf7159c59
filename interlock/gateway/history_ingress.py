"""Per ingress dialect: which messages a continuation's new history items add.

The history cache (:mod:`.history_cache`) decodes a continuation's new items on their own
(with the body's other members). That stands for decoding the whole history only when the
new items decode alone exactly as they do after the prefix, and the prefix decodes alone
exactly as it does before them; each rule below says when, and anything else takes the
full path.

* **Chat Completions** (``messages``): one message per item, each decoded from the items
  before it only (a tool result's name, deprecated ``function`` messages):
  :func:`~.history_cache.decodes_alone`.
* **Responses** (``input``): items are folded left to right into messages; an item joins
  the message being built unless it is an input message (user, system, developer) or of
  another *side* than that message (model output, tool output, approval). So the new items
  decode alone as after the prefix exactly when the first of them does not join the message
  the prefix's last item is in, which is checked by decoding those two items together and
  apart (:func:`_starts_a_message`); the prefix then also ends where it ended alone. A
  string ``instructions`` member decodes to a leading system message: the continuation's
  must equal the prefix's (:attr:`Entry.lead`), and it is not a new message.
* **Anthropic** (``messages``): a wire message decodes to one or more messages (a user
  turn splits at its tool results), marked when it repeats the role of the wire message
  before it, and a tool result takes its function name from the call of that id before
  it. So, as for Responses, the first new item must decode after the prefix's last as
  alone (:func:`_starts_a_message`), and, as for Chat, every new tool result answers a
  call among the new items and no new call id is one of the prefix's
  (:func:`~.history_cache.decodes_alone`). The ``system`` member (a string or blocks)
  decodes to a leading system message: it must equal the prefix's, as ``instructions``.
"""

from __future__ import annotations

from interlock.gateway.dialects import Dialect
from interlock.gateway.history_cache import HISTORY_KEYS, Continuation, Entry, decodes_alone
from interlock.transcript import DecodeError, JsonObject, JsonValue, Message, Request

LEAD_MEMBERS: dict[str, str] = {"openai-responses": "instructions", "anthropic": "system"}
"""Per ingress dialect, the member that decodes to one leading system message (Responses:
when a string; Anthropic: whenever present, a string or blocks)."""


def lead_count(ingress: str, payload: JsonObject) -> int:
    """How many leading messages of ``payload``'s decode come from outside its history."""
    member = LEAD_MEMBERS.get(ingress)
    if member is None or member not in payload:
        return 0
    return 1 if ingress == "anthropic" or isinstance(payload[member], str) else 0


def new_messages(
    ingress: Dialect, entry: Entry, suffix: Request, payload: JsonObject
) -> tuple[Message, ...] | None:
    """The messages the new items of a continuation add after ``entry``'s (``suffix`` is
    ``payload`` decoded: the body with only its new items), or ``None`` for the full path."""
    items = payload.get(HISTORY_KEYS[ingress.name])
    held = entry.messages
    if not isinstance(items, list) or not items or held is None:
        return None
    if ingress.name == "openai-chat":
        return suffix.messages if decodes_alone(entry, suffix.messages, items) else None
    lead = lead_count(ingress.name, payload)
    if lead != entry.lead or suffix.messages[:lead] != held[:lead]:
        return None
    if not _starts_a_message(ingress, entry.last_item, items[0]):
        return None
    new = suffix.messages[lead:]
    if ingress.name == "anthropic" and not decodes_alone(entry, new, items):
        return None  # a result naming an earlier call, or a call id the prefix used
    return new


def prefix_count(
    ingress: Dialect,
    continuation: Continuation,
    messages: tuple[Message, ...],
    whole_items: JsonValue,
) -> int | None:
    """How many of ``messages`` (the whole request's decode, from ``whole_items``) are the
    continued prefix's, or ``None`` when the decode cannot be cut there."""
    entry, payload = continuation.entry, continuation.payload
    if ingress.name == "openai-chat":
        # One message per item (checked), each from the items before it: the leading ones.
        count = len(messages) - continuation.new_items
        one_each = isinstance(whole_items, list) and len(whole_items) == len(messages)
        return count if one_each and count > 0 else None
    items = payload.get(HISTORY_KEYS[ingress.name])
    if not isinstance(items, list) or not items:
        return None
    if not _starts_a_message(ingress, entry.last_item, items[0]):
        return None
    try:
        suffix = ingress.decode_request(payload)
    except DecodeError:
        return None
    new = suffix.messages[lead_count(ingress.name, payload) :]
    count = len(messages) - len(new)
    return count if count > 0 and messages[count:] == new else None


def _starts_a_message(ingress: Dialect, last: JsonValue, first: JsonValue) -> bool:
    """True when ``first`` decodes after ``last`` as it does alone (starts a message)."""
    if last is None:
        return False
    pairs: list[list[JsonValue]] = [[last, first], [last], [first]]
    both, alone_last, alone_first = (_decoded(ingress, items) for items in pairs)
    if both is None or alone_last is None or alone_first is None:
        return False
    return both == alone_last + alone_first


def _decoded(ingress: Dialect, items: list[JsonValue]) -> tuple[Message, ...] | None:
    try:
        return ingress.decode_request({HISTORY_KEYS[ingress.name]: items}).messages
    except DecodeError:
        return None
