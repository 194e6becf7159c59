"""The Gemini Developer API's own request checks, as a pure function (provider-wire.md §3.7).

:func:`find_violation` reports the first rule a request body breaks, with the service's
status and exact message, in the order the service applies them:

1. unknown fields anywhere (also JSON-Schema keys outside the ``Schema`` subset in
   ``parameters``): ``Invalid JSON payload received. Unknown name "<key>" at '<path>': Cannot
   find field.``;
2. ``contents`` missing or empty;
3. ``thoughtSignature`` values that are not base64 (standard or URL-safe);
4. function turn ordering and part counts;
5. the current turn's signatures: each step's first ``functionCall`` must carry one (missing
   → the documented 400), and ``signature_valid`` judges every signature present there
   (invalid → ``Thought signature is not valid``). The documented dummies always pass.

The emulator uses it; the gateway may use it as a pre-flight before sending upstream.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from interlock.codecs.gemini._wire import camel
from interlock.transcript import JsonObject, JsonValue

DUMMY_SIGNATURES: Final = (
    "skip_thought_signature_validator",
    "context_engineering_is_the_way_to_go",
)

RESPONSE_AFTER_CALL: Final = (
    "Please ensure that function response turn comes immediately after a function call turn."
)
CALL_AFTER_USER: Final = (
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn."
)
COUNT_MISMATCH: Final = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
MISSING_SIGNATURE: Final = (
    "Function call is missing a thought_signature in functionCall parts. This is required "
    "for tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {position}. "
    "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
INVALID_SIGNATURE: Final = "Thought signature is not valid"
EMPTY_CONTENTS: Final = "* GenerateContentRequest.contents: contents is not specified\n"


@dataclass(frozen=True, slots=True)
class Violation:
    """A rule the request breaks: HTTP status, google.rpc status and the service's message."""

    status: int
    message: str
    rpc_status: str = "INVALID_ARGUMENT"


SignatureCheck = Callable[[bytes, JsonObject], bool]
"""Judges one present signature (decoded bytes) on its wire part."""


def _fields(*names: str) -> frozenset[str]:
    return frozenset(names)


_SCHEMA: Final = _fields(
    "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
    "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
    "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum",
)  # fmt: skip
_BLOB: Final = _fields("mimeType", "data")
_FILE: Final = _fields("mimeType", "fileUri")
_FR_PART: Final = _fields("inlineData", "fileData")
_SHAPES: Final[dict[str, frozenset[str]]] = {
    "request": _fields(
        "model", "contents", "systemInstruction", "tools", "toolConfig", "generationConfig",
        "safetySettings", "cachedContent", "serviceTier", "store",
    ),
    "content": _fields("role", "parts"),
    "part": _fields(
        "text", "thought", "thoughtSignature", "inlineData", "fileData", "functionCall",
        "functionResponse", "executableCode", "codeExecutionResult", "videoMetadata",
        "mediaResolution", "partMetadata", "toolCall", "toolResponse",
    ),
    "functionCall": _fields("id", "name", "args"),
    "functionResponse": _fields("id", "name", "response", "parts", "willContinue", "scheduling"),
    "executableCode": _fields("language", "code", "id"),
    "codeExecutionResult": _fields("outcome", "output", "id"),
    "tool": _fields(
        "functionDeclarations", "googleSearch", "googleSearchRetrieval", "codeExecution",
        "urlContext", "fileSearch", "computerUse", "googleMaps", "mcpServers",
    ),
    "declaration": _fields(
        "name", "description", "parameters", "parametersJsonSchema", "response",
        "responseJsonSchema", "behavior",
    ),
    "toolConfig": _fields("functionCallingConfig", "retrievalConfig", "includeServerSideToolInvocations"),
    "functionCallingConfig": _fields("mode", "allowedFunctionNames"),
    "generationConfig": _fields(
        "temperature", "topP", "topK", "candidateCount", "maxOutputTokens", "stopSequences",
        "responseMimeType", "responseSchema", "responseJsonSchema", "seed", "presencePenalty",
        "frequencyPenalty", "responseLogprobs", "logprobs", "mediaResolution",
        "responseModalities", "speechConfig", "thinkingConfig", "imageConfig",
        "enableEnhancedCivicAnswers",
    ),
    "thinkingConfig": _fields("includeThoughts", "thinkingBudget", "thinkingLevel"),
    "safetySetting": _fields("category", "threshold"),
}  # fmt: skip
_CHILDREN: Final[dict[str, dict[str, tuple[str, bool]]]] = {
    # shape → field → (child shape, is a list)
    "request": {
        "contents": ("content", True),
        "systemInstruction": ("content", False),
        "tools": ("tool", True),
        "toolConfig": ("toolConfig", False),
        "generationConfig": ("generationConfig", False),
        "safetySettings": ("safetySetting", True),
    },
    "content": {"parts": ("part", True)},
    "part": {
        "functionCall": ("functionCall", False),
        "functionResponse": ("functionResponse", False),
        "inlineData": ("blob", False),
        "fileData": ("file", False),
        "executableCode": ("executableCode", False),
        "codeExecutionResult": ("codeExecutionResult", False),
    },
    "functionResponse": {"parts": ("frPart", True)},
    "frPart": {"inlineData": ("blob", False), "fileData": ("file", False)},
    "tool": {"functionDeclarations": ("declaration", True)},
    "declaration": {"parameters": ("schema", False), "response": ("schema", False)},
    "toolConfig": {"functionCallingConfig": ("functionCallingConfig", False)},
    "generationConfig": {"thinkingConfig": ("thinkingConfig", False)},
}
_EXTRA_SHAPES: Final = {"blob": _BLOB, "file": _FILE, "frPart": _FR_PART, "schema": _SCHEMA}
_SNAKE: Final = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(name: str) -> str:
    return _SNAKE.sub("_", name).lower()


