"""The Responses emulator's stored responses, with the official SDK as the client."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from starlette.testclient import TestClient

from interlock.emulators._responses_state import StoredResponse, StoredResponses
from interlock.emulators.openai_responses import OpenAIResponsesEmulator, create_app
from interlock.transcript import JsonObject


@pytest.fixture
def sdk() -> Iterator[openai.OpenAI]:
    with TestClient(create_app(OpenAIResponsesEmulator())) as http:
        yield openai.OpenAI(base_url="http://testserver/v1", api_key="k", http_client=http)


def test_create_retrieve_list_delete(sdk: openai.OpenAI) -> None:
    created = sdk.responses.create(model="m", input="hello there")
    retrieved = sdk.responses.retrieve(created.id)
    assert retrieved.model_dump() == created.model_dump()
    listed = sdk.responses.input_items.list(created.id)
    assert [(item.type, item.role) for item in listed.data] == [("message", "user")]  # type: ignore[union-attr]  # every listed item here is a message
    assert listed.data[0].content[0].text == "hello there"  # type: ignore[union-attr]  # a message, as asserted above
    assert listed.first_id == listed.last_id == listed.data[0].id and not listed.has_more
    sdk.responses.delete(created.id)
    with pytest.raises(openai.NotFoundError, match=f"Response with id '{created.id}' not found"):
        sdk.responses.retrieve(created.id)
    for call in (
        lambda: sdk.responses.delete(created.id),
        lambda: sdk.responses.input_items.list(created.id),
    ):
        with pytest.raises(openai.NotFoundError):
            call()


def test_store_false_keeps_nothing(sdk: openai.OpenAI) -> None:
    created = sdk.responses.create(model="m", input="hello", store=False)
    with pytest.raises(openai.NotFoundError):
        sdk.responses.retrieve(created.id)


def test_input_items_pages_through_a_chain(sdk: openai.OpenAI) -> None:
    first = sdk.responses.create(model="m", input="one")
    second = sdk.responses.create(
        model="m",
        previous_response_id=first.id,
        input=[{"role": "user", "content": "two"}, {"role": "user", "content": "three"}],
    )
    every = [item.id for item in sdk.responses.input_items.list(second.id, order="asc")]
    # "one", the first answer's reasoning and message, "two", "three"
    assert len(set(every)) == len(every) == 5
    assert every[:3] == [item.id for item in sdk.responses.input_items.list(first.id)][::-1] + [
        item.id for item in first.output
    ]
    page = sdk.responses.input_items.list(second.id, limit=1)  # newest first by default
    assert [item.id for item in page.data] == [every[-1]] and page.has_more
    paged = [item.id for item in sdk.responses.input_items.list(second.id, limit=1, order="asc")]
    assert paged == every  # the SDK's pager follows ``after`` to the end
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.responses.input_items.list(second.id, limit=101)
    assert caught.value.body["param"] == "limit"  # type: ignore[index]  # the error object
    with pytest.raises(openai.BadRequestError):
        sdk.responses.input_items.list(second.id, order="sideways")  # type: ignore[arg-type]  # a bad value on purpose


def test_the_store_is_bounded() -> None:
    stored = StoredResponses(limit=2)
    for index in range(3):
        stored.keep(f"resp_{index}", StoredResponse(items=[], inputs=[], response={}))
    assert len(stored) == 2 and "resp_0" not in stored and "resp_2" in stored
    assert list(stored) == ["resp_1", "resp_2"] and stored["resp_2"].items == []


def test_background_responses_queue_and_cancel(sdk: openai.OpenAI) -> None:
    queued = sdk.responses.create(model="m", input="long job", background=True)
    assert (queued.status, queued.output, queued.background) == ("queued", [], True)
    cancelled = sdk.responses.cancel(queued.id)
    assert (cancelled.status, cancelled.output) == ("cancelled", [])
    assert sdk.responses.retrieve(queued.id).status == "cancelled"  # its work was dropped
    worked = sdk.responses.create(model="m", input="job", background=True)
    done = sdk.responses.retrieve(worked.id)
    assert done.status == "completed" and done.output_text and done.background
    assert sdk.responses.cancel(worked.id).model_dump() == done.model_dump()
    streamed = sdk.responses.create(model="m", input="now", background=True, stream=True)
    assert [event.type for event in streamed][-1] == "response.completed"
    foreground = sdk.responses.create(model="m", input="quick")
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.responses.cancel(foreground.id)
    assert caught.value.body == {
        "message": "Only responses created with background=true can be cancelled.",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    with pytest.raises(openai.NotFoundError):
        sdk.responses.cancel("resp_unknown")
    sdk.responses.delete(queued.id)
    with pytest.raises(openai.NotFoundError):
        sdk.responses.cancel(queued.id)


def test_the_store_is_bounded_by_items_too_and_keeps_the_newest() -> None:
    def chain(size: int) -> StoredResponse:
        items: list[JsonObject] = [{"type": "message", "n": index} for index in range(size)]
        return StoredResponse(items=items, inputs=items[:1], response={})

    stored = StoredResponses(limit=10, items=100)
    for index in range(3):
        stored.keep(f"resp_{index}", chain(40))  # 41 items each: the third overflows 100
    assert list(stored) == ["resp_1", "resp_2"]
    stored.keep("resp_big", chain(500))  # larger than the budget alone: kept, alone
    assert list(stored) == ["resp_big"]
    assert stored.delete("resp_big")[0] == 200 and len(stored) == 0
    stored.keep("resp_a", chain(40))
    stored.keep("resp_b", chain(40))
    assert list(stored) == ["resp_a", "resp_b"]  # the deleted chain no longer counts
