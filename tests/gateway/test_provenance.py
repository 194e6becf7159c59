"""Which vendor issued a client's encrypted reasoning: the index (on memory, a SQLite file
and a real redis-server alike), the blobs read off answers and streams, and the relabelling
of a request's blobs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from interlock.codecs._sse import SseEvent
from interlock.codecs.registry import wire_codec
from interlock.gateway.config import parse_config
from interlock.gateway.provenance import (
    ProvenanceIndex,
    answer_blobs,
    event_blobs,
    relabelled,
    unknown_blobs,
    vendors_to_tell_apart,
)
from interlock.gateway.stores import Store, open_store
from interlock.gateway.stores._expiring import TTL_SECONDS
from interlock.transcript import UNKNOWN_ISSUER, ReasoningPart, ReplayPolicy, Request


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "memory":
        url = "memory://"
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'state.db'}"
    else:
        base: str = request.getfixturevalue("redis_url")
        url = base[: base.rindex("/")] + "/15"
    opened = open_store(url)
    for key, _ in await opened.backend.scan("provenance/"):
        await opened.backend.delete(key)
    try:
        yield opened
    finally:
        await opened.close()


async def test_blobs_are_recorded_per_tenant_and_expire(store: Store) -> None:
    assert TTL_SECONDS == 30 * 24 * 3600  # the Responses API's retention, as documented
    clock = Clock()
    index = ProvenanceIndex(store.backend, ttl_seconds=60, clock=clock)
    await index.record("team-a", "xai", ["blob-1", "blob-2"])
    await index.record("team-a", "openai", ["blob-3"])
    found = await index.find("team-a", ["blob-1", "blob-3", "blob-9"])
    assert found == {"blob-1": "xai", "blob-3": "openai"}
    assert await index.find("team-b", ["blob-1"]) == {}, "another tenant's record is not read"
    clock.now += 61
    assert await index.find("team-a", ["blob-1"]) == {}
    assert await index.sweep("team-a") == 3
    assert await store.backend.scan("provenance/") == []


async def test_the_index_stays_bounded_by_sweeping_as_it_writes(store: Store) -> None:
    clock = Clock()
    index = ProvenanceIndex(store.backend, ttl_seconds=60, sweep_every=3, clock=clock)
    await index.record("team-a", "xai", ["old-1", "old-2"])
    clock.now += 61
    await index.record("team-a", "xai", ["new-1"])  # the third write sweeps
    keys = [key for key, _ in await store.backend.scan("provenance/")]
    assert len(keys) == 1 and await index.find("team-a", ["new-1"]) == {"new-1": "xai"}


async def test_an_unreadable_entry_counts_as_unrecorded(store: Store) -> None:
    index = ProvenanceIndex(store.backend)
    await index.record("team-a", "xai", ["blob"])
    (key, _), *_ = await store.backend.scan("provenance/")
    await store.backend.set_many({key: "not json"})
    assert await index.find("team-a", ["blob"]) == {}


def test_blobs_are_read_off_answers_and_stream_events() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "B1"}
    body = {"id": "resp_1", "output": [item, {"type": "message", "content": []}]}
    assert answer_blobs(json.dumps(body).encode()) == ["B1"]
    assert answer_blobs(b'{"output": []}') == []
    assert answer_blobs(b'{"encrypted_content": broken') == []
    done = {"type": "response.output_item.done", "output_index": 0, "item": item}
    completed = {"type": "response.completed", "response": body}
    delta = {"type": "response.output_text.delta", "delta": "encrypted_content"}
    events = [SseEvent(data=json.dumps(event)) for event in (done, delta, completed)]
    assert event_blobs(events) == ["B1", "B1"]


def test_only_blobs_recorded_as_another_vendors_are_relabelled() -> None:
    ingress = wire_codec("openai-responses", issuer=UNKNOWN_ISSUER)
    reasoning = {"type": "reasoning", "id": "rs_{n}", "summary": [], "encrypted_content": "{b}"}

    def step(number: int, blob: str) -> list[object]:
        first = json.loads(json.dumps(reasoning).replace("{n}", str(number)).replace("{b}", blob))
        call = {"type": "function_call", "call_id": f"c{number}", "name": "f", "arguments": "{}"}
        return [
            first,
            call,
            {"type": "function_call_output", "call_id": f"c{number}", "output": "x"},
        ]

    question = {"role": "user", "content": "hi"}
    items = [question, *step(1, "X1"), question, *step(2, "O1")]  # X1's turn is finished
    request = ingress.decode_request({"model": "m", "input": items, "store": False})
    assert unknown_blobs(request) == ["X1", "O1"]
    assert relabelled(request, {"O1": "openai"}, "openai") is None, "its own: nothing changes"
    changed = relabelled(request, {"X1": "xai", "O1": "openai"}, "openai")
    assert changed is not None and unknown_blobs(changed) == ["O1"]
    labels = [p.opaque.provider for p in _reasoning(changed) if p.opaque is not None]
    assert labels == ["xai", UNKNOWN_ISSUER]
    # The OpenAI encoder drops xAI's step (with its ids), keeps the unknown one as sent.
    encoded = wire_codec("openai-responses").encode_request(changed, ReplayPolicy())
    sent = json.dumps(encoded.payload)
    assert "X1" not in sent and "rs_1" not in sent and "O1" in sent and "rs_2" in sent
    assert {w.code for w in encoded.warnings} == {"opaque_dropped", "reasoning_dropped"}


def _reasoning(request: Request) -> list[ReasoningPart]:
    return [p for m in request.messages for p in m.parts if isinstance(p, ReasoningPart)]


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        (["https://api.openai.com/v1"], False),
        (["https://api.openai.com/v1", "https://eu.api.openai.com/v1"], False),
        (["https://api.openai.com/v1", "https://api.x.ai/v1"], True),
        (["emulator://openai-responses", "https://res.openai.azure.com/openai/v1"], True),
    ],
)
def test_blobs_are_recorded_only_with_two_vendors_to_tell_apart(
    urls: list[str], expected: bool
) -> None:
    text = "".join(
        f"[[upstreams]]\nname = 'u{n}'\nprotocol = 'openai-responses'\nbase_url = '{url}'\n"
        for n, url in enumerate(urls)
    )
    assert vendors_to_tell_apart(parse_config(text, {})) is expected
