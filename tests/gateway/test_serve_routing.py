"""Routed models from the client's side: the official SDKs against ``interlock serve``.

Two emulator servers (A and B, each all four dialects) fail on command
(:class:`~interlock.emulators.faults.FaultyApp`) and count every request by model, so
each test sees where the gateway sent what. A third "deployment" is a loopback port
nobody listens on. The SDKs' own retries are off: every retry seen is the gateway's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from interlock.emulators import emulator_app
from interlock.emulators.faults import Fault, FaultyApp
from tests.gateway.serving import app_on_loopback, four_emulators, free_port, serve

TRANSLATION = "x-interlock-translation"
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def _config(a: str, b: str, dead: str) -> str:
    upstreams = "".join(
        f'[[upstreams]]\nname = "{name}"\nprotocol = "{protocol}"\nbase_url = "{url}"\n{extra}\n'
        for name, protocol, url, extra in [
            ("a-chat", "openai-chat", f"{a}/v1", 'reasoning_dialect = "reasoning_content"'),
            ("b-chat", "openai-chat", f"{b}/v1", 'reasoning_dialect = "reasoning_content"'),
            ("dead-chat", "openai-chat", f"{dead}/v1", "connect_timeout = 2"),
            ("a-responses", "openai-responses", f"{a}/v1", ""),
            ("a-gemini", "gemini", a, ""),
            ("a-anthropic", "anthropic", f"{a}/v1", ""),
        ]
    )
    return f"""
[server]
access_log = true

[store]
url = "memory://"

[routing]
failures_to_cool = 5
failure_window_seconds = 600
cooldown_seconds = 600
backoff_seconds = 0.01
backoff_max_seconds = 0.05

{upstreams}
[[models]]
name = "balanced"
deployments = [
  {{ upstream = "a-chat", model = "bal-a", weight = 3 }},
  {{ upstream = "b-chat", model = "bal-b", weight = 1 }},
]

[[models]]
name = "cooling"
retries = 1
deployments = [{{ upstream = "a-chat", model = "cool-a" }}, {{ upstream = "b-chat", model = "cool-b" }}]

[[models]]
name = "dead-or-alive"
deployments = [{{ upstream = "dead-chat", model = "dead" }}, {{ upstream = "b-chat", model = "alive" }}]

[[models]]
name = "retrying"
retries = 2
fallbacks = ["spare"]
deployments = [{{ upstream = "a-chat", model = "retry-a" }}]

[[models]]
name = "exhausting"
retries = 2
deployments = [{{ upstream = "a-chat", model = "exhaust-a" }}, {{ upstream = "b-chat", model = "exhaust-b" }}]

[[models]]
name = "spare"
upstream = "b-chat"
model = "spare-b"

[[models]]
name = "fb-chat"
retries = 0
fallbacks = ["backup-gemini"]
deployments = [{{ upstream = "a-chat", model = "fb-chat-a" }}]

[[models]]
name = "fb-gemini"
retries = 0
fallbacks = ["backup-anthropic"]
deployments = [{{ upstream = "a-gemini", model = "gemini-3-primary" }}]

[[models]]
name = "fb-anthropic"
retries = 0
fallbacks = ["backup-responses"]
deployments = [{{ upstream = "a-anthropic", model = "claude-primary" }}]

[[models]]
name = "backup-gemini"
upstream = "a-gemini"
model = "gemini-3-backup"

[[models]]
name = "backup-anthropic"
upstream = "a-anthropic"
model = "claude-backup"

[[models]]
name = "backup-responses"
upstream = "a-responses"
model = "gpt-backup"

[[models]]
name = "skipper"
retries = 0
fallbacks = ["backup-gemini", "backup-responses"]
deployments = [{{ upstream = "a-chat", model = "skip-a" }}]

[[models]]
name = "skip-only"
retries = 0
fallbacks = ["backup-gemini"]
deployments = [{{ upstream = "a-chat", model = "skiponly-a" }}]

[[models]]
name = "sig-checked"
retries = 0
fallbacks = ["gem-2-required", "gem-mixed"]
deployments = [{{ upstream = "a-chat", model = "sigcheck-a" }}]

[[models]]
name = "gem-2-required"
upstream = "a-gemini"
model = "gemini-2.5-flash-required"
thought_signatures = "required"

