"""Canonical parts → Responses items (the inverse of ``_items``).

:func:`group_parts` cuts a message's parts into wire items: consecutive text/refusal parts
with the same ``item_id`` form one ``message`` item, consecutive reasoning parts with the
same ``item_id`` one ``reasoning`` item, unless a part carries the ``~item`` boundary
hint; every other part is an item of its own. Parts keep their order, so a reasoning item
stays immediately before the item it belongs to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from interlock.codecs.openai_responses._content import (
    encode_input_part,
    encode_output_part,
    encode_tool_output,
)
from interlock.codecs.openai_responses._items import call_defaults, message_defaults
from interlock.codecs.openai_responses._wire import (
    ITEM,
    hint,
    is_own_opaque,
    merge_fields,
    own,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    JsonObject,
    JsonValue,
    Message,
    OutputPart,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

GroupKind = Literal["message", "reasoning", "single"]


@dataclass(slots=True)
class ItemGroup:
    """The parts of one wire item; ``start`` is the index of the first one in its message."""

    kind: GroupKind
    start: int
    parts: list[Part] = field(default_factory=list[Part])

    @property
    def item_id(self) -> str | None:
        """The wire item id the group's parts carry."""
        return cast(str | None, getattr(self.parts[0], "item_id", None))


def _group_kind(part: Part) -> GroupKind:
    if isinstance(part, TextPart | RefusalPart):
        return "message"
    if isinstance(part, ReasoningPart):
        return "reasoning"
    return "single"


def continues_item(previous: Part | None, part: Part) -> bool:
    """True when ``part`` belongs to the same wire item as ``previous``."""
    if previous is None:
        return False
    kind = _group_kind(part)
    if kind == "single" or kind != _group_kind(previous):
        return False
    if ITEM in own(part.extra):
        return False
    return getattr(previous, "item_id", None) == getattr(part, "item_id", None)


def group_parts(parts: Sequence[Part]) -> list[ItemGroup]:
    """The wire items of a message's parts, in order."""
    groups: list[ItemGroup] = []
    previous: Part | None = None
    for index, part in enumerate(parts):
        if groups and continues_item(previous, part):
            groups[-1].parts.append(part)
        else:
            groups.append(ItemGroup(kind=_group_kind(part), start=index, parts=[part]))
        previous = part
    return groups


def item_fields(part: Part) -> JsonObject:
    """The item-level leftover fields carried by the first part of an item."""
    value = own(part.extra).get(ITEM)
    return cast(JsonObject, value) if isinstance(value, dict) else {}


def _plain(part: TextPart | RefusalPart) -> bool:
    """A text part with nothing but its text (item-level fields and signatures aside).

    Signatures are never rendered (OpenAI has none on text; foreign ones are dropped).
    """
    if not isinstance(part, TextPart):
        return False
    return all(key == ITEM for key in own(part.extra))


def render_message(parts: Sequence[TextPart | RefusalPart], item_id: str | None) -> JsonObject:
    """An assistant ``message`` item (string content when that is the default shape)."""
    fields = item_fields(parts[0])
    content_parts = [part for part in parts if hint(part.extra, "~empty") is not True]
    shape = fields.get("~content")
    simple = len(content_parts) == 1 and _plain(content_parts[0])
    as_string = shape == "string" or (item_id is None and simple and shape != "list")
    content: JsonValue
    if as_string and all(isinstance(part, TextPart) for part in content_parts):
        content = "".join(part.text for part in content_parts)
    else:
        content = [encode_output_part(part) for part in content_parts]
    core: JsonObject = {"id": item_id} if item_id is not None else {}
    core |= {"role": "assistant", "content": content}
    return merge_fields(core, fields, message_defaults(item_id))


def render_reasoning(parts: Sequence[ReasoningPart], item_id: str | None) -> JsonObject:
    """A ``reasoning`` item; foreign opaque payloads are never rendered."""
    summary: list[JsonValue] = []
    content: list[JsonValue] = []
    blob: str | None = None
    for part in parts:
        entry_fields = own(part.extra)
        match part.reasoning_kind:
            case "summary":
                summary.append(
                    merge_fields({"type": "summary_text", "text": part.text}, entry_fields)
                )
            case "raw":
                content.append(
                    merge_fields({"type": "reasoning_text", "text": part.text}, entry_fields)
                )
            case "encrypted":
                if blob is None and part.opaque is not None and is_own_opaque(part.opaque):
                    blob = cast(str, part.opaque.data)
    item: JsonObject = {"type": "reasoning"}
    if item_id is not None:
        item["id"] = item_id
    item["summary"] = summary
    if content:
        item["content"] = content
    if blob is not None:
        item["encrypted_content"] = blob
    return merge_fields(item, item_fields(parts[0]))


def render_single(part: Part, item_id: str | None) -> JsonObject | None:
    """A one-part item, or ``None`` for parts that are never sent (local control parts)."""
    match part:
        case ToolCallPart():
            core: JsonObject = {"type": "function_call"}
            if item_id is not None:
                core["id"] = item_id
            core |= {"call_id": part.call_id, "name": part.name, "arguments": part.arguments}
            return merge_fields(core, own(part.extra), call_defaults(item_id))
        case ToolResultPart():
            return render_tool_result(part)
        case ApprovalRequestPart():
            if part.call.owner != "hosted":
                return None
            core = {"type": "mcp_approval_request", "id": part.approval_id}
            core |= {"server_label": part.call.server_label or "", "name": part.call.name}
            core["arguments"] = part.call.arguments
            return merge_fields(core, own(part.extra))
        case ApprovalResponsePart():
            return render_approval_response(part)
        case HostedToolPart():
            return part.item
        case _:
            return None


def render_tool_result(part: ToolResultPart) -> JsonObject:
    """A ``function_call_output`` item."""
    core: JsonObject = {"type": "function_call_output"}
    if part.item_id is not None:
        core["id"] = part.item_id
    core["call_id"] = part.call_id
    core["output"] = encode_tool_output(part.output, hint(part.extra, "~output"))
    return merge_fields(core, own(part.extra))


def render_approval_response(part: ApprovalResponsePart) -> JsonObject:
    """An ``mcp_approval_response`` item."""
    core: JsonObject = {"type": "mcp_approval_response", "approval_request_id": part.approval_id}
    core["approve"] = part.approved
    if part.reason is not None:
        core["reason"] = part.reason
    return merge_fields(core, own(part.extra))


def render_group(group: ItemGroup, *, strip_id: bool = False) -> JsonObject | None:
    """One item group as a wire item (``strip_id`` leaves the item id out)."""
    item_id = None if strip_id else group.item_id
    match group.kind:
        case "message":
            return render_message(cast(list[TextPart | RefusalPart], group.parts), item_id)
        case "reasoning":
            return render_reasoning(cast(list[ReasoningPart], group.parts), item_id)
        case "single":
            return render_single(group.parts[0], item_id)


def render_input_message(message: Message, parts: Sequence[OutputPart]) -> JsonObject:
    """A user, system or developer ``message`` item with input content parts."""
    fields = own(message.extra)
    core: JsonObject = {"id": message.id} if message.id is not None else {}
    core["role"] = message.role
    if fields.get("~content") == "string" and len(parts) == 1 and isinstance(parts[0], TextPart):
        core["content"] = parts[0].text
    else:
        core["content"] = [encode_input_part(part) for part in parts]
    return merge_fields(core, fields, message_defaults(message.id, message.role))
