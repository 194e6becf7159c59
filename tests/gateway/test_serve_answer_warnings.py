"""What an answer loses is readable from every official SDK, streamed and not (issue 11).

Through a real ``interlock serve`` on loopback HTTP: the emulated Anthropic model cites a web
search result and a document of the request (a document citation has no OpenAI or Gemini
form); the emulated Chat, Responses and Gemini models cite a web page at character offsets
(an Anthropic client can take only Anthropic's own search results). Each client must read a
``citation_dropped`` warning from the SDK's own objects where ``docs/fidelity.md`` says:

* ``openai`` Responses: ``response.interlock`` (the ``response.completed`` event's response);
* ``openai`` Chat: the completion's / the finishing chunk's ``interlock``;
* ``anthropic``: the message's / the ``message_delta`` event's ``interlock``;
* ``google-genai``: ``model_status.message`` (the last chunk's, streamed);

streamed and not alike, and find nothing there when nothing was lost. ``/metrics`` counts
the losses by client dialect, code and whether streamed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest
from google import genai
from google.genai import types
from openai import OpenAI

from interlock.emulators._brain import DefaultBrain
from interlock.transcript import Message, RefusalPart, Request, Response, load_response
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve
from tests.gateway.test_serve_grounding import QUESTION, GroundedBrain, SearchingBrain

DROPPED_DOCUMENT = "degraded; citation_dropped at message"
DROPPED = [{"code": "citation_dropped", "location": "message"}]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("serve-answer-warnings")
    with emulators_on_loopback() as (emulator_url, emulators):
        for name, prefix in (
            ("gemini", "call_gemini"),
            ("openai-chat", "call_chat"),
            ("openai-responses", "call_resp"),
        ):
            emulators[name].brain = GroundedBrain(call_prefix=prefix)  # type: ignore[union-attr]  # every emulator has a brain
        emulators["anthropic"].brain = SearchingBrain(call_prefix="call_anthropic")  # type: ignore[union-attr]
        config = directory / "interlock.toml"
        config.write_text(gateway_config(emulator_url, f"sqlite:///{directory / 'state.db'}"))
        with serve(config, directory) as served:
            yield served


def _said(field: Any) -> tuple[str, list[dict[str, str]]] | None:
    """The ``interlock`` member's label and (code, location) pairs, or ``None``."""
    if field is None:
        return None
    warnings = [{"code": w["code"], "location": w["location"]} for w in field["warnings"]]
    assert all(w["message"] for w in field["warnings"])
    return field["translation"], warnings


def _responses(url: str, model: str, stream: bool) -> Any:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if not stream:
            return (client.responses.create(model=model, input=QUESTION).model_extra or {}).get(
                "interlock"
            )
        events = list(client.responses.create(model=model, input=QUESTION, stream=True))
    completed = next(event for event in events if event.type == "response.completed")
    assert all("interlock" not in (e.model_extra or {}) for e in events)
    return (completed.response.model_extra or {}).get("interlock")


def _chat(url: str, model: str, stream: bool) -> Any:
    messages: Any = [{"role": "user", "content": QUESTION}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if not stream:
            answer = client.chat.completions.create(model=model, messages=messages)
            return (answer.model_extra or {}).get("interlock")
        chunks = list(client.chat.completions.create(model=model, messages=messages, stream=True))
    finishing = [c for c in chunks if c.choices and c.choices[0].finish_reason is not None]
    (last,) = finishing
    others = [c for c in chunks if c is not last]
    assert all("interlock" not in (c.model_extra or {}) for c in others)
    return (last.model_extra or {}).get("interlock")


def _anthropic(url: str, model: str, stream: bool) -> Any:
    messages: Any = [{"role": "user", "content": QUESTION}]
    with anthropic.Anthropic(base_url=url, api_key="unused") as client:
        if not stream:
            answer = client.messages.create(model=model, max_tokens=256, messages=messages)
            return (answer.model_extra or {}).get("interlock")
        events = list(
            client.messages.create(model=model, max_tokens=256, messages=messages, stream=True)
        )
    (delta,) = [event for event in events if event.type == "message_delta"]
    return (delta.model_extra or {}).get("interlock")


def _gemini(url: str, model: str, stream: bool) -> str | None:
    client = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=url))
    if not stream:
        answer = client.models.generate_content(model=model, contents=QUESTION)
        return answer.model_status.message if answer.model_status else None
    chunks = list(client.models.generate_content_stream(model=model, contents=QUESTION))
    said = [c.model_status.message if c.model_status else None for c in chunks]
    assert all(message is None for message in said[:-1])
    return said[-1]


OPENAI_LIKE = {"responses": _responses, "chat": _chat, "anthropic": _anthropic}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("client_dialect", ["responses", "chat"])
def test_an_openai_client_reads_a_dropped_document_citation(
    url: str, client_dialect: str, stream: bool
) -> None:
    field = OPENAI_LIKE[client_dialect](url, "via-anthropic", stream)
    assert _said(field) == (DROPPED_DOCUMENT, DROPPED)
    assert "1 of 2 citations" in field["warnings"][0]["message"]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("model", ["via-chat", "via-responses", "via-gemini"])
def test_an_anthropic_client_reads_a_dropped_url_citation(
    url: str, model: str, stream: bool
) -> None:
    said = _said(_anthropic(url, model, stream))
    assert said is not None
    label, warnings = said
    assert DROPPED[0] in warnings
    assert "citation_dropped at message" in label
    if model == "via-chat":  # the emulated Chat model reasons in reasoning_content, unsigned
        assert {"code": "reasoning_dropped", "location": "message"} in warnings


