"""``effort_levels`` per model: read lowest first, checked, and handed to the codec."""

from __future__ import annotations

import pytest

from interlock.gateway.app import effort_rules
from interlock.gateway.config import ConfigError, parse_config

UPSTREAM = (
    "[[upstreams]]\nname='c'\nprotocol='anthropic'\nbase_url='https://api.anthropic.com/v1'\n"
)


def test_the_levels_are_read_lowest_first_and_unset_means_by_name() -> None:
    text = (
        UPSTREAM
        + "[[models]]\nname='a'\nupstream='c'\nmodel='house'\neffort_levels=['max', 'low', 'low']\n"
        + "[[models]]\nname='b'\nupstream='c'\nmodel='claude-opus-4-6'\neffort_levels=[]\n"
        + "[[models]]\nname='d'\nupstream='c'\nmodel='claude-opus-4-6'\n"
    )
    models = parse_config(text, {}).models
    assert [model.effort_levels for model in models] == [("low", "max"), (), None]
    assert effort_rules("c", models) == {"house": ("low", "max"), "claude-opus-4-6": ()}
    assert effort_rules("elsewhere", models) == {}


@pytest.mark.parametrize("value", ["['minimal']", "['none']", "'high'", "[3]"])
def test_a_level_anthropic_does_not_name_is_a_config_error(value: str) -> None:
    text = UPSTREAM + f"[[models]]\nname='a'\nupstream='c'\nmodel='m'\neffort_levels={value}\n"
    with pytest.raises(ConfigError) as error:
        parse_config(text, {})
    assert "models[0].effort_levels" in str(error.value)
