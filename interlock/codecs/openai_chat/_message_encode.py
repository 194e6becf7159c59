"""Canonical messages → Chat ``messages[]``, under a replay policy.

One canonical message may become several wire messages (each tool result is its own
``tool`` message); ``origins`` maps every wire message back to its canonical index so
errors name the canonical message. Control parts (approvals, input requests) are never
sent: those of *local* calls silently (they are the caller's control plane), while an
approval of a *hosted* call (``call.owner == "hosted"``, e.g. a Responses MCP approval, and
the decision answering it) is model history Chat cannot carry, so it goes through
:class:`Degradations` like anything else Chat cannot carry. A request message left with
nothing to send (only control or hosted parts) is not sent at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from interlock.codecs.openai_chat._content import (
    encode_refusal_part,
    encode_text_content,
    encode_text_part,
    encode_user_content,
    json_text,
)
from interlock.codecs.openai_chat._executed import FIELD as EXECUTED
from interlock.codecs.openai_chat._executed import encode_executed, is_executed
from interlock.codecs.openai_chat._fields import AS_DECODED, FieldPolicy, Scope, admits
from interlock.codecs.openai_chat._policy import Degradations
from interlock.codecs.openai_chat._reasoning import (
    ReasoningSite,
    carries_google,
    encode_request_reasoning,
    encode_response_reasoning,
    opaque_not_carried,
    put_google_signature,
)
from interlock.codecs.openai_chat._thinking import encode_thinking, in_content
from interlock.codecs.openai_chat._tools import encode_tool_call
from interlock.codecs.openai_chat._wire import (
    LAYOUT,
    ReasoningDialect,
    extra_of,
    merge_unknown,
)
from interlock.transcript import (
    CONTROL_PART_TYPES,
    ApprovalIds,
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    Message,
    Part,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)


@dataclass(slots=True)
class MessageEncoder:
    """Encodes one request's messages; ``wire`` and ``origins`` grow together.

    With ``response`` set it encodes a response message instead: reasoning is written
    for a client (:func:`encode_response_reasoning`) and no turn rules apply.
    """

    dialect: ReasoningDialect | None
    degrade: Degradations
    turn_start: int
    response: bool = False
    approvals: ApprovalIds = field(default_factory=ApprovalIds)
    fields: FieldPolicy = AS_DECODED
    wire: list[JsonValue] = field(default_factory=list[JsonValue])
    origins: list[int] = field(default_factory=list[int])

    def encode(self, messages: Sequence[Message]) -> None:
        """Encode every message in order."""
        for index, message in enumerate(messages):
            self._message(message, index)

    def _emit(self, wire: JsonObject, origin: int) -> None:
        self.wire.append(wire)
        self.origins.append(origin)

    def _message(self, message: Message, index: int) -> None:
        plain = None if self.response else plain_wire(message)
        if plain is not None:
            self._emit(plain, index)
            return
        location = f"messages[{index}]"
        parts: list[tuple[int, Part]] = []
        for i, part in enumerate(message.parts):
            if isinstance(part, CONTROL_PART_TYPES):
                self._control(part, f"{location}.parts[{i}]")
            elif isinstance(part, HostedToolPart) and not (
                message.role == "assistant" and is_executed(part)
            ):
                self._unsupported(part, f"{location}.parts[{i}]", message.role)
            else:
                parts.append((i, part))
        if message.parts and not parts and not self.response:
            return  # nothing of it has a Chat form: no empty message is invented
        if message.role == "assistant":
            self._assistant(message, parts, index)
            return
        content: list[tuple[int, Part]] = []
        for i, part in parts:
            if isinstance(part, ToolResultPart):
                self._flush(message, content, index)
                content = []
                self._emit(self._tool_result(message, part, f"{location}.parts[{i}]"), index)
            elif isinstance(part, TextPart | MediaPart | JsonPart) and message.role != "tool":
                content.append((i, part))
            else:
                self._unsupported(part, f"{location}.parts[{i}]", message.role)
        self._flush(message, content, index)

    def _flush(self, message: Message, content: list[tuple[int, Part]], index: int) -> None:
        if not content:
            return
        location = f"messages[{index}]"
        as_parts = extra_of(message.extra, LAYOUT).get("content") == "parts"
        built: JsonObject = {"role": message.role}
        if message.role == "user":
            built["content"] = encode_user_content(
                [part for _, part in content], location, as_parts=as_parts, degrade=self.degrade
            )
        else:
            texts = self._texts(content, location, message.role)
            built["content"] = encode_text_content(texts, as_parts=as_parts) or ""
        if message.name is not None:
            built["name"] = message.name
        self._emit(merge_unknown(built, self._kept(message, index)), index)

    def _kept(self, message: Message, index: int) -> Mapping[str, JsonObject]:
        """The message's ``extra`` with only the kept fields the target admits."""
        scope: Scope = message.role
        if self.response:
            scope = "response_message"
        return self.fields.kept(message.extra, scope, f"messages[{index}]")

    def _texts(self, content: list[tuple[int, Part]], location: str, role: str) -> list[TextPart]:
        texts: list[TextPart] = []
        for i, part in content:
            if isinstance(part, TextPart):
                texts.append(part)
            else:
                self._unsupported(part, f"{location}.parts[{i}]", role)
        return texts

    def _control(self, part: Part, location: str) -> None:
        """Skip a control part; an approval of a hosted call is history Chat cannot carry."""
        if isinstance(part, ApprovalRequestPart):
            hosted = part.call.owner == "hosted"
        elif isinstance(part, ApprovalResponsePart):
            hosted = part.approval_id in self.approvals.hosted
            if not hosted and part.approval_id not in self.approvals.local:
                reason = "an approval decision answering no approval request of this history"
                self.degrade.drop("approval_dropped", location, f"{reason} is not sent")
                return
        else:
            return
        if hosted:
            reason = (
                f"an approval {part.kind.removeprefix('approval_')} of a hosted tool call has "
                "no Chat Completions form (only the Responses API carries MCP approvals)"
            )
            self.degrade.lossy("hosted_approval_unsupported", location, reason)

    def _unsupported(self, part: Part, location: str, role: str) -> None:
        if isinstance(part, ReasoningPart):
            self.degrade.drop("reasoning_dropped", location, f"{role} messages carry no reasoning")
            return
        reason = f"a {part.kind} part has no Chat Completions form in a {role} message"
        self.degrade.lossy("part_unsupported", location, reason)

    def _tool_result(self, message: Message, part: ToolResultPart, location: str) -> JsonObject:
        texts: list[TextPart] = []
        for i, output in enumerate(part.output):
            if isinstance(output, TextPart):
                texts.append(output)
            elif isinstance(output, JsonPart):
                texts.append(TextPart(text=json_text(output.value)))
            else:
                reason = "Chat tool messages are text only; a tool result's media cannot be sent"
                self.degrade.lossy("tool_result_media", f"{location}.output[{i}]", reason)
        as_parts = extra_of(message.extra, LAYOUT).get("content") == "parts"
        content: JsonValue = (
            [encode_text_part(text) for text in texts]
            if as_parts
            else "".join(text.text for text in texts)
        )
        built: JsonObject = {"role": "tool", "tool_call_id": part.call_id, "content": content}
        if extra_of(message.extra, LAYOUT).get("role") == "function":
            self.degrade.drop(
                "deprecated_function_converted",
                location,
                "a deprecated 'function' message is sent as a 'tool' message",
            )
        if len(message.parts) != 1:
            return built
        where = location.partition(".parts[")[0]
        return merge_unknown(built, self.fields.kept(message.extra, "tool", where))

    def _assistant(self, message: Message, parts: list[tuple[int, Part]], index: int) -> None:
        location = f"messages[{index}]"
        reasoning = [
            (i, p)
            for i, p in parts
            if isinstance(p, ReasoningPart) and not in_content(p, self.dialect)
        ]
        calls = [(i, p) for i, p in parts if isinstance(p, ToolCallPart)]
        current = index >= self.turn_start
        site = ReasoningSite(
            location=location, has_calls=bool(calls), current_turn_calls=current and bool(calls)
        )
        built: JsonObject = {"role": "assistant"}
        if self.response:
            built.update(encode_response_reasoning([p for _, p in reasoning], self.dialect))
        else:
            built.update(encode_request_reasoning(reasoning, self.dialect, site, self.degrade))
        self._assistant_content(message, parts, location, built)
        if calls:
            built["tool_calls"] = self._tool_calls(calls, location, current)
        self._executed(parts, location, built)
        if message.name is not None:
            built["name"] = message.name
        self._emit(merge_unknown(built, self._kept(message, index)), index)

    def _executed(self, parts: list[tuple[int, Part]], location: str, built: JsonObject) -> None:
        """Groq's executed tools back on the message, where the target admits the field
        (every Chat upstream but plain OpenAI); elsewhere refused or warned as any hosted
        part is."""
        executed = encode_executed(part for _, part in parts)
        if not executed:
            return
        dialect = self.fields.dialect
        scope: Scope = "response_message" if self.response else "assistant"
        if dialect is None or admits(scope, EXECUTED, executed, dialect, request=not self.response):
            built[EXECUTED] = executed
            return
        for i, part in parts:
            if is_executed(part):
                self._unsupported(part, f"{location}.parts[{i}]", "assistant")

    def _citations(self, part: TextPart, where: str) -> None:
        """Citations go out on a response's message only (``annotations``)."""
        if part.citations and not self.response:
            reason = "Chat requests carry no annotations (a response-only field)"
            self.degrade.drop("citation_dropped", where, reason)

    def _assistant_content(
        self, message: Message, parts: list[tuple[int, Part]], location: str, built: JsonObject
    ) -> None:
        layout = extra_of(message.extra, LAYOUT)
        as_parts = layout.get("content") == "parts"
        content: list[JsonValue] = []
        texts: list[TextPart] = []
        refusals: list[str] = []
        signed = False
        for i, part in parts:
            where = f"{location}.parts[{i}]"
            if isinstance(part, TextPart):
                signed = self._text_signature(part, where, built, signed, message)
                if extra_of(part.extra, LAYOUT).get("carrier"):
                    continue
                self._citations(part, where)
                texts.append(part)
                content.append(encode_text_part(part))
            elif isinstance(part, RefusalPart):
                if extra_of(part.extra, LAYOUT).get("in") == "content":
                    content.append(encode_refusal_part(part))
                    as_parts = True
                else:
                    refusals.append(part.text)
            else:
                as_parts = self._other_part(part, where, content) or as_parts
        if as_parts or (len(texts) > 1 and not self.response):
            built["content"] = content
        elif texts:  # a response's content is one string (the SDKs type it so)
            built["content"] = _as_decoded("".join(text.text for text in texts), layout)
        elif layout.get("content") == "empty" and refusals:
            built["content"] = ""
        elif layout.get("content") != "absent" and "content" not in extra_of(message.extra):
            carried = refusals or any(isinstance(p, ToolCallPart) for _, p in parts)
            built["content"] = None if carried else ""
        if refusals:
            built["refusal"] = "".join(refusals)

    def _other_part(self, part: Part, where: str, content: list[JsonValue]) -> bool:
        """An assistant part that is neither text nor refusal; True when it went into
        ``content`` (Mistral's reasoning, written back where it came from)."""
        if in_content(part, self.dialect):
            assert isinstance(part, ReasoningPart)
            content.append(encode_thinking(part))
            return True
        if not isinstance(part, ReasoningPart | ToolCallPart) and not is_executed(part):
            self._unsupported(part, where, "assistant")
        return False

    def _text_signature(
        self, part: TextPart, where: str, built: JsonObject, signed: bool, message: Message
    ) -> bool:
        """Carry a text part's signature on the message (Gemini-compat: one slot)."""
        signature = part.signature
        if signature is None:
            return signed
        if carries_google(signature, self.dialect):
            if not signed and isinstance(signature.data, str):
                put_google_signature(built, signature.data, extra_of(message.extra))
                return True
            reason = "Chat has one message-level signature slot; this second one cannot be sent"
            self.degrade.drop("signature_dropped", where, reason)
            return signed
        site = ReasoningSite(location=where, has_calls=False, current_turn_calls=False)
        opaque_not_carried(signature, where, self.dialect or "none", site, self.degrade)
        return signed

    def _tool_calls(
        self, calls: list[tuple[int, ToolCallPart]], location: str, current: bool
    ) -> list[JsonValue]:
        out: list[JsonValue] = []
        for position, (i, call) in enumerate(calls):
            where = f"{location}.parts[{i}]"
            if extra_of(call.extra, LAYOUT).get("function_call"):
                self.degrade.drop(
                    "deprecated_function_converted",
                    where,
                    "a deprecated 'function_call' is sent as a tool call",
                )
            wire = encode_tool_call(call, self.fields, where)
            signature = self._call_signature(call, where, current, first=position == 0)
            if signature is not None:
                put_google_signature(wire, signature, extra_of(call.extra))
            out.append(wire)
        return out

    def _call_signature(
        self, call: ToolCallPart, where: str, current: bool, *, first: bool
    ) -> str | None:
        opaque = call.signature
        if (
            opaque is not None
            and carries_google(opaque, self.dialect)
            and isinstance(opaque.data, str)
        ):
            return opaque.data
        if opaque is not None:
            site = ReasoningSite(location=where, has_calls=True, current_turn_calls=current)
            opaque_not_carried(opaque, where, self.dialect or "none", site, self.degrade)
        if self.dialect == "gemini-compat" and current and first:
            # Gemini 3 validates the first call of every current-turn step (§3.4).
            reason = (
                "Gemini needs a thought signature on the first tool call of a current-turn "
                "step and this call has none (degrade mode sends the documented dummy)"
            )
            self.degrade.lossy("signature_required", where, reason)
            return self.degrade.policy.gemini_dummy_signature
        return None


def plain_wire(message: Message) -> JsonObject | None:
    """The wire form of a message of the commonest shapes, built directly: one plain text
    part (no signature, citations or extra) of a system, developer, user or assistant
    message, or one tool result of text outputs; no name, no extra. ``None`` for any other
    message. Equal to what the general path writes for it in a request, with no warning."""
    if message.extra or message.name is not None or len(message.parts) != 1:
        return None
    part, role = message.parts[0], message.role
    if isinstance(part, TextPart):
        if role == "tool" or part.signature is not None or part.citations or part.extra:
            return None
        return {"role": role, "content": part.text}
    if isinstance(part, ToolResultPart) and role == "tool":
        texts: list[str] = []
        for output in part.output:
            if not isinstance(output, TextPart):
                return None
            texts.append(output.text)
        return {"role": "tool", "tool_call_id": part.call_id, "content": "".join(texts)}
    return None


def _as_decoded(text: str, layout: JsonObject) -> JsonValue:
    """The text as the content it came in: Cloudflare's JSON object content goes back as the
    object (when the text still is one), anything else as the string."""
    if layout.get("content") != "object":
        return text
    try:
        value: JsonValue = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text
