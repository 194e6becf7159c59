"""The history-prefix cache: exact parsing, exact misses, isolation, bounds, and a proxy
that answers and forwards exactly what it would without the cache."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from interlock.gateway.app import Gateway
from interlock.gateway.history_cache import (
    Entry,
    HistoryCache,
    ParsedBody,
    checks_alone,
    continue_body,
    split_body,
)
from interlock.transcript import JsonObject, Message, TextPart, ToolCallPart
from tests.gateway.helpers import CONFIG, Recorder, chat_completion, client, gateway

BIG_CONFIG = CONFIG.replace("max_body_bytes = 4096", "max_body_bytes = 10000000").replace(
    'base_url = "https://gemini.example"',
    'base_url = "https://gemini.example"\nreplay_mode = "degrade"',
)
"""Degrading toward Gemini: these Chat histories carry no thought signatures."""
SCOPE = ("tenant-a", "openai-chat")


def entry(prefix: str) -> Entry:
    """An entry whose prefix is all of its source."""
    source = prefix.encode()
    return Entry(
        source=source,
        size=len(source),
        head={},
        head_bytes=0,
        messages=(),
        call_ids=frozenset(),
        checked_for=None,
    )


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text",
    [
        '{"model":"m","messages":[{"role":"user","content":"hi"}]}',
        ' {\n "messages" : [ {"role":"user"} , {"a":[1,{"b":"]"}]} ] ,"model":"m" } \n',
        '{"model":"m","x":{"messages":[]},"messages":[{"k":"\\u00e9]}"}],"y":"n"}',
        '{"a":1,"messages":[{}],"b":[1,2],"c":null}',
    ],
)
def test_split_parses_exactly_as_json_loads(text: str) -> None:
    split = split_body(text, "messages")
    assert split is not None
    assert split.payload == json.loads(text)
    assert list(split.payload) == list(json.loads(text))
    encoded = text.encode()
    assert encoded[split.prefix_end - 1 : split.prefix_end] == b"}"
    assert encoded[split.prefix_end :].lstrip().startswith(b"]")


@pytest.mark.parametrize(
    "text",
    [
        '{"messages":[{"a":1}],"messages":[{"a":2}]}',
        '{"model":"m","messages":[{"a":1}],"model":"n"}',
        '{"messages":[]}',
        '{"messages":[1]}',
        '{"messages":{"a":1}}',
        '{"messages":[{"a":1}]} x',
        '{"messages":[{"a":1}],}',
        "[1]",
        '{"messages":[{"a":1}]',
    ],
)
def test_split_declines_what_it_cannot_take_exactly(text: str) -> None:
    assert split_body(text, "messages") is None


def test_continuation_is_the_rest_of_the_body_as_json_loads_reads_it() -> None:
    first = '{"model":"m","messages":[{"role":"user","content":"a\u00e9"}'
    known = entry(first)
    known.head = {"model": "m"}
    text = first + ' ,{"role":"assistant","content":"b\u00e9"},{"x":[]}] ,"tools":[],"n":"m"}'
    continuation = continue_body(known, text.encode(), "messages")
    assert continuation is not None
    expected = json.loads(text)
    expected["messages"] = expected["messages"][1:]
    assert continuation.payload == expected
    assert continuation.new_items == 2
    assert text.encode()[continuation.prefix_end - 1 :].startswith(b"}]")
    assert continue_body(known, (first + "]}").encode(), "messages") is not None
    for bad in (
        first + ",]}",
        first + ',{"a":1}]',
        first + ',{"a":1}],"messages":[{}]}',
        first + ',{"a":1}],"model":"m2"}',
        first + ',{"a":1},2]}',
    ):
        assert continue_body(known, bad.encode(), "messages") is None, bad
    assert continue_body(known, first.encode() + b',{"a":"\xff"}]}', "messages") is None


# ---------------------------------------------------------------- the store


def test_any_changed_byte_of_the_prefix_misses() -> None:
    cache = HistoryCache(min_bytes=0)
    prefix = '{"model":"m","messages":[{"role":"user","content":"h\u00e9llo é✓"}'
    cache.keep(SCOPE, entry(prefix))
    encoded = prefix.encode()
    assert cache.find(SCOPE, encoded + b"]}") is not None
    for index in range(len(encoded)):
        for flip in (1, 0x80):
            changed = bytearray(encoded)
            changed[index] ^= flip
            assert cache.find(SCOPE, bytes(changed) + b"]}") is None, index
    assert cache.find(SCOPE, encoded[:-1]) is None


def test_tenants_and_dialects_are_isolated() -> None:
    cache = HistoryCache(min_bytes=0)
    prefix = '{"messages":[{"role":"user","content":"hello"}'
    cache.keep(SCOPE, entry(prefix))
    assert cache.find(("tenant-b", "openai-chat"), (prefix + "]}").encode()) is None
    assert cache.find(("tenant-a", "openai-responses"), (prefix + "]}").encode()) is None
    assert cache.find(SCOPE, (prefix + "]}").encode()) is not None


def test_the_longest_known_prefix_wins() -> None:
    cache = HistoryCache(min_bytes=0)
    short, long = '{"messages":[{"a":1}', '{"messages":[{"a":1},{"b":2}'
    cache.keep(SCOPE, entry(long))
    cache.keep(SCOPE, entry(short))
    found = cache.find(SCOPE, (long + ',{"c":3}]}').encode())
    assert found is not None and found.prefix == long.encode()


class Compared(bytes):
    """A body that counts the prefixes compared with it."""

    compared = 0

    def startswith(self, prefix: object, *where: int) -> bool:  # type: ignore[override]  # counts, then bytes.startswith
        Compared.compared += 1
        return super().startswith(prefix, *where)  # type: ignore[arg-type]  # what find passes


def test_a_growing_conversation_compares_only_its_newest_prefix() -> None:
    """Each kept prefix of one conversation is a prefix of the next request: the newest
    (longest) is found first, the older ones are passed over by size."""
    cache = HistoryCache(min_bytes=0)
    items = [f'{{"n":{index}}}' for index in range(6)]
    for count in range(1, 6):
        cache.keep(SCOPE, entry('{"messages":[' + ",".join(items[:count])))
    Compared.compared = 0
    body = Compared(('{"messages":[' + ",".join(items) + "]}").encode())
    found = cache.find(SCOPE, body)
    assert found is not None and found.size == len('{"messages":[' + ",".join(items[:5]))
    assert Compared.compared == 2  # its last 64 bytes, then all of it


def test_of_one_prefix_kept_twice_the_older_entry_is_found() -> None:
    cache = HistoryCache(min_bytes=0)
    prefix = '{"messages":[{"a":1}'
    older, newer = entry(prefix), entry(prefix)
    cache.keep(SCOPE, older)
    cache.keep(SCOPE, newer)
    assert cache.find(SCOPE, (prefix + "]}").encode()) is older


def test_size_is_bounded_per_scope_and_in_all() -> None:
    cache = HistoryCache(min_bytes=0, per_scope=3, max_bytes=1000)
    for index in range(10):
        cache.keep(SCOPE, entry(f'{{"messages":[{{"n":{index}}}'))
    assert len(cache) == 3
    assert cache.find(SCOPE, b'{"messages":[{"n":9}]}') is not None
    assert cache.find(SCOPE, b'{"messages":[{"n":0}]}') is None
    for index in range(20):
        cache.keep((f"tenant-{index}", "openai-chat"), entry("x" * 100 + str(index)))
    assert cache.held_bytes <= 1000 and len(cache) == 9
    cache.keep(SCOPE, entry("y" * 2000))
    assert cache.held_bytes <= 1000


def test_short_requests_are_neither_kept_nor_looked_up() -> None:
    cache = HistoryCache(min_bytes=100)
    cache.keep(SCOPE, entry("x" * 99))
    assert len(cache) == 0
    cache.keep(SCOPE, entry("x" * 100))
    assert cache.find(SCOPE, ("x" * 99).encode()) is None
    assert cache.find(SCOPE, ("x" * 101).encode()) is not None


# ---------------------------------------------------------------- through the proxy


def step(index: int) -> list[JsonObject]:
    call = {"id": f"call_{index}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{index}", "content": f"result {index}"},
    ]


def body(messages: list[JsonObject], model: str = "to-chat") -> bytes:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    return json.dumps({"model": model, "messages": messages, "tools": tools}).encode()


def built(cache: HistoryCache, upstream: Recorder) -> Gateway:
    gateway_ = gateway({"chat": upstream, "responses": upstream, "gemini": upstream}, BIG_CONFIG)
    gateway_.proxy.history = cache
    return gateway_


GEMINI_ANSWER = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "modelVersion": "up-gemini",
}


def responses_answer(request: httpx.Request) -> httpx.Response:
    if "generateContent" in request.url.path:
        return httpx.Response(200, json=GEMINI_ANSWER)
    if request.url.path.endswith("/responses"):
        output = [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            }
        ]
        return httpx.Response(
            200,
            json={
                "id": "resp_1",
                "object": "response",
                "created_at": 1,
                "model": "up-responses",
                "status": "completed",
                "output": output,
            },
        )
    return httpx.Response(200, json=chat_completion())


Conversation = list[tuple[bytes, str]]


async def replay(cache: HistoryCache, turns: Conversation) -> tuple[list[object], list[bytes]]:
    """Send every body in order; the answers (status, header, JSON) and upstream bodies."""
    upstream = Recorder(responses_answer)
    answers: list[object] = []
    async with client(built(cache, upstream)) as http:
        for content, path in turns:
            answer = await http.post(path, content=content)
            answers.append(
                (answer.status_code, answer.headers.get("x-interlock-translation"), answer.json())
            )
    return answers, [request.content for request in upstream.requests]


def growing(
    model: str, turns: int, edit: Callable[[int, list[JsonObject]], None] | None = None
) -> Conversation:
    messages: list[JsonObject] = [
        {"role": "system", "content": "be brief " * 20},
        {"role": "user", "content": "go"},
    ]
    conversation: Conversation = []
    for turn in range(turns):
        messages.extend(step(turn))
        if edit is not None:
            edit(turn, messages)
        conversation.append((body(messages, model), "/v1/chat/completions"))
    return conversation


@pytest.mark.parametrize("model", ["to-chat", "to-responses"])
async def test_a_growing_conversation_is_answered_and_forwarded_exactly_as_without_cache(
    model: str,
) -> None:
    conversation = growing(model, 12)
    cache = HistoryCache(min_bytes=0)
    assert await replay(cache, conversation) == await replay(
        HistoryCache(min_bytes=10**9), conversation
    )
    assert cache.reused == 10  # the first request keeps no messages; the second is decoded whole
    assert cache.checks_reused == (10 if model == "to-chat" else 0)


def _break(turn: int, messages: list[JsonObject]) -> None:
    if turn == 5:  # a tool result answering a call of the known prefix: an orphan
        messages.append({"role": "tool", "tool_call_id": "call_1", "content": "late"})
    if turn == 7:  # an unanswered call at the end: tool pairing refused
        messages.extend(step(99)[:1])
    if turn == 9:  # a new user turn, then a call id the prefix already used
        messages.extend([{"role": "user", "content": "again"}, *step(2)])


async def test_broken_continuations_get_the_full_paths_own_errors() -> None:
    conversation = growing("to-chat", 12, _break)
    cache = HistoryCache(min_bytes=0)
    with_cache = await replay(cache, conversation)
    assert with_cache == await replay(HistoryCache(min_bytes=10**9), conversation)
    statuses = [answer[0] for answer in with_cache[0]]  # type: ignore[index]
    assert statuses[5] == 400 and statuses[7] == 400 and statuses[4] == 200
    assert cache.reused >= 2


def _lone_surrogate(turn: int, messages: list[JsonObject]) -> None:
    if turn == 3:  # a valid pair in the prefix from now on (the body still holds an escape)
        messages.append({"role": "user", "content": "pair \U0001f600"})
    if turn == 6:  # a lone surrogate in the new part: refused, with its whole-body location
        messages[-1]["content"] = "lone \ud800"


async def test_a_lone_surrogate_after_a_known_prefix_is_refused_where_it_is() -> None:
    conversation = growing("to-chat", 8, _lone_surrogate)
    cache = HistoryCache(min_bytes=0)
    with_cache = await replay(cache, conversation)
    assert with_cache == await replay(HistoryCache(min_bytes=10**9), conversation)
    status, _, answer = with_cache[0][6]  # type: ignore[misc]
    assert status == 400
    assert answer["error"]["param"] == "messages[16].content"  # type: ignore[index]
    assert cache.reused >= 2


async def test_a_one_off_request_keeps_no_messages_a_continued_one_does() -> None:
    cache = HistoryCache(min_bytes=0)
    await replay(cache, growing("to-chat", 1))
    (kept,) = [entry for entries in cache._scopes.values() for entry in entries.values()]  # pyright: ignore[reportPrivateUsage]
    assert kept.messages is None and cache.reused == 0
    cache = HistoryCache(min_bytes=0)
    await replay(cache, growing("to-chat", 3))
    assert cache.reused == 1


async def test_a_changed_earlier_message_is_decoded_again() -> None:
    conversation = growing("to-chat", 4)
    edited = growing(
        "to-chat",
        5,
        lambda turn, messages: messages[1].update(content=f"go {turn}") if turn == 4 else None,
    )
    cache = HistoryCache(min_bytes=0)
    with_cache = await replay(cache, [*conversation, edited[-1]])
    assert with_cache == await replay(HistoryCache(min_bytes=10**9), [*conversation, edited[-1]])
    assert cache.reused == 2


def _deprecated_function_step(turn: int, messages: list[JsonObject]) -> None:
    if turn == 3:  # call ids of the deprecated form are minted from message positions
        call = {"name": "f", "arguments": "{}"}
        messages.append({"role": "assistant", "content": None, "function_call": call})
        messages.append({"role": "function", "name": "f", "content": "old style"})


def _late_result(turn: int, messages: list[JsonObject]) -> None:
    if turn == 3:  # a second result for a call of the known prefix (names come from it)
        messages.append({"role": "tool", "tool_call_id": "call_1", "content": "late"})


@pytest.mark.parametrize("model", ["to-responses", "to-gemini"])
@pytest.mark.parametrize("edit", [_deprecated_function_step, _late_result])
async def test_new_messages_that_depend_on_the_prefix_are_decoded_with_it(
    model: str, edit: Callable[[int, list[JsonObject]], None]
) -> None:
    conversation = growing(model, 5, edit)
    cache = HistoryCache(min_bytes=0)
    assert await replay(cache, conversation) == await replay(
        HistoryCache(min_bytes=10**9), conversation
    )
    assert cache.reused == 2


def test_new_messages_that_open_a_turn_are_checked_with_the_whole_history() -> None:
    known = entry("")
    call = ToolCallPart(call_id="c", name="f", arguments={})
    assert checks_alone(known, (Message(role="assistant", parts=(call,)),))
    for role in ("user", "system", "developer"):
        assert not checks_alone(known, (Message(role=role, parts=(TextPart(text="x"),)),))


async def test_the_model_is_rewritten_in_place_after_a_non_ascii_head() -> None:
    def with_head(content: bytes) -> bytes:
        note = json.dumps("\u00e9\u2713 model" * 10, ensure_ascii=False).encode()
        return b'{"metadata":{"note":' + note + b"}," + content[1:]

    conversation = [(with_head(content), path) for content, path in growing("to-chat", 4)]
    cache = HistoryCache(min_bytes=0)
    answers, sent = await replay(cache, conversation)
    assert (answers, sent) == await replay(HistoryCache(min_bytes=10**9), conversation)
    assert cache.reused == 2
    assert all(json.loads(body)["model"] == "up-chat" for body in sent)
    assert [body.replace(b'"up-chat"', b'"to-chat"') for body in sent] == [
        content for content, _ in conversation
    ]


def test_the_defaults_are_the_documented_bounds() -> None:
    cache = HistoryCache()
    assert (cache.per_scope, cache.max_bytes, cache.min_bytes) == (8, 16_000_000, 8192)
    prefixes = [f'{{"messages":[{{"n":{index}, "pad":"{"x" * 8192}"}}' for index in range(9)]
    for prefix in prefixes:
        cache.keep(SCOPE, entry(prefix))
    assert len(cache) == 8
    assert cache.find(SCOPE, (prefixes[0] + "]}").encode()) is None
    assert cache.find(SCOPE, (prefixes[8] + "]}").encode()) is not None


@pytest.mark.parametrize("model", ["to-chat", "to-responses"])
async def test_branches_from_one_history_reuse_it_from_the_second_branch_on(model: str) -> None:
    base = growing(model, 3)[-1][0]
    messages = json.loads(base)["messages"]
    branches = [(base, "/v1/chat/completions")] + [
        (body([*messages, *step(100 + index)], model), "/v1/chat/completions") for index in range(4)
    ]
    cache = HistoryCache(min_bytes=0)
    assert await replay(cache, branches) == await replay(HistoryCache(min_bytes=10**9), branches)
    assert cache.reused == 3


def test_the_model_after_the_history_is_noted_where_it_is() -> None:
    prefix = '{"input":[{"role":"user","content":"\u00e9\u2713"}'
    first = (prefix + '],"model":"m","store":false}').encode()
    split = split_body(first.decode(), "input")
    assert split is not None and first.startswith(b'"m","store"', split.model_at)
    known = Entry(
        source=first,
        size=len(prefix.encode()),
        head={},
        head_bytes=0,
        messages=(),
        call_ids=frozenset(),
        checked_for=None,
    )
    later = (prefix + ',{"role":"user","content":"\u00fc"}] , "model" :  "m"}').encode()
    continuation = continue_body(known, later, "input")
    assert continuation is not None and later.startswith(b'"m"}', continuation.model_at)
    parsed = ParsedBody(continuation.payload, later, continuation=continuation)
    assert parsed.model_at == continuation.model_at
    headed = entry('{"model":"m","input":[{"role":"user"}')
    assert continue_body(headed, headed.source + b"]}", "input").model_at == -1  # type: ignore[union-attr]


MINTED_ITEM: JsonObject = {
    "type": "message",
    "id": "msg_interlock_0001",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "earlier answer", "annotations": []}],
}


def responses_conversation(minted_at: int, turns: int, *, model_last: bool) -> Conversation:
    """A Responses client's growing history (same dialect upstream); the item added at
    turn ``minted_at`` carries an id the gateway minted. ``model_last``: the SDK-less
    order with ``model`` after ``input``."""
    items: list[JsonObject] = [
        {"role": "system", "content": "be brief " * 20},
        {"role": "user", "content": "go"},
    ]
    conversation: Conversation = []
    for turn in range(turns):
        items.append(MINTED_ITEM if turn == minted_at else {"role": "user", "content": f"n{turn}"})
        payload: JsonObject = {"input": list(items), "store": False, "model": "to-responses"}
        if not model_last:
            payload = {"model": "to-responses", **payload}
        conversation.append((json.dumps(payload).encode(), "/v1/responses"))
    return conversation


@pytest.mark.parametrize("model_last", [False, True])
async def test_an_id_the_gateway_minted_after_a_known_prefix_is_still_found(
    model_last: bool,
) -> None:
    conversation = responses_conversation(3, 6, model_last=model_last)
    cache = HistoryCache(min_bytes=0)
    answers, sent = await replay(cache, conversation)
    assert (answers, sent) == await replay(HistoryCache(min_bytes=10**9), conversation)
    assert cache.reused >= 3
    translations = [answer[1] for answer in answers]  # type: ignore[index]
    assert translations[:3] == ["exact"] * 3 and "exact" not in translations[3:]
    assert [b"_interlock_" in body for body in sent] == [False] * 6  # re-encoded from turn 3
    assert all(json.loads(body)["model"] == "up-responses" for body in sent)
    if model_last:  # passed through as sent but for the model name, spliced in place
        assert [body.replace(b'"up-responses"', b'"to-responses"') for body in sent[:3]] == [
            content for content, _ in conversation[:3]
        ]
