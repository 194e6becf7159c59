"""Model metadata through both SDK families, countTokens, and 404s in the caller's shape."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from tests.gateway.helpers import Recorder, chat_completion, gateway


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    from interlock.gateway.app import create_app

    built = gateway({"chat": Recorder(lambda _: httpx.Response(200, json=chat_completion()))})
    transport = httpx.ASGITransport(app=create_app(built))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        yield client


def google(http: httpx.AsyncClient) -> genai.Client:
    options = types.HttpOptions(base_url="http://localhost", httpx_async_client=http)
    return genai.Client(api_key="k", http_options=options)


async def test_both_sdks_list_and_get_the_models(http: httpx.AsyncClient) -> None:
    client = openai.AsyncOpenAI(base_url="http://localhost/v1", api_key="k", http_client=http)
    listed = [model.id async for model in client.models.list()]
    assert listed == ["to-chat", "to-gemini", "to-responses"]
    retrieved = await client.models.retrieve("to-gemini")
    assert (retrieved.id, retrieved.owned_by) == ("to-gemini", "gemini")
    with pytest.raises(openai.NotFoundError):
        await client.models.retrieve("nope")

    gemini = google(http)
    names = [model.name async for model in await gemini.aio.models.list()]
    assert names == ["models/to-chat", "models/to-gemini", "models/to-responses"]
    model = await gemini.aio.models.get(model="to-responses")
    assert model.name == "models/to-responses"
    with pytest.raises(genai_errors.ClientError) as caught:
        await gemini.aio.models.get(model="nope")
    assert caught.value.code == 404


async def test_count_tokens_is_an_estimate_labelled_as_such(http: httpx.AsyncClient) -> None:
    counted = await google(http).aio.models.count_tokens(
        model="to-chat", contents="twelve chars" * 10
    )
    assert 30 <= counted.total_tokens <= 32  # 120 characters of text, plus the role name
    raw = await http.post(
        "/v1beta/models/to-chat:countTokens",
        json={"contents": [{"parts": [{"text": "abcd"}]}]},
    )
    assert raw.json() == {"totalTokens": 1}
    assert raw.headers["x-interlock-translation"] == "estimated"


@pytest.mark.parametrize(
    ("method", "path", "headers", "gemini_shape"),
    [
        ("GET", "/v1/nothing", {}, False),
        ("POST", "/v1/embeddings", {}, False),
        ("GET", "/v1beta/nothing", {}, True),
        ("POST", "/v1/models/to-chat:embedContent", {"x-goog-api-key": "k"}, True),
        ("GET", "/v1/chat/completions", {}, False),
    ],
)
async def test_unknown_paths_answer_in_the_callers_json_shape(
    http: httpx.AsyncClient, method: str, path: str, headers: dict[str, str], gemini_shape: bool
) -> None:
    answer = await http.request(method, path, headers=headers)
    assert answer.status_code in (404, 405)
    error = answer.json()["error"]
    if gemini_shape:
        assert error["code"] == answer.status_code and "status" in error
    else:
        assert error["code"] in ("not_found", "method_not_allowed") and "type" in error
    assert answer.headers["x-interlock-translation"] == "none"
