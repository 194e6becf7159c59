"""Kept wire fields go back only where the target accepts them (``_fields.py``).

Regression for the conformance findings ``sdk openai_chat[…] messages[1].annotations`` and
``sdk openai_chat[…] body.reasoning`` / ``messages[1].reasoning``: fields kept for exact
same-dialect round trips were re-sent to other Chat upstreams, plain OpenAI included.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionChunk,
    ChatCompletionDeveloperMessageParam,
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
    chat_completion,
    chat_completion_chunk,
)
from openai.types.chat.chat_completion_message_custom_tool_call_param import (
    ChatCompletionMessageCustomToolCallParam,
)
from openai.types.chat.completion_create_params import CompletionCreateParamsBase

from interlock.codecs.openai_chat import (
    REASONING_DIALECTS,
    ReasoningDialect,
    StreamDecoder,
    StreamEncoder,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
)
from interlock.codecs.openai_chat._fields import OPENAI_KEYS, admits
from interlock.transcript import (
    Message,
    ReplayPolicy,
    Request,
    TextPart,
    ToolResultPart,
    response_to_updates,
)
from tests.codecs.openai_chat.fixtures_helpers import events, load, trace
from tests.codecs.openai_chat.test_request import validate_messages

EXPLICIT: tuple[ReasoningDialect, ...] = REASONING_DIALECTS
DEGRADE = ReplayPolicy(mode="degrade")
OTHER_THAN_OPENROUTER = tuple(d for d in EXPLICIT if d != "openrouter")


def _declared(*types: Any) -> frozenset[str]:
    keys: set[str] = set()
    for kind in types:
        if hasattr(kind, "model_fields"):
            keys |= set(kind.model_fields)
        else:
            keys |= set(typing.get_type_hints(kind))
    return frozenset(keys)


@pytest.mark.parametrize(
    ("scope", "types"),
    [
        ("request", (CompletionCreateParamsBase,)),
        ("system", (ChatCompletionSystemMessageParam,)),
        ("developer", (ChatCompletionDeveloperMessageParam,)),
        ("user", (ChatCompletionUserMessageParam,)),
        ("assistant", (ChatCompletionAssistantMessageParam,)),
        ("tool", (ChatCompletionToolMessageParam,)),
        (
            "tool_call",
            (
                ChatCompletionMessageFunctionToolCallParam,
                ChatCompletionMessageCustomToolCallParam,
                chat_completion_chunk.ChoiceDeltaToolCall,
            ),
        ),
        ("response", (ChatCompletion, ChatCompletionChunk)),
        ("choice", (chat_completion.Choice, chat_completion_chunk.Choice)),
        ("response_message", (ChatCompletionMessage,)),
        ("usage", (CompletionUsage,)),
    ],
)
def test_openai_keys_are_what_the_sdk_declares(scope: str, types: tuple[Any, ...]) -> None:
    expected = _declared(*types) | ({"stream"} if scope == "request" else set())
    assert OPENAI_KEYS[scope] == expected  # type: ignore[index]  # scope is a Scope literal


def _history_with(message: dict[str, Any]) -> Request:
    return decode_request({"model": "m", "messages": [{"role": "user", "content": "hi"}, message]})


ANNOTATED = {
    "role": "assistant",
    "content": None,
    "refusal": "I can't help with that.",
    "annotations": [],
}


@pytest.mark.parametrize("dialect", EXPLICIT)
def test_response_only_annotations_are_not_replayed_to_any_upstream(
    dialect: ReasoningDialect,
) -> None:
    encoded = encode_request(_history_with(ANNOTATED), reasoning_dialect=dialect)
    message = encoded.payload["messages"][1]  # type: ignore[index]
    assert message == {"role": "assistant", "refusal": "I can't help with that.", "content": None}
    validate_messages(encoded.payload["messages"], dialect)  # type: ignore[arg-type]
    assert encoded.warnings == ()  # an empty list carried nothing


def test_as_decoded_keeps_every_field_for_exact_round_trips() -> None:
    payload = {"model": "m", "messages": [{"role": "user", "content": "hi"}, ANNOTATED]}
    assert encode_request(decode_request(payload)).payload == payload


def test_non_empty_annotations_are_dropped_with_a_warning() -> None:
    cited = {**ANNOTATED, "annotations": [{"type": "url_citation", "url_citation": {}}]}
    encoded = encode_request(_history_with(cited), reasoning_dialect="none")
    assert "annotations" not in encoded.payload["messages"][1]  # type: ignore[index, operator]
    assert [(w.code, w.location) for w in encoded.warnings] == [
        ("field_dropped", "messages[1].extra.annotations")
    ]


@pytest.mark.parametrize("dialect", OTHER_THAN_OPENROUTER)
def test_openrouter_fields_go_to_openrouter_only(dialect: ReasoningDialect) -> None:
    request = decode_request(load("request_openrouter.json"))
    encoded = encode_request(request, policy=DEGRADE, reasoning_dialect=dialect)
    body = encoded.payload
    assert not {"reasoning", "provider", "usage"} & set(body)
    assistant = body["messages"][1]  # type: ignore[index]
    # The flat rendering of the summary is never relabelled as raw `reasoning` text.
    assert "reasoning" not in assistant  # type: ignore[operator]
    # OpenRouter's reasoning.effort is the canonical effort: sent as reasoning_effort
    assert body["reasoning_effort"] == "high"
    dropped = {w.location for w in encoded.warnings if w.code == "field_dropped"}
    # (the Gemini-issued details themselves are dropped as foreign opaque payloads)
    assert dropped == {
        "extra.provider",
        "extra.usage",
        "messages[1].extra.reasoning",
    }


def test_openrouter_fields_stay_for_openrouter() -> None:
    wire = load("request_openrouter.json")
    encoded = encode_request(decode_request(wire), reasoning_dialect="openrouter")
    assert encoded.payload == wire
    assert encoded.warnings == ()


def test_plain_openai_gets_only_declared_fields_and_compatible_servers_keep_theirs() -> None:
    wire = load("request_reasoning.json")  # vLLM: chat_template_kwargs, top_k
    request = decode_request(wire)
    to_openai = encode_request(request, reasoning_dialect="none")
    assert not {"chat_template_kwargs", "top_k"} & set(to_openai.payload)
    assert {w.location for w in to_openai.warnings if w.code == "field_dropped"} == {
        "extra.chat_template_kwargs",
        "extra.top_k",
    }
    to_vllm = encode_request(request, reasoning_dialect="reasoning")
    assert to_vllm.payload == wire
    to_deepseek = encode_request(request, reasoning_dialect="reasoning_content")
    assert "top_k" in to_deepseek.payload  # unknown to us, fine for a compatible server
    assert "chat_template_kwargs" not in to_deepseek.payload  # vLLM's own


def test_vendor_request_options_go_to_their_dialect_only() -> None:
    deepseek = decode_request(load("request_reasoning_content.json"))
    gemini = decode_request(load("request_gemini_compat.json"))
    for dialect in EXPLICIT:
        to_target = encode_request(deepseek, policy=DEGRADE, reasoning_dialect=dialect)
        assert ("thinking" in to_target.payload) is (dialect == "reasoning_content")
        to_target = encode_request(gemini, policy=DEGRADE, reasoning_dialect=dialect)
        assert ("extra_body" in to_target.payload) is (dialect == "gemini-compat")


@pytest.mark.parametrize("dialect", EXPLICIT)
def test_a_response_replayed_as_history_validates_for_every_upstream(
    dialect: ReasoningDialect,
) -> None:
    """The positional ``index`` of a response's tool call is not a request field."""
    response = decode_response(load("response_openrouter.json"))
    results = Message(
        role="tool",
        parts=(ToolResultPart(call_id="tool_book_0", output=(TextPart(text="ok"),)),),
    )
    history = Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="hi"),)), response.message, results),
    )
    encoded = encode_request(history, policy=DEGRADE, reasoning_dialect=dialect)
    messages = encoded.payload["messages"]
    call = messages[1]["tool_calls"][0]  # type: ignore[index]
    assert "index" not in call  # type: ignore[operator]
    validate_messages(messages[:2], dialect)  # type: ignore[arg-type, index]
    assert not [w for w in encoded.warnings if w.location.endswith(".index")]


