"""Vendor streams recorded from the real services, replayed through ``interlock serve`` to the
official SDK of every client dialect (issue 11: "every real OpenRouter stream is rejected",
"Azure stream ids/models lost").

The emulated upstream replays, event for event, streams the corpus recorded
(``conformance/corpus/payloads``, each with its source):

* OpenRouter Chat Completions (simonw/llm cassettes): after the chunk with ``finish_reason``
  comes one more chunk repeating the choice with an empty delta, carrying the usage; a tool
  call streamed with its id and name repeated and no ``finish_reason`` at all;
* Azure OpenAI: a first chunk of prompt filter results whose ``id`` and ``model`` are empty,
  and the usage in a choice-less last chunk.

Every client must get the text or call, the usage, and the real response id and model,
streamed and not alike (a non-streamed request gets the emulator's fold of the same stream).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from interlock.emulators import Emulator
from interlock.emulators._brain import ScriptBrain
from tests.gateway.fidelity_clients import DIALECTS, TOOL_NAME, Seen, seen
from tests.gateway.serving import serve_on_emulators

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "payloads"
OPENROUTER = "openai/simonw+llm__test_tools_streaming__test_tools_streaming_variant_a.json"
AZURE = "azure/crewAIInc+crewAI__azure__test_azure_streaming_completion.json"

# What each dialect calls the end of a plain answer.
STOPPED = {"chat": "stop", "responses": "completed", "gemini": "STOP", "anthropic": "end_turn"}


def recorded_streams(name: str) -> list[list[Any]]:
    """The event data of each stream of a corpus file, in order."""
    document = json.loads((CORPUS / name).read_text(encoding="utf-8"))
    return [
        [event["data"] for event in payload["wire"]]
        for payload in document["payloads"]
        if payload["kind"] == "stream"
    ]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("fidelity-streams")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


def _replayed(
    stack: tuple[str, dict[str, Emulator]], events: list[Any], dialect: str, tool: bool = False
) -> tuple[Seen, Seen]:
    """The whole and the streamed answer to the replayed stream, as ``dialect``'s SDK reads them."""
    url, emulators = stack
    answers: list[Seen] = []
    for stream in (False, True):
        emulators["openai-chat"].brain = ScriptBrain(entries=[{"stream": events}])
        answers.append(seen(dialect, url, "via-chat", stream, tool))
    return answers[0], answers[1]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_openrouter_stream_with_usage_after_its_finish_reaches_every_client(
    stack: tuple[str, dict[str, Emulator]], dialect: str
) -> None:
    events = recorded_streams(OPENROUTER)[1]
    finish = next(i for i, e in enumerate(events) if e["choices"][0]["finish_reason"])
    assert events[finish + 1]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert events[finish + 1]["usage"]["prompt_tokens"] == 107  # usage after the finish
    whole, streamed = _replayed(stack, events, dialect)
    assert streamed == whole
    assert streamed.text == "The current version of *llm* is **0.fixed-version**."
    assert streamed.usage == (107, 15)
    assert streamed.finish == STOPPED[dialect]
    assert (streamed.response_id, streamed.model) == (
        "gen-1753242300-j60LWi6MpN4lMZw1zTHK",
        "moonshotai/kimi-k2",
    )
    assert streamed.label is None  # nothing was lost


@pytest.mark.parametrize("dialect", ["responses", "gemini", "anthropic"])
def test_an_openrouter_tool_call_stream_without_a_finish_reason_reaches_other_clients(
    stack: tuple[str, dict[str, Emulator]], dialect: str
) -> None:
    """The recorded stream repeats the call's id and name in its second delta and never sends
    a ``finish_reason`` (it ends with ``[DONE]``). A Chat client gets it relayed as sent."""
    events = recorded_streams(OPENROUTER)[0]
    assert not any(c["finish_reason"] for e in events if isinstance(e, dict) for c in e["choices"])
    whole, streamed = _replayed(stack, events, dialect, tool=True)
    for answer in (whole, streamed):
        assert answer.calls == [(TOOL_NAME, {})]
        assert answer.call_ids == ["0"]
        assert answer.usage == (57, 17)
        assert answer.text == ""
    assert streamed.finish == whole.finish


def test_a_finished_stream_without_a_finish_reason_finishes_for_a_gemini_client(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    events = recorded_streams(OPENROUTER)[0]
    _, streamed = _replayed(stack, events, "gemini", tool=True)
    assert streamed.finish == "STOP"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_azure_stream_keeps_its_id_and_model_past_the_prompt_filter_chunk(
    stack: tuple[str, dict[str, Emulator]], dialect: str
) -> None:
    events = recorded_streams(AZURE)[0]
    assert (events[0]["id"], events[0]["model"], events[0]["choices"]) == ("", "", [])
    first = events[1]
    text = "".join(
        choice["delta"].get("content") or ""
        for event in events
        if isinstance(event, dict)
        for choice in event["choices"]
    )
    usage = next(e["usage"] for e in events if isinstance(e, dict) and e.get("usage"))
    whole, streamed = _replayed(stack, events, dialect)
    assert streamed == whole
    assert (streamed.response_id, streamed.model) == (first["id"], first["model"])
    assert streamed.text == text and text
    assert streamed.usage == (usage["prompt_tokens"], usage["completion_tokens"])
    assert streamed.finish == STOPPED[dialect]