[[models]]
name = "gem-mixed"
deployments = [
  {{ upstream = "a-gemini", model = "gemini-3-mixed" }},
  {{ upstream = "a-gemini", model = "gemini-2.5-flash-mixed" }},
]

[[models]]
name = "streamer-gemini"
retries = 2
fallbacks = ["spare"]
deployments = [{{ upstream = "a-gemini", model = "gemini-3-stream" }}]

[[models]]
name = "streamer"
retries = 2
fallbacks = ["spare"]
deployments = [{{ upstream = "a-chat", model = "stream-a" }}]
"""


@dataclass
class Stack:
    url: str
    a: FaultyApp
    b: FaultyApp
    log: Path

    def seen(self) -> Counter[str]:
        return self.a.seen + self.b.seen

    def metrics(self) -> str:
        return httpx.get(f"{self.url}/metrics", timeout=10).text

    def counter(self, labels: str) -> int:
        """The routing fallbacks counter with ``labels`` (0 before its first count)."""
        name = "interlock_routing_fallbacks_total" + labels
        found = re.search(re.escape(name) + r" (\d+)", self.metrics())
        return int(found.group(1)) if found else 0

    def retries(self) -> Counter[tuple[str, str]]:
        """``interlock_upstream_retries_total`` by (upstream, kind)."""
        pattern = r'^interlock_upstream_retries_total\{upstream="([^"]+)",kind="([^"]+)"\} (\d+)$'
        found = re.findall(pattern, self.metrics(), re.MULTILINE)
        return Counter({(upstream, kind): int(count) for upstream, kind, count in found})


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    directory = tmp_path_factory.mktemp("routing")
    a = FaultyApp(emulator_app(*four_emulators().values()))
    b = FaultyApp(emulator_app(*four_emulators().values()))
    # a dropped connection is an error in the emulator's server: keep it out of the output
    with app_on_loopback(a, "critical") as a_url, app_on_loopback(b, "critical") as b_url:
        config = directory / "interlock.toml"
        config.write_text(_config(a_url, b_url, f"http://127.0.0.1:{free_port()}"))
        with serve(config, directory) as url:
            (log,) = directory.glob("serve-*.log")
            yield Stack(url, a, b, log)


@pytest.fixture(autouse=True)
def fresh(stack: Stack) -> Iterator[None]:
    stack.a.reset()
    stack.b.reset()
    yield
    assert not stack.a.pending and not stack.b.pending, "every queued fault was used"


def _openai(stack: Stack) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{stack.url}/v1", api_key="unused", max_retries=0)


def _chat(stack: Stack, model: str, stream: bool, messages: Any = None) -> tuple[str, str, str]:
    """(text, answering model, translation header) of one Chat Completions request."""
    messages = messages or [{"role": "user", "content": "hello"}]
    with _openai(stack) as client:
        raw = client.chat.completions.with_raw_response.create(
            model=model, messages=messages, stream=stream, tools=[WEATHER_TOOL]
        )
        header = raw.headers[TRANSLATION]
        if not stream:
            completion: Any = raw.parse()
            message = completion.choices[0].message
            calls = message.tool_calls or []
            return message.content or calls[0].function.name, completion.model, header
        text, answered = "", ""
        for chunk in raw.parse():
            answered = chunk.model or answered
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for call in choice.delta.tool_calls or []:
                    text += call.function.name if call.function and call.function.name else ""
        return text, answered, header


# ---------------------------------------------------------------- balancing and health


def test_weighted_balancing_sends_three_of_four_requests_to_the_weight_3_deployment(
    stack: Stack,
) -> None:
    answered = Counter(_chat(stack, "balanced", stream=index % 2 == 1)[1] for index in range(40))
    assert answered == {"bal-a": 30, "bal-b": 10}
    assert stack.seen() == {"bal-a": 30, "bal-b": 10}


def test_a_failing_deployment_cools_down_and_is_no_longer_chosen(stack: Stack) -> None:
    stack.a.fail(Fault(status=500, model="cool-a"), times=5)
    for index in range(20):
        text, answered, _ = _chat(stack, "cooling", stream=index % 2 == 0)
        assert (text, answered) == ("You said: hello", "cool-b")
    seen = stack.seen()
    assert seen["cool-a"] == 5  # the five faults, then never again
    assert seen["cool-b"] == 20
    assert 'interlock_deployment_cooldowns_total{deployment="a-chat/cool-a"} 1' in stack.metrics()


def test_an_unreachable_deployment_is_skipped_without_a_failed_request(stack: Stack) -> None:
    for index in range(14):
        assert _chat(stack, "dead-or-alive", stream=index % 2 == 0)[:2] == (
            "You said: hello",
            "alive",
        )
    metrics = stack.metrics()
    assert 'interlock_upstream_errors_total{upstream="dead-chat",kind="connect"} 5' in metrics
    assert 'interlock_deployment_cooldowns_total{deployment="dead-chat/dead"} 1' in metrics


# ---------------------------------------------------------------- retries


@pytest.mark.parametrize("stream", [False, True])
def test_a_429_is_retried_on_the_same_deployment_with_backoff(stack: Stack, stream: bool) -> None:
    before = stack.retries()
    stack.a.fail(Fault(status=429, retry_after="0", model="retry-a"), times=2)
    text, answered, header = _chat(stack, "retrying", stream)
    assert (text, answered, header) == ("You said: hello", "retry-a", "exact")
    assert stack.seen() == {"retry-a": 3}
    assert stack.retries() - before == {("a-chat", "same_deployment"): 2}


@pytest.mark.parametrize("stream", [False, True])
def test_retries_exhausted_answer_the_last_upstream_error_in_the_clients_dialect(
    stack: Stack, stream: bool
) -> None:
    # weights 1:1 from a fresh round: A, then B (untried), then B again (round-robin)
    before = stack.retries()
    stack.a.fail(Fault(status=503, model="exhaust-a"))
    stack.b.fail(Fault(status=500, model="exhaust-b"), times=2)
    with pytest.raises(openai.InternalServerError) as raised:
        _chat(stack, "exhausting", stream)
    assert raised.value.status_code == 500  # the third attempt's answer
    assert "emulated fault: internal error" in raised.value.message
    assert stack.seen() == {"exhaust-a": 1, "exhaust-b": 2}
    # retries and fallbacks are told apart: B tried after A, then B again
    assert stack.retries() - before == {
        ("b-chat", "other_deployment"): 1,
        ("b-chat", "same_deployment"): 1,
    }


# ---------------------------------------------------------------- fallbacks


@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_client_falls_back_to_a_gemini_model(stack: Stack, stream: bool) -> None:
    taken = stack.counter('{model="fb-chat",fallback="backup-gemini",outcome="taken"}')
    before = stack.retries()
    stack.a.fail(Fault(status=503, model="fb-chat-a"))
    text, answered, header = _chat(stack, "fb-chat", stream)
    assert (text, answered) == ("You said: hello", "gemini-3-backup")
    assert header == "translated; fallback to backup-gemini"
    assert stack.seen() == {"fb-chat-a": 1, "gemini-3-backup": 1}
    assert stack.counter('{model="fb-chat",fallback="backup-gemini",outcome="taken"}') == taken + 1
    assert stack.retries() - before == {("a-gemini", "fallback"): 1}


@pytest.mark.parametrize("stream", [False, True])
def test_a_gemini_client_falls_back_to_an_anthropic_model(stack: Stack, stream: bool) -> None:
    stack.a.fail(Fault(status=500, model="gemini-3-primary"))
    options = types.HttpOptions(base_url=stack.url)
    client = genai.Client(api_key="unused", http_options=options)
    if stream:
        chunks = list(client.models.generate_content_stream(model="fb-gemini", contents="hello"))
        text = "".join(chunk.text or "" for chunk in chunks)
        http = chunks[0].sdk_http_response
    else:
        answer = client.models.generate_content(model="fb-gemini", contents="hello")
        text, http = answer.text, answer.sdk_http_response
    assert text == "You said: hello"
    assert http is not None and http.headers is not None
    assert http.headers[TRANSLATION] == "translated; fallback to backup-anthropic"
    assert stack.seen() == {"gemini-3-primary": 1, "claude-backup": 1}


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_client_falls_back_to_a_responses_model(stack: Stack, stream: bool) -> None:
    # 529: Anthropic's "overloaded"; any 5xx moves on
    stack.a.fail(Fault(status=529 if stream else 503, model="claude-primary"))
    with anthropic.Anthropic(base_url=stack.url, api_key="unused", max_retries=0) as client:
        raw = client.messages.with_raw_response.create(
            model="fb-anthropic",
            max_tokens=256,
            messages=[{"role": "user", "content": "hello"}],
            stream=stream,
        )
        header = raw.headers[TRANSLATION]
        parsed: Any = raw.parse()
        if stream:
            text = "".join(
                event.delta.text
                for event in parsed
                if event.type == "content_block_delta" and event.delta.type == "text_delta"
            )
        else:
            text = "".join(block.text for block in parsed.content if block.type == "text")
    assert text == "You said: hello"
    assert header == "translated; fallback to backup-responses"
    assert stack.seen() == {"claude-primary": 1, "gpt-backup": 1}


def _tool_loop(stack: Stack, model: str) -> list[Any]:
    """A Chat tool loop whose first step the model's own deployment answered."""
    ask: list[Any] = [{"role": "user", "content": 'call get_weather with {"city": "Paris"}'}]
    with _openai(stack) as client:
        first = client.chat.completions.create(model=model, messages=ask, tools=[WEATHER_TOOL])
    call = first.choices[0].message.tool_calls
    assert call is not None
    # as most clients do, the reasoning text (an extra field) is not sent back
    assistant = first.choices[0].message.model_dump(
        exclude_none=True, exclude={"reasoning_content"}
    )
    result = {"role": "tool", "tool_call_id": call[0].id, "content": "sunny"}
    return [*ask, assistant, result]


