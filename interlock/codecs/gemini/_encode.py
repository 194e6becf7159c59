"""Canonical part → Gemini ``Part`` (encode side), with the replay rules.

* Gemini thought signatures are replayed exactly, on the part they came with.
* Opaque payloads of any other provider are never sent: dropped with an
  ``opaque_dropped`` warning, or refused when ``policy.foreign_opaque == "refuse"``.
* Reasoning without Gemini origin (another provider's summary or raw chain of thought) is
  not sent as a Gemini thought: dropped with a ``reasoning_dropped`` warning (trap 4).
* Refusals have no Gemini form: sent as plain text with a ``refusal_as_text`` warning.
* Control parts of *local* calls (approvals, input requests) are the caller's control plane
  and are never sent to a model.
* History Gemini cannot carry goes through :meth:`PartEncoder.lossy` (``strict`` refuses,
  ``degrade`` drops with a warning), never silently: another provider's hosted tool items
  (``hosted_item_unsupported``), *hosted* tool calls and their results
  (``hosted_call_unsupported``), approvals of hosted calls and the decisions answering them
  (``hosted_approval_unsupported``; only the Responses API carries MCP approvals), and a
  decision answering no approval request of the history (``approval_unmatched``: it cannot
  be told apart from a hosted one).

For responses (``for_request=False``) the same mapping applies, except that reasoning of any
origin is shown to the client as thought parts, nothing is refused, and citations are left
to the candidate (``groundingMetadata``, see :mod:`._citations`).
"""

from __future__ import annotations

import json
from typing import assert_never

from interlock.codecs._media_reach import UNREACHABLE, openai_file_id
from interlock.codecs.gemini._media import dropped_filename, encode_media
from interlock.codecs.gemini._parts import require_object_arguments
from interlock.codecs.gemini._results import encode_response_object
from interlock.codecs.gemini._wire import DIALECT, is_signature, object_entry
from interlock.transcript import (
    ApprovalIds,
    ApprovalRequestPart,
    ApprovalResponsePart,
    Extra,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonPart,
    LossyHistoryError,
    MediaPart,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    RefusalPart,
    ReplayPolicy,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    TranslationWarning,
)


