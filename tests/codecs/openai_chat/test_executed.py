"""Groq's ``executed_tools``, ``mcp_list_tools`` and ``usage_breakdown``: decoded into the
canonical model (hosted parts, ``Usage.breakdown``), carried back, never lost silently.

The payloads are hand-written from Groq's documented response types (``ExecutedTool``,
``McpListTool``, ``UsageBreakdown``, the chunk's ``x_groq``): no public recording holds these
fields filled, so they are not corpus payloads.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from interlock.codecs._sse import SseEvent
from interlock.codecs.openai_chat import (
    StreamDecoder,
    StreamEncoder,
    decode_response,
    encode_request,
    encode_response,
    vendor_response_fields,
)
from interlock.codecs.registry import wire_codec
from interlock.transcript import (
    HostedToolPart,
    LossyHistoryError,
    Message,
    ReplayPolicy,
    Request,
    Response,
    TextPart,
    Update,
    dump_response,
    fold_updates,
    response_to_updates,
)

ARGUMENTS = '{"query": "weather Paris"}'
RESULTS: dict[str, Any] = {
    "results": [{"title": "Forecast", "url": "https://weather.example/p", "score": 0.9}]
}
SEARCH: dict[str, Any] = {
    "index": 0,
    "type": "search",
    "arguments": ARGUMENTS,
    "output": "Sunny",
    "search_results": RESULTS,
}
CODE: dict[str, Any] = {
    "index": 1,
    "type": "python",
    "arguments": '{"code": "print(21)"}',
    "output": "21\n",
    "code_results": [{"text": "21"}],
}
LISTED: dict[str, Any] = {
    "id": "mcpl_1",
    "type": "mcp_list_tools",
    "server_label": "weather",
    "tools": [
        {
            "name": "forecast",
            "description": "The forecast of a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            "annotations": None,
        }
    ],
}
BREAKDOWN: dict[str, Any] = {
    "models": [
        {
            "model": "openai/gpt-oss-120b",
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        }
    ]
}
COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-groq",
    "object": "chat.completion",
    "created": 1760000000,
    "model": "groq/compound",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Sunny, 21 C.",
                "reasoning": "I searched, then computed.",
                "executed_tools": [SEARCH, CODE],
            },
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    "usage_breakdown": BREAKDOWN,
    "mcp_list_tools": [LISTED],
    "system_fingerprint": "fp_1",
    "x_groq": {"id": "req_1"},
}


def test_executed_tools_decode_as_groq_hosted_parts_and_come_back_exactly() -> None:
    response = decode_response(COMPLETION)
    runs = [part for part in response.message.parts if isinstance(part, HostedToolPart)]
    assert [(run.provider, run.item_type, run.item, run.server_label) for run in runs] == [
        ("groq", "mcp_list_tools", LISTED, "weather"),
        ("groq", "search", SEARCH, None),
        ("groq", "python", CODE, None),
    ]
    assert response.usage is not None
    assert [(entry.model, entry.usage.input_tokens) for entry in response.usage.breakdown] == [
        ("openai/gpt-oss-120b", 3)
    ]
    assert encode_response(response) == COMPLETION
    assert vendor_response_fields(response.extra) == []


@pytest.mark.parametrize(
    "odd",
    [{"models": []}, {"models": [{"model": "m"}]}, {"models": [], "total": 1}, "x"],
)
def test_a_breakdown_of_another_shape_stays_a_field(odd: Any) -> None:
    body = {**COMPLETION, "usage_breakdown": odd}
    response = decode_response(body)
    assert response.usage is not None and response.usage.breakdown == ()
    assert vendor_response_fields(response.extra) == ["usage_breakdown"]
    assert encode_response(response) == body


def test_plain_openai_gets_no_groq_fields() -> None:
    answer = encode_response(decode_response(COMPLETION), reasoning_dialect="none")
    assert {"mcp_list_tools", "usage_breakdown"}.isdisjoint(answer)


def test_an_empty_executed_tools_list_stays_a_field() -> None:
    body = json.loads(json.dumps(COMPLETION))
    body["choices"][0]["message"]["executed_tools"] = []
    response = decode_response(body)
    hosted = [part for part in response.message.parts if isinstance(part, HostedToolPart)]
    assert [part.item_type for part in hosted] == ["mcp_list_tools"]
    assert encode_response(response) == body


def _chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> SseEvent:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "groq/compound"}
    return SseEvent(data=json.dumps({**head, "choices": [choice], **top}))


STREAM = [
    _chunk({"role": "assistant", "content": ""}, x_groq={"id": "req_1"}, mcp_list_tools=[LISTED]),
    _chunk({"reasoning": "Searching."}),
    _chunk({"executed_tools": [{"index": 0, "type": "search", "arguments": ARGUMENTS}]}),
    _chunk({"executed_tools": [{"index": 0, "output": "Sunny", "search_results": RESULTS}]}),
    _chunk({"content": "Sunny."}),
    _chunk(
        {},
        "stop",
        x_groq={
            "id": "req_1",
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            "usage_breakdown": BREAKDOWN,
        },
    ),
    SseEvent(data="[DONE]"),
]


def _fold(events: list[SseEvent]) -> Response:
    decoder = StreamDecoder()
    updates: list[Update] = []
    for event in events:
        updates.extend(decoder.feed(event))
    return fold_updates(updates + decoder.finish())


def test_a_streamed_run_merges_its_deltas_by_index() -> None:
    folded = _fold(STREAM)
    listed, run = [part for part in folded.message.parts if isinstance(part, HostedToolPart)]
    assert (listed.item_type, listed.item) == ("mcp_list_tools", LISTED)
    assert run.item == {**SEARCH, "index": 0} | {"search_results": RESULTS}
    assert run.item_type == "search"
    assert folded.message.text == "Sunny."
    assert folded.usage is not None
    assert [entry.model for entry in folded.usage.breakdown] == ["openai/gpt-oss-120b"]
    assert vendor_response_fields(folded.extra) == []


@pytest.mark.parametrize("dialect", [None, "reasoning"])
def test_a_chat_stream_carries_the_runs_and_breakdown_back(dialect: Any) -> None:
    folded = _fold(STREAM)
    encoder = StreamEncoder(reasoning_dialect=dialect, include_usage=True)
    events: list[SseEvent] = []
    for update in response_to_updates(folded):
        events.extend(encoder.encode(update))
    events.extend(encoder.finish())
    assert dump_response(_fold(events)) == dump_response(folded)
    assert folded.usage is not None and folded.usage.breakdown


def test_a_breakdown_before_its_usage_joins_it() -> None:
    """The breakdown in the finish chunk's ``x_groq``, the usage in a last chunk (a stream
    asked with ``include_usage``): the usage carries it all the same."""
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    events = [
        _chunk({"role": "assistant", "content": "Hi"}),
        _chunk({}, "stop", x_groq={"usage_breakdown": BREAKDOWN}),
        SseEvent(data=json.dumps({"id": "c1", "choices": [], "usage": usage})),
        SseEvent(data="[DONE]"),
    ]
    folded = _fold(events)
    assert folded.usage is not None and folded.usage.output_tokens == 2
    assert [entry.model for entry in folded.usage.breakdown] == ["openai/gpt-oss-120b"]
    assert "openai-chat:x_groq" not in folded.extra


def test_plain_openai_gets_no_executed_tools() -> None:
    """A plain-OpenAI Chat client's stream has no field for the runs (``none`` dialect)."""
    encoder = StreamEncoder(reasoning_dialect="none")
    events: list[SseEvent] = []
    for update in response_to_updates(_fold(STREAM)):
        events.extend(encoder.encode(update))
    events.extend(encoder.finish())
    for field in ("executed_tools", "mcp_list_tools", "usage_breakdown"):
        assert all(field not in event.data for event in events)


