"""Every request setting has a destination, seen from the official SDKs (issue 11, item 1).

Through a real ``interlock serve`` in front of the four emulators, each client dialect's SDK
sends the generation settings its API takes — temperature, top_p/top_k, max tokens, stop,
seed, penalties, candidates, logprobs, safety settings, metadata/user, reasoning effort or
thinking budget, tool choice, parallel tool calls — to every upstream, streamed and not. For
each setting, the upstream must receive it under its own field with the value sent, or the
call must name it in a warning (``x-interlock-translation``, and the ``interlock`` member or
``model_status`` of the answer itself, where a stream's client reads it): a value that
arrives changed is named too (a thinking budget sent as an effort level). Nothing vanishes,
and a streamed call says exactly what the same call not streamed says.

The fields each upstream dialect has for a setting are listed per target below; a target
with a field for a setting must receive it (changed only with a warning naming it), and a
setting a target has no field for must be warned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from openai import OpenAI

from interlock.codecs.gemini import wire_spelling
from interlock.emulators import Emulator
from tests.gateway.serving import serve_on_emulators

UPSTREAMS = {
    "via-chat": "openai-chat",
    "via-responses": "openai-responses",
    "via-gemini": "gemini",
    "via-anthropic": "anthropic",
}


@dataclass(frozen=True)
class Setting:
    """One setting a client sends: the names a warning about it may end with, and where each
    upstream dialect that has a field for it must receive it (dotted path, value)."""

    warned_as: tuple[str, ...]
    sent_to: dict[str, tuple[str, Any]]


def _same(path: str, value: Any, *upstreams: str) -> dict[str, tuple[str, Any]]:
    return {upstream: (path, value) for upstream in upstreams}


class _Has:
    """Equal to any list holding ``item`` (Responses ``include`` gets the gateway's own too)."""

    def __init__(self, item: str) -> None:
        self.item = item

    def __eq__(self, other: object) -> bool:
        return isinstance(other, list) and self.item in other

    def __hash__(self) -> int:
        return hash(self.item)

    def __repr__(self) -> str:
        return f"a list with {self.item!r}"


LOGPROBS_SENT: dict[str, tuple[str, Any]] = {
    "openai-chat": ("logprobs", True),
    "openai-responses": ("include", _Has("message.output_text.logprobs")),
    "gemini": ("generationConfig.responseLogprobs", True),
}
TOP_SENT: dict[str, tuple[str, Any]] = {
    **_same("top_logprobs", 2, "openai-chat", "openai-responses"),
    "gemini": ("generationConfig.logprobs", 2),
}
ONE_CANDIDATE_SENT = {"openai-chat": ("n", 1), "gemini": ("generationConfig.candidateCount", 1)}


CHAT_SETTINGS = {
    "temperature": Setting(
        ("temperature",),
        {
            **_same("temperature", 0.5, "openai-chat", "openai-responses", "anthropic"),
            "gemini": ("generationConfig.temperature", 0.5),
        },
    ),
    "top_p": Setting(
        ("top_p",),
        {
            **_same("top_p", 0.9, "openai-chat", "openai-responses", "anthropic"),
            "gemini": ("generationConfig.topP", 0.9),
        },
    ),
    "max_completion_tokens": Setting(
        ("max_completion_tokens", "max_tokens"),
        {
            "openai-chat": ("max_completion_tokens", 50),
            "openai-responses": ("max_output_tokens", 50),
            "gemini": ("generationConfig.maxOutputTokens", 50),
            "anthropic": ("max_tokens", 50),
        },
    ),
    "stop": Setting(
        ("stop",),
        {
            "openai-chat": ("stop", ["END"]),
            "gemini": ("generationConfig.stopSequences", ["END"]),
            "anthropic": ("stop_sequences", ["END"]),
        },
    ),
    "seed": Setting(
        ("seed",), {"openai-chat": ("seed", 7), "gemini": ("generationConfig.seed", 7)}
    ),
    "presence_penalty": Setting(
        ("presence_penalty",),
        {
            "openai-chat": ("presence_penalty", 0.1),
            "gemini": ("generationConfig.presencePenalty", 0.1),
        },
    ),
    "frequency_penalty": Setting(
        ("frequency_penalty",),
        {
            "openai-chat": ("frequency_penalty", 0.2),
            "gemini": ("generationConfig.frequencyPenalty", 0.2),
        },
    ),
    # Candidates and log-probabilities come back in the answer (tests below); Responses and
    # Anthropic answer one candidate, Anthropic has no log-probabilities: named there.
    "n": Setting(("n", "candidate_count"), ONE_CANDIDATE_SENT),
    "logprobs": Setting(("logprobs",), LOGPROBS_SENT),
    "top_logprobs": Setting(("top_logprobs",), TOP_SENT),
    "metadata": Setting(
        ("metadata",), _same("metadata", {"k": "v"}, "openai-chat", "openai-responses")
    ),
    "user": Setting(
        ("user",),
        {
            **_same("user", "u1", "openai-chat", "openai-responses"),
            "anthropic": ("metadata.user_id", "u1"),
        },
    ),
    "reasoning_effort": Setting(
        ("reasoning_effort",),
        {
            "openai-chat": ("reasoning_effort", "low"),
            "openai-responses": ("reasoning.effort", "low"),
            "gemini": ("generationConfig.thinkingConfig.thinkingLevel", "LOW"),
            # Anthropic: per model (test_serve_anthropic_effort.py); this one (a host of its
            # own, so a budget, and max_tokens 50 leaves no room for one) names it, not sent
        },
    ),
    "tool_choice": Setting(
        ("tool_choice",),
        {
            **_same("tool_choice", "required", "openai-chat", "openai-responses"),
            "gemini": ("toolConfig.functionCallingConfig.mode", "ANY"),
            "anthropic": ("tool_choice.type", "any"),
        },
    ),
    "parallel_tool_calls": Setting(
        ("parallel_tool_calls",),
        {
            **_same("parallel_tool_calls", False, "openai-chat", "openai-responses"),
            "anthropic": ("tool_choice.disable_parallel_tool_use", True),
        },
    ),
}

CHAT_ARGUMENTS: dict[str, Any] = {
    "temperature": 0.5,
    "top_p": 0.9,
    "max_completion_tokens": 50,
    "stop": ["END"],
    "seed": 7,
    "presence_penalty": 0.1,
    "frequency_penalty": 0.2,
    "n": 1,
    "logprobs": True,
    "top_logprobs": 2,
    "metadata": {"k": "v"},
    "user": "u1",
    "reasoning_effort": "low",
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
}

RESPONSES_SETTINGS = {
    name: CHAT_SETTINGS[name]
    for name in (
        "temperature",
        "top_p",
        "metadata",
        "user",
        "tool_choice",
        "parallel_tool_calls",
    )
} | {
    "top_logprobs": Setting(("top_logprobs",), TOP_SENT),
    "include": Setting(("logprobs", "include"), LOGPROBS_SENT),
    "max_output_tokens": Setting(
        ("max_output_tokens", "max_tokens"), CHAT_SETTINGS["max_completion_tokens"].sent_to
    ),
    "reasoning": Setting(
        ("reasoning", "reasoning_effort"), CHAT_SETTINGS["reasoning_effort"].sent_to
    ),
}

RESPONSES_ARGUMENTS: dict[str, Any] = {
    "temperature": 0.5,
    "top_p": 0.9,
    "max_output_tokens": 50,
    "top_logprobs": 2,
    "include": ["message.output_text.logprobs"],
    "metadata": {"k": "v"},
    "user": "u1",
    "reasoning": {"effort": "low"},
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
}

GEMINI_SETTINGS = {
    "temperature": Setting(("temperature",), CHAT_SETTINGS["temperature"].sent_to),
    "topP": Setting(("topP", "top_p"), CHAT_SETTINGS["top_p"].sent_to),
    "topK": Setting(
        ("topK", "top_k"),
        {"gemini": ("generationConfig.topK", 20), "anthropic": ("top_k", 20)},
    ),
    "maxOutputTokens": Setting(
        ("maxOutputTokens", "max_tokens"),
        {
            "openai-chat": ("max_completion_tokens", 2048),
            "openai-responses": ("max_output_tokens", 2048),
            "gemini": ("generationConfig.maxOutputTokens", 2048),
            "anthropic": ("max_tokens", 2048),
        },
    ),
    "stopSequences": Setting(("stopSequences", "stop"), CHAT_SETTINGS["stop"].sent_to),
    "seed": CHAT_SETTINGS["seed"],
    "presencePenalty": Setting(
        ("presencePenalty", "presence_penalty"), CHAT_SETTINGS["presence_penalty"].sent_to
    ),
    "frequencyPenalty": Setting(
        ("frequencyPenalty", "frequency_penalty"), CHAT_SETTINGS["frequency_penalty"].sent_to
    ),
    "responseLogprobs": Setting(("responseLogprobs", "logprobs"), LOGPROBS_SENT),
    "logprobs": Setting(("logprobs", "top_logprobs"), TOP_SENT),
    "candidateCount": Setting(("candidateCount", "n", "candidate_count"), ONE_CANDIDATE_SENT),
    "safetySettings": Setting(
        ("safetySettings",),
        {
            "gemini": (
                "safetySettings",
                [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}],
            )
        },
    ),
    "thinkingBudget": Setting(
        ("thinkingBudget", "thinking_budget"),
        {
            "openai-chat": ("reasoning_effort", None),
            "openai-responses": ("reasoning.effort", None),
            "gemini": ("generationConfig.thinkingConfig.thinkingBudget", 1024),
            "anthropic": ("thinking.budget_tokens", 1024),
        },
    ),
    "toolConfig": Setting(
        ("toolConfig", "tool_choice"),
        {
            **_same("tool_choice", "auto", "openai-chat", "openai-responses"),
            "gemini": ("toolConfig.functionCallingConfig.mode", "AUTO"),
            "anthropic": ("tool_choice.type", "auto"),
        },
    ),
}


