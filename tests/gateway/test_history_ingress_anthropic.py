"""History prefixes of Anthropic clients: a continuation's new wire messages add exactly the
messages a whole decode gives (tool results named by their call, repeated roles marked,
the ``system`` member a leading message), or the full path decodes; and the proxy answers
and forwards what it would without the cache (``test_splice_equivalence`` replays random
conversations from an Anthropic client to every upstream)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from interlock.gateway.dialects import dialect
from interlock.gateway.history_cache import Continuation, Entry
from interlock.gateway.history_ingress import lead_count, new_messages, prefix_count
from interlock.transcript import DecodeError, JsonObject, JsonValue

ANTHROPIC = dialect("anthropic")


def _call(n: int, call_id: str) -> JsonObject:
    return {"type": "tool_use", "id": call_id, "name": f"f{n}", "input": {"n": n}}


ITEM_KINDS: list[Callable[[int], JsonObject]] = [
    lambda n: {"role": "user", "content": f"u{n}"},
    lambda n: {"role": "user", "content": [{"type": "text", "text": f"u{n}"}]},
    lambda n: {"role": "user", "content": []},
    lambda n: {"role": "assistant", "content": f"a{n}"},
    lambda n: {"role": "assistant", "content": [{"type": "text", "text": f"a{n}"}], "id": "x"},
    lambda n: {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": f"t{n}", "signature": "c2ln"},
            _call(n, f"c{n}"),
        ],
    },
    lambda n: {"role": "assistant", "content": [_call(n, "c1")]},  # an id used before
    lambda n: {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": f"c{n - 1}", "content": "o"}],
    },
    lambda n: {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "late"},
            {"type": "text", "text": f"and {n}"},
        ],
    },
    lambda n: {"role": "system", "content": f"mid {n}"},
]


def entry_for(payload: JsonObject) -> Entry:
    """The entry a decoded request leaves (its messages and call ids held)."""
    items = payload["messages"]
    assert isinstance(items, list)
    messages = ANTHROPIC.decode_request(payload).messages
    calls = frozenset(part.call_id for message in messages for part in message.tool_calls)
    return Entry(
        source=b"",
        size=0,
        head={},
        head_bytes=0,
        messages=messages,
        call_ids=calls,
        checked_for=None,
        last_item=items[-1],
        lead=lead_count(ANTHROPIC.name, payload),
    )


SYSTEMS: list[JsonValue] = ["be brief", [{"type": "text", "text": "be brief"}]]


@pytest.mark.parametrize("seed", range(150))
def test_new_messages_are_what_the_whole_decode_adds(seed: int) -> None:
    chooser = random.Random(seed)
    items: list[JsonValue] = [{"role": "user", "content": "go"}]
    items += [chooser.choice(ITEM_KINDS)(n) for n in range(1, chooser.randint(2, 12))]
    cut = chooser.randint(1, len(items) - 1)
    members: JsonObject = {"system": SYSTEMS[seed % 2]} if seed % 3 else {}
    whole: JsonObject = {"messages": items, **members}
    prefix: JsonObject = {"messages": items[:cut], **members}
    rest: JsonObject = {"messages": items[cut:], **members}
    expected = ANTHROPIC.decode_request(whole).messages
    entry = entry_for(prefix)
    held = entry.messages
    assert held is not None
    try:
        suffix = ANTHROPIC.decode_request(rest)
    except DecodeError:  # the proxy then decodes the whole body
        suffix = None
    new = new_messages(ANTHROPIC, entry, suffix, rest) if suffix is not None else None
    if new is not None:
        assert held + new == expected
    continuation = Continuation(entry, rest, len(items) - cut, 0)
    count = prefix_count(ANTHROPIC, continuation, expected, items)
    if count is not None:
        assert expected[:count] == held


def test_the_rule_admits_an_agent_step_and_refuses_what_depends_on_the_prefix() -> None:
    step: list[JsonValue] = [
        {"role": "assistant", "content": [_call(7, "c7")]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c7", "content": "o"}]},
    ]
    prefix: JsonObject = {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [_call(1, "c1")]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "o"}],
            },
        ],
        "system": "be brief",
    }
    entry = entry_for(prefix)

    def new(items: list[JsonValue], **members: JsonValue) -> object:
        rest: JsonObject = {"messages": items, "system": "be brief", **members}
        return new_messages(ANTHROPIC, entry, ANTHROPIC.decode_request(rest), rest)

    assert new(step) is not None
    # A result of the prefix's call (named from there), a call id the prefix used, a user
    # turn continuing the prefix's last user turn (it would be marked), another system.
    late = {"type": "tool_result", "tool_use_id": "c1", "content": "late"}
    assert new([step[0], {"role": "user", "content": [late]}]) is None
    reused = {"role": "assistant", "content": [_call(1, "c1")]}
    assert new([reused, {"role": "user", "content": [late]}]) is None
    assert new([{"role": "user", "content": "more"}]) is None
    assert new(step, system="be very brief") is None
