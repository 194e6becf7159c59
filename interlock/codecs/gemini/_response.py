"""``GenerateContentResponse`` ⇄ canonical :class:`Response`.

The first candidate becomes the response message; further candidates (``candidateCount >
1``) its alternatives, each decoded the same way. A candidate's ``logprobsResult`` goes on
its text (:mod:`._logprobs`). ``responseId`` ↔ ``id``,
``modelVersion`` ↔ ``model``. Candidate fields the canonical model does not name
(``index``, ``safetyRatings``, ``citationMetadata``, ``groundingMetadata``…) are kept in
``extra["gemini"]["candidate"]``; its presence also marks the response as Gemini's own, so
a foreign response is encoded with the default ``"index": 0``. The grounding and citation
metadata also become the text parts' citations (:mod:`._citations`); an answer whose
candidate fields do not carry them already gets them written from the citations.
"""

from __future__ import annotations

from typing import Final

from interlock.codecs._logprobs import message_logprobs, with_logprobs
from interlock.codecs.gemini._citations import CITATION, GROUNDING, encode_citations, with_citations
from interlock.codecs.gemini._encode import PartEncoder
from interlock.codecs.gemini._finish import decode_finish, encode_finish, prompt_block
from interlock.codecs.gemini._logprobs import RESULT, decode_logprobs, encode_logprobs
from interlock.codecs.gemini._parts import decode_part
from interlock.codecs.gemini._usage import decode_usage, encode_usage
from interlock.codecs.gemini._wire import (
    DIALECT,
    MINTED_ID_PREFIX,
    as_list,
    as_object,
    as_str,
    object_entry,
    split_fields,
)
from interlock.transcript import (
    Alternative,
    Citation,
    FinishReason,
    JsonObject,
    JsonValue,
    Message,
    Part,
    ReplayPolicy,
    Response,
    TextPart,
)

RESPONSE_FIELDS: Final = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId"})
CANDIDATE_FIELDS: Final = frozenset({"content", "finishReason"})
CONTENT_FIELDS: Final = frozenset({"role", "parts"})


def minted_call_id(response_id: str | None, ordinal: int) -> str:
    """The id given to the ``ordinal``-th id-less function call of a response (0-based)."""
    return (
        f"{MINTED_ID_PREFIX}{response_id}_{ordinal}"
        if response_id
        else f"{MINTED_ID_PREFIX}{ordinal}"
    )


def decode_content(
    value: JsonValue, path: str, response_id: str | None, calls_before: int
) -> tuple[list[Part], JsonObject]:
    """A candidate ``content`` as parts plus the message marks (role, unknown fields)."""
    fields, unknown = split_fields(as_object(value, path), CONTENT_FIELDS)
    marks: JsonObject = {"fields": unknown} if unknown else {}
    role = fields.get("role")
    if role is None:
        marks["noRole"] = True
    elif as_str(role, f"{path}.role") != "model":
        marks["role"] = role
    if "parts" not in fields:
        marks["noParts"] = True
    parts: list[Part] = []
    calls = calls_before
    for index, item in enumerate(as_list(fields.get("parts", []), f"{path}.parts")):
        part = decode_part(item, f"{path}.parts[{index}]", minted_call_id(response_id, calls))
        if part.kind == "tool_call":
            calls += 1
        parts.append(part)
    return parts, marks


def decode_response(payload: JsonObject) -> Response:
    """A wire response as a canonical response; raises :class:`DecodeError` naming the path."""
    fields, unknown = split_fields(payload, RESPONSE_FIELDS)
    marks: JsonObject = {"fields": unknown} if unknown else {}
    response_id = _optional_str(fields, "responseId", "")
    model = _optional_str(fields, "modelVersion", "")
    if "candidates" not in fields:
        marks["noCandidates"] = True
    candidates = as_list(fields.get("candidates", []), "candidates")
    first = Alternative(message=Message(role="assistant", parts=()))
    alternatives: list[Alternative] = []
    calls = 0
    for index, value in enumerate(candidates):
        decoded = decode_candidate(value, f"candidates[{index}]", response_id, calls)
        calls += sum(1 for part in decoded.message.parts if part.kind == "tool_call")
        if index == 0:
            first = decoded
            marks["candidate"] = object_entry(decoded.extra.get(DIALECT, {}), "candidate")
        else:
            alternatives.append(decoded)
    reason, native = first.finish_reason, first.native_finish_reason
    if native is None and (blocked := prompt_block(payload)) is not None:
        reason, native = "content_filter", blocked
    usage = fields.get("usageMetadata")
    return Response(
        message=first.message,
        id=response_id,
        model=model,
        finish_reason=reason,
        native_finish_reason=native,
        usage=None if usage is None else decode_usage(usage, "usageMetadata"),
        alternatives=tuple(alternatives),
        extra={DIALECT: marks} if marks else {},
    )


