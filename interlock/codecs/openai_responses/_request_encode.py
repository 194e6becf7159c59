"""Canonical :class:`Request` → ``POST /v1/responses`` body.

The inverse of ``_request``: decode → encode gives back the same JSON. Replay rules for
the history live in ``_replay``; this module assembles the top-level fields.
"""

from __future__ import annotations

from typing import cast

from interlock.codecs import _structured as structured
from interlock.codecs._fields import effort_for_budget, foreign_field_warnings
from interlock.codecs._options import one_candidate, unsent_options
from interlock.codecs._turns import current_turn_start
from interlock.codecs.openai_responses._plain_encode import plain_items
from interlock.codecs.openai_responses._replay import (
    ReplayContext,
    continuation_start,
    encode_message,
)
from interlock.codecs.openai_responses._tools import encode_tool_choice, encode_tools
from interlock.codecs.openai_responses._wire import (
    DIALECT,
    ENCRYPTED_INCLUDE,
    LOGPROBS_INCLUDE,
    PROVIDER,
    merge_fields,
    own,
)
from interlock.transcript import (
    Encoded,
    JsonObject,
    JsonValue,
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    TranslationWarning,
)


def encode_request(
    request: Request, *, policy: ReplayPolicy | None = None, issuer: str = PROVIDER
) -> Encoded:
    """Encode a request for the service of ``issuer`` (only its own encrypted reasoning is
    replayed); raises :class:`LossyHistoryError` before anything could be sent."""
    policy = policy or ReplayPolicy()
    hints = own(request.extra)
    messages = request.messages
    instructions, offset = _instructions(messages)
    continuation = request.continuation
    continued = continuation.previous_response_id is not None or (
        continuation.conversation_id is not None
    )
    regime = (
        "continuation" if continued else "stateless" if continuation.store is False else "stored"
    )
    context = ReplayContext(
        policy=policy,
        regime=regime,
        messages=messages,
        issuer=issuer,
        turn_start=current_turn_start(messages),
    )
    start = offset + (continuation_start(messages[offset:]) if continued else 0)
    items: list[JsonValue] = []
    for index in range(start, len(messages)):
        message = messages[index]
        plain = plain_items(message, index, context)
        items.extend(encode_message(message, index, context) if plain is None else plain)
        if message.name:
            context.warnings.append(_name_dropped(index, message.name))
    body: JsonObject = {}
    if hints.get("~no_model") is not True:
        body["model"] = request.model
    if instructions is not None:
        body["instructions"] = instructions
    _put_input(body, items, hints)
    _put_tools(body, request, hints, context)
    context.warnings.extend(one_candidate(request.options, context.policy, "Responses"))
    _put_options(body, request, hints, context.warnings, needs_include=regime == "stateless")
    _put_continuation(body, request, hints)
    if request.response_format is not None:
        text = hints.get("text")
        kept_text = text if isinstance(text, dict) else {}
        body["text"] = {**kept_text, "format": structured.encode_responses(request.response_format)}
    if request.stream or hints.get("~stream_false") is True:
        body["stream"] = request.stream
    foreign = foreign_field_warnings(request.extra, DIALECT)
    return Encoded(payload=merge_fields(body, hints), warnings=(*context.warnings, *foreign))


def _name_dropped(index: int, name: str | None) -> TranslationWarning:
    """Responses messages have no participant name (Chat's ``name``): said, never silent."""
    return TranslationWarning(
        code="name_dropped",
        location=f"messages[{index}]",
        message=f"Responses has no participant name; {name!r} is not sent",
    )


def _instructions(messages: tuple[Message, ...]) -> tuple[str | None, int]:
    if messages and own(messages[0].extra).get("~instructions") is True:
        first = messages[0]
        return "".join(p.text for p in first.parts if isinstance(p, TextPart)), 1
    return None, 0


def _put_input(body: JsonObject, items: list[JsonValue], hints: JsonObject) -> None:
    if hints.get("~no_input") is True and not items:
        return
    if hints.get("~input") == "string" and len(items) == 1:
        item = cast(JsonObject, items[0])
        if item.get("role") == "user" and isinstance(item.get("content"), list):
            content = cast(list[JsonObject], item["content"])
            if len(content) == 1 and set(content[0]) == {"type", "text"}:
                body["input"] = content[0]["text"]
                return
    body["input"] = items


