"""Stored Responses through a real ``interlock serve``, the official openai SDK as client.

The gateway runs as a subprocess with two tenants (API keys) and a SQLite store, in front
of the emulators on loopback: a Responses upstream that keeps what it answers, and a Chat
upstream that keeps nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from openai import OpenAI

from tests.gateway.helpers import UPSTREAM_KEY, Recorder, client, gateway
from tests.gateway.serving import emulators_on_loopback, serve

CONFIG = """
[server]
access_log = false
api_keys = [{{key = "sk-a", tenant = "team-a"}}, {{key = "sk-b", tenant = "team-b"}}]

[store]
url = "sqlite:///{state}"

[[upstreams]]
name = "up-responses"
protocol = "openai-responses"
base_url = "{emulators}/v1"

[[upstreams]]
name = "up-chat"
protocol = "openai-chat"
base_url = "{emulators}/v1"

[[models]]
name = "via-responses"
upstream = "up-responses"
model = "gpt-5-emulated"

[[models]]
name = "via-chat"
upstream = "up-chat"
model = "chat-emulated"
"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("state")
    with emulators_on_loopback() as (emulators, _):
        config = directory / "interlock.toml"
        config.write_text(CONFIG.format(state=directory / "state.db", emulators=emulators))
        with serve(config, directory) as served:
            yield served


@pytest.fixture
def team_a(url: str) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{url}/v1", api_key="sk-a") as client:
        yield client


@pytest.fixture
def team_b(url: str) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{url}/v1", api_key="sk-b") as client:
        yield client


def test_create_retrieve_list_delete(team_a: OpenAI) -> None:
    created = team_a.responses.create(model="via-responses", input="hello there")
    retrieved = team_a.responses.retrieve(created.id)
    assert retrieved.id == created.id and retrieved.output_text == created.output_text
    raw = team_a.responses.with_raw_response.retrieve(created.id)
    assert raw.headers["x-interlock-translation"] == "exact"
    listed = team_a.responses.input_items.list(created.id)
    assert [item.type for item in listed.data] == ["message"]
    assert listed.data[0].content[0].text == "hello there"  # type: ignore[union-attr]  # a message, as asserted above
    team_a.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError) as caught:
        team_a.responses.retrieve(created.id)
    error = caught.value.body
    assert isinstance(error, dict) and error["type"] == "invalid_request_error"
    assert f"Response with id '{created.id}' not found" in str(error["message"])
    with pytest.raises(openai.NotFoundError):
        team_a.responses.delete(created.id)


def test_a_streamed_answer_is_retrievable(team_a: OpenAI) -> None:
    with team_a.responses.stream(model="via-responses", input="hello") as stream:
        final = stream.get_final_response()
    retrieved = team_a.responses.retrieve(final.id)
    assert retrieved.output_text == final.output_text and retrieved.output_text


def test_input_items_pages_through_the_gateway(team_a: OpenAI) -> None:
    first = team_a.responses.create(model="via-responses", input="one")
    second = team_a.responses.create(
        model="via-responses",
        previous_response_id=first.id,
        input=[{"role": "user", "content": "two"}, {"role": "user", "content": "three"}],
    )
    every = [item.id for item in team_a.responses.input_items.list(second.id, order="asc")]
    paged = [i.id for i in team_a.responses.input_items.list(second.id, limit=2, order="asc")]
    assert paged == every and len(every) >= 4
    page = team_a.responses.input_items.list(second.id, limit=1)
    assert [item.id for item in page.data] == [every[-1]] and page.has_more
    with pytest.raises(openai.BadRequestError) as caught:  # the upstream's own 400, passed on
        team_a.responses.input_items.list(second.id, limit=0)
    assert isinstance(caught.value.body, dict) and caught.value.body["param"] == "limit"


def test_store_false_and_other_dialects_keep_nothing(team_a: OpenAI) -> None:
    unstored = team_a.responses.create(model="via-responses", input="hello", store=False)
    translated = team_a.responses.create(model="via-chat", input="hello")
    for response_id in (unstored.id, translated.id, "resp_never_seen"):
        with pytest.raises(openai.NotFoundError) as caught:
            team_a.responses.retrieve(response_id)
        assert isinstance(caught.value.body, dict)
        assert caught.value.body["code"] == "response_not_found"
        assert caught.value.response.headers["x-interlock-translation"] == "none"
        with pytest.raises(openai.NotFoundError):
            team_a.responses.input_items.list(response_id)
        with pytest.raises(openai.NotFoundError):
            team_a.responses.delete(response_id)


