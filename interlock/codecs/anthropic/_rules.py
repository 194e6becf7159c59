"""Anthropic's request rules as a pure pre-flight, with the service's own error strings.

:func:`find_violation` checks a wire request body the way the Messages API does, in a fixed
order (envelope, thinking settings, roles, content, tool pairing, thinking blocks), and
returns the first :class:`Violation` (each message's block list is built once and read by
every check). The encoder runs it on every body it builds, so a
history Anthropic would reject is refused before anything is sent; the emulator runs it
(with its own signature check) to answer like the service.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, cast

from interlock.transcript import JsonObject, JsonValue

_ID_PATTERN: Final = re.compile(r"^[a-zA-Z0-9_-]+$")
_THINKING_DOCS: Final = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
_THINKING_TYPES: Final = ("thinking", "redacted_thinking")

SignatureCheck = Callable[[JsonObject], bool]
"""Whether a ``thinking`` block's signature is genuine (the emulator's own check)."""


@dataclass(frozen=True, slots=True)
class Violation:
    """A rule the request breaks: HTTP status, Anthropic error type, message, request path."""

    message: str
    path: str = ""
    status: int = 400
    type: str = "invalid_request_error"


def _any_signature(block: JsonObject) -> bool:
    return bool(block.get("signature"))


def find_violation(
    payload: JsonObject,
    *,
    signature_valid: SignatureCheck = _any_signature,
    final_prefill: bool = False,
) -> Violation | None:
    """The first rule ``payload`` breaks, or ``None``.

    ``final_prefill=True`` leaves a final assistant message (a prefill, whose rules differ
    per model) to the service: its ``tool_use`` blocks need no answer here.
    """
    found = _envelope(payload) or _thinking_settings(payload)
    if found is not None:
        return found
    messages = _messages(payload)
    found = _roles(payload, messages)
    if found is not None:
        return found
    blocks = [_blocks(message) for message in messages]  # once: every check reads them
    found = _content(messages, blocks) or _pairing(payload, messages, blocks, final_prefill)
    if found is not None:
        return found
    return _thinking_blocks(payload, messages, blocks, signature_valid)


def _messages(payload: JsonObject) -> list[JsonObject]:
    value = payload.get("messages")
    items = cast(list[JsonValue], value) if isinstance(value, list) else []
    return [item for item in items if isinstance(item, dict)]


def _blocks(message: JsonObject) -> list[JsonObject]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    items = cast(list[JsonValue], content) if isinstance(content, list) else []
    return [item for item in items if isinstance(item, dict)]


def _thinking(payload: JsonObject) -> JsonObject:
    value = payload.get("thinking")
    return value if isinstance(value, dict) else {}


def _envelope(payload: JsonObject) -> Violation | None:
    for name in ("model", "max_tokens", "messages"):
        if name not in payload:
            return Violation(f"{name}: Field required", name)
    if not isinstance(payload.get("model"), str):
        return Violation("model: Input should be a valid string", "model")
    max_tokens = payload.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        return Violation("max_tokens: Input should be a valid integer", "max_tokens")
    if not isinstance(payload.get("messages"), list):
        return Violation("messages: Input should be a valid list", "messages")
    if not payload["messages"]:
        return Violation("messages: at least one message is required", "messages")
    return None


def _thinking_settings(payload: JsonObject) -> Violation | None:
    thinking = _thinking(payload)
    kind = thinking.get("type")
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1024:
            return Violation(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
                "thinking.budget_tokens",
            )
        max_tokens = payload.get("max_tokens")
        if isinstance(max_tokens, int) and max_tokens <= budget:
            return Violation(
                "`max_tokens` must be greater than `thinking.budget_tokens`.", "max_tokens"
            )
    choice = payload.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    if kind in ("enabled", "adaptive") and forced:
        return Violation(
            "Thinking may not be enabled when tool_choice forces tool use.", "tool_choice"
        )
    return None


def _roles(payload: JsonObject, messages: list[JsonObject]) -> Violation | None:
    if len(messages) != len(cast(list[JsonValue], payload["messages"])):
        return Violation("messages: Input should be a valid list of messages", "messages")
    previous: JsonValue = None
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            return Violation(
                f"messages.{index}.role: Input should be 'user', 'assistant' or 'system'",
                f"messages.{index}.role",
            )
        if index == 0 and role != "user":
            return Violation('messages: first message must use the "user" role', "messages.0")
        if role == previous:
            return Violation(
                'messages: roles must alternate between "user" and "assistant", but found '
                f'multiple "{role}" roles in a row',
                f"messages.{index}",
            )
        previous = role
    return None


def _content(messages: list[JsonObject], blocks_of: list[list[JsonObject]]) -> Violation | None:
    last = len(messages) - 1
    for index, blocks in enumerate(blocks_of):
        if not blocks and not (index == last and messages[index].get("role") == "assistant"):
            return Violation(
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message",
                f"messages.{index}",
            )
        for block in blocks:
            if block.get("type") == "text" and not block.get("text"):
                return Violation(
                    "messages: text content blocks must be non-empty", f"messages.{index}"
                )
    return None


def _pairing(
    payload: JsonObject,
    messages: list[JsonObject],
    blocks_of: list[list[JsonObject]],
    final_prefill: bool,
) -> Violation | None:
    seen: set[str] = set()
    uses_tools = False
    previous: set[str] = set()
    """The ``tool_use`` ids of the message before, when it is an assistant's."""
    for index, blocks in enumerate(blocks_of):
        if messages[index].get("role") == "assistant":
            found = _tool_uses(blocks, index, seen)
            if isinstance(found, Violation):
                return found
            uses_tools = uses_tools or bool(found)
            after = index + 1
            answer = (messages[after], blocks_of[after]) if after < len(messages) else None
            missing = [] if answer is None and final_prefill else _unanswered(found, answer)
            if missing:
                return Violation(
                    f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message.",
                    f"messages.{index}",
                )
            previous = set(found)  # every tool_use block's id (a bad one returned above)
            continue
        for position, block in enumerate(blocks):
            if block.get("type") != "tool_result":
                continue
            uses_tools = True
            if str(block.get("tool_use_id")) not in previous:
                return Violation(
                    f"messages.{index}.content.{position}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` block "
                    "must have a corresponding `tool_use` block in the previous message.",
                    f"messages.{index}.content.{position}",
                )
        previous = set()
    if uses_tools and not payload.get("tools"):
        return Violation(
            "Requests which include `tool_use` or `tool_result` blocks must define tools."
        )
    return None


