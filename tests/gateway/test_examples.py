"""The example config in examples/ stays valid as the config schema evolves."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlock.gateway.config import ConfigError, load_config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "interlock.toml"
ENVIRON = {"OPENAI_API_KEY": "sk-test", "GEMINI_API_KEY": "g-test", "INTERLOCK_SEAL_KEY": "ab" * 32}


def test_example_config_loads() -> None:
    config = load_config(str(EXAMPLE), environ=ENVIRON)
    assert [model.name for model in config.models] == ["smart", "flash"]
    assert config.models[0].fallbacks == ("flash",)
    assert [agent.name for agent in config.agents] == ["assistant"]


def test_example_config_names_a_missing_key_variable() -> None:
    environ = {key: value for key, value in ENVIRON.items() if key != "GEMINI_API_KEY"}
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        load_config(str(EXAMPLE), environ=environ)
