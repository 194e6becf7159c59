"""Chat Completions request bodies both ways.

Fields the canonical request names are decoded (``n``, ``logprobs`` and ``top_logprobs``
too, checked as the service checks them); everything else (``stream_options``, ``response_format``, ``store``, vendor keys…) is kept verbatim in
``Request.extra[DIALECT]``. A known field sent as ``null`` is kept the same way, so a
same-dialect round trip is exact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from interlock.codecs import _structured as structured
from interlock.codecs._fields import effort_for_budget, foreign_field_warnings
from interlock.codecs._options import check_answer_options, unsent_options
from interlock.codecs._turns import current_turn_start
from interlock.codecs.openai_chat._fields import FieldPolicy
from interlock.codecs.openai_chat._message_decode import decode_messages
from interlock.codecs.openai_chat._message_encode import (
    ApprovalIds,
    MessageEncoder,
)
from interlock.codecs.openai_chat._pairing import find_pairing_violation
from interlock.codecs.openai_chat._policy import Degradations
from interlock.codecs.openai_chat._reasoning_options import (
    INCLUDE,
    REASONING,
    ReasoningSettings,
    decode_settings,
    encode_settings,
)
from interlock.codecs.openai_chat._tools import (
    HOSTED_PROVIDERS,
    custom_tool_names,
    decode_tool_choice,
    decode_tools,
    encode_tool_choice,
    encode_tools,
)
from interlock.codecs.openai_chat._wire import (
    DIALECT,
    LAYOUT,
    REASONING_DIALECTS,
    ReasoningDialect,
    as_bool,
    as_int,
    as_list,
    as_number,
    as_object,
    as_str,
    extra_of,
    merge_unknown,
    required,
    rest,
    with_extra,
)
from interlock.transcript import (
    Encoded,
    GenerationOptions,
    HostedToolSpec,
    JsonObject,
    JsonValue,
    LossyHistoryError,
    ReplayPolicy,
    Request,
    ToolChoice,
    ToolSpec,
)


class _Fields:
    """The request body being decoded and the keys consumed so far."""

    def __init__(self, body: JsonObject) -> None:
        self.body = body
        self.consumed = {"model", "messages"}

    def take(self, key: str) -> JsonValue:
        """``body[key]``, marked consumed unless absent or ``null`` (then it stays extra)."""
        value = self.body.get(key)
        if value is not None:
            self.consumed.add(key)
        return value


def decode_request(payload: JsonObject) -> Request:
    """A Chat Completions request body → canonical request (raises :class:`DecodeError`)."""
    body = as_object(payload, "")
    fields = _Fields(body)
    layout: JsonObject = {}
    tools = fields.take("tools")
    tool_choice = None
    if (choice := fields.take("tool_choice")) is not None:
        tool_choice, form = decode_tool_choice(choice, "tool_choice")
        if form == "hosted":
            layout["hosted_tool_choice"] = choice
        elif form is not None:
            layout["tool_choice"] = form
    parallel = fields.take("parallel_tool_calls")
    if "model" not in body:
        layout["no_model"] = True
    stream = body.get("stream") is True
    if stream:
        fields.consumed.add("stream")
    if options_absent(body):  # the commonest request: nothing to decode, nothing to check
        settings, options = NO_SETTINGS, NO_OPTIONS
    else:
        settings = decode_settings(body, layout)
        fields.consumed.update(settings.consumed)
        options = _decode_options(fields, layout, settings)
    response_format = structured.decode_chat(body.get("response_format"))
    if response_format is not None:
        fields.consumed.add("response_format")
    unknown = rest(body, fields.consumed)
    if settings.residue is not None:
        unknown[REASONING] = settings.residue
    functions, hosted = _decode_tools(tools, layout)
    return Request(
        model="" if "model" not in body else as_str(body["model"], "model"),
        messages=decode_messages(required(body, "messages", ""), "messages"),
        tools=functions,
        hosted_tools=hosted,
        tool_choice=tool_choice,
        parallel_tool_calls=None if parallel is None else as_bool(parallel, "parallel_tool_calls"),
        stream=stream,
        options=options,
        response_format=response_format,
        extra=with_extra(unknown, layout),
    )


def _decode_tools(
    value: JsonValue, layout: JsonObject
) -> tuple[tuple[ToolSpec, ...], tuple[HostedToolSpec, ...]]:
    if value is None:
        return (), ()
    functions, hosted, order = decode_tools(value, "tools")
    if order != "f" * len(functions) + "h" * len(hosted):
        layout["tool_order"] = order
    return functions, hosted


def _decode_options(
    fields: _Fields, layout: JsonObject, settings: ReasoningSettings
) -> GenerationOptions:
    """The generation options; ``settings`` are OpenRouter's reasoning settings
    (:mod:`._reasoning_options`)."""
    take = fields.take
    temperature = take("temperature")
    top_p = take("top_p")
    seed = take("seed")
    effort = take("reasoning_effort")
    max_tokens = take("max_completion_tokens")
    if max_tokens is None and (max_tokens := take("max_tokens")) is not None:
        layout["max_tokens"] = True
    stop = take("stop")
    stops: tuple[str, ...] = ()
    if isinstance(stop, str):
        stops, layout["stop"] = (stop,), "string"
    elif stop is not None:
        stops = tuple(as_str(s, f"stop[{i}]") for i, s in enumerate(as_list(stop, "stop")))
        if not stops:
            layout["stop"] = "empty"  # sent by some clients (crewAI); kept as it came
    key = "max_tokens" if layout.get("max_tokens") else "max_completion_tokens"
    options = GenerationOptions(
        temperature=None if temperature is None else as_number(temperature, "temperature"),
        top_p=None if top_p is None else as_number(top_p, "top_p"),
        max_output_tokens=None if max_tokens is None else as_int(max_tokens, key),
        stop=stops,
        seed=None if seed is None else as_int(seed, "seed"),
        reasoning_effort=settings.effort if effort is None else as_str(effort, "reasoning_effort"),
        include_reasoning=settings.include,
        thinking_budget=settings.budget,
        **_decode_shared(fields),
    )
    check_answer_options(options, _NAMES, top_needs_logprobs=True)
    return options


def _decode_shared(fields: _Fields) -> dict[str, Any]:
    """The options Chat shares with some other dialects, by canonical name."""
    decoded: dict[str, Any] = {}
    for wire, name, read in _SHARED:
        value = fields.take(wire)
        if value is not None:
            decoded[name] = read(value, wire)
    return decoded


_SHARED: tuple[tuple[str, str, Callable[[JsonValue, str], Any]], ...] = (
    ("presence_penalty", "presence_penalty", as_number),
    ("frequency_penalty", "frequency_penalty", as_number),
    ("user", "user", as_str),
    ("metadata", "metadata", as_object),
    ("n", "candidate_count", as_int),
    ("logprobs", "logprobs", as_bool),
    ("top_logprobs", "top_logprobs", as_int),
)
"""Chat field, canonical option, reader: the shared options Chat has a field for."""
_NAMES = {name: wire for wire, name, _ in _SHARED}
_CARRIED = frozenset(name for _, name, _ in _SHARED)
OPTION_KEYS = frozenset(
    {
        "temperature",
        "top_p",
        "seed",
        "reasoning_effort",
        "max_completion_tokens",
        "max_tokens",
        "stop",
        REASONING,
        INCLUDE,
        *(wire for wire, _, _ in _SHARED),
    }
)
"""Every top-level key :func:`decode_settings` and :func:`_decode_options` read."""
NO_SETTINGS = ReasoningSettings()
NO_OPTIONS = GenerationOptions()


def options_absent(body: JsonObject) -> bool:
    """True when ``body`` has none of :data:`OPTION_KEYS`: then the options decoded are
    :data:`NO_OPTIONS` (every one unset) and nothing is consumed, added to the layout or
    refused, exactly as the general path would have it."""
    return body.keys().isdisjoint(OPTION_KEYS)


def encode_request(
    request: Request,
    *,
    policy: ReplayPolicy = ReplayPolicy(),  # noqa: B008  # frozen, immutable default
    reasoning_dialect: ReasoningDialect | None = None,
) -> Encoded:
    """Canonical request → Chat Completions body for an upstream of ``reasoning_dialect``.

    ``reasoning_dialect=None`` writes each reasoning part back to the carrier it was
    decoded from and every kept wire field back where it was (exact same-dialect round
    trips), and treats reasoning from other dialects as ``"none"``; a proxy names its
    upstream's dialect instead, and then kept fields go out only where that upstream
    accepts them (:mod:`._fields`; a dropped one is a ``field_dropped`` warning).

    Raises :class:`LossyHistoryError` before anything could be sent when the history
    cannot be carried (strict policy) or breaks tool-call pairing (always).
    """
    if reasoning_dialect is not None and reasoning_dialect not in REASONING_DIALECTS:
        raise ValueError(f"unknown reasoning dialect {reasoning_dialect!r}")
    degrade = Degradations(policy)
    _refuse_continuation(request)
    fields = FieldPolicy(dialect=reasoning_dialect, request=True, degrade=degrade)
    encoder = MessageEncoder(
        dialect=reasoning_dialect,
        degrade=degrade,
        turn_start=current_turn_start(request.messages),
        approvals=ApprovalIds.of(request.messages),
        fields=fields,
    )
    encoder.encode(request.messages)
    violation = find_pairing_violation(encoder.wire)
    if violation is not None:
        location = f"messages[{encoder.origins[violation.index]}]"
        raise LossyHistoryError(location, violation.message, code="tool_pairing")
    payload: JsonObject = {"model": request.model, "messages": encoder.wire}
    if not request.model and extra_of(request.extra, LAYOUT).get("no_model"):
        del payload["model"]  # Azure names the deployment in the URL, not the body
    _encode_tools(request, payload, degrade)
    if request.stream:
        payload["stream"] = True
    _encode_options(request, payload, degrade, reasoning_dialect)
    if request.response_format is not None:
        payload["response_format"] = structured.encode_chat(request.response_format)
    payload = merge_unknown(payload, fields.kept(request.extra, "request", ""))
    foreign = foreign_field_warnings(request.extra, DIALECT)
    return Encoded(payload=payload, warnings=(*degrade.warnings, *foreign))


def _refuse_continuation(request: Request) -> None:
    continuation = request.continuation
    if continuation.previous_response_id or continuation.conversation_id:
        raise LossyHistoryError(
            "continuation",
            "Chat Completions has no server-side state; the stored history behind "
            "previous_response_id / conversation would have to be materialised first",
            code="continuation_unsupported",
        )


def _encode_tools(request: Request, payload: JsonObject, degrade: Degradations) -> None:
    layout = extra_of(request.extra, LAYOUT)
    own: list[JsonObject] = []
    for index, hosted in enumerate(request.hosted_tools):
        if hosted.provider in HOSTED_PROVIDERS:
            own.append(hosted.spec)
            continue
        reason = f"{hosted.provider} hosted tool has no Chat Completions form"
        degrade.lossy("hosted_tool_unsupported", f"hosted_tools[{index}]", reason)
    if request.tools or own:
        payload["tools"] = encode_tools(request.tools, own, layout.get("tool_order"))
    forced = layout.get("hosted_tool_choice")
    choice = request.tool_choice
    if choice is not None and forced is not None and choice == ToolChoice(mode="required") and own:
        payload["tool_choice"] = forced  # the hosted tool the request forced, as it came
    elif request.tool_choice is not None:
        form = layout.get("tool_choice")
        payload["tool_choice"] = encode_tool_choice(
            request.tool_choice,
            form if isinstance(form, str) else None,
            custom_tool_names(request.tools),
        )
    if request.parallel_tool_calls is not None:
        payload["parallel_tool_calls"] = request.parallel_tool_calls


def _encode_options(
    request: Request,
    payload: JsonObject,
    degrade: Degradations,
    reasoning_dialect: ReasoningDialect | None,
) -> None:
    options = request.options
    layout = extra_of(request.extra, LAYOUT)
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    if options.top_p is not None:
        payload["top_p"] = options.top_p
    if options.max_output_tokens is not None:
        key = "max_tokens" if layout.get("max_tokens") else "max_completion_tokens"
        payload[key] = options.max_output_tokens
    if options.stop:
        single = layout.get("stop") == "string" and len(options.stop) == 1
        payload["stop"] = options.stop[0] if single else list(options.stop)
    elif layout.get("stop") == "empty":
        payload["stop"] = []
    if options.seed is not None:
        payload["seed"] = options.seed
    _encode_reasoning(options, request.extra, payload, degrade, reasoning_dialect)


def _encode_reasoning(
    options: GenerationOptions,
    extra: Mapping[str, JsonObject],
    payload: JsonObject,
    degrade: Degradations,
    reasoning_dialect: ReasoningDialect | None,
) -> None:
    """The reasoning options: OpenRouter's and vLLM's own fields first
    (:mod:`._reasoning_options`), then ``reasoning_effort`` (a thinking budget as the closest
    effort, with a warning); what no field carries is an ``option_dropped`` warning."""
    written = encode_settings(options, extra, reasoning_dialect, payload)
    budget = None if "thinking_budget" in written else options.thinking_budget
    effort = None if budget is None else effort_for_budget(budget)
    dropped = [
        name
        for name in ("reasoning_summary", "include_reasoning", "thinking_budget")
        if name not in written
    ]
    if "reasoning_effort" in written:
        effort = None  # sent in OpenRouter's ``reasoning.effort``, as it came
    elif options.reasoning_effort is not None:
        payload["reasoning_effort"] = options.reasoning_effort
    if effort is not None and "reasoning_effort" not in payload:
        payload["reasoning_effort"] = effort
        reason = f"thinking budget {budget} sent as reasoning_effort {effort!r}"
        degrade.drop("thinking_budget_as_effort", "options.thinking_budget", reason)
        dropped.remove("thinking_budget")
    for name in dropped:
        if getattr(options, name) is not None:
            degrade.drop("option_dropped", f"options.{name}", f"Chat has no {name} parameter")
    _encode_shared(options, payload, degrade)


def _encode_shared(options: GenerationOptions, payload: JsonObject, degrade: Degradations) -> None:
    for wire, name, _ in _SHARED:
        if (value := getattr(options, name)) is not None:
            payload[wire] = value
    if options.top_logprobs and options.logprobs is not True:
        del payload["top_logprobs"]  # Chat refuses top_logprobs without logprobs: true
        reason = "Chat sends top_logprobs only with logprobs: true, which was not asked; not sent"
        degrade.drop("option_dropped", "options.top_logprobs", reason)
    degrade.warnings.extend(unsent_options(options, _CARRIED, "Chat Completions"))
