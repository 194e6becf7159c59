"""The conformance runner: every vector, every check, one result.

:func:`run_suite` takes the vectors and a codec :data:`Registry` (so tests can substitute a
double), runs the same-dialect checks of each vector, then translates it into every other
target, and — for AG-UI — runs the traces through the official client when it is available.
It never raises for a codec's misbehaviour: everything lands in the :class:`SuiteResult`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from interlock.conformance._agui_checks import AguiChecks
from interlock.conformance._codecs import AguiCodec, ProviderCodec, Registry, Target
from interlock.conformance._cross import CrossDialect, Source, source_of
from interlock.conformance._features import message_items, response_items
from interlock.conformance._node import NodeUnavailable, verify_traces
from interlock.conformance._results import MODES, Collector, DialectSummary, SuiteResult
from interlock.conformance._same import SameDialect
from interlock.conformance._vectors import DIALECTS, Vector
from interlock.transcript import JsonObject, Request, Response

Progress = Callable[[str], None]


def all_targets(registry: Registry) -> list[tuple[ProviderCodec | AguiCodec, Target]]:
    """Every (codec, target) pair of the registry, in report order."""
    pairs: list[tuple[ProviderCodec | AguiCodec, Target]] = []
    for name in DIALECTS:
        codec = registry.get(name)
        if isinstance(codec, ProviderCodec):
            pairs += [(codec, target) for target in codec.targets]
        elif isinstance(codec, AguiCodec):
            pairs.append((codec, codec.target))
    return pairs


class _Run:
    """State of one suite run."""

    def __init__(
        self, registry: Registry, unavailable: dict[str, str], harness: Path | None
    ) -> None:
        self.registry = registry
        self.unavailable = unavailable
        self.harness = harness
        self.found = Collector()
        self.traces: dict[str, list[JsonObject]] = {}

    def vector(self, vector: Vector) -> None:
        codec = self.registry.get(vector.dialect)
        if codec is None:
            why = self.unavailable.get(vector.dialect, "not in the registry")
            self.found.fail(vector.name, "codec", "-", f"no {vector.dialect} codec: {why}")
            return
        if isinstance(codec, AguiCodec):
            checks = AguiChecks(vector, codec, self.found)
            decoded = checks.run()
            self.traces.update(checks.traces)
            own = codec.target.name
        else:
            same = SameDialect(vector, codec, self.found)
            decoded = same.run()
            own = same.target.name
        if decoded is None:
            return
        if not any(failure.vector == vector.name for failure in self.found.failures):
            self.exact(vector.dialect, own, decoded)
        source = source_of(vector.name, vector.dialect, decoded)
        self.cross(source, own)

    def exact(self, dialect: str, own: str, decoded: Request | Response) -> None:
        """A vector whose same-dialect checks all held: its features are exact there."""
        if isinstance(decoded, Request):
            items = message_items(decoded.messages)
        else:
            items = response_items(decoded)
        for item in items:
            for mode in MODES:
                self.found.record((dialect, own, item.feature), mode, "exact")

    def cross(self, source: Source, own: str) -> None:
        for codec, target in all_targets(self.registry):
            if target.name != own:
                CrossDialect(source, codec, target, self.found).run()

    def verify_agui(self) -> None:
        if not self.traces:
            return
        if self.harness is None:
            self.found.notes.append(
                "AG-UI traces were not checked by the official client: no harness given"
            )
            return
        try:
            verdicts = verify_traces(self.traces, self.harness)
        except NodeUnavailable as error:
            self.found.notes.append(
                f"SKIPPED: AG-UI traces were not checked by the official client ({error})"
            )
            return
        for name in self.traces:
            verdict = verdicts.get(name)
            if verdict is None or not verdict.ok:
                error = verdict.error if verdict else "no verdict"
                self.found.fail(
                    name.partition("#")[0], "agui-client", name.partition("#")[2] or "-", str(error)
                )
            else:
                self.found.passed()


def run_suite(
    vectors: Sequence[Vector],
    registry: Registry,
    *,
    unavailable: dict[str, str] | None = None,
    harness: Path | None = None,
    progress: Progress | None = None,
) -> SuiteResult:
    """Run every check on ``vectors``; ``progress`` gets one line per dialect."""
    started = time.perf_counter()
    run = _Run(registry, unavailable or {}, harness)
    summaries: list[DialectSummary] = []
    for dialect in _dialects(vectors):
        mark = time.perf_counter()
        failures_before, checks_before = len(run.found.failures), run.found.checks
        batch = [vector for vector in vectors if vector.dialect == dialect]
        for vector in batch:
            run.vector(vector)
        if dialect == "agui":
            run.verify_agui()
        summary = DialectSummary(
            dialect=dialect,
            vectors=len(batch),
            checks=run.found.checks - checks_before,
            failures=len(run.found.failures) - failures_before,
            seconds=time.perf_counter() - mark,
        )
        summaries.append(summary)
        if progress is not None:
            progress(_progress_line(summary))
    return SuiteResult(
        failures=tuple(run.found.failures),
        notes=tuple(run.found.notes),
        cells={
            key: {mode: frozenset(found) for mode, found in modes.items()}
            for key, modes in run.found.cells.items()
        },
        dialects=tuple(summaries),
        seconds=time.perf_counter() - started,
    )


def _dialects(vectors: Iterable[Vector]) -> list[str]:
    present = {vector.dialect for vector in vectors}
    return [dialect for dialect in DIALECTS if dialect in present]


def _progress_line(summary: DialectSummary) -> str:
    verdict = "ok" if summary.failures == 0 else f"{summary.failures} FAILED"
    return (
        f"{summary.dialect:<18} {summary.vectors:>3} vectors {summary.checks:>5} checks"
        f"  {verdict}  ({summary.seconds:.2f} s)"
    )
