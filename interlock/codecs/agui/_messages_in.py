"""Inbound AG-UI messages → transcript messages.

Mapping (AG-UI role → canonical):

- ``user``/``system``/``developer``: text and media parts; ``name`` kept.
- ``reasoning``: a :class:`ReasoningPart` whose sealed ``encryptedValue`` is verified and
  unsealed (the seal restores its kind and item id; without one, the ``interlock``
  metadata labels do, else it is a ``summary``). A run of reasoning messages joins the
  assistant message that follows it (that is how the encoder split one model step), else
  it stands alone as an assistant message.
- ``assistant``: text (its ``encryptedValue`` is the text's signature; a content layout
  label splits it back into its text and refusal parts), then tool calls (a tool call's
  ``encryptedValue`` is its signature; a ``hosted`` label restores the owner). A
  synthetic ``confirm_changes`` call becomes the :class:`ApprovalRequestPart` it surfaced.
- ``tool``: a :class:`ToolResultPart`; content is kept as text byte for byte (never
  re-serialized), ``error`` marks the outcome ``failed`` (an ``outcome`` label says which
  failure). An answer to a synthetic
  ``confirm_changes`` call becomes a ``user`` message with an :class:`ApprovalResponsePart`.
- ``activity``: UI-only; skipped (the official client never sends them).

AG-UI ids go to ``Message.id`` and, for reasoning, to ``extra["agui"]["messageId"]``.
The codec's own labels (``metadata["interlock"]``, see ``_labels``) are read, never kept
in ``extra``; the rest of a message's ``metadata`` is kept there.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
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
from interlock.codecs.agui._labels import (
    read_call_labels,
    read_layout,
    read_reasoning_labels,
    read_result_labels,
    split_labels,
)
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
    RefusalPart,
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

    def opaque(self, value: str, path: str) -> Opaque:
        """The opaque payload of :meth:`open` (attributes ignored)."""
        return self.open(value, path)[0]


def _message_extra(message: AguiMessage, path: str) -> tuple[dict[str, JsonObject], JsonObject]:
    """``(extra, labels)``: the message's own fields for ``extra``, and this codec's labels."""
    if message.metadata is None and message.subagent_run_id is None:
        return {}, {}
    labels, rest = split_labels(cast(JsonValue, message.metadata), f"{path}.metadata")
    own = without_none({"metadata": rest, "subagentRunId": message.subagent_run_id})
    return ({DIALECT: own} if own else {}), labels


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
    extra, labels = _message_extra(message, path)
    own: JsonObject = {"messageId": message.id, **extra.get(DIALECT, {})}
    if message.encrypted_value is None:
        kind, item_id = read_reasoning_labels(labels, path)
        return ReasoningPart(
            reasoning_kind=kind, text=message.content, item_id=item_id, extra={DIALECT: own}
        )
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
    labels, rest = split_labels(cast(JsonValue, call.metadata), f"{path}.metadata")
    hosted, server_label = read_call_labels(labels, path)
    approval_id = parse_confirm_changes_call_id(call.id)
    if approval_id is not None and call.function.name == CONFIRM_CHANGES_TOOL:
        request = _confirmation_request(approval_id, call.function.arguments, f"{path}.function")
        if not hosted:
            return request
        hosted_call = replace(request.call, owner="hosted", server_label=server_label)
        return replace(request, call=hosted_call)
    signature = None
    if call.encrypted_value is not None:
        signature = seals.opaque(call.encrypted_value, f"{path}.encryptedValue")
    own: JsonObject = {} if rest is None else {"metadata": rest}
    client = call.function.name in client_tools
    return ToolCallPart(
        call_id=call.id,
        name=call.function.name,
        arguments=call.function.arguments,
        owner="hosted" if hosted else "client" if client else "local",
        server_label=server_label,
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
    extra, labels = _message_extra(message, path)
    parts: list[Part] = [*reasoning, *_assistant_texts(message, labels, path, seals)]
    for index, call in enumerate(message.tool_calls or ()):
        parts.append(_tool_call_part(call, f"{path}.toolCalls[{index}]", seals, client_tools))
    return Message(
        role="assistant", parts=tuple(parts), id=message.id, name=message.name, extra=extra
    )


def _assistant_texts(
    message: AssistantMessage, labels: JsonObject, path: str, seals: SealContext
) -> list[TextPart | RefusalPart]:
    """The text and refusal parts of an assistant message's ``content``.

    Without a layout label, the content is one text part (the message-level
    ``encryptedValue`` its signature). With one, the layout splits it, and a
    message-level signature belongs to its last part (a streamed, signed step).
    """
    content = message.content or ""
    signature = None
    if message.encrypted_value is not None:
        signature = seals.opaque(message.encrypted_value, f"{path}.encryptedValue")
    parts = read_layout(content, labels, path, seals.opaque, refusals=True)
    if parts is None:
        if not content and signature is None:
            return []
        return [TextPart(text=content, signature=signature)]
    if signature is not None:
        last = parts[-1]
        if not isinstance(last, TextPart) or last.signature is not None:
            raise DecodeError(
                f"{path}.encryptedValue", "the content layout's last part is not unsigned text"
            )
        parts[-1] = replace(last, signature=signature)
    return parts


def _tool_message(message: ToolMessage, path: str) -> Message:
    approval_id = parse_confirm_changes_call_id(message.tool_call_id)
    extra, labels = _message_extra(message, path)
    own = {"messageId": message.id, **extra.get(DIALECT, {})}
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
        outcome=read_result_labels(labels, path, has_error=message.error is not None),
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
        converted = _other_message(message, path, seals)
        if converted is not None:
            out.append(converted)
    if reasoning:
        out.append(Message(role="assistant", parts=tuple(reasoning), id=reasoning_id))
    return tuple(out)


def _other_message(
    message: UserMessage | SystemMessage | DeveloperMessage | ToolMessage | ActivityMessage,
    path: str,
    seals: SealContext,
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
            extra = _message_extra(message, path)[0]
            return Message(role="user", parts=parts, id=message.id, name=message.name, extra=extra)
        case SystemMessage() | DeveloperMessage():
            _refuse_encrypted(message, path)
            extra, labels = _message_extra(message, path)
            texts = read_layout(message.content, labels, path, seals.opaque, refusals=False)
            return Message(
                role=message.role,
                parts=tuple(texts or (TextPart(text=message.content),)),
                id=message.id,
                name=message.name,
                extra=extra,
            )
        case _:
            assert_never(message)
