"""OpenAI error bodies."""

from interlock.codecs.openai_responses import encode_error


def test_error_shape() -> None:
    body = encode_error(404, "Item with id 'rs_1' not found.", param="input")
    assert body == {
        "error": {
            "message": "Item with id 'rs_1' not found.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        }
    }
    assert encode_error(500, "x")["error"]["type"] == "server_error"  # type: ignore[index]
