"""History prefixes of Responses clients: a continuation's new items add exactly the
messages a whole decode gives, and the proxy answers and forwards what it would without
the cache (same dialect and across), including every refusal."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest

from interlock.gateway.dialects import dialect
from interlock.gateway.history_cache import Continuation, Entry, HistoryCache
from interlock.gateway.history_ingress import lead_count, new_messages, prefix_count
from interlock.transcript import JsonObject, JsonValue
from tests.gateway import test_translation_cache as translation
from tests.gateway.test_history_cache import replay

RESPONSES = dialect("openai-responses")
PATH = "/v1/responses"


def call_step(index: int) -> list[JsonObject]:
    """A model step calling a tool, and the tool's output."""
    return [
        {"type": "function_call", "call_id": f"call_{index}", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": f"call_{index}", "output": f"result {index}"},
    ]


def responses_body(items: list[JsonObject], model: str, **members: JsonValue) -> bytes:
    """A Responses request the way the openai SDK orders it (``input`` first)."""
    tools = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
    payload: JsonObject = {"input": items, "model": model, **members, "tools": tools}
    payload.setdefault("instructions", "be brief " * 20)
    return json.dumps(payload).encode()


def growing(
    model: str, turns: int, edit: Callable[[int, list[JsonObject]], None] | None = None
) -> list[tuple[bytes, str]]:
    items: list[JsonObject] = [{"role": "user", "content": "go " * 30}]
    conversation: list[tuple[bytes, str]] = []
    for turn in range(turns):
        items.extend(call_step(turn))
        if edit is not None:
            edit(turn, items)
        conversation.append((responses_body(items, model), PATH))
    return conversation


async def same_as_without_cache(conversation: list[tuple[bytes, str]]) -> HistoryCache:
    cache = HistoryCache(min_bytes=0)
    assert await replay(cache, conversation) == await replay(
        HistoryCache(min_bytes=10**9), conversation
    )
    return cache


@pytest.mark.parametrize("model", ["to-responses", "to-chat", "to-gemini"])
async def test_a_growing_responses_conversation_is_forwarded_exactly_as_without_cache(
    model: str,
) -> None:
    cache = await same_as_without_cache(growing(model, 10))
    assert cache.reused == 8  # the first request keeps no messages; the second is decoded whole
    assert cache.checks_reused == (8 if model == "to-responses" else 0)


def _joins_the_last_message(turn: int, items: list[JsonObject]) -> None:
    if turn == 3:  # the prefix ends with model output; the next call joins that message
        items.append({"role": "assistant", "content": "calling more"})
    if turn == 5:
        items.append({"type": "reasoning", "summary": [{"type": "summary_text", "text": "t"}]})


def _broken(turn: int, items: list[JsonObject]) -> None:
    if turn == 4:  # a second output for a call of the known prefix (allowed)
        items.append({"type": "function_call_output", "call_id": "call_1", "output": "late"})
    if turn == 6:  # a call nobody answers
        items.append(call_step(99)[0])
    if turn == 8:  # a new user turn, then a call id the prefix used
        items.extend([{"role": "user", "content": "again"}, *call_step(2)])


@pytest.mark.parametrize("model", ["to-responses", "to-chat"])
@pytest.mark.parametrize("edit", [_joins_the_last_message, _broken])
async def test_continuations_that_depend_on_the_prefix_take_the_full_path(
    model: str, edit: Callable[[int, list[JsonObject]], None]
) -> None:
    await same_as_without_cache(growing(model, 10, edit))


async def test_the_full_path_refusals_are_answered_with_their_own_locations() -> None:
    conversation = growing("to-responses", 10, _broken)
    answers, _ = await replay(HistoryCache(min_bytes=0), conversation)
    statuses = [answer[0] for answer in answers]  # type: ignore[index]
    assert statuses == [200] * 6 + [400] * 4  # the unanswered call of turn 6 stays
    refused = answers[6][2]  # type: ignore[index]
    assert refused["error"]["param"] == "messages[16].parts[0]"  # type: ignore[index]


async def test_changed_instructions_are_decoded_again() -> None:
    conversation = growing("to-responses", 4)
    items = json.loads(conversation[-1][0])["input"] + call_step(50)
    changed = responses_body(items, "to-responses", instructions="be verbose")
    dropped = json.loads(responses_body(items, "to-responses"))
    del dropped["instructions"]
    cache = await same_as_without_cache(
        [*conversation, (changed, PATH), (json.dumps(dropped).encode(), PATH)]
    )
    assert cache.reused == 2


async def test_a_changed_earlier_item_is_decoded_again() -> None:
    conversation = growing("to-responses", 4)
    items = json.loads(conversation[-1][0])["input"] + call_step(50)
    items[0]["content"] = "stop"
    cache = await same_as_without_cache(
        [*conversation, (responses_body(items, "to-responses"), PATH)]
    )
    assert cache.reused == 2


@pytest.mark.parametrize("model", ["to-responses", "to-chat"])
async def test_a_vault_entry_for_the_prefix_that_appeared_or_changed_is_restored(
    model: str,
) -> None:
    """A continuation builds only its new messages' vault keys; the prefix's are read again."""
    turns = growing(model, 10)
    cache = HistoryCache(min_bytes=0)
    with_cache = await translation.replay(cache, turns, translation.vault_entry_for_call_2)
    assert with_cache == await translation.replay(
        HistoryCache(min_bytes=10**9), turns, translation.vault_entry_for_call_2
    )
    sent = with_cache[1]
    if model == "to-responses":
        assert [b"enc-call_2" in body for body in sent[5:9]] == [False, True, True, False]
    assert cache.reused == 8


# ---------------------------------------------------------------- the rule itself

ITEM_KINDS: list[Callable[[int], JsonObject]] = [
    lambda n: {"role": "user", "content": f"u{n}"},
    lambda n: {"role": "developer", "content": f"d{n}"},
    lambda n: {"role": "assistant", "content": f"a{n}"},
    lambda n: {
        "type": "message",
        "role": "assistant",
        "id": f"msg_{n % 3}",
        "content": [{"type": "output_text", "text": f"t{n}"}],
    },
    lambda n: {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"r{n}"}]},
    lambda n: {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": f"e{n}"},
    lambda n: {"type": "function_call", "call_id": f"c{n}", "name": "f", "arguments": "{}"},
    lambda n: {"type": "function_call_output", "call_id": f"c{n - 1}", "output": "o"},
]


