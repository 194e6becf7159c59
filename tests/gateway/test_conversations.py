"""Conversations through a real ``interlock serve``, owned per tenant, the official openai
SDK as client.

The gateway runs as a subprocess with two tenants (API keys) on each store (memory,
SQLite, Redis), in front of the emulators on loopback: the Responses emulator keeps
conversations as the service does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI

from interlock.emulators import Emulator, emulator_app
from interlock.emulators.openai_responses import OpenAIResponsesEmulator
from tests.gateway.helpers import client, gateway
from tests.gateway.serving import app_on_loopback, emulators_on_loopback, serve

CONFIG = """
[server]
access_log = false
seal_key_env = "INTERLOCK_TEST_SEAL"
api_keys = [{{key = "sk-a", tenant = "team-a"}}, {{key = "sk-b", tenant = "team-b"}}]

[store]
url = "{store}"

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
"""


@dataclass(frozen=True)
class Served:
    url: str
    emulators: str
    responses: OpenAIResponsesEmulator


@pytest.fixture(scope="module", params=["memory", "sqlite", "redis"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("conversations")
    if request.param == "memory":
        store = "memory://"
    elif request.param == "sqlite":
        store = f"sqlite:///{directory / 'state.db'}"
    else:
        base = str(request.getfixturevalue("redis_url"))
        store = base[: base.rindex("/")] + "/14"
    with pytest.MonkeyPatch.context() as patch, emulators_on_loopback() as (emulators, running):
        patch.setenv("INTERLOCK_TEST_SEAL", "conversations-seal")
        config = directory / "interlock.toml"
        config.write_text(CONFIG.format(store=store, emulators=emulators))
        with serve(config, directory) as url:
            yield Served(url, emulators, _responses(running))


def _responses(running: dict[str, Emulator]) -> OpenAIResponsesEmulator:
    emulator = running["openai-responses"]
    assert isinstance(emulator, OpenAIResponsesEmulator)
    return emulator


@pytest.fixture
def team_a(served: Served) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{served.url}/v1", api_key="sk-a") as sdk:
        yield sdk


@pytest.fixture
def team_b(served: Served) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{served.url}/v1", api_key="sk-b") as sdk:
        yield sdk


def _error(caught: pytest.ExceptionInfo[openai.APIStatusError]) -> dict[str, object]:
    body = caught.value.body
    assert isinstance(body, dict)
    return dict(body)


def test_another_tenants_conversation_is_not_found(
    served: Served, team_a: OpenAI, team_b: OpenAI
) -> None:
    secret = [{"type": "message", "role": "user", "content": "the code word is heliotrope"}]
    created = team_a.conversations.create(items=secret)  # type: ignore[arg-type]  # a message item
    sent_before = len(served.responses.received)
    with pytest.raises(openai.NotFoundError) as unknown:  # an id nobody holds, for comparison
        team_b.responses.create(model="via-responses", conversation="conv_nobody", input="hi")
    for conversation in (created.id, {"id": created.id}):
        with pytest.raises(openai.NotFoundError) as caught:
            team_b.responses.create(model="via-responses", conversation=conversation, input="hi")
        error = _error(caught)
        assert error["message"] == f"Conversation with id '{created.id}' not found."
        expected = _error(unknown)
        assert {**error, "message": ""} == {**expected, "message": ""}  # nothing disclosed
        with pytest.raises(openai.NotFoundError):
            team_b.responses.create(
                model="via-responses", conversation=conversation, input="hi", stream=True
            )
    for attempt in (
        lambda: team_b.conversations.retrieve(created.id),
        lambda: team_b.conversations.update(created.id, metadata={"owner": "b"}),
        lambda: team_b.conversations.items.list(created.id),
        lambda: team_b.conversations.items.create(
            created.id, items=[{"type": "message", "role": "user", "content": "x"}]
        ),
        lambda: team_b.conversations.items.retrieve("msg_1", conversation_id=created.id),
        lambda: team_b.conversations.items.delete("msg_1", conversation_id=created.id),
        lambda: team_b.conversations.delete(created.id),
    ):
        with pytest.raises(openai.NotFoundError) as caught:
            attempt()
        assert _error(caught)["message"] == f"Conversation with id '{created.id}' not found."
        assert caught.value.response.headers["x-interlock-translation"] == "none"
    assert len(served.responses.received) == sent_before + 1  # only "conv_nobody" went out
    listed = team_a.conversations.items.list(created.id, order="asc")
    assert [item.type for item in listed.data] == ["message"]  # B changed nothing


def test_the_owner_continues_streamed_and_not(team_a: OpenAI) -> None:
    created = team_a.conversations.create(metadata={"topic": "plans"})
    assert team_a.conversations.retrieve(created.id).metadata == {"topic": "plans"}
    answered = team_a.responses.create(
        model="via-responses", conversation=created.id, input="first"
    )
    assert answered.output_text
    with team_a.responses.stream(
        model="via-responses", conversation={"id": created.id}, input="second"
    ) as stream:
        streamed = stream.get_final_response()
    assert streamed.output_text
    texts = [
        item.content[0].text  # type: ignore[union-attr]  # messages, filtered below
        for item in team_a.conversations.items.list(created.id, order="asc").data
        if item.type == "message" and item.role == "user"  # type: ignore[union-attr]
    ]
    assert texts == ["first", "second"]
    added = team_a.conversations.items.create(
        created.id, items=[{"type": "message", "role": "user", "content": "third"}]
    )
    item_id = added.data[0].id
    item = team_a.conversations.items.retrieve(item_id, conversation_id=created.id)
    assert item.id == item_id
    team_a.conversations.items.delete(item_id, conversation_id=created.id)
    with pytest.raises(openai.NotFoundError):  # the upstream's own 404, passed on
        team_a.conversations.items.retrieve(item_id, conversation_id=created.id)
    assert team_a.conversations.retrieve(created.id).id == created.id  # still A's
    team_a.conversations.update(created.id, metadata={"topic": "done"})
    deleted = team_a.conversations.delete(created.id)
    assert deleted.deleted
    with pytest.raises(openai.NotFoundError):
        team_a.conversations.retrieve(created.id)


def test_an_id_the_gateway_never_saw_is_its_first_users(
    served: Served, team_a: OpenAI, team_b: OpenAI
) -> None:
    direct = httpx.post(f"{served.emulators}/v1/conversations", json={})  # made outside
    conversation_id = str(direct.json()["id"])
    assert team_b.responses.create(
        model="via-responses", conversation=conversation_id, input="mine now"
    ).output_text
    with pytest.raises(openai.NotFoundError):
        team_a.conversations.retrieve(conversation_id)
    assert team_b.conversations.retrieve(conversation_id).id == conversation_id


def test_keys_are_required(served: Served) -> None:
    answer = httpx.post(f"{served.url}/v1/conversations", json={})
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "invalid_api_key"


# ------------------------------------------------- in process: where conversations go

TWO_RESPONSES = """
[[upstreams]]
name = "first"
protocol = "openai-responses"
base_url = "https://first.example/v1"

