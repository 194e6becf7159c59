"""An answer in several cited text blocks reaches an ``openai`` Chat client as one string.

Anthropic answers in text blocks, each with its own citations; a Chat answer has one
``content`` string (the SDK types it ``str``) and its annotations index into that string.
The emulated Anthropic model answers in two blocks, each citing a different web search
result for the whole block, with non-ASCII text before the second: the Chat client must get
the blocks joined, each citation at its block's character span in the joined string,
streamed and not alike, and nothing labelled lost.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from openai import OpenAI

from interlock.emulators._brain import DefaultBrain
from interlock.transcript import Citation, JsonObject, Request, Response, TextPart
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

BLOCKS = ("Grüße 🇨🇭: the Games were in Paris. ", "The next ones are in Los Angeles.")
SOURCES = ("https://olympics.example/paris", "https://olympics.example/la")


def _search_result(url: str) -> JsonObject:
    return {
        "type": "web_search_result_location",
        "cited_text": "…",
        "url": url,
        "title": url.rsplit("/", 1)[1],
        "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0",
    }


class TwoBlockBrain(DefaultBrain):
    """Answers every request in the two ``BLOCKS``, each citing its own source."""

    def respond(self, request: Request) -> Response:
        response = super().respond(request)
        parts = tuple(
            TextPart(
                text=text,
                citations=(
                    Citation(
                        url=url,
                        title=url.rsplit("/", 1)[1],
                        extra={"anthropic": {"citation": _search_result(url)}},
                    ),
                ),
            )
            for text, url in zip(BLOCKS, SOURCES, strict=True)
        )
        return replace(response, message=replace(response.message, parts=parts))


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("serve-cited-blocks")
    with emulators_on_loopback() as (emulator_url, emulators):
        emulators["anthropic"].brain = TwoBlockBrain(call_prefix="call_anthropic")  # type: ignore[union-attr]  # the Anthropic emulator has a brain; the union's others too
        config = directory / "interlock.toml"
        config.write_text(gateway_config(emulator_url, f"sqlite:///{directory / 'state.db'}"))
        with serve(config, directory) as served:
            yield served


def _ask(client: OpenAI, stream: bool) -> tuple[Any, str, list[dict[str, Any]]]:
    messages: Any = [{"role": "user", "content": "where were the Games?"}]
    if not stream:
        raw = client.chat.completions.with_raw_response.create(
            model="via-anthropic", messages=messages
        )
        message = raw.parse().choices[0].message
        cited = [a.model_dump()["url_citation"] for a in message.annotations or []]
        return message.content, raw.headers["x-interlock-translation"], cited
    text: list[str] = []
    cited: list[dict[str, Any]] = []
    for chunk in client.chat.completions.create(
        model="via-anthropic", messages=messages, stream=True
    ):
        if chunk.choices:
            delta = chunk.choices[0].delta
            text.append(delta.content or "")
            cited += [a["url_citation"] for a in (delta.model_extra or {}).get("annotations") or []]
    return "".join(text), "", cited


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_cited_blocks_reach_a_chat_client_as_one_string_with_shifted_citations(
    url: str, stream: bool
) -> None:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        content, label, cited = _ask(client, stream)
    assert isinstance(content, str) and content == "".join(BLOCKS)
    first = len(BLOCKS[0])
    spans = [(c["url"], c.get("start_index", 0), c["end_index"]) for c in cited]
    assert spans == [(SOURCES[0], 0, first), (SOURCES[1], first, len(content))]
    assert "degraded" not in label
