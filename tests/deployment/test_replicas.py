"""Two real ``interlock serve`` replicas on one real redis-server: a replica whose config
differs from a live one says so in its log, naming the sections."""

from __future__ import annotations

from pathlib import Path

from tests.deployment.harness import Replica, config_text

SEAL = {"INTERLOCK_SEAL_KEY": "one-key-for-every-replica"}


def test_a_replica_warns_when_its_config_differs_from_a_live_one(
    tmp_path: Path, redis_url: str
) -> None:
    store = redis_url[: redis_url.rindex("/")] + "/11"
    server = 'seal_key_env = "INTERLOCK_SEAL_KEY"'
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    same = tmp_path / "a" / "interlock.toml"
    same.write_text(config_text("http://127.0.0.1:9/v1", store, server=server))
    other = tmp_path / "b" / "interlock.toml"
    other.write_text(config_text("http://127.0.0.1:10/v1", store, server=server))
    replicas = [
        Replica(same, tmp_path / "a", env=SEAL),
        Replica(same, tmp_path / "a", env=SEAL),
        Replica(other, tmp_path / "b", env=SEAL),
    ]
    try:
        for replica in replicas:
            replica.start()
        _, twin, stranger = replicas
        assert "config differs" not in twin.output()
        warning = [line for line in stranger.output().splitlines() if "config differs" in line]
        assert len(warning) == 2, stranger.output()
        assert all(" in upstreams: " in line for line in warning)
    finally:
        for replica in replicas:
            replica.stop()