def _gemini_config() -> types.GenerateContentConfig:
    declaration = types.FunctionDeclaration(name="f", parameters_json_schema={"type": "object"})
    return types.GenerateContentConfig(
        temperature=0.5,
        top_p=0.9,
        top_k=20,
        max_output_tokens=2048,
        stop_sequences=["END"],
        seed=7,
        presence_penalty=0.1,
        frequency_penalty=0.2,
        response_logprobs=True,
        logprobs=2,
        candidate_count=1,
        safety_settings=[
            types.SafetySetting(
                category=types.HarmCategory.HARM_CATEGORY_HARASSMENT,
                threshold=types.HarmBlockThreshold.BLOCK_ONLY_HIGH,
            )
        ],
        thinking_config=types.ThinkingConfig(thinking_budget=1024),
        tools=[types.Tool(function_declarations=[declaration])],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.AUTO
            )
        ),
    )


ANTHROPIC_SETTINGS = {
    "max_tokens": GEMINI_SETTINGS["maxOutputTokens"],
    "stop_sequences": Setting(("stop_sequences", "stop"), CHAT_SETTINGS["stop"].sent_to),
    "metadata": Setting(
        ("metadata", "user_id", "user"),
        {
            **_same("user", "u1", "openai-chat", "openai-responses"),
            "anthropic": ("metadata.user_id", "u1"),
        },
    ),
    "thinking": Setting(
        ("thinking", "budget_tokens", "thinking_budget"),
        GEMINI_SETTINGS["thinkingBudget"].sent_to,
    ),
    "tool_choice": Setting(("tool_choice",), GEMINI_SETTINGS["toolConfig"].sent_to),
    "disable_parallel_tool_use": Setting(
        ("disable_parallel_tool_use", "parallel_tool_calls"),
        CHAT_SETTINGS["parallel_tool_calls"].sent_to,
    ),
}

