"""The real-traffic corpus under the runner: no false rejection, exact, nothing lost silently.

Per recorded payload: it must decode (a service produced or accepted it, so a
``DecodeError`` is a *false rejection*); decode → encode in its own dialect must give the
wire back exactly (a stream: its folded response survives re-encoding); and translated into
every other target, every content item and every setting decoded from it must arrive, or be
warned about, or be refused (:mod:`._cross`, :mod:`._settings`). Each failure names the
payload; :class:`CorpusResult` also counts, per vendor, what happened to its payloads.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from interlock.codecs.openai_chat import vendor_response_fields
from interlock.conformance._codecs import ProviderCodec, Registry, Target, replay
from interlock.conformance._compare import (
    ItemResult,
    Outcome,
    compare_items,
    joined_texts,
    worst,
)
from interlock.conformance._corpus_files import CorpusPayload
from interlock.conformance._cross import CrossDialect, Source, source_of
from interlock.conformance._features import Item, response_items
from interlock.conformance._results import MODES, Collector, Failure, first_difference
from interlock.conformance._runner import all_targets
from interlock.conformance._same import CODEC_ERRORS, decode_stream, encode_stream, sse_event
from interlock.conformance._settings import compare_settings, setting_items
from interlock.conformance._wire_citations import response_citations, stream_citations
from interlock.conformance._wire_vendor import response_runs, stream_runs
from interlock.transcript import (
    DecodeError,
    HostedToolPart,
    JsonValue,
    LossyHistoryError,
    Request,
    Response,
    TextPart,
    Update,
    dump_response,
    fold_updates,
    response_to_updates,
)

COLUMNS = ("payloads", "rejected", "exact", "translated", "degraded", "refused", "failing")
"""The vendor table's columns: ``rejected`` payloads did not decode; ``exact`` ones came back
byte for byte in their own dialect; the next three are the least faithful outcome of their
translations into the other targets; ``failing`` ones have at least one failure (every
failure is listed in ``conformance/corpus/known-failures.txt`` until it is fixed)."""


RESTREAMED = frozenset({"text", "refusal", "tool_call", "finish_reason", "usage"})
"""What every stream encoder carries (reasoning and signatures it may drop: the history
path holds the warning for those)."""


@dataclass(slots=True)
class CorpusResult:
    """Failures, per-payload verdicts, and the (source dialect, target, feature) cells."""

    failures: list[Failure] = field(default_factory=list[Failure])
    verdicts: dict[str, tuple[str, tuple[str, ...]]] = field(
        default_factory=dict[str, tuple[str, tuple[str, ...]]]
    )
    """payload name → (vendor, the columns it counts in)."""
    causes: dict[str, frozenset[tuple[str, str]]] = field(
        default_factory=dict[str, frozenset[tuple[str, str]]]
    )
    """payload name → why its translations are no better than its verdict: the (feature,
    warning or refusal code) pairs of the strict translations with that outcome."""
    found: Collector = field(default_factory=Collector)

    @property
    def ok(self) -> bool:
        """True when every payload passed every check."""
        return not self.failures

    def table(self) -> dict[str, Counter[str]]:
        """vendor → verdict counts (``payloads`` is the total)."""
        out: dict[str, Counter[str]] = {}
        for vendor, columns in self.verdicts.values():
            counts = out.setdefault(vendor, Counter())
            counts.update(("payloads", *columns))
        return out


def run_corpus(payloads: Sequence[CorpusPayload], registry: Registry) -> CorpusResult:
    """Check every payload against every target of ``registry``.

    The official-SDK validation of encoded payloads is left to the vectors: a recorded
    payload legitimately carries vendor keys (Azure's ``prompt_filter_results``, OpenRouter's
    ``provider``) that the SDK types do not declare and a same-dialect target forwards.
    """
    result = CorpusResult()
    quiet = {
        name: replace(codec, sdk_checks=False) if isinstance(codec, ProviderCodec) else codec
        for name, codec in registry.items()
    }
    for payload in payloads:
        codec = quiet.get(payload.dialect)
        if not isinstance(codec, ProviderCodec):
            continue
        _Payload(payload, codec, quiet, result).run()
    result.failures = list(result.found.failures)
    return result


class _Payload:
    """The checks of one payload, recording into the shared collector."""

    def __init__(
        self, payload: CorpusPayload, codec: ProviderCodec, registry: Registry, into: CorpusResult
    ) -> None:
        self.payload = payload
        self.codec = codec
        self.registry = registry
        self.into = into
        self.found = Collector()
        self.outcomes: list[Outcome] = []
        self.updates: list[Update] = []

    def run(self) -> None:
        try:
            decoded = self._decode()
        except CODEC_ERRORS as error:
            location = getattr(error, "location", getattr(error, "path", "-"))
            why = "false rejection" if isinstance(error, DecodeError) else "decoder crashed"
            self._fail("decode", str(location) or "-", f"{why}: {error}")
            self._finish(("rejected", "failing"))
            return
        self._citations(decoded)
        self._vendor_runs(decoded)
        if (
            isinstance(decoded, Response)
            and decoded.usage is None
            and _recorded_usage(self.payload)
        ):
            self._fail("decode", "usage", "usage lost: the recorded stream carries it")
        exact = ("exact",) if self._same(decoded) else ()
        self._cross(decoded)
        cross = worst(outcome for outcome in self.outcomes if outcome != "exact")
        failing = ("failing",) if self.found.failures else ()
        if cross in ("degraded", "refused"):
            self.into.causes[self.payload.name] = frozenset(
                (feature, code)
                for (_, _, feature), outcome, code in self.found.causes
                if outcome == cross
            )
        self._finish((*exact, *((cross,) if cross else ()), *failing))

    def _finish(self, columns: tuple[str, ...]) -> None:
        self.into.found.failures += self.found.failures
        for key, modes in self.found.cells.items():
            for mode, outcomes in modes.items():
                for outcome in outcomes:
                    self.into.found.record(key, mode, outcome)
        self.into.verdicts[self.payload.name] = (self.payload.vendor, columns)

    def _fail(self, check: str, location: str, message: str) -> None:
        self.found.fail(self.payload.name, check, location, message)

    def _decode(self) -> Request | Response:
        if self.payload.kind == "request":
            if self.payload.model:
                return self.codec.decode_request(self.payload.body, model=self.payload.model)
            return self.codec.decode_request(self.payload.body)
        if self.payload.kind == "response":
            return self.codec.decode_response(self.payload.body)
        events = [sse_event(event.data, event.event) for event in self.payload.events]
        self.updates = decode_stream(self.codec, events)
        return fold_updates(self.updates)

    def _citations(self, decoded: Request | Response) -> None:
        """Every citation on the wire (counted without the codecs) must have been decoded:
        the cross-dialect inventory only sees what the decoder produced."""
        if not isinstance(decoded, Response):
            return
        dialect = self.payload.dialect
        if self.payload.kind == "response":
            on_wire = response_citations(dialect, self.payload.body)
        else:
            on_wire = stream_citations(dialect, [event.data for event in self.payload.events])
        parts = decoded.message.parts
        found = sum(len(part.citations) for part in parts if isinstance(part, TextPart))
        if found < on_wire:
            self._fail("citations", "-", f"{on_wire - found} of {on_wire} citations not decoded")

    def _vendor_runs(self, decoded: Request | Response) -> None:
        """Groq's tool runs and vendor answer fields on the wire (counted without the
        codecs) must have been decoded: as hosted parts, and as the usage's breakdown or kept
        in ``extra``."""
        if not isinstance(decoded, Response) or self.payload.dialect != "openai_chat":
            return
        if self.payload.kind == "response":
            runs, fields = response_runs(self.payload.body)
        else:
            runs, fields = stream_runs([event.data for event in self.payload.events])
        parts = decoded.message.parts
        found = sum(1 for part in parts if isinstance(part, HostedToolPart))
        if found < runs:
            self._fail("vendor", "executed_tools", f"{runs - found} of {runs} runs not decoded")
        kept = set(vendor_response_fields(decoded.extra))
        if decoded.usage is not None and decoded.usage.breakdown:
            kept.add("usage_breakdown")
        for name in sorted(fields - kept):
            self._fail("vendor", name, f"{name} not kept")

    def _restream(self, decoded: Response, codec: ProviderCodec, target: Target) -> None:
        """The updates decoded from the recorded stream, re-streamed as the target's stream
        (what the gateway does): everything the fold held must arrive (usage after finish…)."""
        check = f"restream {target.name}"
        try:
            events = encode_stream(codec, self.updates, target)
            again = fold_updates(decode_stream(codec, events))
        except CODEC_ERRORS as error:
            self._fail(check, "-", f"translation crashed: {error!r}")
            return
        source = [item for item in response_items(decoded) if item.feature in RESTREAMED]
        if target.one_text_stream:
            source = joined_texts(source)
        back = [item for item in response_items(again) if item.feature in RESTREAMED]
        for result in compare_items(source, back, (), target):
            if result.failure is not None:
                message = f"{result.item.feature} {result.failure}: {result.detail}"
                self._fail(check, result.item.location, message)

    def _same(self, decoded: Request | Response) -> bool:
        """Same-dialect round trip: the wire back exactly (a stream: its folded response)."""
        try:
            if isinstance(decoded, Request):
                encoded = self.codec.encode_request(decoded)
                return self._expect(encoded.payload, self._spelled(), "decode → encode")
            if self.payload.kind == "response":
                again = self.codec.encode_response(decoded)
                return self._expect(again, self._spelled(), "decode → encode")
            events = encode_stream(self.codec, response_to_updates(decoded), self._own_target())
            folded = fold_updates(decode_stream(self.codec, events))
            return self._expect(
                dump_response(folded), dump_response(decoded), "fold → re-encode → fold"
            )
        except CODEC_ERRORS as error:
            self._fail("round-trip", getattr(error, "location", "-") or "-", repr(error))
            return False

    def _spelled(self) -> JsonValue:
        """The recorded wire in the dialect's output spelling (Gemini: camelCase field names;
        both spellings decode alike, so one sent in snake_case comes back camelCased)."""
        spelling = self.codec.spelling
        return self.payload.wire if spelling is None else spelling(self.payload.wire)

    def _expect(self, actual: JsonValue, expected: JsonValue, what: str) -> bool:
        path = first_difference(actual, expected)
        if path is None:
            return True
        self._fail("round-trip", path, f"{what} differs")
        return False

    def _own_target(self) -> Target:
        """The dialect's first target with no encode options: fields written as decoded."""
        return replace(self.codec.targets[0], options={})

    def _cross(self, decoded: Request | Response) -> None:
        source = source_of(self.payload.name, self.payload.dialect, decoded)
        own = self._own_target().name
        for codec, target in all_targets(self.registry):
            if target.name == own or not isinstance(codec, ProviderCodec):
                continue
            before = len(self.found.failures)
            CrossDialect(source, codec, target, self.found).run()
            if isinstance(decoded, Response) and self.payload.kind == "stream":
                self._restream(decoded, codec, target)
            if isinstance(decoded, Request):
                self._settings(decoded, codec, target)
            if len(self.found.failures) == before:
                self.outcomes += _outcomes_of(self.found, source, target)

    def _settings(self, request: Request, codec: ProviderCodec, target: Target) -> None:
        items = setting_items(request)
        if not items:
            return
        for mode in MODES:
            check = f"settings {target.name} ({mode})"
            try:
                encoded = codec.encode_request(request, policy=replay(mode), **target.options)
                back = setting_items(codec.decode_request(encoded.payload))
            except LossyHistoryError as error:
                self._record(items, mode, target, "refused", error.code)
                continue
            except CODEC_ERRORS as error:
                self._fail(check, "-", f"translation crashed: {error!r}")
                continue
            results = compare_settings(items, back, encoded.warnings)
            self._results(results, mode, target, check)

    def _record(
        self, items: Sequence[Item], mode: str, target: Target, outcome: Outcome, code: str
    ) -> None:
        results = [ItemResult(item, outcome, code=code) for item in items]
        self._results(results, mode, target, "")

    def _results(
        self, results: Sequence[ItemResult], mode: str, target: Target, check: str
    ) -> None:
        for result in results:
            if result.failure is not None:
                message = f"{result.item.feature} {result.failure}: {result.detail}"
                self._fail(check, result.item.location, message)
            elif result.outcome is not None:
                key = (self.payload.dialect, target.name, result.item.feature)
                kept = "strict" if mode == "strict" else "degrade"
                self.found.record(key, kept, result.outcome, result.code)
                self.outcomes.append(result.outcome)


