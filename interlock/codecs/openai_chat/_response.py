"""Non-streaming ``chat.completion`` bodies both ways.

The first choice is the canonical message. Choice-level fields (``logprobs``…) and any
further choices (``n > 1``) are kept verbatim in ``Response.extra[LAYOUT]`` so a same-dialect
round trip is exact; top-level unknown fields (``system_fingerprint``, ``service_tier``…)
in ``Response.extra[DIALECT]``.
"""

from __future__ import annotations

from interlock.codecs.openai_chat._citations import (
    encode_annotations,
    message_citations,
    with_citations,
)
from interlock.codecs.openai_chat._fields import FieldPolicy
from interlock.codecs.openai_chat._finish import decode_finish_reason, encode_finish_reason
from interlock.codecs.openai_chat._message_decode import decode_message
from interlock.codecs.openai_chat._message_encode import MessageEncoder
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
    choice = as_object(choices[0], "choices[0]")
    message = decode_message(
        as_object(required(choice, "message", "choices[0]"), "choices[0].message"),
        "choices[0].message",
        0,
        {},
    )
    if message.role != "assistant":
        raise DecodeError("choices[0].message.role", "a completion message is an assistant's")
    native = optional_str(choice, "finish_reason", "choices[0]")
    layout: JsonObject = {"choice": rest(choice, {"index", "message", "finish_reason"})}
    if "finish_reason" not in choice:
        layout["no_finish_reason"] = True  # OpenRouter answers without one
    if len(choices) > 1:
        layout["more_choices"] = choices[1:]
    usage = body.get("usage")
    created = body.get("created")
    return Response(
        message=with_citations(message),
        id=optional_str(body, "id", ""),
        model=optional_str(body, "model", ""),
        created=None if created is None else as_int(created, "created"),
        finish_reason=None if native is None else decode_finish_reason(native),
        native_finish_reason=native,
        usage=None if usage is None else decode_usage(usage, "usage"),
        extra=with_extra(rest(body, _KNOWN), layout),
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
    out (:mod:`._fields`).
    """
    fields = FieldPolicy(dialect=reasoning_dialect, request=False)
    layout = extra_of(response.extra, LAYOUT)
    choice_extra = layout.get("choice")
    if isinstance(choice_extra, dict):
        choice_extra = extra_of(fields.kept({DIALECT: choice_extra}, "choice", "choice"))
    choice: JsonObject = {
        "index": 0,
        "message": encode_message(response.message, reasoning_dialect),
        "finish_reason": encode_finish_reason(
            response.finish_reason, response.native_finish_reason
        ),
    }
    if response.finish_reason is None and layout.get("no_finish_reason") is True:
        del choice["finish_reason"]
    if isinstance(choice_extra, dict):
        choice = {**choice, **{k: v for k, v in choice_extra.items() if k not in choice}}
    else:
        choice["logprobs"] = None
    choices: list[JsonValue] = [choice]
    more = layout.get("more_choices")
    if isinstance(more, list):
        choices.extend(more)
    body: JsonObject = {
        "id": response.id or "chatcmpl-interlock",
        "object": "chat.completion",
        "created": response.created or 0,
        "model": response.model or "",
        "choices": choices,
    }
    if response.usage is not None:
        body["usage"] = encode_usage(response.usage, fields)
    return merge_unknown(body, fields.kept(response.extra, "response", ""))
