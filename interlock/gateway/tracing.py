"""Traces of proxied requests and AG-UI runs, following OpenTelemetry's GenAI conventions.

This module never imports OpenTelemetry: a gateway without ``[tracing]`` pays one
context-variable read per hook and nothing else. With tracing configured,
:mod:`interlock.gateway.tracing_otel` (the ``otel`` extra) provides the :class:`Tracer`,
and the spans are:

* a proxied request — ``chat {client model}`` (server span: the request as the client
  made it, status and usage), with children ``translate`` (decode, route, vault, replay
  check, encode), ``chat {upstream model}`` (client span: the call to the upstream, with
  ``gen_ai.provider.name``, usage and finish reasons) and, under it, one ``POST`` span per
  HTTP attempt (``http.request.resend_count`` on retries);
* an AG-UI run — ``invoke_agent {agent}`` with one ``chat {model}`` span per model call
  (their ``POST`` attempts under them), one ``execute_tool {tool}`` span per tool executed
  and one ``approval {tool}`` span per approval requested or decided.

Hooks find the tracer through a context variable (:data:`_ACTIVE`) set for the duration of
the request or the run: tasks the run creates inherit it, and nothing is global.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping, Sequence
from contextvars import ContextVar
from typing import Literal, Protocol, TypeAlias
from urllib.parse import urlsplit

from interlock.transcript import Usage

AttributeValue: TypeAlias = str | bool | int | float | Sequence[str]
Attributes: TypeAlias = Mapping[str, AttributeValue]
SpanKind: TypeAlias = Literal["server", "client", "internal"]

PROVIDER_NAMES: Mapping[str, str] = {
    "google": "gcp.gemini",
    "xai": "x_ai",
    "azure": "azure.ai.openai",
}
"""Providers and vendors (``HttpFacts.provider``, an upstream's ``vendor``) that the GenAI
conventions spell otherwise."""


class Span(Protocol):
    """One span being recorded."""

    def set(self, attributes: Attributes) -> None:
        """Add or replace attributes."""
        ...

    def rename(self, name: str) -> None:
        """Replace the span's name (known only part-way, e.g. once the model is read)."""
        ...

    def fail(self, error_type: str, message: str = "") -> None:
        """Mark the span failed: ``error.type`` and an error status."""
        ...

    def end(self) -> None:
        """End the span (idempotent)."""
        ...


class Tracer(Protocol):
    """Starts spans; children of the current span unless told otherwise."""

    def start(self, name: str, kind: SpanKind, attributes: Attributes) -> Span:
        """A started span, child of the current one (not made current)."""
        ...

    def current(self, span: Span) -> contextlib.AbstractContextManager[None]:
        """Make ``span`` the current span (the parent of spans started inside)."""
        ...

    def shutdown(self) -> None:
        """Export what is pending and stop."""
        ...


class _NullSpan:
    """The span of a gateway without tracing: every call does nothing."""

    __slots__ = ()

    def set(self, attributes: Attributes) -> None:
        pass

    def rename(self, name: str) -> None:
        pass

    def fail(self, error_type: str, message: str = "") -> None:
        pass

    def end(self) -> None:
        pass


NULL_SPAN: Span = _NullSpan()
_ACTIVE: ContextVar[Tracer | None] = ContextVar("interlock_tracer", default=None)


def active() -> Tracer | None:
    """The tracer of the request or run being served here, if tracing is on."""
    return _ACTIVE.get()


@contextlib.contextmanager
def serving(tracer: Tracer, name: str, kind: SpanKind, attributes: Attributes) -> Generator[Span]:
    """The root span of a request or run: current, with ``tracer`` active, for the block."""
    token = _ACTIVE.set(tracer)
    span = tracer.start(name, kind, attributes)
    try:
        with tracer.current(span):
            yield span
    except BaseException as error:
        span.fail(type(error).__name__)
        raise
    finally:
        span.end()
        _ACTIVE.reset(token)


@contextlib.contextmanager
def _traced(tracer: Tracer, name: str, kind: SpanKind, attributes: Attributes) -> Generator[Span]:
    span = tracer.start(name, kind, attributes)
    try:
        with tracer.current(span):
            yield span
    except BaseException as error:
        span.fail(getattr(error, "code", None) or type(error).__name__)
        raise
    finally:
        span.end()


_NOTHING: contextlib.nullcontext[Span] = contextlib.nullcontext(NULL_SPAN)


def span(
    name: str, kind: SpanKind = "internal", attributes: Attributes | None = None
) -> contextlib.AbstractContextManager[Span]:
    """A child span of the current one for the block (a shared no-op without tracing).

    An exception leaving the block marks the span failed (``error.type``: the
    exception's ``code`` attribute when it has one, else its class name).
    """
    tracer = _ACTIVE.get()
    if tracer is None:
        return _NOTHING
    return _traced(tracer, name, kind, attributes or {})


def start(name: str, kind: SpanKind = "internal", attributes: Attributes | None = None) -> Span:
    """A started child span of the current one, ended by the caller (:data:`NULL_SPAN`
    without tracing)."""
    tracer = _ACTIVE.get()
    if tracer is None:
        return NULL_SPAN
    return tracer.start(name, kind, attributes or {})


def usage_attributes(usage: Usage) -> dict[str, AttributeValue]:
    """``gen_ai.usage.*``: input (cached input included), cache reads, output (reasoning
    included), reasoning."""
    return {
        "gen_ai.usage.input_tokens": usage.input_tokens + usage.tool_prompt_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cached_input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.reasoning.output_tokens": usage.reasoning_tokens,
    }


def provider_name(provider: str, vendor: str = "", base_url: str = "") -> str:
    """``gen_ai.provider.name``: the upstream's ``vendor`` (an xAI or Azure Responses
    upstream, DeepSeek's Anthropic endpoint) when it names one, else the dialect's
    ``HttpFacts.provider``. A vendor that is only the host name of the upstream's
    ``base_url`` (the default for an unknown service) names no provider."""
    if vendor and vendor != urlsplit(base_url).hostname:
        return PROVIDER_NAMES.get(vendor, vendor)
    return PROVIDER_NAMES.get(provider, provider)


class RequestTrace:
    """The spans of one proxied request: the root, and the upstream call once routed.

    The access record is attached by the handler; when the root ends, its status, error
    and route become the root's attributes, and an upstream span still open ends too.
    """

    __slots__ = ("record", "root", "upstream")

    def __init__(self, root: Span) -> None:
        self.root = root
        self.upstream: Span = NULL_SPAN
        self.record: RecordLike | None = None

    def close(self) -> None:
        record = self.record
        if record is not None:
            self.root.set(
                {
                    "http.response.status_code": record.status,
                    "interlock.tenant": record.tenant,
                    "interlock.translation": record.translation,
                }
            )
            if record.error:
                self.root.fail(record.error)
                self.upstream.fail(record.error)
        self.upstream.end()


class RecordLike(Protocol):
    """What a trace reads of an access record."""

    @property
    def status(self) -> int: ...
    @property
    def tenant(self) -> str: ...
    @property
    def translation(self) -> str: ...
    @property
    def error(self) -> str: ...


_REQUEST: ContextVar[RequestTrace | None] = ContextVar("interlock_request_trace", default=None)


def request() -> RequestTrace | None:
    """The trace of the proxied request being served here (``None``: tracing off)."""
    return _REQUEST.get()


@contextlib.contextmanager
def proxied(tracer: Tracer, endpoint: str) -> Generator[RequestTrace]:
    """Trace one proxied request (named ``chat {model}`` once the model is known)."""
    attributes: Attributes = {"gen_ai.operation.name": "chat", "interlock.endpoint": endpoint}
    with serving(tracer, endpoint, "server", attributes) as root:
        trace = RequestTrace(root)
        token = _REQUEST.set(trace)
        try:
            yield trace
        finally:
            trace.close()
            _REQUEST.reset(token)


def within(span: Span) -> contextlib.AbstractContextManager[object]:
    """``span`` made current for the block (nothing without tracing)."""
    tracer = _ACTIVE.get()
    if tracer is None or span is NULL_SPAN:
        return _NOTHING
    return tracer.current(span)