def entry_for(payload: JsonObject) -> Entry:
    """The entry a decoded request leaves (its messages held)."""
    items = payload["input"]
    assert isinstance(items, list)
    return Entry(
        source=b"",
        size=0,
        head={},
        head_bytes=0,
        messages=RESPONSES.decode_request(payload).messages,
        call_ids=frozenset(),
        checked_for=None,
        last_item=items[-1],
        lead=lead_count(RESPONSES.name, payload),
    )


@pytest.mark.parametrize("seed", range(60))
def test_new_messages_are_what_the_whole_decode_adds(seed: int) -> None:
    chooser = random.Random(seed)
    items = [chooser.choice(ITEM_KINDS)(n) for n in range(chooser.randint(2, 12))]
    cut = chooser.randint(1, len(items) - 1)
    members: JsonObject = {"instructions": "be brief"} if seed % 2 else {}
    whole: JsonObject = {"input": items, **members}
    prefix: JsonObject = {"input": items[:cut], **members}
    rest: JsonObject = {"input": items[cut:], **members}
    entry = entry_for(prefix)
    expected = RESPONSES.decode_request(whole).messages
    held = entry.messages
    assert held is not None
    new = new_messages(RESPONSES, entry, RESPONSES.decode_request(rest), rest)
    if new is not None:
        assert held + new == expected
    continuation = Continuation(entry, rest, len(items) - cut, 0)
    count = prefix_count(RESPONSES, continuation, expected, items)
    if count is not None:
        assert expected[:count] == held
    assert (new is None) == (count is None)


# ---------------------------------------------------------------- the openai SDK, on loopback


def sdk_conversation(
    cache: HistoryCache, model: str, turns: int
) -> tuple[list[object], list[object]]:
    """An agent on the openai SDK's Responses API through a gateway holding ``cache``, the
    emulators behind it on loopback: each turn's answer (ids and times left out) and the
    bodies the upstream received."""
    import openai

    from interlock.gateway.app import build_gateway, create_app
    from interlock.gateway.config import parse_config
    from interlock.gateway.stores import open_store
    from tests.gateway.serving import app_on_loopback, emulators_on_loopback, gateway_config

    with emulators_on_loopback() as (emulator_url, emulators):
        config = parse_config(gateway_config(emulator_url, "memory://"), {})
        built = build_gateway(config, store=open_store("memory://"))
        built.proxy.history = cache
        upstream = "openai-responses" if model == "via-responses" else "openai-chat"
        with app_on_loopback(create_app(built)) as url:
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
            items: list[JsonObject] = [{"role": "user", "content": "look it up " * 900}]
            answers: list[object] = []
            tools = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
            for turn in range(turns):
                items.extend(call_step(turn))
                answer = client.responses.create(
                    model=model,
                    input=items,  # type: ignore[arg-type]
                    instructions="answer briefly",
                    tools=tools,  # type: ignore[arg-type]
                    store=False,
                )
                answers.append(
                    [item.model_dump(exclude={"id"}) for item in answer.output] + [answer.status]
                )
            client.close()
        received = list(emulators[upstream].received)
    return answers, received


@pytest.mark.parametrize("model", ["via-responses", "via-chat"])
def test_the_openai_sdk_gets_the_same_answers_and_the_upstream_the_same_bodies(
    model: str,
) -> None:
    cache = HistoryCache()
    with_cache = sdk_conversation(cache, model, 8)
    assert with_cache == sdk_conversation(HistoryCache(min_bytes=10**9), model, 8)
    assert cache.reused == 6 and len(with_cache[1]) == 8
    assert cache.checks_reused == (6 if model == "via-responses" else 0)
