"""Two real ``interlock serve`` processes on one real redis-server share their rate limits
and their usage totals: a budget spent on one is spent on the other, and either's admin
endpoint shows what both counted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import openai
import pytest

from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

ADMIN = "shared-admin-key"


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[list[str]]:
    directory = tmp_path_factory.mktemp("serve-shared-limits")
    store = redis_url[: redis_url.rindex("/")] + "/7"
    text = gateway_config("EMULATOR", store)
    text = text.replace(
        "[server]\n",
        '[server]\nseal_key_env = "INTERLOCK_TEST_SEAL"\n'
        'api_keys = [{key = "sk-shared", tenant = "shared"}]\n',
        1,
    )
    text += "\n[[rate_limits]]\nrequests_per_minute = 5\n"
    text += '\n[admin]\nkey_env = "INTERLOCK_TEST_ADMIN_KEY"\n\n[usage]\nflush_seconds = 0.2\n'
    with ExitStack() as stack, pytest.MonkeyPatch.context() as patch:
        patch.setenv("INTERLOCK_TEST_ADMIN_KEY", ADMIN)
        patch.setenv("INTERLOCK_TEST_SEAL", "one-seal-for-both")
        emulator_url, _ = stack.enter_context(emulators_on_loopback())
        urls: list[str] = []
        for name in ("a", "b"):
            (directory / name).mkdir()
            config = directory / name / "interlock.toml"
            config.write_text(text.replace("EMULATOR", emulator_url))
            urls.append(stack.enter_context(serve(config, directory / name)))
        yield urls


def _ask(url: str) -> tuple[int, int]:
    """(status, the input tokens the client was told)."""
    with openai.OpenAI(base_url=f"{url}/v1", api_key="sk-shared", max_retries=0) as client:
        try:
            answer = client.chat.completions.create(
                model="via-gemini", messages=[{"role": "user", "content": "three words here"}]
            )
        except openai.RateLimitError as error:
            assert error.response.headers["retry-after"]
            return 429, 0
        assert answer.usage is not None
        return 200, answer.usage.prompt_tokens


def test_two_processes_share_one_budget_and_one_usage_total(replicas: list[str]) -> None:
    first, second = replicas
    answers = [_ask(url) for url in (first, second) * 4]
    assert [status for status, _ in answers] == [200] * 5 + [
        429
    ] * 3  # 5 a minute between both, wherever they land
    # both processes' counts reach the store (the other one flushes every 0.2 s)
    deadline = time.monotonic() + 30
    while True:
        answer = httpx.get(
            f"{first}/admin/usage", headers={"authorization": f"Bearer {ADMIN}"}, timeout=30
        )
        totals = answer.json()["totals"]
        if totals["requests"] == 5 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert totals["requests"] == 5
    assert totals["input_tokens"] == sum(told for _, told in answers) > 0
    (row,) = answer.json()["usage"]
    assert (row["tenant"], row["model"], row["deployment"]) == ("shared", "via-gemini", "up-gemini")
