"""Inbound AG-UI messages → transcript messages.

Mapping (AG-UI role → canonical):

- ``user``/``system``/``developer``: text and media parts; ``name`` kept.
- ``reasoning``: a :class:`ReasoningPart` whose sealed ``encryptedValue`` is verified and
  unsealed. A run of reasoning messages joins the assistant message that follows it (that
  is how the encoder split one model step), else it stands alone as an assistant message.
- ``assistant``: text (its ``encryptedValue`` is the text's signature), then tool calls
  (a tool call's ``encryptedValue`` is its signature). A synthetic ``confirm_changes``
  call becomes the :class:`ApprovalRequestPart` it surfaced.
- ``tool``: a :class:`ToolResultPart`; content is kept as text byte for byte (never
  re-serialized), ``error`` marks the outcome ``failed``. An answer to a synthetic
  ``confirm_changes`` call becomes a ``user`` message with an :class:`ApprovalResponsePart`.
- ``activity``: UI-only; skipped (the official client never sends them).

AG-UI ids go to ``Message.id`` and, for reasoning, to ``extra["agui"]["messageId"]``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import assert_never, cast

from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    DeveloperMessage,
    ReasoningMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ag_ui.core import Message as AguiMessage

from interlock.codecs.agui._approvals import decode_confirm_answer
from interlock.codecs.agui._ids import CONFIRM_CHANGES_TOOL, parse_confirm_changes_call_id
from interlock.codecs.agui._seal import SealError, open_sealed
from interlock.codecs.agui._wire import (
    DIALECT,
    AguiContentPart,
    compact_json,
    content_part_to_part,
    without_none,
)
from interlock.transcript import (
    ApprovalRequestPart,
    DecodeError,
    JsonObject,
    JsonValue,
    MediaPart,
    Message,
    Opaque,
    Part,
    ReasoningKind,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

_REASONING_KINDS: dict[str, ReasoningKind] = {
    "raw": "raw",
    "summary": "summary",
    "encrypted": "encrypted",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SealContext:
    """What unsealing needs: the server's key and the tenant the values were issued to."""

    key: bytes | None
    tenant: str

    def open(self, value: str, path: str) -> tuple[Opaque, dict[str, str]]:
        """Verify and unseal ``value`` found at ``path``; raises :class:`SealError`."""
        if self.key is None:
            raise SealError("bad_key", "no seal key is configured", path=path)
        try:
            unsealed = open_sealed(value, key=self.key, tenant=self.tenant)
        except SealError as error:
            raise error.at(path) from None
        return unsealed.opaque, dict(unsealed.attributes)


def _message_extra(message: AguiMessage) -> dict[str, JsonObject]:
    if message.metadata is None and message.subagent_run_id is None:
        return {}
    own = without_none(
        {
            "metadata": cast(JsonValue, message.metadata),
            "subagentRunId": message.subagent_run_id,
        }
    )
    return {DIALECT: own} if own else {}


def _refuse_encrypted(message: AguiMessage, path: str) -> None:
    if not isinstance(message, ActivityMessage) and message.encrypted_value is not None:
        raise DecodeError(
            f"{path}.encryptedValue",
            "only reasoning and assistant messages and tool calls carry encrypted values",
        )


def _content_parts(content: str | list[AguiContentPart]) -> tuple[TextPart | MediaPart, ...]:
    if isinstance(content, str):
        return (TextPart(text=content),)
    return tuple(content_part_to_part(part) for part in content)


def _reasoning_part(message: ReasoningMessage, path: str, seals: SealContext) -> ReasoningPart:
    own: JsonObject = {"messageId": message.id, **_message_extra(message).get(DIALECT, {})}
    if message.encrypted_value is None:
        return ReasoningPart(reasoning_kind="summary", text=message.content, extra={DIALECT: own})
    opaque, attributes = seals.open(message.encrypted_value, f"{path}.encryptedValue")
    default: ReasoningKind = "summary" if message.content else "encrypted"
    return ReasoningPart(
        reasoning_kind=_REASONING_KINDS.get(attributes.get("kind", ""), default),
        text=message.content,
        opaque=opaque,
        item_id=attributes.get("itemId"),
        extra={DIALECT: own},
    )


def _tool_call_part(
    call: ToolCall, path: str, seals: SealContext, client_tools: Collection[str]
) -> ToolCallPart | ApprovalRequestPart:
    approval_id = parse_confirm_changes_call_id(call.id)
    if approval_id is not None and call.function.name == CONFIRM_CHANGES_TOOL:
        return _confirmation_request(approval_id, call.function.arguments, f"{path}.function")
    signature = None
    if call.encrypted_value is not None:
        signature, _ = seals.open(call.encrypted_value, f"{path}.encryptedValue")
    own: JsonObject = {} if call.metadata is None else {"metadata": cast(JsonValue, call.metadata)}
    return ToolCallPart(
        call_id=call.id,
        name=call.function.name,
        arguments=call.function.arguments,
        owner="client" if call.function.name in client_tools else "local",
        signature=signature,
        extra={DIALECT: own} if own else {},
    )