def decode_candidate(
    value: JsonValue, path: str, response_id: str | None, calls_before: int
) -> Alternative:
    """One candidate: its message (citations and log-probabilities on its text), finish, and
    its other fields kept in ``extra[DIALECT]["candidate"]`` (as a stream's finish keeps them)."""
    candidate, unknown = split_fields(as_object(value, path), CANDIDATE_FIELDS)
    parts: list[Part] = []
    message_marks: JsonObject = {}
    if "content" in candidate:
        parts, message_marks = decode_content(
            candidate["content"], f"{path}.content", response_id, calls_before
        )
        parts = list(with_citations(parts, unknown))
        parts = list(with_logprobs(parts, decode_logprobs(unknown, path)))
    else:
        message_marks["noContent"] = True
    native: str | None = None
    reason: FinishReason | None = None
    if "finishReason" in candidate:
        native = as_str(candidate["finishReason"], f"{path}.finishReason")
        reason = decode_finish(native, any(part.kind == "tool_call" for part in parts))
    return Alternative(
        message=Message(
            role="assistant",
            parts=tuple(parts),
            extra={DIALECT: message_marks} if message_marks else {},
        ),
        finish_reason=reason,
        native_finish_reason=native,
        extra={DIALECT: {"candidate": unknown}},
    )


def _optional_str(fields: dict[str, JsonValue], key: str, path: str) -> str | None:
    value = fields.get(key)
    return None if value is None else as_str(value, f"{path}{key}")


def encode_content(
    message: Message,
    encoder: PartEncoder,
    cited: list[tuple[int | None, str, tuple[Citation, ...]]],
) -> JsonObject:
    """The wire ``content`` of a response message (role ``model``); each text part's wire
    index, text and citations are appended to ``cited``."""
    own = message.extra.get(DIALECT, {})
    content: JsonObject = dict(object_entry(own, "fields"))
    if isinstance(own.get("role"), str):
        content["role"] = own["role"]
    elif not own.get("noRole"):
        content["role"] = "model"
    parts: list[JsonValue] = []
    for index, part in enumerate(message.parts):
        encoded = encoder.encode(part, -1, index)
        if isinstance(part, TextPart):
            cited.append((len(parts) if encoded is not None else None, part.text, part.citations))
        if encoded is not None:
            parts.append(encoded)
    if parts or not own.get("noParts"):
        content["parts"] = parts
    return content


def encode_candidate(alternative: Alternative, index: int, *, foreign: bool) -> JsonObject:
    """One wire candidate. ``foreign``: the answer is another dialect's (it gets ``index``,
    and ``STOP`` for a missing finish); a Gemini candidate's kept fields are written back."""
    encoder = PartEncoder(ReplayPolicy(), for_request=False, prefix="message")
    candidate: JsonObject = {}
    cited: list[tuple[int | None, str, tuple[Citation, ...]]] = []
    message = alternative.message
    if not message.extra.get(DIALECT, {}).get("noContent"):
        candidate["content"] = encode_content(message, encoder, cited)
    finish = encode_finish(
        alternative.finish_reason, alternative.native_finish_reason, foreign=foreign
    )
    if finish is not None:
        candidate["finishReason"] = finish
    marks = alternative.extra.get(DIALECT)
    if marks is None:
        kept: JsonObject = {"index": index} if foreign else {}
    else:
        kept = object_entry(marks, "candidate")
    if GROUNDING not in kept and CITATION not in kept:
        candidate.update(encode_citations(cited, base_offsets=False))
    if RESULT not in kept:
        candidate.update(encode_logprobs(message_logprobs(message)))
    candidate.update(kept)
    return candidate


def encode_response(response: Response) -> JsonObject:
    """Canonical response as a wire ``GenerateContentResponse``; each alternative is one
    more candidate.

    Opaque payloads of other providers cannot reach a Gemini client and are left out
    (the gateway's reasoning vault keeps them); see :class:`PartEncoder`.
    """
    marks = response.extra.get(DIALECT)
    payload: JsonObject = {}
    if marks is None or not marks.get("noCandidates") or response.message.parts:
        foreign = marks is None
        first = Alternative(
            message=response.message,
            finish_reason=response.finish_reason,
            native_finish_reason=response.native_finish_reason,
            extra={}
            if marks is None
            else {DIALECT: {"candidate": object_entry(marks, "candidate")}},
        )
        payload["candidates"] = [
            encode_candidate(alternative, index, foreign=foreign)
            for index, alternative in enumerate((first, *response.alternatives))
        ]
        others = (marks or {}).get("candidates")
        if isinstance(others, list):
            payload["candidates"].extend(others)  # kept by an earlier version of this codec
    if response.usage is not None:
        payload["usageMetadata"] = encode_usage(response.usage)
    if response.model is not None:
        payload["modelVersion"] = response.model
    if response.id is not None:
        payload["responseId"] = response.id
    if marks is not None:
        payload.update(object_entry(marks, "fields"))
    return payload
