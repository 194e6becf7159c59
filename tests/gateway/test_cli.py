"""The CLI: config errors exit non-zero with one message; exposure needs keys or an opt-in."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from interlock.gateway import cli
from interlock.gateway.cli import (
    EMULATOR_ENV,
    EMULATOR_GC_THRESHOLDS,
    check_exposure,
    describe,
    emulator_from_environment,
    is_loopback,
    main,
)
from interlock.gateway.config import ConfigError, load_config, parse_config


def test_bad_config_exits_non_zero_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[server]\nprot = 1\n")
    assert main(["serve", "--config", str(config)]) == 2
    assert "server.prot: unknown key" in capsys.readouterr().err


def test_console_script_reports_unreadable_key_variable(tmp_path: Path) -> None:
    config = tmp_path / "keys.toml"
    config.write_text(
        "[[upstreams]]\nname='g'\nprotocol='gemini'\nbase_url='https://x'\napi_key_env='INTERLOCK_TEST_UNSET'\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "interlock.gateway.cli", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "upstreams[0].api_key_env" in done.stderr and "INTERLOCK_TEST_UNSET" in done.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_non_loopback_bind_needs_keys_or_an_explicit_opt_in() -> None:
    exposed = load_config(None, environ={}).with_overrides(host="0.0.0.0")
    with pytest.raises(ConfigError, match="--allow-non-loopback"):
        check_exposure(exposed, allow_flag=False)
    check_exposure(exposed, allow_flag=True)
    keyed = parse_config("[server]\nhost='0.0.0.0'\napi_keys=['k']\n", {})
    check_exposure(keyed, allow_flag=False)


def test_banner_says_where_it_listens_and_what_it_routes() -> None:
    banner = describe(load_config(None, environ={}).with_overrides(port=9999))
    assert "http://127.0.0.1:9999" in banner
    assert "demo-gemini" in banner and "emulated-gemini" in banner


def test_banner_shows_a_routed_models_deployments_and_fallbacks() -> None:
    config = parse_config(
        "[[upstreams]]\nname='a'\nprotocol='openai-chat'\nbase_url='https://a'\n"
        "[[upstreams]]\nname='g'\nprotocol='gemini'\nbase_url='https://g'\n"
        "[[models]]\nname='smart'\nfallbacks=['cheap']\n"
        "deployments=[{upstream='a', model='m1', weight=3}, {upstream='g', model='m2'}]\n"
        "[[models]]\nname='cheap'\nupstream='g'\nmodel='m3'\n",
        {},
    )
    lines = describe(config).splitlines()
    assert "smart    " in lines[1] and lines[1].endswith(
        "-> a (openai-chat, m1) weight 3, g (gemini, m2) weight 1; fallbacks cheap"
    )
    assert lines[2].endswith("-> g (gemini, m3)")


def test_emulator_workers_build_their_app_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cli, "quiet_collections", lambda: None)  # this process's GC stays
    monkeypatch.setenv(EMULATOR_ENV, "gemini::")
    paths = {getattr(route, "path", "") for route in emulator_from_environment().routes}
    assert "/v1beta/models/{target}" in paths
    monkeypatch.setenv(EMULATOR_ENV, "openai-chat::")
    paths = {getattr(route, "path", "") for route in emulator_from_environment().routes}
    assert paths == {"/v1/chat/completions"}


@pytest.mark.parametrize(
    ("protocol", "vendor", "message"),
    [
        ("gemini", "xai", "--vendor is only for openai-responses and anthropic"),
        ("anthropic", "Not A Vendor", "expected a vendor name"),
    ],
)
def test_emulate_refuses_a_vendor_it_cannot_stand_for(
    protocol: str, vendor: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["emulate", "--protocol", protocol, "--vendor", vendor]) == 2
    assert message in capsys.readouterr().err


def test_emulate_refuses_an_unreadable_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.json"
    script.write_text("{not json")
    arguments = ["emulate", "--protocol", "gemini", "--script", str(script), "--workers", "2"]
    assert main(arguments) == 2
    assert "interlock:" in capsys.readouterr().err


def test_an_emulator_process_freezes_its_startup_objects_and_collects_young_less_often() -> None:
    thresholds = gc.get_threshold()
    gc.unfreeze()  # what this test process froze before (a gateway's startup)
    assert gc.get_freeze_count() == 0
    try:
        cli.quiet_collections()
        assert gc.get_threshold() == EMULATOR_GC_THRESHOLDS
        assert gc.get_freeze_count() > 0
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
