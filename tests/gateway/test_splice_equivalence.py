"""Kept translations change nothing: for random growing histories with random edits, vault
entries appearing and models switching, every upstream body and every answer is the same
byte for byte with the history cache as without it, for each upstream dialect (Chat,
Responses, Gemini with and without the signature rule, Anthropic with and without manual
thinking) and the three clients that keep prefixes (Chat Completions, Responses,
Anthropic Messages)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import cast

import httpx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from interlock.codecs import openai_chat, openai_responses
from interlock.gateway.app import Gateway
from interlock.gateway.history_cache import HistoryCache
from interlock.gateway.vault import needs, reasoning_key, signature_key, vault_space
from interlock.transcript import (
    ANTHROPIC_THINKING_SIGNATURE,
    GEMINI_THOUGHT_SIGNATURE,
    OPENAI_ENCRYPTED_CONTENT,
    JsonObject,
    JsonValue,
    Message,
    Opaque,
    ReasoningPart,
    ReplayPolicy,
    ToolCallPart,
    to_json,
)
from tests.gateway.helpers import Recorder, chat_completion, client, gateway

CONFIG = """
[server]
max_body_bytes = 10000000
access_log = false

[store]
url = "memory://"

[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "https://chat.example/v1"
api_key_env = "UP_KEY"

[[upstreams]]
name = "responses"
protocol = "openai-responses"
base_url = "https://responses.example/v1"
api_key_env = "UP_KEY"

[[upstreams]]
name = "gemini"
protocol = "gemini"
base_url = "https://gemini.example"
api_key_env = "UP_KEY"

[[upstreams]]
name = "gemini-degrade"
protocol = "gemini"
base_url = "https://gemini.example"
api_key_env = "UP_KEY"
replay_mode = "degrade"

[[upstreams]]
name = "anthropic"
protocol = "anthropic"
base_url = "https://anthropic.example/v1"
api_key_env = "UP_KEY"

[[upstreams]]
name = "anthropic-degrade"
protocol = "anthropic"
base_url = "https://anthropic.example/v1"
api_key_env = "UP_KEY"
replay_mode = "degrade"

[[models]]
name = "to-chat"
upstream = "chat"
model = "up-chat"

[[models]]
name = "to-responses"
upstream = "responses"
model = "up-responses"

[[models]]
name = "to-gemini3"
upstream = "gemini"
model = "gemini-3-pro"

[[models]]
name = "to-gemini2"
upstream = "gemini-degrade"
model = "gemini-2.5-flash"

[[models]]
name = "to-gemini3-degrade"
upstream = "gemini-degrade"
model = "gemini-3-pro"

[[models]]
name = "to-anthropic"
upstream = "anthropic"
model = "claude-x"

[[models]]
name = "to-anthropic-think"
upstream = "anthropic"
model = "claude-sonnet-4-5"

[[models]]
name = "to-anthropic-think-degrade"
upstream = "anthropic-degrade"
model = "claude-sonnet-4-5"
"""

MODELS = [
    "to-chat",
    "to-responses",
    "to-gemini3",
    "to-gemini2",
    "to-gemini3-degrade",
    "to-anthropic",
    "to-anthropic-think",
    "to-anthropic-think-degrade",
]
THINKING = "-think"
"""Models whose requests ask for reasoning (Anthropic: manual thinking, so the open tool
loop's assistant turn must start with a signed thinking block): a Chat client's thinking
budget, a Responses client's effort (said as a budget, with a warning: not kept)."""
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]


def answer(request: httpx.Request) -> httpx.Response:
    """Each upstream's plain text answer."""
    path = request.url.path
    if "generateContent" in path:
        content = {"role": "model", "parts": [{"text": "ok"}]}
        candidate = {"content": content, "finishReason": "STOP"}
        return httpx.Response(200, json={"candidates": [candidate], "modelVersion": "g"})
    if path.endswith("/responses"):
        text = {"type": "output_text", "text": "ok", "annotations": []}
        item = {"type": "message", "id": "m", "role": "assistant", "status": "completed"}
        output = [{**item, "content": [text]}]
        body = {"id": "r", "object": "response", "created_at": 1, "model": "up-responses"}
        return httpx.Response(200, json={**body, "status": "completed", "output": output})
    if path.endswith("/messages"):
        usage = {"input_tokens": 1, "output_tokens": 1}
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x"}
        content = [{"type": "text", "text": "ok"}]
        return httpx.Response(
            200, json={**message, "content": content, "stop_reason": "end_turn", "usage": usage}
        )
    return httpx.Response(200, json=chat_completion())


# ---------------------------------------------------------------- histories


@dataclass(frozen=True)
class Turn:
    """What the client adds (or changes) before sending the next request."""

    kind: str
    model: str | None
    """The model the client switches to (``None``: it keeps the one it has)."""
    calls: int = 1
    reasoning: bool = False
    vault: bool = False
    """Before sending: the vault gets reasoning and a signature for this turn's calls (as
    if the model had made them; the others stay unknown)."""
    own: bool = False
    """The vault entries are written by the gateway's own vault (as when an answer passes
    through it, remembered as its own writes) rather than by another process."""


KINDS = [
    "step",
    "step",
    "step",
    "answer",
    "user",
    "named",
    "orphan",
    "reused_id",
    "edit",
    "same",
    "revault",
]
TURNS = st.lists(
    st.builds(
        Turn,
        kind=st.sampled_from(KINDS),
        model=st.one_of(st.none(), st.none(), st.none(), st.sampled_from(MODELS)),
        calls=st.integers(1, 2),
        reasoning=st.booleans(),
        vault=st.booleans(),
        own=st.booleans(),
    ),
    min_size=2,
    max_size=10,
)


@dataclass
class History:
    messages: list[JsonObject]
    calls: list[str]
    counter: int = 0

    def call_id(self) -> str:
        self.counter += 1
        return f"call_{self.counter}"


def _step(history: History, turn: Turn, call_ids: list[str]) -> None:
    calls: list[JsonValue] = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": '{"n": 1}'}}
        for i in call_ids
    ]
    assistant: JsonObject = {"role": "assistant", "content": None, "tool_calls": calls}
    if turn.reasoning:
        assistant["reasoning_content"] = "thinking it over"
    history.messages.append(assistant)
    for call_id in call_ids:
        history.messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": "r " + call_id}
        )
    history.calls.extend(call_ids)


