"""Where the current turn starts: the only part of a history whose tool calls a model is
still continuing.

Providers validate the reasoning bound to tool calls only there (provider-wire §3.4 for
Gemini, the DeepSeek thinking-mode rules of §2.3; Responses reasoning from earlier turns
is not even rendered to pre-5.6 models, §1.5), so a strict encoder refuses a missing
payload only when its step lies in the current turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from interlock.transcript import JsonPart, MediaPart, Message, TextPart


def current_turn_start(messages: Sequence[Message]) -> int:
    """Index of the first message after the last user message with real content.

    Tool results do not open a turn (Gemini's definition, provider-wire §3.4); the
    messages from here on are the *current turn*. With no such user message, the whole
    history is the current turn (0).
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and any(
            isinstance(part, TextPart | MediaPart | JsonPart) for part in message.parts
        ):
            return index + 1
    return 0
