"""Graceful drain of one real ``interlock serve`` process (SIGTERM), with slow streams.

A draining replica fails ``/readyz`` but not ``/livez``, refuses new requests with a 503 in
each API's error shape, lets in-flight proxied streams and AG-UI runs finish within
``server.drain_seconds``, ends the rest with a resumable error, and then exits 0.
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from tests.deployment.agui import new_id, of_type, run_input, run_sse, sse_events
from tests.deployment.harness import Replica, config_text, slow_upstream
from tests.deployment.tools import executions

MESSAGES: list[openai.types.chat.ChatCompletionMessageParam] = [
    {"role": "user", "content": "hello there"}
]


@pytest.fixture
def executions_file(tmp_path: Path) -> Path:
    return tmp_path / "executions.log"


def start_replica(
    tmp_path: Path, upstream: str, executions_file: Path, drain_seconds: float
) -> Replica:
    config = tmp_path / "interlock.toml"
    store = f"sqlite:///{tmp_path / 'state.db'}"
    server = f"drain_seconds = {drain_seconds}"
    config.write_text(config_text(upstream, store, server=server, approval=False))
    env = {"INTERLOCK_TEST_EXECUTIONS": str(executions_file)}
    return Replica(config, tmp_path, env=env).start()


@pytest.fixture
def replica_factory(tmp_path: Path, executions_file: Path) -> Iterator[list[Replica]]:
    replicas: list[Replica] = []
    yield replicas
    for replica in replicas:
        replica.stop()


def test_in_flight_stream_finishes_while_new_requests_are_refused(
    tmp_path: Path, executions_file: Path, replica_factory: list[Replica]
) -> None:
    gate = threading.Event()
    with slow_upstream(stream_delay=0, gate=gate) as (upstream, _):
        replica = start_replica(tmp_path, upstream, executions_file, drain_seconds=60)
        replica_factory.append(replica)
        client = openai.OpenAI(base_url=f"{replica.url}/v1", api_key="-", max_retries=0)
        with client:
            stream = client.chat.completions.create(model="chat", messages=MESSAGES, stream=True)
            chunks = iter(stream)
            first = next(chunks)
            replica.signal(signal.SIGTERM)
            replica.wait_draining()
            assert replica.probe("/readyz") == 503
            assert replica.probe("/livez") == 200
            assert replica.probe("/healthz") == 200
            with pytest.raises(openai.APIStatusError) as refused:
                client.chat.completions.create(model="chat", messages=MESSAGES)
            assert refused.value.status_code == 503
            assert refused.value.code == "replica_draining"
            assert refused.value.response.headers["retry-after"] == "1"
            gemini = httpx.post(
                f"{replica.url}/v1beta/models/chat:generateContent",
                json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
            )
            assert gemini.status_code == 503
            assert gemini.json()["error"]["status"] == "UNAVAILABLE"
            agui = httpx.post(f"{replica.url}/agui/assistant", json=run_input("t", "hi"))
            assert agui.status_code == 503
            assert agui.json()["error"]["code"] == "replica_draining"
            assert replica.probe("/livez") == 200  # the held stream kept the replica up
            gate.set()
            rest = list(chunks)
        text = "".join(
            chunk.choices[0].delta.content or "" for chunk in [first, *rest] if chunk.choices
        )
        assert text == "You said: hello there"
        assert [c.choices[0].finish_reason for c in rest if c.choices][-1] == "stop"
        assert replica.wait_exit() == 0


def test_stream_past_the_deadline_ends_with_a_resumable_error(
    tmp_path: Path, executions_file: Path, replica_factory: list[Replica]
) -> None:
    with slow_upstream(stream_delay=5) as (upstream, _):
        replica = start_replica(tmp_path, upstream, executions_file, drain_seconds=1)
        replica_factory.append(replica)
        client = openai.OpenAI(base_url=f"{replica.url}/v1", api_key="-", max_retries=0)
        with client:
            stream = client.chat.completions.create(model="chat", messages=MESSAGES, stream=True)
            chunks = iter(stream)
            next(chunks)
            replica.signal(signal.SIGTERM)
            with pytest.raises(openai.APIError) as ended:
                list(chunks)
        assert ended.value.code == "replica_shutdown"
        assert "send the request again" in ended.value.message
        assert replica.wait_exit() == 0


def test_agui_run_in_flight_finishes_during_the_drain(
    tmp_path: Path, executions_file: Path, replica_factory: list[Replica]
) -> None:
    key = new_id("k")
    with slow_upstream(stream_delay=0.2) as (upstream, _):
        replica = start_replica(tmp_path, upstream, executions_file, drain_seconds=60)
        replica_factory.append(replica)
        text = f'call note with {{"key": "{key}", "seconds": 2}}'
        with (
            httpx.Client() as client,
            client.stream(
                "POST",
                f"{replica.url}/agui/assistant",
                json=run_input(new_id("t"), text),
                timeout=60,
            ) as response,
        ):
            events = sse_events(response)
            assert next(events)["type"] == "RUN_STARTED"
            replica.signal(signal.SIGTERM)
            replica.wait_draining()
            rest = list(events)
        assert rest[-1]["type"] == "RUN_FINISHED", rest[-1]
        assert [e["content"] for e in of_type(rest, "TOOL_CALL_RESULT")] == [f"noted {key}"]
        assert replica.wait_exit() == 0
    assert executions(str(executions_file)) == {("note", key): 1}


def test_agui_run_past_the_deadline_ends_resumably_and_resumes_elsewhere(
    tmp_path: Path, executions_file: Path, replica_factory: list[Replica]
) -> None:
    key, thread = new_id("k"), new_id("t")
    body = run_input(thread, f'call note with {{"key": "{key}", "seconds": 30}}')
    with slow_upstream(stream_delay=0.05) as (upstream, _):
        replica = start_replica(tmp_path, upstream, executions_file, drain_seconds=1)
        replica_factory.append(replica)
        with (
            httpx.Client() as client,
            client.stream(
                "POST", f"{replica.url}/agui/assistant", json=body, timeout=60
            ) as response,
        ):
            events = sse_events(response)
            for event in events:
                if event["type"] == "TOOL_CALL_END":
                    break
            replica.signal(signal.SIGTERM)
            rest = list(events)
        assert rest[-1]["type"] == "RUN_ERROR", rest[-1]
        assert rest[-1]["code"] == "REPLICA_SHUTDOWN"
        assert replica.wait_exit() == 0
        assert executions(str(executions_file)) == {}
        # the same input again, on another replica over the same store: it goes on
        successor = start_replica(tmp_path, upstream, executions_file, drain_seconds=1)
        replica_factory.append(successor)
        quick = run_input(thread, f'call note with {{"key": "{key}", "seconds": 0}}')
        with httpx.Client() as client:
            again = run_sse(client, f"{successor.url}/agui/assistant", quick)
        assert again[-1]["type"] == "RUN_FINISHED", again[-1]
    assert executions(str(executions_file)) == {("note", key): 1}


def test_websockets_close_with_1012_idle_at_once_busy_after_their_run(
    tmp_path: Path, executions_file: Path, replica_factory: list[Replica]
) -> None:
    key = new_id("k")
    with slow_upstream(stream_delay=0.2) as (upstream, _):
        replica = start_replica(tmp_path, upstream, executions_file, drain_seconds=60)
        replica_factory.append(replica)
        ws_url = replica.url.replace("http", "ws") + "/agui/assistant/ws"
        with connect(ws_url) as idle, connect(ws_url) as busy:
            text = f'call note with {{"key": "{key}", "seconds": 2}}'
            busy.send(json.dumps(run_input(new_id("t"), text)))
            assert json.loads(busy.recv(timeout=30))["type"] == "RUN_STARTED"
            replica.signal(signal.SIGTERM)
            with pytest.raises(ConnectionClosed) as closed:
                idle.recv(timeout=30)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
            with pytest.raises(InvalidStatus):
                connect(ws_url).close()
            frames: list[dict[str, object]] = []
            with pytest.raises(ConnectionClosed) as after:
                while True:
                    frames.append(json.loads(busy.recv(timeout=30)))
            assert after.value.rcvd is not None and after.value.rcvd.code == 1012
        assert frames[-1]["type"] == "RUN_FINISHED", frames[-1]
        assert replica.wait_exit() == 0
    assert executions(str(executions_file)) == {("note", key): 1}
