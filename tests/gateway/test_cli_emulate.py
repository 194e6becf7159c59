"""``interlock emulate --vendor``: standalone emulators standing for two vendors of one
dialect, run as an operator runs them, with the official SDKs as clients.

Each mints opaque reasoning (Responses ``encrypted_content``, Anthropic thinking
``signature``) that only it accepts, as the services do; a blob from the other is refused
with the service's own 400.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.gateway.serving import ROOT, free_port, stop


@contextmanager
def emulate(protocol: str, vendor: str, directory: Path) -> Iterator[str]:
    """``interlock emulate --protocol … --vendor …`` on a free port until it answers."""
    port = free_port()
    command = [sys.executable, "-m", "interlock.gateway.cli", "emulate", "--protocol", protocol]
    command += ["--vendor", vendor, "--port", str(port)]
    log = directory / f"emulate-{port}.log"
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60  # generous: a loaded 2-core machine starts slowly
    try:
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        yield url
    finally:
        stop(process)


def test_two_responses_vendors_refuse_each_others_reasoning(tmp_path: Path) -> None:
    options: Any = {
        "model": "grok-4-emulated",
        "reasoning": {"effort": "medium"},
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    with (
        emulate("openai-responses", "xai", tmp_path) as xai_url,
        emulate("openai-responses", "openai", tmp_path) as openai_url,
        openai.OpenAI(base_url=f"{xai_url}/v1", api_key="-") as xai,
        openai.OpenAI(base_url=f"{openai_url}/v1", api_key="-") as other,
    ):
        first = xai.responses.create(input="think about it", **options)
        items: list[Any] = [
            {"role": "user", "content": "think about it"},
            *[item.model_dump(exclude_none=True) for item in first.output],
            {"role": "user", "content": "and again"},
        ]
        assert any(item.get("type") == "reasoning" for item in items)
        assert xai.responses.create(input=items, **options).output_text
        with pytest.raises(openai.BadRequestError) as refused:
            other.responses.create(input=items, **options)
    body: Any = refused.value.body
    assert body["code"] == "invalid_encrypted_content"


def test_two_anthropic_vendors_refuse_each_others_signatures(tmp_path: Path) -> None:
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    with (
        emulate("anthropic", "deepseek", tmp_path) as deepseek_url,
        emulate("anthropic", "anthropic", tmp_path) as anthropic_url,
        anthropic.Anthropic(base_url=deepseek_url, api_key="-") as deepseek,
        anthropic.Anthropic(base_url=anthropic_url, api_key="-") as other,
    ):
        question: Any = {"role": "user", "content": "think about it"}
        first = deepseek.messages.create(
            model="claude-emulated", max_tokens=2048, thinking=thinking, messages=[question]
        )
        assert any(block.type == "thinking" for block in first.content)
        messages: Any = [
            question,
            {"role": "assistant", "content": [block.model_dump() for block in first.content]},
            {"role": "user", "content": "and again"},
        ]
        again = deepseek.messages.create(
            model="claude-emulated", max_tokens=2048, thinking=thinking, messages=messages
        )
        assert again.content
        with pytest.raises(anthropic.BadRequestError):
            other.messages.create(
                model="claude-emulated", max_tokens=2048, thinking=thinking, messages=messages
            )
