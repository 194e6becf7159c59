"""Same-dialect checks of a provider vector.

Per vector: the wire decodes to the stated canonical form; decode → encode gives the wire back
exactly (requests and responses) with no warning; canonical → wire → canonical is the identity;
and every encoded payload validates against the official SDK types. A stream trace decodes
(folded) to its canonical response, and re-encoding — both the decoded updates and the
canonical update sequence — decodes back to the same response.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from interlock.codecs._sse import SseEvent
from interlock.conformance import _sdk
from interlock.conformance._codecs import ProviderCodec, Target
from interlock.conformance._results import Collector, first_difference, value_at
from interlock.conformance._sdk_anthropic import (
    anthropic_event,
    anthropic_request,
    anthropic_response,
)
from interlock.conformance._vectors import Vector
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonValue,
    LossyHistoryError,
    Request,
    Response,
    TranscriptFormatError,
    Update,
    dump_request,
    dump_response,
    fold_updates,
    load_request,
    load_response,
    response_to_updates,
)

PayloadCheck = Callable[[JsonObject, Target], list[str]]

CODEC_ERRORS = (
    DecodeError,
    LossyHistoryError,
    TranscriptFormatError,
    ValueError,
    TypeError,
    KeyError,
)
"""What a codec may raise on input it cannot handle; anything else is a crash of the suite."""


Check: TypeAlias = Callable[[JsonObject, frozenset[str]], list[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkChecks:
    """One provider dialect's SDK checks: request body, response body, one stream event.

    Each takes the payload and the target's vendor keys. ``named_events``: every event's
    ``event:`` name must equal its data ``type``; ``done``: the stream ends with ``[DONE]``.
    """

    request: Check
    response: Check
    event: Check
    named_events: bool = False
    done: bool = False


SDK_CHECKS: dict[str, SdkChecks] = {
    "openai_responses": SdkChecks(
        request=_sdk.responses_request,
        response=lambda payload, _keys: _sdk.responses_response(payload),
        event=lambda data, _keys: _sdk.responses_event(data),
        named_events=True,
    ),
    "openai_chat": SdkChecks(
        request=_sdk.chat_request, response=_sdk.chat_response, event=_sdk.chat_chunk, done=True
    ),
    "gemini": SdkChecks(
        request=_sdk.gemini_request,
        response=lambda payload, _keys: _sdk.gemini_response(payload),
        event=lambda data, _keys: _sdk.gemini_response(data),
    ),
    "anthropic": SdkChecks(
        request=anthropic_request,
        response=lambda payload, _keys: anthropic_response(payload),
        event=lambda data, _keys: anthropic_event(data),
        named_events=True,
    ),
}
"""Vector dialect → its official SDK's checks (a test holds it to the codec registry)."""


def request_problems(payload: JsonObject, target: Target) -> list[str]:
    """SDK problems of an encoded request for ``target``."""
    return SDK_CHECKS[target.dialect].request(payload, target.vendor_keys)


def response_problems(payload: JsonObject, target: Target) -> list[str]:
    """SDK problems of an encoded response for ``target``."""
    return SDK_CHECKS[target.dialect].response(payload, target.vendor_keys)


def event_problems(event: SseEvent, target: Target) -> list[str]:
    """SDK problems of one encoded stream event for ``target`` (``[DONE]`` is Chat's end)."""
    checks = SDK_CHECKS[target.dialect]
    if event.data == "[DONE]" and checks.done:
        return []
    try:
        data = json.loads(event.data)
    except json.JSONDecodeError as error:
        return [f"data: not JSON ({error.msg})"]
    named: list[str] = []
    if checks.named_events and event.event not in (None, data.get("type")):
        named = [f"event: {event.event!r} != type"]
    return named + checks.event(data, target.vendor_keys)


def own_target(vector: Vector, codec: ProviderCodec) -> Target:
    """The target a vector's own options select (Chat: its reasoning dialect)."""
    for target in codec.targets:
        if all(vector.options.get(key) == value for key, value in target.options.items()):
            return target
    return codec.targets[0]


def sse_event(raw: JsonValue, name: str | None) -> SseEvent:
    """A recorded event as the SSE parser would hand it over."""
    data = (
        raw if isinstance(raw, str) else json.dumps(raw, separators=(",", ":"), ensure_ascii=False)
    )
    return SseEvent(data=data, event=name)