def _unknown_name(value: JsonValue, shape: str, path: str) -> Violation | None:
    """The first unknown field under ``value`` (of ``shape``), as the service reports it."""
    if not isinstance(value, dict):
        return None
    known = _SHAPES.get(shape) or _EXTRA_SHAPES[shape]
    children = _CHILDREN.get(shape, {})
    for key, item in value.items():
        name = camel(key)
        if name not in known:
            where = f" at '{path}'" if path else ""
            message = (
                f'Invalid JSON payload received. Unknown name "{key}"{where}: Cannot find field.'
            )
            return Violation(400, message)
        found = _child(name, item, shape, children, path)
        if found is not None:
            return found
    return None


def _child(
    name: str, item: JsonValue, shape: str, children: dict[str, tuple[str, bool]], path: str
) -> Violation | None:
    where = f"{path}.{_snake(name)}" if path else _snake(name)
    if shape == "schema":
        return _schema_children(name, item, where)
    child = children.get(name)
    if child is None:
        return None
    child_shape, is_list = child
    if is_list:
        if not isinstance(item, list):
            return None
        for index, entry in enumerate(item):
            found = _unknown_name(entry, child_shape, f"{where}[{index}]")
            if found is not None:
                return found
        return None
    return _unknown_name(item, child_shape, where)


def _schema_children(name: str, item: JsonValue, where: str) -> Violation | None:
    if name == "properties" and isinstance(item, dict):
        for key, entry in item.items():
            found = _unknown_name(entry, "schema", f"{where}[{key}]")
            if found is not None:
                return found
    elif name == "items":
        return _unknown_name(item, "schema", where)
    elif name == "anyOf" and isinstance(item, list):
        for index, entry in enumerate(item):
            found = _unknown_name(entry, "schema", f"{where}[{index}]")
            if found is not None:
                return found
    return None


