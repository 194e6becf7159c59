"""The service's request checks as a pure function (the emulator's own tests drive it over HTTP)."""

from __future__ import annotations

import base64

from interlock.codecs.gemini import find_violation
from interlock.codecs.gemini._preflight import (
    EMPTY_CONTENTS,
    INVALID_SIGNATURE,
    current_turn_start,
    is_dummy,
    signature_bytes,
)
from interlock.transcript import JsonObject

USER: JsonObject = {"role": "user", "parts": [{"text": "hi"}]}


def turn(signature: str | None) -> list[JsonObject]:
    part: JsonObject = {"functionCall": {"name": "f", "args": {}}}
    if signature is not None:
        part["thoughtSignature"] = signature
    return [
        USER,
        {"role": "model", "parts": [part, {"functionCall": {"name": "g", "args": {}}}]},
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "f", "response": {}}},
                {"functionResponse": {"name": "g", "response": {}}},
            ],
        },
    ]


def test_valid_history_passes_and_snake_case_is_accepted() -> None:
    payload: JsonObject = {
        "contents": turn("skip_thought_signature_validator"),
        "generation_config": {"thinking_config": {"thinking_budget": 0}},
    }
    assert find_violation(payload) is None


def test_empty_contents_and_signature_rules() -> None:
    assert find_violation({"contents": []}) is not None
    assert find_violation({}).message == EMPTY_CONTENTS  # pyright: ignore[reportOptionalMemberAccess]
    assert find_violation({"contents": turn(None)}) is not None
    assert find_violation({"contents": turn(None)}, require_signatures=False) is None
    forged = base64.b64encode(b"forged").decode()
    found = find_violation(
        {"contents": turn(forged)}, signature_valid=lambda data, part: data == b"genuine"
    )
    assert found is not None and found.message == INVALID_SIGNATURE
    genuine = base64.urlsafe_b64encode(b"genuine").decode()
    assert (
        find_violation(
            {"contents": turn(genuine)}, signature_valid=lambda data, part: data == b"genuine"
        )
        is None
    )


def test_dummies_in_both_forms_and_signature_alphabets() -> None:
    assert is_dummy("skip_thought_signature_validator")
    assert is_dummy(base64.b64encode(b"context_engineering_is_the_way_to_go").decode())
    assert not is_dummy("c2tpcA==")
    assert signature_bytes("-vv8_f7_") == signature_bytes("+vv8/f7/") == b"\xfa\xfb\xfc\xfd\xfe\xff"
    assert signature_bytes("not base64!") is None


def test_current_turn_starts_after_the_last_plain_user_content() -> None:
    contents = [USER, *turn("x")[1:], USER, *turn("x")[1:]]
    assert current_turn_start(contents) == 4
