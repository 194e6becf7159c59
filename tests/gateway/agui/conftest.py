"""Gateway processes shared by the multi-process AG-UI tests (started once per store)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.gateway.agui.processes import Shared, shared_cluster, store_url
from tests.gateway.serving import emulators_on_loopback


@pytest.fixture(scope="session", params=["sqlite", "redis"])
def shared(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Shared]:
    """Three ``interlock serve`` processes (plus an impatient one) on one SQLite file or
    one redis-server, all calling one upstream emulator."""
    directory = tmp_path_factory.mktemp(f"cluster-{request.param}")
    redis = request.getfixturevalue("redis_url") if request.param == "redis" else None
    with (
        emulators_on_loopback() as (upstream, _),
        shared_cluster(directory, store_url(request.param, directory, redis), upstream) as started,
    ):
        yield started
