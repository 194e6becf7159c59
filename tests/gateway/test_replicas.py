"""Startup checks for a shared store, config digests and the replica registry (on a real
redis-server). Two real ``interlock serve`` processes disagreeing are in
``tests/deployment/test_replicas.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from interlock.gateway.cli import main
from interlock.gateway.config import ConfigError, GatewayConfig, parse_config
from interlock.gateway.replicas import ReplicaRegistry, check_shared_store, config_digests
from interlock.gateway.stores import open_store

BASE = """
[server]
port = {port}
{seal}

[store]
url = "{store}"

[[upstreams]]
name = "up"
protocol = "openai-chat"
base_url = "{base_url}"

[[models]]
name = "m"
upstream = "up"
model = "x"
"""


def config(
    *,
    store: str = "redis://127.0.0.1:6379/0",
    seal: str | None = "SEAL",
    port: int = 8787,
    base_url: str = "https://a.example/v1",
    environ: dict[str, str] | None = None,
) -> GatewayConfig:
    line = f'seal_key_env = "{seal}"' if seal else ""
    text = BASE.format(port=port, seal=line, store=store, base_url=base_url)
    return parse_config(text, environ if environ is not None else {"SEAL": "k1"})


def test_a_shared_store_needs_a_configured_seal_key() -> None:
    with pytest.raises(ConfigError) as refused:
        check_shared_store(config(seal=None))
    assert refused.value.key == "server.seal_key_env"
    assert "SEAL_INVALID" in str(refused.value)
    check_shared_store(config())
    check_shared_store(config(store="sqlite:///x.db", seal=None))


def test_serve_refuses_to_start_on_redis_without_a_seal_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "interlock.toml"
    path.write_text(
        BASE.format(port=0, seal="", store="redis://127.0.0.1:1/0", base_url="https://a/v1")
    )
    assert main(["serve", "--config", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("interlock: config error: server.seal_key_env: a shared store")


def test_digests_ignore_where_a_replica_listens_and_hash_secrets() -> None:
    first = config_digests(config(port=1))
    assert config_digests(config(port=2)) == first
    other_key = config_digests(config(environ={"SEAL": "k2"}))
    assert [name for name in first if first[name] != other_key[name]] == ["server"]
    moved = config_digests(config(base_url="https://b.example/v1"))
    assert [name for name in first if first[name] != moved[name]] == ["upstreams"]
    assert "k1" not in repr(first)


async def test_replicas_see_each_other_and_warn_when_configs_differ(redis_url: str) -> None:
    store = open_store(redis_url[: redis_url.rindex("/")] + "/9")
    now = [1000.0]
    try:
        for key, _ in await store.backend.scan("replica/"):
            await store.backend.delete(key)
        one = ReplicaRegistry(
            store.backend, {"server": "a", "upstreams": "u"}, clock=lambda: now[0]
        )
        same = ReplicaRegistry(
            store.backend, {"server": "a", "upstreams": "u"}, clock=lambda: now[0]
        )
        other = ReplicaRegistry(
            store.backend, {"server": "b", "upstreams": "u"}, clock=lambda: now[0]
        )
        assert await one.start() == []
        assert await same.start() == []
        warnings = await other.start()
        assert len(warnings) == 2
        assert all(" in server: " in warning for warning in warnings)
        assert one.replica_id in " ".join(warnings)
        assert await other.alive(one.replica_id)
        await same.stop()
        assert not await other.alive(same.replica_id)  # left cleanly: entry removed
        now[0] += 60  # nobody refreshed (the heartbeats run every 2 s of real time)
        assert not await other.alive(one.replica_id)
        assert set(await other.others()) == set()  # stale entries swept
        await one.stop()
        await other.stop()
    finally:
        await store.close()
