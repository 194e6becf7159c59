"""Vault lookups: one round trip for a known lookup and new keys; a known part whose stored
texts changed is read again whole. Vault misses counted from a start are the whole
history's from there."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway.config import UpstreamConfig
from interlock.gateway.stores import open_store
from interlock.gateway.vault import (
    ReasoningVault,
    needs,
    reasoning_key,
    signature_key,
    vault_misses,
    vault_space,
)
from interlock.transcript import (
    GEMINI_THOUGHT_SIGNATURE,
    OPENAI_ENCRYPTED_CONTENT,
    Message,
    Opaque,
    ReasoningPart,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

UPSTREAM = UpstreamConfig(
    name="up", protocol="openai-responses", base_url="https://x.example", vendor="openai"
)


async def test_a_lookup_after_a_known_one_reads_both_and_sees_every_change() -> None:
    store = open_store("memory://")
    vault = ReasoningVault(store)
    await store.vault_put("t", "up", {"reasoning:a": [1], "reasoning:c": [3]})
    known = await vault.look("t", UPSTREAM, ["reasoning:a", "reasoning:b"])
    assert known.found == {"reasoning:a": [1]}
    assert known.texts == ("[1]", None)
    later = await vault.look("t", UPSTREAM, ["reasoning:c"], known)
    assert later.ids == ("reasoning:a", "reasoning:b", "reasoning:c")
    assert later.found == {"reasoning:a": [1], "reasoning:c": [3]}
    assert later.texts[:2] == known.texts
    await store.vault_put("t", "up", {"reasoning:b": [2], "reasoning:a": [9]})
    changed = await vault.look("t", UPSTREAM, ["reasoning:c"], known)
    assert changed.texts[:2] != known.texts
    assert changed.found == {"reasoning:a": [9], "reasoning:b": [2], "reasoning:c": [3]}
    assert changed.head(2).found == {"reasoning:a": [9], "reasoning:b": [2]}
    assert await vault.lookup("t", UPSTREAM, []) == {}
    assert await vault.lookup("other", UPSTREAM, ["reasoning:a"]) == {}


def _step(arguments: str, signature: str) -> Message:
    call = ToolCallPart(
        call_id="0",
        name="get_weather",
        arguments=arguments,
        signature=Opaque(provider="google", format=GEMINI_THOUGHT_SIGNATURE, data=signature),
    )
    return Message(role="assistant", parts=(call,))


async def test_a_reused_call_id_is_kept_apart_by_the_calls_name_and_arguments() -> None:
    """Two steps whose calls are both ``0``: each signature goes back onto its own call,
    and arguments re-serialized by a client (spaces, key order) still find theirs."""
    store = open_store("memory://")
    vault = ReasoningVault(store)
    gemini = UpstreamConfig(name="g", protocol="gemini", base_url="https://x.example")
    paris, rome = _step('{"city":"Paris","unit":"C"}', "S1"), _step('{"city":"Rome"}', "S2")
    assert await vault.remember("t", gemini, paris) == 1
    assert await vault.remember("t", gemini, rome) == 1
    stripped = [
        Message(role="assistant", parts=(replace(message.parts[0], signature=None),))
        for message in (paris, rome)
    ]
    respaced = replace(stripped[0].parts[0], arguments='{"unit": "C", "city": "Paris"}')
    history = [
        Message(role="user", parts=(TextPart(text="hi"),)),
        Message(role="assistant", parts=(respaced,)),
        stripped[1],
    ]
    request = Request(model="m", messages=tuple(history))
    restored, count = await vault.restore("t", gemini, request)
    assert count == 2
    signatures = [message.tool_calls[0].signature for message in restored.messages[1:]]
    assert [s.data if s else None for s in signatures] == ["S1", "S2"]
    other = replace(stripped[0].parts[0], arguments='{"city":"Oslo"}')
    unknown = Request(model="m", messages=(Message(role="assistant", parts=(other,)),))
    assert (await vault.restore("t", gemini, unknown))[1] == 0


def _message(kind: str, number: int) -> Message:
    call = ToolCallPart(call_id=f"call_{number}", name="f", arguments="{}")
    opaque = Opaque(provider="openai", format=OPENAI_ENCRYPTED_CONTENT, data="enc")
    if kind == "user":
        return Message(role="user", parts=(TextPart(text="go"),))
    if kind == "result":
        result = ToolResultPart(call_id=f"call_{number}", name="f", output=(TextPart(text="ok"),))
        return Message(role="tool", parts=(result,))
    if kind == "reasoned":
        reasoning = ReasoningPart(reasoning_kind="encrypted", opaque=opaque)
        return Message(role="assistant", parts=(reasoning, call))
    return Message(role="assistant", parts=(call,))


@settings(deadline=None)  # no timing assertions: the machine is shared
@given(st.lists(st.sampled_from(["user", "call", "reasoned", "result"]), max_size=12), st.data())
def test_vault_misses_from_a_start_are_the_whole_historys_from_there(
    kinds: list[str], data: st.DataObject
) -> None:
    messages = [_message(kind, number) for number, kind in enumerate(kinds)]
    start = data.draw(st.integers(0, len(messages)))
    whole = vault_misses(messages, UPSTREAM)
    positions = [int(warning.location.removeprefix("messages[")[:-1]) for warning in whole]
    assert vault_misses(messages, UPSTREAM, start=start) == tuple(
        warning for warning, at in zip(whole, positions, strict=True) if at >= start
    )


async def test_entries_are_kept_per_vendor_so_a_changed_vendor_finds_none() -> None:
    """What an xAI upstream answered is restored for it, and never for the same upstream
    name once its vendor is another (the entries live under ``name@vendor``)."""
    vault = ReasoningVault(open_store("memory://"))
    xai = UpstreamConfig(name="up", protocol="openai-responses", base_url="https://api.x.ai/v1")
    call = ToolCallPart(call_id="call_1", name="f", arguments="{}")
    blob = Opaque(provider="xai", format=OPENAI_ENCRYPTED_CONTENT, data="xai-blob")
    step = Message(
        role="assistant", parts=(ReasoningPart(reasoning_kind="encrypted", opaque=blob), call)
    )
    assert await vault.remember("t", xai, step) == 1
    asked = Message(role="user", parts=(TextPart(text="go"),))
    request = Request(model="m", messages=(asked, Message(role="assistant", parts=(call,))))
    restored, count = await vault.restore("t", xai, request)
    assert count == 1 and restored.messages[1].parts[0] == step.parts[0]
    now_openai = replace(xai, base_url="https://api.openai.com/v1")
    assert now_openai.issuer == "openai"
    assert (await vault.restore("t", now_openai, request))[1] == 0


def test_an_anthropic_upstream_of_another_vendor_keeps_its_entries_under_name_at_vendor() -> None:
    """Anthropic's own vendor keeps the plain name; DeepSeek's ``/anthropic`` endpoint (or
    any other vendor of the dialect) its own space, so a changed vendor finds none."""
    anthropic = UpstreamConfig(
        name="up", protocol="anthropic", base_url="https://api.anthropic.com/v1"
    )
    deepseek = replace(anthropic, base_url="https://api.deepseek.com/anthropic")
    assert vault_space(anthropic) == "up" and vault_space(deepseek) == "up@deepseek"
    assert needs(deepseek).provider == "deepseek" and needs(deepseek).unrecorded


def _reference_digest(calls: list[ToolCallPart]) -> str:
    """The call digest as ``json.dumps`` writes it (what every stored key was built with)."""
    named: list[list[str]] = []
    for call in calls:
        try:
            parsed = json.loads(call.arguments) if call.arguments.strip() else {}
            text = json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            text = call.arguments
        named.append([call.call_id, call.name, text])
    dumped = json.dumps(named, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(dumped.encode()).hexdigest()[:24]


SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
ARGUMENTS = st.one_of(
    st.text(max_size=30),
    st.dictionaries(
        st.text(max_size=5),
        SCALARS | st.lists(SCALARS, max_size=3) | st.dictionaries(st.text(max_size=3), SCALARS),
        max_size=4,
    ).map(lambda value: json.dumps(value, ensure_ascii=False)),
    st.integers(2040, 2060).map(lambda size: json.dumps({"text": "é" * size})),
)
CALLS = st.lists(
    st.builds(
        ToolCallPart, call_id=st.text(max_size=6), name=st.text(max_size=6), arguments=ARGUMENTS
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=300)
@given(CALLS)
def test_keys_are_built_as_json_dumps_builds_them_kept_or_not(calls: list[ToolCallPart]) -> None:
    """Stored keys stay valid: the digest equals ``json.dumps``'s, on first use and when
    kept (short arguments) or not (past ``SHORT_ARGUMENTS``)."""
    expected = f"reasoning:{_reference_digest(calls)}:{calls[0].call_id}"
    assert reasoning_key(calls) == expected
    assert reasoning_key(tuple(calls)) == expected
    assert signature_key(calls[0]) == f"sig:{_reference_digest(calls[:1])}:{calls[0].call_id}"
