"""An ``emulator://gemini`` upstream requires thought signatures the way the config says
its models do (``thought_signatures`` on ``[[models]]``), through ``interlock serve`` and the
google-genai client; a model the config says nothing about goes by its name (Gemini 3
requires them, Gemini 2.x does not)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from interlock.emulators.gemini import GeminiEmulator
from interlock.gateway.app import build_gateway, signature_rules
from interlock.gateway.config import parse_config
from interlock.gateway.stores import open_store
from tests.gateway.serving import serve

CONFIG = """
[server]
access_log = false

[store]
url = "memory://"

[[upstreams]]
name = "gemini"
protocol = "gemini"
base_url = "emulator://gemini"

[[models]]
name = "tuned-unsigned"
upstream = "gemini"
model = "tuned-model"
thought_signatures = "optional"

[[models]]
name = "flash-2-signed"
thought_signatures = "required"
deployments = [{ upstream = "gemini", model = "gemini-2.5-flash" }]

[[models]]
name = "flash-2"
upstream = "gemini"
model = "gemini-2.5-flash-lite"

[[models]]
name = "flash-3"
upstream = "gemini"
model = "gemini-3-flash"
"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("emulated-signatures")
    config = directory / "interlock.toml"
    config.write_text(CONFIG)
    with serve(config, Path(directory)) as served:
        yield served


def _unsigned_history(url: str, model: str, stream: bool) -> str:
    """A tool step whose call carries no thought signature, then its result."""
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    call = types.FunctionCall(name="get_weather", args={"city": "Paris"})
    result = types.FunctionResponse(name="get_weather", response={"result": "sunny"})
    contents: list[types.ContentUnion] = [
        types.Content(role="user", parts=[types.Part(text="weather in Paris?")]),
        types.Content(role="model", parts=[types.Part(function_call=call)]),
        types.Content(role="user", parts=[types.Part(function_response=result)]),
    ]
    if stream:
        chunks = client.models.generate_content_stream(model=model, contents=contents)
        return "".join(chunk.text or "" for chunk in chunks)
    return client.models.generate_content(model=model, contents=contents).text or ""


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("model", ["tuned-unsigned", "flash-2"])
def test_a_model_configured_or_named_without_signatures_takes_an_unsigned_history(
    url: str, model: str, stream: bool
) -> None:
    assert "get_weather returned" in _unsigned_history(url, model, stream)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("model", ["flash-2-signed", "flash-3"])
def test_a_model_configured_or_named_with_signatures_refuses_it(
    url: str, model: str, stream: bool
) -> None:
    with pytest.raises(genai_errors.ClientError) as refused:
        _unsigned_history(url, model, stream)
    assert refused.value.code == 400 and "signature" in str(refused.value)


def test_the_gateway_hands_its_emulator_the_configured_rules() -> None:
    config = parse_config(CONFIG, {})
    assert signature_rules("gemini", config.models) == {
        "tuned-model": False,
        "gemini-2.5-flash": True,
    }
    assert signature_rules("elsewhere", config.models) == {}
    built = build_gateway(config, store=open_store("memory://"))
    emulator = built.emulators["gemini"]
    assert isinstance(emulator, GeminiEmulator)
    assert emulator.requires_signatures("gemini-2.5-flash")  # configured, against its name
    assert not emulator.requires_signatures("tuned-model")  # configured, against its name
    assert not emulator.requires_signatures("gemini-2.5-flash-lite")  # by its name
    assert emulator.requires_signatures("gemini-3-flash")


def test_a_conflict_between_routes_requires_signatures() -> None:
    both = CONFIG + '\n[[models]]\nname = "again"\nupstream = "gemini"\nmodel = "tuned-model"\n'
    both += 'thought_signatures = "required"\n'
    assert signature_rules("gemini", parse_config(both, {}).models)["tuned-model"] is True
