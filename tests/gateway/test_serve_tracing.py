"""``[tracing]`` in a real ``interlock serve``: spans reach an OTLP/HTTP receiver on
loopback (decoded with OpenTelemetry's own protobuf classes), flushed at shutdown."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import openai
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from interlock.gateway._default_config import DEFAULT_CONFIG_TOML
from tests.gateway.serving import serve


class Receiver(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.posts: list[tuple[str, str, bytes]] = []


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        self.server.posts.append((self.path, self.headers["content-type"], body))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_spans_are_exported_over_otlp_http(tmp_path: Path, receiver: Receiver) -> None:
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}/v1/traces"
    config = DEFAULT_CONFIG_TOML.replace(
        'url = "sqlite:///.interlock/interlock.db"', 'url = "memory://"'
    )
    config += f'\n[tracing]\notlp_endpoint = "{endpoint}"\nservice_name = "interlock-test"\n'
    path = tmp_path / "interlock.toml"
    path.write_text(config)
    with (
        serve(path, tmp_path) as url,
        openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0) as client,
    ):
        client.chat.completions.create(
            model="demo-gemini", messages=[{"role": "user", "content": "hi"}]
        )
    # the server stopped: what its batch processor held was exported before it exited
    assert receiver.posts, "nothing was exported"
    names: list[str] = []
    services: set[str] = set()
    for where, content_type, body in receiver.posts:
        assert (where, content_type) == ("/v1/traces", "application/x-protobuf")
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for attribute in resource_spans.resource.attributes:
                if attribute.key == "service.name":
                    services.add(attribute.value.string_value)
            for scope_spans in resource_spans.scope_spans:
                names += [span.name for span in scope_spans.spans]
    assert services == {"interlock-test"}
    assert sorted(names) == sorted(
        ["chat demo-gemini", "translate", "chat gemini-3-flash-emulated", "POST"]
    )
