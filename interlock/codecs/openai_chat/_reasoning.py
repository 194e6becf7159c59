"""Reasoning dialects: every carrier read on decode, one carrier written per upstream.

Decoding reads whatever it sees (provider-wire.md trap 13): ``reasoning_content`` and
``reasoning`` (raw text), ``reasoning_details`` (OpenRouter, one part per detail, the detail
kept whole as its :class:`Opaque`), and Gemini-compat ``extra_content.google
.thought_signature``. When ``reasoning_details`` is present the flat ``reasoning`` string is
a rendering of it and stays a plain wire field (it is not decoded twice); so does a
``reasoning`` identical to ``reasoning_content`` (one reasoning sent in both carriers).

Encoding writes only what the chosen dialect carries and never relabels: a summary is not
sent as raw ``reasoning_content`` (trap 4); an opaque payload goes only to its issuer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from interlock.codecs.openai_chat._policy import Degradations
from interlock.codecs.openai_chat._wire import (
    GOOGLE_SIGNATURE,
    LAYOUT,
    OPENAI_ENCRYPTED,
    OPENROUTER_DETAIL,
    ReasoningDialect,
    as_list,
    as_object,
    as_str,
    extra_of,
    with_extra,
)
from interlock.transcript import (
    JsonObject,
    JsonValue,
    Opaque,
    ReasoningKind,
    ReasoningPart,
)

RAW_CARRIERS = ("reasoning_content", "reasoning")
DETAIL_TEXT_FIELDS = {"reasoning.text": "text", "reasoning.summary": "summary"}
_DETAIL_KINDS: dict[str, ReasoningKind] = {
    "reasoning.text": "raw",
    "reasoning.summary": "summary",
    "reasoning.encrypted": "encrypted",
}


def decode_reasoning(obj: JsonObject, path: str) -> tuple[list[ReasoningPart], set[str]]:
    """The reasoning parts of a message (or delta) and the keys they consumed."""
    parts: list[ReasoningPart] = []
    consumed: set[str] = set()
    details = obj.get("reasoning_details")
    if details == []:
        details = None  # kept as a plain wire field
    if details is not None:
        items = as_list(details, f"{path}.reasoning_details")
        for index, item in enumerate(items):
            parts.append(detail_part(as_object(item, f"{path}.reasoning_details[{index}]")))
        consumed.add("reasoning_details")
    for key in RAW_CARRIERS:
        value = obj.get(key)
        if value is None or (key == "reasoning" and details is not None):
            continue
        if key == "reasoning" and value == obj.get("reasoning_content"):
            continue  # the same text in both carriers (ruby_llm sends it so): one reasoning
        text = as_str(value, f"{path}.{key}")
        parts.append(
            ReasoningPart(reasoning_kind="raw", text=text, extra=with_extra({}, {"carrier": key}))
        )
        consumed.add(key)
    return parts, consumed


def detail_part(detail: JsonObject) -> ReasoningPart:
    """One OpenRouter reasoning detail as a reasoning part that keeps the detail whole."""
    kind_name = detail.get("type")
    kind = _DETAIL_KINDS.get(kind_name, "encrypted") if isinstance(kind_name, str) else "encrypted"
    field = DETAIL_TEXT_FIELDS.get(kind_name) if isinstance(kind_name, str) else None
    text = detail.get(field) if field else None
    detail_id = detail.get("id")
    return ReasoningPart(
        reasoning_kind=kind,
        text=text if isinstance(text, str) else "",
        opaque=Opaque(provider="openrouter", format=OPENROUTER_DETAIL, data=detail),
        item_id=detail_id if isinstance(detail_id, str) else None,
    )


def synthesized_detail(part: ReasoningPart) -> JsonObject | None:
    """A ``reasoning.text`` / ``reasoning.summary`` detail for reasoning OpenRouter did not issue."""
    if part.reasoning_kind == "raw" and part.text:
        return {"type": "reasoning.text", "text": part.text, "format": "unknown"}
    if part.reasoning_kind == "summary" and part.text:
        return {"type": "reasoning.summary", "summary": part.text, "format": "unknown"}
    return None


def own_detail(part: ReasoningPart) -> JsonObject | None:
    """The OpenRouter detail this part carries, if OpenRouter issued it."""
    opaque = part.opaque
    if opaque is None or not opaque.is_from("openrouter", OPENROUTER_DETAIL):
        return None
    return opaque.data if isinstance(opaque.data, dict) else None


def google_signature(data: JsonValue) -> Opaque:
    """A Gemini thought signature, kept exactly as received."""
    return Opaque(provider="google", format=GOOGLE_SIGNATURE, data=data)


def take_google_signature(obj: JsonObject, path: str) -> tuple[Opaque | None, JsonObject]:
    """Split ``extra_content.google.thought_signature`` off ``obj``.

    Returns the signature and the object without it (other ``extra_content`` keys stay).
    """
    extra_content = obj.get("extra_content")
    if not isinstance(extra_content, dict):
        return None, obj
    google = extra_content.get("google")
    if not isinstance(google, dict) or "thought_signature" not in google:
        return None, obj
    where = f"{path}.extra_content.google.thought_signature"
    signature = google_signature(as_str(google["thought_signature"], where))
    remaining_google = {k: v for k, v in google.items() if k != "thought_signature"}
    remaining = {k: v for k, v in extra_content.items() if k != "google"}
    if remaining_google:
        remaining["google"] = remaining_google
    out = {k: v for k, v in obj.items() if k != "extra_content"}
    if remaining:
        out["extra_content"] = remaining
    return signature, out


def put_google_signature(built: JsonObject, signature: str, unknown: JsonObject) -> None:
    """Write ``extra_content.google.thought_signature`` into ``built`` (merging kept keys)."""
    kept = unknown.get("extra_content")
    extra_content: JsonObject = dict(kept) if isinstance(kept, dict) else {}
    kept_google = extra_content.get("google")
    google: JsonObject = dict(kept_google) if isinstance(kept_google, dict) else {}
    google["thought_signature"] = signature
    extra_content["google"] = google
    built["extra_content"] = extra_content


def is_google_signature(opaque: Opaque | None) -> bool:
    """True for a Gemini thought signature."""
    return opaque is not None and opaque.is_from("google", GOOGLE_SIGNATURE)


def part_dialect(part: ReasoningPart, dialect: ReasoningDialect | None) -> ReasoningDialect:
    """The dialect a part is written in: the chosen one, or (``None``) the one it came in.

    ``None`` preserves: raw text goes back to the key it was read from, an OpenRouter
    detail back into ``reasoning_details``; reasoning from elsewhere is treated as ``none``.
    """
    if dialect is not None:
        return dialect
    if own_detail(part) is not None:
        return "openrouter"
    carrier = extra_of(part.extra, LAYOUT).get("carrier")
    if carrier == "reasoning_content":
        return "reasoning_content"
    if carrier == "reasoning":
        return "reasoning"
    return "none"


def carries_google(opaque: Opaque | None, dialect: ReasoningDialect | None) -> bool:
    """True when ``opaque`` is a Gemini signature and the dialect (or preserving) carries it."""
    return is_google_signature(opaque) and dialect in ("gemini-compat", None)


@dataclass(frozen=True, slots=True)
class ReasoningSite:
    """Where reasoning parts sit: their message, and whether a current-turn call needs them."""

    location: str
    has_calls: bool
    current_turn_calls: bool


def encode_request_reasoning(
    parts: Sequence[tuple[int, ReasoningPart]],
    dialect: ReasoningDialect | None,
    site: ReasoningSite,
    degrade: Degradations,
) -> JsonObject:
    """The reasoning fields of one assistant message sent to an upstream of ``dialect``."""
    raw: dict[str, list[str]] = {}
    details: list[JsonValue] = []
    for index, part in parts:
        where = f"{site.location}.parts[{index}]"
        target = part_dialect(part, dialect)
        detail = own_detail(part) if target == "openrouter" else None
        if detail is not None:
            details.append(detail)
            continue
        if part.opaque is not None:
            opaque_not_carried(part.opaque, where, target, site, degrade)
        _carry_text(part, where, target, raw, details, degrade)
    if dialect == "reasoning_content" and site.has_calls:
        # DeepSeek thinking mode: a tool-call assistant message must carry the key, even
        # empty (provider-wire.md trap 12).
        raw.setdefault("reasoning_content", [])
    fields: JsonObject = {key: "".join(texts) for key, texts in raw.items()}
    if details:
        fields["reasoning_details"] = details
    return fields


def _carry_text(
    part: ReasoningPart,
    where: str,
    dialect: ReasoningDialect,
    raw: dict[str, list[str]],
    details: list[JsonValue],
    degrade: Degradations,
) -> None:
    if not part.text and not (dialect in RAW_CARRIERS and part.reasoning_kind == "raw"):
        return
    if dialect == "openrouter":
        detail = synthesized_detail(part)
        if detail is not None:
            details.append(detail)
        return
    if dialect in RAW_CARRIERS and part.reasoning_kind == "raw":
        raw.setdefault(dialect, []).append(part.text)
        return
    if dialect in RAW_CARRIERS:
        message = (
            f"a reasoning {part.reasoning_kind} is not raw reasoning; {dialect} would mislabel it"
        )
        degrade.drop("reasoning_summary_dropped", where, message)
        return
    degrade.drop("reasoning_dropped", where, f"the {dialect!r} reasoning dialect carries no text")


def opaque_not_carried(
    opaque: Opaque,
    where: str,
    dialect: ReasoningDialect,
    site: ReasoningSite,
    degrade: Degradations,
) -> None:
    """Drop (or refuse) an opaque payload the dialect cannot carry, per the policy."""
    if dialect == "gemini-compat" and is_google_signature(opaque):
        message = "Gemini-compat carries thought signatures on tool calls and text, not thoughts"
        degrade.drop("signature_dropped", where, message)
        return
    needed = opaque.format == OPENAI_ENCRYPTED or is_google_signature(opaque)  # any issuer
    if dialect == "none" and needed and site.current_turn_calls:
        # Trap 1: OpenAI Chat has no field for this, and the model continuing the
        # current turn's tool calls needs it.
        reason = (
            f"{opaque.format} reasoning bound to a tool call of the current turn has no "
            "Chat Completions field"
        )
        degrade.lossy("reasoning_required", where, reason)
        return
    degrade.foreign(where, opaque.provider, opaque.format)


def encode_response_reasoning(
    parts: Sequence[ReasoningPart], dialect: ReasoningDialect | None
) -> JsonObject:
    """Reasoning fields of a response message for ``dialect`` (``None``: as decoded).

    Only what the dialect carries is written; summaries are never written as raw text.
    """
    raw: dict[str, list[str]] = {}
    details: list[JsonValue] = []
    texts: list[str] = []
    for part in parts:
        target = part_dialect(part, dialect)
        if target in RAW_CARRIERS and part.reasoning_kind == "raw":
            raw.setdefault(target, []).append(part.text)
        elif target == "openrouter":
            detail = own_detail(part) or synthesized_detail(part)
            if detail is not None:
                details.append(detail)
                texts.append(part.text)
    fields: JsonObject = {key: "".join(pieces) for key, pieces in raw.items()}
    if details:
        if any(texts) and "reasoning" not in fields:
            fields["reasoning"] = "".join(texts)
        fields["reasoning_details"] = details
    return fields
