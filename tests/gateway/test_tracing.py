"""Traces, checked span by span with the OpenTelemetry SDK's in-memory exporter.

The gateway runs in this process behind uvicorn on a loopback port (so its spans land in
the test's exporter), clients are the official openai SDK and plain SSE, and the Gemini
upstream is the emulator behind a transport that answers 503 when told to (a retry).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import openai
import pytest
import uvicorn
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from interlock.emulators import create_emulator, emulator_app
from interlock.gateway._default_config import DEFAULT_CONFIG_TOML
from interlock.gateway.app import build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store
from interlock.gateway.tracing import provider_name
from interlock.gateway.tracing_otel import OtelTracer
from tests.gateway.agui.harness import new_id, resume_all, run_input, sse_events, user
from tests.gateway.serving import ROOT, free_port

CONFIG = (
    DEFAULT_CONFIG_TOML.replace("[server]\n", "[server]\naccess_log = false\n", 1)
    + '\n[[rate_limits]]\nmodel = "demo-responses"\nrequests_per_minute = 1\n'
)
CONFIG = CONFIG.replace(
    "[[agents]]",
    """[[upstreams]]
name = "emulated-xai"
protocol = "openai-responses"
base_url = "emulator://openai-responses"
vendor = "xai"

[[models]]
name = "grok"
upstream = "emulated-xai"
model = "grok-4-emulated"

[[models]]
name = "routed"
retries = 0
fallbacks = ["demo-anthropic"]
deployments = [{ upstream = "emulated-gemini", model = "gemini-3-flash-emulated" }]

