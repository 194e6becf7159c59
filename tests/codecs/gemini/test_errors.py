"""Gemini's error body shape."""

from __future__ import annotations

from google.genai import errors

from interlock.codecs import gemini


def test_error_body_has_code_message_status() -> None:
    assert gemini.encode_error(400, "Bad.") == {
        "error": {"code": 400, "message": "Bad.", "status": "INVALID_ARGUMENT"}
    }
    assert gemini.encode_error(404, "No model.")["error"]["status"] == "NOT_FOUND"  # pyright: ignore[reportIndexIssue, reportCallIssue, reportArgumentType]
    assert gemini.encode_error(429, "Slow down.")["error"]["status"] == "RESOURCE_EXHAUSTED"  # pyright: ignore[reportIndexIssue, reportCallIssue, reportArgumentType]
    assert gemini.encode_error(500, "Broken.")["error"]["status"] == "INTERNAL"  # pyright: ignore[reportIndexIssue, reportCallIssue, reportArgumentType]


def test_a_bad_gateway_or_an_overload_is_unavailable_and_501_unimplemented() -> None:
    statuses = {
        status: gemini.encode_error(status, "x")["error"]["status"]  # pyright: ignore[reportIndexIssue, reportCallIssue, reportArgumentType]
        for status in (501, 502, 503, 504, 529)
    }
    assert statuses == {
        501: "UNIMPLEMENTED",
        502: "UNAVAILABLE",
        503: "UNAVAILABLE",
        504: "DEADLINE_EXCEEDED",
        529: "UNAVAILABLE",
    }


def test_rpc_status_code_is_used_and_other_codes_go_to_error_info() -> None:
    assert (
        gemini.encode_error(400, "x", code="FAILED_PRECONDITION")["error"]["status"]
        == "FAILED_PRECONDITION"
    )  # pyright: ignore[reportIndexIssue, reportCallIssue, reportArgumentType]
    body = gemini.encode_error(
        400, "messages[1].parts[0]: lossy", code="lossy_history", param="messages[1].parts[0]"
    )
    assert body["error"]["details"] == [  # pyright: ignore[reportIndexIssue, reportCallIssue, reportArgumentType]
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "lossy_history",
            "domain": "interlock",
            "metadata": {"param": "messages[1].parts[0]"},
        }
    ]


def test_the_sdk_reads_the_error_body() -> None:
    error = errors.APIError(400, gemini.encode_error(400, "Bad request."))
    assert (error.code, error.status, error.message) == (400, "INVALID_ARGUMENT", "Bad request.")
