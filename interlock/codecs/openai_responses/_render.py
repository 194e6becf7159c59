"""Canonical parts → Responses items (the inverse of ``_items``).

:func:`group_parts` cuts a message's parts into wire items: consecutive text/refusal parts
with the same ``item_id`` form one ``message`` item, consecutive reasoning parts with the
same ``item_id`` one ``reasoning`` item, unless a part carries the ``~item`` boundary
hint; every other part is an item of its own. Parts keep their order, so a reasoning item
stays immediately before the item it belongs to.

Parts without any extra (the usual case for history built by a loop or another dialect)
render straight to their default shapes; parts with extras go through the generic
extra/defaults merge. Both give the same JSON for the same part.
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
from interlock.codecs.openai_responses._items import INPUT_ID, call_defaults, message_defaults
from interlock.codecs.openai_responses._wire import (
    ITEM,
    hint,
    is_encrypted,
    merge_fields,
    own,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    Extra,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
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
_GROUP_KINDS: dict[type, GroupKind] = {
    TextPart: "message",
    RefusalPart: "message",
    ReasoningPart: "reasoning",
    ToolCallPart: "single",
    ToolResultPart: "single",
    JsonPart: "single",
    MediaPart: "single",
    ApprovalRequestPart: "single",
    ApprovalResponsePart: "single",
    InputRequestPart: "single",
    InputResponsePart: "single",
    HostedToolPart: "single",
}


@dataclass(slots=True)
class ItemGroup:
    """The parts of one wire item; ``start`` is the index of the first one in its message."""

    kind: GroupKind
    start: int
    parts: list[Part] = field(default_factory=list[Part])

    @property
    def item_id(self) -> str | None:
        """The wire item id the group's parts carry."""
        return getattr(self.parts[0], "item_id", None)


def _group_kind(part: Part) -> GroupKind:
    kind = _GROUP_KINDS.get(type(part))
    if kind is not None:
        return kind
    if isinstance(part, TextPart | RefusalPart):
        return "message"
    if isinstance(part, ReasoningPart):
        return "reasoning"
    return "single"


def _marks_item(part: Part) -> bool:
    """True when ``part`` carries the ``~item`` hint (it starts a new item)."""
    return bool(part.extra) and ITEM in own(part.extra)


def continues_item(previous: Part | None, part: Part) -> bool:
    """True when ``part`` belongs to the same wire item as ``previous``."""
    if previous is None:
        return False
    kind = _group_kind(part)
    if kind == "single" or kind != _group_kind(previous):
        return False
    if _marks_item(part):
        return False
    return getattr(previous, "item_id", None) == getattr(part, "item_id", None)


def group_parts(parts: Sequence[Part]) -> list[ItemGroup]:
    """The wire items of a message's parts, in order (one pass; see :func:`continues_item`)."""
    groups: list[ItemGroup] = []
    current: ItemGroup | None = None
    current_id: str | None = None
    for index, part in enumerate(parts):
        kind = _GROUP_KINDS.get(type(part)) or _group_kind(part)
        item_id: str | None = getattr(part, "item_id", None)
        if (
            current is not None
            and kind != "single"
            and kind == current.kind
            and item_id == current_id
            and not (part.extra and ITEM in own(part.extra))
        ):
            current.parts.append(part)
            continue
        current = ItemGroup(kind=kind, start=index, parts=[part])
        current_id = item_id
        groups.append(current)
    return groups


def item_fields(part: Part) -> JsonObject:
    """The item-level leftover fields carried by the first part of an item."""
    value = own(part.extra).get(ITEM)
    return cast(JsonObject, value) if isinstance(value, dict) else {}


def _plain(part: TextPart | RefusalPart) -> bool:
    """A text part with nothing but its text (item-level fields and signatures aside; no
    citations, no log-probabilities).

    Signatures are never rendered (OpenAI has none on text; foreign ones are dropped).
    """
    if not isinstance(part, TextPart) or part.citations or part.logprobs:
        return False
    return all(key == ITEM for key in own(part.extra))


def _hint_free(parts: Sequence[Part]) -> bool:
    """True when no part carries any extra, citation or log-probability (so every part
    renders to its default shape)."""
    for part in parts:
        if part.extra or getattr(part, "citations", ()) or getattr(part, "logprobs", ()):
            return False
    return True


def render_message(parts: Sequence[TextPart | RefusalPart], item_id: str | None) -> JsonObject:
    """An assistant ``message`` item (string content when that is the default shape)."""
    if _hint_free(parts):
        return _render_plain_message(parts, item_id)
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


