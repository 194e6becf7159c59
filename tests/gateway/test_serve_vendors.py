"""Switching between two vendors' Responses services through a real ``interlock serve``,
with the official ``openai`` SDK as a Responses client (issue 11: opaque reasoning goes
back only to its issuer).

Two Responses emulators stand for OpenAI and xAI (``issuer``): each mints its own
``encrypted_content`` and, like the services, refuses a blob the other issued (400
``invalid_encrypted_content``). The gateway names their vendors (``vendor``). One
conversation goes xAI → OpenAI → xAI, stateless (``store: false`` with
``reasoning.encrypted_content``), streamed and not, the client sending back every output
item it got:

* a vendor's blob never reaches the other vendor's upstream (nor do the ids of its
  step); the finished turn's reasoning is dropped with a warning, never refused;
* a vendor's own blob comes back to it byte-exact, on the turn that needs it and on its
  earlier turns;
* a switch inside an unfinished tool step is refused under strict, nothing sent.

The gateway knows which vendor issued a blob from its record of the answers it handed out
(``gateway/provenance.py``); a blob it never saw goes where the client sends it, and the
service judges it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from interlock.emulators import Emulator
from tests.gateway.serving import serve_two_vendors

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS: Any = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
STATELESS: Any = {"store": False, "include": ["reasoning.encrypted_content"]}


def config(openai_url: str, xai_url: str, store: str) -> str:
    return f"""
[server]
access_log = false

[store]
url = "{store}"

[[upstreams]]
name = "up-openai"
protocol = "openai-responses"
base_url = "{openai_url}/v1"
vendor = "openai"

[[upstreams]]
name = "up-xai"
protocol = "openai-responses"
base_url = "{xai_url}/v1"
vendor = "xai"

[[models]]
name = "gpt"
upstream = "up-openai"
model = "gpt-5-emulated"

[[models]]
name = "grok"
upstream = "up-xai"
model = "grok-4-emulated"
"""


Stack = tuple[str, dict[str, Emulator], dict[str, str]]
"""The gateway's URL, the emulators by vendor and their own URLs."""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    directory = tmp_path_factory.mktemp("serve-vendors")
    with serve_two_vendors(directory, "openai-responses", ("openai", "xai"), config) as stack:
        yield stack


def call(client: OpenAI, model: str, items: list[Any], stream: bool) -> tuple[list[Any], str]:
    """One stateless Responses call: its output items and the translation header."""
    options: Any = {"tools": TOOLS, "reasoning": {"effort": "medium"}, **STATELESS}
    if not stream:
        raw = client.responses.with_raw_response.create(model=model, input=items, **options)
        output = raw.parse().output
        return [item.model_dump(exclude_none=True) for item in output], raw.headers[
            "x-interlock-translation"
        ]
    with client.responses.with_streaming_response.create(
        model=model, input=items, stream=True, **options
    ) as raw:
        header = raw.headers["x-interlock-translation"]
        events = list(raw.parse())
    done = [event for event in events if event.type == "response.completed"]
    assert len(done) == 1, [event.type for event in events]
    return [item.model_dump(exclude_none=True) for item in done[0].response.output], header


def tool_turn(
    client: OpenAI, model: str, items: list[Any], city: str, stream: bool
) -> tuple[str, list[str]]:
    """The user asks for the weather, the model calls the tool, the answer comes back."""
    items.append({"role": "user", "content": f'call get_weather with {{"city": "{city}"}}'})
    output, first = call(client, model, items, stream)
    tool_call = next(item for item in output if item["type"] == "function_call")
    result = {"type": "function_call_output", "call_id": tool_call["call_id"], "output": city}
    items += [*output, result]
    output, second = call(client, model, items, stream)
    items += output
    text = "".join(
        part["text"] for item in output if item["type"] == "message" for part in item["content"]
    )
    return text, [first, second]


def blobs(items: list[Any]) -> list[str]:
    return [item["encrypted_content"] for item in items if item.get("type") == "reasoning"]