def grow(history: History, turn: Turn) -> None:
    """The client's next history (Chat form)."""
    messages = history.messages
    match turn.kind:
        case "step" | "revault":
            _step(history, turn, [history.call_id() for _ in range(turn.calls)])
        case "answer":
            messages.append({"role": "assistant", "content": f"answer {len(messages)}"})
        case "user":
            messages.append({"role": "user", "content": f"and then {len(messages)}"})
        case "named":
            _step(history, turn, [history.call_id()])
            messages[-2]["name"] = "agent_b"
        case "orphan" if history.calls:
            messages.append({"role": "tool", "tool_call_id": history.calls[0], "content": "late"})
        case "reused_id" if history.calls:
            _step(history, turn, [history.calls[-1]])
        case "edit":
            messages[1] = {**messages[1], "content": str(messages[1]["content"]) + "!"}
        case _:
            pass  # the same history again


def chat_body(messages: list[JsonObject], model: str) -> bytes:
    """As the openai SDK writes it: the history before the model (so a model switch keeps
    the known prefix)."""
    body: dict[str, object] = {"messages": messages, "model": model, "tools": TOOLS}
    if THINKING in model:
        body["reasoning"] = {"max_tokens": 2048}  # OpenRouter's field: a thinking budget
    return json.dumps(body).encode()


def anthropic_body(messages: list[JsonObject], model: str) -> bytes:
    """The same history as an Anthropic client sends it (written here, not by the codec):
    the system prompt as ``system``, tool results in user turns, consecutive turns of one
    role merged, the client's thinking (with a signature of unrecorded issuer) first in its
    steps; members in the anthropic SDK's order (``messages`` before ``model``)."""
    system: str | None = None
    wire: list[JsonObject] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        blocks: list[JsonValue] = []
        if role == "system":
            system = str(content)
            continue
        if role == "assistant":
            if message.get("reasoning_content"):
                thinking = str(message["reasoning_content"])
                blocks.append({"type": "thinking", "thinking": thinking, "signature": "c2ln"})
            if content:
                blocks.append({"type": "text", "text": content})
            for call in cast(list[JsonObject], message.get("tool_calls") or []):
                function = cast(JsonObject, call["function"])
                arguments = json.loads(str(function["arguments"]))
                use = {"type": "tool_use", "id": call["id"], "name": function["name"]}
                blocks.append({**use, "input": arguments})
        elif role == "tool":
            result = {"type": "tool_result", "tool_use_id": message["tool_call_id"]}
            blocks.append({**result, "content": content})
        else:
            blocks.append({"type": "text", "text": content})
        wire_role = "assistant" if role == "assistant" else "user"
        if wire and wire[-1]["role"] == wire_role:
            cast(list[JsonValue], wire[-1]["content"]).extend(blocks)
        else:
            wire.append({"role": wire_role, "content": blocks})
    tools = [{"name": "f", "input_schema": {"type": "object"}}]
    payload: dict[str, object] = {"max_tokens": 4096, "messages": wire, "model": model}
    if system is not None:
        payload["system"] = system
    if THINKING in model:
        payload["thinking"] = {"type": "enabled", "budget_tokens": 2048}
    payload["tools"] = tools
    return json.dumps(payload).encode()


