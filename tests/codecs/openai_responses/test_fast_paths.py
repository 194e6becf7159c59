"""The Responses codec's fast paths give exactly what its general paths give.

Generated ``input`` items of the shapes the decode fast path takes (``_plain``: plain
input and assistant messages, function calls and outputs with and without ids, reasoning
items), near misses of them (a key removed, a key more, a null or a wrong type anywhere,
a minted id) and wide random items are decoded in generated orders with the fast path
and with it switched off: the requests (or errors) are equal, boundary marks between
items of one id included.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs import openai_responses
from interlock.codecs.openai_responses import _items as items_module
from interlock.transcript import DecodeError, JsonValue

_TEXT = st.text(max_size=5)
_ID = st.sampled_from(["msg_1", "msg_interlock_2", "rs_1", "rs_interlock_3", "fc_1", ""])
_ODD = st.sampled_from([None, 1, True, [], {}, "", "x", 0.5, "message", "completed"])
_ABSENT = object()
"""A key left out of a generated object."""


def _build(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not _ABSENT}


def _optional(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(_ABSENT), value)


_INPUT_TEXT = st.builds(lambda text: {"type": "input_text", "text": text}, _TEXT)
_OUTPUT_TEXT = st.builds(
    lambda text: {"type": "output_text", "text": text, "annotations": []}, _TEXT
)
_SUMMARY = st.builds(lambda text: {"type": "summary_text", "text": text}, _TEXT)
_PLAIN_ITEM = st.one_of(
    st.builds(
        _build,
        type=_optional(st.just("message")),
        role=st.sampled_from(["user", "system", "developer"]),
        content=st.one_of(_TEXT, st.lists(_INPUT_TEXT, max_size=2)),
    ),
    st.builds(_build, type=_optional(st.just("message")), role=st.just("assistant"), content=_TEXT),
    st.builds(
        _build,
        id=_ID,
        type=st.just("message"),
        status=st.just("completed"),
        role=st.just("assistant"),
        content=st.lists(_OUTPUT_TEXT, min_size=1, max_size=2),
    ),
    st.builds(
        _build,
        type=st.just("function_call"),
        id=_optional(_ID),
        status=_optional(st.just("completed")),
        call_id=st.sampled_from(["c", "d"]),
        name=st.sampled_from(["f", "g"]),
        arguments=st.sampled_from(["{}", '{"a": 1}', ""]),
    ),
    st.builds(
        _build,
        type=st.just("function_call_output"),
        id=_optional(_ID),
        call_id=st.sampled_from(["c", "d"]),
        output=_TEXT,
    ),
    st.builds(
        _build,
        type=st.just("reasoning"),
        id=_optional(_ID),
        summary=st.lists(_SUMMARY, max_size=2),
        encrypted_content=_optional(st.sampled_from(["blob", ""])),
    ),
)
_ADDED: list[tuple[str, JsonValue]] = [
    ("id", "msg_9"),
    ("status", "completed"),
    ("status", "in_progress"),
    ("content", []),
    ("content", [{"type": "reasoning_text", "text": "r"}]),
    ("annotations", [{"type": "url_citation", "url": "https://e.com"}]),
    ("logprobs", []),
    ("encrypted_content", None),
    ("role", "assistant"),
    ("type", None),
    ("extra", 1),
]


@st.composite
def _near_miss(draw: st.DrawFn) -> JsonValue:
    """A plain item with one thing changed anywhere in it (the item or one of its content
    or summary entries): a key removed, set to an odd value, or one of :data:`_ADDED`
    added."""
    item: Any = json.loads(json.dumps(draw(_PLAIN_ITEM)))
    objects: list[dict[str, Any]] = [item]
    for key in ("content", "summary"):
        if isinstance(item.get(key), list):
            objects += [entry for entry in item[key] if isinstance(entry, dict)]
    target = draw(st.sampled_from(objects))
    change = draw(st.sampled_from(["remove", "odd", "add"]))
    if change == "add" or not target:
        key, value = draw(st.sampled_from(_ADDED))
        target[key] = value
        return item
    key = draw(st.sampled_from(sorted(target)))
    if change == "remove":
        del target[key]
    else:
        target[key] = draw(_ODD)
    return item


_WIDE_ITEM = st.one_of(
    _ODD,
    st.builds(
        _build,
        type=st.sampled_from(
            [_ABSENT, "message", "function_call", "function_call_output", "reasoning", None, 1]
        ),
        role=st.sampled_from([_ABSENT, "user", "assistant", "tool", None]),
        id=_optional(st.one_of(_ID, _ODD)),
        content=_optional(st.one_of(_TEXT, st.lists(st.one_of(_INPUT_TEXT, _OUTPUT_TEXT)), _ODD)),
        summary=_optional(st.one_of(st.lists(_SUMMARY, max_size=1), _ODD)),
    ),
)
_ITEM = st.one_of(_PLAIN_ITEM, _PLAIN_ITEM, _near_miss(), _near_miss(), _WIDE_ITEM)


def _outcome(action: Callable[[], object]) -> object:
    """The result's repr (dict key order included), or the error."""
    try:
        return repr(action())
    except DecodeError as error:
        return ("DecodeError", error.path, str(error))


