"""Usage accounting: what each dialect's usage counts as, and totals kept exactly in real
SQLite files and a real redis-server when several processes' ledgers flush at once."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from interlock.codecs._sse import SseEvent
from interlock.codecs.registry import DialectName
from interlock.gateway.dialects import dialect
from interlock.gateway.operations import StreamUsage, answer_usage
from interlock.gateway.stores import KeyValueBackend, SqliteBackend
from interlock.gateway.stores.redis import RedisBackend
from interlock.gateway.usage import COUNTS, UsageLedger, counts_of
from interlock.transcript import Usage

ANSWERS: dict[DialectName, dict[str, object]] = {
    # cached input: OpenAI's prompt_tokens_details / input_tokens_details, Gemini's
    # cachedContentTokenCount, Anthropic's cache reads (its input_tokens are uncached only)
    "openai-chat": {
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 30,
            "total_tokens": 130,
            "prompt_tokens_details": {"cached_tokens": 60},
            "completion_tokens_details": {"reasoning_tokens": 20},
        }
    },
    "openai-responses": {
        "usage": {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 60},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 20},
            "total_tokens": 130,
        }
    },
    "gemini": {
        "usageMetadata": {
            "promptTokenCount": 100,
            "cachedContentTokenCount": 60,
            "candidatesTokenCount": 10,
            "thoughtsTokenCount": 20,
            "totalTokenCount": 130,
        }
    },
    "anthropic": {
        "usage": {
            "input_tokens": 30,
            "cache_creation_input_tokens": 10,
            "cache_read_input_tokens": 60,
            "output_tokens": 30,
            "output_tokens_details": {"thinking_tokens": 20},
        }
    },
}


@pytest.mark.parametrize("name", list(ANSWERS))
def test_every_dialect_counts_input_cached_output_and_reasoning_alike(name: DialectName) -> None:
    usage = answer_usage(dialect(name), json.dumps(ANSWERS[name]).encode())
    assert counts_of(usage) == (1, 100, 60, 30, 20)


def test_an_answer_without_usage_is_one_request_and_no_tokens() -> None:
    chat = dialect("openai-chat")
    for body in (
        b"{}",
        b"not json",
        b"[1]",
        b'{"usage": "x"}',
        b'{"usage": {"prompt_tokens": "x"}}',
    ):
        assert answer_usage(chat, body) is None
    assert counts_of(None) == (1, 0, 0, 0, 0)


def test_a_relayed_anthropic_stream_merges_message_start_and_message_delta() -> None:
    usage = StreamUsage(dialect("anthropic"))
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 7, "output_tokens": 1}}}
    delta = {"type": "message_delta", "usage": {"output_tokens": 42}}
    text = {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "usage"}}
    usage.events([SseEvent(json.dumps(event)) for event in (start, text, delta)])
    assert counts_of(usage.result()) == (1, 7, 0, 42, 0)


def test_a_stream_without_usage_reports_none() -> None:
    usage = StreamUsage(dialect("openai-chat"))
    usage.events([SseEvent('{"choices": []}'), SseEvent("[DONE]")])
    assert usage.result() is None


async def _flush_concurrently(backends: list[KeyValueBackend]) -> list[UsageLedger]:
    ledgers = [UsageLedger(backend) for backend in backends]
    for round_ in range(20):
        for index, ledger in enumerate(ledgers):
            usage = Usage(input_tokens=10 + index, output_tokens=5, reasoning_tokens=round_ % 2)
            ledger.record("team-a", "fast", "up-1", usage)
            ledger.record("team-b", "fast", "up-2", None)
        await asyncio.gather(*(ledger.flush() for ledger in ledgers))
    return ledgers


def _expected(processes: int) -> dict[str, int]:
    return {
        "requests": 20 * processes,
        "input_tokens": sum(20 * (10 + index) for index in range(processes)),
        "cached_input_tokens": 0,
        "output_tokens": 100 * processes,
        "reasoning_tokens": 10 * processes,
    }


async def test_ledgers_on_one_sqlite_file_lose_no_count(tmp_path: Path) -> None:
    backends: list[KeyValueBackend] = [SqliteBackend(tmp_path / "usage.db") for _ in range(3)]
    try:
        ledgers = await _flush_concurrently(backends)
        rows = {row.tenant: row for row in await ledgers[0].rows()}
        assert dict(zip(COUNTS, rows["team-a"].counts, strict=True)) == _expected(3)
        assert rows["team-b"].counts == (60, 0, 0, 0, 0)
        assert (rows["team-a"].model, rows["team-a"].deployment) == ("fast", "up-1")
        assert [row.tenant for row in await ledgers[1].rows(tenant="team-b")] == ["team-b"]
        assert await ledgers[2].rows(model="slow") == []
    finally:
        for backend in backends:
            await backend.close()


async def test_ledgers_on_one_redis_lose_no_count(redis_url: str) -> None:
    prefix = f"usage-test-{uuid.uuid4().hex}:"
    backends: list[KeyValueBackend] = [RedisBackend(redis_url, prefix=prefix) for _ in range(3)]
    try:
        ledgers = await _flush_concurrently(backends)
        (row,) = await ledgers[1].rows(tenant="team-a")
        assert dict(zip(COUNTS, row.counts, strict=True)) == _expected(3)
    finally:
        for backend in backends:
            await backend.close()


async def test_a_stopped_ledger_has_flushed_everything(tmp_path: Path) -> None:
    backend = SqliteBackend(tmp_path / "usage.db")
    ledger = UsageLedger(backend, flush_seconds=3600)
    await ledger.start()
    ledger.record("t", "m", "d", Usage(input_tokens=3, output_tokens=2))
    await ledger.stop()
    reader = UsageLedger(backend)
    (row,) = await reader.rows()
    assert row.counts == (1, 3, 0, 2, 0)
    await backend.close()


def test_text_quoting_a_usage_member_is_not_taken_for_it() -> None:
    answer = {
        "choices": [{"message": {"content": 'say "usage": {"prompt_tokens": 999}'}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        "note": 'trailing "usage": {"prompt_tokens": 998}',
    }
    usage = answer_usage(dialect("openai-chat"), json.dumps(answer).encode())
    assert counts_of(usage) == (1, 7, 0, 3, 0)


def test_an_agui_run_counts_each_model_call_under_the_agents_model() -> None:
    """Two model calls (a tool round trip): two requests, the tokens RUN_FINISHED reported."""
    import httpx

    from interlock.gateway._default_config import DEFAULT_CONFIG_TOML
    from interlock.gateway.app import build_gateway, create_app
    from interlock.gateway.config import parse_config
    from interlock.gateway.stores import open_store
    from tests.gateway.agui.harness import new_id, run_input, sse_events, user
    from tests.gateway.serving import app_on_loopback

    config = DEFAULT_CONFIG_TOML.replace("[server]\n", "[server]\naccess_log = false\n", 1)
    config += '\n[admin]\nkey_env = "ADMIN"\n'
    gateway = build_gateway(parse_config(config, {"ADMIN": "a"}), store=open_store("memory://"))
    with app_on_loopback(create_app(gateway)) as url:
        local = url.replace("127.0.0.1", "localhost")
        body = run_input(new_id("t"), [user('call get_weather with {"city": "Paris"}')])
        answer = httpx.post(f"{local}/agui/demo", json=body, timeout=60)
        finished = next(e for e in sse_events(answer.text) if e["type"] == "RUN_FINISHED")
        (told,) = finished["usage"]
        usage = httpx.get(f"{local}/admin/usage", headers={"authorization": "Bearer a"})
    (row,) = usage.json()["usage"]
    assert (row["tenant"], row["model"], row["deployment"]) == (
        "default",
        "demo-gemini",
        "emulated-gemini",
    )
    assert row["requests"] == 2
    assert (row["input_tokens"], row["output_tokens"]) == (
        told["inputTokens"],
        told["outputTokens"],
    )
    assert row["reasoning_tokens"] == told["reasoningTokens"] > 0
