"""What Anthropic clients send, as the service takes it: the ``anthropic`` SDK against a real
``interlock serve`` in front of the emulators.

String ``content`` and a ``system`` string or block list are accepted for every upstream,
and the instructions reach it; a ``system`` message inside ``messages[]`` (newer models'
mid-conversation instructions) goes to Anthropic in its place; any other role, and content
that is neither a string nor a list of blocks, is an Anthropic-shaped 400 naming the field,
and nothing is sent upstream. So is a request without ``max_tokens``, for every upstream, with
Anthropic's own 400.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from starlette.testclient import TestClient

from interlock.emulators import Emulator, emulator_app
from tests.gateway.serving import serve_on_emulators

MODELS = ["via-anthropic", "via-gemini", "via-responses", "via-chat"]
UPSTREAM_OF = {
    "via-anthropic": "anthropic",
    "via-gemini": "gemini",
    "via-responses": "openai-responses",
    "via-chat": "openai-chat",
}
SYSTEMS: list[Any] = [
    "Answer in French.",
    [{"type": "text", "text": "Answer in French."}],
    [{"type": "text", "text": "Answer"}, {"type": "text", "text": " in French."}],
]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("anthropic-input")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


@pytest.fixture
def client(stack: tuple[str, dict[str, Emulator]]) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=stack[0], api_key="unused") as sdk:
        yield sdk


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("system", SYSTEMS, ids=["string", "block", "blocks"])
def test_string_content_and_either_system_form_reach_every_upstream(
    stack: tuple[str, dict[str, Emulator]], client: anthropic.Anthropic, model: str, system: Any
) -> None:
    messages: Any = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Bonjour."},
        {"role": "user", "content": "again"},
    ]
    answer = client.messages.create(model=model, max_tokens=64, system=system, messages=messages)
    assert answer.content[0].type == "text" and answer.content[0].text
    sent = json.dumps(stack[1][UPSTREAM_OF[model]].received[-1])
    assert "in French." in sent and "again" in sent and "Bonjour." in sent


def test_a_system_message_in_messages_goes_to_anthropic_in_place(
    stack: tuple[str, dict[str, Emulator]], client: anthropic.Anthropic
) -> None:
    messages: Any = [
        {"role": "user", "content": "hello"},
        {"role": "system", "content": "From now on, answer in French."},
        {"role": "user", "content": "again"},
    ]
    answer = client.messages.create(model="via-anthropic", max_tokens=64, messages=messages)
    assert answer.content[0].type == "text"
    sent = stack[1]["anthropic"].received[-1]["messages"]
    assert [message["role"] for message in sent] == ["user", "system", "user"]
    for model in ("via-chat", "via-responses"):  # a later system message, kept in place
        client.messages.create(model=model, max_tokens=64, messages=messages)
        sent_elsewhere = json.dumps(stack[1][UPSTREAM_OF[model]].received[-1])
        assert sent_elsewhere.index("hello") < sent_elsewhere.index("French")
        assert sent_elsewhere.index("French") < sent_elsewhere.index("again")
    with pytest.raises(anthropic.BadRequestError) as caught:  # Gemini: strict, system_moved
        client.messages.create(model="via-gemini", max_tokens=64, messages=messages)
    assert "messages[1]" in caught.value.message


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}], "messages[1].role"),
        ([{"role": "developer", "content": "be brief"}], "messages[0].role"),
        (
            [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
            "messages[0].role",
        ),
        ([{"content": "hi"}], "messages[0].role"),
        ([{"role": "user", "content": None}], "messages[0].content"),
        ([{"role": "user", "content": 5}], "messages[0].content"),
        ([{"role": "user", "content": [{"text": "no type"}]}], "messages[0].content[0].type"),
    ],
    ids=["tool", "developer", "first-system", "no-role", "null", "number", "untyped-block"],
)
def test_what_the_service_refuses_is_a_400_naming_the_field(
    stack: tuple[str, dict[str, Emulator]],
    client: anthropic.Anthropic,
    model: str,
    messages: Any,
    field: str,
) -> None:
    upstream = stack[1][UPSTREAM_OF[model]]
    before = len(upstream.received)
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=model, max_tokens=64, messages=messages)
    body = caught.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"].startswith(f"{field}:")
    assert len(upstream.received) == before  # nothing was sent


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("model", MODELS)
def test_max_tokens_is_required_whatever_the_upstream(
    stack: tuple[str, dict[str, Emulator]], model: str, stream: bool
) -> None:
    url, emulators = stack
    headers = {"anthropic-version": "2023-06-01", "x-api-key": "unused"}
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    body |= {"stream": True} if stream else {}
    upstream = emulators[UPSTREAM_OF[model]]
    sent_before = len(upstream.received)
    for missing in (body, {**body, "max_tokens": None}):
        answer = httpx.post(f"{url}/v1/messages", json=missing, headers=headers)
        assert answer.status_code == 400 and answer.headers["x-interlock-translation"] == "none"
        assert answer.json() == {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
        }
    assert len(upstream.received) == sent_before  # nothing was sent
    with anthropic.Anthropic(base_url=url, api_key="unused") as sdk:  # the valid path
        answer_text = sdk.messages.create(model=model, max_tokens=32, messages=body["messages"])
        assert answer_text.content and len(upstream.received) == sent_before + 1


def test_the_gateways_refusal_is_anthropics_own(stack: tuple[str, dict[str, Emulator]]) -> None:
    _, emulators = stack
    body = {"model": "claude-emulated", "messages": [{"role": "user", "content": "hi"}]}
    with TestClient(emulator_app(emulators["anthropic"])) as direct:
        answer = direct.post("/v1/messages", json=body, headers={"anthropic-version": "2023-06-01"})
    assert answer.status_code == 400
    assert answer.json()["error"] == {
        "type": "invalid_request_error",
        "message": "max_tokens: Field required",
    }
