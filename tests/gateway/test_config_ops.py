"""The operations sections of the config: rate limits, usage, admin, tracing — and one clear
error naming the key for each mistake."""

from __future__ import annotations

import pytest

from interlock.gateway.config import ConfigError, parse_config
from interlock.gateway.config_ops import RateLimit, TracingConfig

BASE = """
[server]
api_keys = [{key = "sk-a", tenant = "team-a"}, {key = "sk-b", tenant = "team-b"}]

[[upstreams]]
name = "oa"
protocol = "openai-chat"
base_url = "https://api.example.com/v1"

[[models]]
name = "fast"
upstream = "oa"
model = "gpt-x"
"""


def test_the_sections_parse_into_typed_settings() -> None:
    text = (
        BASE
        + """
[[rate_limits]]
requests_per_minute = 60

[[rate_limits]]
tenant = "team-a"
model = "fast"
tokens_per_minute = 1000

[usage]
flush_seconds = 0.5

[admin]
key_env = "ADMIN_KEY"

[tracing]
otlp_endpoint = "http://127.0.0.1:4318/v1/traces"
"""
    )
    operations = parse_config(text, {"ADMIN_KEY": "admin-secret"}).operations
    assert operations.rate_limits == (
        RateLimit(requests_per_minute=60),
        RateLimit(tenant="team-a", model="fast", tokens_per_minute=1000),
    )
    assert operations.usage_flush_seconds == 0.5
    assert operations.admin_key == "admin-secret"
    assert "admin-secret" not in repr(operations)
    assert operations.tracing == TracingConfig(otlp_endpoint="http://127.0.0.1:4318/v1/traces")


def test_without_the_sections_nothing_is_limited_or_traced() -> None:
    operations = parse_config(BASE, {}).operations
    assert operations.rate_limits == ()
    assert operations.admin_key is None
    assert operations.tracing is None
    assert operations.usage_flush_seconds == 5.0


@pytest.mark.parametrize(
    ("extra", "environ", "key", "words"),
    [
        ("[[rate_limits]]\nrpm = 5", {}, "rate_limits[0].rpm", "unknown key"),
        ("[[rate_limits]]\ntenant = 'team-a'", {}, "rate_limits[0]", "requests_per_minute"),
        (
            "[[rate_limits]]\nrequests_per_minute = 0",
            {},
            "rate_limits[0].requests_per_minute",
            "positive",
        ),
        (
            "[[rate_limits]]\ntokens_per_minute = 1.5",
            {},
            "rate_limits[0].tokens_per_minute",
            "positive integer",
        ),
        (
            "[[rate_limits]]\nmodel = 'slow'\nrequests_per_minute = 1",
            {},
            "rate_limits[0].model",
            "no model named 'slow'",
        ),
        (
            "[[rate_limits]]\ntenant = 'team-z'\nrequests_per_minute = 1",
            {},
            "rate_limits[0].tenant",
            "team-a, team-b",
        ),
        ("[rate_limits]\nrequests_per_minute = 1", {}, "rate_limits", "array of tables"),
        ("[usage]\nflush_seconds = -1", {}, "usage.flush_seconds", "positive"),
        ("[usage]\nflush = 1", {}, "usage.flush", "unknown key"),
        ("[admin]\nkey_env = 'NOPE'", {}, "admin.key_env", "NOPE is not set or empty"),
        (
            "[admin]\nkey_env = 'SAME'",
            {"SAME": "sk-a"},
            "admin.key_env",
            "must not also be a client key",
        ),
        ("[admin]\nkey = 'x'", {}, "admin.key", "unknown key"),
        ("[tracing]\nservice_name = 'x'", {}, "tracing.otlp_endpoint", "required"),
        ("[tracing]\notlp_endpoint = 'localhost:4317'", {}, "tracing.otlp_endpoint", "http(s)://"),
        ("[tracing]\nendpoint = 'http://x'", {}, "tracing.endpoint", "unknown key"),
    ],
)
def test_each_mistake_names_its_key(
    extra: str, environ: dict[str, str], key: str, words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(BASE + extra, environ)
    assert caught.value.key == key
    assert words in str(caught.value)


def test_without_client_keys_the_one_tenant_is_default() -> None:
    text = BASE.replace(
        '[server]\napi_keys = [{key = "sk-a", tenant = "team-a"}, {key = "sk-b", tenant = "team-b"}]',
        "",
    )
    text += "[[rate_limits]]\ntenant = 'default'\nrequests_per_minute = 1\n"
    assert parse_config(text, {}).operations.rate_limits[0].tenant == "default"


def test_the_operations_page_examples_are_valid_config() -> None:
    """docs/operations.md's TOML blocks, with the embedded default's upstreams and models."""
    from pathlib import Path

    from interlock.gateway._default_config import DEFAULT_CONFIG_TOML

    page = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
    blocks = page.read_text().split("```toml\n")[1:]
    assert len(blocks) == 3
    examples = "\n".join(block.split("```")[0] for block in blocks)
    routes = DEFAULT_CONFIG_TOML[DEFAULT_CONFIG_TOML.index("[[upstreams]]") :]
    routes = routes[: routes.index("[[agents]]")]
    config = parse_config(examples + routes, {"INTERLOCK_ADMIN_KEY": "admin"})
    assert config.operations.tracing is not None
    limits = config.operations.rate_limits
    assert [(limit.tenant, limit.model) for limit in limits] == [
        (None, None),
        ("team-a", "demo-anthropic"),
    ]
    assert config.operations.admin_key == "admin"


def test_tracing_without_opentelemetry_installed_stops_startup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError) as caught:
        parse_config(BASE + "[tracing]\notlp_endpoint = 'http://127.0.0.1:4318/v1/traces'\n", {})
    assert caught.value.key == "tracing"
    assert "pip install 'interlock[otel]'" in str(caught.value)
