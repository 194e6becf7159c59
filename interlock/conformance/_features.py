"""What must survive a translation, item by item.

:func:`message_items` lists every piece of content a history carries, each with the
fidelity-matrix feature it belongs to, the canonical location it came from
(``messages[i].parts[j]``) and a comparison key. Two translations agree on an item when
they hold an item with the same key; keys are deliberately about *content* (text, reasoning
kind and text, tool name, parsed arguments and call id, result content, media, opaque payload
and the part it is attached to) and not about wire layout, which dialects legitimately differ in
(message grouping, where instructions live, argument formatting).

Control parts for *local* tools (approvals, input requests) are not model content: the codec
contract says Chat and Gemini never send them, so they are not items. Hosted approvals are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import assert_never

from interlock.conformance._codecs import GEMINI_SIGNATURE, OPENAI_ENCRYPTED, OPENROUTER_DETAIL
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonPart,
    JsonValue,
    MediaPart,
    Message,
    Opaque,
    OutputPart,
    Part,
    ReasoningPart,
    RefusalPart,
    Response,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

FEATURES = (
    "instructions",
    "text",
    "refusal",
    "media",
    "reasoning_raw",
    "reasoning_summary",
    "reasoning_encrypted",
    "signature_on_call",
    "signature_on_text",
    "openrouter_detail",
    "tool_call",
    "tool_result_text",
    "tool_result_json",
    "tool_result_media",
    "citation",
    "citation_answer",
    "hosted_approval",
    "hosted_tool",
    "finish_reason",
    "usage",
)
"""Matrix rows, in report order."""

Key = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Item:
    """One piece of content: its matrix feature, where it was, and what must survive."""

    feature: str
    location: str
    key: Key
    opaque: Opaque | None = None


def canonical_json(value: JsonValue) -> str:
    """A stable text form of a JSON value (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def arguments_key(arguments: str) -> str:
    """Tool arguments compared by meaning: parsed JSON when valid, else the raw text."""
    try:
        return canonical_json(json.loads(arguments) if arguments.strip() else {})
    except ValueError:
        return arguments


def _opaque_key(opaque: Opaque) -> Key:
    return (opaque.provider, opaque.format, canonical_json(opaque.data))


def _opaque_feature(opaque: Opaque, host: Part) -> str:
    if opaque.format == OPENAI_ENCRYPTED:
        return "reasoning_encrypted"
    if opaque.format == OPENROUTER_DETAIL:
        return "openrouter_detail"
    if opaque.format == GEMINI_SIGNATURE:
        return "signature_on_call" if isinstance(host, ToolCallPart) else "signature_on_text"
    return f"opaque:{opaque.format}"


def _role_group(role: Role) -> str:
    return "instructions" if role in ("system", "developer") else role


def _output_item(output: OutputPart, call_id: str, location: str) -> Item:
    """A tool-result output piece. Text that is a JSON object or array compares as JSON."""
    if isinstance(output, MediaPart):
        return Item("tool_result_media", location, ("result", call_id, *_media_key(output)))
    if isinstance(output, JsonPart):
        return Item("tool_result_json", location, ("result", call_id, canonical_json(output.value)))
    try:
        parsed: JsonValue = json.loads(output.text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict | list):
        return Item("tool_result_json", location, ("result", call_id, canonical_json(parsed)))
    return Item("tool_result_text", location, ("result", call_id, output.text))


def _media_key(part: MediaPart) -> Key:
    """Type, data and URI; a wildcard type (``image/*``: the kind without the type) counts as
    no type, since no wire can carry it (a dialect with a kind of its own keeps the kind)."""
    media_type = part.media_type or ""
    return ("" if media_type.endswith("/*") else media_type, part.data or "", part.uri or "")


def part_items(part: Part, role: Role, location: str) -> Iterator[Item]:
    """The items one part contributes (an opaque payload is an item of its own)."""
    match part:
        case TextPart() | RefusalPart() | ReasoningPart():
            yield from _text_items(part, role, location)
        case ToolCallPart():
            key = ("call", part.call_id, part.name, arguments_key(part.arguments))
            yield Item("tool_call", location, key)
            if part.signature is not None:
                yield _signature_item(part.signature, part, location, ("call", part.call_id))
        case ToolResultPart():
            for index, output in enumerate(part.output):
                yield _output_item(output, part.call_id, f"{location}.output[{index}]")
            if part.is_error:
                yield Item("tool_result_text", location, ("result_error", part.call_id))
        case MediaPart():
            yield Item("media", location, ("media", *_media_key(part)))
        case JsonPart():
            yield Item("text", location, ("json", canonical_json(part.value)))
        case ApprovalRequestPart() | ApprovalResponsePart():
            yield from _approval_items(part, location)
        case InputRequestPart() | InputResponsePart():
            return
        case HostedToolPart():
            key = ("hosted", part.provider, part.item_type, canonical_json(part.item))
            yield Item("hosted_tool", location, key)
        case _:
            assert_never(part)


def _text_items(
    part: TextPart | RefusalPart | ReasoningPart, role: Role, location: str
) -> Iterator[Item]:
    if isinstance(part, RefusalPart):
        yield Item("refusal", location, ("refusal", part.text))
    elif isinstance(part, ReasoningPart):
        if part.text:
            yield Item(
                f"reasoning_{part.reasoning_kind}", location, (part.reasoning_kind, part.text)
            )
        if part.opaque is not None:
            yield _signature_item(part.opaque, part, location, ("reasoning", part.text))
    else:
        if part.text:
            group = _role_group(role)
            feature = "instructions" if group == "instructions" else "text"
            yield Item(feature, location, ("text", group, part.text))
        if part.signature is not None:
            yield _signature_item(part.signature, part, location, ("text", part.text))
        for citation in part.citations:
            key = ("citation", citation.url or "", str(citation.start), str(citation.end))
            yield Item("citation", location, (*key, citation.title or ""))


def _signature_item(opaque: Opaque, host: Part, location: str, anchor: Key) -> Item:
    """An opaque payload keyed with the part it is attached to, so moving it is a loss."""
    return Item(_opaque_feature(opaque, host), location, (*anchor, *_opaque_key(opaque)), opaque)


def _approval_items(
    part: ApprovalRequestPart | ApprovalResponsePart, location: str
) -> Iterator[Item]:
    if isinstance(part, ApprovalRequestPart):
        if part.call.owner == "hosted":
            call = part.call
            key = ("approval", part.approval_id, call.server_label or "", call.name)
            yield Item("hosted_approval", location, (*key, arguments_key(call.arguments)))
        return
    if "openai-responses" in part.extra or part.approval_id.startswith("mcpr_"):
        yield Item("hosted_approval", location, ("decision", part.approval_id, str(part.approved)))


def message_items(
    messages: Sequence[Message], first: int = 0, stop: int | None = None
) -> list[Item]:
    """Every item of ``messages[first:stop]``, with canonical locations."""
    items: list[Item] = []
    for i in range(first, len(messages) if stop is None else stop):
        message = messages[i]
        for j, part in enumerate(message.parts):
            items.extend(part_items(part, message.role, f"messages[{i}].parts[{j}]"))
    return items


def response_items(response: Response) -> list[Item]:
    """Items of a response: its message content plus finish reason and usage.

    Citations of an answer are the ``citation_answer`` feature: an answer can carry what a
    history sent back to a model cannot (most request formats have no citation field)."""
    items = [
        Item(
            "citation_answer" if item.feature == "citation" else item.feature,
            item.location.replace("messages[0]", "message", 1),
            item.key,
            item.opaque,
        )
        for item in message_items((response.message,))
    ]
    if response.finish_reason is not None:
        items.append(Item("finish_reason", "finish_reason", ("finish", response.finish_reason)))
    if response.usage is not None:
        usage = response.usage
        # Gemini counts tool-use prompt tokens apart; every other dialect counts them in the
        # prompt (trap 31). What must arrive is the prompt as billed, not Gemini's breakdown.
        prompt = usage.input_tokens + usage.tool_prompt_tokens
        counts = (prompt, usage.output_tokens, usage.reasoning_tokens)
        items.append(Item("usage", "usage", ("usage", *(str(count) for count in counts))))
    return items