@pytest.mark.parametrize("stream", [False, True])
def test_a_fallback_that_would_lose_signatures_is_skipped_and_the_next_one_taken(
    stack: Stack, stream: bool
) -> None:
    messages = _tool_loop(stack, "skipper")
    stack.a.fail(Fault(status=503, model="skip-a"))
    text, answered, header = _chat(stack, "skipper", stream, messages)
    # Gemini 3 needs the call's thought signature, which a Chat model never made: skipped;
    # Responses gets the current step without reasoning of its own: a vault miss, said so
    assert header == (
        "degraded; vault_miss at messages[1]; fallback backup-gemini skipped: "
        "missing_signature at messages[1].parts[0]; fallback to backup-responses"
    )
    assert text.startswith("Done: ") and text.endswith(" returned sunny")
    assert answered == "gpt-backup"
    assert stack.seen() == {"skip-a": 2, "gpt-backup": 1}  # Gemini was never called
    assert re.search(
        r"routing skipper: fallback backup-gemini a-gemini/gemini-3-backup skipped, "
        r"the history would be lossy: missing_signature at messages\[1\]\.parts\[0\]",
        stack.log.read_text(),
    )
    access = f'"model":"skipper","upstream":"a-responses","translation":"{header}"'
    assert access in stack.log.read_text()  # the access log says it too