def _put_tools(
    body: JsonObject, request: Request, hints: JsonObject, context: ReplayContext
) -> None:
    native = tuple(tool for tool in request.hosted_tools if tool.provider == PROVIDER)
    for index, tool in enumerate(request.hosted_tools):
        if tool.provider != PROVIDER:
            reason = f"{tool.provider} hosted tool has no OpenAI Responses form"
            context.lossy(f"hosted_tools[{index}]", reason, "hosted_tool_unsupported")
    if request.tools or native or "tools" in hints:
        body["tools"] = encode_tools(request.tools, native, hints.get("~tool_order"))
    if request.tool_choice is not None:
        raw = hints.get("~tool_choice")
        default = encode_tool_choice(request.tool_choice)
        if raw is not None:
            from interlock.codecs.openai_responses._tools import decode_tool_choice

            if decode_tool_choice(raw, "tool_choice") == request.tool_choice:
                default = raw
        body["tool_choice"] = default
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls


def _put_options(
    body: JsonObject,
    request: Request,
    hints: JsonObject,
    warnings: list[TranslationWarning],
    *,
    needs_include: bool,
) -> None:
    options = request.options
    reasoning_rest = hints.get("~reasoning")
    effort = options.reasoning_effort or _budget_effort(options.thinking_budget, warnings)
    if effort or options.reasoning_summary or isinstance(reasoning_rest, dict):
        reasoning: JsonObject = {}
        if effort is not None:
            reasoning["effort"] = effort
        if options.reasoning_summary is not None:
            reasoning["summary"] = options.reasoning_summary
        if isinstance(reasoning_rest, dict):
            reasoning = merge_fields(reasoning, reasoning_rest)
        body["reasoning"] = reasoning
    include = hints.get("include")
    own_choice = hints.get("~no_encrypted_include") is True
    wanted = (needs_include and not own_choice) or options.include_reasoning is True
    entries = list(include) if isinstance(include, list) else []
    if wanted and ENCRYPTED_INCLUDE not in entries:
        entries.append(ENCRYPTED_INCLUDE)
    if options.logprobs is True and LOGPROBS_INCLUDE not in entries:
        entries.append(LOGPROBS_INCLUDE)
    if entries != (include if isinstance(include, list) else []):
        body["include"] = entries
    for key, value in (
        ("temperature", options.temperature),
        ("top_p", options.top_p),
        ("max_output_tokens", options.max_output_tokens),
        ("user", options.user),
        ("metadata", options.metadata),
        ("top_logprobs", options.top_logprobs),
    ):
        if value is not None:
            body[key] = value
    warnings.extend(unsent_options(options, _CARRIED, "Responses"))
    for name, present in (("stop", bool(options.stop)), ("seed", options.seed is not None)):
        if present:
            reason = f"Responses has no {name} parameter; not sent"
            warnings.append(
                TranslationWarning(
                    code="option_dropped", location=f"options.{name}", message=reason
                )
            )


_CARRIED = frozenset({"user", "metadata", "logprobs", "top_logprobs", "candidate_count"})
"""The shared options Responses has a field for."""


def _budget_effort(budget: int | None, warnings: list[TranslationWarning]) -> str | None:
    """A Gemini thinking budget as the nearest reasoning effort (said, never silent)."""
    if budget is None:
        return None
    effort = effort_for_budget(budget)
    message = (
        f"thinking budget {budget} sent as reasoning effort {effort!r}"
        if effort
        else f"thinking budget {budget} (dynamic) has no reasoning effort; not sent"
    )
    code = "thinking_budget_as_effort" if effort else "option_dropped"
    warnings.append(
        TranslationWarning(code=code, location="options.thinking_budget", message=message)
    )
    return effort


def _put_continuation(body: JsonObject, request: Request, hints: JsonObject) -> None:
    continuation = request.continuation
    if continuation.store is not None:
        body["store"] = continuation.store
    if continuation.previous_response_id is not None:
        body["previous_response_id"] = continuation.previous_response_id
    if continuation.conversation_id is not None:
        shape = hints.get("~conversation")
        if isinstance(shape, dict):
            body["conversation"] = merge_fields({"id": continuation.conversation_id}, shape)
        else:
            body["conversation"] = continuation.conversation_id
