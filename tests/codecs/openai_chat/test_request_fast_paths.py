"""The Chat request decoder's fast paths (no option key at all; plain function tools) give
exactly what its general paths give: generated bodies with and without option keys (odd
values included) and tools of the plain shape and of near-miss shapes (a key more, a null,
a wrong type) decode to the same request, or the same error, with the fast paths off."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.codecs.openai_chat import _request as request_module
from interlock.codecs.openai_chat import _tools as tools_module
from interlock.codecs.openai_chat import decode_request
from interlock.transcript import GenerationOptions, JsonValue
from tests.codecs.fast_paths import outcome

_ODD = st.sampled_from([None, 1, True, [], {}, "", "x", 0.5, -1])
_ABSENT = object()


def _build(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not _ABSENT}


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(_ABSENT), value, _ODD)


_PARAMETERS = st.sampled_from([{"type": "object"}, {"type": "object", "properties": {}}])
_PLAIN_TOOL = st.builds(
    lambda inner: {"type": "function", "function": inner},
    st.builds(
        _build,
        name=st.sampled_from(["f", "get_weather"]),
        description=st.sampled_from(["d", _ABSENT, None]),
        parameters=st.one_of(st.just(_ABSENT), _PARAMETERS),
    ),
)
_FUNCTION = st.builds(
    _build,
    name=_maybe(st.just("f")),
    description=_maybe(st.just("d")),
    parameters=st.one_of(st.just(_ABSENT), _PARAMETERS, _ODD),
    strict=_maybe(st.booleans()),
    extra=_maybe(st.just("e")),
)
_WIDE_TOOL = st.one_of(
    st.builds(
        _build,
        type=st.sampled_from([_ABSENT, "function", "custom", "web_search", "openrouter:x", 1]),
        function=st.one_of(st.just(_ABSENT), _FUNCTION, _ODD),
        custom=st.one_of(st.just(_ABSENT), _FUNCTION),
        extra=st.sampled_from([_ABSENT, 1]),
    ),
    _ODD,
)


@st.composite
def _near_miss_tool(draw: st.DrawFn) -> JsonValue:
    """A plain tool with one thing changed: a key of it or of its function set to an odd
    value, removed, or added."""
    tool: Any = json.loads(json.dumps(draw(_PLAIN_TOOL)))
    target = draw(st.sampled_from([tool, tool["function"]]))
    key = draw(st.sampled_from([*target, "strict", "x"]))
    if draw(st.booleans()) and key in target:
        del target[key]
    else:
        target[key] = draw(st.one_of(st.none(), _ODD))
    return tool


_TOOL = st.one_of(_PLAIN_TOOL, _near_miss_tool(), _near_miss_tool(), _WIDE_TOOL)
_TOOLS = st.one_of(st.lists(_TOOL, min_size=1, max_size=3), st.just(_ABSENT), _ODD)
_OPTION_VALUES = st.one_of(
    _ODD,
    st.sampled_from([0.5, 2, 100, "low", ["s"], "s", {"effort": "high"}, {"max_tokens": 9}]),
)
_OPTION_NAMES = [
    *("temperature", "top_p", "seed", "reasoning_effort", "max_completion_tokens", "max_tokens"),
    *("stop", "reasoning", "include_reasoning", "presence_penalty", "frequency_penalty"),
    *("user", "metadata", "n", "logprobs", "top_logprobs"),
]
"""Every option field Chat's decoder reads (written out: not the decoder's own list)."""
_OPTIONS = st.dictionaries(st.sampled_from(_OPTION_NAMES), _OPTION_VALUES, max_size=3)


@st.composite
def _bodies(draw: st.DrawFn) -> dict[str, JsonValue]:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    tools = draw(_TOOLS)
    if tools is not _ABSENT:
        body["tools"] = tools
    if draw(st.booleans()):
        body.update(draw(_OPTIONS))
    if draw(st.booleans()):
        body[draw(st.sampled_from(["stream", "store", "tool_choice", "vendor"]))] = draw(_ODD)
    return json.loads(json.dumps(body))


def _general(body: dict[str, JsonValue]) -> object:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(request_module, "options_absent", lambda body: False)
        patch.setattr(tools_module, "plain_function", lambda item: None)
        return outcome(lambda: decode_request(body))


@settings(max_examples=800, deadline=None)
@given(_bodies())
def test_a_request_decodes_alike_with_and_without_the_fast_paths(
    body: dict[str, JsonValue],
) -> None:
    assert outcome(lambda: decode_request(body)) == _general(body)


def test_the_fast_paths_are_taken_for_the_common_shapes() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    assert tools_module.plain_function(tool) is not None
    assert request_module.options_absent({"model": "m", "messages": [], "tools": [tool]})
    decoded = decode_request({"model": "m", "messages": [], "tools": [tool]})
    assert decoded.options is request_module.NO_OPTIONS
    assert decoded.options == GenerationOptions()


@pytest.mark.parametrize(
    "tool",
    [
        {"type": "function", "function": {"name": "f", "parameters": None}},
        {"type": "function", "function": {"name": "f", "strict": True}},
        {"type": "function", "function": {"name": "f", "description": 1}},
        {"type": "function", "function": {"name": 1}},
        {"type": "function", "function": {"name": "f"}, "x": 1},
        {"type": "custom", "custom": {"name": "f"}},
        {"type": "function", "function": "f"},
    ],
)
def test_near_miss_tools_take_the_general_path(tool: JsonValue) -> None:
    assert tools_module.plain_function(tool) is None


@pytest.mark.parametrize("name", _OPTION_NAMES)
def test_any_option_key_takes_the_general_path(name: str) -> None:
    assert not request_module.options_absent({"model": "m", name: None})
