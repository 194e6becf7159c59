"""The Anthropic emulator stands for one vendor (``issuer``): it signs thinking with that
vendor's keys and, like the services, refuses a signature another vendor's service issued."""

from __future__ import annotations

import base64
from typing import Any

from starlette.testclient import TestClient

from interlock.emulators.anthropic import AnthropicEmulator, create_app

HEADERS = {"anthropic-version": "2023-06-01"}
THINKING: Any = {"type": "enabled", "budget_tokens": 1024}
INVALID = "messages.1.content.0: Invalid `signature` in `thinking` block"


def post(emulator: AnthropicEmulator, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    with TestClient(create_app(emulator)) as client:
        response = client.post("/v1/messages", json=body, headers=HEADERS)
    return response.status_code, response.json()


def ask(messages: list[Any]) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 2048, "thinking": THINKING, "messages": messages}


def test_each_vendor_accepts_only_the_thinking_it_signed() -> None:
    deepseek = AnthropicEmulator(issuer="deepseek")
    question = {"role": "user", "content": "hi"}
    status, answer = post(deepseek, ask([question]))
    assert status == 200 and answer["id"].startswith("msg_emudeepseek_")
    thinking = answer["content"][0]
    assert thinking["type"] == "thinking" and thinking["signature"]
    kind = base64.b64decode(thinking["signature"]).partition(b":")[0]
    assert kind == b"deepseek.thinking_signature", "signed with DeepSeek's own keys"
    history = [question, {"role": "assistant", "content": answer["content"]}]
    again = ask([*history, {"role": "user", "content": "more"}])
    assert post(AnthropicEmulator(issuer="deepseek"), again)[0] == 200
    status, refused = post(AnthropicEmulator(), again)  # Anthropic's own
    assert status == 400
    assert refused == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": INVALID},
    }
    # and the other way round
    status, own = post(AnthropicEmulator(), ask([question]))
    mine = [question, {"role": "assistant", "content": own["content"]}, again["messages"][-1]]
    assert own["id"].startswith("msg_emu_") and post(AnthropicEmulator(), ask(mine))[0] == 200
    assert post(deepseek, ask(mine))[0] == 400
