"""Two real ``interlock serve`` processes on one real redis-server share deployment
cooldowns: a deployment that failed through one is avoided by the other, which never
saw it fail.

Two emulator servers (A and B) fail on command and count every request by model; the
openai SDK is the client (its own retries off).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from interlock.emulators import emulator_app
from interlock.emulators.faults import Fault, FaultyApp
from interlock.gateway.metrics import Metrics
from interlock.gateway.routing_shared import SharedCooldowns
from interlock.gateway.routing_targets import Health
from tests.gateway.serving import app_on_loopback, four_emulators, free_port, serve


def _config(store: str, a: str, b: str) -> str:
    return f"""
[server]
seal_key_env = "INTERLOCK_TEST_SEAL"

[store]
url = "{store}"

[routing]
failures_to_cool = 1
cooldown_seconds = 600

[[upstreams]]
name = "a-chat"
protocol = "openai-chat"
base_url = "{a}/v1"

[[upstreams]]
name = "b-chat"
protocol = "openai-chat"
base_url = "{b}/v1"

[[models]]
name = "pair"
retries = 1
deployments = [{{ upstream = "a-chat", model = "pair-a" }}, {{ upstream = "b-chat", model = "pair-b" }}]
"""


@dataclass
class Replicas:
    first: str
    second: str
    a: FaultyApp
    b: FaultyApp

    def seen(self) -> Counter[str]:
        return self.a.seen + self.b.seen


@pytest.fixture
def replicas(tmp_path: Path, redis_url: str) -> Iterator[Replicas]:
    store = redis_url[: redis_url.rindex("/")] + "/9"
    a = FaultyApp(emulator_app(*four_emulators().values()))
    b = FaultyApp(emulator_app(*four_emulators().values()))
    with ExitStack() as stack, pytest.MonkeyPatch.context() as patch:
        patch.setenv("INTERLOCK_TEST_SEAL", "one-seal-for-both")
        a_url = stack.enter_context(app_on_loopback(a, "critical"))
        b_url = stack.enter_context(app_on_loopback(b, "critical"))
        urls: list[str] = []
        for name in ("first", "second"):
            (tmp_path / name).mkdir()
            config = tmp_path / name / "interlock.toml"
            config.write_text(_config(store, a_url, b_url))
            urls.append(stack.enter_context(serve(config, tmp_path / name)))
        yield Replicas(urls[0], urls[1], a, b)


def _answered_by(url: str) -> str:
    with openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client:
        answer = client.chat.completions.create(
            model="pair", messages=[{"role": "user", "content": "hello"}]
        )
    return answer.model


def _learned(url: str, deployment: str) -> int:
    text = httpx.get(f"{url}/metrics", timeout=30).text
    name = "interlock_deployment_cooldowns_learned_total"
    found = re.search(rf'^{name}\{{deployment="{re.escape(deployment)}"\}} (\d+)$', text, re.M)
    return int(found.group(1)) if found else 0


def test_a_deployment_cooled_down_by_one_process_is_avoided_by_the_other(
    replicas: Replicas,
) -> None:
    replicas.a.fail(Fault(status=503, model="pair-a"))
    # the first process tries A (503: it cools down), then answers from B
    assert _answered_by(replicas.first) == "pair-b"
    assert replicas.seen() == {"pair-a": 1, "pair-b": 1}
    # the second process reads the shared cooldowns every second
    deadline = time.monotonic() + 60
    while _learned(replicas.second, "a-chat/pair-a") == 0:
        assert time.monotonic() < deadline, "the second process never learnt the cooldown"
        time.sleep(0.1)
    # never having seen A fail, it would start its round-robin with A: it goes to B only
    answered = [_answered_by(replicas.second) for _ in range(4)]
    assert answered == ["pair-b"] * 4
    assert replicas.seen() == {"pair-a": 1, "pair-b": 5}
    # the process that cooled A down counts its own cooldown, not a learnt one
    assert _learned(replicas.first, "a-chat/pair-a") == 0
    metrics = httpx.get(f"{replicas.second}/metrics", timeout=30).text
    assert 'interlock_deployment_cooldowns_total{deployment="a-chat/pair-a"}' not in metrics


async def test_without_redis_each_process_keeps_its_own_health(
    caplog: pytest.LogCaptureFixture,
) -> None:
    health = Health("a-chat/pair-a", "a-chat/pair-a")
    closed = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    shared = SharedCooldowns(closed, [health], Metrics(), sync_seconds=0.01)
    await shared.start()
    health.cool_until = 42.0
    shared.cooled(health, 600)  # not shared, only logged
    deadline = time.monotonic() + 30
    while "reading the shared cooldowns failed" not in caplog.text:
        assert time.monotonic() < deadline, caplog.text
        await asyncio.sleep(0.01)
    await shared.close()  # the failed write is finished, nothing raised
    assert "sharing the cooldown of a-chat/pair-a failed" in caplog.text
    assert health.cool_until == 42.0
