"""History → ``input`` items, under the replay rules of provider-wire §1.5–§1.6.

Three regimes, chosen from the request's :class:`Continuation`:

* **continuation** (``previous_response_id`` or ``conversation``): the service holds
  everything up to the last model output, so only the messages after it are sent; stored
  server-issued items (``mcp_approval_request``, ``rs_``/``fc_`` items) are never re-sent,
  a new ``mcp_approval_response`` is sent exactly once. A decision whose request is not
  in the history at all answers one the service stored (only the service asks outside
  the history; a local approval's request is always in it), so it is sent too.
* **stateless** (``store: false``): nothing is stored, so reasoning travels as
  ``encrypted_content``. Per model step (one assistant message) either every reasoning
  item carries OpenAI-issued encrypted content and the step keeps its ids, or the step is
  sent without ids and without reasoning. When the step's reasoning is bound to a call,
  that is a loss: ``strict`` raises :class:`LossyHistoryError`, ``degrade`` drops with a
  warning. ``item_reference`` cannot be resolved and always raises.
* **stored** (default): ids reference stored items; reasoning without id and without
  encrypted content cannot be referenced and is dropped with a warning (with the step's
  ids, so the service never sees an item without its reasoning).

No server item id is ever minted: the service looks ids up and rejects fabricated ones
(``Item with id 'rs_…' not found.``, provider-wire §1.6). An assistant message without
an id therefore goes as id-less string-content messages, a refusal as its text with a
warning (:func:`_idless_message`).

Opaque payloads issued by another provider are never sent (dropped with a warning, or
refused per policy). Encrypted reasoning is another provider's when another vendor's
Responses service issued it (``ReplayContext.issuer``): its reasoning item, and the ids of
its step, named things only that service holds, so the step goes as for reasoning that
cannot be replayed (dropped on a finished turn; refused under strict when the current
turn's tool call needs it). Local approval and input control parts are never sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, cast

from interlock.codecs._media_kind import wildcard
from interlock.codecs._media_reach import UNREACHABLE, google_only_reason
from interlock.codecs.openai_responses._items import HOSTED
from interlock.codecs.openai_responses._render import (
    ItemGroup,
    group_parts,
    item_fields,
    render_group,
    render_input_message,
    render_message,
    render_single,
    render_tool_result,
)
from interlock.codecs.openai_responses._wire import (
    ITEM,
    PROVIDER,
    is_encrypted,
    is_own_opaque,
    own,
    wrap,
)
from interlock.transcript import (
    ApprovalIds,
    ApprovalRequestPart,
    ApprovalResponsePart,
    HostedToolPart,
    InputRequestPart,
    InputResponsePart,
    JsonObject,
    JsonPart,
    LossyHistoryError,
    MediaPart,
    Message,
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

Regime = Literal["continuation", "stateless", "stored"]
_CALL_TYPES = (ToolCallPart, ApprovalRequestPart, HostedToolPart)
_CONTENT_TYPES = (TextPart, MediaPart, JsonPart)


def _at(index: int, position: int) -> str:
    """The canonical location of a part (built only when a warning or an error needs it)."""
    return f"messages[{index}].parts[{position}]"


@dataclass(slots=True)
class ReplayContext:
    """What the encoder knows about the whole history while it walks the messages."""

    policy: ReplayPolicy
    regime: Regime
    messages: Sequence[Message]
    issuer: str = PROVIDER
    """The vendor of the target service: only its own encrypted reasoning is replayed."""
    turn_start: int = 0
    """First message of the current turn: only its steps' reasoning is ever required."""
    sent_approvals: set[str] = field(default_factory=set[str])
    warnings: list[TranslationWarning] = field(default_factory=list[TranslationWarning])
    hosted_approvals: set[str] | None = None
    """Filled from the whole history on first use (most histories have no approvals)."""
    local_approvals: frozenset[str] | None = None
    """Under continuation, the local approval ids of the history (filled with the above)."""

    def is_hosted_approval(self, approval_id: str) -> bool:
        """True when ``approval_id`` belongs to the service (hosted MCP); under
        continuation also when no request of the history has it (module docstring)."""
        if self.hosted_approvals is None:
            self.hosted_approvals = hosted_approval_ids(self.messages)
            if self.regime == "continuation":
                self.local_approvals = ApprovalIds.of(self.messages).local
        if approval_id in self.hosted_approvals:
            return True
        return self.local_approvals is not None and approval_id not in self.local_approvals

    def warn(self, code: str, location: str, message: str) -> None:
        """Record a deliberate degradation."""
        self.warnings.append(TranslationWarning(code=code, location=location, message=message))

    def lossy(self, location: str, reason: str, code: str) -> None:
        """A loss the target requires to avoid: raise in strict mode, warn in degrade mode."""
        if self.policy.mode == "strict":
            raise LossyHistoryError(location, reason, code=code)
        self.warn(code, location, reason)

    def foreign(self, opaque: Opaque, location: str) -> None:
        """An opaque payload issued by someone else: never sent."""
        target = "OpenAI" if self.issuer == PROVIDER else f"{self.issuer} (OpenAI Responses)"
        reason = f"{opaque.provider} {opaque.format} payload cannot be replayed to {target}"
        if self.policy.foreign_opaque == "refuse":
            raise LossyHistoryError(location, reason, code="foreign_opaque")
        self.warn("opaque_dropped", location, reason)