USAGE_CARRIERS = (
    ("usage",),
    ("x_groq", "usage"),
    ("usageMetadata",),
    ("usage_metadata",),
    ("response", "usage"),
    ("message", "usage"),
)
"""Where services put a stream's token counts: Chat's ``usage`` (Groq's ``x_groq.usage``),
Gemini's ``usageMetadata``, a Responses event's ``response.usage``, Anthropic's
``message.usage``."""


def _recorded_usage(payload: CorpusPayload) -> bool:
    """True when an event of the recorded stream carries a usage object, read from the wire
    itself (never from the decoder), so a decoder that ignores a carrier is caught."""
    if payload.kind != "stream":
        return False
    for event in payload.events:
        for carrier in USAGE_CARRIERS:
            value: JsonValue = event.data
            for key in carrier:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, dict) and value:
                return True
    return False


def _outcomes_of(found: Collector, source: Source, target: Target) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for (dialect, name, _), modes in found.cells.items():
        if dialect == source.dialect and name == target.name:
            outcomes += modes["strict"]
    return outcomes


def failure_lines(result: CorpusResult) -> list[str]:
    """One stable line per failure (payload, check, field, message), sorted."""
    return sorted({f"{f.vector} [{f.check}] {f.field}: {f.message}" for f in result.failures})


def dumps_failures(result: CorpusResult) -> str:
    """The failure lines as JSON (for ``--json``)."""
    return json.dumps(failure_lines(result), indent=1)