class PartEncoder:
    """Encodes parts one by one, collecting warnings and the call ids/names seen so far.

    The approvals of ``history`` (a request encoder passes its messages) tell decisions of
    hosted calls from those of local calls; they are collected the first time a decision
    needs them.
    """

    __slots__ = (
        "_approvals",
        "_for_request",
        "_history",
        "_policy",
        "_prefix",
        "call_names",
        "hosted_calls",
        "minted_ids",
        "warnings",
    )

    def __init__(
        self,
        policy: ReplayPolicy,
        *,
        for_request: bool,
        prefix: str = "messages",
        history: tuple[Message, ...] = (),
    ) -> None:
        self._policy = policy
        self._for_request = for_request
        self._prefix = prefix
        self._approvals: ApprovalIds | None = None
        self._history = history
        self.warnings: list[TranslationWarning] = []
        self.call_names: dict[str, str] = {}
        self.minted_ids: set[str] = set()
        self.hosted_calls: set[str] = set()

    @property
    def for_request(self) -> bool:
        """True when encoding a request (the replay rules apply), not an answer."""
        return self._for_request

    def location(self, message: int, part: int) -> str:
        """The canonical location of a part, e.g. ``messages[4].parts[1]``."""
        if message < 0:
            return f"{self._prefix}.parts[{part}]"
        return f"{self._prefix}[{message}].parts[{part}]"

    def warn(self, code: str, location: str, message: str) -> None:
        """Record a deliberate degradation."""
        self.warnings.append(TranslationWarning(code=code, location=location, message=message))

    def lossy(self, code: str, location: str, message: str) -> None:
        """Loss Gemini cannot avoid: a strict request encode raises, otherwise a warning."""
        if self._for_request and self._policy.mode == "strict":
            raise LossyHistoryError(location, message, code=code)
        self.warn(code, location, message)

    def encode(self, part: Part, message: int, index: int) -> JsonObject | None:
        """The wire part for ``part``, or ``None`` when it is (deliberately) not sent."""
        match part:
            case TextPart():
                wire = _fields(part.extra)
                wire["text"] = part.text
                if part.citations and self._for_request:
                    # An answer's citations go on its candidate (_citations); history has none.
                    where = self.location(message, index)
                    self.warn("citation_dropped", where, "Gemini content has no citation field")
                return self._sign(wire, part.signature, message, index)
            case ToolCallPart():
                return self._call(part, message, index)
            case ToolResultPart():
                return self._result(part, message, index)
            case ReasoningPart():
                return self._reasoning(part, message, index)
            case MediaPart():
                return self._media(part, message, index)
            case RefusalPart():
                self.warn(
                    "refusal_as_text",
                    self.location(message, index),
                    "Gemini has no refusal part; the refusal is sent as text",
                )
                return {"text": part.text}
            case JsonPart():
                self.warn(
                    "json_as_text",
                    self.location(message, index),
                    "Gemini has no JSON content part outside a function response; sent as text",
                )
                return {"text": json.dumps(part.value, ensure_ascii=False)}
            case HostedToolPart():
                return self._hosted(part, message, index)
            case ApprovalRequestPart() | ApprovalResponsePart():
                self._approval(part, self.location(message, index))
                return None
            case InputRequestPart() | InputResponsePart():
                return None
            case _:
                assert_never(part)

    def _sign(
        self, wire: JsonObject, opaque: Opaque | None, message: int, index: int
    ) -> JsonObject:
        if opaque is None:
            return wire
        if is_signature(opaque):
            wire["thoughtSignature"] = opaque.data
        else:
            self.foreign(opaque, self.location(message, index))
        return wire

    def foreign(self, opaque: Opaque, location: str) -> None:
        """Drop (with a warning) or refuse an opaque payload Gemini did not issue."""
        what = f"{opaque.provider} {opaque.format} payload"
        if self._for_request and self._policy.foreign_opaque == "refuse":
            raise LossyHistoryError(
                location,
                f"the {what} was issued by another provider and cannot be sent to Gemini",
                code="foreign_opaque",
            )
        self.warn("opaque_dropped", location, f"the {what} cannot be sent to Gemini; dropped")

    def _call(self, part: ToolCallPart, message: int, index: int) -> JsonObject | None:
        location = self.location(message, index)
        if part.owner == "hosted":
            self.hosted_calls.add(part.call_id)
            self._hosted_call(part.call_id, location, "call")
            return None
        arguments = require_object_arguments(part, location)
        own = part.extra.get(DIALECT, {})
        call: JsonObject = dict(object_entry(own, "call"))
        if own.get("mintedId"):
            self.minted_ids.add(part.call_id)
        else:
            call["id"] = part.call_id
        call["name"] = part.name
        if arguments is not None:
            call["args"] = arguments
        self.call_names[part.call_id] = part.name
        wire = _fields(part.extra)
        wire["functionCall"] = call
        if own.get("signatureIn") == "functionCall" and is_signature(part.signature):
            call["thoughtSignature"] = part.signature.data  # pyright: ignore[reportOptionalMemberAccess] -- is_signature checked it
            return wire
        return self._sign(wire, part.signature, message, index)

    def _result(self, part: ToolResultPart, message: int, index: int) -> JsonObject | None:
        location = self.location(message, index)
        if part.call_id in self.hosted_calls:
            self._hosted_call(part.call_id, location, "result")
            return None
        own = part.extra.get(DIALECT, {})
        name = part.name or self.call_names.get(part.call_id)
        if name is None:
            raise LossyHistoryError(
                location,
                f"the result of call {part.call_id!r} has no function name and no matching "
                "call precedes it; Gemini functionResponse needs the name",
                code="unnamed_result",
            )
        body: JsonObject = {}
        if part.call_id and not own.get("mintedId") and part.call_id not in self.minted_ids:
            body["id"] = part.call_id
        body["name"] = name
        media = [item for item in part.output if isinstance(item, MediaPart)]
        if not (own.get("noResponse") and len(media) == len(part.output)):
            body["response"] = encode_response_object(part, location, self.warnings)
        if media:
            sent = [self._media(item, message, index) for item in media]
            body["parts"] = [wire for wire in sent if wire is not None]
        body.update(object_entry(own, "response"))
        wire = _fields(part.extra)
        wire["functionResponse"] = body
        return wire

    def _reasoning(self, part: ReasoningPart, message: int, index: int) -> JsonObject | None:
        own = part.extra.get(DIALECT)
        native = own is not None or is_signature(part.opaque)
        if not native and self._for_request:
            if part.text:
                self.warn(
                    "reasoning_dropped",
                    self.location(message, index),
                    f"{part.reasoning_kind} reasoning from another provider is not sent to "
                    "Gemini as a thought",
                )
            if part.opaque is not None:
                self.foreign(part.opaque, self.location(message, index))
            return None
        if part.reasoning_kind == "encrypted" and not part.text:
            if not is_signature(part.opaque):
                if part.opaque is not None:
                    self.foreign(part.opaque, self.location(message, index))
                return None
            wire = _fields(part.extra)
            if not (own or {}).get("noText"):
                wire["text"] = ""
            return self._sign(wire, part.opaque, message, index)
        wire = _fields(part.extra)
        wire["text"] = part.text
        wire["thought"] = True
        return self._sign(wire, part.opaque, message, index)

    def _media(self, part: MediaPart, message: int, index: int) -> JsonObject | None:
        unreachable = openai_file_id(part)
        if unreachable is not None:
            reason = f"{unreachable} is a file uploaded to OpenAI: Gemini cannot read it"
            self.lossy(UNREACHABLE, self.location(message, index), reason)
            return None
        wire = encode_media(part)
        if wire is None:
            raise LossyHistoryError(
                self.location(message, index),
                "media part has neither inline data nor a URI",
                code="empty_media",
            )
        if dropped_filename(part):
            self.warn(
                "filename_dropped",
                self.location(message, index),
                f"Gemini takes no file name on media; {part.filename!r} is not sent",
            )
        return wire

    def _hosted(self, part: HostedToolPart, message: int, index: int) -> JsonObject | None:
        if part.provider == "google":
            return dict(part.item)
        self.lossy(
            "hosted_item_unsupported",
            self.location(message, index),
            f"{part.provider} hosted item {part.item_type!r} has no Gemini form",
        )
        return None

    def _hosted_call(self, call_id: str, location: str, what: str) -> None:
        self.lossy(
            "hosted_call_unsupported",
            location,
            f"the {what} of service-executed (hosted) call {call_id!r} has no Gemini form; "
            "as a functionCall Gemini would take it for its own",
        )

    def _approval(self, part: ApprovalRequestPart | ApprovalResponsePart, location: str) -> None:
        """Skip a local call's approval; anything else is history Gemini cannot carry."""
        if isinstance(part, ApprovalRequestPart):
            if part.call.owner == "hosted":
                label = f" on server {part.call.server_label!r}" if part.call.server_label else ""
                self.lossy(
                    "hosted_approval_unsupported",
                    location,
                    f"the approval request for hosted call {part.call.name!r}{label} has no "
                    "Gemini form (only the Responses API carries MCP approvals)",
                )
            return
        if self._approvals is None:
            self._approvals = ApprovalIds.of(self._history)
        if part.approval_id in self._approvals.local:
            return
        if part.approval_id in self._approvals.hosted:
            self.lossy(
                "hosted_approval_unsupported",
                location,
                f"the decision on hosted approval {part.approval_id!r} has no Gemini form "
                "(only the Responses API carries MCP approvals)",
            )
            return
        self.lossy(
            "approval_unmatched",
            location,
            f"the decision on approval {part.approval_id!r} answers no approval request of "
            "this history, so it may belong to a hosted call; Gemini cannot carry it",
        )


def _fields(extra: Extra) -> JsonObject:
    """A fresh wire part seeded with the unknown part fields kept at decode time."""
    own = extra.get(DIALECT)
    if not own:
        return {}
    fields = own.get("fields")
    return dict(fields) if isinstance(fields, dict) else {}
