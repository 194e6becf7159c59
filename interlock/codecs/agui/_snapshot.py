"""``MESSAGES_SNAPSHOT``: a thread rendered as AG-UI messages, and confirmation cleanup.

:func:`messages_to_agui` is the display projection of a canonical thread, with the
same conventions the encoder streams (reasoning messages before their assistant message,
opaque payloads sealed, approvals as ``confirm_changes`` calls in that style). Parts
AG-UI messages cannot hold (hosted tool items, JSON/media in assistant turns, input
requests) are left out of this *view*; the server-owned thread keeps them.

:func:`clean_confirm_changes` makes sure a stale ``{"accepted": true}`` answer can never
be replayed as a fresh approval (agent-framework issues #6828/#6851):

- an accepted confirmation is replaced by the real tool result under the original call
  id, and the synthetic call is dropped, but only once that result exists;
- a rejection is rewritten explicitly to ``"Changes declined."``;
- an accepted confirmation whose result does not exist yet stays as it is (inert);
- malformed metadata (``toolCalls`` not a list, arguments that are not a JSON object,
  no ``function_call_id``) is left alone: no target is ever guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from interlock.codecs.agui._approvals import confirm_changes_arguments
from interlock.codecs.agui._encoder import ApprovalStyle
from interlock.codecs.agui._ids import (
    CONFIRM_CHANGES_TOOL,
    confirm_changes_call_id,
    parse_confirm_changes_call_id,
)
from interlock.codecs.agui._labels import (
    LABEL_KEY,
    call_labels,
    content_layout,
    needs_layout,
    reasoning_labels,
    result_labels,
)
from interlock.codecs.agui._seal import reasoning_attributes, seal_outbound
from interlock.codecs.agui._wire import (
    agui_extra,
    compact_json,
    media_to_content_part,
    output_to_content,
    without_none,
)
from interlock.transcript import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonValue,
    MediaPart,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    TranslationWarning,
)

DECLINED_TEXT = "Changes declined."


@dataclass(frozen=True, slots=True, kw_only=True)
class EncodedMessages:
    """A thread rendered as AG-UI messages, plus every part the view could not show.

    Each warning's ``location`` is canonical (``messages[i].parts[j]``). Control parts of
    local calls (approvals in ``interrupt`` style, input requests and answers) are not
    warned about: they travel as interrupts and ``resume[]``, not as messages.
    """

    messages: list[JsonObject]
    warnings: tuple[TranslationWarning, ...] = ()


class _Renderer:
    """Renders canonical messages; holds the seal context, approval style and warnings."""

    def __init__(
        self,
        seal_key: bytes | None,
        tenant: str,
        style: ApprovalStyle,
        messages: Sequence[Message],
    ) -> None:
        self.seal_key = seal_key
        self.tenant = tenant
        self.style: ApprovalStyle = style
        self.warnings: list[TranslationWarning] = []
        requests = [
            part
            for message in messages
            for part in message.parts
            if isinstance(part, ApprovalRequestPart)
        ]
        self.hosted = {part.approval_id for part in requests if part.call.owner == "hosted"}
        self.local = {part.approval_id for part in requests if part.call.owner != "hosted"}

    def seal(self, opaque: Opaque, attributes: Mapping[str, str] | None = None) -> str:
        return seal_outbound(opaque, key=self.seal_key, tenant=self.tenant, attributes=attributes)

    def warn(self, code: str, location: str, message: str) -> None:
        self.warnings.append(TranslationWarning(code=code, location=location, message=message))

    def message(self, message: Message, message_id: str, location: str) -> list[JsonObject]:
        out = self._tool_messages(message, message_id)
        match message.role:
            case "assistant":
                out = self._assistant(message, message_id, location) + out
            case "user":
                out = self._user(message, message_id, location) + out
            case "system" | "developer":
                out = self._instructions(message, message_id, location, bool(out)) + out
            case "tool":
                for index, part in enumerate(message.parts):
                    if not isinstance(part, ToolResultPart):
                        self.skip(part, f"{location}.parts[{index}]", "tool")
        return out

    def skip(self, part: Part, location: str, role: str) -> None:
        """A part this view does not show: a warning, unless it is a local control part."""
        match part:
            case ApprovalRequestPart() if part.call.owner == "hosted":
                reason = "an approval request of a hosted tool call has no AG-UI message form"
                self.warn("hosted_approval_dropped", location, reason)
            case ApprovalResponsePart() if part.approval_id in self.hosted:
                reason = "an approval decision on a hosted tool call has no AG-UI message form"
                self.warn("hosted_approval_dropped", location, reason)
            case ApprovalResponsePart() if part.approval_id not in self.local:
                reason = "an approval decision answering no approval request of this thread"
                self.warn("approval_dropped", location, f"{reason} is not shown")
            case (
                ApprovalRequestPart()
                | ApprovalResponsePart()
                | InputRequestPart()
                | InputResponsePart()
            ):
                return
            case HostedToolPart():
                reason = f"a hosted {part.item_type} item has no AG-UI message form"
                self.warn("hosted_tool_dropped", location, reason)
            case _:
                reason = f"a {part.kind} part has no AG-UI form in a {role} message"
                self.warn("part_dropped", location, reason)

    def _user(self, message: Message, message_id: str, location: str) -> list[JsonObject]:
        content: list[JsonValue] = []
        answers: list[JsonObject] = []
        texts = 0
        for index, part in enumerate(message.parts):
            match part:
                case TextPart():
                    content.append({"type": "text", "text": part.text})
                    texts += 1
                case MediaPart():
                    content.append(media_to_content_part(part))
                case ApprovalResponsePart() if self.style == "confirm_changes":
                    answers.append(_confirm_answer(part))
                case ToolResultPart():
                    pass
                case _:
                    self.skip(part, f"{location}.parts[{index}]", "user")
        out: list[JsonObject] = []
        if content:
            single = texts == 1 and len(content) == 1
            value: JsonValue = message.text if single else content
            head: JsonObject = {"id": message_id, "role": "user", "content": value}
            out.append(without_none({**head, "name": message.name}))
        return out + answers

    def _instructions(
        self, message: Message, message_id: str, location: str, has_results: bool
    ) -> list[JsonObject]:
        texts: list[TextPart | RefusalPart] = []
        for index, part in enumerate(message.parts):
            if isinstance(part, TextPart):
                texts.append(part)
            elif not isinstance(part, ToolResultPart):
                self.skip(part, f"{location}.parts[{index}]", message.role)
        text = "".join(part.text for part in texts)
        if not text and has_results:
            return []
        head: JsonObject = {"id": message_id, "role": message.role, "content": text}
        signed = any(isinstance(part, TextPart) and part.signature for part in texts)
        if needs_layout(texts) or signed:
            head["metadata"] = {LABEL_KEY: {"content": content_layout(texts, self.seal)}}
        return [without_none({**head, "name": message.name})]

    def _assistant(self, message: Message, message_id: str, location: str) -> list[JsonObject]:
        out: list[JsonObject] = []
        texts: list[TextPart | RefusalPart] = []
        calls: list[JsonValue] = []
        order = _Order(self, location)
        for index, part in enumerate(message.parts):
            match part:
                case ReasoningPart():
                    out.append(self._reasoning(part, f"{message_id}:r{index}"))
                case TextPart() | RefusalPart():
                    if isinstance(part, TextPart) and part.citations:
                        where = f"{location}.parts[{index}]"
                        self.warn("citation_dropped", where, "AG-UI messages carry no citations")
                    texts.append(part)
                case ToolCallPart():
                    calls.append(self._call(part))
                case ApprovalRequestPart() if self.style == "confirm_changes":
                    calls.append(_confirm_call(part))
                case ToolResultPart():
                    continue
                case _:
                    self.skip(part, f"{location}.parts[{index}]", "assistant")
                    continue
            order.see(part, index)
        if texts or calls:
            out.append(self._assistant_body(message, message_id, texts, calls))
        return out

    def _assistant_body(
        self,
        message: Message,
        message_id: str,
        texts: Sequence[TextPart | RefusalPart],
        calls: list[JsonValue],
    ) -> JsonObject:
        """One assistant message: its text parts joined (with a layout when needed), calls."""
        body: JsonObject = {"id": message_id, "role": "assistant"}
        if texts:
            body["content"] = "".join(part.text for part in texts)
        if calls:
            body["toolCalls"] = calls
        if message.name is not None:
            body["name"] = message.name
        if needs_layout(texts):
            body["metadata"] = {LABEL_KEY: {"content": content_layout(texts, self.seal)}}
        elif texts and isinstance(texts[0], TextPart) and texts[0].signature is not None:
            body["encryptedValue"] = self.seal(texts[0].signature)
        return body

    def _reasoning(self, part: ReasoningPart, fallback_id: str) -> JsonObject:
        own_id = agui_extra(part.extra).get("messageId")
        body: JsonObject = {
            "id": own_id if isinstance(own_id, str) else fallback_id,
            "role": "reasoning",
            "content": part.text,
        }
        if part.opaque is not None:
            body["encryptedValue"] = self.seal(part.opaque, reasoning_attributes(part))
        labels = reasoning_labels(part)
        if labels is not None:
            body["metadata"] = {LABEL_KEY: labels}
        return body

    def _call(self, part: ToolCallPart) -> JsonObject:
        body: JsonObject = {
            "id": part.call_id,
            "type": "function",
            "function": {"name": part.name, "arguments": part.arguments},
        }
        if part.signature is not None:
            body["encryptedValue"] = self.seal(part.signature)
        labels = call_labels(part)
        if labels is not None:
            body["metadata"] = {LABEL_KEY: labels}
        return body

    def _tool_messages(self, message: Message, message_id: str) -> list[JsonObject]:
        results = message.tool_results
        out: list[JsonObject] = []
        for index, result in enumerate(results):
            own = agui_extra(result.extra)
            own_id = own.get("messageId")
            result_id = own_id if isinstance(own_id, str) else message_id
            if len(results) > 1 and not isinstance(own_id, str):
                result_id = f"{message_id}:{index}"
            body: JsonObject = {
                "id": result_id,
                "role": "tool",
                "toolCallId": result.call_id,
                "content": output_to_content(result.output),
            }
            if result.is_error:
                error = own.get("error")
                body["error"] = error if isinstance(error, str) else (result.text or result.outcome)
            labels = result_labels(result, error_field=True)
            if labels is not None:
                body["metadata"] = {LABEL_KEY: labels}
            out.append(body)
        return out


class _Order:
    """Notices when an assistant message's parts are not in the order the view shows.

    AG-UI shows a step as its reasoning messages, then one assistant message (text, then
    tool calls); a part that came before one it is now shown after is reported.
    """

    def __init__(self, renderer: _Renderer, location: str) -> None:
        self.renderer = renderer
        self.location = location
        self.highest = 0

    def see(self, part: Part, index: int) -> None:
        rank = (
            0
            if isinstance(part, ReasoningPart)
            else 1
            if isinstance(part, TextPart | RefusalPart)
            else 2
        )
        if rank < self.highest:
            self.renderer.warn(
                "parts_reordered",
                f"{self.location}.parts[{index}]",
                "AG-UI shows a step's reasoning, then its text, then its tool calls",
            )
        self.highest = max(self.highest, rank)


def _confirm_call(part: ApprovalRequestPart) -> JsonObject:
    body: JsonObject = {
        "id": confirm_changes_call_id(part.approval_id),
        "type": "function",
        "function": {
            "name": CONFIRM_CHANGES_TOOL,
            "arguments": confirm_changes_arguments(part.call),
        },
    }
    labels = call_labels(part.call)
    if labels is not None:
        body["metadata"] = {LABEL_KEY: labels}
    return body


def _confirm_answer(part: ApprovalResponsePart) -> JsonObject:
    own = agui_extra(part.extra)
    own_id = own.get("messageId")
    call_id = confirm_changes_call_id(part.approval_id)
    return {
        "id": own_id if isinstance(own_id, str) else f"{call_id}:answer",
        "role": "tool",
        "toolCallId": call_id,
        "content": compact_json({"accepted": part.approved}),
    }


def encode_messages(
    messages: Sequence[Message],
    *,
    seal_key: bytes | None = None,
    tenant: str = "",
    approval_style: ApprovalStyle = "interrupt",
) -> EncodedMessages:
    """A canonical thread as AG-UI messages for ``MESSAGES_SNAPSHOT`` (cleaned), with warnings.

    A message without an id gets ``msg-{position}``. Raises ``SealError`` if an opaque
    payload must be sealed and no key is given.
    """
    renderer = _Renderer(seal_key, tenant, approval_style, messages)
    out: list[JsonObject] = []
    for position, message in enumerate(messages):
        message_id = message.id or f"msg-{position}"
        out += renderer.message(message, message_id, f"messages[{position}]")
    return EncodedMessages(messages=clean_confirm_changes(out), warnings=tuple(renderer.warnings))


def messages_to_agui(
    messages: Sequence[Message],
    *,
    seal_key: bytes | None = None,
    tenant: str = "",
    approval_style: ApprovalStyle = "interrupt",
) -> list[JsonObject]:
    """:func:`encode_messages` without its warnings (what the binding sends as is)."""
    return encode_messages(
        messages, seal_key=seal_key, tenant=tenant, approval_style=approval_style
    ).messages


def clean_confirm_changes(
    snapshot: Sequence[JsonObject], results: Mapping[str, JsonValue] | None = None
) -> list[JsonObject]:
    """``snapshot`` with every resolved ``confirm_changes`` answer cleaned (module docstring).

    ``results`` maps an original call id to its tool-message content; by default it is
    read from the snapshot's own tool messages. The input is not modified.
    """
    if not any(message.get("role") == "tool" for message in snapshot):
        return list(snapshot)  # no answer to clean, so no call to drop: what _cleaned gives
    return _cleaned(snapshot, results)


def _cleaned(
    snapshot: Sequence[JsonObject], results: Mapping[str, JsonValue] | None
) -> list[JsonObject]:
    """:func:`clean_confirm_changes`, every message looked at."""
    confirm_calls = _confirm_calls(snapshot)
    answered = {
        call_id
        for message in snapshot
        if message.get("role") == "tool" and isinstance(call_id := message.get("toolCallId"), str)
    }
    known = dict(results) if results is not None else _results(snapshot, confirm_calls)
    out: list[JsonObject] = []
    resolved: set[str] = set()
    for message in snapshot:
        call_id = message.get("toolCallId")
        is_answer = isinstance(call_id, str) and (
            call_id in confirm_calls or parse_confirm_changes_call_id(call_id) is not None
        )
        if message.get("role") != "tool" or not isinstance(call_id, str) or not is_answer:
            out.append(message)
            continue
        cleaned = _clean_answer(message, confirm_calls.get(call_id), known, answered)
        if cleaned is None:
            out.append(message)
        elif cleaned.get("toolCallId") == call_id:
            out.append(cleaned)
        else:
            resolved.add(call_id)
            if cleaned.get("toolCallId") not in answered:
                out.append(cleaned)
    return [_without_calls(message, resolved) for message in out]


def _confirm_calls(snapshot: Sequence[JsonObject]) -> dict[str, JsonValue]:
    """``confirm_changes`` call id → its raw arguments, from well-formed assistant messages."""
    calls: dict[str, JsonValue] = {}
    for message in snapshot:
        tool_calls = message.get("toolCalls")
        if message.get("role") != "assistant" or not isinstance(tool_calls, list):
            continue
        for call in tool_calls:
            if not isinstance(call, dict):
                continue
            function = call.get("function")
            call_id = call.get("id")
            if (
                isinstance(function, dict)
                and function.get("name") == CONFIRM_CHANGES_TOOL
                and isinstance(call_id, str)
            ):
                calls[call_id] = function.get("arguments")
    return calls


def _results(
    snapshot: Sequence[JsonObject], confirm_calls: Mapping[str, JsonValue]
) -> dict[str, JsonValue]:
    results: dict[str, JsonValue] = {}
    for message in snapshot:
        call_id = message.get("toolCallId")
        if (
            message.get("role") == "tool"
            and isinstance(call_id, str)
            and call_id not in confirm_calls
            and parse_confirm_changes_call_id(call_id) is None
        ):
            results[call_id] = message.get("content")
    return results


def _json_object(value: JsonValue) -> JsonObject | None:
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return cast(JsonObject, parsed) if isinstance(parsed, dict) else None


def _clean_answer(
    message: JsonObject,
    confirm_arguments: JsonValue,
    results: Mapping[str, JsonValue],
    answered: set[str],
) -> JsonObject | None:
    """The cleaned answer (``None``: leave the message as it is).

    A result under another ``toolCallId`` means "replace the synthetic pair by the real
    one"; the caller drops the answer instead when the real result is already present.
    """
    payload = _json_object(message.get("content"))
    accepted = payload.get("accepted") if payload is not None else None
    if payload is None or not isinstance(accepted, bool):
        return None
    if not accepted:
        return {**message, "content": DECLINED_TEXT}
    target = payload.get("function_call_id")
    if not isinstance(target, str):
        arguments = _json_object(confirm_arguments) if confirm_arguments is not None else None
        target = arguments.get("function_call_id") if arguments is not None else None
    if not isinstance(target, str) or (target not in results and target not in answered):
        return None
    content = results.get(target, "")
    return {"id": message.get("id"), "role": "tool", "toolCallId": target, "content": content}


def _without_calls(message: JsonObject, call_ids: set[str]) -> JsonObject:
    tool_calls = message.get("toolCalls")
    if not call_ids or message.get("role") != "assistant" or not isinstance(tool_calls, list):
        return message
    kept: list[JsonValue] = [
        call for call in tool_calls if not (isinstance(call, dict) and call.get("id") in call_ids)
    ]
    if len(kept) == len(tool_calls):
        return message
    cleaned = {key: value for key, value in message.items() if key != "toolCalls"}
    if kept:
        cleaned["toolCalls"] = kept
    elif "content" not in cleaned:
        cleaned["content"] = ""
    return cleaned