ANTHROPIC_ARGUMENTS: dict[str, Any] = {
    "max_tokens": 2048,
    "stop_sequences": ["END"],
    "metadata": {"user_id": "u1"},
    "thinking": {"type": "enabled", "budget_tokens": 1024},
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    "tools": [{"name": "f", "input_schema": {"type": "object"}}],
}


@dataclass(frozen=True)
class Said:
    """What one call told its client: the translation header, and the label the answer
    itself carries (``None`` when it carries none)."""

    header: str
    answer: str | None


def _interlock_label(extra: dict[str, Any] | None) -> str | None:
    member = (extra or {}).get("interlock")
    return member["translation"] if isinstance(member, dict) else None


def _chat(url: str, model: str, stream: bool) -> Said:
    messages: Any = [{"role": "user", "content": "hi"}]
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        raw = client.chat.completions.with_raw_response.create(
            model=model, messages=messages, stream=stream, **CHAT_ARGUMENTS
        )
        header = raw.headers["x-interlock-translation"]
        if not stream:
            return Said(header, _interlock_label(raw.parse().model_extra))
        chunks = list(raw.parse())  # type: ignore[arg-type]  # stream=True parses to a Stream
    finishing = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finishing) == 1
    return Said(header, _interlock_label(finishing[0].model_extra))


