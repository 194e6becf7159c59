"""The OpenTelemetry side of :mod:`interlock.gateway.tracing` (the ``otel`` extra).

Imported only when ``[tracing]`` is configured (or a test hands a tracer provider in):
spans go through the OpenTelemetry SDK, parented through OpenTelemetry's own context,
and are exported over OTLP/HTTP in batches.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Status, StatusCode

from interlock.gateway.config_ops import TracingConfig
from interlock.gateway.tracing import Attributes, Span, SpanKind

_KINDS = {
    "server": trace.SpanKind.SERVER,
    "client": trace.SpanKind.CLIENT,
    "internal": trace.SpanKind.INTERNAL,
}


class OtelSpan:
    """An OpenTelemetry span behind :class:`interlock.gateway.tracing.Span`."""

    __slots__ = ("ended", "span")

    def __init__(self, span: trace.Span) -> None:
        self.span = span
        self.ended = False

    def set(self, attributes: Attributes) -> None:
        self.span.set_attributes(dict(attributes))

    def rename(self, name: str) -> None:
        self.span.update_name(name)

    def fail(self, error_type: str, message: str = "") -> None:
        self.span.set_attribute("error.type", error_type)
        self.span.set_status(Status(StatusCode.ERROR, message or None))

    def end(self) -> None:
        if not self.ended:
            self.ended = True
            self.span.end()


class OtelTracer:
    """Spans from one OpenTelemetry tracer provider (this gateway's own, not the global)."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer("interlock")

    def start(self, name: str, kind: SpanKind, attributes: Attributes) -> OtelSpan:
        return OtelSpan(
            self._tracer.start_span(name, kind=_KINDS[kind], attributes=dict(attributes))
        )

    @contextlib.contextmanager
    def current(self, span: Span) -> Generator[None]:
        assert isinstance(span, OtelSpan), "only this tracer's spans are made current"
        token = otel_context.attach(trace.set_span_in_context(span.span))
        try:
            yield
        finally:
            otel_context.detach(token)

    def shutdown(self) -> None:
        self.provider.shutdown()


def otlp_tracer(config: TracingConfig) -> OtelTracer:
    """A tracer exporting to ``config.otlp_endpoint`` (OTLP over HTTP, protobuf)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": config.service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=config.otlp_endpoint)))
    return OtelTracer(provider)