def sent_blobs(emulator: Emulator, since: int) -> list[str]:
    bodies: list[Any] = emulator.received[since:]
    return [blob for body in bodies for blob in blobs(body["input"])]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_reasoning_goes_back_only_to_the_vendor_that_issued_it(stack: Stack, stream: bool) -> None:
    url, emulators, _ = stack
    seen = {vendor: len(emulator.received) for vendor, emulator in emulators.items()}
    items: list[Any] = []
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        lima, xai_first = tool_turn(client, "grok", items, "Lima", stream)
        from_xai = blobs(items)
        oslo, to_openai = tool_turn(client, "gpt", items, "Oslo", stream)
        from_openai = [blob for blob in blobs(items) if blob not in from_xai]
        seen_back = len(emulators["xai"].received)
        rome, back_to_xai = tool_turn(client, "grok", items, "Rome", stream)
    for text, city in ((lima, "Lima"), (oslo, "Oslo"), (rome, "Rome")):
        assert text.startswith("Done: ") and text.endswith(f" returned {city}"), text
    assert len(from_xai) == 2 and len(from_openai) == 2, "each step carried its vendor's blob"
    # xAI's step went back to xAI exactly, with header exact (relayed byte for byte).
    assert xai_first == ["exact", "exact"]
    assert sent_blobs(emulators["xai"], seen["xai"])[:1] == from_xai[:1]
    # Nothing of xAI's reached OpenAI: not its blobs, not the ids of its steps.
    openai_bodies = json.dumps(emulators["openai"].received[seen["openai"] :])
    assert not any(blob in openai_bodies for blob in from_xai)
    assert "emuxai" not in openai_bodies
    assert all(h.startswith("degraded; ") and "reasoning_dropped" in h for h in to_openai)
    # OpenAI's own blob of the step it continued went back to it exactly.
    assert sent_blobs(emulators["openai"], seen["openai"]) == from_openai[:1]
    # Back on xAI: its earlier blobs went back byte-exact, OpenAI's never did.
    to_xai = sent_blobs(emulators["xai"], seen_back)
    assert set(from_xai) <= set(to_xai)
    assert not any(
        blob in json.dumps(emulators["xai"].received[seen_back:]) for blob in from_openai
    )
    assert all("reasoning_dropped" in h for h in back_to_xai), back_to_xai


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_switch_of_vendor_inside_an_unfinished_tool_step_is_refused(
    stack: Stack, stream: bool
) -> None:
    """The model continuing a tool call needs the reasoning of its step, which only the
    vendor that issued it can read: strict refuses, nothing is sent."""
    url, emulators, _ = stack
    items: list[Any] = [{"role": "user", "content": 'call get_weather with {"city": "Quito"}'}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        output, _ = call(client, "grok", items, stream)
        tool_call = next(item for item in output if item["type"] == "function_call")
        items += [
            *output,
            {"type": "function_call_output", "call_id": tool_call["call_id"], "output": "x"},
        ]
        seen = len(emulators["openai"].received)
        with pytest.raises(openai.BadRequestError) as refused:
            call(client, "gpt", items, stream)
    body: Any = refused.value.body
    assert body["code"] == "reasoning_not_replayable"
    assert "xai" in body["message"] and "current turn" in body["message"]
    assert len(emulators["openai"].received) == seen, "nothing was sent"


def test_a_blob_the_gateway_never_saw_goes_as_sent_and_its_service_judges_it(
    stack: Stack,
) -> None:
    """Unknown provenance (history from before the gateway recorded, or from another
    gateway): the blob goes to the target as the client sent it. Its own vendor accepts
    it; another's refuses it with its own 400, which the client gets."""
    url, emulators, direct_urls = stack
    items: list[Any] = [{"role": "user", "content": 'call get_weather with {"city": "Pisa"}'}]
    with OpenAI(base_url=f"{direct_urls['xai']}/v1", api_key="unused") as direct:
        output, _ = call_direct(direct, items)
    tool_call = next(item for item in output if item["type"] == "function_call")
    items += [
        *output,
        {"type": "function_call_output", "call_id": tool_call["call_id"], "output": "x"},
    ]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        seen = len(emulators["openai"].received)
        with pytest.raises(openai.BadRequestError) as refused:
            call(client, "gpt", items, False)
        assert len(emulators["openai"].received) == seen + 1, "it went, as the client sent it"
        answer, header = call(client, "grok", items, False)
    body: Any = refused.value.body
    assert body["code"] == "invalid_encrypted_content"
    assert header == "exact" and any(item["type"] == "message" for item in answer)


def call_direct(client: OpenAI, items: list[Any]) -> tuple[list[Any], str]:
    """A call straight to an emulator (no gateway in between)."""
    options: Any = {"tools": TOOLS, "reasoning": {"effort": "medium"}, **STATELESS}
    output = client.responses.create(model="grok-4-emulated", input=items, **options).output
    return [item.model_dump(exclude_none=True) for item in output], ""


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_stored_response_stays_with_the_vendor_that_stored_it(stack: Stack, stream: bool) -> None:
    """``previous_response_id`` names state one service keeps: the other vendor's
    upstream answers its own 400, and none of the first vendor's reasoning reaches it."""
    url, emulators, _ = stack
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        first = client.responses.create(
            model="grok", input="hello", reasoning={"effort": "low"}, store=True
        )
        again = client.responses.create(
            model="grok", input="and again", previous_response_id=first.id
        )
        assert again.output_text
        seen = len(emulators["openai"].received)
        with pytest.raises(openai.BadRequestError) as refused:
            options: Any = {"stream": True} if stream else {}
            client.responses.create(
                model="gpt", input="switch", previous_response_id=first.id, **options
            )
    body: Any = refused.value.body
    assert body["code"] == "previous_response_not_found"
    sent = emulators["openai"].received[seen:]
    assert len(sent) == 1 and "emuxai" not in json.dumps(sent[0]).replace(first.id, "")
