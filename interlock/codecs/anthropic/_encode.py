"""Canonical part → Anthropic content block (encode side), with the replay rules.

* Thinking signatures and redacted thinking are replayed exactly, and only when the target
  vendor's service issued them, or a client holds them (unrecorded issuer):
  ``anthropic.thinking_signature`` / ``anthropic.redacted_thinking``; another vendor's were
  dropped before encoding (:mod:`._vendors`). An answer to a client carries any vendor's.
* Opaque payloads of any other provider are never sent: dropped with an ``opaque_dropped``
  warning, or refused when ``policy.foreign_opaque == "refuse"``.
* Reasoning without an Anthropic signature is not sent as a ``thinking`` block (the service
  would reject it as an invalid signature): dropped with a ``reasoning_dropped`` warning.
  Responses to a client leave it out too: unsigned, the client would send it back as a
  thinking block Anthropic rejects (the vault keeps what the upstream needs).
* Refusals and JSON parts have no Anthropic block: sent as text with a warning.
* Control parts of *local* calls are never sent; anything hosted by another provider goes
  through :meth:`PartEncoder.lossy` (``strict`` refuses, ``degrade`` drops with a warning).
"""

from __future__ import annotations

import json
from typing import assert_never

from interlock.codecs._media_kind import concrete
from interlock.codecs._media_reach import UNREACHABLE, unreachable_reason
from interlock.codecs.anthropic._blocks import text_source
from interlock.codecs.anthropic._citations import encode_citations
from interlock.codecs.anthropic._wire import (
    DIALECT,
    PROVIDER,
    is_own,
    is_signed,
    object_entry,
    own_extra,
)
from interlock.transcript import (
    ANTHROPIC_REDACTED_THINKING,
    ANTHROPIC_THINKING_SIGNATURE,
    ApprovalIds,
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonPart,
    JsonValue,
    LossyHistoryError,
    MediaPart,
    Opaque,
    OutputPart,
    Part,
    ReasoningPart,
    RefusalPart,
    ReplayPolicy,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    TranslationWarning,
)

_NO_APPROVALS = ApprovalIds()


def _fields(part: Part | OutputPart) -> JsonObject:
    """A fresh block seeded with the unknown block fields kept at decode time."""
    return dict(object_entry(own_extra(part.extra), "fields"))