@pytest.mark.parametrize("stream", [False, True])
def test_each_fallback_deployments_own_signature_rule_decides_whether_it_is_taken(
    stack: Stack, stream: bool
) -> None:
    messages = _tool_loop(stack, "sig-checked")
    stack.a.fail(Fault(status=503, model="sigcheck-a"))
    text, answered, header = _chat(stack, "sig-checked", stream, messages)
    # gem-2-required is configured to need signatures (its name would not): skipped; of
    # gem-mixed, the Gemini 3 deployment needs them (by name) and is skipped, the Gemini
    # 2.5 one does not and answers (the Chat step's reasoning text was not sent back)
    assert header == (
        "degraded; vault_miss at messages[1]; fallback gem-2-required skipped: "
        "missing_signature at messages[1].parts[0]; fallback to gem-mixed"
    )
    assert text.startswith("Done: ") and text.endswith(" returned sunny")
    assert answered == "gemini-2.5-flash-mixed"
    assert stack.seen() == {"sigcheck-a": 2, "gemini-2.5-flash-mixed": 1}
    assert re.search(
        r"routing sig-checked: fallback gem-mixed a-gemini/gemini-3-mixed skipped, "
        r"the history would be lossy: missing_signature",
        stack.log.read_text(),
    )


@pytest.mark.parametrize("stream", [False, True])
def test_when_every_fallback_is_skipped_the_client_gets_the_upstream_error_saying_so(
    stack: Stack, stream: bool
) -> None:
    messages = _tool_loop(stack, "skip-only")
    stack.a.fail(Fault(status=503, model="skiponly-a"))
    with _openai(stack) as client, pytest.raises(openai.InternalServerError) as raised:
        client.chat.completions.create(
            model="skip-only", messages=messages, tools=[WEATHER_TOOL], stream=stream
        )
    assert raised.value.status_code == 503
    assert raised.value.response.headers[TRANSLATION] == (
        "exact; fallback backup-gemini skipped: missing_signature at messages[1].parts[0]"
    )
    assert stack.seen() == {"skiponly-a": 2}
    assert (
        'interlock_routing_fallbacks_total{model="skip-only",fallback="backup-gemini",'
        'outcome="skipped"}' in stack.metrics()
    )


