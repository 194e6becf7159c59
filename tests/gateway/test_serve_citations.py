"""Citations through a real ``interlock serve`` with the official ``openai`` SDK (issue 11).

The emulated model cites a web page in its answer (a URL citation on its text: Responses
``url_citation`` annotations, Chat ``message.annotations`` / delta ``annotations``); each
upstream's emulator sends it in its own dialect. A Chat Completions client and a Responses
client must receive the same citation — URL, title and character offsets — from a Responses
upstream and from a Chat upstream, streaming and not.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from openai import OpenAI

from interlock.emulators import Emulator
from interlock.emulators._brain import DefaultBrain
from interlock.transcript import Citation, Request, Response, TextPart
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

CITED = Citation(url="https://olympics.com/paris-2024", title="Paris 2024", start=0, end=9)


class CitingBrain(DefaultBrain):
    """The default answers, with the answer's text citing one web page."""

    def respond(self, request: Request) -> Response:
        response = super().respond(request)
        parts = tuple(
            replace(part, citations=(CITED,)) if isinstance(part, TextPart) else part
            for part in response.message.parts
        )
        return replace(response, message=replace(response.message, parts=parts))


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("serve-citations")
    with emulators_on_loopback() as (emulator_url, emulators):
        _cite(emulators)
        config = directory / "interlock.toml"
        config.write_text(gateway_config(emulator_url, f"sqlite:///{directory / 'state.db'}"))
        with serve(config, directory) as served:
            yield served


def _cite(emulators: dict[str, Emulator]) -> None:
    emulators["openai-chat"].brain = CitingBrain(call_prefix="call_chat")  # type: ignore[union-attr]
    emulators["openai-responses"].brain = CitingBrain(call_prefix="call_resp")  # type: ignore[union-attr]


def _chat(client: OpenAI, model: str, stream: bool) -> tuple[str, list[dict[str, Any]]]:
    messages: Any = [{"role": "user", "content": "Where are the 2024 Olympics?"}]
    if not stream:
        message = client.chat.completions.create(model=model, messages=messages).choices[0].message
        annotations = [annotation.model_dump() for annotation in message.annotations or []]
        return message.content or "", [a["url_citation"] for a in annotations]
    text: list[str] = []
    cited: list[dict[str, Any]] = []
    for chunk in client.chat.completions.create(model=model, messages=messages, stream=True):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        text.append(delta.content or "")
        for annotation in (delta.model_extra or {}).get("annotations") or []:
            cited.append(annotation["url_citation"])
    return "".join(text), cited


def _responses(client: OpenAI, model: str, stream: bool) -> tuple[str, list[dict[str, Any]]]:
    question = "Where are the 2024 Olympics?"
    if not stream:
        output = client.responses.create(model=model, input=question).output
    else:
        events = list(client.responses.create(model=model, input=question, stream=True))
        output = next(e for e in events if e.type == "response.completed").response.output
    texts = [
        part.model_dump()
        for item in output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    ]
    cited = [
        {key: value for key, value in annotation.items() if key != "type"}
        for part in texts
        for annotation in part["annotations"]
    ]
    return "".join(part["text"] for part in texts), cited


EXPECTED = {
    "url": CITED.url,
    "title": CITED.title,
    "start_index": CITED.start,
    "end_index": CITED.end,
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("model", ["via-responses", "via-chat"])
@pytest.mark.parametrize("client_dialect", ["chat", "responses"])
def test_a_url_citation_reaches_both_openai_clients_from_both_openai_upstreams(
    url: str, client_dialect: str, model: str, stream: bool
) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        ask = _chat if client_dialect == "chat" else _responses
        text, cited = ask(client, model, stream)
    assert text.startswith("You said: ")
    assert cited == [EXPECTED]