def _render_plain_message(
    parts: Sequence[TextPart | RefusalPart], item_id: str | None
) -> JsonObject:
    """:func:`render_message` for parts without extras: the default shapes, no merge."""
    content: JsonValue
    if item_id is None and len(parts) == 1 and isinstance(parts[0], TextPart):
        content = parts[0].text
    else:
        content = [
            {"type": "output_text", "text": part.text, "annotations": []}
            if isinstance(part, TextPart)
            else {"type": "refusal", "refusal": part.text}
            for part in parts
        ]
    if item_id is None:
        return {"role": "assistant", "content": content, "type": "message"}
    item: JsonObject = {"id": item_id, "role": "assistant", "content": content}
    item |= {"type": "message", "status": "completed"}
    return item


def _with_own(core: JsonObject, extra: Extra) -> JsonObject:
    """``core`` merged with this dialect's kept fields of ``extra`` (``core`` when none)."""
    return merge_fields(core, own(extra)) if extra else core


def render_reasoning(parts: Sequence[ReasoningPart], item_id: str | None) -> JsonObject:
    """A ``reasoning`` item; opaque payloads other than encrypted content are never
    rendered. Encrypted content of any issuer is: an answer to a client carries it whoever
    issued it, and the request encoder drops a step's reasoning of another issuer before
    it gets here (``_replay._plan_step``)."""
    summary: list[JsonValue] = []
    content: list[JsonValue] = []
    blob: str | None = None
    for part in parts:
        match part.reasoning_kind:
            case "summary":
                summary.append(_with_own({"type": "summary_text", "text": part.text}, part.extra))
            case "raw":
                content.append(_with_own({"type": "reasoning_text", "text": part.text}, part.extra))
            case "encrypted":
                opaque = part.opaque
                if blob is None and opaque is not None and is_encrypted(opaque):
                    blob = cast(str, opaque.data)
    item: JsonObject = {"type": "reasoning"}
    if item_id is not None:
        item["id"] = item_id
    item["summary"] = summary
    if content:
        item["content"] = content
    if blob is not None:
        item["encrypted_content"] = blob
    return merge_fields(item, item_fields(parts[0])) if parts[0].extra else item


def render_single(part: Part, item_id: str | None) -> JsonObject | None:
    """A one-part item, or ``None`` for parts that are never sent (local control parts)."""
    match part:
        case ToolCallPart():
            core: JsonObject = {"type": "function_call"}
            if item_id is not None:
                core["id"] = item_id
            core |= {"call_id": part.call_id, "name": part.name, "arguments": part.arguments}
            if part.extra:
                return merge_fields(core, own(part.extra), call_defaults(item_id))
            if item_id is not None:
                core["status"] = "completed"
            return core
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
    if not part.extra:
        core["output"] = encode_tool_output(part.output, None)
        return core
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
            return render_message(cast("list[TextPart | RefusalPart]", group.parts), item_id)
        case "reasoning":
            return render_reasoning(cast("list[ReasoningPart]", group.parts), item_id)
        case "single":
            return render_single(group.parts[0], item_id)


def render_input_message(message: Message, parts: Sequence[OutputPart]) -> JsonObject:
    """A user, system or developer ``message`` item with input content parts."""
    if not message.extra:
        return _render_plain_input(message, parts)
    fields = own(message.extra)
    wire_id = message.id is not None and fields.get(INPUT_ID) is True
    core: JsonObject = {"id": message.id} if wire_id else {}
    core["role"] = message.role
    if fields.get("~content") == "string" and len(parts) == 1 and isinstance(parts[0], TextPart):
        core["content"] = parts[0].text
    else:
        core["content"] = [encode_input_part(part) for part in parts]
    return merge_fields(core, fields, message_defaults(message.id, message.role))


def _render_plain_input(message: Message, parts: Sequence[OutputPart]) -> JsonObject:
    """:func:`render_input_message` for a message without extra: list content, default fields.

    No ``id``: input messages have none in the SDK types (``Message.id`` of another
    dialect names the message there, not an OpenAI item).
    """
    core: JsonObject = {"role": message.role}
    core["content"] = [
        {"type": "input_text", "text": part.text}
        if isinstance(part, TextPart) and not part.extra
        else encode_input_part(part)
        for part in parts
    ]
    core |= message_defaults(message.id, message.role)
    return core