def _confirmation_request(approval_id: str, arguments: str, path: str) -> ApprovalRequestPart:
    try:
        parsed = json.loads(arguments)
    except ValueError as error:
        raise DecodeError(f"{path}.arguments", "confirm_changes arguments are not JSON") from error
    fields = cast(JsonObject, parsed) if isinstance(parsed, dict) else {}
    name, call_id = fields.get("function_name"), fields.get("function_call_id")
    if not isinstance(name, str) or not isinstance(call_id, str):
        raise DecodeError(
            f"{path}.arguments", "confirm_changes arguments name no function_name/function_call_id"
        )
    original = fields.get("function_arguments", {})
    text = original if isinstance(original, str) else compact_json(original)
    call = ToolCallPart(call_id=call_id, name=name, arguments=text)
    return ApprovalRequestPart(approval_id=approval_id, call=call)


def _assistant_message(
    message: AssistantMessage,
    reasoning: list[Part],
    path: str,
    seals: SealContext,
    client_tools: Collection[str],
) -> Message:
    parts: list[Part] = list(reasoning)
    if message.content or message.encrypted_value is not None:
        signature = None
        if message.encrypted_value is not None:
            signature, _ = seals.open(message.encrypted_value, f"{path}.encryptedValue")
        parts.append(TextPart(text=message.content or "", signature=signature))
    for index, call in enumerate(message.tool_calls or ()):
        parts.append(_tool_call_part(call, f"{path}.toolCalls[{index}]", seals, client_tools))
    return Message(
        role="assistant",
        parts=tuple(parts),
        id=message.id,
        name=message.name,
        extra=_message_extra(message),
    )


def _tool_message(message: ToolMessage, path: str) -> Message:
    approval_id = parse_confirm_changes_call_id(message.tool_call_id)
    own = {"messageId": message.id, **_message_extra(message).get(DIALECT, {})}
    if approval_id is not None:
        if not isinstance(message.content, str):
            raise DecodeError(f"{path}.content", "a confirm_changes answer is a JSON string")
        answer = decode_confirm_answer(approval_id, message.content, f"{path}.content", own)
        return Message(role="user", parts=(answer,), id=message.id)
    if message.error is not None:
        own["error"] = message.error
    result = ToolResultPart(
        call_id=message.tool_call_id,
        output=_content_parts(message.content),
        outcome="failed" if message.error is not None else "success",
        extra={DIALECT: own},
    )
    return Message(role="tool", parts=(result,), id=message.id)


def decode_messages(
    messages: Sequence[AguiMessage], seals: SealContext, client_tools: Collection[str]
) -> tuple[Message, ...]:
    """Validated AG-UI messages as transcript messages (see the module docstring)."""
    out: list[Message] = []
    reasoning: list[Part] = []
    reasoning_id: str | None = None
    for index, message in enumerate(messages):
        path = f"messages[{index}]"
        if isinstance(message, ReasoningMessage):
            reasoning.append(_reasoning_part(message, path, seals))
            reasoning_id = reasoning_id or message.id
            continue
        if isinstance(message, AssistantMessage):
            out.append(_assistant_message(message, reasoning, path, seals, client_tools))
            reasoning, reasoning_id = [], None
            continue
        if reasoning:
            out.append(Message(role="assistant", parts=tuple(reasoning), id=reasoning_id))
            reasoning, reasoning_id = [], None
        converted = _other_message(message, path)
        if converted is not None:
            out.append(converted)
    if reasoning:
        out.append(Message(role="assistant", parts=tuple(reasoning), id=reasoning_id))
    return tuple(out)


def _other_message(
    message: UserMessage | SystemMessage | DeveloperMessage | ToolMessage | ActivityMessage,
    path: str,
) -> Message | None:
    match message:
        case ActivityMessage():
            return None
        case ToolMessage():
            _refuse_encrypted(message, path)
            return _tool_message(message, path)
        case UserMessage():
            _refuse_encrypted(message, path)
            parts = _content_parts(message.content)
            return Message(
                role="user",
                parts=parts,
                id=message.id,
                name=message.name,
                extra=_message_extra(message),
            )
        case SystemMessage() | DeveloperMessage():
            _refuse_encrypted(message, path)
            return Message(
                role=message.role,
                parts=(TextPart(text=message.content),),
                id=message.id,
                name=message.name,
                extra=_message_extra(message),
            )
        case _:
            assert_never(message)