def test_a_tenant_never_reaches_another_tenants_response(team_a: OpenAI, team_b: OpenAI) -> None:
    created = team_a.responses.create(model="via-responses", input="secret plans")
    with pytest.raises(openai.NotFoundError):
        team_b.responses.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        team_b.responses.input_items.list(created.id)
    with pytest.raises(openai.NotFoundError):
        team_b.responses.delete(created.id)
    with pytest.raises(openai.BadRequestError) as caught:  # nor continues it (and reads it)
        team_b.responses.create(
            model="via-responses", previous_response_id=created.id, input="repeat that"
        )
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["code"] == "previous_response_not_found"
    assert team_a.responses.retrieve(created.id).id == created.id  # B's delete did nothing
    continued = team_a.responses.create(
        model="via-responses", previous_response_id=created.id, input="go on"
    )
    assert continued.output_text


def test_a_background_response_is_cancelled(team_a: OpenAI, team_b: OpenAI) -> None:
    queued = team_a.responses.create(model="via-responses", input="long job", background=True)
    assert queued.status == "queued" and not queued.output
    with pytest.raises(openai.NotFoundError):  # another tenant's: not found, sent nowhere
        team_b.responses.cancel(queued.id)
    with pytest.raises(openai.NotFoundError):
        team_a.responses.cancel("resp_never_seen")
    cancelled = team_a.responses.cancel(queued.id)
    assert (cancelled.id, cancelled.status) == (queued.id, "cancelled")
    assert team_a.responses.retrieve(queued.id).status == "cancelled"
    raw = team_a.responses.with_raw_response.cancel(queued.id)  # cancelled again: as it is
    assert raw.headers["x-interlock-translation"] == "exact" and raw.parse().status == "cancelled"
    finished = team_a.responses.create(model="via-responses", input="job", background=True)
    assert team_a.responses.retrieve(finished.id).status == "completed"
    assert team_a.responses.cancel(finished.id).status == "completed"  # done: unchanged
    foreground = team_a.responses.create(model="via-responses", input="quick")
    with pytest.raises(openai.BadRequestError) as caught:
        team_a.responses.cancel(foreground.id)
    error = caught.value.body
    assert isinstance(error, dict) and error["type"] == "invalid_request_error"
    assert error["message"] == "Only responses created with background=true can be cancelled."


def test_keys_are_required(url: str) -> None:
    answer = httpx.get(f"{url}/v1/responses/resp_1")
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "invalid_api_key"


# ------------------------------------------------- in process, against a mock upstream

ANSWER = {
    "id": "resp_abc",
    "object": "response",
    "created_at": 1,
    "status": "completed",
    "model": "up-responses",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "hi", "annotations": []}],
        }
    ],
}


def _mock(request: httpx.Request) -> httpx.Response:
    if request.method == "POST":
        return httpx.Response(200, json=ANSWER)
    if request.url.params.get("stream") == "true":
        events = [
            {"type": "response.created", "sequence_number": 0, "response": ANSWER},
            {"type": "response.completed", "sequence_number": 1, "response": ANSWER},
        ]
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})
    if request.url.path.endswith("/resp_broken"):
        error = {"message": f"bad key {UPSTREAM_KEY}", "type": "server_error", "code": None}
        return httpx.Response(503, json={"error": error})
    return httpx.Response(200, json=ANSWER, headers={"x-request-id": "req_up"})


async def test_state_requests_reach_the_upstream_as_sent() -> None:
    upstream = Recorder(_mock)
    built = gateway({"responses": upstream})
    async with client(built) as http:
        sdk = openai.AsyncOpenAI(base_url="http://localhost/v1", api_key="k", http_client=http)
        await sdk.responses.create(model="to-responses", input="hello")
        raw = await sdk.responses.with_raw_response.retrieve(
            "resp_abc", include=["reasoning.encrypted_content"]
        )
        assert raw.headers["x-request-id"] == "req_up"
        events = [
            event.type async for event in await sdk.responses.retrieve("resp_abc", stream=True)
        ]
        assert events == ["response.created", "response.completed"]
        sent = upstream.requests[1]
        assert (sent.method, sent.url.path) == ("GET", "/v1/responses/resp_abc")
        assert sent.url.params["include[]"] == "reasoning.encrypted_content"
        assert sent.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
        assert upstream.requests[2].url.params["stream"] == "true"
        with pytest.raises(openai.NotFoundError):
            await sdk.responses.retrieve("resp_unknown")
        assert len(upstream.requests) == 3  # an unknown id goes nowhere


async def test_upstream_failures_answer_in_the_responses_shape() -> None:
    answers = {"resp_broken": _mock, "resp_gone": _unreachable}
    for response_id, handler in answers.items():
        built = gateway({"responses": Recorder(handler)})
        index = built.proxy.operations.responses
        assert index is not None
        await index.remember("default", response_id, "responses")
        async with client(built) as http:
            answer = await http.get(f"/v1/responses/{response_id}")
        error = answer.json()["error"]
        assert answer.status_code in (502, 503) and set(error) >= {"message", "type", "code"}
        assert UPSTREAM_KEY not in answer.text


def _unreachable(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("refused", request=request)