# ---------------------------------------------------------------- nothing sent twice


def test_no_switch_after_the_first_streamed_byte(stack: Stack) -> None:
    stack.a.fail(Fault(drop_after=2, model="stream-a"))
    received = ""
    with _openai(stack) as client:
        raw = client.chat.completions.with_raw_response.create(
            model="streamer", messages=[{"role": "user", "content": "hello"}], stream=True
        )
        assert raw.headers[TRANSLATION] == "exact"
        with pytest.raises(openai.APIError, match="broke off"):
            for chunk in raw.parse():
                received += "".join(choice.delta.content or "" for choice in chunk.choices)
    assert stack.seen() == {"stream-a": 1}  # neither retried nor sent to the fallback
    assert "You said: hello" not in received


def test_an_answer_cut_after_its_head_is_not_sent_again(stack: Stack) -> None:
    stack.a.fail(Fault(drop_after=0, model="stream-a"))
    with _openai(stack) as client, pytest.raises(openai.APIStatusError) as raised:
        client.chat.completions.create(
            model="streamer", messages=[{"role": "user", "content": "hello"}]
        )
    assert raised.value.status_code == 502
    assert stack.seen() == {"stream-a": 1}  # the upstream may have run it: not resent


def test_no_switch_after_the_first_streamed_byte_for_a_gemini_client(stack: Stack) -> None:
    stack.a.fail(Fault(drop_after=1, model="gemini-3-stream"))
    client = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=stack.url))
    chunks: list[Any] = []
    with pytest.raises(genai.errors.APIError) as raised:
        for chunk in client.models.generate_content_stream(
            model="streamer-gemini", contents="hello"
        ):
            chunks.append(chunk)
    assert chunks, "the first chunk reached the client before the upstream dropped"
    assert raised.value.code == 502 and "broke off" in str(raised.value.message)
    assert stack.seen() == {"gemini-3-stream": 1}  # neither retried nor sent to the fallback


@pytest.mark.parametrize("client", ["anthropic", "gemini"])
def test_an_error_as_the_first_stream_event_still_falls_back(stack: Stack, client: str) -> None:
    """Services fail after a 200 too (Anthropic's ``overloaded_error`` event): before the
    first event reaches the client, that is an outage like a 5xx."""
    if client == "anthropic":
        stack.a.fail(Fault(stream_error=True, status=529, model="claude-primary"))
        with anthropic.Anthropic(base_url=stack.url, api_key="unused", max_retries=0) as claude:
            raw = claude.messages.with_raw_response.create(
                model="fb-anthropic",
                max_tokens=256,
                messages=[{"role": "user", "content": "hello"}],
                stream=True,
            )
            header = raw.headers[TRANSLATION]
            events: Any = raw.parse()
            text = "".join(
                event.delta.text
                for event in events
                if event.type == "content_block_delta" and event.delta.type == "text_delta"
            )
        assert header == "translated; fallback to backup-responses"
        assert stack.seen() == {"claude-primary": 1, "gpt-backup": 1}
    else:
        stack.a.fail(Fault(stream_error=True, status=503, model="gemini-3-primary"))
        gemini = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=stack.url))
        chunks = list(gemini.models.generate_content_stream(model="fb-gemini", contents="hello"))
        text = "".join(chunk.text or "" for chunk in chunks)
        http = chunks[0].sdk_http_response
        assert http is not None and http.headers is not None
        assert http.headers[TRANSLATION] == "translated; fallback to backup-anthropic"
        assert stack.seen() == {"gemini-3-primary": 1, "claude-backup": 1}
    assert text == "You said: hello"
