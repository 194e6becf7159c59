"""Rate limits and usage accounting seen from the official SDKs, against a real
``interlock serve`` in front of the emulators.

* every client dialect gets its 429 in its own error shape, with ``retry-after``, and the
  SDK's own rate-limit error (``max_retries=0``: the SDKs would otherwise retry);
* the usage a client was told — streamed or not, same dialect or across — is what the
  admin endpoint and ``/metrics`` count for its tenant, model and deployment;
* the admin endpoint answers 401 without a key and 403 with a wrong one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

ADMIN = "admin-key-for-tests"
LIMITED = ["chat", "responses", "gemini", "anthropic"]
Counts = tuple[int, int, int]
"""(input, output, reasoning) tokens as a client was told them (output includes reasoning)."""


def _config(emulator_url: str, directory: Path, cases: int) -> str:
    keys = [f'{{key = "sk-limited-{name}", tenant = "limited-{name}"}}' for name in LIMITED]
    keys += [f'{{key = "sk-case-{index}", tenant = "case-{index}"}}' for index in range(cases)]
    keys.append('{key = "sk-tokens", tenant = "tokens"}')
    keys.append('{key = "sk-quiet", tenant = "quiet"}')
    text = gateway_config(emulator_url, f"sqlite:///{directory / 'state.db'}")
    text = text.replace("[server]\n", f"[server]\napi_keys = [{', '.join(keys)}]\n", 1)
    for name in LIMITED:
        text += f'\n[[rate_limits]]\ntenant = "limited-{name}"\nrequests_per_minute = 2\n'
    text += '\n[[rate_limits]]\ntenant = "tokens"\nmodel = "via-chat"\ntokens_per_minute = 10\n'
    return text + '\n[admin]\nkey_env = "INTERLOCK_TEST_ADMIN_KEY"\n'


# ---------------------------------------------------------------- one call per SDK


def _chat(url: str, key: str, model: str, stream: bool) -> Counts:
    with openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0) as client:
        messages: Any = [{"role": "user", "content": "count these five words"}]
        if not stream:
            usage = client.chat.completions.create(model=model, messages=messages).usage
        else:
            chunks = client.chat.completions.create(
                model=model, messages=messages, stream=True, stream_options={"include_usage": True}
            )
            usage = [chunk.usage for chunk in chunks if chunk.usage is not None][-1]
        assert usage is not None
        details = usage.completion_tokens_details
        reasoning = details.reasoning_tokens or 0 if details is not None else 0
        return usage.prompt_tokens, usage.completion_tokens, reasoning


def _responses(url: str, key: str, model: str, stream: bool) -> Counts:
    with openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0) as client:
        if not stream:
            usage = client.responses.create(model=model, input="count these five words").usage
        else:
            events = client.responses.create(
                model=model, input="count these five words", stream=True
            )
            completed = [e.response for e in events if e.type == "response.completed"]
            usage = completed[-1].usage
        assert usage is not None
        reasoning = usage.output_tokens_details.reasoning_tokens
        return usage.input_tokens, usage.output_tokens, reasoning


def _gemini(url: str, key: str, model: str, stream: bool) -> Counts:
    options = types.HttpOptions(base_url=url)
    with genai.Client(api_key=key, http_options=options) as client:
        if not stream:
            usage = client.models.generate_content(
                model=model, contents="count these five words"
            ).usage_metadata
        else:
            chunks = client.models.generate_content_stream(
                model=model, contents="count these five words"
            )
            usage = [chunk.usage_metadata for chunk in chunks if chunk.usage_metadata][-1]
        assert usage is not None
        thoughts = usage.thoughts_token_count or 0
        return (
            usage.prompt_token_count or 0,
            (usage.candidates_token_count or 0) + thoughts,
            thoughts,
        )


def _anthropic(url: str, key: str, model: str, stream: bool) -> Counts:
    with anthropic.Anthropic(base_url=url, api_key=key, max_retries=0) as client:
        messages: Any = [{"role": "user", "content": "count these five words"}]
        if not stream:
            message = client.messages.create(model=model, max_tokens=512, messages=messages)
        else:
            with client.messages.stream(model=model, max_tokens=512, messages=messages) as events:
                message = events.get_final_message()
        usage = message.usage
        details = (usage.model_extra or {}).get("output_tokens_details") or {}
        return usage.input_tokens, usage.output_tokens, int(details.get("thinking_tokens", 0))


CLIENTS: dict[str, Callable[[str, str, str, bool], Counts]] = {
    "chat": _chat,
    "responses": _responses,
    "gemini": _gemini,
    "anthropic": _anthropic,
}
DEPLOYMENTS = {
    "via-chat": "up-chat",
    "via-responses": "up-responses",
    "via-gemini": "up-gemini",
    "via-anthropic": "up-anthropic",
}
CASES = [
    ("chat", "via-gemini", False),
    ("chat", "via-chat", True),  # same dialect: the stream is relayed byte for byte
    ("chat", "via-anthropic", True),
    ("responses", "via-responses", True),
    ("responses", "via-chat", False),
    ("gemini", "via-gemini", True),
    ("gemini", "via-responses", False),
    ("anthropic", "via-anthropic", True),  # usage split over message_start / message_delta
    ("anthropic", "via-anthropic", False),
    ("anthropic", "via-gemini", True),
]


@pytest.fixture(scope="module")
def gateway_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("serve-limits")
    with emulators_on_loopback() as (emulator_url, _), pytest.MonkeyPatch.context() as patch:
        patch.setenv("INTERLOCK_TEST_ADMIN_KEY", ADMIN)
        config = directory / "interlock.toml"
        config.write_text(_config(emulator_url, directory, len(CASES)))
        with serve(config, directory) as url:
            yield url


# ---------------------------------------------------------------- 429 in each dialect


def _refused(dialect: str, url: str) -> tuple[int, dict[str, Any], httpx.Headers]:
    key = f"sk-limited-{dialect}"
    call = CLIENTS[dialect]
    for _ in range(2):
        call(url, key, "via-chat", False)
    errors: dict[str, type[Exception]] = {
        "chat": openai.RateLimitError,
        "responses": openai.RateLimitError,
        "gemini": genai_errors.ClientError,
        "anthropic": anthropic.RateLimitError,
    }
    with pytest.raises(errors[dialect]) as caught:
        call(url, key, "via-chat", False)
    error: Any = caught.value
    response: httpx.Response = error.response
    return response.status_code, json.loads(response.content), response.headers


@pytest.mark.parametrize("dialect", LIMITED)
def test_a_429_in_each_dialect_with_retry_after(gateway_url: str, dialect: str) -> None:
    status, body, headers = _refused(dialect, gateway_url)
    assert status == 429
    assert 1 <= int(headers["retry-after"]) <= 30
    assert 0 < int(headers["retry-after-ms"]) <= 30_000
    assert headers["x-interlock-translation"] == "none"
    message = f"rate limit exceeded for tenant 'limited-{dialect}': 2 requests per minute"
    if dialect in ("chat", "responses"):
        error = body["error"]
        assert error["code"] == "rate_limit_exceeded"
        assert error["type"] in ("rate_limit_error", "rate_limit_exceeded")
    elif dialect == "gemini":
        error = body["error"]
        assert (error["code"], error["status"]) == (429, "RESOURCE_EXHAUSTED")
    else:
        assert body["type"] == "error"
        error = body["error"]
        assert error["type"] == "rate_limit_error"
    assert error["message"].startswith(message)
    metrics = httpx.get(f"{gateway_url}/metrics", headers={"authorization": "Bearer sk-tokens"})
    line = f'interlock_rate_limited_total{{tenant="limited-{dialect}",model="via-chat",limit="requests"}} 1'
    assert line in metrics.text.splitlines()


def test_a_tokens_per_minute_limit_refuses_once_an_answer_overdrew_it(gateway_url: str) -> None:
    """10 tokens a minute: the first answer (over 10 tokens) is let through, then refused."""
    statuses: list[int] = []
    for _ in range(3):
        try:
            _chat(gateway_url, "sk-tokens", "via-chat", False)
            statuses.append(200)
        except openai.RateLimitError as error:
            statuses.append(error.status_code)
            assert "10 tokens per minute" in error.message
    assert statuses[0] == 200
    assert 429 in statuses
    # another model is not under that limit
    assert _chat(gateway_url, "sk-tokens", "via-gemini", False)[0] > 0


# ---------------------------------------------------------------- usage


def _admin(url: str, query: str = "", key: str | None = ADMIN) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key is not None else {}
    return httpx.get(f"{url}/admin/usage{query}", headers=headers, timeout=30)


def _counted(url: str, query: str) -> httpx.Response:
    """The usage report once it lists the request: a stream is counted as its handler
    finishes, which may be just after the client has read the last chunk (generous
    deadline: a loaded machine)."""
    deadline = time.monotonic() + 30
    while True:
        answer = _admin(url, query)
        if answer.status_code != 200 or answer.json()["usage"] or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("index", "case"),
    list(enumerate(CASES)),
    ids=[f"{c[0]}-{c[1]}-{'stream' if c[2] else 'plain'}" for c in CASES],
)
def test_usage_counted_is_the_usage_the_client_was_told(
    gateway_url: str, index: int, case: tuple[str, str, bool]
) -> None:
    dialect, model, stream = case
    told = CLIENTS[dialect](gateway_url, f"sk-case-{index}", model, stream)
    assert told[0] > 0 and told[1] > 0
    answer = _counted(gateway_url, f"?tenant=case-{index}")
    assert answer.status_code == 200, answer.text
    (row,) = answer.json()["usage"]
    assert (row["tenant"], row["model"], row["deployment"]) == (
        f"case-{index}",
        model,
        DEPLOYMENTS[model],
    )
    assert row["requests"] == 1
    assert (row["input_tokens"], row["output_tokens"]) == told[:2]
    if dialect != "anthropic":  # Anthropic clients are not told reasoning tokens apart
        assert row["reasoning_tokens"] == told[2]
    assert row["reasoning_tokens"] == 4  # what the emulators report
    metrics = httpx.get(f"{gateway_url}/metrics", headers={"authorization": "Bearer sk-tokens"})
    labels = f'tenant="case-{index}",model="{model}",deployment="{DEPLOYMENTS[model]}"'
    assert f'interlock_usage_tokens_total{{{labels},kind="input"}} {told[0]}' in metrics.text
    assert f'interlock_usage_tokens_total{{{labels},kind="output"}} {told[1]}' in metrics.text


def test_a_chat_stream_that_did_not_ask_for_usage_is_counted_but_not_told(
    gateway_url: str,
) -> None:
    # Same dialect, relayed byte for byte: the gateway asks the upstream for the usage
    # chunk (the SDK's default request has no stream_options) and keeps it from the client.
    with openai.OpenAI(base_url=f"{gateway_url}/v1", api_key="sk-quiet", max_retries=0) as client:
        messages: Any = [{"role": "user", "content": "count these five words"}]
        stream = client.chat.completions.create(model="via-chat", messages=messages, stream=True)
        chunks = list(stream)
    assert chunks and all(chunk.choices for chunk in chunks)  # no empty-choices usage chunk
    assert all(chunk.usage is None for chunk in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks)
    answer = _counted(gateway_url, "?tenant=quiet")
    (row,) = answer.json()["usage"]
    assert row["requests"] == 1
    assert row["input_tokens"] > 0 and row["output_tokens"] > 0


def test_the_admin_endpoint_wants_the_admin_key(gateway_url: str) -> None:
    missing = _admin(gateway_url, key=None)
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "missing_admin_key"
    for wrong in ("sk-tokens", "not-a-key"):  # a client key is not an admin key
        answer = _admin(gateway_url, key=wrong)
        assert answer.status_code == 403
        assert answer.json()["error"] == {
            "message": "invalid admin key",
            "type": "permission_error",
            "param": None,
            "code": "invalid_admin_key",
        }
    by_header = httpx.get(f"{gateway_url}/admin/usage", headers={"x-api-key": ADMIN})
    assert by_header.status_code == 200
    unknown = _admin(gateway_url, "?tenant=x&colour=red")
    assert unknown.status_code == 400
    assert unknown.json()["error"]["param"] == "colour"
    assert _admin(gateway_url, "?tenant=nobody").json() == {
        "usage": [],
        "totals": {
            "requests": 0,
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_tokens": 0,
        },
    }


async def test_without_an_admin_key_configured_the_admin_api_is_refused() -> None:
    from interlock.gateway.app import build_gateway, create_app
    from interlock.gateway.config import load_config
    from interlock.gateway.stores import open_store

    gateway = build_gateway(load_config(None, environ={}), store=open_store("memory://"))
    app = create_app(gateway)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        answer = await client.get("/admin/usage", headers={"authorization": "Bearer anything"})
        assert answer.status_code == 403
        assert answer.json()["error"]["code"] == "admin_disabled"
        assert "[admin] key_env" in answer.json()["error"]["message"]
    await gateway.close()


async def test_an_unreachable_redis_for_limits_is_a_503_in_the_dialect_with_nothing_sent() -> None:
    from interlock.gateway.app import build_gateway, create_app
    from interlock.gateway.config import load_config
    from interlock.gateway.config_ops import RateLimit
    from interlock.gateway.rate_limits import RateLimiter, RedisBuckets
    from interlock.gateway.stores import open_store
    from tests.gateway.serving import free_port

    gateway = build_gateway(load_config(None, environ={}), store=open_store("memory://"))
    nowhere = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    limiter = RateLimiter([RateLimit(requests_per_minute=5)], RedisBuckets(nowhere))
    gateway.proxy.operations.limiter = limiter
    transport = httpx.ASGITransport(app=create_app(gateway))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        answer = await client.post(
            "/v1/messages",
            headers={"anthropic-version": "2023-06-01"},
            json={
                "model": "demo-anthropic",
                "max_tokens": 64,
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
    await gateway.close()
    assert answer.status_code == 503
    assert answer.headers["x-interlock-translation"] == "none"
    assert answer.headers["retry-after"] == "1"
    body = answer.json()
    assert body["type"] == "error"
    assert "rate limits cannot be checked" in body["error"]["message"]
    emulator: Any = gateway.emulators["emulated-anthropic"]
    assert len(emulator.received) == 0  # nothing reached the upstream
