"""Large bodies are parsed and translated on a worker thread (``gateway/offload.py``) with
exactly the results of doing it on the event loop."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st
from openai import AsyncOpenAI

from interlock.gateway.model_field import COMPACT
from interlock.gateway.offload import OFFLOAD_BYTES, encode_in_pieces, off_loop
from tests.gateway.helpers import CONFIG, Recorder, chat_completion, client, gateway

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=40,
)
LARGE = CONFIG.replace("max_body_bytes = 4096", "max_body_bytes = 8388608")


@given(JSON)
def test_encoding_in_pieces_writes_exactly_the_compact_text(value: Any) -> None:
    assert encode_in_pieces(value) == COMPACT.encode(value)


async def test_large_work_runs_on_another_thread_and_small_work_in_place() -> None:
    here = threading.get_ident()
    assert await off_loop(OFFLOAD_BYTES - 1, OFFLOAD_BYTES, threading.get_ident) == here
    assert await off_loop(OFFLOAD_BYTES, OFFLOAD_BYTES, threading.get_ident) != here
    assert await off_loop(10**9, 0, threading.get_ident) == here  # 0: never


def _gemini_answer(_: httpx.Request) -> httpx.Response:
    content = {"role": "model", "parts": [{"text": "noted"}]}
    return httpx.Response(200, json={"candidates": [{"content": content, "finishReason": "STOP"}]})


def _history(turns: int) -> list[Any]:
    messages: list[Any] = []
    for turn in range(turns):
        messages.append({"role": "user", "content": f"question {turn} " + "words " * 200})
        messages.append({"role": "assistant", "content": f"answer {turn} — ünïcode ✓"})
    return messages


async def _conversation(offload_bytes: int) -> tuple[list[bytes], list[str], int]:
    """Two requests of one long conversation to a Chat and to a Gemini upstream."""
    config = LARGE.replace("[server]", f"[server]\noffload_bytes = {offload_bytes}")
    chat = Recorder(lambda _: httpx.Response(200, json=chat_completion("noted")))
    gemini = Recorder(_gemini_answer)
    built = gateway({"chat": chat, "gemini": gemini}, config)
    answers: list[str] = []
    async with client(built) as http:
        sdk = AsyncOpenAI(base_url="http://localhost/v1", api_key="unused", http_client=http)
        for model in ("to-chat", "to-gemini"):
            history = _history(300)  # about 380 KB: above the default threshold
            for extra in (0, 1, 2):  # the third reuses what the second decoded
                messages = history + _history(extra)
                completion = await sdk.chat.completions.create(model=model, messages=messages)
                answers.append(completion.model_dump_json(exclude={"created", "id"}))
    bodies = [request.content for request in chat.requests + gemini.requests]
    return bodies, answers, built.proxy.history.reused


async def test_offloaded_translation_sends_and_answers_exactly_as_inline() -> None:
    offloaded = await _conversation(OFFLOAD_BYTES)
    inline = await _conversation(0)
    assert offloaded == inline
    bodies, _, reused = offloaded
    assert len(bodies) == 6 and min(map(len, bodies)) > OFFLOAD_BYTES
    assert reused >= 1, "the history cache served a continuation from the worker thread"
    assert json.loads(bodies[3])["contents"][1]["parts"] == [{"text": "answer 0 — ünïcode ✓"}]


async def test_a_large_bad_body_is_still_a_400_in_shape() -> None:
    built = gateway({}, LARGE)
    body = b'{"model": "to-gemini", "messages": [' + b'{"a": 1},' * 40_000 + b'{"a": 1, "a": 2}]}'
    async with client(built) as http:
        answer = await http.post("/v1/chat/completions", content=body)
        concurrent = await asyncio.gather(*(http.get("/healthz") for _ in range(3)))
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_json"
    assert all(health.status_code == 200 for health in concurrent)
