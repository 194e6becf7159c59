"""Event builders: usage accounting and patch validation."""

from __future__ import annotations

import pytest

from interlock.codecs.agui._events import add_usage, check_patch, token_usage
from interlock.transcript import Usage


def test_token_usage_follows_the_1_0_accounting() -> None:
    usage = Usage(
        input_tokens=100,
        output_tokens=50,
        reasoning_tokens=20,
        cached_input_tokens=40,
        tool_prompt_tokens=5,
    )
    assert token_usage(usage, model="m", provider="openai") == {
        "provider": "openai",
        "model": "m",
        "inputTokens": 105,
        "outputTokens": 50,
        "totalTokens": 155,
        "reasoningTokens": 20,
        "cachedInputTokens": 40,
    }


def test_usage_adds_field_by_field() -> None:
    total = add_usage(
        add_usage(None, Usage(input_tokens=1, output_tokens=2)),
        Usage(input_tokens=3, reasoning_tokens=1),
    )
    assert (total.input_tokens, total.output_tokens, total.reasoning_tokens) == (4, 2, 1)


@pytest.mark.parametrize(
    "operation",
    [
        {"op": "add", "path": "/a"},
        {"op": "copy", "path": "/a"},
        {"op": "remove"},
        {"op": "patch", "path": "/a"},
    ],
)
def test_malformed_patches_are_refused(operation: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        check_patch([operation])  # type: ignore[list-item]  # deliberately malformed


def test_well_formed_patches_pass() -> None:
    check_patch(
        [
            {"op": "add", "path": "/a", "value": None},
            {"op": "remove", "path": "/a"},
            {"op": "move", "from": "/b", "path": "/c"},
            {"op": "test", "path": "/c", "value": 1},
        ]
    )
