"""Input and output items → canonical parts and messages.

Grouping rule (the inverse lives in ``_render``): a ``message`` item of role user, system
or developer is one canonical message; consecutive model-side items (assistant
messages, reasoning, function calls, MCP and other hosted items) form one assistant
message; consecutive tool outputs (``function_call_output`` and other ``*_output``
items) form one tool message; consecutive ``mcp_approval_response`` items form one user
message of approval responses.

Item ids land on ``item_id`` of every part of the item. A reasoning item becomes one
:class:`ReasoningPart` per summary entry (``summary``), per content entry (``raw``) and
one for ``encrypted_content`` (``encrypted``), all sharing ``item_id``; an item with none
of those becomes a single ``encrypted`` part without payload ("the service holds it"),
so empty reasoning is never lost (trap 3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal, TypeAlias

from interlock.codecs.openai_responses import _plain as plain
from interlock.codecs.openai_responses._content import (
    decode_input_part,
    decode_output_part,
    decode_tool_output,
)
from interlock.codecs.openai_responses._wire import (
    ITEM,
    PROVIDER,
    as_list,
    as_object,
    encrypted,
    is_minted,
    optional_str,
    own,
    required_str,
    server_item_id,
    split_fields,
    string,
    wrap,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    DecodeError,
    HostedToolPart,
    JsonObject,
    JsonValue,
    Message,
    Part,
    ReasoningPart,
    RefusalPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from interlock.transcript import build as built

Side: TypeAlias = Literal["assistant", "tool", "approval"]
InputRole: TypeAlias = Literal["user", "system", "developer"]
_INPUT_ROLES: dict[str, InputRole] = {"user": "user", "system": "system", "developer": "developer"}
_SIDE_ROLES: dict[Side, Role] = {"assistant": "assistant", "tool": "tool", "approval": "user"}
_CONTENT = "~content"
INPUT_ID = "~id"
"""Marks a user, system or developer message whose wire item carried its ``id``."""
HOSTED = "~hosted"
"""Marks an approval response decoded from ``mcp_approval_response`` (a hosted decision)."""


def message_defaults(item_id: str | None, role: str = "assistant") -> JsonObject:
    """Fields the encoder adds to a message item (output-shaped when it has an id)."""
    if role == "assistant" and item_id is not None:
        return {"type": "message", "status": "completed"}
    return {"type": "message"}


def call_defaults(item_id: str | None) -> JsonObject:
    """Fields the encoder adds to a function call item (output-shaped when it has an id)."""
    return {"status": "completed"} if item_id is not None else {}


def _with_item(part: Part, fields: JsonObject, boundary: bool) -> Part:
    """``part`` carrying its item's leftover fields (and so marking an item start)."""
    if not fields and not boundary:
        return part
    extra = wrap({**own(part.extra), ITEM: fields})
    if isinstance(part, TextPart | RefusalPart | ReasoningPart):
        return replace(part, extra=extra)
    return part


def assistant_message_parts(data: JsonObject, path: str, boundary: bool) -> list[Part]:
    """An assistant ``message`` item as text/refusal parts sharing the item id."""
    item_id = server_item_id(data, path)
    # A minted id is dropped, and so are the output-shaped fields that came with it (they
    # were the gateway's own): the message then encodes in the default id-less shape.
    wire_id = optional_str(data, "id", path)
    fields = split_fields(data, {"id", "role", "content"}, message_defaults(wire_id))
    content = data.get("content")
    if isinstance(content, str):
        parts: list[TextPart | RefusalPart] = [TextPart(text=content)]
        if item_id is not None:
            fields[_CONTENT] = "string"
    else:
        entries = as_list(content, f"{path}.content")
        parts = [
            decode_output_part(entry, f"{path}.content[{i}]") for i, entry in enumerate(entries)
        ]
        if wire_id is None or not parts:
            # Without an id the encoder's default is string content (one message per part).
            fields[_CONTENT] = "list"
        if not parts:
            parts = [TextPart(text="", extra=wrap({"~empty": True}))]
    parts = [replace(part, item_id=item_id) for part in parts]
    return [_with_item(parts[0], fields, boundary), *parts[1:]]


