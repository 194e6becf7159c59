"""Vault lookups: one round trip for a known lookup and new keys; a known part whose stored
texts changed is read again whole."""

from __future__ import annotations

from interlock.gateway.config import UpstreamConfig
from interlock.gateway.stores import open_store
from interlock.gateway.vault import ReasoningVault

UPSTREAM = UpstreamConfig(name="up", protocol="openai-responses", base_url="https://x.example")


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
