"""``GenerateContentRequest`` ⇄ canonical :class:`Request`.

The model and the streaming choice live in the URL (``models/{model}:generateContent`` or
``:streamGenerateContent``), not in the body: :func:`decode_request` takes them as keyword
arguments and :func:`encode_request` leaves them to the caller (``request.model``,
``request.stream``). Top-level fields the canonical model does not name (``safetySettings``,
``cachedContent``, ``labels``…) are kept verbatim in ``request.extra["gemini"]["fields"]``.
"""

from __future__ import annotations

import re
from typing import Final

from interlock.codecs import _structured as structured
from interlock.codecs._fields import foreign_field_warnings
from interlock.codecs.gemini._config import (
    decode_generation,
    decode_tool_choice,
    decode_tools,
    encode_generation,
    encode_tool_config,
    encode_tools,
)
from interlock.codecs.gemini._contents import ContentDecoder, decode_system_instruction
from interlock.codecs.gemini._encode import PartEncoder
from interlock.codecs.gemini._history import DummyForm, encode_history
from interlock.codecs.gemini._wire import DIALECT, as_list, object_entry, split_fields
from interlock.transcript import (
    Encoded,
    GenerationOptions,
    JsonObject,
    LossyHistoryError,
    Message,
    ReplayPolicy,
    Request,
    ResponseFormat,
)

REQUEST_FIELDS: Final = frozenset(
    {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
)


def decode_request(payload: JsonObject, *, model: str = "", stream: bool = False) -> Request:
    """A wire request body as a canonical request; raises :class:`DecodeError` naming the path.

    ``model`` and ``stream`` come from the URL the body was posted to.
    """
    fields, unknown = split_fields(payload, REQUEST_FIELDS)
    marks: JsonObject = {"fields": unknown} if unknown else {}
    messages: list[Message] = []
    if "systemInstruction" in fields:
        messages.append(decode_system_instruction(fields["systemInstruction"], "systemInstruction"))
    contents = ContentDecoder()
    if "contents" in fields:
        contents.extend(as_list(fields["contents"], "contents"))
    else:
        marks["noContents"] = True
    messages.extend(contents.messages)
    tools, hosted = decode_tools(fields["tools"], "tools", marks) if "tools" in fields else ((), ())
    choice = (
        decode_tool_choice(fields["toolConfig"], "toolConfig", marks)
        if "toolConfig" in fields
        else None
    )
    options = (
        decode_generation(fields["generationConfig"], "generationConfig", marks)
        if "generationConfig" in fields
        else GenerationOptions()
    )
    response_format = _response_format(marks)
    return Request(
        model=model,
        messages=tuple(messages),
        tools=tools,
        hosted_tools=hosted,
        tool_choice=choice,
        stream=stream,
        options=options,
        response_format=response_format,
        extra={DIALECT: marks} if marks else {},
    )


def encode_request(
    request: Request,
    *,
    policy: ReplayPolicy = ReplayPolicy(),  # noqa: B008 -- frozen, immutable default
    require_signatures: bool | None = None,
    dummy_signature_form: DummyForm = "literal",
) -> Encoded:
    """The wire body for ``request``, plus every deliberate degradation as a warning.

    Raises :class:`LossyHistoryError` before anything is sent when the history cannot be
    carried (see :mod:`._history` and :mod:`._encode`). ``require_signatures`` says whether
    the current-turn signature rule applies; by default (``None``) ``policy``'s
    ``signatures_required`` decides, and when that is ``None`` too the rule applies to every
    model except those named as Gemini 1.x / 2.x or Gemma (:func:`signatures_required`),
    which never required signatures;
    ``dummy_signature_form`` chooses how the degrade-mode dummy is written (trap 10).
    """
    marks = request.extra.get(DIALECT, {})
    encoder = PartEncoder(policy, for_request=True, history=request.messages)
    _unsupported(request, encoder, policy)
    for index, message in enumerate(request.messages):
        if message.name:  # Chat's participant name has no Gemini field: said, never silent
            encoder.warn(
                "name_dropped",
                f"messages[{index}]",
                f"Gemini has no participant name; {message.name!r} is not sent",
            )
    system, contents = encode_history(
        request.messages,
        encoder,
        policy,
        require_signatures=_signature_rule(request.model, policy, require_signatures),
        dummy_form=dummy_signature_form,
    )
    payload: JsonObject = {}
    if not marks.get("noContents") or contents:
        payload["contents"] = contents
    if system is not None:
        payload["systemInstruction"] = system
    if request.tools or request.hosted_tools or "toolLayout" in marks:
        tools = encode_tools(request.tools, request.hosted_tools, marks, encoder)
        payload["tools"] = tools[0] if marks.get("toolsObject") and len(tools) == 1 else tools
    tool_config = encode_tool_config(request.tool_choice, marks)
    if tool_config is not None:
        payload["toolConfig"] = tool_config
    generation = encode_generation(request.options, marks, encoder)
    if request.response_format is not None:
        fields, dropped = structured.encode_gemini(request.response_format)
        generation = {**(generation or {}), **fields}
        for key in dropped:
            reason = f"Gemini has no {key} for a response schema; not sent"
            encoder.warn("field_dropped", f"response_format.{key}", reason)
    if generation is not None:
        payload["generationConfig"] = generation
    payload.update(object_entry(marks, "fields"))
    foreign = foreign_field_warnings(request.extra, DIALECT)
    return Encoded(payload=payload, warnings=(*encoder.warnings, *foreign))


_NO_SIGNATURES = re.compile(r"(^|/)(gemini-[12][.-]|gemma-)")


def signatures_required(model: str) -> bool:
    """True unless ``model`` names a Gemini 1.x / 2.x or Gemma model (no thought signatures
    needed there; the Gemini 3 family and unknown names get the rule)."""
    return _NO_SIGNATURES.search(model) is None


def _signature_rule(model: str, policy: ReplayPolicy, explicit: bool | None) -> bool:
    """The argument, else the policy's setting, else the rule by model name."""
    if explicit is not None:
        return explicit
    if policy.signatures_required is not None:
        return policy.signatures_required
    return signatures_required(model)


def _response_format(marks: JsonObject) -> ResponseFormat | None:
    """The structured-output keys of ``generationConfig`` as canonical (taken out of marks)."""
    config = marks.get("generationConfig")
    if not isinstance(config, dict):
        return None
    decoded = structured.decode_gemini(config)
    if decoded is not None:
        marks["generationConfig"] = {
            key: value for key, value in config.items() if key not in structured.GEMINI_KEYS
        }
    return decoded


def _unsupported(request: Request, encoder: PartEncoder, policy: ReplayPolicy) -> None:
    """Report (or refuse) canonical request settings Gemini has no field for."""
    if request.parallel_tool_calls is False:
        encoder.warn(
            "parallel_tool_calls_ignored",
            "parallel_tool_calls",
            "Gemini cannot forbid parallel function calls (trap 26)",
        )
    continuation = request.continuation
    if continuation.previous_response_id or continuation.conversation_id:
        reason = (
            "the request continues service-side state (previous_response_id / conversation) "
            "that Gemini cannot see; materialise the full history first (trap 33)"
        )
        if policy.mode == "strict":
            raise LossyHistoryError("continuation", reason, code="stateful_history")
        encoder.warn("continuation_ignored", "continuation", reason)
