"""Test doubles for the conformance runner: codecs whose wire *is* the transcript serialization.

``transcript_codec(name)`` behaves like a well-made codec: exact round trips, and when
encoding for a target that does not carry an opaque payload it drops it with a warning (or
refuses under ``foreign_opaque="refuse"``). The broken variants each misbehave in one way the
runner must catch.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from interlock.codecs._sse import SseEvent
from interlock.conformance import ProviderCodec, Target
from interlock.conformance._codecs import GEMINI_SIGNATURE as GEMINI
from interlock.conformance._codecs import PROVIDER_TARGETS
from interlock.transcript import (
    Encoded,
    JsonObject,
    LossyHistoryError,
    Message,
    Opaque,
    Part,
    ReasoningPart,
    ReplayPolicy,
    Request,
    Response,
    ResponseBuilder,
    TextPart,
    ToolCallPart,
    TranslationWarning,
    Update,
    load_request,
    load_response,
    response_to_updates,
    to_json,
)

STRICT = ReplayPolicy()


def _opaque_of(part: Part) -> Opaque | None:
    if isinstance(part, TextPart | ToolCallPart):
        return part.signature
    if isinstance(part, ReasoningPart):
        return part.opaque
    return None


def _without_opaque(part: Part) -> Part:
    if isinstance(part, TextPart | ToolCallPart):
        return replace(part, signature=None)
    if isinstance(part, ReasoningPart):
        return replace(part, opaque=None)
    return part


def _strip_foreign(
    messages: tuple[Message, ...],
    carries: frozenset[str],
    policy: ReplayPolicy,
    *,
    warn: bool = True,
) -> tuple[tuple[Message, ...], list[TranslationWarning]]:
    warnings: list[TranslationWarning] = []
    out: list[Message] = []
    for i, message in enumerate(messages):
        parts: list[Part] = []
        for j, part in enumerate(message.parts):
            opaque = _opaque_of(part)
            if opaque is not None and opaque.format not in carries:
                location = f"messages[{i}].parts[{j}]"
                if policy.foreign_opaque == "refuse":
                    raise LossyHistoryError(location, f"{opaque.format} cannot be sent")
                if warn:
                    warnings.append(
                        TranslationWarning(
                            code="opaque_dropped", location=location, message=opaque.format
                        )
                    )
                part = _without_opaque(part)
            parts.append(part)
        out.append(replace(message, parts=tuple(parts)))
    return tuple(out), warnings


def _require_call_signatures(
    messages: tuple[Message, ...], policy: ReplayPolicy
) -> tuple[tuple[Message, ...], list[TranslationWarning]]:
    """Like Gemini: every call needs a signature; strict refuses, degrade uses the dummy."""
    dummy = Opaque(provider="google", format=GEMINI, data=policy.gemini_dummy_signature)
    warnings: list[TranslationWarning] = []
    out: list[Message] = []
    for i, message in enumerate(messages):
        parts: list[Part] = []
        for j, part in enumerate(message.parts):
            if isinstance(part, ToolCallPart) and part.signature is None:
                location = f"messages[{i}].parts[{j}]"
                if policy.mode == "strict":
                    raise LossyHistoryError(
                        location, "a function call without its thought signature"
                    )
                warnings.append(
                    TranslationWarning(code="dummy_signature", location=location, message="dummy")
                )
                part = replace(part, signature=dummy)
            parts.append(part)
        out.append(replace(message, parts=tuple(parts)))
    return tuple(out), warnings


class _StreamDecoder:
    def feed(self, event: SseEvent) -> list[Update]:
        return list(
            response_to_updates(load_response({"version": 1, "response": json.loads(event.data)}))
        )

    def finish(self) -> list[Update]:
        return []


class _StreamEncoder:
    """Folds the updates; at the end, one event holding the response as ``encode_response`` would."""

    def __init__(
        self, encode_response: Callable[..., JsonObject], options: dict[str, object]
    ) -> None:
        self.builder = ResponseBuilder()
        self.options = options
        self.encode_response = encode_response

    def encode(self, update: Update) -> list[SseEvent]:
        self.builder.add(update)
        return []

    def finish(self) -> list[SseEvent]:
        return [
            SseEvent(data=json.dumps(self.encode_response(self.builder.build(), **self.options)))
        ]


def transcript_codec(name: str, *, silent: bool = False, leak: bool = False) -> ProviderCodec:
    """A well-behaved double (``silent``: drops foreign opaque without a warning;
    ``leak``: sends foreign opaque instead of dropping it)."""
    targets = PROVIDER_TARGETS[name]

    def encode_request(
        request: Request, *, policy: ReplayPolicy = STRICT, **options: object
    ) -> Encoded:
        target = _target(targets, options)
        messages, warnings = (
            (request.messages, [])
            if leak
            else _strip_foreign(request.messages, target.carries, policy, warn=not silent)
        )
        if GEMINI in target.carries:
            messages, required = _require_call_signatures(messages, policy)
            warnings += required
        payload = to_json(replace(request, messages=messages))
        assert isinstance(payload, dict)
        return Encoded(payload=payload, warnings=tuple(warnings))

    def encode_response(response: Response, **options: object) -> JsonObject:
        messages, _ = _strip_foreign(
            (response.message,), _target(targets, options).carries, ReplayPolicy()
        )
        payload = to_json(replace(response, message=messages[0]))
        assert isinstance(payload, dict)
        return payload

    return ProviderCodec(
        name=name,
        dialect=name,
        decode_request=lambda payload: load_request({"version": 1, "request": payload}),
        encode_request=encode_request,
        decode_response=lambda payload: load_response({"version": 1, "response": payload}),
        encode_response=encode_response,
        stream_decoder=_StreamDecoder,
        stream_encoder=lambda **options: _StreamEncoder(encode_response, options),
        targets=targets,
        sdk_checks=False,
    )


def _target(targets: tuple[Target, ...], options: dict[str, object]) -> Target:
    for target in targets:
        if all(options.get(key) == value for key, value in target.options.items()):
            return target
    return targets[0]


def signature_dropping_codec(name: str) -> ProviderCodec:
    """A broken double: its request decoder loses every thought signature."""
    good = transcript_codec(name)

    def decode_request(payload: JsonObject) -> Request:
        request = good.decode_request(payload)
        messages = tuple(
            replace(message, parts=tuple(_without_signature(part) for part in message.parts))
            for message in request.messages
        )
        return replace(request, messages=messages)

    return replace(good, decode_request=decode_request)


def _without_signature(part: Part) -> Part:
    if isinstance(part, TextPart | ToolCallPart) and part.signature is not None:
        return replace(part, signature=None)
    return part
