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
* **Anthropic** is not here: its encoder checks the whole body (the first message must be
  a user turn, roles alternate, ``tool_use`` ids unique across the history), so new
  messages starting with an assistant turn do not encode alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from interlock.transcript import (
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
}
"""Upstream dialects whose kept translations are spliced, and their history member."""

NO_HEAD_MEMBERS: dict[str, tuple[str, ...]] = {"openai-responses": ("instructions",)}
"""Members an upstream body takes from the first messages that the new messages' body
would not carry: a translation holding one is not kept."""

LEAD_MEMBERS: dict[str, str] = {"gemini": "systemInstruction"}
"""Members an upstream body takes from the leading system messages: the new messages are
encoded after those messages, and the member must equal the kept translation's."""

_PLAIN_PARTS = (TextPart, ReasoningPart, ToolCallPart, ToolResultPart)


def splices_alone(dialect: str, new: Sequence[Message], prefix_calls: frozenset[str]) -> bool:
    """True when ``new`` (restored or not: the vault adds reasoning and signatures only)
    encodes alone, for ``dialect``, as after a prefix whose call ids are ``prefix_calls``,
    and cannot change the prefix's encoding."""
    if not new:
        return False
    for message in new:
        if message.role not in ("assistant", "tool") or message.name:
            return False
        if not all(type(part) in _PLAIN_PARTS for part in message.parts):
            return False
    if dialect == "gemini":
        return _gemini_alone(new, prefix_calls)
    return True


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
    """The prefix's leading system and developer messages, for a dialect that takes a
    member from them (:data:`LEAD_MEMBERS`); else none."""
    if dialect not in LEAD_MEMBERS:
        return ()
    count = 0
    for message in prefix:
        if message.role not in ("system", "developer"):
            break
        count += 1
    return tuple(prefix[:count])
