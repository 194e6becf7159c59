"""OpenAI's error body."""

from __future__ import annotations

import pytest
from openai.types.shared import ErrorObject

from interlock.codecs.openai_chat import encode_error


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "invalid_request_error"),
        (429, "rate_limit_error"),
        (500, "server_error"),
        (503, "server_error"),
    ],
)
def test_error_shape(status: int, kind: str) -> None:
    body = encode_error(status, "bad", code="c", param="messages.[1].role")
    assert body == {
        "error": {"message": "bad", "type": kind, "param": "messages.[1].role", "code": "c"}
    }
    ErrorObject.model_validate(body["error"])
    assert encode_error(status, "x")["error"] == {
        "message": "x",
        "type": kind,
        "param": None,
        "code": None,
    }