@pytest.mark.parametrize(
    ("client_dialect", "model"),
    [
        ("anthropic", "via-chat"),
        ("anthropic", "via-gemini"),
        ("chat", "via-anthropic"),
        ("responses", "via-anthropic"),
        ("gemini", "via-anthropic"),
    ],
)
def test_streamed_and_plain_answers_say_the_same(url: str, client_dialect: str, model: str) -> None:
    ask = _gemini if client_dialect == "gemini" else OPENAI_LIKE[client_dialect]
    plain, streamed = ask(url, model, False), ask(url, model, True)
    assert plain is not None and plain == streamed


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_gemini_client_reads_a_dropped_document_citation_in_the_model_status(
    url: str, stream: bool
) -> None:
    assert _gemini(url, "via-anthropic", stream) == f"interlock: {DROPPED_DOCUMENT}"


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize(
    ("client_dialect", "model"),
    [
        ("responses", "via-chat"),
        ("responses", "via-gemini"),
        ("chat", "via-responses"),
        ("chat", "via-gemini"),
        ("anthropic", "via-anthropic"),
        ("gemini", "via-chat"),
        ("gemini", "via-responses"),
    ],
)
def test_nothing_is_said_when_nothing_was_lost(
    url: str, client_dialect: str, model: str, stream: bool
) -> None:
    ask = _gemini if client_dialect == "gemini" else OPENAI_LIKE[client_dialect]
    assert ask(url, model, stream) is None


def test_the_losses_are_counted_by_dialect_code_and_streaming(url: str) -> None:
    def counted() -> dict[str, float]:
        text = httpx.get(f"{url}/metrics").text
        prefix = "interlock_answer_warnings_total{"
        return {
            line.split("{", 1)[1].rsplit("}", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith(prefix)
        }

    before = counted()
    _anthropic(url, "via-chat", stream=True)
    _anthropic(url, "via-chat", stream=False)
    _gemini(url, "via-anthropic", stream=True)
    after = counted()
    labels = 'dialect="{}",code="citation_dropped",streamed="{}"'
    for dialect, streamed, more in (
        ("anthropic", "true", 1),
        ("anthropic", "false", 1),
        ("gemini", "true", 1),
        ("gemini", "false", 0),
    ):
        key = labels.format(dialect, streamed)
        assert after.get(key, 0) - before.get(key, 0) == more, key


REFUSAL = "I can't help with that."
HOSTED = load_response(
    json.loads(
        (
            Path(__file__).parents[2]
            / "conformance/vectors/anthropic/response_web_search_citations.json"
        ).read_text()
    )["canonical"]
)


class RefusingBrain(DefaultBrain):
    """Refuses every request."""

    def respond(self, request: Request) -> Response:
        response = super().respond(request)
        refusal = Message(role="assistant", parts=(RefusalPart(text=REFUSAL),))
        return replace(response, message=refusal, finish_reason="stop")


class SearchingServerSideBrain(DefaultBrain):
    """Answers as Anthropic's web search does: a hosted tool call and its result (server
    side), then the cited text (a recorded answer's parts)."""

    def respond(self, request: Request) -> Response:
        response = super().respond(request)
        return replace(response, message=HOSTED.message, finish_reason="stop")


@pytest.fixture(scope="module")
def other_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("serve-answer-kinds")
    with emulators_on_loopback() as (emulator_url, emulators):
        emulators["openai-chat"].brain = RefusingBrain(call_prefix="call_chat")  # type: ignore[union-attr]  # every emulator has a brain
        emulators["anthropic"].brain = SearchingServerSideBrain(call_prefix="call_anthropic")  # type: ignore[union-attr]
        config = directory / "interlock.toml"
        config.write_text(gateway_config(emulator_url, f"sqlite:///{directory / 'state.db'}"))
        with serve(config, directory) as served:
            yield served


def _codes(client_dialect: str, url: str, model: str, stream: bool) -> list[str]:
    if client_dialect == "gemini":
        said = _gemini(url, model, stream)
        assert said is not None and said.startswith("interlock: degraded; ")
        return [entry.split(" at ")[0] for entry in said.split("; ", 1)[1].split(", ")]
    field = OPENAI_LIKE[client_dialect](url, model, stream)
    assert field is not None
    return [warning["code"] for warning in field["warnings"]]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("client_dialect", ["gemini", "anthropic"])
def test_a_refusal_sent_as_text_is_said(other_url: str, client_dialect: str, stream: bool) -> None:
    assert "refusal_as_text" in _codes(client_dialect, other_url, "via-chat", stream)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("client_dialect", ["responses", "chat", "gemini"])
def test_a_dropped_hosted_tool_call_is_said(
    other_url: str, client_dialect: str, stream: bool
) -> None:
    assert "hosted_tool_dropped" in _codes(client_dialect, other_url, "via-anthropic", stream)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_refusal_reaches_an_openai_client_as_a_refusal_unlabelled(
    other_url: str, stream: bool
) -> None:
    assert _responses(other_url, "via-chat", stream) is None


def test_a_chat_client_asking_for_usage_reads_the_warnings_on_the_finishing_chunk(
    url: str,
) -> None:
    """The usage chunk comes after the finishing chunk; the warnings stay on the latter."""
    messages: Any = [{"role": "user", "content": QUESTION}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        chunks = list(
            client.chat.completions.create(
                model="via-anthropic",
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    assert chunks[-1].usage is not None and not chunks[-1].choices
    said = [(c.model_extra or {}).get("interlock") for c in chunks]
    (finishing,) = [i for i, c in enumerate(chunks) if c.choices and c.choices[0].finish_reason]
    assert [i for i, field in enumerate(said) if field is not None] == [finishing]
    assert _said(said[finishing]) == (DROPPED_DOCUMENT, DROPPED)