def hosted_approval_ids(messages: Sequence[Message]) -> set[str]:
    """Approval ids that belong to the service (hosted MCP), not to the local loop."""
    ids = set(ApprovalIds.of(messages).hosted)
    for message in messages:
        for part in message.parts:
            # A decision the Responses wire itself marked hosted, whose request is not here.
            if isinstance(part, ApprovalResponsePart) and own(part.extra).get(HOSTED) is True:
                ids.add(part.approval_id)
    return ids


def continuation_start(messages: Sequence[Message]) -> int:
    """Index of the first message after the last stored model output (0 if none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "assistant" and any(_server_issued(part) for part in message.parts):
            return index + 1
    return 0


def _server_issued(part: Part) -> bool:
    if isinstance(part, ApprovalRequestPart):
        return part.call.owner == "hosted"
    return getattr(part, "item_id", None) is not None


def encode_message(message: Message, index: int, context: ReplayContext) -> list[JsonObject]:
    """One canonical message as input items (possibly none)."""
    if message.role == "assistant":
        return _encode_step(message, index, context)
    items: list[JsonObject] = []
    content: list[OutputPart] = []
    content_at: int | None = None
    carries_content = message.role != "tool"
    for position, part in enumerate(message.parts):
        if carries_content and isinstance(part, _CONTENT_TYPES):
            if getattr(part, "signature", None) is not None:
                _check_signature(part, index, position, context)
            if type(part) is MediaPart and _unreachable(part, _at(index, position), context):
                continue
            if type(part) is MediaPart and _media_type_lost(part):
                _warn_media_type(part, _at(index, position), context)
            content.append(part)
            if content_at is None:
                content_at = len(items)
                items.append({})
            continue
        if type(part) is ToolResultPart:
            # The usual part of a tool message; what ``_encode_other`` would do, directly.
            part = _check_outputs(part, index, position, context)
            items.append(render_tool_result(part))
            continue
        items.extend(_encode_other(part, index, position, context))
    if content_at is not None:
        items[content_at] = render_input_message(message, content)
    elif not message.parts and message.role != "tool":
        items.append(render_input_message(message, ()))
    return items


def _media_type_lost(part: MediaPart) -> bool:
    """True when ``part``'s media type has no place on the wire.

    Inline data carries it in its ``data:`` URL; a URL or file id reference
    (``image_url`` / ``file_url`` / ``file_id``) has no media type field, and guessing one
    back from a file name would invent types for media that never had one. The wildcard
    ``image/*`` (an image of unknown type) is carried whole by ``input_image``.
    """
    if part.data is not None or part.media_type is None:
        return False
    return part.media_type != wildcard("image")


def _warn_media_type(part: MediaPart, location: str, context: ReplayContext) -> None:
    reason = f"the {part.media_type} media type of a media reference has no Responses field"
    context.warn("media_type_dropped", location, reason)


def _unreachable(part: MediaPart, location: str, context: ReplayContext) -> bool:
    """True (after the policy's decision) for a reference only Gemini can fetch."""
    reason = google_only_reason(part, "an OpenAI Responses upstream")
    if reason is None:
        return False
    context.lossy(location, reason, UNREACHABLE)
    return True


def _check_outputs(
    part: ToolResultPart, index: int, position: int, context: ReplayContext
) -> ToolResultPart:
    """Media references in a tool result's output whose type cannot travel, and those only
    Gemini can fetch (left out, after the policy's decision)."""
    kept: list[OutputPart] = []
    for number, output in enumerate(part.output):
        where = f"{_at(index, position)}.output[{number}]"
        if type(output) is MediaPart and _unreachable(output, where, context):
            continue
        if type(output) is MediaPart and _media_type_lost(output):
            _warn_media_type(output, where, context)
        kept.append(output)
    return part if len(kept) == len(part.output) else replace(part, output=tuple(kept))


def _check_signature(part: Part, index: int, position: int, context: ReplayContext) -> None:
    signature = getattr(part, "signature", None)
    if isinstance(signature, Opaque):
        context.foreign(signature, _at(index, position))


def _encode_other(
    part: Part, index: int, position: int, context: ReplayContext
) -> list[JsonObject]:
    """A non-content part of a user, system, developer or tool message."""
    match part:
        case ApprovalResponsePart():
            return _approval_response(part, context)
        case InputRequestPart() | InputResponsePart() | ApprovalRequestPart():
            return []
        case ReasoningPart() | TextPart() | MediaPart() | JsonPart():
            reason = f"a {part.kind} part cannot be sent here"
            context.lossy(_at(index, position), reason, "part_not_carried")
            return []
        case _:
            group = ItemGroup(kind="single", start=position, parts=[part])
            return _render_single(group, index, context, strip_id=False)


def _approval_response(part: ApprovalResponsePart, context: ReplayContext) -> list[JsonObject]:
    """Hosted decisions go out once; local ones are the loop's business."""
    if not context.is_hosted_approval(part.approval_id):
        return []
    if part.approval_id in context.sent_approvals:
        return []
    context.sent_approvals.add(part.approval_id)
    group = ItemGroup(kind="single", start=0, parts=[part])
    rendered = render_group(group)
    return [rendered] if rendered is not None else []


def _render_single(
    group: ItemGroup, index: int, context: ReplayContext, *, strip_id: bool
) -> list[JsonObject]:
    """One single-part group of message ``index`` (its location is built only if needed)."""
    part = group.parts[0]
    if isinstance(part, HostedToolPart):
        if part.provider != PROVIDER:
            reason = f"{part.provider} {part.item_type} item has no OpenAI Responses form"
            context.lossy(_at(index, group.start), reason, "hosted_item_not_carried")
            return []
        if part.item_type == "item_reference" and context.regime == "stateless":
            reason = "item_reference needs the stored item, but store is false"
            location = _at(index, group.start)
            raise LossyHistoryError(location, reason, code="item_reference_unresolvable")
    if isinstance(part, ApprovalResponsePart):
        return _approval_response(part, context)
    if isinstance(part, MediaPart | JsonPart):
        # Only model-side items reach here: assistant content is output_text/refusal only.
        reason = f"a {part.kind} part has no Responses assistant form"
        context.lossy(_at(index, group.start), reason, "part_not_carried")
        return []
    if isinstance(part, ToolResultPart):
        part = _check_outputs(part, index, group.start, context)
    if isinstance(part, ToolCallPart):
        signature = part.signature
        if isinstance(signature, Opaque):
            context.foreign(signature, _at(index, group.start))
    rendered = render_single(part, None if strip_id else group.item_id)
    return [rendered] if rendered is not None else []


@dataclass(frozen=True, slots=True)
class _StepPlan:
    """The decision for one model step: which reasoning groups go, whether ids go."""

    dropped: frozenset[int] = frozenset()
    strip_ids: bool = False


_KEEP_ALL = _StepPlan()
"""The usual plan: every group goes, ids included."""


def _encode_step(message: Message, index: int, context: ReplayContext) -> list[JsonObject]:
    groups = group_parts(message.parts)
    plan = _plan_step(groups, index, context)
    items: list[JsonObject] = []
    for number, group in enumerate(groups):
        if number in plan.dropped:
            continue
        if group.kind == "single":
            items.extend(_render_single(group, index, context, strip_id=plan.strip_ids))
            continue
        if group.kind == "message":
            for offset, part in enumerate(group.parts):
                if getattr(part, "signature", None) is not None:
                    _check_signature(part, index, group.start + offset, context)
            if plan.strip_ids or group.item_id is None:
                listed = "~content" in item_fields(group.parts[0])
                group = _uncited(group, index, context, documents_only=listed)
                if _needs_split(group):
                    items.extend(_idless_message(group, index, context))
                    continue
            else:
                group = _uncited(group, index, context, documents_only=True)
        rendered = render_group(group, strip_id=plan.strip_ids)
        if rendered is not None:
            items.append(rendered)
    return items


def _uncited(
    group: ItemGroup, index: int, context: ReplayContext, *, documents_only: bool = False
) -> ItemGroup:
    """A message group without the citations it cannot carry (``citation_dropped``).

    The SDK's only id-less assistant message has string content, which holds no
    annotations. With ``documents_only`` (a message with an id, or id-less list content a
    wire sent itself: ``~content``) only citations of a document (no URL: Anthropic's) go:
    annotations are ``url_citation``s.
    """
    parts: list[Part] = []
    for offset, part in enumerate(group.parts):
        if isinstance(part, TextPart) and part.citations:
            kept = tuple(c for c in part.citations if documents_only and c.url is not None)
            if len(kept) < len(part.citations):
                reason = (
                    "a document citation has no url_citation form"
                    if documents_only
                    else "an assistant message without an item id has no annotations"
                )
                context.warn("citation_dropped", _at(index, group.start + offset), reason)
                part = replace(part, citations=kept)
        parts.append(part)
    return ItemGroup(kind=group.kind, start=group.start, parts=parts)


def _needs_split(group: ItemGroup) -> bool:
    """True when an id-less message group has no form of its own on the wire.

    The only assistant message the SDK types accept without an ``id`` is the easy form
    with *string* content (its list form takes input parts, which the service refuses
    for assistant turns: trap 28), and an output message needs a server-issued id,
    which is never minted. So anything but a lone text part is split. A wire that did
    send list content without an id (Codex does; the service accepts it) carries a
    ``~content`` hint and is sent as it came.
    """
    if len(group.parts) == 1 and isinstance(group.parts[0], TextPart):
        return False
    return "~content" not in item_fields(group.parts[0])


def _idless_message(group: ItemGroup, index: int, context: ReplayContext) -> list[JsonObject]:
    """Each part as its own string-content assistant message; a refusal as its text."""
    fields = item_fields(group.parts[0])
    items: list[JsonObject] = []
    for offset, part in enumerate(cast("list[TextPart | RefusalPart]", group.parts)):
        if isinstance(part, RefusalPart):
            reason = "an assistant refusal without an item id can only be sent as text"
            context.warn("refusal_as_text", _at(index, group.start + offset), reason)
            part = TextPart(text=part.text)
        extra = wrap({**own(part.extra), ITEM: fields}) if fields else part.extra
        items.append(render_message([replace(part, extra=extra, item_id=None)], None))
    return items


def _plan_step(groups: list[ItemGroup], index: int, context: ReplayContext) -> _StepPlan:
    unreplayable: list[int] = []
    reasoning: list[int] = []
    issuers: list[str] = []
    stateless = context.regime == "stateless"
    for number, group in enumerate(groups):
        if group.kind != "reasoning":
            continue
        reasoning.append(number)
        has_blob, elsewhere = _scan_opaque(group, index, context)
        if elsewhere or not (has_blob if stateless else has_blob or group.item_id is not None):
            unreplayable.append(number)
            issuers.extend(elsewhere)
    if unreplayable:
        step = _Step(groups, unreplayable, reasoning, issuers[0] if issuers else "")
        return _drop_reasoning(step, index, context)
    if stateless and not reasoning and _has_ids(groups):
        location = f"messages[{index}]"
        context.warn("item_ids_stripped", location, "store is false: item ids cannot be looked up")
        return _StepPlan(strip_ids=True)
    return _KEEP_ALL


def _has_ids(groups: list[ItemGroup]) -> bool:
    return any(group.item_id is not None for group in groups)


@dataclass(frozen=True, slots=True)
class _Step:
    """A model step whose reasoning cannot all go: its groups, the unreplayable reasoning
    groups, every reasoning group, and the vendor that issued its encrypted content when
    that is not the target (``""`` otherwise)."""

    groups: list[ItemGroup]
    unreplayable: list[int]
    reasoning: list[int]
    issuer: str


def _why(issuer: str, context: ReplayContext) -> str:
    owner = "OpenAI" if context.issuer == PROVIDER else context.issuer
    if issuer:
        return (
            f"reasoning issued by {issuer}'s Responses service (its encrypted_content and "
            f"item ids) cannot be replayed to {owner}"
        )
    if context.regime == "stateless":
        return f"reasoning has no {owner} encrypted_content and store is false"
    return f"reasoning has neither an item id nor {owner} encrypted_content"


def _drop_reasoning(step: _Step, index: int, context: ReplayContext) -> _StepPlan:
    groups, reasoning = step.groups, step.reasoning
    bound = any(isinstance(group.parts[0], _CALL_TYPES) for group in groups)
    positions = [
        groups[number].start + offset
        for number in reasoning
        for offset in range(len(groups[number].parts))
    ]
    first = groups[step.unreplayable[0]].start
    warn_dropped(positions, first, bound, step.issuer, index, context)
    return _StepPlan(dropped=frozenset(reasoning), strip_ids=_has_ids(groups))


def warn_dropped(
    positions: list[int], first: int, bound: bool, issuer: str, index: int, context: ReplayContext
) -> None:
    """Say (or, under strict, refuse) that the reasoning parts at ``positions`` of message
    ``index`` are not sent; ``first`` is the first that cannot be replayed, ``bound`` tells
    whether the step has a call, ``issuer`` the other vendor whose encrypted content it
    holds (``""`` for none)."""
    location = f"messages[{index}].parts[{first}]"
    why = _why(issuer, context)
    code = "reasoning_dropped"
    if bound and index >= context.turn_start:
        # The model continues this step's tool call now: it needs its reasoning, stored or
        # not (issue 11: strict refuses what the current step needs, in either regime).
        why = f"{why}; the current turn's tool call needs it"
        code = "reasoning_not_replayable"
        context.lossy(location, why, code)  # strict raises here; degrade warns
    # Otherwise a finished turn: the service does not render its reasoning
    # (reasoning.context current_turn) nor check it. Either way the step goes without
    # reasoning and without ids, one warning per dropped part, each naming its location.
    for position in positions:
        where = f"messages[{index}].parts[{position}]"
        if where != location or code == "reasoning_dropped":
            context.warn(code, where, why)


def _scan_opaque(group: ItemGroup, index: int, context: ReplayContext) -> tuple[bool, list[str]]:
    """Whether the reasoning group carries the target's own encrypted content, and the
    other vendors whose encrypted content it carries (its item is then that service's:
    never referenced here); foreign payloads warn (or refuse, per policy)."""
    found = False
    elsewhere: list[str] = []
    for offset, part in enumerate(group.parts):
        opaque = part.opaque if isinstance(part, ReasoningPart) else None
        if opaque is None:
            continue
        if is_own_opaque(opaque, context.issuer):
            found = True
            continue
        if is_encrypted(opaque):
            elsewhere.append(opaque.provider)
        context.foreign(opaque, f"messages[{index}].parts[{group.start + offset}]")
    return found, elsewhere