def _tool_uses(blocks: list[JsonObject], index: int, seen: set[str]) -> list[str] | Violation:
    ids: list[str] = []
    for position, block in enumerate(blocks):
        if block.get("type") != "tool_use":
            continue
        call_id = block.get("id")
        where = f"messages.{index}.content.{position}"
        if not isinstance(call_id, str) or not _ID_PATTERN.match(call_id):
            return Violation(
                f"{where}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
                f"{where}.id",
            )
        if call_id in seen:
            return Violation(f"{where}: `tool_use` ids must be unique", where)
        seen.add(call_id)
        ids.append(call_id)
    return ids


def _unanswered(ids: list[str], answer: tuple[JsonObject, list[JsonObject]] | None) -> list[str]:
    """The ids the leading ``tool_result`` blocks of the next message (and its blocks) do
    not answer."""
    if not ids:
        return ids
    answered: set[str] = set()
    if answer is not None and answer[0].get("role") == "user":
        for block in answer[1]:
            if block.get("type") != "tool_result":
                break
            answered.add(str(block.get("tool_use_id")))
    return [call_id for call_id in ids if call_id not in answered]


def _thinking_blocks(
    payload: JsonObject,
    messages: list[JsonObject],
    blocks_of: list[list[JsonObject]],
    signature_valid: SignatureCheck,
) -> Violation | None:
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for position, block in enumerate(blocks_of[index]):
            if block.get("type") != "thinking":
                continue
            where = f"messages.{index}.content.{position}"
            if "signature" not in block:
                return Violation(f"{where}.thinking.signature: Field required", where)
            if not signature_valid(block):
                return Violation(f"{where}: Invalid `signature` in `thinking` block", where)
    if _thinking(payload).get("type") == "enabled":
        return _leading_thinking(messages, blocks_of)
    return None


def _leading_thinking(
    messages: list[JsonObject], blocks_of: list[list[JsonObject]]
) -> Violation | None:
    """With manual thinking, the final assistant turn of an open tool loop starts with thinking."""
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return None
    answer = blocks_of[-1]
    if not answer or answer[0].get("type") != "tool_result":
        return None
    index = len(messages) - 2
    blocks = blocks_of[index]
    first = blocks[0].get("type") if blocks else None
    if first in _THINKING_TYPES:
        return None
    return Violation(
        f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{first}`. When `thinking` is enabled, a final `assistant` message must start with a "
        "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
        "We recommend you include thinking blocks from previous turns. To avoid this "
        f"requirement, disable `thinking`. Please consult our documentation at {_THINKING_DOCS}",
        f"messages.{index}.content.0",
    )