def user_message(data: JsonObject, path: str, role: InputRole) -> Message:
    """A user, system or developer ``message`` item as its own canonical message.

    Its ``id`` becomes :attr:`Message.id`, marked ``~id``: the SDK's input message types
    declare no ``id``, so the encoder sends one only where the wire had it (ids of other
    dialects, e.g. AG-UI message ids, stay out of the request).
    """
    item_id = optional_str(data, "id", path)
    fields = split_fields(data, {"id", "role", "content"}, message_defaults(item_id, role))
    if item_id is not None:
        fields[INPUT_ID] = True
    content = data.get("content")
    if isinstance(content, str):
        fields[_CONTENT] = "string"
        parts: tuple[Part, ...] = (TextPart(text=content),)
    else:
        entries = as_list(content, f"{path}.content")
        parts = tuple(
            decode_input_part(entry, f"{path}.content[{i}]") for i, entry in enumerate(entries)
        )
    return Message(role=role, parts=parts, id=item_id, extra=wrap(fields))


def reasoning_parts(
    data: JsonObject, path: str, boundary: bool, issuer: str = PROVIDER
) -> list[Part]:
    """A reasoning item as summary, raw and encrypted parts sharing the item id; the
    encrypted content is labelled with ``issuer`` (the vendor that produced it)."""
    item_id = server_item_id(data, path)
    known = {"type", "id", "summary"}
    parts: list[ReasoningPart] = []
    summary = as_list(data.get("summary"), f"{path}.summary")
    for index, entry in enumerate(summary):
        parts.append(_reasoning_entry(entry, f"{path}.summary[{index}]", "summary", item_id))
    content = data.get("content")
    if isinstance(content, list) and content:
        known.add("content")
        for index, entry in enumerate(content):
            parts.append(_reasoning_entry(entry, f"{path}.content[{index}]", "raw", item_id))
    elif content is not None and not isinstance(content, list):
        as_list(content, f"{path}.content")
    blob = data.get("encrypted_content")
    if blob is not None:
        known.add("encrypted_content")
        opaque = encrypted(string(blob, f"{path}.encrypted_content"), issuer)
        parts.append(ReasoningPart(reasoning_kind="encrypted", opaque=opaque, item_id=item_id))
    if not parts:
        parts.append(ReasoningPart(reasoning_kind="encrypted", item_id=item_id))
    fields = split_fields(data, known)
    return [_with_item(parts[0], fields, boundary), *parts[1:]]


def _reasoning_entry(
    value: JsonValue, path: str, kind: Literal["summary", "raw"], item_id: str | None
) -> ReasoningPart:
    entry = as_object(value, path)
    expected = "summary_text" if kind == "summary" else "reasoning_text"
    if entry.get("type") != expected:
        raise DecodeError(f"{path}.type", f"expected {expected!r}")
    text = required_str(entry, "text", path)
    fields = split_fields(entry, {"type", "text"})
    return ReasoningPart(reasoning_kind=kind, text=text, item_id=item_id, extra=wrap(fields))


def function_call(data: JsonObject, path: str) -> ToolCallPart:
    """A ``function_call`` item (an id this codec minted is not kept: ``server_item_id``)."""
    item_id = server_item_id(data, path)
    known = {"type", "id", "call_id", "name", "arguments"}
    # A minted id's status was the gateway's own: a default, as with a service's id.
    defaults = call_defaults(optional_str(data, "id", path))
    return ToolCallPart(
        call_id=required_str(data, "call_id", path),
        name=required_str(data, "name", path),
        arguments=required_str(data, "arguments", path),
        item_id=item_id,
        extra=wrap(split_fields(data, known, defaults)),
    )


