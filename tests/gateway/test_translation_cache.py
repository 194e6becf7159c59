"""A translated history prefix is reused across dialects only when the full path would
send the very same body: same prefix text, same vault entries, new messages that encode
on their own; every other request takes the full path."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import pytest

from interlock.gateway.history_cache import HistoryCache
from interlock.gateway.model_field import compact_json
from interlock.gateway.stores import Store
from interlock.gateway.translation_cache import Translation, kept, spliced_body
from interlock.gateway.vault import Lookup, reasoning_key
from interlock.transcript import (
    OPENAI_ENCRYPTED_CONTENT,
    Encoded,
    JsonObject,
    JsonValue,
    Opaque,
    ReasoningPart,
    ReplayPolicy,
    Request,
    ToolCallPart,
    TranslationWarning,
    to_json,
)
from tests.gateway.helpers import Recorder, client
from tests.gateway.test_history_cache import Conversation, built, growing, responses_answer

Hook = Callable[[int, Store], Awaitable[None]]
NOTHING = Lookup((), (), (), {})


async def replay(
    cache: HistoryCache, turns: Conversation, hook: Hook | None = None
) -> tuple[list[object], list[bytes]]:
    """Every body in order (``hook`` runs before each); answers and upstream bodies."""
    upstream = Recorder(responses_answer)
    gateway = built(cache, upstream)
    answers: list[object] = []
    async with client(gateway) as http:
        for number, (content, path) in enumerate(turns):
            if hook is not None:
                await hook(number, gateway.store)
            answer = await http.post(path, content=content)
            answers.append(
                (answer.status_code, answer.headers.get("x-interlock-translation"), answer.json())
            )
    return answers, [request.content for request in upstream.requests]


async def same_with_and_without(turns: Conversation, hook: Hook | None = None) -> HistoryCache:
    cache = HistoryCache(min_bytes=0)
    assert await replay(cache, turns, hook) == await replay(
        HistoryCache(min_bytes=10**9), turns, hook
    )
    return cache


async def test_a_growing_conversation_across_dialects_reuses_its_translation() -> None:
    cache = await same_with_and_without(growing("to-responses", 12))
    # The first request keeps no messages; the second is translated whole and gives the
    # first one's prefix its translation; every later one is spliced.
    assert cache.translations_reused == 10


@pytest.mark.parametrize("offload_bytes", [0, 1])
async def test_spliced_bodies_are_the_whole_values_compact_encoding(offload_bytes: int) -> None:
    """The kept prefix is written as bytes (never encoded again): each upstream body is
    exactly ``compact_json`` of the value it holds, with and without the cache, also
    where every body counts as large (written item by item, on a worker thread)."""
    turns = growing("to-responses", 8)

    async def bodies(cache: HistoryCache) -> list[bytes]:
        upstream = Recorder(responses_answer)
        gateway = built(cache, upstream)
        gateway.proxy.offload_bytes = offload_bytes
        async with client(gateway) as http:
            for content, path in turns:
                assert (await http.post(path, content=content)).status_code == 200
        return [request.content for request in upstream.requests]

    cache = HistoryCache(min_bytes=0)
    written = await bodies(cache)
    assert written == await bodies(HistoryCache(min_bytes=10**9))
    assert cache.translations_reused == 6
    assert all(compact_json(json.loads(body)) == body for body in written)


def _edit_first(turn: int, messages: list[JsonObject]) -> None:
    if turn == 6:  # one character of an early message changed: the prefix text misses
        messages[1]["content"] = "gp"


async def test_a_changed_character_anywhere_misses() -> None:
    cache = await same_with_and_without(growing("to-responses", 10, _edit_first))
    assert cache.translations_reused == 10 - 2 - 2  # turn 6 decoded whole, turn 7 too


def _key(call_id: str) -> str:
    """The vault key of the step of ``call_id`` (as ``step`` writes it)."""
    return reasoning_key((ToolCallPart(call_id=call_id, name="f", arguments="{}"),))


def _reasoning(call_id: str) -> dict[str, JsonValue]:
    opaque = Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="enc-" + call_id)
    return {_key(call_id): [to_json(ReasoningPart(reasoning_kind="encrypted", opaque=opaque))]}


async def vault_entry_for_call_2(number: int, store: Store) -> None:
    if number == 6:  # an entry appears for a call the known prefix holds
        await store.vault_put("default", "responses", _reasoning("call_2"))
    if number == 8:  # and changes
        await store.vault_put("default", "responses", {_key("call_2"): []})


async def test_a_vault_entry_for_the_prefix_that_appeared_or_changed_misses() -> None:
    turns = growing("to-responses", 10)
    cache = await same_with_and_without(turns, vault_entry_for_call_2)
    upstream = Recorder(responses_answer)
    gateway = built(HistoryCache(min_bytes=0), upstream)
    async with client(gateway) as http:
        for number, (content, path) in enumerate(turns):
            await vault_entry_for_call_2(number, gateway.store)
            await http.post(path, content=content)
    assert b"enc-call_2" not in upstream.requests[5].content
    assert b"enc-call_2" in upstream.requests[6].content
    assert b"enc-call_2" in upstream.requests[7].content
    assert b"enc-call_2" not in upstream.requests[8].content
    assert cache.translations_reused == 10 - 2 - 2


def _user_turn(turn: int, messages: list[JsonObject]) -> None:
    if turn in (4, 7):  # a new user message: encoded with the whole history
        messages.append({"role": "user", "content": f"and now {turn}"})


def _named(turn: int, messages: list[JsonObject]) -> None:
    if turn == 5:  # a participant name: Responses warns at its absolute position
        messages[-2]["name"] = "agent_b"


@pytest.mark.parametrize("edit", [_user_turn, _named])
async def test_new_messages_that_do_not_encode_alone_take_the_full_path(
    edit: Callable[[int, list[JsonObject]], None],
) -> None:
    cache = await same_with_and_without(growing("to-responses", 10, edit))
    assert 0 < cache.translations_reused < 8


async def test_gemini_histories_sent_with_dummy_signatures_are_never_spliced() -> None:
    """Degrading toward Gemini 3 without signatures warns per current-turn step (warnings
    name absolute positions): those translations are not kept."""
    cache = await same_with_and_without(growing("to-gemini", 6))
    assert cache.translations_reused == 0 and cache.reused == 4


def test_an_encoding_with_a_warning_or_instructions_is_neither_kept_nor_spliced() -> None:
    key = ("responses", ReplayPolicy(), Request(model="m", messages=()))
    plain = Encoded(payload={"model": "m", "input": [{"n": 2}], "store": False})
    known = kept(key, "openai-responses", Encoded(payload={"input": [{"n": 1}]}), (), NOTHING, ())
    assert known == Translation(key, (), NOTHING, memoryview(b'{"n":1}'), ())
    assert known is not None
    whole = spliced_body(known, "openai-responses", plain)
    assert whole is not None
    assert whole.body == b'{"model":"m","input":[{"n":1},{"n":2}],"store":false}'
    assert whole.items == b'{"n":1},{"n":2}'
    warned = Encoded(
        payload=plain.payload, warnings=(TranslationWarning(code="c", location="l", message="m"),)
    )
    instructed = Encoded(payload={**plain.payload, "instructions": "be brief"})
    for encoded in (warned, instructed):
        assert kept(key, "openai-responses", encoded, (), NOTHING, ()) is None
        assert spliced_body(known, "openai-responses", encoded) is None


async def _conversation(cache: HistoryCache, turns: Conversation) -> tuple[list[bytes], str]:
    upstream = Recorder(responses_answer)
    gateway = built(cache, upstream)
    async with client(gateway) as http:
        for content, path in turns:
            assert (await http.post(path, content=content)).status_code == 200
        metrics = (await http.get("/metrics")).text
    return [request.content for request in upstream.requests], metrics


async def test_kept_translations_count_against_the_byte_bound_and_show_in_metrics() -> None:
    turns = growing("to-responses", 6)
    cache = HistoryCache(min_bytes=0)
    sent, metrics = await _conversation(cache, turns)
    # Each entry holds its client body and what its translation is a view into: request 1
    # was translated whole (its items, written apart from its body), request 0's is cut
    # from those, the spliced ones' are their own upstream bodies.
    whole_items = len(compact_json(json.loads(sent[1])["input"])) - 2
    held = sum(len(content) for content, _ in turns) + 2 * whole_items + sum(map(len, sent[2:]))
    assert cache.held_bytes == held
    assert f"\ninterlock_history_cache_bytes {held}\n" in metrics
    assert "\ninterlock_history_cache_entries 6\n" in metrics
    assert '\ninterlock_history_reused_total{work="translation"} 4\n' in metrics
    assert '\ninterlock_history_reused_total{work="decode"} 4\n' in metrics
    bounded = HistoryCache(min_bytes=0, max_bytes=held - 1)
    await _conversation(bounded, turns)
    assert 0 < bounded.held_bytes <= held - 1 and len(bounded) < 6


async def test_another_tool_list_misses() -> None:
    """A translation is found only for the request it was made for apart from its
    messages (a model switch on one upstream: ``test_splice_equivalence.py``): a changed
    tool list translates the whole history again."""
    turns = growing("to-responses", 10)
    tools = [{"type": "function", "function": {"name": name}} for name in ("f", "g")]
    for number in range(5, 10):  # from turn 5 on, the client offers two tools
        payload = json.loads(turns[number][0])
        payload["tools"] = tools
        turns[number] = (json.dumps(payload).encode(), turns[number][1])
    cache = await same_with_and_without(turns)
    assert cache.translations_reused == 10 - 2 - 1  # turn 5 is translated whole