[[upstreams]]
name = "second"
protocol = "openai-responses"
base_url = "https://second.example/v1"

[[models]]
name = "m"
upstream = "first"
model = "x"
"""

ONLY_CHAT = """
[[upstreams]]
name = "chat"
protocol = "openai-chat"
base_url = "https://chat.example/v1"

[[models]]
name = "m"
upstream = "chat"
model = "x"
"""


async def test_without_one_responses_upstream_conversations_are_refused() -> None:
    for config, status in ((TWO_RESPONSES, 400), (ONLY_CHAT, 404)):
        built = gateway({}, config)
        async with client(built) as http:
            for method, path in (("POST", "/v1/conversations"), ("GET", "/v1/conversations/c")):
                answer = await http.request(method, path, json={} if method == "POST" else None)
                error = answer.json()["error"]
                assert answer.status_code == status, answer.text
                assert error["code"] == "conversations_not_routed"
                if status == 400:
                    assert "`conversations = true`" in error["message"]
                assert answer.headers["x-interlock-translation"] == "none"


# ------------------------------ several Responses upstreams: the one chosen in the config

CHOSEN = """
[server]
access_log = false

[[upstreams]]
name = "first"
protocol = "openai-responses"
base_url = "{first}/v1"

[[upstreams]]
name = "second"
protocol = "openai-responses"
base_url = "{second}/v1"
conversations = true

[[models]]
name = "on-first"
upstream = "first"
model = "gpt-5-emulated"

[[models]]
name = "on-second"
upstream = "second"
model = "gpt-5-emulated"
"""


def test_with_several_responses_upstreams_new_conversations_go_to_the_chosen_one(
    tmp_path: Path,
) -> None:
    first, second = OpenAIResponsesEmulator(), OpenAIResponsesEmulator()
    with (
        app_on_loopback(emulator_app(first)) as first_url,
        app_on_loopback(emulator_app(second)) as second_url,
    ):
        config = tmp_path / "interlock.toml"
        config.write_text(CHOSEN.format(first=first_url, second=second_url))
        with serve(config, tmp_path) as url, OpenAI(base_url=f"{url}/v1", api_key="k") as sdk:
            created = sdk.conversations.create(metadata={"topic": "routing"})
            assert created.id in second.conversations and created.id not in first.conversations
            answered = sdk.responses.create(model="on-second", conversation=created.id, input="hi")
            with sdk.responses.stream(
                model="on-second", conversation=created.id, input="again"
            ) as stream:
                streamed = stream.get_final_response()
            assert answered.output_text and streamed.output_text
            items = sdk.conversations.items.list(created.id).data
            assert len([item for item in items if item.type == "message"]) == 4
            with pytest.raises(openai.NotFoundError):  # the first never held it: its own 404
                sdk.responses.create(model="on-first", conversation=created.id, input="hi")
