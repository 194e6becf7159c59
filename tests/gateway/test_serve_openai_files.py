"""A file uploaded to OpenAI, referenced by id, across the two OpenAI dialects (issue 11).

Through a real ``interlock serve`` with the official ``openai`` SDK: a Responses client's
``input_file`` by ``file_id`` reaches a Chat upstream as a ``file`` part with that id (it was
refused), and a Chat client's ``file`` part by id reaches a Responses upstream as an
``input_file``; streamed and not. Gemini cannot read an OpenAI file: the request is refused
in the client's error shape, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

FILE_ID = "file-6F2ksmvXxt4VdoqmHRw6kL"
RESPONSES_INPUT: Any = [
    {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Summarize this report."},
            {"type": "input_file", "file_id": FILE_ID},
        ],
    }
]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("openai-files")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_responses_file_by_id_reaches_a_chat_upstream(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            events = list(
                client.responses.create(model="via-chat", input=RESPONSES_INPUT, stream=True)
            )
            response = next(e for e in events if e.type == "response.completed").response
        else:
            response = client.responses.create(model="via-chat", input=RESPONSES_INPUT)
    assert response.status == "completed"
    assert response.output_text
    content = emulators["openai-chat"].received[-1]["messages"][-1]["content"]
    assert {"type": "file", "file": {"file_id": FILE_ID}} in content


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_chat_file_by_id_reaches_a_responses_upstream(
    stack: tuple[str, dict[str, Emulator]], stream: bool
) -> None:
    url, emulators = stack
    content: Any = [
        {"type": "text", "text": "Summarize this report."},
        {"type": "file", "file": {"file_id": FILE_ID}},
    ]
    messages: Any = [{"role": "user", "content": content}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if stream:
            chunks = list(
                client.chat.completions.create(
                    model="via-responses", messages=messages, stream=True
                )
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            answer = client.chat.completions.create(model="via-responses", messages=messages)
            text = answer.choices[0].message.content or ""
    assert text
    parts = emulators["openai-responses"].received[-1]["input"][-1]["content"]
    assert {"type": "input_file", "file_id": FILE_ID} in parts


def test_gemini_is_never_sent_an_openai_file(stack: tuple[str, dict[str, Emulator]]) -> None:
    url, emulators = stack
    before = len(emulators["gemini"].received)
    with (
        OpenAI(base_url=f"{url}/v1", api_key="unused") as client,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        client.responses.create(model="via-gemini", input=RESPONSES_INPUT)
    assert "media_unreachable" in str(refused.value.body)
    assert len(emulators["gemini"].received) == before