def _history(listed: bool = True) -> Request:
    completion = COMPLETION if listed else {**COMPLETION, "mcp_list_tools": None}
    answer = decode_response(completion).message
    return Request(
        model="m",
        messages=(
            Message(role="user", parts=(TextPart(text="Weather?"),)),
            answer,
            Message(role="user", parts=(TextPart(text="And tomorrow?"),)),
        ),
    )


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("openai-responses", "hosted_item_not_carried"),
        ("gemini", "hosted_item_unsupported"),
        ("anthropic", "hosted_item_unsupported"),
    ],
)
def test_every_other_dialect_refuses_or_warns_about_each_run(target: Any, code: str) -> None:
    codec = wire_codec(target)
    with pytest.raises(LossyHistoryError) as refused:
        codec.encode_request(_history(), ReplayPolicy(mode="strict"))
    assert refused.value.code == code
    warned = codec.encode_request(_history(), ReplayPolicy(mode="degrade")).warnings
    hosted = [w.location for w in warned if w.code == code]  # the listing, then the runs
    assert hosted == ["messages[1].parts[0]", "messages[1].parts[3]", "messages[1].parts[4]"]


def test_a_chat_history_keeps_the_runs_for_compatible_upstreams_only() -> None:
    kept = encode_request(_history(listed=False), reasoning_dialect="reasoning").payload
    assert kept["messages"][1]["executed_tools"] == [SEARCH, CODE]
    with pytest.raises(LossyHistoryError) as refused:
        encode_request(_history(listed=False), reasoning_dialect="none")
    assert refused.value.code == "part_unsupported"
    degraded = encode_request(
        _history(listed=False), reasoning_dialect="none", policy=ReplayPolicy(mode="degrade")
    )
    assert "executed_tools" not in degraded.payload["messages"][1]
    assert [w.code for w in degraded.warnings].count("part_unsupported") == 2


def test_a_chat_history_has_no_form_for_a_tool_listing() -> None:
    """Groq's request messages take no ``mcp_list_tools``: like another provider's hosted
    item, refused under strict, left out with a warning under degrade."""
    with pytest.raises(LossyHistoryError) as refused:
        encode_request(_history(), reasoning_dialect="reasoning")
    assert refused.value.location == "messages[1].parts[0]"
    degraded = encode_request(
        _history(), reasoning_dialect="reasoning", policy=ReplayPolicy(mode="degrade")
    )
    assert [w.location for w in degraded.warnings] == ["messages[1].parts[0]"]
    assert degraded.payload["messages"][1]["executed_tools"] == [SEARCH, CODE]
