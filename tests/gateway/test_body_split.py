"""body_split.split: the history split of a body without json-decoding its history array,
equal to history_cache.split_body whenever it answers, and taken for ordinary bodies."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
from hypothesis import strategies as st

from interlock.gateway import body_split
from interlock.gateway.history_cache import split_body
from interlock.transcript import JsonObject, JsonValue

KEYS = ["messages", "tools", "model", "stream", "a", "é", ":", "", 'to"ols', "tools\\"]
"""Keys that also appear nested and inside strings, some needing escapes."""

scalars = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.text(max_size=12)
strings = st.sampled_from(['"tools":', '\\"tools\\"', '"tools"', "]", "}", "\\", ",", "x"])
values: st.SearchStrategy[JsonValue] = st.recursive(
    scalars | strings,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS), children, max_size=3)
    ),
    max_leaves=12,
)
items = st.lists(
    st.dictionaries(st.sampled_from(KEYS), values, max_size=3) | values, min_size=0, max_size=3
)
members = st.dictionaries(st.sampled_from([k for k in KEYS if k != "messages"]), values)


def written(payload: JsonObject, style: int) -> str:
    """``payload`` as one of several spellings (spacing, indentation, escapes)."""
    match style:
        case 0:
            return json.dumps(payload, separators=(",", ":"))
        case 1:
            return json.dumps(payload)
        case 2:
            return " \n" + json.dumps(payload, indent=1, ensure_ascii=False) + "\r\n"
        case _:
            return json.dumps(payload, indent="\t", separators=(" ,", " : "))


@settings(max_examples=400, deadline=None)
@given(members, items, st.integers(0, 6), st.integers(0, 3))
@example({"model": "m", "tools": [{"tools": 1}]}, [{"role": "tool", "content": '"tools"'}], 1, 0)
@example({"tools": [], "model": "m"}, [{"content": '"tools": []}'}], 2, 1)
def test_the_split_is_split_body_or_nothing(
    others: JsonObject, history: list[JsonValue], place: int, style: int
) -> None:
    pairs = list(others.items())
    place = min(place, len(pairs))
    payload = dict([*pairs[:place], ("messages", history), *pairs[place:]])
    text = written(payload, style)
    fast = body_split.split(text.encode(), text, "messages")
    assert fast is None or fast == split_body(text, "messages")


def tool_result_body(*, model_last: bool, spacing: str) -> str:
    rows = json.dumps([{"row": i, "value": "x" * 40} for i in range(3000)])
    messages = [
        {"role": "user", "content": "Summarise the table."},
        {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {}}]},
        {"role": "tool", "tool_call_id": "c", "content": rows},
    ]
    tools = [{"type": "function", "function": {"name": "t", "parameters": {"tools": "x"}}}]
    payload: JsonObject = {"messages": messages, "tools": tools, "model": "m"}
    if not model_last:
        payload = {"model": "m", **payload}
    return json.dumps(payload, separators=(",", spacing))


@given(st.booleans(), st.sampled_from([":", ": ", " : "]))
def test_a_large_tool_result_takes_the_split_without_decoding_its_history(
    model_last: bool, spacing: str
) -> None:
    text = tool_result_body(model_last=model_last, spacing=spacing)
    fast = body_split.split(text.encode(), text, "messages")
    assert fast is not None
    assert fast == split_body(text, "messages")
    assert text.encode().startswith(b'"m"', fast.model_at)


def test_the_history_last_takes_the_split() -> None:
    text = '{"model": "m", "messages": [{"role": "user", "content": "]}"}] \n}'
    fast = body_split.split(text.encode(), text, "messages")
    assert fast is not None and fast == split_body(text, "messages")


def test_what_it_cannot_be_sure_of_is_left_to_split_body() -> None:
    escaped_key = '{"messages":[{"a":1}],"tool\\u0073":[]}'
    repeated = '{"messages":[{"a":1}],"tools":[],"tools":[1]}'
    long_number = '{"messages":[{"a":123456789012345678901234}],"tools":[]}'
    for text in (escaped_key, repeated, long_number, '{"messages":[1],"b":2}'):
        assert body_split.split(text.encode(), text, "messages") is None
    assert split_body(escaped_key, "messages") is not None


def test_a_lone_surrogate_escape_is_left_to_split_body_and_its_check() -> None:
    """The split's body needs no surrogate search (``known_bytes`` is all of it): orjson
    refuses a lone surrogate escape, so such a body takes split_body and the search."""
    for escape in ("\\ud800", "\\udfff", "\\ud83dx", "\\ud83d\\u0041"):
        text = '{"messages":[{"content":"' + escape + '"}],"tools":[]}'
        assert body_split.split(text.encode(), text, "messages") is None
    paired = '{"messages":[{"content":"\\ud83d\\ude00"}],"tools":[]}'
    assert body_split.split(paired.encode(), paired, "messages") == split_body(paired, "messages")