def _responses(url: str, model: str, stream: bool) -> Said:
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        raw = client.responses.with_raw_response.create(
            model=model, input="hi", stream=stream, **RESPONSES_ARGUMENTS
        )
        header = raw.headers["x-interlock-translation"]
        if not stream:
            return Said(header, _interlock_label(raw.parse().model_extra))
        events = list(raw.parse())  # type: ignore[arg-type]  # stream=True parses to a Stream
    completed = [e.response for e in events if e.type == "response.completed"]
    assert len(completed) == 1
    return Said(header, _interlock_label(completed[0].model_extra))


def _gemini_label(message: str | None) -> str | None:
    marker = "interlock: "
    return (
        message[message.rindex(marker) + len(marker) :] if message and marker in message else None
    )


def _gemini(url: str, model: str, stream: bool) -> Said:
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    config = _gemini_config()
    if stream:
        chunks = list(
            client.models.generate_content_stream(model=model, contents="hi", config=config)
        )
    else:
        chunks = [client.models.generate_content(model=model, contents="hi", config=config)]
    first = chunks[0].sdk_http_response
    assert first is not None and first.headers is not None
    statuses = [c.model_status.message for c in chunks if c.model_status]
    return Said(
        first.headers["x-interlock-translation"], _gemini_label(statuses[-1] if statuses else None)
    )


def _anthropic(url: str, model: str, stream: bool) -> Said:
    messages: Any = [{"role": "user", "content": "hi"}]
    with anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0) as client:
        raw = client.messages.with_raw_response.create(
            model=model, messages=messages, stream=stream, **ANTHROPIC_ARGUMENTS
        )
        header = raw.headers["x-interlock-translation"]
        if not stream:
            return Said(header, _interlock_label(raw.parse().model_extra))
        events = list(raw.parse())  # type: ignore[arg-type]  # stream=True parses to a Stream
    deltas = [e for e in events if e.type == "message_delta"]
    assert len(deltas) == 1
    return Said(header, _interlock_label(deltas[0].model_extra))


CLIENTS: dict[str, tuple[Callable[[str, str, bool], Said], dict[str, Setting]]] = {
    "chat": (_chat, CHAT_SETTINGS),
    "responses": (_responses, RESPONSES_SETTINGS),
    "gemini": (_gemini, GEMINI_SETTINGS),
    "anthropic": (_anthropic, ANTHROPIC_SETTINGS),
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Emulator]]]:
    directory = tmp_path_factory.mktemp("fidelity-settings")
    with serve_on_emulators(directory) as (url, emulators):
        yield url, emulators


_MISSING = object()


