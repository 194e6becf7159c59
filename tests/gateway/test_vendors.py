"""An upstream's ``vendor``: its default from ``base_url``, and one clear error per mistake
(in the config loader and from ``interlock serve``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from interlock.gateway.config import ConfigError, parse_config
from tests.gateway.serving import ROOT


def responses(base_url: str, extra: str = "") -> str:
    return (
        f"[[upstreams]]\nname = 'r'\nprotocol = 'openai-responses'\nbase_url = '{base_url}'\n"
        + extra
    )


@pytest.mark.parametrize(
    ("base_url", "vendor"),
    [
        ("https://api.openai.com/v1", "openai"),
        ("https://eu.api.openai.com/v1", "openai"),
        ("https://api.x.ai/v1", "xai"),
        ("https://my-resource.openai.azure.com/openai/v1", "azure"),
        ("https://my-resource.cognitiveservices.azure.com/openai/v1", "azure"),
        ("https://my-project.services.ai.azure.com/openai/v1", "azure"),
        ("emulator://openai-responses", "openai"),
        ("https://LLM.Internal.Example:8443/v1", "llm.internal.example"),
        ("http://127.0.0.1:8790/v1", "127.0.0.1"),
        ("https://notopenai.com/v1", "notopenai.com"),
    ],
)
def test_the_vendor_defaults_from_the_host(base_url: str, vendor: str) -> None:
    upstream = parse_config(responses(base_url), {}).upstreams[0]
    assert upstream.vendor == vendor and upstream.issuer == vendor


def anthropic(base_url: str, extra: str = "") -> str:
    return f"[[upstreams]]\nname = 'a'\nprotocol = 'anthropic'\nbase_url = '{base_url}'\n" + extra


@pytest.mark.parametrize(
    ("base_url", "vendor"),
    [
        ("https://api.anthropic.com/v1", "anthropic"),
        ("https://api.deepseek.com/anthropic/v1", "deepseek"),
        ("https://api.moonshot.ai/anthropic/v1", "moonshot"),
        ("https://api.moonshot.cn/anthropic/v1", "moonshot"),
        ("https://api.minimax.io/anthropic/v1", "minimax"),
        ("https://api.minimaxi.com/anthropic/v1", "minimax"),
        ("emulator://anthropic", "anthropic"),
        ("https://api.z.ai/api/anthropic/v1", "api.z.ai"),
        ("http://127.0.0.1:8790/v1", "127.0.0.1"),
    ],
)
def test_an_anthropic_upstreams_vendor_defaults_from_the_host(base_url: str, vendor: str) -> None:
    upstream = parse_config(anthropic(base_url), {}).upstreams[0]
    assert upstream.vendor == vendor and upstream.issuer == vendor


def test_a_configured_anthropic_vendor_wins() -> None:
    text = anthropic("https://llm-proxy.example/anthropic/v1", "vendor = 'deepseek'\n")
    assert parse_config(text, {}).upstreams[0].issuer == "deepseek"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("vendor = 'DeepSeek'\n", "expected a vendor name"),
        ("vendor = ['deepseek']\n", "expected a vendor name"),
        ("vendor = 'unknown'\n", "reserved"),
    ],
)
def test_a_bad_anthropic_vendor_names_its_key(extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(anthropic("https://api.deepseek.com/anthropic", extra), {})
    assert error.value.key == "upstreams[0].vendor" and message in str(error.value)


def test_a_configured_vendor_wins_and_other_protocols_have_none() -> None:
    text = responses("https://gateway.example/v1", "vendor = 'xai'\n")
    text += (
        "[[upstreams]]\nname = 'c'\nprotocol = 'openai-chat'\nbase_url = 'https://api.x.ai/v1'\n"
    )
    first, second = parse_config(text, {}).upstreams
    assert first.issuer == "xai"
    assert second.vendor is None and second.issuer == ""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("vendor = 'xAI'\n", "expected a vendor name"),
        ("vendor = ''\n", "expected a vendor name"),
        ("vendor = 'open ai'\n", "expected a vendor name"),
        ("vendor = 7\n", "expected a vendor name"),
        ("vendor = 'unknown'\n", "reserved"),
    ],
)
def test_a_bad_vendor_names_its_key(extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(responses("https://api.openai.com/v1", extra), {})
    assert error.value.key == "upstreams[0].vendor" and message in str(error.value)


def test_vendor_is_only_for_responses_upstreams() -> None:
    text = "[[upstreams]]\nname = 'g'\nprotocol = 'gemini'\nbase_url = 'https://x'\n"
    with pytest.raises(ConfigError) as error:
        parse_config(text + "vendor = 'google'\n", {})
    assert error.value.key == "upstreams[0].vendor"
    assert "only for protocol openai-responses or anthropic" in str(error.value)


@pytest.mark.parametrize(
    "text",
    [
        responses("https://api.x.ai/v1", "vendor = 'X.AI'\n"),
        anthropic("https://api.deepseek.com/anthropic", "vendor = 'Deep Seek'\n"),
    ],
    ids=["responses", "anthropic"],
)
def test_interlock_serve_refuses_a_bad_vendor(tmp_path: Path, text: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "interlock.gateway.cli", "serve", "--config", str(config)]
    result = subprocess.run(
        command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert "config error: upstreams[0].vendor: expected a vendor name" in result.stderr
