"""A model call's request as sent (``prepared_for``): the loop's request with ``stream``
set, copied field by field without ``dataclasses.replace`` — the same request
``replace`` gives, whatever its fields hold."""

from __future__ import annotations

from dataclasses import fields, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from interlock.gateway.agui._routed import _streaming  # pyright: ignore[reportPrivateUsage]
from interlock.transcript import (
    Continuation,
    GenerationOptions,
    Message,
    Request,
    ResponseFormat,
    TextPart,
    ToolChoice,
)

_REQUESTS = st.builds(
    Request,
    model=st.text(max_size=3),
    messages=st.lists(
        st.builds(lambda text: Message(role="user", parts=(TextPart(text=text),)), st.text()),
        max_size=2,
    ).map(tuple),
    tool_choice=st.one_of(st.none(), st.builds(ToolChoice, mode=st.sampled_from(["auto", "none"]))),
    parallel_tool_calls=st.one_of(st.none(), st.booleans()),
    stream=st.booleans(),
    options=st.builds(GenerationOptions, temperature=st.one_of(st.none(), st.floats(0, 2))),
    continuation=st.builds(Continuation, store=st.one_of(st.none(), st.booleans())),
    response_format=st.one_of(st.none(), st.just(ResponseFormat(type="json_object"))),
    extra=st.dictionaries(st.sampled_from(["a", "b"]), st.just({"k": 1}), max_size=1),
)


@settings(deadline=None)
@given(_REQUESTS)
def test_a_streaming_copy_is_what_replace_gives(request: Request) -> None:
    copied = _streaming(request)
    expected = replace(request, stream=True)
    assert copied == expected
    for field in fields(Request):  # the very values (equality alone would let 1 for 1.0 pass)
        assert getattr(copied, field.name) is getattr(expected, field.name)