def _at(body: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(body, dict) or key not in body:
            return _MISSING
        body = body[key]
    return body


def _warned_names(label: str) -> set[str]:
    """The last segment of every warning location the label names (``code at location``)."""
    _, _, listed = label.partition("; ")
    locations = [item.partition(" at ")[2] for item in listed.split(", ") if " at " in item]
    return {location.rsplit(".", 1)[-1] for location in locations}


def _undestined(settings: dict[str, Setting], upstream: str, body: Any, label: str) -> list[str]:
    """The settings that neither arrived with their value nor were named in a warning."""
    warned = _warned_names(label)
    lost: list[str] = []
    for name, setting in settings.items():
        path, value = setting.sent_to.get(upstream, ("", None))
        received = _at(body, path) if path else _MISSING
        if warned & set(setting.warned_as) and (not path or received is not _MISSING):
            continue  # no field for it, or it arrived changed: named either way
        if received is _MISSING or received != value:
            lost.append(f"{name} (upstream got {path or '-'}={received!r})")
    return lost


@pytest.mark.parametrize("model", sorted(UPSTREAMS))
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_every_setting_arrives_or_is_named_streamed_and_not(
    stack: tuple[str, dict[str, Emulator]], client: str, model: str
) -> None:
    url, emulators = stack
    call, settings = CLIENTS[client]
    upstream = UPSTREAMS[model]
    said: dict[bool, Said] = {}
    for stream in (False, True):
        said[stream] = call(url, model, stream)
        body = emulators[upstream].received[-1]
        if upstream == "gemini":  # google-genai writes some names in snake_case
            body = wire_spelling(body)
        assert _undestined(settings, upstream, body, said[stream].header) == [], said[stream]
    whole, streamed = said[False], said[True]
    assert whole.answer == (whole.header if whole.header.startswith("degraded") else None)
    # A stream's header leaves before its answer: it names the request's warnings, and the
    # answer's last event names those and what the answer lost, as the whole answer does.
    assert streamed.answer == whole.answer
    assert set(_listed(streamed.header)) <= set(_listed(whole.header))


def _listed(label: str) -> list[str]:
    return label.partition("; ")[2].split(", ") if "; " in label else []


# -- what comes back: several candidates and token log-probabilities ----------------------

Candidate = tuple[str, list[tuple[str, int]]]
"""One candidate as its client's SDK parsed it: its text, and each token with how many top
alternatives came with it."""
SEVERAL = {"openai-chat", "gemini"}
"""The dialects whose answers hold several candidates."""


def _chat_candidates(url: str, model: str, stream: bool, count: int) -> list[Candidate]:
    messages: Any = [{"role": "user", "content": "hi"}]
    texts: dict[int, str] = {}
    tokens: dict[int, list[tuple[str, int]]] = {}
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if not stream:
            done = client.chat.completions.create(
                model=model, messages=messages, n=count, logprobs=True, top_logprobs=2
            )
            for choice in done.choices:
                texts[choice.index] = choice.message.content or ""
                content = choice.logprobs.content if choice.logprobs else None
                tokens[choice.index] = [(t.token, len(t.top_logprobs)) for t in content or []]
        else:
            for chunk in client.chat.completions.create(
                model=model, messages=messages, n=count, logprobs=True, top_logprobs=2, stream=True
            ):
                for piece in chunk.choices:
                    texts[piece.index] = texts.get(piece.index, "") + (piece.delta.content or "")
                    content = piece.logprobs.content if piece.logprobs else None
                    listed = [(t.token, len(t.top_logprobs)) for t in content or []]
                    tokens.setdefault(piece.index, []).extend(listed)
    return [(texts[index], tokens.get(index, [])) for index in sorted(texts)]


def _gemini_candidates(url: str, model: str, stream: bool, count: int) -> list[Candidate]:
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    config = types.GenerateContentConfig(candidate_count=count, response_logprobs=True, logprobs=2)
    if stream:
        chunks = list(
            client.models.generate_content_stream(model=model, contents="hi", config=config)
        )
    else:
        chunks = [client.models.generate_content(model=model, contents="hi", config=config)]
    texts: dict[int, str] = {}
    tokens: dict[int, list[tuple[str, int]]] = {}
    for chunk in chunks:
        for candidate in chunk.candidates or []:
            index = candidate.index or 0
            parts = candidate.content.parts if candidate.content else None
            text = "".join(p.text for p in parts or [] if p.text and not p.thought)
            texts[index] = texts.get(index, "") + text
            result = candidate.logprobs_result
            chosen = (result.chosen_candidates if result else None) or []
            tops = (result.top_candidates if result else None) or []
            tokens.setdefault(index, []).extend(
                (c.token or "", len(tops[i].candidates or []) if i < len(tops) else 0)
                for i, c in enumerate(chosen)
            )
    return [(texts[index], tokens.get(index, [])) for index in sorted(texts)]


def _responses_candidates(url: str, model: str, stream: bool, count: int) -> list[Candidate]:
    assert count == 1  # Responses has no several candidates
    arguments: Any = {"top_logprobs": 2, "include": ["message.output_text.logprobs"]}
    with OpenAI(base_url=f"{url}/v1", api_key="unused") as client:
        if not stream:
            done = client.responses.create(model=model, input="hi", **arguments)
        else:
            events = list(
                client.responses.create(model=model, input="hi", stream=True, **arguments)
            )
            deltas = [e for e in events if e.type == "response.output_text.delta"]
            streamed = [(t.token, len(t.top_logprobs or [])) for d in deltas for t in d.logprobs]
            completed = [e.response for e in events if e.type == "response.completed"]
            done = completed[0]
    texts = [
        content
        for item in done.output
        if item.type == "message"
        for content in item.content
        if content.type == "output_text"
    ]
    whole = [(t.token, len(t.top_logprobs)) for text in texts for t in text.logprobs or []]
    if stream:
        assert streamed == whole  # the deltas carried what the final response holds
    return [("".join(text.text for text in texts), whole)]


ASKERS: dict[str, Callable[[str, str, bool, int], list[Candidate]]] = {
    "chat": _chat_candidates,
    "gemini": _gemini_candidates,
    "responses": _responses_candidates,
}
ASKER_DIALECTS = {"chat": "openai-chat", "gemini": "gemini", "responses": "openai-responses"}


@pytest.mark.parametrize("model", ["via-chat", "via-gemini", "via-responses"])
@pytest.mark.parametrize("client", sorted(ASKERS))
def test_candidates_and_token_logprobs_come_back_streamed_and_not(
    stack: tuple[str, dict[str, Emulator]], client: str, model: str
) -> None:
    """Each SDK asks for two candidates (where both its dialect and the upstream's have
    them) and two top tokens per position; its parsed answer holds every candidate, each
    token with its two alternatives, the tokens spelling the text; streamed and not alike."""
    url, _ = stack
    upstream = UPSTREAMS[model]
    count = 2 if ASKER_DIALECTS[client] in SEVERAL and upstream in SEVERAL else 1
    whole = ASKERS[client](url, model, False, count)
    assert len(whole) == count
    for text, tokens in whole:
        assert text and "".join(token for token, _ in tokens) == text
        assert {top for _, top in tokens} == {2}
    assert ASKERS[client](url, model, True, count) == whole


@pytest.mark.parametrize("model", ["via-responses", "via-anthropic"])
@pytest.mark.parametrize("client", ["chat", "gemini"])
def test_several_candidates_from_a_one_candidate_upstream_are_refused_in_the_clients_dialect(
    stack: tuple[str, dict[str, Emulator]], client: str, model: str
) -> None:
    """Responses and Anthropic answer one candidate: asked for two, the gateway (strict, the
    default) refuses with a 400 in the client's own error shape rather than answer one."""
    url, _ = stack
    if client == "chat":
        with pytest.raises(openai.BadRequestError) as chat_error:
            _chat_candidates(url, model, False, 2)
        assert chat_error.value.code == "candidates_unsupported"
        assert "one candidate" in str(chat_error.value.message)
        return
    with pytest.raises(genai_errors.ClientError) as gemini_error:
        _gemini_candidates(url, model, False, 2)
    assert gemini_error.value.code == 400 and "one candidate" in str(gemini_error.value.message)


BAD_CHAT: list[tuple[dict[str, Any], str]] = [
    ({"n": 0}, "n"),
    ({"logprobs": True, "top_logprobs": 25}, "top_logprobs"),
    ({"top_logprobs": 2}, "top_logprobs"),
]


@pytest.mark.parametrize("model", sorted(UPSTREAMS))
@pytest.mark.parametrize(("fields", "param"), BAD_CHAT)
def test_bad_candidate_and_logprob_settings_get_the_ingress_error(
    stack: tuple[str, dict[str, Emulator]], fields: dict[str, Any], param: str, model: str
) -> None:
    """Out-of-range settings are refused by the gateway in the client's dialect, whatever the
    upstream (one without the setting would otherwise never say so)."""
    url, emulators = stack
    before = {name: len(emulator.received) for name, emulator in emulators.items()}
    messages: Any = [{"role": "user", "content": "hi"}]
    with (
        OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as client,
        pytest.raises(openai.BadRequestError) as raised,
    ):
        client.chat.completions.create(model=model, messages=messages, **fields)
    assert raised.value.param == param
    assert {name: len(emulator.received) for name, emulator in emulators.items()} == before


def test_bad_settings_in_the_gemini_and_responses_dialects(
    stack: tuple[str, dict[str, Emulator]],
) -> None:
    url, _ = stack
    client = genai.Client(
        api_key="unused", http_options=types.HttpOptions(base_url=url, api_version="v1beta")
    )
    for config in (
        types.GenerateContentConfig(candidate_count=0),
        types.GenerateContentConfig(response_logprobs=True, logprobs=25),
    ):
        with pytest.raises(genai_errors.ClientError) as raised:
            client.models.generate_content(model="via-chat", contents="hi", config=config)
        assert raised.value.code == 400
    with (
        OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as openai_client,
        pytest.raises(openai.BadRequestError) as bad,
    ):
        openai_client.responses.create(model="via-gemini", input="hi", top_logprobs=25)
    assert bad.value.param == "top_logprobs"