def test_responses_keep_vendor_fields_for_their_own_clients_only() -> None:
    wire = load("response_openrouter.json")
    response = decode_response(wire)
    assert encode_response(response, reasoning_dialect="openrouter") == wire
    plain = encode_response(response, reasoning_dialect="none")
    assert "provider" not in plain
    assert "native_finish_reason" not in plain["choices"][0]  # type: ignore[index, operator]
    assert "cost" not in plain["usage"]  # type: ignore[operator]
    message = plain["choices"][0]["message"]  # type: ignore[index]
    assert not {"reasoning", "reasoning_details"} & set(message)  # type: ignore[arg-type]
    assert message["tool_calls"][0]["index"] == 0  # type: ignore[index]  # a response field
    ChatCompletion.model_validate(plain)
    deepseek = decode_response(load("response_reasoning_content.json"))
    usage = encode_response(deepseek, reasoning_dialect="none")["usage"]
    assert "prompt_cache_hit_tokens" not in usage  # type: ignore[operator]
    kept = encode_response(deepseek, reasoning_dialect="reasoning_content")["usage"]
    assert kept["prompt_cache_hit_tokens"] == 128  # type: ignore[index]


def test_streams_keep_vendor_fields_for_their_own_clients_only() -> None:
    decoder = StreamDecoder()
    updates = [u for e in events(trace("stream_openrouter.jsonl")) for u in decoder.feed(e)]
    for dialect, has_provider in (("none", False), ("openrouter", True)):
        encoder = StreamEncoder(reasoning_dialect=dialect, include_usage=True)
        chunks = [e for u in updates for e in encoder.encode(u)] + encoder.finish()
        bodies = [json.loads(e.data) for e in chunks if e.data != "[DONE]"]
        assert all(("provider" in body) is has_provider for body in bodies)


