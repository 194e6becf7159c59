"""Which vendor issued a client's opaque reasoning (Responses encrypted content, Anthropic
thinking signatures): the index (on memory, a SQLite file and a real redis-server alike),
the blobs read off answers and streams, and the relabelling of a request's blobs."""

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
    StreamBlobs,
    answer_blobs,
    event_blobs,
    relabelled,
    resolve,
    unknown_blobs,
    vendor_dialects,
    vendors_to_tell_apart,
)
from interlock.gateway.stores import Store, open_store
from interlock.gateway.stores._expiring import TTL_SECONDS
from interlock.transcript import (
    UNKNOWN_ISSUER,
    ReasoningPart,
    ReplayPolicy,
    Request,
    response_to_updates,
)


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


# ---------------------------------------------------------------- Anthropic-compatible vendors

THOUGHT = {"type": "thinking", "thinking": "t", "signature": "DS-1"}
REDACTED = {"type": "redacted_thinking", "data": "DR-1"}


def test_anthropic_blobs_are_read_off_answers_and_stream_events() -> None:
    body = {"id": "msg_1", "content": [THOUGHT, REDACTED, {"type": "text", "text": "a"}]}
    assert answer_blobs(json.dumps(body).encode(), "anthropic") == ["DS-1", "DR-1"]
    unsigned = {"content": [{"type": "thinking", "thinking": "t", "signature": ""}]}
    assert answer_blobs(json.dumps(unsigned).encode(), "anthropic") == []
    assert answer_blobs(b'{"content": [{"signature": broken', "anthropic") == []
    start = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {**THOUGHT, "signature": ""},
    }
    pieces = [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": s},
        }
        for s in ("DS-", "2")
    ]
    stop = {"type": "content_block_stop", "index": 0}
    whole = {"type": "content_block_start", "index": 1, "content_block": REDACTED}
    events = [SseEvent(data=json.dumps(e)) for e in (start, *pieces, stop, whole)]
    reader = StreamBlobs("anthropic")
    assert reader.events(events[:2]) == [], "a signature is whole only at its block's end"
    assert reader.events(events[2:]) == ["DS-2", "DR-1"]


async def test_anthropic_signatures_recorded_off_a_stream_relabel_a_clients_request(
    store: Store,
) -> None:
    """DeepSeek's signatures, read off its stream as the gateway relays it and recorded,
    are recognised in the client's next request: labelled DeepSeek's for an Anthropic
    target (whose encoder drops them), left unknown for DeepSeek itself."""
    index = ProvenanceIndex(store.backend)
    answer = {"id": "msg_1", "content": [THOUGHT, REDACTED], "stop_reason": "end_turn"}
    upstream = wire_codec("anthropic", issuer="deepseek")
    encoder = wire_codec("anthropic").stream_encoder()
    updates = response_to_updates(upstream.decode_response(answer))
    events = [event for update in updates for event in encoder.encode(update)]
    await index.record("team-a", "deepseek", StreamBlobs("anthropic").events(events))
    ingress = wire_codec("anthropic", issuer=UNKNOWN_ISSUER)
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [THOUGHT, REDACTED, {"type": "text", "text": "a"}]},
        {"role": "user", "content": "again"},
    ]
    request = ingress.decode_request({"model": "m", "max_tokens": 9, "messages": history})
    assert unknown_blobs(request) == ["DS-1", "DR-1"]
    assert await resolve(index, "team-a", request, "deepseek") is None, "its own: as sent"
    assert await resolve(index, "team-b", request, "anthropic") is None, "another tenant's"
    changed = await resolve(index, "team-a", request, "anthropic")
    assert changed is not None and unknown_blobs(changed) == []
    encoded = wire_codec("anthropic").encode_request(changed, ReplayPolicy())
    assert "DS-1" not in json.dumps(encoded.payload) and "DR-1" not in json.dumps(encoded.payload)
    assert [w.code for w in encoded.warnings] == ["reasoning_dropped", "reasoning_dropped"]


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        (["https://api.anthropic.com/v1"], set()),
        (["https://api.anthropic.com/v1", "emulator://anthropic"], set()),
        (["https://api.anthropic.com/v1", "https://api.deepseek.com/anthropic"], {"anthropic"}),
        (["https://api.moonshot.ai/anthropic", "https://api.x.ai/v1"], set()),
    ],
)
def test_anthropic_signatures_are_told_apart_only_with_two_anthropic_vendors(
    urls: list[str], expected: set[str]
) -> None:
    text = "".join(
        f"[[upstreams]]\nname = 'u{n}'\nbase_url = '{url}'\n"
        f"protocol = '{'openai-responses' if 'x.ai' in url else 'anthropic'}'\n"
        for n, url in enumerate(urls)
    )
    assert vendor_dialects(parse_config(text, {})) == expected