def responses_body(messages: list[JsonObject], model: str) -> bytes:
    """The same history as a Responses client sends it (the codec's own encoding)."""
    request = openai_chat.decode_request({"model": model, "messages": messages})
    payload = openai_responses.encode_request(request, policy=ReplayPolicy(mode="degrade")).payload
    payload["tools"] = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
    payload["store"] = False
    if THINKING in model:
        payload["reasoning"] = {"effort": "high"}
    payload = {"input": payload.pop("input"), **payload}  # the openai SDK's order
    return json.dumps(payload).encode()


async def fill_vault(built: Gateway, calls: list[str], *, own: bool = False) -> None:
    """Reasoning (Responses, of its vendor) and thought signatures (Gemini) for ``calls``,
    as if the upstreams had answered with them: through the gateway's own vault (``own``,
    as when an answer passes through it), else written into its store by another process.
    Every write has a text of its own, so a changed entry is told apart."""
    responses = built.upstreams["responses"].config
    for call_id in calls:
        call = ToolCallPart(call_id=call_id, name="f", arguments='{"n": 1}')
        written = int(await built.store.backend.get("test-writes") or 0) + 1
        await built.store.backend.set_many({"test-writes": str(written)})
        data = f"enc-{call_id}-{written}"
        opaque = Opaque(
            provider=needs(responses).provider, format=OPENAI_ENCRYPTED_CONTENT, data=data
        )
        reasoning = ReasoningPart(reasoning_kind="encrypted", opaque=opaque)
        signature = Opaque(provider="google", format=GEMINI_THOUGHT_SIGNATURE, data="c2ln")
        anthropic = built.upstreams["anthropic"].config  # both Anthropic upstreams' vendor
        signed_thinking = Opaque(
            provider=needs(anthropic).provider,
            format=ANTHROPIC_THINKING_SIGNATURE,
            data=f"sig-{data}",
        )
        thinking = ReasoningPart(reasoning_kind="raw", text=f"about {data}", opaque=signed_thinking)
        if own:
            vault = built.proxy.vault
            step = Message(role="assistant", parts=(reasoning, call))
            await vault.remember("default", responses, step)
            signed = Message(role="assistant", parts=(replace(call, signature=signature),))
            for upstream in ("gemini", "gemini-degrade"):
                await vault.remember("default", built.upstreams[upstream].config, signed)
            for upstream in ANTHROPIC_UPSTREAMS:
                thought = Message(role="assistant", parts=(thinking, call))
                await vault.remember("default", built.upstreams[upstream].config, thought)
            continue
        entry = {reasoning_key((call,)): [to_json(reasoning)]}
        await built.store.vault_put("default", vault_space(responses), entry)
        for upstream in ("gemini", "gemini-degrade"):
            await built.store.vault_put(
                "default", upstream, {signature_key(call): to_json(signature)}
            )
        for upstream in ANTHROPIC_UPSTREAMS:
            space = vault_space(built.upstreams[upstream].config)
            kept = {reasoning_key((call,)): [to_json(thinking)]}
            await built.store.vault_put("default", space, kept)


async def replay(
    cache: HistoryCache, model: str, turns: list[Turn], ingress: str
) -> tuple[list[object], ...]:
    """Every request of the conversation: the answers, and what each upstream was sent."""
    upstream = Recorder(answer)
    built = gateway({name: upstream for name in built_upstreams()}, CONFIG)
    built.proxy.history = cache
    history = History(
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "go"},
        ],
        calls=[],
    )
    answers: list[object] = []
    async with client(built) as http:
        for turn in turns:
            model = turn.model or model
            known = len(history.calls)
            if turn.kind == "revault" and history.calls:
                # Another branch's answer made the first call again: its entry changes
                # under the kept prefix (the history itself is unchanged).
                await fill_vault(built, history.calls[:1], own=turn.own)
            grow(history, turn)
            if turn.vault:
                await fill_vault(built, history.calls[known:], own=turn.own)
            if ingress == "chat":
                sent = await http.post(
                    "/v1/chat/completions", content=chat_body(history.messages, model)
                )
            elif ingress == "anthropic":
                sent = await http.post(
                    "/v1/messages",
                    content=anthropic_body(history.messages, model),
                    headers={"anthropic-version": "2023-06-01"},
                )
            else:
                body = responses_body(history.messages, model)
                sent = await http.post("/v1/responses", content=body)
            label = sent.headers.get("x-interlock-translation")
            answers.append((sent.status_code, label, sent.content))
    forwarded: list[object] = [(r.url.path, r.content) for r in upstream.requests]
    return answers, forwarded