def function_call_output(data: JsonObject, path: str) -> ToolResultPart:
    """A ``function_call_output`` item (``call_id`` is required: provider-wire §1.2)."""
    if "output" not in data:
        raise DecodeError(f"{path}.output", "required field is missing")
    output, shape = decode_tool_output(data["output"], f"{path}.output")
    fields = split_fields(data, {"type", "id", "call_id", "output"})
    if shape is not None:
        fields["~output"] = shape
    return ToolResultPart(
        call_id=required_str(data, "call_id", path),
        output=output,
        item_id=optional_str(data, "id", path),
        extra=wrap(fields),
    )


def approval_request(data: JsonObject, path: str) -> ApprovalRequestPart:
    """An ``mcp_approval_request``: a hosted call awaiting a decision (id doubles as call id)."""
    item_id = required_str(data, "id", path)
    call = ToolCallPart(
        call_id=item_id,
        name=required_str(data, "name", path),
        arguments=required_str(data, "arguments", path),
        owner="hosted",
        server_label=required_str(data, "server_label", path),
        item_id=item_id,
    )
    fields = split_fields(data, {"type", "id", "name", "arguments", "server_label"})
    return ApprovalRequestPart(approval_id=item_id, call=call, extra=wrap(fields))


def approval_response(data: JsonObject, path: str) -> ApprovalResponsePart:
    """An ``mcp_approval_response``: the decision on a hosted approval request."""
    approve = data.get("approve")
    if not isinstance(approve, bool):
        raise DecodeError(f"{path}.approve", "required boolean field is missing or not a boolean")
    reason = optional_str(data, "reason", path)
    known = {"type", "approval_request_id", "approve"}
    if reason is not None:
        known.add("reason")
    return ApprovalResponsePart(
        approval_id=required_str(data, "approval_request_id", path),
        approved=approve,
        reason=reason,
        extra=wrap({**split_fields(data, known), HOSTED: True}),
    )


def hosted_item(data: JsonObject, path: str) -> HostedToolPart:
    """Any other item, carried verbatim (MCP calls, item references, newer item types)."""
    kind = data.get("type")
    if kind is None and "id" in data:
        kind = "item_reference"
    item_type = string(kind, f"{path}.type")
    label = data.get("server_label")
    return HostedToolPart(
        provider=PROVIDER,
        item_type=item_type,
        item=data,
        server_label=label if isinstance(label, str) else None,
    )


def item_type(data: JsonObject) -> JsonValue:
    """An item's ``type``; a typeless item with a ``role`` is a message (EasyInputMessage)."""
    kind = data.get("type")
    if kind is None and "role" in data:
        return "message"
    return kind


def _item_side(data: JsonObject) -> Side:
    kind = item_type(data)
    if kind == "mcp_approval_response":
        return "approval"
    if isinstance(kind, str) and kind.endswith("_output"):
        return "tool"
    return "assistant"


def _model_side_parts(
    data: JsonObject, path: str, last: Part | None, issuer: str = PROVIDER
) -> list[Part]:
    kind = item_type(data)
    if kind == "message":
        ambiguous = isinstance(last, TextPart | RefusalPart)
        return assistant_message_parts(data, path, ambiguous and _same_item(last, data))
    if kind == "reasoning":
        ambiguous = isinstance(last, ReasoningPart) and _same_item(last, data)
        return reasoning_parts(data, path, ambiguous, issuer)
    match kind:
        case "function_call":
            return [function_call(data, path)]
        case "function_call_output":
            return [function_call_output(data, path)]
        case "mcp_approval_request":
            return [approval_request(data, path)]
        case "mcp_approval_response":
            return [approval_response(data, path)]
        case _:
            return [hosted_item(data, path)]


def _same_item(last: Part | None, data: JsonObject) -> bool:
    item_id = data.get("id")
    if isinstance(item_id, str) and is_minted(item_id):
        item_id = None
    return getattr(last, "item_id", None) == item_id