class PartEncoder:
    """Encodes parts one by one, collecting warnings; ``for_request`` applies the replay rules."""

    __slots__ = ("_approvals", "_for_request", "_issuer", "_policy", "warnings")

    def __init__(
        self,
        policy: ReplayPolicy,
        *,
        for_request: bool,
        approvals: ApprovalIds = _NO_APPROVALS,
        issuer: str = PROVIDER,
    ) -> None:
        self._policy = policy
        self._for_request = for_request
        self._approvals = approvals
        self._issuer = issuer
        """The vendor of the target service: a request replays its signatures only."""
        self.warnings: list[TranslationWarning] = []

    def warn(self, code: str, location: str, message: str) -> None:
        """Record a deliberate degradation."""
        self.warnings.append(TranslationWarning(code=code, location=location, message=message))

    def lossy(self, code: str, location: str, message: str) -> None:
        """Loss Anthropic cannot avoid: a strict request encode raises, otherwise a warning."""
        if self._for_request and self._policy.mode == "strict":
            raise LossyHistoryError(location, message, code=code)
        self.warn(code, location, message)

    def foreign(self, opaque: Opaque, location: str) -> None:
        """Drop (with a warning) or refuse an opaque payload Anthropic did not issue."""
        what = f"{opaque.provider} {opaque.format} payload"
        if self._for_request and self._policy.foreign_opaque == "refuse":
            raise LossyHistoryError(
                location,
                f"the {what} was issued by another provider and cannot be sent to Anthropic",
                code="foreign_opaque",
            )
        self.warn("opaque_dropped", location, f"the {what} cannot be sent to Anthropic; dropped")

    def encode(self, part: Part, location: str) -> JsonObject | None:
        """The block for ``part``, or ``None`` when it is (deliberately) not sent."""
        match part:
            case TextPart():
                return self._text(part, location)
            case ReasoningPart():
                return self._reasoning(part, location)
            case ToolCallPart():
                return self._call(part, location)
            case ToolResultPart():
                return self.result(part, location)
            case MediaPart():
                return self._media(part, location)
            case JsonPart():
                return self._json(part, location)
            case RefusalPart():
                self.warn(
                    "refusal_as_text", location, "Anthropic has no refusal block; sent as text"
                )
                return {"type": "text", "text": part.text}
            case HostedToolPart():
                return self._hosted(part, location)
            case ApprovalRequestPart() | ApprovalResponsePart():
                self._approval(part, location)
                return None
            case InputRequestPart() | InputResponsePart():
                return None
            case _:
                assert_never(part)

    def _text(self, part: TextPart, location: str) -> JsonObject | None:
        if part.signature is not None:
            self.foreign(part.signature, location)
        block: JsonObject = {"type": "text", "text": part.text, **_fields(part)}
        if part.citations and "citations" not in block:
            citations = encode_citations(part, location, self.warn)
            if citations:
                block["citations"] = citations
        if not part.text and self._for_request:
            return None  # Anthropic rejects empty text blocks; nothing is lost
        return block

    def _hosted(self, part: HostedToolPart, location: str) -> JsonObject | None:
        if part.provider == PROVIDER:
            return dict(part.item)
        self.lossy(
            "hosted_item_unsupported",
            location,
            f"{part.provider} hosted item {part.item_type!r} has no Anthropic form",
        )
        return None

    def _reasoning(self, part: ReasoningPart, location: str) -> JsonObject | None:
        opaque = part.opaque
        if self._carried(opaque, ANTHROPIC_THINKING_SIGNATURE):
            assert opaque is not None
            block: JsonObject = {"type": "thinking", "thinking": part.text}
            block["signature"] = opaque.data
            return {**block, **_fields(part)}
        if self._carried(opaque, ANTHROPIC_REDACTED_THINKING):
            assert opaque is not None
            return {"type": "redacted_thinking", "data": opaque.data, **_fields(part)}
        if opaque is not None:
            self.foreign(opaque, location)
        if not self._for_request:
            if DIALECT in part.extra and not part.text and opaque is None:
                return {"type": "thinking", "thinking": "", "signature": "", **_fields(part)}
            return None  # unsigned, it would come back as a block Anthropic rejects
        if part.text or DIALECT in part.extra:
            self.warn(
                "reasoning_dropped",
                location,
                f"{part.reasoning_kind} reasoning without an Anthropic signature cannot be "
                "sent as a thinking block",
            )
        return None

    def _carried(self, opaque: Opaque | None, format: str) -> bool:
        """A request carries the target vendor's payloads (and a client's); an answer any
        vendor's (the client holds them)."""
        if self._for_request:
            return is_own(opaque, format, self._issuer)
        return is_signed(opaque, format)

    def _call(self, part: ToolCallPart, location: str) -> JsonObject | None:
        if part.owner == "hosted":
            self.lossy(
                "hosted_call_unsupported",
                location,
                f"service-executed (hosted) call {part.call_id!r} has no Anthropic form; "
                "as a tool_use Anthropic would expect a tool_result from the client",
            )
            return None
        if part.signature is not None:
            self.foreign(part.signature, location)
        try:
            arguments = part.parsed_arguments
        except ValueError as error:
            raise LossyHistoryError(
                location,
                f"the arguments of call {part.call_id!r} are not valid JSON ({error}); "
                "Anthropic tool_use input must be a JSON object",
                code="invalid_arguments",
            ) from error
        if not isinstance(arguments, dict):
            raise LossyHistoryError(
                location,
                f"the arguments of call {part.call_id!r} are not a JSON object; "
                "Anthropic tool_use input must be one",
                code="invalid_arguments",
            )
        block: JsonObject = {"type": "tool_use", "id": part.call_id, "name": part.name}
        block["input"] = arguments
        return {**block, **_fields(part)}

    def result(self, part: ToolResultPart, location: str) -> JsonObject:
        """A ``tool_result`` block (``is_error`` for any outcome but success)."""
        own = own_extra(part.extra)
        block: JsonObject = {"type": "tool_result", "tool_use_id": part.call_id}
        content = self._result_content(part, own, location)
        if content is not None:
            block["content"] = content
        if part.is_error:
            block["is_error"] = True
        elif own.get("isErrorFalse"):
            block["is_error"] = False
        return {**block, **_fields(part)}

    def _result_content(self, part: ToolResultPart, own: JsonObject, location: str) -> JsonValue:
        if not part.output and own.get("content") == "absent":
            return None
        plain = all(
            isinstance(item, TextPart | JsonPart) and not item.extra for item in part.output
        )
        if plain and own.get("content") != "list":
            return part.text
        blocks: list[JsonValue] = []
        for number, item in enumerate(part.output):
            match item:
                case TextPart():
                    blocks.append({"type": "text", "text": item.text, **_fields(item)})
                case MediaPart():
                    media = self._media(item, f"{location}.output[{number}]")
                    if media is not None:
                        blocks.append(media)
                case JsonPart():
                    blocks.append(self._json(item, location, warn=False))
                case _:
                    assert_never(item)
        return blocks

    def _media(self, part: MediaPart, location: str) -> JsonObject | None:
        unreachable = unreachable_reason(part, "Anthropic")
        if unreachable is not None:
            self.lossy(UNREACHABLE, location, unreachable)
            return None
        kind = (part.media_type or "").partition("/")[0]
        if kind in ("video", "audio") and "block" not in own_extra(part.extra):
            reason = f"Anthropic has no {kind} input: the {part.media_type} part cannot be sent"
            self.lossy("media_unsupported", location, reason)
            return None
        block = media_block(part)
        source = block.get("source")
        by_reference = isinstance(source, dict) and source.get("type") in ("url", "file")
        if by_reference and concrete(part.media_type) and DIALECT not in part.extra:
            self.warn(
                "media_type_dropped",
                location,
                f"Anthropic's URL sources carry no media type; {part.media_type} is not sent",
            )
        return block

    def _json(self, part: JsonPart, location: str, *, warn: bool = True) -> JsonObject:
        if own_extra(part.extra).get("block") and isinstance(part.value, dict):
            return dict(part.value)
        if warn:
            self.warn("json_as_text", location, "Anthropic has no JSON block; sent as text")
        return {"type": "text", "text": json.dumps(part.value, ensure_ascii=False)}

    def _approval(self, part: ApprovalRequestPart | ApprovalResponsePart, location: str) -> None:
        """Skip a local call's approval; anything else is history Anthropic cannot carry."""
        if isinstance(part, ApprovalRequestPart):
            if part.call.owner == "hosted":
                self.lossy(
                    "hosted_approval_unsupported",
                    location,
                    f"the approval request for hosted call {part.call.name!r} has no "
                    "Anthropic form (only the Responses API carries MCP approvals)",
                )
            return
        if part.approval_id in self._approvals.local:
            return
        self.lossy(
            "approval_unmatched"
            if part.approval_id not in self._approvals.hosted
            else "hosted_approval_unsupported",
            location,
            f"the decision on approval {part.approval_id!r} may belong to a hosted call; "
            "Anthropic cannot carry it",
        )


def media_block(part: MediaPart) -> JsonObject:
    """An ``image`` or ``document`` block for a media part (by its decode mark or media type)."""
    own = own_extra(part.extra)
    media_type = part.media_type
    data = part.data
    uri = part.uri
    if data is None and uri is not None and uri.startswith("data:") and ";base64," in uri:
        head, _, data = uri.partition(";base64,")
        media_type, uri = head.removeprefix("data:") or media_type, None
    block = own.get("block")
    kind = block if isinstance(block, str) and block else _media_kind(media_type)
    source_type = own.get("sourceType")
    source: JsonObject
    if source_type == "text":
        source = {"type": "text", "media_type": media_type, "data": text_source(part)}
    elif data is not None:
        source = {"type": "base64", "media_type": media_type, "data": data}
    else:
        key = "file_id" if source_type == "file" else "url"
        source = {"type": "file" if source_type == "file" else "url", key: uri}
        source.update(object_entry(own, "source"))
    return {"type": kind, "source": source, **object_entry(own, "fields")}


def _media_kind(media_type: str | None) -> str:
    return "image" if (media_type or "").startswith("image/") else "document"