[[agents]]""",
    1,
)


class Flaky(httpx.AsyncBaseTransport):
    """The Gemini emulator, answering 503 to the next ``failures`` requests."""

    def __init__(self) -> None:
        self.inner = httpx.ASGITransport(app=emulator_app(create_emulator("gemini")))
        self.failures = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.failures:
            self.failures -= 1
            body = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
            return httpx.Response(503, json=body)
        return await self.inner.handle_async_request(request)


class Stack:
    def __init__(self, url: str, exporter: InMemorySpanExporter, flaky: Flaky) -> None:
        self.url = url
        self.exporter = exporter
        self.flaky = flaky

    def trace(self, root_name: str) -> list[tuple[int, ReadableSpan]]:
        """The newest finished trace whose root is ``root_name``: (depth, span), depth first."""
        deadline = time.monotonic() + 20
        while True:
            spans = list(self.exporter.get_finished_spans())
            roots = [span for span in spans if span.parent is None and span.name == root_name]
            if roots or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert roots, f"no finished trace {root_name!r}: {[span.name for span in spans]}"
        self.exporter.clear()
        return _tree(roots[-1], spans)


def _tree(root: ReadableSpan, spans: Sequence[ReadableSpan]) -> list[tuple[int, ReadableSpan]]:
    assert root.context is not None
    ordered: list[tuple[int, ReadableSpan]] = [(0, root)]
    children = sorted(
        (s for s in spans if s.parent is not None and s.parent.span_id == root.context.span_id),
        key=lambda span: span.start_time or 0,
    )
    for child in children:
        ordered += [(depth + 1, span) for depth, span in _tree(child, spans)]
    return ordered


def _shape(tree: list[tuple[int, ReadableSpan]]) -> list[tuple[int, str, SpanKind]]:
    return [(depth, span.name, span.kind) for depth, span in tree]


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    flaky = Flaky()
    gateway = build_gateway(
        parse_config(CONFIG, {}),
        transports={"emulated-gemini": flaky},
        store=open_store("memory://"),
        tracer=OtelTracer(provider),
    )
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(gateway), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline, "the gateway did not start"
        time.sleep(0.02)
    try:
        yield Stack(f"http://localhost:{port}", exporter, flaky)
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def _client(stack: Stack) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{stack.url}/v1", api_key="unused", max_retries=0)


def test_a_translated_request_with_a_retry(stack: Stack) -> None:
    stack.flaky.failures = 1
    with _client(stack) as client:
        answer = client.chat.completions.create(
            model="demo-gemini", messages=[{"role": "user", "content": "hello there"}]
        )
    assert answer.usage is not None
    tree = stack.trace("chat demo-gemini")
    assert _shape(tree) == [
        (0, "chat demo-gemini", SpanKind.SERVER),
        (1, "translate", SpanKind.INTERNAL),
        (1, "chat gemini-3-flash-emulated", SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
    ]
    (_, root), (_, translate), (_, upstream), (_, first), (_, second) = tree
    assert root.attributes is not None and upstream.attributes is not None
    assert dict(root.attributes) == {
        "gen_ai.operation.name": "chat",
        "interlock.endpoint": "chat.completions",
        "gen_ai.request.model": "demo-gemini",
        "interlock.ingress": "openai-chat",
        "gen_ai.usage.input_tokens": answer.usage.prompt_tokens,
        "gen_ai.usage.cache_read.input_tokens": 0,
        "gen_ai.usage.output_tokens": answer.usage.completion_tokens,
        "gen_ai.usage.reasoning.output_tokens": 4,
        "http.response.status_code": 200,
        "interlock.tenant": "default",
        "interlock.translation": "translated",
    }
    assert root.status.status_code == StatusCode.UNSET
    assert translate.attributes == {"interlock.ingress": "openai-chat"}
    assert {
        key: upstream.attributes[key]
        for key in (
            "gen_ai.operation.name",
            "gen_ai.provider.name",
            "gen_ai.request.model",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "interlock.upstream",
            "interlock.egress",
        )
    } == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "gcp.gemini",
        "gen_ai.request.model": "gemini-3-flash-emulated",
        "gen_ai.usage.input_tokens": answer.usage.prompt_tokens,
        "gen_ai.usage.output_tokens": answer.usage.completion_tokens,
        "interlock.upstream": "emulated-gemini",
        "interlock.egress": "gemini",
    }
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["http.response.status_code"] == 503
    assert first.attributes["error.type"] == "503"
    assert "http.request.resend_count" not in first.attributes
    assert second.attributes["http.response.status_code"] == 200
    assert second.attributes["http.request.resend_count"] == 1
    assert "v1beta/models/gemini-3-flash-emulated:generateContent" in str(
        second.attributes["url.full"]
    )


def test_a_relayed_stream_ends_its_spans_with_the_stream(stack: Stack) -> None:
    with _client(stack) as client:
        chunks = list(
            client.chat.completions.create(
                model="demo-chat",
                messages=[{"role": "user", "content": "stream please"}],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    usage = chunks[-1].usage
    assert usage is not None
    tree = stack.trace("chat demo-chat")
    assert _shape(tree) == [
        (0, "chat demo-chat", SpanKind.SERVER),
        (1, "translate", SpanKind.INTERNAL),
        (1, "chat chat-emulated", SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
    ]
    root, upstream = tree[0][1], tree[2][1]
    assert root.attributes is not None and upstream.attributes is not None
    assert root.attributes["interlock.translation"] == "exact"
    assert root.attributes["gen_ai.usage.output_tokens"] == usage.completion_tokens
    assert upstream.attributes["gen_ai.provider.name"] == "openai"
    assert upstream.attributes["gen_ai.usage.input_tokens"] == usage.prompt_tokens
    assert root.end_time is not None and upstream.end_time is not None
    assert upstream.end_time <= root.end_time


def test_the_provider_is_the_upstreams_vendor(stack: Stack) -> None:
    with _client(stack) as client:
        client.responses.create(model="grok", input="hello")
    tree = stack.trace("chat grok")
    upstream = tree[2][1]
    assert upstream.attributes is not None
    assert upstream.attributes["interlock.upstream"] == "emulated-xai"
    assert upstream.attributes["gen_ai.provider.name"] == "x_ai"


def test_bad_input_and_a_rate_limit_are_failed_roots_with_nothing_sent(stack: Stack) -> None:
    bad = httpx.post(f"{stack.url}/v1/chat/completions", content=b"{not json")
    assert bad.status_code == 400
    tree = stack.trace("chat.completions")
    assert _shape(tree) == [
        (0, "chat.completions", SpanKind.SERVER),
        (1, "translate", SpanKind.INTERNAL),
    ]
    root, translate = tree[0][1], tree[1][1]
    assert root.attributes is not None and translate.attributes is not None
    assert root.attributes["http.response.status_code"] == 400
    assert root.status.status_code == StatusCode.ERROR
    assert translate.attributes["error.type"] == "invalid_json"

    with _client(stack) as client:
        client.responses.create(model="demo-responses", input="one")
        stack.trace("chat demo-responses")
        with pytest.raises(openai.RateLimitError):
            client.responses.create(model="demo-responses", input="two")
    tree = stack.trace("chat demo-responses")
    assert _shape(tree) == [
        (0, "chat demo-responses", SpanKind.SERVER),
        (1, "translate", SpanKind.INTERNAL),
    ]
    root = tree[0][1]
    assert root.attributes is not None
    assert root.attributes["http.response.status_code"] == 429
    assert root.attributes["error.type"] == "rate_limit_exceeded"


def test_a_fallback_after_a_failing_deployment(stack: Stack) -> None:
    stack.flaky.failures = 10  # every attempt at the Gemini deployment fails
    with _client(stack) as client:
        answer = client.chat.completions.create(
            model="routed", messages=[{"role": "user", "content": "hello"}]
        )
    stack.flaky.failures = 0
    assert answer.choices[0].message.content
    tree = stack.trace("chat routed")
    top = [(span.name, span.kind) for depth, span in tree if depth == 1]
    assert top == [
        ("translate", SpanKind.INTERNAL),  # the client's request, decoded and checked
        ("translate", SpanKind.INTERNAL),  # encoded for the model's own deployment
        ("chat gemini-3-flash-emulated", SpanKind.CLIENT),
        ("translate", SpanKind.INTERNAL),  # encoded for the fallback
        ("chat claude-emulated", SpanKind.CLIENT),
    ]
    translated = [span for depth, span in tree if depth == 1 and span.name == "translate"]
    assert [(span.attributes or {}).get("interlock.upstream") for span in translated] == [
        None,
        "emulated-gemini",
        "emulated-anthropic",
    ]
    failed = next(span for depth, span in tree if span.name == "chat gemini-3-flash-emulated")
    taken = next(span for depth, span in tree if span.name == "chat claude-emulated")
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.attributes is not None and failed.attributes["error.type"] == "retried"
    attempts = [span for _, span in _tree(failed, [s for _, s in tree])][1:]
    assert attempts and all(
        span.attributes is not None and span.attributes["http.response.status_code"] == 503
        for span in attempts
    )
    assert taken.status.status_code == StatusCode.UNSET
    assert taken.attributes is not None
    assert taken.attributes["gen_ai.provider.name"] == "anthropic"
    assert taken.attributes["gen_ai.usage.output_tokens"] == answer.usage.completion_tokens  # type: ignore[union-attr]
    root = tree[0][1]
    assert root.attributes is not None
    assert "fallback to demo-anthropic" in str(root.attributes["interlock.translation"])


def _run(stack: Stack, body: dict[str, Any]) -> list[dict[str, Any]]:
    answer = httpx.post(f"{stack.url}/agui/demo", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    return sse_events(answer.text)


def test_an_agui_run_with_a_tool_and_an_approval(stack: Stack) -> None:
    thread = new_id("thread")
    ask = 'call get_weather with {"city": "Paris"}'
    _run(stack, run_input(thread, [user(ask)]))
    tree = stack.trace("invoke_agent demo")
    model = "chat gemini-3-flash-emulated"
    assert _shape(tree) == [
        (0, "invoke_agent demo", SpanKind.INTERNAL),
        (1, model, SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
        (1, "execute_tool get_weather", SpanKind.INTERNAL),
        (1, model, SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
    ]
    root, call, tool = tree[0][1], tree[1][1], tree[3][1]
    assert root.attributes is not None and call.attributes is not None
    assert tool.attributes is not None
    assert root.attributes["gen_ai.agent.name"] == "demo"
    assert root.attributes["gen_ai.conversation.id"] == thread
    assert root.attributes["interlock.outcome"] == "final"
    assert call.attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert call.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert int(str(call.attributes["gen_ai.usage.output_tokens"])) > 0
    assert tool.attributes["gen_ai.tool.name"] == "get_weather"
    assert tool.attributes["interlock.tool.outcome"] == "success"

    events = _run(stack, run_input(thread, [user('call delete_file with {"path": "x.txt"}')]))
    tree = stack.trace("invoke_agent demo")
    assert _shape(tree) == [
        (0, "invoke_agent demo", SpanKind.INTERNAL),
        (1, model, SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
        (1, "approval delete_file", SpanKind.INTERNAL),
    ]
    requested = tree[3][1]
    assert requested.attributes is not None
    assert requested.attributes["interlock.approval.stage"] == "requested"
    assert tree[0][1].attributes is not None
    assert tree[0][1].attributes["interlock.outcome"] == "awaiting_approval"

    finished = next(event for event in events if event["type"] == "RUN_FINISHED")
    _run(stack, run_input(thread, resume=resume_all(finished, {"approved": True})))
    tree = stack.trace("invoke_agent demo")
    assert _shape(tree) == [
        (0, "invoke_agent demo", SpanKind.INTERNAL),
        (1, "approval delete_file", SpanKind.INTERNAL),
        (1, "execute_tool delete_file", SpanKind.INTERNAL),
        (1, model, SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
    ]
    decided = tree[1][1]
    assert decided.attributes is not None
    assert decided.attributes["interlock.approval.stage"] == "approved"
    assert (
        decided.attributes["interlock.approval.id"] == requested.attributes["interlock.approval.id"]
    )


@pytest.mark.parametrize(
    ("remember", "rule"),
    [
        ("tool", "tool:delete_file"),
        ("arguments", "arguments:delete_file:"),  # then the arguments' digest
    ],
)
def test_a_call_a_standing_rule_approves_has_an_approval_span_naming_the_rule(
    stack: Stack, remember: str, rule: str
) -> None:
    thread = new_id("thread")
    ask = user('call delete_file with {"path": "x.txt"}')
    events = _run(stack, run_input(thread, [ask]))
    stack.trace("invoke_agent demo")
    finished = next(event for event in events if event["type"] == "RUN_FINISHED")
    decision = {"approved": True, "remember": remember}
    _run(stack, run_input(thread, resume=resume_all(finished, decision)))
    stack.trace("invoke_agent demo")  # the resumed run's trace, done with
    # the same call again: the rule approves it, no interrupt, and the trace says which rule
    events = _run(stack, run_input(thread, [user('call delete_file with {"path": "x.txt"}')]))
    assert next(e for e in events if e["type"] == "RUN_FINISHED")["outcome"]["type"] == "success"
    tree = stack.trace("invoke_agent demo")
    model = "chat gemini-3-flash-emulated"
    assert _shape(tree) == [
        (0, "invoke_agent demo", SpanKind.INTERNAL),
        (1, model, SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
        (1, "approval delete_file", SpanKind.INTERNAL),
        (1, "execute_tool delete_file", SpanKind.INTERNAL),
        (1, model, SpanKind.CLIENT),
        (2, "POST", SpanKind.CLIENT),
    ]
    approval, tool = tree[3][1], tree[4][1]
    assert approval.attributes is not None and tool.attributes is not None
    assert approval.attributes["interlock.approval.stage"] == "auto_approved"
    assert str(approval.attributes["interlock.approval.rule"]).startswith(rule)
    assert approval.attributes["gen_ai.tool.call.id"] == tool.attributes["gen_ai.tool.call.id"]
    assert "interlock.approval.id" not in approval.attributes  # no decision was asked for


def test_without_tracing_opentelemetry_is_never_imported() -> None:
    script = """
import asyncio, sys, httpx
from interlock.gateway.app import build_gateway, create_app
from interlock.gateway.config import load_config
from interlock.gateway.stores import open_store

async def main():
    gateway = build_gateway(load_config(None, environ={}), store=open_store("memory://"))
    app = create_app(gateway)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        body = {"model": "demo-gemini", "messages": [{"role": "user", "content": "hi"}]}
        assert (await client.post("/v1/chat/completions", json=body)).status_code == 200
    await gateway.close()

asyncio.run(main())
print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().replace("'", '"')) == []


@pytest.mark.parametrize(
    ("provider", "vendor", "base_url", "name"),
    [
        ("openai", "openai", "https://api.openai.com/v1", "openai"),
        ("openai", "azure", "https://x.openai.azure.com/openai/v1", "azure.ai.openai"),
        ("anthropic", "deepseek", "https://api.deepseek.com/anthropic", "deepseek"),
        ("openai", "gw.example", "https://gw.example/v1", "openai"),  # a host, not a vendor
        ("google", "", "https://generativelanguage.googleapis.com", "gcp.gemini"),
    ],
)
def test_provider_names(provider: str, vendor: str, base_url: str, name: str) -> None:
    assert provider_name(provider, vendor, base_url) == name
