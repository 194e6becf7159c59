"""What an answer loses on its way to the client's dialect, and where the client reads it.

``encode_response`` has no warning channel in the codec contract; the gateway checks the
answer it encoded instead (:func:`answer_losses`). When the encoded answer, decoded back in
the client's dialect, holds fewer of a kind of content than the upstream's answer, a warning
is added to the call: ``citation_dropped`` (Anthropic cites only its own search results and
documents; OpenAI annotations are URL citations), ``logprobs_dropped`` (token
log-probabilities: Anthropic has none), ``candidates_dropped`` (several candidates:
Responses and Anthropic answer one), ``hosted_tool_dropped`` (another
provider's server-side tool parts, Groq's discovered MCP tools among them),
``hosted_approval_dropped``, ``reasoning_dropped`` (reasoning text the dialect cannot show)
and ``refusal_as_text`` (no refusal form: sent as text) — the codes the request encoders use
for the same losses in a history. A per-model usage breakdown (Groq's compound systems) is a
``usage_breakdown_dropped`` warning for a client of another dialect than Chat, and a Groq
answer field of another shape than documented (kept verbatim) ``vendor_field_dropped``.

Where a client finds the call's warnings (request-side and answer-side alike), in every
dialect, as :func:`warnings_field` / :func:`label_answer` write them:

* OpenAI Responses, Chat and Anthropic answers: a top-level ``interlock`` member
  ``{"translation": …, "warnings": [{"code", "location", "message"}, …]}`` (their SDKs keep
  unknown members: ``model_extra``), folded past eight of a code into one summary with
  ``"omitted": N`` (:func:`~interlock.gateway.headers.folded`);
* Gemini answers: ``modelStatus.message`` ends with ``interlock: <label>`` (the
  ``google-genai`` SDK removes unknown members, and of the typed free-text fields keeps only
  this one for Gemini API answers: ``finishMessage`` it reads on Vertex AI only).

A streamed answer carries the same at its end (:mod:`.stream_losses`); the
``x-interlock-translation`` header says it too where the answer is not streamed (a stream's
headers leave before its answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.responses import Response as HttpResponse

from interlock.codecs.openai_chat import vendor_response_fields
from interlock.gateway.bodies import json_response
from interlock.gateway.headers import (
    TRANSLATION_HEADER,
    code_counts,
    header_value,
    translation_label,
    warning_list,
)
from interlock.transcript import (
    ApprovalRequestPart,
    HostedToolPart,
    JsonObject,
    ReasoningPart,
    RefusalPart,
    Response,
    TextPart,
    TranslationWarning,
)

if TYPE_CHECKING:
    from interlock.gateway.dialects import Dialect
    from interlock.gateway.metrics import Metrics
    from interlock.gateway.proxy import ProxyCall

GEMINI_PREFIX = "interlock: "
"""What starts the gateway's words in a Gemini answer's ``modelStatus.message``."""


def citations(response: Response) -> int:
    """How many citations the texts of ``response`` hold."""
    parts = response.message.parts
    return sum(len(part.citations) for part in parts if isinstance(part, TextPart))


@dataclass(frozen=True, slots=True)
class _Loss:
    """One kind of answer content a client dialect may have no form for."""

    code: str
    what: str


_CITATION = _Loss("citation_dropped", "citations")
_HOSTED_TOOL = _Loss("hosted_tool_dropped", "hosted tool calls and results")
_APPROVAL = _Loss("hosted_approval_dropped", "hosted tool approval requests")
_REASONING = _Loss("reasoning_dropped", "reasoning parts with text")
_REFUSAL = _Loss("refusal_as_text", "refusals (sent as text)")
_LOGPROBS = _Loss("logprobs_dropped", "token log-probabilities")
_CANDIDATES = _Loss("candidates_dropped", "alternative candidates")
_LOSSES = (_CITATION, _HOSTED_TOOL, _APPROVAL, _REASONING, _REFUSAL, _LOGPROBS, _CANDIDATES)


def inventory(response: Response) -> dict[_Loss, int]:
    """How much of each kind in :data:`_LOSSES` ``response`` holds (kinds it has none of
    are absent)."""
    counts: dict[_Loss, int] = {}
    if response.alternatives:
        counts[_CANDIDATES] = len(response.alternatives)
    for part in response.message.parts:
        if isinstance(part, TextPart) and part.logprobs:
            counts[_LOGPROBS] = counts.get(_LOGPROBS, 0) + len(part.logprobs)
        kind, many = None, 1
        if isinstance(part, TextPart):
            kind, many = _CITATION, len(part.citations)
        elif isinstance(part, HostedToolPart):
            kind = _HOSTED_TOOL
        elif isinstance(part, ApprovalRequestPart):
            kind = _APPROVAL
        elif isinstance(part, ReasoningPart) and part.text:
            kind = _REASONING
        elif isinstance(part, RefusalPart):
            kind = _REFUSAL
        if kind is not None and many:
            counts[kind] = counts.get(kind, 0) + many
    return counts


def answer_losses(
    ingress: Dialect, decoded: Response, answer: JsonObject | None = None
) -> tuple[TranslationWarning, ...]:
    """The warnings for what ``decoded`` loses as ``answer`` (its encoding in ``ingress``;
    encoded here when not given): the answer decoded back in ``ingress`` holds fewer
    citations, hosted tool parts, approval requests, reasoning parts with text or refusals
    (a refusal arrives as text), or Groq vendor fields it cannot carry. Empty when nothing is
    lost."""
    warnings = _vendor_fields(ingress, decoded)
    sent = inventory(decoded)
    if not sent:
        return tuple(warnings)
    encoded = ingress.encode_response(decoded) if answer is None else answer
    arrived = inventory(ingress.decode_response(encoded))
    for loss in _LOSSES:
        before, after = sent.get(loss, 0), arrived.get(loss, 0)
        if after < before:
            message = f"{before - after} of {before} {loss.what}: no {ingress.name} form"
            warnings.append(TranslationWarning(code=loss.code, location="message", message=message))
    return tuple(warnings)


def _vendor_fields(ingress: Dialect, decoded: Response) -> list[TranslationWarning]:
    """Groq's per-model usage breakdown, and its answer fields not decoded (of another shape
    than documented), for a client of another dialect than Chat."""
    if ingress.name == "openai-chat":
        return []
    warnings = [
        TranslationWarning(
            code="vendor_field_dropped",
            location=name,
            message=f"the Chat Completions field {name!r} has no {ingress.name} form; not sent",
        )
        for name in vendor_response_fields(decoded.extra)
    ]
    if decoded.usage is not None and decoded.usage.breakdown:
        models = len(decoded.usage.breakdown)
        message = f"the usage of each of {models} models has no {ingress.name} form; not sent"
        warnings.append(
            TranslationWarning(code="usage_breakdown_dropped", location="usage", message=message)
        )
    return warnings


def adopt(call: ProxyCall, losses: tuple[TranslationWarning, ...]) -> None:
    """Add ``losses`` to the call's warnings, translation label and access-log record."""
    if not losses:
        return
    call.warnings = (*call.warnings, *losses)
    call.translation = translation_label(call.warnings, 0)
    call.record.translation = call.translation


