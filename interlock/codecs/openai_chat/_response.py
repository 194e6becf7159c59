"""Non-streaming ``chat.completion`` bodies both ways.

The first choice is the canonical message, further choices (``n > 1``) its alternatives.
A choice's ``logprobs.content`` tokens go on its text part; its own fields (``logprobs``…)
are also kept verbatim in ``extra[LAYOUT]`` so a same-dialect round trip is exact; a choice
without them gets ``logprobs`` written from its text's tokens. Top-level unknown fields
(``system_fingerprint``, ``service_tier``…) are in ``Response.extra[DIALECT]``.
"""

from __future__ import annotations

from dataclasses import replace

from interlock.codecs._logprobs import (
    decode_openai_tokens,
    encode_openai_tokens,
    message_logprobs,
    with_logprobs,
)
from interlock.codecs.openai_chat._citations import (
    encode_annotations,
    message_citations,
    with_citations,
)
from interlock.codecs.openai_chat._executed import BREAKDOWN, put_groq_fields, take_groq_fields
from interlock.codecs.openai_chat._fields import FieldPolicy
from interlock.codecs.openai_chat._finish import decode_finish_reason, encode_finish_reason
from interlock.codecs.openai_chat._message_decode import decode_message
from interlock.codecs.openai_chat._message_encode import MessageEncoder
from interlock.codecs.openai_chat._plain_answer import plain_answer
from interlock.codecs.openai_chat._policy import Degradations
from interlock.codecs.openai_chat._usage import decode_usage, encode_usage
from interlock.codecs.openai_chat._wire import (
    DIALECT,
    LAYOUT,
    ReasoningDialect,
    as_int,
    as_list,
    as_object,
    extra_of,
    merge_unknown,
    optional_str,
    required,
    rest,
    with_extra,
)
from interlock.transcript import (
    Alternative,
    DecodeError,
    JsonObject,
    JsonValue,
    Message,
    ReplayPolicy,
    Response,
)

_KNOWN = {"id", "object", "created", "model", "choices", "usage"}
_NO_TURN = 1 << 62


def decode_response(payload: JsonObject) -> Response:
    """A ``chat.completion`` body → canonical response (raises :class:`DecodeError`)."""
    body = as_object(payload, "")
    choices = as_list(required(body, "choices", ""), "choices")
    if not choices:
        raise DecodeError("choices", "a completion has at least one choice")
    first = _decode_choice(choices[0], "choices[0]")
    alternatives = tuple(
        _decode_choice(choice, f"choices[{i}]") for i, choice in enumerate(choices[1:], 1)
    )
    usage = body.get("usage")
    decoded = None if usage is None else decode_usage(usage, "usage")
    message, decoded, groq = take_groq_fields(body, first.message, decoded, BREAKDOWN)
    created = body.get("created")
    return Response(
        message=message,
        id=optional_str(body, "id", ""),
        model=optional_str(body, "model", ""),
        created=None if created is None else as_int(created, "created"),
        finish_reason=first.finish_reason,
        native_finish_reason=first.native_finish_reason,
        usage=decoded,
        alternatives=alternatives,
        extra=with_extra(rest(body, _KNOWN | groq), dict(first.extra.get(LAYOUT, {}))),
    )


def _decode_choice(value: JsonValue, path: str) -> Alternative:
    """One choice: its message (with the ``logprobs.content`` tokens on its text), finish
    and kept fields (``extra[LAYOUT]["choice"]``)."""
    choice = as_object(value, path)
    message = decode_message(
        as_object(required(choice, "message", path), f"{path}.message"), f"{path}.message", 0, {}
    )
    if message.role != "assistant":
        raise DecodeError(f"{path}.message.role", "a completion message is an assistant's")
    native = optional_str(choice, "finish_reason", path)
    layout: JsonObject = {"choice": rest(choice, {"index", "message", "finish_reason"})}
    if "finish_reason" not in choice:
        layout["no_finish_reason"] = True  # OpenRouter answers without one
    message = with_citations(message)
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict) and logprobs.get("content") is not None:
        tokens = decode_openai_tokens(logprobs["content"], f"{path}.logprobs.content")
        message = replace(message, parts=with_logprobs(message.parts, tokens))
    return Alternative(
        message=message,
        finish_reason=None if native is None else decode_finish_reason(native),
        native_finish_reason=native,
        extra={LAYOUT: layout},
    )


