"""``POST /v1/responses`` body → canonical :class:`Request`.

``instructions`` becomes a leading system message marked ``~instructions`` (so it
re-encodes as ``instructions``); ``store`` / ``previous_response_id`` / ``conversation``
become the :class:`Continuation`; top-level fields the canonical model does not name are
kept verbatim in ``Request.extra[DIALECT]``.
"""

from __future__ import annotations

from interlock.codecs import _structured as structured
from interlock.codecs._options import check_answer_options
from interlock.codecs.openai_responses._items import decode_items
from interlock.codecs.openai_responses._tools import (
    decode_tool_choice,
    decode_tools,
    encode_tool_choice,
)
from interlock.codecs.openai_responses._wire import (
    ENCRYPTED_INCLUDE,
    LOGPROBS_INCLUDE,
    PROVIDER,
    as_list,
    as_object,
    optional_bool,
    optional_int,
    optional_number,
    optional_str,
    split_fields,
    string,
    wrap,
)
from interlock.transcript import (
    Continuation,
    DecodeError,
    GenerationOptions,
    HostedToolSpec,
    JsonObject,
    Message,
    Request,
    ResponseFormat,
    TextPart,
    ToolChoice,
    ToolSpec,
)

KNOWN_FIELDS = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "stream",
        "store",
        "previous_response_id",
        "conversation",
        "reasoning",
        "temperature",
        "top_p",
        "max_output_tokens",
        "user",
        "metadata",
        "top_logprobs",
    }
)


def decode_request(payload: JsonObject, *, issuer: str = PROVIDER) -> Request:
    """Decode a Responses request body; raises :class:`DecodeError` naming the bad path.

    Encrypted reasoning in ``input`` is labelled with ``issuer``: a client's history says
    nothing of where its blobs came from (the gateway relabels them by provenance)."""
    body = as_object(payload, "")
    hints = split_fields(body, KNOWN_FIELDS)
    hints |= {key: None for key in KNOWN_FIELDS if key in body and body[key] is None}
    messages = _instructions(body, hints) + _input(body, hints, issuer)
    tools, hosted, tool_choice = _tools(body, hints)
    model = body.get("model")
    if model is None:
        hints["~no_model"] = True
    response_format = _response_format(hints)
    stream = optional_bool(body, "stream", "")
    if stream is False:
        hints["~stream_false"] = True
    return Request(
        model="" if model is None else string(model, "model"),
        messages=messages,
        tools=tuple(tools),
        hosted_tools=tuple(hosted),
        tool_choice=tool_choice,
        parallel_tool_calls=optional_bool(body, "parallel_tool_calls", ""),
        stream=bool(stream),
        options=_options(body, hints),
        continuation=_continuation(body, hints),
        response_format=response_format,
        extra=wrap(hints),
    )


def _response_format(hints: JsonObject) -> ResponseFormat | None:
    """``text.format`` as canonical structured output; the rest of ``text`` stays kept."""
    text = hints.get("text")
    if not isinstance(text, dict) or "format" not in text:
        return None
    decoded = structured.decode_responses(text["format"])
    if decoded is not None:
        rest = {key: value for key, value in text.items() if key != "format"}
        if rest:
            hints["text"] = rest
        else:
            del hints["text"]
    return decoded


def _instructions(body: JsonObject, hints: JsonObject) -> tuple[Message, ...]:
    value = body.get("instructions")
    if value is None:
        return ()
    if not isinstance(value, str):
        hints["instructions"] = value
        return ()
    marker: JsonObject = {"~instructions": True}
    return (Message(role="system", parts=(TextPart(text=value),), extra=wrap(marker)),)


def _input(body: JsonObject, hints: JsonObject, issuer: str) -> tuple[Message, ...]:
    value = body.get("input")
    if value is None:
        if "input" in body:
            raise DecodeError("input", "expected a string or an array, got null")
        hints["~no_input"] = True
        return ()
    if isinstance(value, str):
        hints["~input"] = "string"
        return (Message(role="user", parts=(TextPart(text=value),)),)
    return decode_items(as_list(value, "input"), "input", issuer)


def _tools(
    body: JsonObject, hints: JsonObject
) -> tuple[list[ToolSpec], list[HostedToolSpec], ToolChoice | None]:
    tools: list[ToolSpec] = []
    hosted: list[HostedToolSpec] = []
    if "tools" in body:
        tools, hosted, order = decode_tools(body["tools"], "tools")
        if order != "f" * len(tools) + "h" * len(hosted):
            hints["~tool_order"] = order
    choice_value = body.get("tool_choice")
    if choice_value is None:
        return tools, hosted, None
    choice = decode_tool_choice(choice_value, "tool_choice")
    if encode_tool_choice(choice) != choice_value:
        hints["~tool_choice"] = choice_value
    return tools, hosted, choice


def _options(body: JsonObject, hints: JsonObject) -> GenerationOptions:
    effort = summary = None
    if "reasoning" in body and body["reasoning"] is not None:
        reasoning = as_object(body["reasoning"], "reasoning")
        effort = optional_str(reasoning, "effort", "reasoning")
        summary = optional_str(reasoning, "summary", "reasoning")
        hints["~reasoning"] = split_fields(
            reasoning, {key for key in ("effort", "summary") if reasoning.get(key) is not None}
        )
    include = body.get("include")
    included = isinstance(include, list) and ENCRYPTED_INCLUDE in include
    if body.get("store") is False and not included:
        # The client chose not to ask for encrypted reasoning: the encoder would add it
        # for a stateless request (ones translated from another dialect need it).
        hints["~no_encrypted_include"] = True
    options = GenerationOptions(
        temperature=optional_number(body, "temperature", ""),
        top_p=optional_number(body, "top_p", ""),
        max_output_tokens=optional_int(body, "max_output_tokens", ""),
        reasoning_effort=effort,
        reasoning_summary=summary,
        include_reasoning=True if included else None,
        user=optional_str(body, "user", ""),
        metadata=None if body.get("metadata") is None else as_object(body["metadata"], "metadata"),
        logprobs=True if isinstance(include, list) and LOGPROBS_INCLUDE in include else None,
        top_logprobs=optional_int(body, "top_logprobs", ""),
    )
    check_answer_options(options, _NAMES, top_needs_logprobs=False)
    return options


_NAMES = {"candidate_count": "n", "top_logprobs": "top_logprobs", "logprobs": "include"}


def _continuation(body: JsonObject, hints: JsonObject) -> Continuation:
    conversation = body.get("conversation")
    conversation_id: str | None = None
    if isinstance(conversation, dict):
        conversation_id = string(conversation.get("id"), "conversation.id")
        hints["~conversation"] = split_fields(conversation, {"id"})
    elif conversation is not None:
        conversation_id = string(conversation, "conversation")
    return Continuation(
        store=optional_bool(body, "store", ""),
        previous_response_id=optional_str(body, "previous_response_id", ""),
        conversation_id=conversation_id,
    )
