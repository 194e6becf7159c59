"""Requests both ways: golden round trips, SDK request types, options and decode errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionDeveloperMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_custom_tool_param import ChatCompletionCustomToolParam
from openai.types.chat.chat_completion_message_custom_tool_call_param import (
    ChatCompletionMessageCustomToolCallParam,
)
from openai.types.chat.chat_completion_message_function_tool_call_param import Function
from pydantic import ConfigDict, TypeAdapter, ValidationError

from interlock.codecs.openai_chat import ReasoningDialect, decode_request, encode_request
from interlock.transcript import (
    DecodeError,
    GenerationOptions,
    LossyHistoryError,
    Message,
    Request,
    TextPart,
)
from tests.codecs.openai_chat.fixtures_helpers import DIALECT_FIXTURES, load

_FORBID = ConfigDict(extra="forbid")
_MESSAGE_TYPES: dict[str, Any] = {
    "system": ChatCompletionSystemMessageParam,
    "developer": ChatCompletionDeveloperMessageParam,
    "user": ChatCompletionUserMessageParam,
    "assistant": ChatCompletionAssistantMessageParam,
    "tool": ChatCompletionToolMessageParam,
}
VENDOR_KEYS: dict[ReasoningDialect, set[str]] = {
    "none": set(),
    "reasoning_content": {"reasoning_content"},
    "reasoning": {"reasoning"},
    "openrouter": {"reasoning_details", "reasoning"},
    "gemini-compat": {"extra_content"},
}


def _validate(kind: Any, item: dict[str, Any]) -> None:
    TypeAdapter(list[kind], config=_FORBID).validate_python([item])


def validate_messages(messages: list[dict[str, Any]], dialect: ReasoningDialect) -> None:
    """provider-wire.md §5.3: each item against its own TypedDict, unknown keys forbidden.

    Vendor reasoning keys are expected extras: they are removed before validation and
    must be exactly the dialect's.
    """
    for message in messages:
        vendor = {key for key in message if key in VENDOR_KEYS[dialect]}
        plain = {key: value for key, value in message.items() if key not in vendor}
        if dialect != "gemini-compat" or message["role"] != "assistant":
            assert vendor <= VENDOR_KEYS[dialect]
        _validate(_MESSAGE_TYPES[message["role"]], plain)
        for call in plain.get("tool_calls", []):
            extra = {"extra_content"} if dialect == "gemini-compat" else set()
            bare = {k: v for k, v in call.items() if k not in extra}
            if bare.get("type") == "custom":
                _validate(ChatCompletionMessageCustomToolCallParam, bare)
            else:
                _validate(ChatCompletionMessageFunctionToolCallParam, bare)
                _validate(Function, bare["function"])


@pytest.mark.parametrize(("name", "dialect"), DIALECT_FIXTURES)
def test_golden_request_round_trip_is_exact(name: str, dialect: ReasoningDialect) -> None:
    payload = load(f"request_{name}.json")
    original = copy.deepcopy(payload)
    request = decode_request(payload)
    for chosen in (None, dialect):
        encoded = encode_request(request, reasoning_dialect=chosen)
        assert encoded.payload == original
        assert encoded.warnings == ()
    assert payload == original


@pytest.mark.parametrize(("name", "dialect"), DIALECT_FIXTURES)
def test_encoded_messages_validate_against_the_sdk_types(
    name: str, dialect: ReasoningDialect
) -> None:
    encoded = encode_request(
        decode_request(load(f"request_{name}.json")), reasoning_dialect=dialect
    )
    validate_messages(encoded.payload["messages"], dialect)  # type: ignore[arg-type]  # wire list
    for tool in encoded.payload.get("tools", []):  # type: ignore[union-attr]  # wire list
        kind = (
            ChatCompletionCustomToolParam
            if tool["type"] == "custom"
            else ChatCompletionFunctionToolParam
        )  # type: ignore[index]
        _validate(kind, tool)  # type: ignore[arg-type]


def test_the_validator_catches_a_vendor_key_in_the_wrong_dialect() -> None:
    encoded = encode_request(
        decode_request(load("request_reasoning_content.json")),
        reasoning_dialect="reasoning_content",
    )
    with pytest.raises(ValidationError, match="reasoning_content"):
        validate_messages(encoded.payload["messages"], "none")  # type: ignore[arg-type]


def test_decoded_request_is_canonical() -> None:
    request = decode_request(load("request_none.json"))
    assert request.model == "gpt-5.5"
    assert request.stream is True
    assert request.parallel_tool_calls is True
    assert request.options == GenerationOptions(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=800,
        stop=("END",),
        seed=7,
        reasoning_effort="medium",
        metadata={"trace": "t-1"},
        candidate_count=1,
    )
    assert [tool.name for tool in request.tools] == ["get_weather", "haiku"]
    assert request.tool_choice is not None and request.tool_choice.names == ("get_weather", "haiku")
    assert request.extra["openai-chat"]["stream_options"] == {"include_usage": True}
    assert [m.role for m in request.messages] == [
        "developer",
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
    ]
    user = request.messages[2]
    assert user.name == "ada"
    media = [p for p in user.parts if p.kind == "media"]
    assert [(m.media_type, m.data, m.uri) for m in media] == [
        ("image/png", "iVBORw0KGgo=", None),
        ("image/*", None, "https://example.com/map.png"),
        ("audio/wav", "UklGRg==", None),
        ("application/pdf", "JVBERi0=", None),
        (None, None, "openai-file:file-abc123"),
    ]
    tool = request.messages[4].tool_results[0]
    assert (tool.call_id, tool.name, tool.text) == ("call_B", "get_weather", '{"temp_c":21}')
    assert all(part.occurrence_id is None for part in request.messages[3].tool_calls)


def test_max_tokens_and_stop_list_forms_round_trip() -> None:
    payload = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 5,
        "stop": ["a", "b"],
        "temperature": None,
        "stream": False,
    }
    request = decode_request(payload)
    assert request.options.max_output_tokens == 5
    assert request.options.stop == ("a", "b")
    assert encode_request(request).payload == payload


def test_canonical_options_encode_to_chat_names_and_report_what_chat_lacks() -> None:
    request = Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="hi"),)),),
        options=GenerationOptions(max_output_tokens=9, reasoning_summary="auto"),
    )
    encoded = encode_request(request)
    assert encoded.payload["max_completion_tokens"] == 9
    assert [w.code for w in encoded.warnings] == ["option_dropped"]


def test_continuation_cannot_be_sent_to_chat() -> None:
    from interlock.transcript import Continuation

    request = Request(
        model="m",
        messages=(Message(role="user", parts=(TextPart(text="hi"),)),),
        continuation=Continuation(previous_response_id="resp_1"),
    )
    with pytest.raises(LossyHistoryError) as caught:
        encode_request(request)
    assert caught.value.location == "continuation"


def test_unknown_reasoning_dialect_is_a_programming_error() -> None:
    request = decode_request(load("request_none.json"))
    with pytest.raises(ValueError, match="unknown reasoning dialect"):
        encode_request(request, reasoning_dialect="deepseek")  # type: ignore[arg-type]


MALFORMED: list[tuple[dict[str, Any], str]] = [
    ({"model": "m"}, "messages"),
    ({"model": 3, "messages": []}, "model"),
    ({"model": "m", "messages": {}}, "messages"),
    ({"model": "m", "messages": [{"content": "x"}]}, "messages[0].role"),
    ({"model": "m", "messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
    ({"model": "m", "messages": [{"role": "user", "content": 1}]}, "messages[0].content"),
    (
        {"model": "m", "messages": [{"role": "user", "content": [{"type": "video", "url": "x"}]}]},
        "messages[0].content[0].type",
    ),
    (
        {"model": "m", "messages": [{"role": "system", "content": [{"type": "image_url"}]}]},
        "messages[0].content[0].type",
    ),
    (
        {"model": "m", "messages": [{"role": "tool", "content": "x"}]},
        "messages[0].tool_call_id",
    ),
    (
        {
            "model": "m",
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{oops"},
                        }
                    ],
                }
            ],
        },
        "messages[0].tool_calls[0].function.arguments",
    ),
    (
        {
            "model": "m",
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "f", "arguments": {}}}
                    ],
                }
            ],
        },
        "messages[0].tool_calls[0].function.arguments",
    ),
    (
        {"model": "m", "messages": [{"role": "assistant", "reasoning_content": 5}]},
        "messages[0].reasoning_content",
    ),
    (
        {"model": "m", "messages": [{"role": "assistant", "reasoning_details": [3]}]},
        "messages[0].reasoning_details[0]",
    ),
    ({"model": "m", "messages": [], "tool_choice": "maybe"}, "tool_choice"),
    ({"model": "m", "messages": [], "tools": [{"type": 7}]}, "tools[0].type"),
    ({"model": "m", "messages": [], "temperature": "hot"}, "temperature"),
    ({"model": "m", "messages": [], "stop": [1]}, "stop[0]"),
    (
        {"model": "m", "messages": [{"role": "function", "name": "f", "content": "x"}]},
        "messages[0].name",
    ),
]


@pytest.mark.parametrize(("payload", "path"), MALFORMED, ids=[p for _, p in MALFORMED])
def test_malformed_requests_name_the_path(payload: dict[str, Any], path: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_request(payload)
    assert caught.value.path == path


def test_trap30_name_n_and_logprobs_round_trip_exactly() -> None:
    """Trap 30: ``name`` stays Chat's own; ``n`` and log-probabilities are canonical options
    now, and Chat gets them all back exactly."""
    payload: dict[str, Any] = {
        "model": "m",
        "n": 2,
        "logprobs": True,
        "top_logprobs": 3,
        "messages": [
            {"role": "system", "content": "s", "name": "rules"},
            {"role": "user", "content": "hi", "name": "alice"},
        ],
    }
    request = decode_request(copy.deepcopy(payload))
    assert request.messages[1].name == "alice"
    assert "openai-chat" not in request.extra
    options = request.options
    assert (options.candidate_count, options.logprobs, options.top_logprobs) == (2, True, 3)
    assert encode_request(request).payload == payload


def test_a_request_without_model_is_azure_style_and_round_trips() -> None:
    """Azure names the deployment in the URL; its recorded bodies have no ``model``."""
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}
    request = decode_request(body)
    assert request.model == ""
    assert encode_request(request).payload == body


def test_openrouter_video_url_parts_round_trip_and_reach_gemini_as_video() -> None:
    """Issue 11: OpenRouter's ``video_url`` content parts decode (as media) instead of being
    rejected, come back exactly, and travel as media to another dialect."""
    from interlock.codecs import gemini

    body: dict[str, Any] = {
        "model": "google/gemini-2.5-flash",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what happens?"},
                    {"type": "video_url", "video_url": {"url": "https://example.com/clip.mp4"}},
                    {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,AAAA"}},
                ],
            }
        ],
    }
    request = decode_request(body)
    assert encode_request(request).payload == body
    parts = gemini.encode_request(request).payload["contents"][0]["parts"]  # type: ignore[index]
    assert parts[1:] == [
        {"fileData": {"fileUri": "https://example.com/clip.mp4"}},
        {"inlineData": {"mimeType": "video/mp4", "data": "AAAA"}},
    ]
