"""The routing keys of the config: deployments, fallbacks, retries, replay_mode, [routing]."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from interlock.gateway.config import ConfigError, parse_config
from interlock.gateway.config_routing import Deployment, RoutingConfig

UPSTREAMS = """
[[upstreams]]
name = "oa"
protocol = "openai-chat"
base_url = "https://a.example/v1"

[[upstreams]]
name = "gm"
protocol = "gemini"
base_url = "https://g.example"
"""


def test_a_route_with_deployments_fallbacks_and_its_own_keys() -> None:
    config = parse_config(
        UPSTREAMS
        + """
[routing]
failures_to_cool = 2
cooldown_seconds = 5

[[models]]
name = "smart"
retries = 1
replay_mode = "degrade"
fallbacks = ["cheap"]
deployments = [
  { upstream = "oa", model = "m-1", weight = 3, api_key_env = "SECOND_KEY" },
  { upstream = "gm", model = "m-2" },
]

[[models]]
name = "cheap"
upstream = "gm"
model = "m-3"
""",
        {"SECOND_KEY": "sk-second"},
    )
    smart, cheap = config.models
    assert smart.routed and not cheap.routed
    assert (smart.upstream, smart.model) == ("oa", "m-1")  # the first deployment's
    assert smart.deployments[0] == Deployment(
        upstream="oa", model="m-1", weight=3, api_key_env="SECOND_KEY", api_key="sk-second"
    )
    assert "sk-second" not in repr(config)
    assert (smart.retries, smart.replay_mode, smart.fallbacks) == (1, "degrade", ("cheap",))
    assert cheap.deployments == (Deployment(upstream="gm", model="m-3"),)
    assert config.routing == RoutingConfig(failures_to_cool=2, cooldown_seconds=5.0)


def test_the_routing_defaults() -> None:
    routing = parse_config(UPSTREAMS, {}).routing
    assert routing.failures_to_cool == 3
    assert routing.failure_window_seconds == 60.0
    assert routing.cooldown_seconds == 30.0
    assert (routing.backoff_seconds, routing.backoff_max_seconds) == (0.05, 2.0)


def test_overriding_the_listen_address_keeps_the_routing_section() -> None:
    config = parse_config(UPSTREAMS + "[routing]\ncooldown_seconds = 7\n", {})
    assert config.with_overrides(port=9000).routing.cooldown_seconds == 7.0


@pytest.mark.parametrize(
    ("models", "key", "words"),
    [
        ("[routing]\ncooldown = 3", "routing.cooldown", "unknown key"),
        ("[routing]\nfailures_to_cool = 0", "routing.failures_to_cool", "positive"),
        ("[[models]]\nname='m'\nupstream='oa'", "models[0].model", "required"),
        ("[[models]]\nname='m'", "models[0].upstream", "required (or give deployments)"),
        (
            "[[models]]\nname='m'\nupstream='oa'\nmodel='x'\ndeployments=[{upstream='oa', model='y'}]",
            "models[0].deployments",
            "not both",
        ),
        ("[[models]]\nname='m'\ndeployments=[]", "models[0].deployments", "at least one"),
        (
            "[[models]]\nname='m'\ndeployments=[{upstream='oa', model='y', colour=1}]",
            "models[0].deployments[0].colour",
            "unknown key",
        ),
        (
            "[[models]]\nname='m'\ndeployments=[{upstream='oa', model='y'}, {upstream='zz', model='y'}]",
            "models[0].deployments[1].upstream",
            "no upstream named 'zz'",
        ),
        (
            "[[models]]\nname='m'\ndeployments=[{upstream='oa', model='y', weight=0}]",
            "models[0].deployments[0].weight",
            "positive",
        ),
        (
            "[[models]]\nname='m'\ndeployments=[{upstream='oa', model='y', api_key_env='NOPE'}]",
            "models[0].deployments[0].api_key_env",
            "NOPE is not set",
        ),
        ("[[models]]\nname='m'\nupstream='oa'\nmodel='x'\nretries=-1", "models[0].retries", ""),
        (
            "[[models]]\nname='m'\nupstream='oa'\nmodel='x'\nreplay_mode='lenient'",
            "models[0].replay_mode",
            "strict, degrade",
        ),
        (
            "[[models]]\nname='m'\nupstream='oa'\nmodel='x'\nfallbacks=['ghost']",
            "models[0].fallbacks[0]",
            "no model named 'ghost'",
        ),
        (
            "[[models]]\nname='m'\nupstream='oa'\nmodel='x'\nfallbacks=['m']",
            "models[0].fallbacks[0]",
            "itself",
        ),
        (
            "[[models]]\nname='m'\nupstream='oa'\nmodel='x'\nfallbacks=['n', 'n']\n"
            "[[models]]\nname='n'\nupstream='gm'\nmodel='y'",
            "models[0].fallbacks[1]",
            "listed twice",
        ),
    ],
)
def test_each_routing_mistake_names_its_key(models: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(UPSTREAMS + models, {})
    assert raised.value.key == key
    assert words in str(raised.value)


def test_the_example_in_docs_routing_md_loads() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "routing.md"
    (example,) = re.findall(r"```toml\n(.*?)```", page.read_text(), re.S)
    keys = ("OPENAI_API_KEY", "OPENAI_SECOND_KEY", "AZURE_EAST_KEY", "ANTHROPIC_API_KEY")
    config = parse_config(example, {key: "k" for key in (*keys, "GEMINI_API_KEY")})
    smart = config.models[0]
    assert [(d.upstream, d.weight) for d in smart.deployments] == [
        ("openai", 3),
        ("openai", 1),
        ("azure-east", 2),
    ]
    assert smart.fallbacks == ("smart-claude", "flash") and smart.retries == 2
    assert config.routing == RoutingConfig()  # the documented defaults
