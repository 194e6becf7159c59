"""SQLite state survives a gateway restart: the vault and the journal are intact."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from openai import OpenAI

from interlock.gateway.stores import open_store
from interlock.transcript import TextPart, ToolResultPart
from tests.gateway.serving import emulators_on_loopback, gateway_config, serve

TOOLS: Any = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
]


def test_vault_and_journal_survive_a_restart(tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'state.db'}"
    config = tmp_path / "interlock.toml"
    messages: list[Any] = [{"role": "user", "content": 'call get_weather with {"city": "Oslo"}'}]
    with emulators_on_loopback() as (emulator_url, emulators):
        config.write_text(gateway_config(emulator_url, store_url))
        with serve(config, tmp_path) as url, OpenAI(base_url=f"{url}/v1", api_key="-") as client:
            first = client.chat.completions.create(
                model="via-gemini", messages=messages, tools=TOOLS
            )
        call = first.choices[0].message.tool_calls[0]  # type: ignore[index]  # asserted by the SDK shape
        asyncio.run(_journal(store_url, write=True))
        messages += [
            first.choices[0].message.model_dump(
                exclude_none=True, exclude={"annotations", "audio", "function_call", "refusal"}
            ),
            {"role": "tool", "tool_call_id": call.id, "content": "cold"},
        ]
        # a fresh process: only SQLite remembers
        with serve(config, tmp_path) as url, OpenAI(base_url=f"{url}/v1", api_key="-") as client:
            final = client.chat.completions.create(
                model="via-gemini", messages=messages, tools=TOOLS
            )
        assert (final.choices[0].message.content or "").startswith("Done:")
        contents = emulators["gemini"].received[-1]["contents"]
        signed = [
            part for content in contents for part in content["parts"] if "functionCall" in part
        ]
        assert signed[0].get("thoughtSignature")  # restored from the vault after the restart
    asyncio.run(_journal(store_url, write=False))


async def _journal(url: str, *, write: bool) -> None:
    store = open_store(url)
    ledger = store.ledger("default")
    try:
        if write:
            assert await ledger.begin_execution("thread-1", "occ-1")
            result = ToolResultPart(
                call_id="c", output=(TextPart(text="ok"),), occurrence_id="occ-1"
            )
            await ledger.complete_execution("thread-1", "occ-1", result)
        else:
            entry = await ledger.execution("thread-1", "occ-1")
            assert entry is not None and entry.state == "completed"
            assert await ledger.begin_execution("thread-1", "occ-1") is False
    finally:
        await store.close()
