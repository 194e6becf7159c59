"""The Responses emulator's conversations, with the official SDK as the client."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from starlette.testclient import TestClient

from interlock.emulators._conversations import Conversations
from interlock.emulators.openai_responses import OpenAIResponsesEmulator, create_app


@pytest.fixture
def sdk() -> Iterator[openai.OpenAI]:
    with TestClient(create_app(OpenAIResponsesEmulator())) as http:
        yield openai.OpenAI(base_url="http://testserver/v1", api_key="k", http_client=http)


def _texts(sdk: openai.OpenAI, conversation_id: str) -> list[str]:
    listed = sdk.conversations.items.list(conversation_id, order="asc")
    return [
        part.text  # type: ignore[union-attr]  # text parts of messages, filtered below
        for item in listed.data
        if item.type == "message"
        for part in item.content  # type: ignore[union-attr]
    ]


def test_create_continue_and_list(sdk: openai.OpenAI) -> None:
    first = [{"type": "message", "role": "user", "content": "remember heliotrope"}]
    created = sdk.conversations.create(items=first, metadata={"topic": "t"})  # type: ignore[arg-type]  # a message item
    assert created.id.startswith("conv_") and len(created.id) == 53
    assert created.metadata == {"topic": "t"} and created.object == "conversation"
    answered = sdk.responses.create(model="m", conversation=created.id, input="and then?")
    with sdk.responses.stream(
        model="m", conversation={"id": created.id}, input="once more"
    ) as stream:
        streamed = stream.get_final_response()
    texts = _texts(sdk, created.id)
    assert texts == [
        "remember heliotrope",
        "and then?",
        answered.output_text,
        "once more",
        streamed.output_text,
    ]
    every = [item.id for item in sdk.conversations.items.list(created.id, order="asc")]
    page = sdk.conversations.items.list(created.id, limit=2)
    assert [item.id for item in page.data] == every[::-1][:2] and page.has_more
    with pytest.raises(openai.BadRequestError):
        sdk.conversations.items.list(created.id, limit=0)


def test_update_items_and_delete(sdk: openai.OpenAI) -> None:
    created = sdk.conversations.create()
    assert sdk.conversations.update(created.id, metadata={"a": "b"}).metadata == {"a": "b"}
    added = sdk.conversations.items.create(
        created.id, items=[{"type": "message", "role": "user", "content": "hello"}]
    )
    item_id = added.data[0].id
    assert sdk.conversations.items.retrieve(item_id, conversation_id=created.id).id == item_id
    assert sdk.conversations.items.delete(item_id, conversation_id=created.id).id == created.id
    with pytest.raises(openai.NotFoundError) as caught:
        sdk.conversations.items.retrieve(item_id, conversation_id=created.id)
    assert caught.value.body["message"] == f"Item with id '{item_id}' not found."  # type: ignore[index]  # the error object
    deleted = sdk.conversations.delete(created.id)
    assert (deleted.id, deleted.deleted, deleted.object) == (
        created.id,
        True,
        "conversation.deleted",
    )


def test_unknown_conversations_are_404s(sdk: openai.OpenAI) -> None:
    message = "Conversation with id 'conv_x' not found."
    for attempt in (
        lambda: sdk.conversations.retrieve("conv_x"),
        lambda: sdk.conversations.delete("conv_x"),
        lambda: sdk.conversations.items.list("conv_x"),
    ):
        with pytest.raises(openai.NotFoundError) as caught:
            attempt()
        assert caught.value.body["message"] == message  # type: ignore[index]  # the error object
    with pytest.raises(openai.NotFoundError) as refused:
        sdk.responses.create(model="m", conversation="conv_x", input="hi")
    assert refused.value.body == {  # the body the gateway gives another tenant's id too
        "message": message,
        "type": "invalid_request_error",
        "param": "conversation",
        "code": None,
    }


def test_bad_bodies_are_400s(sdk: openai.OpenAI) -> None:
    created = sdk.conversations.create()
    http = sdk._client  # the SDK's own httpx client, for bodies the SDK would not send
    for path, body in (
        ("/v1/conversations", {"items": "nope"}),
        (f"/v1/conversations/{created.id}/items", {}),
    ):
        answer = http.post(f"http://testserver{path}", json=body)
        assert answer.status_code == 400 and answer.json()["error"]["param"] == "items"
    answer = http.post("http://testserver/v1/conversations", content=b"[")
    assert answer.status_code == 400


def test_conversations_are_bounded() -> None:
    held = Conversations(limit=2)
    ids = [str(held.create({})[1]["id"]) for _ in range(3)]
    assert ids[0] not in held and ids[1] in held and ids[2] in held