def encode_message(message: Message, dialect: ReasoningDialect | None) -> JsonObject:
    """An assistant message as a client sees it (reasoning and kept fields per ``dialect``)."""
    encoder = MessageEncoder(
        dialect=dialect,
        degrade=Degradations(ReplayPolicy(mode="degrade")),
        turn_start=_NO_TURN,
        response=True,
        fields=FieldPolicy(dialect=dialect, request=False),
    )
    encoder.encode([message])
    wire = as_object(encoder.wire[0], "message")
    citations = message_citations(message)
    if citations and "annotations" not in wire:
        wire["annotations"] = encode_annotations(citations)
    return wire


def encode_response(
    response: Response, *, reasoning_dialect: ReasoningDialect | None = None
) -> JsonObject:
    """Canonical response → ``chat.completion`` body.

    ``reasoning_dialect`` says where reasoning goes (``None``: back where it was decoded
    from, with every kept field). Chat responses carry no warnings: reasoning the dialect
    cannot show is left out, never relabelled (a summary is not raw
    ``reasoning_content``), and kept fields the client's dialect does not define are left
    out (:mod:`._fields`). Each alternative is one more choice. The commonest answers are
    written directly (:mod:`._plain_answer`, the same body).
    """
    plain = plain_answer(response, reasoning_dialect)
    if plain is not None:
        return plain
    fields = FieldPolicy(dialect=reasoning_dialect, request=False)
    first = Alternative(
        message=response.message,
        finish_reason=response.finish_reason,
        native_finish_reason=response.native_finish_reason,
        extra={LAYOUT: extra_of(response.extra, LAYOUT)},
    )
    choices: list[JsonValue] = [
        _encode_choice(choice, index, reasoning_dialect, fields)
        for index, choice in enumerate((first, *response.alternatives))
    ]
    more = extra_of(response.extra, LAYOUT).get("more_choices")
    if isinstance(more, list):
        choices.extend(more)  # kept by an earlier version of this codec
    body: JsonObject = {
        "id": response.id or "chatcmpl-interlock",
        "object": "chat.completion",
        "created": response.created or 0,
        "model": response.model or "",
        "choices": choices,
    }
    if response.usage is not None:
        body["usage"] = encode_usage(response.usage, fields)
    put_groq_fields(body, response, fields)
    return merge_unknown(body, fields.kept(response.extra, "response", ""))


def _encode_choice(
    alternative: Alternative,
    index: int,
    reasoning_dialect: ReasoningDialect | None,
    fields: FieldPolicy,
) -> JsonObject:
    layout = extra_of(alternative.extra, LAYOUT)
    choice_extra = layout.get("choice")
    if isinstance(choice_extra, dict):
        choice_extra = extra_of(fields.kept({DIALECT: choice_extra}, "choice", "choice"))
    choice: JsonObject = {
        "index": index,
        "message": encode_message(alternative.message, reasoning_dialect),
        "finish_reason": encode_finish_reason(
            alternative.finish_reason, alternative.native_finish_reason
        ),
    }
    if alternative.finish_reason is None and layout.get("no_finish_reason") is True:
        del choice["finish_reason"]
    if isinstance(choice_extra, dict):
        choice = {**choice, **{k: v for k, v in choice_extra.items() if k not in choice}}
    else:
        tokens = message_logprobs(alternative.message)
        choice["logprobs"] = (
            {"content": encode_openai_tokens(tokens), "refusal": None} if tokens else None
        )
    return choice
