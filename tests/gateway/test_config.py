"""Config loading: the embedded default, and one clear error naming the key for each mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlock.codecs.registry import DIALECT_NAMES
from interlock.gateway.agui._agents import load_tool
from interlock.gateway.config import ConfigError, load_config, parse_config

VALID = """
[server]
api_keys = ["sk-a", {key = "sk-b", tenant = "team-b"}]

[[upstreams]]
name = "oa"
protocol = "openai-chat"
base_url = "https://api.example.com/v1"
api_key_env = "UPSTREAM_KEY"
reasoning_dialect = "openrouter"

[[models]]
name = "fast"
upstream = "oa"
model = "gpt-x"
"""


def test_embedded_default_routes_every_dialect_to_an_emulator() -> None:
    config = load_config(None, environ={})
    protocols = {config.upstream(model.upstream).protocol for model in config.models}
    assert protocols == set(DIALECT_NAMES)
    assert all(upstream.emulated for upstream in config.upstreams)
    assert config.store.url.startswith("sqlite:///.interlock/")
    assert [agent.name for agent in config.agents] == ["demo"]
    assert config.agents[0].approval_required == ("delete_file",)


def test_valid_config_reads_keys_from_the_environment() -> None:
    config = parse_config(VALID, {"UPSTREAM_KEY": "secret-value"})
    upstream = config.upstream("oa")
    assert upstream.api_key == "secret-value"
    assert "secret-value" not in repr(config)
    assert [key.tenant for key in config.server.api_keys][1] == "team-b"
    assert "sk-a" not in repr(config.server)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[server]\nhots = 'x'", "server.hots"),
        (
            "[[upstreams]]\nname='a'\nprotocol='gemini'\nbase_url='https://x'\ncolour=1",
            "upstreams[0].colour",
        ),
        (
            "[[upstreams]]\nname='a'\nprotocol='claude'\nbase_url='https://x'",
            "upstreams[0].protocol",
        ),
        ("[[upstreams]]\nname='a'\nprotocol='gemini'", "upstreams[0].base_url"),
        ("[[upstreams]]\nname='a'\nprotocol='gemini'\nbase_url='ftp://x'", "upstreams[0].base_url"),
        (
            "[[upstreams]]\nname='a'\nprotocol='gemini'\nbase_url='https://x'\napi_key_env='NOPE'",
            "upstreams[0].api_key_env",
        ),
        (
            "[[upstreams]]\nname='a'\nprotocol='gemini'\nbase_url='https://x'\nreasoning_dialect='reasoning'",
            "upstreams[0].reasoning_dialect",
        ),
        (
            "[[upstreams]]\nname='a'\nprotocol='gemini'\nbase_url='https://x'\n[[upstreams]]\nname='a'\nprotocol='gemini'\nbase_url='https://y'",
            "upstreams[1].name",
        ),
        ("[[models]]\nname='m'\nupstream='ghost'\nmodel='x'", "models[0].upstream"),
        (
            "[[upstreams]]\nname='a'\nprotocol='gemini'\nbase_url='https://x'\n"
            "[[models]]\nname='m'\nupstream='a'\nmodel='x'\nthought_signatures='always'",
            "models[0].thought_signatures",
        ),
        (
            "[[upstreams]]\nname='a'\nprotocol='openai-chat'\nbase_url='https://x'\nconversations=true",
            "upstreams[0].conversations",
        ),
        (
            "[[upstreams]]\nname='a'\nprotocol='openai-responses'\nbase_url='https://x'\nconversations=1",
            "upstreams[0].conversations",
        ),
        (
            "[[upstreams]]\nname='a'\nprotocol='openai-responses'\nbase_url='https://x'\nconversations=true\n"
            "[[upstreams]]\nname='b'\nprotocol='openai-responses'\nbase_url='https://y'\nconversations=true",
            "upstreams[1].conversations",
        ),
        ("[[agents]]\nname='a'\nmodel='ghost'", "agents[0].model"),
        ("[server]\nport = 'eighty'", "server.port"),
        ("[server]\ndrain_seconds = 0", "server.drain_seconds"),
        ("[server]\nseal_key_env = 'NOPE'", "server.seal_key_env"),
        ("[store]\nurl = 'postgres://x'", "store.url"),
        ("[server]\nallowed_origins = ['example.com']", "server.allowed_origins"),
        ("[server]\ncors_origins = ['http://a.example/path']", "server.cors_origins"),
        ("[server]\ncors_origins = 'http://a.example'", "server.cors_origins"),
        ("[server]\nallowed_hosts = ['gw.example:8787']", "server.allowed_hosts"),
        ("[unknown]\nx = 1", "unknown"),
    ],
)
def test_each_mistake_names_its_key(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(text, {})
    assert raised.value.key == key
    assert str(raised.value).startswith(key)


def test_agent_approval_must_name_one_of_its_tools() -> None:
    text = (
        VALID
        + "\n[[agents]]\nname='x'\nmodel='fast'\ntools=['pkg.mod:get_weather']\napproval_required=['delete_file']\n"
    )
    with pytest.raises(ConfigError) as raised:
        parse_config(text, {"UPSTREAM_KEY": "k"})
    assert raised.value.key == "agents[0].approval_required[0]"


def test_retry_on_interrupt_names_tools_and_sets_their_policy() -> None:
    agent = "\n[[agents]]\nname='x'\nmodel='fast'\ntools=['tests.gateway.agui.tools:get_weather']\n"
    config = parse_config(
        VALID + agent + "retry_on_interrupt=['get_weather']\n", {"UPSTREAM_KEY": "k"}
    )
    assert config.agents[0].retry_on_interrupt == ("get_weather",)
    loaded = load_tool("tests.gateway.agui.tools:get_weather", approval=False, key="k", retry=True)
    assert loaded.on_interrupt == "retry"
    assert (
        load_tool("tests.gateway.agui.tools:get_weather", approval=False, key="k").on_interrupt
        == "report"
    )
    with pytest.raises(ConfigError) as raised:
        parse_config(VALID + agent + "retry_on_interrupt=['nope']\n", {"UPSTREAM_KEY": "k"})
    assert raised.value.key == "agents[0].retry_on_interrupt[0]"


def test_missing_or_broken_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "absent.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[server\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(broken)


def test_browser_settings_are_normalized() -> None:
    text = (
        "[server]\nallowed_origins = ['HTTP://App.Example:3000']\n"
        "cors_origins = ['*']\nallowed_hosts = ['GW.example', '[fe80::1]']\n"
    )
    server = parse_config(text, {}).server
    assert server.allowed_origins == ("http://app.example:3000",)
    assert server.cors_origins == ("*",)
    assert server.allowed_hosts == ("gw.example", "[fe80::1]")


def test_a_models_thought_signature_rule_is_read() -> None:
    text = (
        "[[upstreams]]\nname='g'\nprotocol='gemini'\nbase_url='https://x'\n"
        "[[models]]\nname='a'\nupstream='g'\nmodel='gemini-2.5-flash'\nthought_signatures='required'\n"
        "[[models]]\nname='b'\nupstream='g'\nmodel='tuned'\nthought_signatures='optional'\n"
        "[[models]]\nname='c'\nupstream='g'\nmodel='gemini-3-pro'\n"
    )
    rules = {model.name: model.signatures_required for model in parse_config(text, {}).models}
    assert rules == {"a": True, "b": False, "c": None}