class _Grouper:
    """Folds items into canonical messages following the module's grouping rule."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self.messages: list[Message] = []
        self.side: Side | None = None
        self.parts: list[Part] = []

    def flush(self) -> None:
        if self.side is not None:
            role = _SIDE_ROLES[self.side]
            self.messages.append(built.message(role, tuple(self.parts)))
        self.side, self.parts = None, []

    def add(self, value: JsonValue, path: str) -> None:
        data = as_object(value, path)
        role = data.get("role")
        if item_type(data) == "message":
            if isinstance(role, str) and role in _INPUT_ROLES:
                self.flush()
                self.messages.append(user_message(data, path, _INPUT_ROLES[role]))
                return
            if role != "assistant":
                raise DecodeError(f"{path}.role", "expected user, assistant, system or developer")
        side = _item_side(data)
        if side != self.side:
            self.flush()
            self.side = side
        last = self.parts[-1] if self.parts else None
        self.parts.extend(_model_side_parts(data, path, last, self.issuer))

    def add_plain(self, data: JsonObject) -> bool:
        """Take an item of the commonest shapes (``_plain``) as :meth:`add` would; ``False``
        (nothing changed) for any other item."""
        kind = data.get("type", "message")
        if kind == "message":
            role = data.get("role")
            if role != "assistant":
                message = plain.input_message(data)
                if message is None:
                    return False
                self.flush()
                self.messages.append(message)
                return True
            return self._extend_plain(
                "assistant", plain.assistant_message(data, self._last("assistant"))
            )
        if kind == "function_call":
            call = plain.function_call(data)
            return self._extend_plain("assistant", None if call is None else [call])
        if kind == "function_call_output":
            result = plain.function_call_output(data)
            return self._extend_plain("tool", None if result is None else [result])
        if kind == "reasoning":
            parts = plain.reasoning(data, self._last("assistant"), self.issuer)
            return self._extend_plain("assistant", parts)
        return False

    def _last(self, side: Side) -> Part | None:
        """The part an item of ``side`` would follow in its message (``None``: a new one)."""
        return self.parts[-1] if self.parts and self.side == side else None

    def _extend_plain(self, side: Side, parts: list[Part] | None) -> bool:
        if parts is None:
            return False
        if side != self.side:
            self.flush()
            self.side = side
        self.parts.extend(parts)
        return True


def decode_items(
    values: Sequence[JsonValue], path: str, issuer: str = PROVIDER
) -> tuple[Message, ...]:
    """A list of input (or output) items as canonical messages (encrypted reasoning
    labelled with ``issuer``)."""
    grouper = _Grouper(issuer)
    for index, value in enumerate(values):
        if not (isinstance(value, dict) and grouper.add_plain(value)):
            grouper.add(value, f"{path}[{index}]")
    grouper.flush()
    return tuple(grouper.messages)


def decode_output_items(
    values: Sequence[JsonValue], path: str, issuer: str = PROVIDER
) -> tuple[Part, ...]:
    """Response ``output`` items as the parts of one assistant message, in order."""
    parts: list[Part] = []
    for index, value in enumerate(values):
        last = parts[-1] if parts else None
        fast = plain_output(value, last, issuer) if isinstance(value, dict) else None
        if fast is not None:
            parts.extend(fast)
            continue
        item_path = f"{path}[{index}]"
        data = as_object(value, item_path)
        parts.extend(_model_side_parts(data, item_path, last, issuer))
    return tuple(parts)


def plain_output(data: JsonObject, last: Part | None, issuer: str) -> list[Part] | None:
    """An output item of the commonest shapes (``_plain``: an assistant message, a function
    call, a reasoning item) as :func:`_model_side_parts` decodes it after ``last``; ``None``
    for any other item (the general path then decodes it, errors included)."""
    kind = data.get("type", "message")
    if kind == "message":
        return plain.assistant_message(data, last) if data.get("role") == "assistant" else None
    if kind == "function_call":
        call = plain.function_call(data)
        return None if call is None else [call]
    if kind == "reasoning":
        return plain.reasoning(data, last, issuer)
    return None


def decode_output_item(value: JsonValue, path: str, issuer: str = PROVIDER) -> list[Part]:
    """One response output item as its parts (the stream decoder finishes items with this)."""
    return _model_side_parts(as_object(value, path), path, None, issuer)
