"""Prometheus metrics, written in the text exposition format (version 0.0.4) by hand.

The set is small and fixed, so a dependency would buy nothing; each update is a dict
increment. Label values come from config names and fixed vocabularies, never from
request content, so cardinality stays bounded.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Histogram:
    """Cumulative-bucket histogram of seconds."""

    __slots__ = ("count", "counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(LATENCY_BUCKETS) + 1)
        self.count = 0
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.count += 1
        self.total += seconds


def _labels(names: tuple[str, ...], values: tuple[str, ...]) -> str:
    inner = ",".join(
        f'{name}="{_escape(value)}"' for name, value in zip(names, values, strict=True)
    )
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    """Counters, histograms and gauges of one gateway process."""

    def __init__(self) -> None:
        self.requests: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        self.latency: defaultdict[tuple[str, str], Histogram] = defaultdict(Histogram)
        self.upstream_errors: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.upstream_retries: defaultdict[tuple[str, str], int] = defaultdict(int)
        """By (upstream, kind): ``same_deployment``, ``other_deployment``, ``fallback``."""
        self.lossy_refused: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.answer_warnings: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        """By (client dialect, warning code, streamed): what answers lost on the way."""
        self.request_warnings: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        """By (client dialect, warning code, streamed): every warning of the requests whose
        answers were given (answers list them folded; this counts each one)."""
        self.active_streams = 0
        self.agui_runs: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        self.agui_events: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.agui_errors: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.agui_approvals: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.agui_connections: defaultdict[str, int] = defaultdict(int)
        self.routing_fallbacks: defaultdict[tuple[str, str, str], int] = defaultdict(int)
        self.deployment_cooldowns: defaultdict[str, int] = defaultdict(int)
        self.deployment_cooldowns_learned: defaultdict[str, int] = defaultdict(int)

    def request_done(self, endpoint: str, model: str, status: int, seconds: float) -> None:
        """Count one finished request and observe its duration."""
        self.requests[endpoint, model, str(status)] += 1
        self.latency[endpoint, model].observe(seconds)

    def render(self) -> str:
        """The exposition text."""
        lines: list[str] = []
        _counter(
            lines,
            "interlock_requests_total",
            "Proxy requests by endpoint, model and HTTP status.",
            ("endpoint", "model", "status"),
            self.requests.items(),
        )
        self._render_latency(lines)
        _counter(
            lines,
            "interlock_upstream_errors_total",
            "Upstream failures by upstream and kind (connect, timeout, status, stream).",
            ("upstream", "kind"),
            self.upstream_errors.items(),
        )
        _counter(
            lines,
            "interlock_upstream_retries_total",
            "Attempts after a failure before the first byte, by the upstream tried and kind "
            "(same_deployment, other_deployment, fallback).",
            ("upstream", "kind"),
            self.upstream_retries.items(),
        )
        _counter(
            lines,
            "interlock_lossy_history_refused_total",
            "Requests refused before sending because the target could not carry the history.",
            ("upstream", "code"),
            self.lossy_refused.items(),
        )
        _counter(
            lines,
            "interlock_answer_warnings_total",
            "Answers that lost something on the way to the client's dialect (e.g. "
            "citation_dropped), by client dialect, warning code and streamed (true/false).",
            ("dialect", "code", "streamed"),
            self.answer_warnings.items(),
        )
        _counter(
            lines,
            "interlock_request_warnings_total",
            "Warnings of translated requests whose answers were given (e.g. vault_miss, "
            "field_dropped), every one, by client dialect, warning code and streamed.",
            ("dialect", "code", "streamed"),
            self.request_warnings.items(),
        )
        lines.append("# HELP interlock_active_streams Streams currently open to clients.")
        lines.append("# TYPE interlock_active_streams gauge")
        lines.append(f"interlock_active_streams {self.active_streams}")
        self._render_agui(lines)
        self._render_routing(lines)
        return "\n".join(lines) + "\n"

    def _render_routing(self, lines: list[str]) -> None:
        _counter(
            lines,
            "interlock_routing_fallbacks_total",
            "Fallback models taken, or skipped because the history would be lossy there.",
            ("model", "fallback", "outcome"),
            self.routing_fallbacks.items(),
        )
        _counter(
            lines,
            "interlock_deployment_cooldowns_total",
            "Times a deployment (upstream/model) started cooling down after failures.",
            ("deployment",),
            [((key,), value) for key, value in self.deployment_cooldowns.items()],
        )
        _counter(
            lines,
            "interlock_deployment_cooldowns_learned_total",
            "Cooldowns of a deployment another process on the shared store started.",
            ("deployment",),
            [((key,), value) for key, value in self.deployment_cooldowns_learned.items()],
        )

    def _render_agui(self, lines: list[str]) -> None:
        _counter(
            lines,
            "interlock_agui_runs_total",
            "AG-UI runs by agent, transport and outcome.",
            ("agent", "transport", "outcome"),
            self.agui_runs.items(),
        )
        _counter(
            lines,
            "interlock_agui_events_total",
            "AG-UI events sent, by agent and transport.",
            ("agent", "transport"),
            self.agui_events.items(),
        )
        _counter(
            lines,
            "interlock_agui_errors_total",
            "AG-UI runs ended or refused with an error, by agent and code.",
            ("agent", "code"),
            self.agui_errors.items(),
        )
        _counter(
            lines,
            "interlock_agui_approvals_total",
            "AG-UI interrupts (approvals, input requests): requested, and resolved by a resume.",
            ("agent", "stage"),
            self.agui_approvals.items(),
        )
        name = "interlock_agui_connections"
        lines.append(f"# HELP {name} AG-UI connections open now (SSE streams, WebSockets).")
        lines.append(f"# TYPE {name} gauge")
        for transport in ("sse", "websocket"):
            lines.append(f'{name}{{transport="{transport}"}} {self.agui_connections[transport]}')

    def _render_latency(self, lines: list[str]) -> None:
        name = "interlock_request_duration_seconds"
        lines.append(f"# HELP {name} Proxy request duration (to the last byte) in seconds.")
        lines.append(f"# TYPE {name} histogram")
        for (endpoint, model), histogram in sorted(self.latency.items()):
            base = f'endpoint="{_escape(endpoint)}",model="{_escape(model)}"'
            running = 0
            for bound, count in zip(LATENCY_BUCKETS, histogram.counts, strict=False):
                running += count
                lines.append(f'{name}_bucket{{{base},le="{bound}"}} {running}')
            lines.append(f'{name}_bucket{{{base},le="+Inf"}} {histogram.count}')
            lines.append(f"{name}_sum{{{base}}} {histogram.total:.6f}")
            lines.append(f"{name}_count{{{base}}} {histogram.count}")


def _counter(
    lines: list[str],
    name: str,
    help_text: str,
    labels: tuple[str, ...],
    samples: Iterable[tuple[tuple[str, ...], int]],
) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} counter")
    for values, count in sorted(samples):
        lines.append(f"{name}{_labels(labels, values)} {count}")
