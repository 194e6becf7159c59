"""When a kept translation of a history prefix stands for the prefix in a longer history.

:mod:`.translation_cache` writes a continued history's upstream body as the prefix's kept
items followed by the new messages encoded on their own. That is the body the full path
would send only where the upstream's encoding of the prefix cannot change because of what
follows it, and the new messages encode alone as they would after the prefix. The rules
here say when, per upstream dialect; anything they do not admit takes the full path.

Common to every dialect (:func:`splices_alone`): the new messages are assistant steps and
tool results made of text, reasoning, calls and results, without a participant name: no
user, system or developer message (so the *current turn*, which starts after the last
user message, stays where it was and every new message is in it, as when encoded alone),
no approval (approval ids are looked up across the history), nothing carrying a refusal
or media. Whatever an encoder checks across the whole history (Chat's tool pairing) is
checked on the new messages alone: a prefix that was sent passed it, and a valid run of
new messages that starts with an assistant message cannot break it at the join.

Per dialect:

* **Responses** (``input``): one run of items per message (``encode_message``); the
  leading ``instructions`` member comes from the first messages, so a translation holding
  one is not kept (:data:`NO_HEAD_MEMBERS`).
* **Chat Completions** (``messages``): one or more wire messages per canonical message,
  each from that message alone, given the current turn and approval ids (both unchanged,
  above); pairing as above (a new tool result answering a call of the prefix is an orphan
  alone: the full path).
* **Gemini** (``contents``): a content per message, except that consecutive tool messages
  (or a message marked to continue the last content) are merged into one content, and a
  tool result takes its function name from the call before it. So the first new message
  is an assistant message with a call or text (it opens a content of its own), no new
  message carries Gemini marks, tool messages hold results only (no plain user content:
  the current turn stays where it was), every new result answers a call made earlier
  among the new messages, and no new call id is one of the prefix's (the encoder's
  call names, minted and hosted ids then come from the new messages alone). The leading
  system messages become ``systemInstruction``: the new messages are encoded after them
  (:func:`lead`), and that member must come out exactly as the prefix's translation had
  it (:data:`LEAD_MEMBERS`).
* **Anthropic** (``messages``): consecutive canonical messages of one wire role (user for
  user and tool messages) merge into one wire message, a message that lost every block is
  left out and its neighbours merge, and the encoder checks the whole body (the first
  message a user turn, roles alternate, ``tool_use`` ids unique, every ``tool_use``
  answered in the next message and every ``tool_result`` answering the one before, the
  tools declared when any is used, thinking blocks signed, and with manual thinking the
  open tool loop's assistant turn starting with thinking). So the new messages are
  encoded after a *bridge* (:data:`BRIDGE`), a user message whose wire message must come
  out first and exactly as :data:`BRIDGE_ITEM` and is dropped (:func:`without_bridge`):
  it stands for the prefix's last wire message, which must be a user turn that nothing
  new merges into. The rules (:func:`_anthropic_alone`): the prefix's last message is a
  user or tool message (no wire-role mark) holding a part that always encodes to a block
  (a tool result, or text that is not empty), so its wire message is a non-empty user
  turn, last after every merge and drop; the first new message is an assistant message;
  no new ``tool_use`` id is one of the prefix's call ids. Then every rule the encoder
  checks holds for the whole body exactly when it holds for the bridged one: the prefix
  passed them (a kept translation carries no warning, so no degrade fix was applied
  either) and ends with a complete user turn, so alternation, pairing and emptiness
  join there; ids are unique across (above); the tools are the kept translation's
  (:attr:`.translation_cache.Translation.key`); the leading-thinking rule reads the last
  two wire messages, which are both new ones, or (one new wire message, an assistant's)
  applies to neither body. The new messages are all in the current turn either way (the
  bridge's text opens a turn, as the prefix's last user message did; no new message is a
  user message), so the same signatures are replayed. The leading system messages become
  ``system`` (any later one is kept in place or moved with a warning):
  :data:`LEAD_MEMBERS`, as for Gemini.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from interlock.transcript import (
    JsonObject,
    JsonValue,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

SPLICES: dict[str, str] = {
    "openai-responses": "input",
    "openai-chat": "messages",
    "gemini": "contents",
    "anthropic": "messages",
}
"""Upstream dialects whose kept translations are spliced, and their history member."""

NO_HEAD_MEMBERS: dict[str, tuple[str, ...]] = {"openai-responses": ("instructions",)}
"""Members an upstream body takes from the first messages that the new messages' body
would not carry: a translation holding one is not kept."""

LEAD_MEMBERS: dict[str, str] = {"gemini": "systemInstruction", "anthropic": "system"}
"""Members an upstream body takes from the leading system messages: the new messages are
encoded after those messages, and the member must equal the kept translation's."""