def _general(action: Callable[[], object]) -> object:
    """The outcome of ``action`` with the decode fast path switched off."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(items_module._Grouper, "add_plain", lambda self, data: False)
        return _outcome(action)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_ITEM, min_size=1, max_size=8), st.sampled_from(["openai", "xai"]))
def test_items_decode_alike_with_and_without_the_fast_path(
    items: list[JsonValue], issuer: str
) -> None:
    body: dict[str, JsonValue] = {"model": "m", "input": items}
    decode = lambda: openai_responses.decode_request(body, issuer=issuer)  # noqa: E731
    assert _outcome(decode) == _general(decode)


def _same_id_runs() -> st.SearchStrategy[list[JsonValue]]:
    """Items of one kind and id in a row (where the boundary mark decides the grouping)."""
    message = st.builds(
        lambda item_id, text: {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        },
        st.sampled_from(["msg_1", "msg_interlock_1"]),
        _TEXT,
    )
    idless = st.builds(lambda text: {"role": "assistant", "content": text}, _TEXT)
    reasoning = st.builds(
        lambda item_id: _build(type="reasoning", id=item_id, summary=[]),
        st.sampled_from([_ABSENT, "rs_1", "rs_interlock_1"]),
    )
    return st.lists(st.one_of(message, idless, reasoning), min_size=2, max_size=6)


@settings(max_examples=400, deadline=None)
@given(_same_id_runs())
def test_runs_of_one_item_id_decode_alike(items: list[JsonValue]) -> None:
    body: dict[str, JsonValue] = {"input": items}
    decode = lambda: openai_responses.decode_request(body)  # noqa: E731
    assert _outcome(decode) == _general(decode)


def test_the_commonest_items_take_the_fast_path() -> None:
    grouper = items_module._Grouper("openai")
    for item in [
        {"role": "user", "content": "hi"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "blob"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "r"},
        {"role": "assistant", "content": "done", "type": "message"},
    ]:
        assert grouper.add_plain(item)
    assert [message.role for message in grouper.messages] == ["user", "user", "assistant", "tool"]


@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "content": "hi", "id": "m"},
        {"role": "user", "content": [{"type": "input_image", "image_url": "https://e.com/a"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "t"}]},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": {}},
        {"type": "function_call_output", "call_id": "c", "output": [], "id": "x"},
        {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "r"}]},
        {"type": "mcp_call", "id": "m"},
    ],
)
def test_other_items_take_the_general_path(item: dict[str, JsonValue]) -> None:
    assert not items_module._Grouper("openai").add_plain(item)
