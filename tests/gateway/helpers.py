"""Building a gateway in-process around ``httpx.MockTransport`` upstreams."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field

import httpx

from interlock.gateway.app import Gateway, build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store

UPSTREAM_KEY = "sk-upstream-SECRET-123"

CONFIG = """
[server]
access_log = true
max_body_bytes = 4096

[store]
url = "memory://"

[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "https://chat.example/v1"
api_key_env = "UP_KEY"
max_retries = 2

[[upstreams]]
name = "responses"
protocol = "openai-responses"
base_url = "https://responses.example/v1"
api_key_env = "UP_KEY"
vendor = "openai"

[[upstreams]]
name = "gemini"
protocol = "gemini"
base_url = "https://gemini.example"
api_key_env = "UP_KEY"

[[models]]
name = "to-chat"
upstream = "chat"
model = "up-chat"

[[models]]
name = "to-responses"
upstream = "responses"
model = "up-responses"

[[models]]
name = "to-gemini"
upstream = "gemini"
model = "up-gemini"
"""

Handler = Callable[[httpx.Request], httpx.Response]


@dataclass
class Recorder:
    """A mock upstream: answers with ``handler`` and keeps every request it saw."""

    handler: Handler
    requests: list[httpx.Request] = field(default_factory=list[httpx.Request])

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.handler(request)

    @property
    def bodies(self) -> list[dict[str, object]]:
        return [json.loads(request.content) for request in self.requests]


def gateway(
    upstreams: Mapping[str, Handler], config: str = CONFIG, *, no_sleep: bool = True
) -> Gateway:
    built = build_gateway(
        parse_config(config, {"UP_KEY": UPSTREAM_KEY}),
        transports={name: httpx.MockTransport(handler) for name, handler in upstreams.items()},
        store=open_store("memory://"),
    )
    if no_sleep:
        for upstream in built.upstreams.values():
            upstream.sleep = _no_sleep
    return built


async def _no_sleep(_: float) -> None:
    return None


def client(built: Gateway) -> httpx.AsyncClient:
    app = create_app(built)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")


def sse(events: list[dict[str, object]], done: bool = False) -> bytes:
    text = "".join(f"data: {json.dumps(event)}\n\n" for event in events)
    return (text + ("data: [DONE]\n\n" if done else "")).encode()


class BreakingStream(httpx.AsyncByteStream):
    """Yields ``chunks`` then fails like a dropped connection."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        raise httpx.ReadError("connection reset by peer")


def chat_completion(text: str = "Hello", model: str = "up-chat") -> dict[str, object]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def chat_chunks(model: str = "up-chat") -> list[dict[str, object]]:
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model}
    return [
        {
            **head,
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": "Hel"},
                    "finish_reason": None,
                }
            ],
        },
        {**head, "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
    ]
