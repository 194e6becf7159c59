"""Token counting goes to the upstream's own counting endpoint when it has one: passed
through within a dialect (``exact``), translated across (``translated``), else estimated
(``estimated``) — the official SDKs as clients, the emulators as upstreams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx
import httpx2
import pytest
from google import genai
from google.genai import types

from interlock.gateway._default_config import DEFAULT_CONFIG_TOML
from interlock.gateway.app import Gateway, build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store

CONFIG = DEFAULT_CONFIG_TOML.replace("sqlite:///.interlock/interlock.db", "memory://")
LABEL = "x-interlock-translation"
TEXT = "count these words please " * 40


@pytest.fixture
async def built() -> AsyncIterator[Gateway]:
    gateway = build_gateway(parse_config(CONFIG, {}), store=open_store("memory://"))
    yield gateway
    await gateway.close()


@pytest.mark.parametrize(
    ("model", "label"),
    [("demo-gemini", "exact"), ("demo-anthropic", "translated"), ("demo-chat", "estimated")],
)
async def test_google_genai_count_tokens(built: Gateway, model: str, label: str) -> None:
    transport = httpx.ASGITransport(app=create_app(built))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        options = types.HttpOptions(base_url="http://localhost", httpx_async_client=http)
        client = genai.Client(api_key="k", http_options=options)
        counted = await client.aio.models.count_tokens(model=model, contents=TEXT)
        raw = await http.post(
            f"/v1beta/models/{model}:countTokens",
            json={"contents": [{"role": "user", "parts": [{"text": TEXT}]}]},
        )
    assert raw.headers[LABEL] == label
    assert counted.total_tokens == raw.json()["totalTokens"] > 200


@pytest.mark.parametrize(
    ("model", "label"),
    [("demo-anthropic", "exact"), ("demo-gemini", "translated"), ("demo-responses", "estimated")],
)
async def test_anthropic_count_tokens(built: Gateway, model: str, label: str) -> None:
    transport = httpx2.ASGITransport(app=create_app(built))
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
        client = anthropic.AsyncAnthropic(
            base_url="http://localhost", api_key="k", http_client=http, max_retries=0
        )
        messages: Any = [{"role": "user", "content": TEXT}]
        raw = await client.messages.with_raw_response.count_tokens(model=model, messages=messages)
    assert raw.headers[LABEL] == label
    assert (await raw.parse()).input_tokens > 200
    emulator: Any = built.emulators["emulated-anthropic"]
    assert all("max_tokens" not in body for body in emulator.received)  # counts are not runs


async def test_a_bad_count_request_answers_in_the_clients_shape(built: Gateway) -> None:
    transport = httpx2.ASGITransport(app=create_app(built))
    async with httpx2.AsyncClient(transport=transport, base_url="http://localhost") as http:
        client = anthropic.AsyncAnthropic(
            base_url="http://localhost", api_key="k", http_client=http, max_retries=0
        )
        messages: Any = [{"role": "user", "content": "x"}]
        with pytest.raises(anthropic.NotFoundError) as missing:
            await client.messages.count_tokens(model="no-such-model", messages=messages)
        with pytest.raises(anthropic.BadRequestError) as malformed:
            await client.messages.count_tokens(
                model="demo-gemini", messages=messages, extra_body={"system": 5}
            )
    for caught in (missing, malformed):
        body: Any = caught.value.body
        assert body["type"] == "error" and body["error"]["message"]
        assert caught.value.response.headers[LABEL] == "none"