def decode_stream(codec: ProviderCodec, events: Sequence[SseEvent]) -> list[Update]:
    """Every update a fresh stream decoder produces for ``events``."""
    decoder = codec.stream_decoder()
    updates: list[Update] = []
    for event in events:
        updates += decoder.feed(event)
    return updates + decoder.finish()


def encode_stream(
    codec: ProviderCodec, updates: Sequence[Update], target: Target
) -> list[SseEvent]:
    """Every event a fresh stream encoder produces for ``updates``."""
    encoder = codec.stream_encoder(**target.options, **target.stream_options)
    events: list[SseEvent] = []
    for update in updates:
        events += encoder.encode(update)
    return events + encoder.finish()


class SameDialect:
    """The same-dialect checks of one vector, recording into a collector."""

    def __init__(self, vector: Vector, codec: ProviderCodec, found: Collector) -> None:
        self.vector = vector
        self.codec = codec
        self.found = found
        self.target = own_target(vector, codec)

    def run(self) -> Request | Response | None:
        """Run the checks of the vector's kind; the decoded canonical value, if any."""
        try:
            if self.vector.kind == "request":
                return self._request()
            if self.vector.kind == "response":
                return self._response()
            return self._stream()
        except CODEC_ERRORS as error:
            self._fail("codec", getattr(error, "location", getattr(error, "path", "")), repr(error))
            return None

    def _fail(self, check: str, field_path: str, message: str) -> None:
        self.found.fail(self.vector.name, check, field_path or "-", message)

    def _expect(self, check: str, actual: JsonValue, expected: JsonValue, what: str) -> bool:
        path = first_difference(actual, expected)
        if path is None:
            self.found.passed()
            return True
        got, want = value_at(actual, path), value_at(expected, path)
        self._fail(check, path, f"{what}: got {_short(got)}, expected {_short(want)}")
        return False

    def _sdk(self, problems: list[str], what: str) -> None:
        if not self.codec.sdk_checks:
            return
        for problem in problems:
            self._fail(
                "sdk", problem.partition(":")[0], f"{what}: {problem.partition(':')[2].strip()}"
            )
        if not problems:
            self.found.passed()

    def _request(self) -> Request:
        codec, options = self.codec, self.target.options
        decoded = codec.decode_request(self.vector.wire_object)
        self._expect("decode", dump_request(decoded), self.vector.canonical, "decoded canonical")
        encoded = codec.encode_request(decoded, **options)
        self._expect("round-trip", encoded.payload, self.vector.wire, "decode → encode")
        for warning in encoded.warnings:
            self._fail("round-trip", warning.location, f"unexpected warning {warning.code}")
        self._sdk(request_problems(encoded.payload, self.target), "encoded request")
        expected = load_request(self.vector.canonical)
        again = codec.decode_request(codec.encode_request(expected, **options).payload)
        self._expect(
            "identity", dump_request(again), self.vector.canonical, "canonical → wire → canonical"
        )
        return decoded

    def _response(self) -> Response:
        codec, options = self.codec, self.target.options
        decoded = codec.decode_response(self.vector.wire_object)
        self._expect("decode", dump_response(decoded), self.vector.canonical, "decoded canonical")
        encoded = codec.encode_response(decoded, **options)
        self._expect("round-trip", encoded, self.vector.wire, "decode → encode")
        self._sdk(response_problems(encoded, self.target), "encoded response")
        expected = load_response(self.vector.canonical)
        again = codec.decode_response(codec.encode_response(expected, **options))
        self._expect(
            "identity", dump_response(again), self.vector.canonical, "canonical → wire → canonical"
        )
        return decoded

    def _stream(self) -> Response:
        wire = [sse_event(event.data, event.event) for event in self.vector.stream_events]
        updates = decode_stream(self.codec, wire)
        decoded = fold_updates(updates)
        self._expect("decode", dump_response(decoded), self.vector.canonical, "folded stream")
        for source, label in (
            (updates, "decoded updates"),
            (response_to_updates(decoded), "canonical updates"),
        ):
            events = encode_stream(self.codec, source, self.target)
            problems = [
                f"event[{i}]{p}"
                for i, e in enumerate(events)
                for p in event_problems(e, self.target)
            ]
            self._sdk(problems, f"re-encoded stream ({label})")
            again = fold_updates(decode_stream(self.codec, events))
            self._expect(
                "identity", dump_response(again), self.vector.canonical, f"{label} → wire → fold"
            )
        return decoded


def _short(value: JsonValue) -> str:
    text = json.dumps(value, ensure_ascii=False) if value is not None else "nothing"
    return text if len(text) <= 120 else f"{text[:117]}..."