def signature_bytes(signature: str) -> bytes | None:
    """The bytes of a base64 signature, standard or URL-safe alphabet, padded or not (trap 9)."""
    padded = signature + "=" * (-len(signature) % 4)
    altchars = b"-_" if ("-" in signature or "_" in signature) else None
    try:
        return base64.b64decode(padded, altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None


def is_dummy(signature: str) -> bool:
    """True for a documented dummy signature, literal or base64 of the literal (trap 10)."""
    if signature in DUMMY_SIGNATURES:
        return True
    decoded = signature_bytes(signature)
    return decoded is not None and decoded.decode("latin-1") in DUMMY_SIGNATURES


def _contents(payload: JsonObject) -> list[JsonObject] | Violation:
    value = payload.get("contents")
    if not isinstance(value, list) or not value:
        return Violation(400, EMPTY_CONTENTS)
    return [item if isinstance(item, dict) else {} for item in value]


def _parts(content: JsonObject) -> list[JsonObject]:
    value = content.get("parts")
    if not isinstance(value, list):
        return []
    return [item if isinstance(item, dict) else {} for item in value]


def _signature_of(part: JsonObject) -> JsonValue:
    value = part.get("thoughtSignature", part.get("thought_signature"))
    if value is None:
        call = part.get("functionCall", part.get("function_call"))
        if isinstance(call, dict):
            value = call.get("thoughtSignature")
    return value


def _has(part: JsonObject, name: str) -> bool:
    return name in part or _snake(name) in part


def _base64_errors(contents: list[JsonObject]) -> Violation | None:
    for index, content in enumerate(contents):
        for position, part in enumerate(_parts(content)):
            value = _signature_of(part)
            if value is None:
                continue
            if not isinstance(value, str) or signature_bytes(value) is None:
                where = f"contents[{index}].parts[{position}].thought_signature"
                message = (
                    f"Invalid value at '{where}' (TYPE_BYTES), Base64 decoding failed for "
                    f'"{value}"'
                )
                return Violation(400, message)
    return None


def _turn_errors(contents: list[JsonObject]) -> Violation | None:
    previous_calls = 0
    previous_kind = "none"
    for content in contents:
        parts = _parts(content)
        calls = sum(1 for part in parts if _has(part, "functionCall"))
        responses = sum(1 for part in parts if _has(part, "functionResponse"))
        if responses:
            if previous_kind != "call":
                return Violation(400, RESPONSE_AFTER_CALL)
            if responses != previous_calls:
                return Violation(400, COUNT_MISMATCH)
        elif previous_kind == "call":
            return Violation(400, COUNT_MISMATCH)
        if calls and content.get("role") == "model" and previous_kind not in ("user", "response"):
            return Violation(400, CALL_AFTER_USER)
        if calls:
            previous_kind = "call"
        elif responses:
            previous_kind = "response"
        else:
            previous_kind = "user" if content.get("role") != "model" else "model"
        previous_calls = calls
    return None


def current_turn_start(contents: list[JsonObject]) -> int:
    """Index of the first content of the current turn (after the last plain user content)."""
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if content.get("role") == "model":
            continue
        if any(not _has(part, "functionResponse") for part in _parts(content)):
            return index + 1
    return 0


def _signature_errors(
    contents: list[JsonObject], signature_valid: SignatureCheck | None
) -> Violation | None:
    for index in range(current_turn_start(contents), len(contents)):
        content = contents[index]
        if content.get("role") != "model":
            continue
        first_call = True
        for part in _parts(content):
            value = _signature_of(part)
            is_call = _has(part, "functionCall")
            if is_call and first_call and value is None:
                call = part.get("functionCall", part.get("function_call"))
                name = call.get("name") if isinstance(call, dict) else None
                message = MISSING_SIGNATURE.format(name=name, position=index + 1)
                return Violation(400, message)
            first_call = first_call and not is_call
            if not isinstance(value, str) or is_dummy(value) or signature_valid is None:
                continue
            decoded = signature_bytes(value)
            if decoded is None or not signature_valid(decoded, part):
                return Violation(400, INVALID_SIGNATURE)
    return None


def find_violation(
    payload: JsonObject,
    *,
    require_signatures: bool = True,
    signature_valid: SignatureCheck | None = None,
) -> Violation | None:
    """The first Gemini validation rule ``payload`` breaks, or ``None``."""
    found = _unknown_name(payload, "request", "")
    if found is not None:
        return found
    contents = _contents(payload)
    if isinstance(contents, Violation):
        return contents
    found = _base64_errors(contents) or _turn_errors(contents)
    if found is None and require_signatures:
        found = _signature_errors(contents, signature_valid)
    return found