def test_gemini_compat_usage_convention_is_only_kept_for_gemini_compat_clients() -> None:
    wire = load("response_gemini_compat.json")
    response = decode_response(wire)
    assert encode_response(response, reasoning_dialect="gemini-compat") == wire
    usage = encode_response(response, reasoning_dialect="none")["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]  # type: ignore[index, operator]


def test_kept_carrier_nulls_go_to_their_own_dialect() -> None:
    assert admits("assistant", "reasoning_content", None, "reasoning_content", request=True)
    assert not admits("assistant", "reasoning_content", None, "none", request=True)
    assert not admits("assistant", "reasoning", "a summary", "reasoning", request=True)
    assert admits("assistant", "reasoning", "a summary", "openrouter", request=True)
    assert admits("response_message", "annotations", [], "none", request=False)


def test_stream_tool_call_index_is_the_streams_own() -> None:
    """A kept response ``index`` never overrides the position a stream gives a call."""
    wire = load("response_openrouter.json")
    message = wire["choices"][0]["message"]
    second = {**message["tool_calls"][0], "id": "tool_book_1", "index": 0}
    message["tool_calls"].append(second)
    response = decode_response(wire)
    encoder = StreamEncoder(reasoning_dialect="openrouter")
    chunks = [e for u in response_to_updates(response) for e in encoder.encode(u)]
    deltas = [json.loads(chunk.data)["choices"][0]["delta"] for chunk in chunks]
    starts = [call for delta in deltas for call in delta.get("tool_calls", []) if "id" in call]
    assert [(call["id"], call["index"]) for call in starts] == [
        ("tool_book_0", 0),
        ("tool_book_1", 1),
    ]