_PLAIN_PARTS = (TextPart, ReasoningPart, ToolCallPart, ToolResultPart)

BRIDGE_TEXT: Final = "(continued)"
BRIDGE: dict[str, Message] = {
    "anthropic": Message(role="user", parts=(TextPart(text=BRIDGE_TEXT),)),
}
"""Per dialect whose encoder checks the whole body, the message the new messages are
encoded after (it stands for the prefix's end); its history item is dropped."""
BRIDGE_ITEM: dict[str, JsonObject] = {
    "anthropic": {"role": "user", "content": [{"type": "text", "text": BRIDGE_TEXT}]},
}
"""The history item :data:`BRIDGE`'s message must encode to, first, or nothing is spliced."""


def splices_alone(
    dialect: str,
    new: Sequence[Message],
    prefix_calls: frozenset[str],
    last: Message | None = None,
) -> bool:
    """True when ``new`` (restored or not: the vault adds reasoning and signatures only)
    encodes alone, for ``dialect``, as after a prefix whose call ids are ``prefix_calls``
    and whose last message is ``last``, and cannot change the prefix's encoding."""
    if not new:
        return False
    for message in new:
        if message.role not in ("assistant", "tool") or message.name:
            return False
        if not all(type(part) in _PLAIN_PARTS for part in message.parts):
            return False
    if dialect == "gemini":
        return _gemini_alone(new, prefix_calls)
    if dialect == "anthropic":
        return _anthropic_alone(new, prefix_calls, last)
    return True


def _anthropic_alone(
    new: Sequence[Message], prefix_calls: frozenset[str], last: Message | None
) -> bool:
    if last is None or last.role not in ("user", "tool") or new[0].role != "assistant":
        return False
    marks = last.extra.get("anthropic")
    if isinstance(marks, dict) and "role" in marks:
        return False  # sent in another wire role than its own
    if not any(
        type(part) is ToolResultPart or (type(part) is TextPart and part.text)
        for part in last.parts
    ):
        return False
    return not any(part.call_id in prefix_calls for message in new for part in message.tool_calls)


def _gemini_alone(new: Sequence[Message], prefix_calls: frozenset[str]) -> bool:
    first = new[0]
    if first.role != "assistant" or not any(
        type(part) in (TextPart, ToolCallPart) for part in first.parts
    ):
        return False
    calls: set[str] = set()
    for message in new:
        if "gemini" in message.extra:
            return False
        if message.role == "tool" and not all(
            type(part) is ToolResultPart for part in message.parts
        ):
            return False
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                if part.call_id in prefix_calls or part.owner == "hosted":
                    return False
                calls.add(part.call_id)
            elif isinstance(part, ToolResultPart) and part.call_id not in calls:
                return False
    return True


def lead(dialect: str, prefix: Sequence[Message]) -> tuple[Message, ...]:
    """What the new messages are encoded after: the prefix's leading system and developer
    messages, for a dialect that takes a member from them (:data:`LEAD_MEMBERS`), then the
    dialect's :data:`BRIDGE`; else none."""
    bridge = (BRIDGE[dialect],) if dialect in BRIDGE else ()
    if dialect not in LEAD_MEMBERS:
        return bridge
    count = 0
    for message in prefix:
        if message.role not in ("system", "developer"):
            break
        count += 1
    return tuple(prefix[:count]) + bridge


def without_bridge(dialect: str, items: list[JsonValue]) -> list[JsonValue] | None:
    """The history items of an encoding after :func:`lead` without the bridge's item;
    ``None`` when it is not exactly :data:`BRIDGE_ITEM` (something new merged into it)."""
    if dialect not in BRIDGE:
        return items
    if not items or items[0] != BRIDGE_ITEM[dialect]:
        return None
    return items[1:]
