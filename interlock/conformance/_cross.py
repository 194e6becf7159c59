"""Cross-dialect checks: a vector's content translated into every other target.

*History path* — the vector as history (a request; a response or stream as the assistant turn
after a user prompt) is encoded for the target under the strict and the degrade replay
policy, validated against the SDK types, decoded back, and every item classified
(:mod:`interlock.conformance._compare`). A ``LossyHistoryError`` is a refusal of the items at
its location.

*Response path* — a response (or folded stream) is encoded as the target's response and
stream, validated, decoded back and compared. ``encode_response`` has no warning channel in
the codec contract, so an item may be missing there only if the same target's request encoder
drops it *with a warning* on the history path; otherwise it is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from interlock.conformance._codecs import AguiCodec, ProviderCodec, Target, replay
from interlock.conformance._compare import (
    ItemResult,
    compare_items,
    covers,
    joined_texts,
    refused_items,
)
from interlock.conformance._features import Item, message_items, response_items
from interlock.conformance._results import MODES, Collector, Mode
from interlock.conformance._same import (
    CODEC_ERRORS,
    decode_stream,
    encode_stream,
    event_problems,
    request_problems,
    response_problems,
)
from interlock.transcript import (
    JsonObject,
    LossyHistoryError,
    Message,
    Request,
    Response,
    TextPart,
    ToolResultPart,
    ToolSpec,
    TranslationWarning,
    fold_updates,
    response_to_updates,
)

PROMPT = Message(
    role="user", parts=(TextPart(text="(conformance: the turn before this response)"),)
)


@dataclass(frozen=True, slots=True)
class Source:
    """What a vector contributes to cross-dialect checks."""

    vector: str
    dialect: str
    history: Request
    first: int
    response: Response | None = None


def source_of(vector: str, dialect: str, decoded: Request | Response) -> Source:
    """A request is its own history; a response is the assistant turn after a prompt (and,
    when it calls tools, before their results — otherwise no dialect accepts the history).

    The tools such a response called are declared, as the request that produced it declared
    them: a history with tool calls but no tools is refused by Anthropic ("Requests which
    include `tool_use` or `tool_result` blocks must define tools") although no real request
    of that conversation lacked them.
    """
    if isinstance(decoded, Request):
        return Source(vector, dialect, decoded, 0)
    calls = [call for call in decoded.message.tool_calls if call.owner != "hosted"]
    results = tuple(
        ToolResultPart(call_id=call.call_id, name=call.name, output=(TextPart(text="(result)"),))
        for call in calls
    )
    answer = (Message(role="tool", parts=results),) if results else ()
    tools = tuple(
        ToolSpec(name=name, parameters={"type": "object"})
        for name in dict.fromkeys(call.name for call in calls)
    )
    history = Request(
        model=decoded.model or "conformance",
        messages=(PROMPT, decoded.message, *answer),
        tools=tools,
    )
    return Source(vector, dialect, history, 1, decoded)


class CrossDialect:
    """The checks of one source against one target, recording into a collector."""

    def __init__(
        self, source: Source, codec: ProviderCodec | AguiCodec, target: Target, found: Collector
    ) -> None:
        self.source = source
        self.codec = codec
        self.target = target
        self.found = found
        stop = source.first + 1 if source.response is not None else None
        self.items = message_items(source.history.messages, source.first, stop)
        self.warned: dict[str, TranslationWarning] = {}

    def run(self) -> None:
        """History path in both modes, then the response path.

        A strict refusal refuses the items at its location; the other items of that history
        take, for strict too, the outcome the degrade run finds for them.
        """
        refused = self._history("strict")
        self._history("degrade", also_strict=refused)
        if self.source.response is not None and isinstance(self.codec, ProviderCodec):
            self._response(self.source.response, self.codec)

    def _check(self, mode: Mode) -> str:
        return f"cross {self.target.name} ({mode})"

    def _record(self, results: Sequence[ItemResult], modes: Sequence[Mode], check: str) -> None:
        for result in results:
            key = (self.source.dialect, self.target.name, result.item.feature)
            if result.failure is not None:
                message = f"{result.item.feature} {result.failure}: {result.detail}"
                self.found.fail(self.source.vector, check, result.item.location, message)
            elif result.outcome is not None:
                for mode in modes:
                    self.found.record(key, mode, result.outcome, result.code)
        if not any(result.failure for result in results):
            self.found.passed()

    def _history(self, mode: Mode, also_strict: set[str] | None = None) -> set[str] | None:
        """Returns the refused locations of a refusal (``None``: no refusal)."""
        check = self._check(mode)
        try:
            items, warnings = self._translate_history(mode)
        except LossyHistoryError as error:
            refused = refused_items(self.items, error.location, error.reason, error.code)
            if not refused:
                self.found.notes.append(
                    f"{self.source.vector} → {self.target.name} ({mode}) refused at {error.location}: {error.reason}"
                )
                refused = [
                    ItemResult(item, "refused", detail=error.reason, code=error.code)
                    for item in self.items
                ]
            self._record(refused, (mode,), check)
            return {result.item.location for result in refused}
        except CODEC_ERRORS as error:
            self.found.fail(self.source.vector, check, "-", f"translation crashed: {error!r}")
            return None
        self.warned.update({warning.location: warning for warning in warnings})
        results = compare_items(self.items, items, warnings, self.target)
        self._record(results, (mode,), check)
        if also_strict is not None:
            kept = [result for result in results if result.item.location not in also_strict]
            self._record([result for result in kept if result.failure is None], ("strict",), check)
        return None

    def _translate_history(self, mode: Mode) -> tuple[list[Item], tuple[TranslationWarning, ...]]:
        codec, history = self.codec, self.source.history
        if isinstance(codec, AguiCodec):
            rendered, warnings = codec.render(history.messages)
            return message_items(codec.decode_run_input(agui_input(rendered))), warnings
        encoded = codec.encode_request(history, policy=replay(mode), **self.target.options)
        problems = request_problems(encoded.payload, self.target) if codec.sdk_checks else []
        for problem in problems:
            field_path, _, message = problem.partition(":")
            self.found.fail(
                self.source.vector, f"sdk {self.target.name}", field_path, message.strip()
            )
        back = codec.decode_request(encoded.payload)
        return message_items(back.messages), encoded.warnings

    def _response(self, response: Response, codec: ProviderCodec) -> None:
        source = response_items(response)
        check = f"cross {self.target.name} (response)"
        try:
            payload = codec.encode_response(response, **self.target.options)
            back = codec.decode_response(payload)
            events = encode_stream(codec, response_to_updates(response), self.target)
            streamed = fold_updates(decode_stream(codec, events))
        except CODEC_ERRORS as error:
            self.found.fail(self.source.vector, check, "-", f"translation crashed: {error!r}")
            return
        problems = response_problems(payload, self.target) if codec.sdk_checks else []
        for i, event in enumerate(events if codec.sdk_checks else []):
            problems += [f"stream[{i}].{p}" for p in event_problems(event, self.target)]
        for problem in problems:
            field_path, _, message = problem.partition(":")
            self.found.fail(
                self.source.vector, f"sdk {self.target.name}", field_path, message.strip()
            )
        for label, result in (("response", back), ("stream", streamed)):
            expected = source
            if self.target.one_text_stream:
                expected = joined_texts(source)
            results = compare_items(
                expected, response_items(result), self._history_warnings(), self.target
            )
            self._record(results, MODES, f"cross {self.target.name} ({label})")

    def _history_warnings(self) -> list[TranslationWarning]:
        """History-path warnings relocated onto the response's own locations."""
        prefix = f"messages[{self.source.first}]"
        return [
            TranslationWarning(
                code=w.code, location=w.location.replace(prefix, "message", 1), message=w.message
            )
            for w in self.warned.values()
            if covers(prefix, w.location) or w.location == prefix
        ]


def agui_input(messages: Sequence[JsonObject]) -> JsonObject:
    """A minimal ``RunAgentInput`` around AG-UI messages."""
    return {
        "threadId": "conformance",
        "runId": "conformance",
        "messages": list(messages),
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