ANTHROPIC_UPSTREAMS = ("anthropic", "anthropic-degrade")


def built_upstreams() -> list[str]:
    return ["chat", "responses", "gemini", "gemini-degrade", *ANTHROPIC_UPSTREAMS]


@settings(
    deadline=None,  # no timing assertions: the machine is shared
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
# Steps without signatures kept for Gemini 2 (no signature rule), then the same upstream
# under a Gemini 3 model: the whole history now needs the dummy signatures.
@example(
    "to-gemini2",
    [Turn("step", None), Turn("step", None), Turn("step", "to-gemini3-degrade", vault=True)],
    "chat",
)
# The gateway's own write changes the entry of a step in the kept prefix: the prefix's
# vault texts are read again, not reused.
@example(
    "to-responses",
    [
        Turn("step", None, vault=True, own=True),
        Turn("step", None, vault=True, own=True),
        Turn("step", None),
        Turn("revault", None, own=True),
        Turn("step", None),
    ],
    "chat",
)
# The same by another process (another worker or replica sharing the store).
@example(
    "to-responses",
    [
        Turn("step", None, vault=True),
        Turn("step", None, vault=True, own=True),
        Turn("step", None),
        Turn("revault", None),
        Turn("step", None),
    ],
    "responses",
)
# An Anthropic client's own thinking, same dialect with manual thinking, an early text
# edited, a new user turn, an id reused, then another dialect's upstream.
@example(
    "to-anthropic-think",
    [
        Turn("step", None, reasoning=True),
        Turn("step", None, reasoning=True),
        Turn("edit", None),
        Turn("step", None, reasoning=True),
        Turn("user", None),
        Turn("step", None, reasoning=True),
        Turn("reused_id", None, reasoning=True),
        Turn("step", "to-gemini3", vault=True),
        Turn("step", None, vault=True),
    ],
    "anthropic",
)
@given(st.sampled_from(MODELS), TURNS, st.sampled_from(["chat", "responses", "anthropic"]))
def test_cached_and_uncached_paths_send_and_answer_the_same_bytes(
    model: str, turns: list[Turn], ingress: str
) -> None:
    cached = asyncio.run(replay(HistoryCache(min_bytes=0), model, turns, ingress))
    uncached = asyncio.run(replay(HistoryCache(min_bytes=10**9), model, turns, ingress))
    assert cached == uncached


def _steps(count: int) -> list[Turn]:
    return [Turn(kind="step", model=None, vault=True) for _ in range(count)]


def test_every_splicing_upstream_is_spliced_in_a_plain_conversation() -> None:
    """The property above is not vacuous: a growing conversation of tool steps reuses its
    translation toward Chat, Responses, Gemini and Anthropic (signatures and thinking from
    the vault), from the three clients that keep prefixes."""
    for ingress in ("chat", "responses", "anthropic"):
        for model, reused in [
            ("to-chat", 6),
            ("to-responses", 6),
            ("to-gemini3", 6),
            ("to-gemini2", 6),
            ("to-anthropic", 0 if ingress == "anthropic" else 6),
            ("to-anthropic-think", 6 if ingress == "chat" else 0),
            ("to-anthropic-think-degrade", 6 if ingress == "chat" else 0),
        ]:
            cache = HistoryCache(min_bytes=0)
            turns = _steps(8)
            cached = asyncio.run(replay(cache, model, turns, ingress))
            uncached = asyncio.run(replay(HistoryCache(min_bytes=10**9), model, turns, ingress))
            assert cached == uncached
            if (ingress, model) in (("chat", "to-chat"), ("responses", "to-responses")):
                continue  # same dialect: the body is the client's, nothing is translated
            assert cache.translations_reused == reused, (ingress, model)
            assert cache.reused == 6, (ingress, model)  # decoded: only the new messages


def test_an_anthropic_client_to_anthropic_has_only_its_new_messages_checked() -> None:
    """Same dialect, the client keeping its own (signed) thinking: after the second request
    every body is passed through with only its new step decoded and checked, thinking on
    (the open tool loop's turn starts with it) or off, strict or degrade."""
    turns = [Turn(kind="step", model=None, reasoning=True) for _ in range(8)]
    for model in ("to-anthropic", "to-anthropic-think", "to-anthropic-think-degrade"):
        cache = HistoryCache(min_bytes=0)
        answers, forwarded = asyncio.run(replay(cache, model, turns, "anthropic"))
        uncached = asyncio.run(replay(HistoryCache(min_bytes=10**9), model, turns, "anthropic"))
        assert (answers, forwarded) == uncached
        labels = [cast(tuple[int, str, bytes], answer)[:2] for answer in answers]
        assert labels == [(200, "exact")] * 8
        assert (cache.reused, cache.checks_reused) == (6, 6), model
