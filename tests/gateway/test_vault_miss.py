"""A vault miss is labelled as such: when a tool step's opaque reasoning is neither in the
request nor in the vault, the request goes without it and the answer says so
(``x-interlock-translation: degraded; vault_miss at messages[i]``)."""

from __future__ import annotations

from typing import Any

import httpx
from openai import AsyncOpenAI

from interlock.gateway._default_config import DEFAULT_CONFIG_TOML
from interlock.gateway.app import build_gateway, create_app
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store

CONFIG = DEFAULT_CONFIG_TOML.replace("sqlite:///.interlock/interlock.db", "memory://")
TOOLS: Any = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
]
ASK: Any = {"role": "user", "content": 'call get_weather with {"city": "Paris"}'}


def _history(call_id: str, arguments: str = "{}") -> list[Any]:
    """The tool step as a client sends it back (the call as the model made it)."""
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    return [
        ASK,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "sunny"},
    ]


async def _turns(model: str) -> tuple[str, str]:
    """The label of a tool turn the vault knows, then of one it does not."""
    built = build_gateway(parse_config(CONFIG, {}), store=open_store("memory://"))
    transport = httpx.ASGITransport(app=create_app(built))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        sdk = AsyncOpenAI(base_url="http://localhost/v1", api_key="unused", http_client=http)
        first = await sdk.chat.completions.create(model=model, messages=[ASK], tools=TOOLS)
        (call,) = first.choices[0].message.tool_calls or []
        known = await sdk.chat.completions.with_raw_response.create(
            model=model, messages=_history(call.id, call.function.arguments), tools=TOOLS
        )
        unknown = await sdk.chat.completions.with_raw_response.create(
            model=model, messages=_history("call_from_elsewhere"), tools=TOOLS
        )
    assert known.http_response.status_code == unknown.http_response.status_code == 200
    assert "returned sunny" in (unknown.parse().choices[0].message.content or "")
    return (
        known.headers["x-interlock-translation"],
        unknown.headers["x-interlock-translation"],
    )


async def test_a_responses_step_missing_from_the_vault_is_labelled_a_vault_miss() -> None:
    known, unknown = await _turns("demo-responses")
    assert known == "translated; restored 1 from vault"
    assert unknown == "degraded; vault_miss at messages[1]"