def count(
    metrics: Metrics,
    ingress: Dialect,
    requested: tuple[TranslationWarning, ...],
    losses: tuple[TranslationWarning, ...],
    streamed: bool,
) -> None:
    """Count an answer's warnings, every one (its answer says them folded): the request's
    in ``interlock_request_warnings_total``, ``losses`` in ``interlock_answer_warnings_total``
    (on the event loop's thread)."""
    kind = "true" if streamed else "false"
    for code, times in code_counts(requested).items():  # hundreds: C loops
        metrics.request_warnings[ingress.name, code, kind] += times
    for loss in losses:
        metrics.answer_warnings[ingress.name, loss.code, kind] += 1


def warnings_field(translation: str, warnings: tuple[TranslationWarning, ...]) -> JsonObject:
    """The ``interlock`` member of an OpenAI-dialect or Anthropic answer (or final event)."""
    return {"translation": translation, "warnings": warning_list(warnings)}


def label_gemini(
    answer: JsonObject, translation: str, warnings: tuple[TranslationWarning, ...]
) -> None:
    """Say the warnings in a Gemini answer (or chunk): ``modelStatus.message``, after what the
    upstream said there."""
    status = answer.get("modelStatus")
    kept = status if isinstance(status, dict) else {}
    said = f"{GEMINI_PREFIX}{header_value(translation, warnings)}"
    before = kept.get("message")
    message = f"{before}; {said}" if isinstance(before, str) and before else said
    answer["modelStatus"] = {**kept, "message": message}


def label_answer(call: ProxyCall, answer: JsonObject) -> None:
    """Write the call's warnings into its non-streamed ``answer`` (nothing when none)."""
    if not call.warnings:
        return
    if call.ingress.name == "gemini":
        label_gemini(answer, call.translation, call.warnings)
    else:
        answer["interlock"] = warnings_field(call.translation, call.warnings)


def translated_answer(
    call: ProxyCall, decoded: Response, headers: dict[str, str]
) -> tuple[HttpResponse, tuple[TranslationWarning, ...]]:
    """``decoded`` in the client's dialect, labelled (header and body) with the call's
    warnings and what the answer lost; the losses are returned for counting. Pure: safe on a
    worker thread."""
    answer = call.ingress.encode_response(decoded)
    losses = answer_losses(call.ingress, decoded, answer)
    adopt(call, losses)
    headers[TRANSLATION_HEADER] = header_value(call.translation, call.warnings)
    label_answer(call, answer)
    return json_response(answer, 200, headers=headers), losses
