"""Messages API request body ⇄ canonical :class:`Request`.

``top_k`` and ``metadata.user_id`` (as ``user``) are canonical options. Top-level fields
the canonical model does not name (``cache_control``, ``output_config``, ``service_tier``…) are kept verbatim in
``request.extra["anthropic"]["fields"]`` and sent back only to Anthropic. The ``thinking``
object is kept verbatim too; from another dialect it is built from the options
(``thinking_budget`` → ``enabled`` with that budget, at least 1024 and below ``max_tokens``;
``include_reasoning`` false or a zero budget → ``disabled``). A reasoning effort goes the
way the target model takes it (:mod:`._effort`: ``output_config.effort`` with adaptive
thinking, or a thinking budget), the model's row chosen by its name and vendor unless
:attr:`ReplayPolicy.effort_levels` gives its levels; an Anthropic client's
``output_config.effort`` is the canonical effort too (and kept, so a round trip is exact).
Thinking that only an effort turned on is left out, never refused, when the open tool
loop's assistant turn has no thinking block to start with.

Before returning, the encoder applies Anthropic's rules (:mod:`._rules`): a body the
service would reject raises :class:`LossyHistoryError` instead. One rule has a documented
fallback: with manual thinking on, the open tool loop's assistant turn must start with its
thinking block; when translation could not keep that block, ``strict`` refuses and
``degrade`` sends the request with thinking disabled and a ``thinking_disabled`` warning.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final, cast

from interlock.codecs import _structured as structured
from interlock.codecs._fields import effort_for_budget, kept_wire_fields, walks
from interlock.codecs._options import one_candidate, unsent_options
from interlock.codecs.anthropic._effort import (
    LEVELS,
    EffortSupport,
    EffortWire,
    effort_support,
    encode_effort,
)
from interlock.codecs.anthropic._encode import PartEncoder
from interlock.codecs.anthropic._messages import decode_messages, decode_system, encode_messages
from interlock.codecs.anthropic._rules import find_violation
from interlock.codecs.anthropic._tools import (
    decode_tool_choice,
    decode_tools,
    encode_tool_choice,
    encode_tools,
)
from interlock.codecs.anthropic._vendors import replayable
from interlock.codecs.anthropic._wire import (
    DEFAULT_MAX_TOKENS,
    DIALECT,
    MIN_THINKING_BUDGET,
    PROVIDER,
    as_bool,
    as_int,
    as_list,
    as_number,
    as_object,
    as_str,
    object_entry,
    split,
)
from interlock.transcript import (
    ApprovalIds,
    DecodeError,
    Encoded,
    GenerationOptions,
    JsonObject,
    JsonValue,
    LossyHistoryError,
    Message,
    ReplayPolicy,
    Request,
    ResponseFormat,
)

_KNOWN: Final = frozenset(
    {
        "model",
        "messages",
        "system",
        "max_tokens",
        "stop_sequences",
        "stream",
        "temperature",
        "top_p",
        "tools",
        "tool_choice",
        "thinking",
        "output_config",
        "top_k",
        "metadata",
    }
)
_CARRIED: Final = frozenset({"top_k", "user", "candidate_count"})
"""The shared options Anthropic has a field for (``user`` is ``metadata.user_id``)."""


def decode_request(payload: JsonObject, issuer: str = PROVIDER) -> Request:
    """A wire request body as a canonical request, its signatures named as issued by vendor
    ``issuer``; raises :class:`DecodeError` naming the path."""
    fields, rest = split(payload, _KNOWN)
    own: JsonObject = {"fields": rest} if rest else {}
    messages: list[Message] = []
    if "system" in fields:
        messages.append(decode_system(fields["system"], "system"))
    messages.extend(decode_messages(fields.get("messages", []), "messages", issuer))
    if "messages" not in fields:
        own["noMessages"] = True
    tools, hosted = decode_tools(fields["tools"], "tools", own) if "tools" in fields else ((), ())
    choice, parallel = (
        decode_tool_choice(fields["tool_choice"], "tool_choice", own)
        if "tool_choice" in fields
        else (None, None)
    )
    stream = fields.get("stream")
    if stream is not None and not as_bool(stream, "stream"):
        own["streamFalse"] = True
    if "tools" in fields and not tools and not hosted:
        own["emptyTools"] = True
    model = fields.get("model")
    response_format = (
        _decode_output_config(fields["output_config"], own) if "output_config" in fields else None
    )
    return Request(
        model="" if model is None else as_str(model, "model"),
        messages=tuple(messages),
        tools=tools,
        hosted_tools=hosted,
        tool_choice=choice,
        parallel_tool_calls=parallel,
        stream=stream is True,
        options=_decode_options(fields, own),
        response_format=response_format,
        extra={DIALECT: own} if own else {},
    )


def _decode_output_config(value: JsonValue, own: JsonObject) -> ResponseFormat | None:
    """``output_config.format`` (a JSON schema) as structured output; the rest kept."""
    config = dict(as_object(value, "output_config"))
    wire_format = config.get("format")
    if isinstance(wire_format, dict) and set(wire_format) == {"type", "schema"}:
        schema = wire_format.get("schema")
        if wire_format.get("type") == "json_schema" and isinstance(schema, dict):
            del config["format"]
            own["outputConfig"] = config
            return ResponseFormat(type="json_schema", schema=schema)
    own["outputConfig"] = config
    return None


def _decode_effort(fields: JsonObject) -> str | None:
    """``output_config.effort`` as the canonical effort (it stays in the kept config too, so
    a same-dialect round trip is exact)."""
    config = fields.get("output_config")
    effort = config.get("effort") if isinstance(config, dict) else None
    if effort is None:
        return None
    level = as_str(effort, "output_config.effort")
    if level not in LEVELS:
        allowed = ", ".join(f"'{name}'" for name in LEVELS[:-1]) + f" or '{LEVELS[-1]}'"
        raise DecodeError("output_config.effort", f"Input should be {allowed}")
    return level


def _kept_effort(own: JsonObject) -> bool:
    """Whether the kept ``output_config`` (an Anthropic client's) already names the effort."""
    kept = own.get("outputConfig")
    return isinstance(kept, dict) and "effort" in kept


def _encode_output_config(
    request: Request, own: JsonObject, encoder: PartEncoder, level: str | None
) -> JsonObject | None:
    """``output_config``: what was received, with the structured output (if any) as ``format``
    and the effort ``level`` (if any) as ``effort``."""
    kept = own.get("outputConfig")
    config: JsonObject = dict(kept) if isinstance(kept, dict) else {}
    if level is not None:
        config["effort"] = level
    wanted = request.response_format
    if wanted is not None and wanted.type == "json_schema" and wanted.schema is not None:
        config["format"] = {"type": "json_schema", "schema": structured.json_schema(wanted)}
        dropped = [
            name for name in ("name", "description", "strict") if getattr(wanted, name) is not None
        ]
        if dropped:
            encoder.warn(
                "response_format_metadata_dropped",
                "response_format",
                f"Anthropic's output format has no {', '.join(dropped)}; not sent",
            )
    elif wanted is not None and wanted.type == "json_object":
        encoder.warn(
            "response_format_dropped",
            "response_format",
            "Anthropic has no 'any JSON object' output mode; give a schema instead",
        )
    return config or (None if not isinstance(kept, dict) else config)


def _decode_options(fields: JsonObject, own: JsonObject) -> GenerationOptions:
    max_tokens = fields.get("max_tokens")
    temperature = fields.get("temperature")
    top_p = fields.get("top_p")
    stops = fields.get("stop_sequences")
    budget: int | None = None
    include: bool | None = None
    if "thinking" in fields:
        thinking = as_object(fields["thinking"], "thinking")
        own["thinking"] = thinking
        kind = as_str(thinking.get("type"), "thinking.type")
        include = kind != "disabled"
        if kind == "enabled" and "budget_tokens" in thinking:
            budget = as_int(thinking["budget_tokens"], "thinking.budget_tokens")
    if max_tokens is None:
        own["noMaxTokens"] = True
    top_k = fields.get("top_k")
    return GenerationOptions(
        temperature=None if temperature is None else as_number(temperature, "temperature"),
        top_p=None if top_p is None else as_number(top_p, "top_p"),
        max_output_tokens=None if max_tokens is None else as_int(max_tokens, "max_tokens"),
        stop=tuple(
            as_str(item, f"stop_sequences[{index}]")
            for index, item in enumerate(as_list(stops, "stop_sequences"))
        )
        if stops is not None
        else (),
        include_reasoning=include,
        thinking_budget=budget,
        reasoning_effort=_decode_effort(fields),
        top_k=None if top_k is None else as_number(top_k, "top_k"),
        user=_decode_user(fields, own),
    )


def _decode_user(fields: JsonObject, own: JsonObject) -> str | None:
    """``metadata.user_id`` when that is all ``metadata`` holds; otherwise it stays kept."""
    for key in ("top_k", "metadata"):
        if key in fields and fields[key] is None:
            _keep(own, key, None)  # sent as null: nothing to carry, kept as it came
    metadata = fields.get("metadata")
    if metadata is None:
        return None
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    if isinstance(metadata, dict) and set(metadata) == {"user_id"} and isinstance(user, str):
        return user
    _keep(own, "metadata", metadata)
    return None


def _keep(own: JsonObject, key: str, value: JsonValue) -> None:
    kept = own.get("fields")
    if not isinstance(kept, dict):
        kept = own["fields"] = {}
    kept[key] = value


def encode_request(
    request: Request,
    *,
    policy: ReplayPolicy = ReplayPolicy(),  # noqa: B008 -- frozen, immutable default
    issuer: str = PROVIDER,
) -> Encoded:
    """The wire body for ``request`` to the service of vendor ``issuer``, plus every
    deliberate degradation as a warning.

    Raises :class:`LossyHistoryError` before anything is sent when the history cannot be
    carried or Anthropic would reject the body (the error names the rule). Only ``issuer``'s
    signatures (and a client's, of unrecorded issuer) are replayed (:mod:`._vendors`).
    """
    own = request.extra.get(DIALECT, {})
    request, dropped = replayable(request, issuer, policy)
    encoder = PartEncoder(
        policy, for_request=True, approvals=ApprovalIds.of(request.messages), issuer=issuer
    )
    encoder.warnings.extend(dropped)
    _unsupported(request, encoder, policy)
    system, wire = encode_messages(request.messages, encoder, policy)
    payload: JsonObject = {"model": request.model}
    if not own.get("noMessages") or wire:
        payload["messages"] = [message.payload() for message in wire]
    if system is not None:
        payload["system"] = system
    encoder.warnings.extend(one_candidate(request.options, policy, "Anthropic"))
    support = effort_support(request.model, issuer, policy.effort_levels)
    effort = _effort(request, own, support, policy, encoder)
    payload.update(_encode_options(request, own, encoder, effort, support))
    if request.tools or request.hosted_tools or own.get("emptyTools"):
        payload["tools"] = encode_tools(request.tools, request.hosted_tools, own, encoder)
    choice = encode_tool_choice(request.tool_choice, request.parallel_tool_calls, own, encoder)
    if choice is not None:
        payload["tool_choice"] = choice
    output_config = _encode_output_config(request, own, encoder, effort.level)
    if output_config is not None:
        payload["output_config"] = output_config
    if request.stream:
        payload["stream"] = True
    elif own.get("streamFalse"):
        payload["stream"] = False
    payload.update(object_entry(own, "fields"))
    if effort.thinking is not None and payload.get("thinking") is effort.thinking:
        _effort_without_thinking(payload, encoder)
    _enforce(
        payload, wire_sources=[message.source for message in wire], encoder=encoder, policy=policy
    )
    if request.options.include_reasoning and DIALECT not in request.extra:
        _thinking_on(payload, encoder)
    return Encoded(payload=payload, warnings=tuple(encoder.warnings))


def _encode_options(
    request: Request,
    own: JsonObject,
    encoder: PartEncoder,
    effort: EffortWire,
    support: EffortSupport,
) -> JsonObject:
    """The generation settings; ``effort`` is the reasoning effort already resolved for the
    model (:mod:`._effort`), its thinking used when nothing else sets one."""
    options = request.options
    wire: JsonObject = {}
    if options.max_output_tokens is not None or not own.get("noMaxTokens"):
        wire["max_tokens"] = options.max_output_tokens or effort.max_tokens or DEFAULT_MAX_TOKENS
    if options.stop:
        wire["stop_sequences"] = list(options.stop)
    if options.temperature is not None:
        wire["temperature"] = options.temperature
    if options.top_p is not None:
        wire["top_p"] = options.top_p
    if options.seed is not None:
        encoder.warn("seed_ignored", "options.seed", "Anthropic has no seed; not sent")
    _encode_shared(options, wire, encoder)
    thinking = _thinking(options, own, wire, encoder, support) or effort.thinking
    if thinking is not None:
        wire["thinking"] = thinking
    return wire


def _encode_shared(options: GenerationOptions, wire: JsonObject, encoder: PartEncoder) -> None:
    top_k = options.top_k
    if isinstance(top_k, float) and top_k.is_integer():
        top_k = int(top_k)  # Gemini's SDK sends 20.0; Anthropic's top_k is an integer
    if isinstance(top_k, int):
        wire["top_k"] = top_k
    elif top_k is not None:
        encoder.warn(
            "option_dropped", "options.top_k", f"Anthropic's top_k is whole; {top_k} not sent"
        )
    if options.user is not None:
        wire["metadata"] = {"user_id": options.user}
    for warning in unsent_options(options, _CARRIED, "Anthropic"):
        encoder.warn(warning.code, warning.location, warning.message)


def _thinking(
    options: GenerationOptions,
    own: JsonObject,
    wire: JsonObject,
    encoder: PartEncoder,
    support: EffortSupport,
) -> JsonObject | None:
    kept = own.get("thinking")
    if isinstance(kept, dict):
        return dict(kept)
    if options.include_reasoning is False or options.thinking_budget == 0:
        return {"type": "disabled"}
    if not options.thinking_budget:
        return None
    if not support.budget and support.adaptive:
        return _adaptive_for_budget(options.thinking_budget, encoder)
    if options.thinking_budget < 0:
        return None
    budget = max(options.thinking_budget, MIN_THINKING_BUDGET)
    max_tokens = wire.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens <= budget:
        wire["max_tokens"] = budget + DEFAULT_MAX_TOKENS
        encoder.warn(
            "max_tokens_raised",
            "options.max_output_tokens",
            "Anthropic counts thinking inside max_tokens and needs it above the budget; "
            f"raised to {wire['max_tokens']}",
        )
    if budget != options.thinking_budget:
        encoder.warn(
            "thinking_budget_raised",
            "options.thinking_budget",
            f"Anthropic's smallest thinking budget is {MIN_THINKING_BUDGET} tokens",
        )
    return {"type": "enabled", "budget_tokens": budget}


def _effort(
    request: Request,
    own: JsonObject,
    support: EffortSupport,
    policy: ReplayPolicy,
    encoder: PartEncoder,
) -> EffortWire:
    """The reasoning effort the way the model takes it (:mod:`._effort`); a thinking budget
    for a model that takes none becomes its nearest effort. Nothing when an Anthropic client
    named the effort itself (kept, sent as it came)."""
    options = request.options
    if _kept_effort(own):
        return EffortWire()
    if options.reasoning_effort is None:
        budget = options.thinking_budget
        if budget is None or budget <= 0 or support.budget or not support.levels:
            return EffortWire()
        nearest = effort_for_budget(budget)
        encoder.warn(
            "thinking_budget_as_effort",
            "options.thinking_budget",
            f"this model takes no thinking budget: {budget} sent as adaptive thinking at "
            f"effort {nearest!r}",
        )
        options = replace(options, reasoning_effort=nearest, thinking_budget=None)
        request = replace(request, options=options)
    return encode_effort(request, support, policy, encoder.warn)


def _thinking_on(payload: JsonObject, encoder: PartEncoder) -> None:
    """Say so when a client asked for reasoning and the body turns no thinking on."""
    thinking = payload.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        return
    encoder.warn(
        "include_reasoning_ignored",
        "options.include_reasoning",
        "Anthropic turns thinking on by a budget or an effort; this request goes without "
        "(none could be sent, or thinking had to be disabled)",
    )


def _adaptive_for_budget(budget: int, encoder: PartEncoder) -> JsonObject:
    """A thinking budget for a model that takes none: adaptive thinking (a positive budget
    was said as an effort already, :func:`_effort`)."""
    if budget < 0:
        encoder.warn(
            "thinking_budget_as_adaptive",
            "options.thinking_budget",
            "this model takes no thinking budget; the dynamic budget is sent as adaptive thinking",
        )
    return {"type": "adaptive"}


def _effort_without_thinking(payload: JsonObject, encoder: PartEncoder) -> None:
    """Thinking an effort turned on (not asked for by budget) goes when the open tool loop's
    assistant turn has no thinking block to start with: the effort is a hint, never a
    reason to refuse."""
    violation = find_violation(payload, final_prefill=True)
    if violation is not None and "Expected `thinking`" in violation.message:
        del payload["thinking"]
        encoder.warn(
            "thinking_disabled",
            "options.reasoning_effort",
            "the open tool loop's assistant turn has no Anthropic thinking block to start "
            "with; the effort goes without thinking",
        )


def _enforce(
    payload: JsonObject, *, wire_sources: list[int], encoder: PartEncoder, policy: ReplayPolicy
) -> None:
    """Refuse (or, for the leading-thinking rule in ``degrade``, fix) what Anthropic rejects."""
    violation = find_violation(payload, final_prefill=True)
    if violation is None:
        return
    if violation.message.startswith("messages.") and "Expected `thinking`" in violation.message:
        location = _location(violation.path, wire_sources)
        if policy.mode == "degrade":
            payload["thinking"] = {"type": "disabled"}
            encoder.warn(
                "thinking_disabled",
                location,
                "the open tool loop's assistant turn has no Anthropic thinking block to start "
                "with; thinking is disabled for this request",
            )
            _enforce(payload, wire_sources=wire_sources, encoder=encoder, policy=policy)
            return
        raise LossyHistoryError(
            location,
            "Anthropic needs the open tool loop's assistant turn to start with its own thinking "
            "block (with thinking enabled), and this history has none (it came from another "
            f"model or lost it): {violation.message}",
            code="thinking_block_missing",
        )
    if violation.message.startswith("Requests which include") and policy.mode == "degrade":
        _declare_history_tools(payload, encoder)
        _enforce(payload, wire_sources=wire_sources, encoder=encoder, policy=policy)
        return
    raise LossyHistoryError(
        _location(violation.path, wire_sources),
        f"Anthropic would reject this request: {violation.message}",
        code="anthropic_rule",
    )


def _declare_history_tools(payload: JsonObject, encoder: PartEncoder) -> None:
    """Declare the tools the history calls (any input), callable by none (``tool_choice``)."""
    names: dict[str, None] = {}
    for message in cast(list[JsonObject], payload.get("messages") or []):
        content = message.get("content")
        for block in cast(list[JsonValue], content) if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                names[str(block.get("name"))] = None
    payload["tools"] = [{"name": name, "input_schema": {"type": "object"}} for name in names]
    payload["tool_choice"] = {"type": "none"}
    encoder.warn(
        "tools_declared",
        "tools",
        "Anthropic needs the tools a history uses declared; declared with any input and "
        "tool_choice none, so none can be called",
    )


def _location(path: str, wire_sources: list[int]) -> str:
    """A wire path (``messages.3.content.0``) as the canonical message it came from."""
    pieces = path.split(".")
    if len(pieces) >= 2 and pieces[0] == "messages" and pieces[1].isdigit():
        index = int(pieces[1])
        if index < len(wire_sources):
            return f"messages[{wire_sources[index]}]"
    return path or "request"


_TRANSPORT: Final = frozenset({"stream", "stream_options", "alt"})


def _foreign_settings(request: Request, encoder: PartEncoder) -> None:
    """Settings another dialect's decoder kept verbatim have no Anthropic field: each one
    said, by its wire path (``gemini.generationConfig.topK``) where the dialect's layout is
    known, else by the key it was kept under."""
    for dialect, kept in request.extra.items():
        if dialect == DIALECT or ":" in dialect:
            continue  # ``openai-chat:layout``: another codec's wire-shape hints, not settings
        if walks(dialect):
            wheres = [f"{dialect}.{path}" for path, _ in kept_wire_fields(request.extra, dialect)]
        else:
            wheres = [
                key
                for key, value in kept.items()
                if key not in _TRANSPORT and not key.startswith("~") and value not in (None, {}, [])
            ]  # "~" keys are wire-shape hints (a string ``input``), not settings
        for where in wheres:
            encoder.warn(
                "setting_dropped",
                where,
                f"the {dialect} setting {where!r} has no Anthropic field; not sent",
            )


def _unsupported(request: Request, encoder: PartEncoder, policy: ReplayPolicy) -> None:
    """Report (or refuse) canonical request settings Anthropic has no field for."""
    continuation = request.continuation
    if continuation.previous_response_id or continuation.conversation_id:
        reason = (
            "the request continues service-side state (previous_response_id / conversation) "
            "that Anthropic cannot see; materialise the full history first"
        )
        if policy.mode == "strict":
            raise LossyHistoryError("continuation", reason, code="stateful_history")
        encoder.warn("continuation_ignored", "continuation", reason)
    if DIALECT not in request.extra and request.options.reasoning_summary:
        encoder.warn(
            "reasoning_summary_ignored",
            "options.reasoning_summary",
            "Anthropic has no summary level; thinking comes back as the model writes it",
        )
    _foreign_settings(request, encoder)
    for index, message in enumerate(request.messages):
        if message.name:
            encoder.warn(
                "name_dropped",
                f"messages[{index}]",
                f"Anthropic has no participant name; {message.name!r} is not sent",
            )
