"""Bad input gets a 400 in the client's dialect, never a 500; fuzzed for all three ingress
parsers (Hypothesis, bounded example counts)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from interlock.gateway.app import create_app
from tests.gateway.helpers import Recorder, chat_completion, client, gateway

CHAT_PATH = "/v1/chat/completions"
PATHS = {
    "openai-chat": CHAT_PATH,
    "openai-responses": "/v1/responses",
    "gemini": "/v1beta/models/to-chat:generateContent",
}


def ok_chat(_: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=chat_completion())


def assert_shape(dialect: str, answer: httpx.Response, status: int = 400) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    if dialect == "gemini":
        assert error["code"] == status and isinstance(error["status"], str)
    else:
        assert isinstance(error["message"], str) and "type" in error
    assert answer.headers["x-interlock-translation"]
    return error


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'{"model": "to-chat", "model": "other", "messages": []}', "duplicate key"),
        (
            b'{"model": "to-chat", "messages": [{"role": "user", "content": "a", "content": "b"}]}',
            "duplicate key",
        ),
        (
            b'{"model": "to-chat", "messages": [{"role": "user", "content": "\\ud800"}]}',
            "surrogate",
        ),
        (b'{"model": "to-chat", "messages": [{"role": "user", "content": "\xff\xfe"}]}', "JSON"),
        (b'{"model": "to-chat", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "deep"),
        (b'{"model": "to-chat", "stream": "yes", "messages": []}', "boolean"),
    ],
    ids=[
        "duplicate-model",
        "duplicate-nested",
        "lone-surrogate",
        "invalid-utf8",
        "deep",
        "stream-yes",
    ],
)
async def test_bad_bytes_are_a_400_in_shape_and_nothing_goes_upstream(
    body: bytes, fragment: str
) -> None:
    upstream = Recorder(ok_chat)
    config_limit = "max_body_bytes = 4096"
    from tests.gateway.helpers import CONFIG

    built = gateway({"chat": upstream}, CONFIG.replace(config_limit, "max_body_bytes = 1048576"))
    async with client(built) as http:
        answer = await http.post(CHAT_PATH, content=body)
    error = assert_shape("openai-chat", answer)
    assert fragment.lower() in error["message"].lower()
    assert upstream.requests == []


@pytest.mark.parametrize("body", [b"{}", b'{"contents": null, "generationConfig": {}}'])
async def test_a_gemini_request_without_contents_is_the_services_400(body: bytes) -> None:
    upstream = Recorder(ok_chat)
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post(PATHS["gemini"], content=body)
    error = assert_shape("gemini", answer)
    assert error["message"] == "* GenerateContentRequest.contents: contents is not specified\n"
    assert error["status"] == "INVALID_ARGUMENT"
    assert upstream.requests == []


async def test_a_deep_but_parseable_value_is_a_400_too() -> None:
    deep: Any = "x"
    for _ in range(900):  # parses, but deeper than a recursive walk can go
        deep = [deep]
    body = {"model": "to-chat", "input": [{"role": "user", "content": "hi"}], "metadata": deep}
    from tests.gateway.helpers import CONFIG

    built = gateway({"chat": Recorder(ok_chat)}, CONFIG.replace("4096", "1048576"))
    async with client(built) as http:
        answer = await http.post("/v1/responses", content=json.dumps(body))
    assert answer.status_code in (200, 400), answer.text  # translated, or refused in shape
    if answer.status_code == 400:
        assert_shape("openai-responses", answer)


@pytest.mark.parametrize("content", [b"<html>bad gateway</html>", b"", b"not json"])
async def test_a_non_json_200_passed_through_is_a_502(content: bytes) -> None:
    upstream = Recorder(lambda _: httpx.Response(200, content=content))
    async with client(gateway({"chat": upstream})) as http:
        answer = await http.post(
            CHAT_PATH, json={"model": "to-chat", "messages": [{"role": "user", "content": "hi"}]}
        )
    error = assert_shape("openai-chat", answer, 502)
    assert error["code"] == "upstream_invalid_response"


# ---------------------------------------------------------------- fuzzing

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
FIELDS = {
    "openai-chat": ["messages", "tools", "tool_choice", "stream", "response_format", "n"],
    "openai-responses": ["input", "instructions", "tools", "reasoning", "text", "stream"],
    "gemini": ["contents", "systemInstruction", "tools", "generationConfig", "toolConfig"],
}
MESSAGE_KEYS = ["role", "content", "parts", "type", "text", "tool_calls", "call_id", "name"]
MESSAGE = st.dictionaries(st.sampled_from(MESSAGE_KEYS), JSON_VALUES, max_size=4)


def bodies(dialect: str) -> st.SearchStrategy[dict[str, Any]]:
    history = {"openai-chat": "messages", "openai-responses": "input", "gemini": "contents"}
    fields = st.dictionaries(st.sampled_from(FIELDS[dialect]), JSON_VALUES, max_size=3)
    structured = st.fixed_dictionaries({history[dialect]: st.lists(MESSAGE, max_size=3)})
    return st.builds(lambda a, b: {**a, **b, "model": "to-chat"}, fields, structured)


@pytest.fixture(scope="module")
def http() -> Any:
    built = gateway({"chat": ok_chat})
    with TestClient(create_app(built), base_url="http://localhost") as test_client:
        yield test_client


@pytest.mark.parametrize("dialect", list(PATHS))
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzzed_requests_never_get_a_500(
    http: TestClient, dialect: str, data: st.DataObject
) -> None:
    body = data.draw(bodies(dialect))
    answer = http.post(PATHS[dialect], content=json.dumps(body))
    assert answer.status_code != 500, answer.text
    if answer.status_code >= 400:
        assert_shape(dialect, answer, answer.status_code)


@pytest.mark.parametrize("dialect", list(PATHS))
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
@example(raw=b"{}")  # a Gemini body without contents: refused at ingress, whatever the upstream
def test_fuzzed_bytes_never_get_a_500(http: TestClient, dialect: str, raw: bytes) -> None:
    answer = http.post(PATHS[dialect], content=raw)
    assert answer.status_code in (400, 404), answer.text
    assert_shape(dialect, answer, answer.status_code)
