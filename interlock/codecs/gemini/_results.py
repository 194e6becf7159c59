"""``functionResponse`` ⇄ :class:`ToolResultPart`.

Gemini's ``response`` must be a JSON object. Its own documentation (the SDK's
``FunctionResponse.response`` docstring) names the convention this codec uses, which is
invertible for every canonical shape it produces:

=============================================  ===========================================
canonical output                               wire ``response``
=============================================  ===========================================
one :class:`TextPart` ``t``, success           ``{"output": t}``
one :class:`TextPart` ``t``, not success       ``{"error": t}``
one :class:`JsonPart` holding an object ``o``  ``o`` (``{"error": o}`` when not success)
one :class:`JsonPart` holding another value    ``{"output": v}`` / ``{"error": v}``
nothing                                        ``{}``
=============================================  ===========================================

Decoding reverses the table: a ``response`` whose only key is ``output`` (holding a string,
array, number, boolean or null) or ``error`` unwraps; any other object is a
:class:`JsonPart` as is. The outcomes ``denied`` and ``interrupted`` travel as errors and
come back as ``failed`` (Gemini has no such distinction). Media travel in
``functionResponse.parts`` (``inlineData`` / ``fileData``). Several non-media output parts
have no exact form: they are sent as ``{"output": [...]}`` with a warning.
"""

from __future__ import annotations

from typing import Final

from interlock.codecs.gemini._media import decode_media
from interlock.codecs.gemini._wire import DIALECT, as_list, as_object, as_str, split_fields
from interlock.transcript import (
    DecodeError,
    JsonObject,
    JsonPart,
    JsonValue,
    MediaPart,
    OutputPart,
    TextPart,
    ToolOutcome,
    ToolResultPart,
    TranslationWarning,
)

RESPONSE_FIELDS: Final = frozenset({"id", "name", "response", "parts"})
RESPONSE_PART_FIELDS: Final = frozenset({"inlineData", "fileData"})


def decode_function_response(
    value: JsonValue, path: str, part_fields: JsonObject
) -> ToolResultPart:
    """A wire ``functionResponse`` as a tool result.

    ``call_id`` is empty when the wire has no ``id`` (marker ``mintedId``); the request
    decoder pairs it with its call.
    """
    body, unknown = split_fields(as_object(value, path), RESPONSE_FIELDS)
    marks: JsonObject = {}
    name = body.get("name")
    call_id = body.get("id")
    if call_id is None:
        marks["mintedId"] = True
    outputs: list[OutputPart] = []
    outcome: ToolOutcome = "success"
    if "response" in body:
        outcome, first = unwrap(as_object(body["response"], f"{path}.response"))
        if first is not None:
            outputs.append(first)
    else:
        marks["noResponse"] = True
    if "parts" in body:
        for index, item in enumerate(as_list(body["parts"], f"{path}.parts")):
            where = f"{path}.parts[{index}]"
            media, media_unknown = split_fields(as_object(item, where), RESPONSE_PART_FIELDS)
            if not media:
                raise DecodeError(where, "expected inlineData or fileData")
            inline = "inlineData" in media
            key = "inlineData" if inline else "fileData"
            part = decode_media(media[key], f"{where}.{key}", inline)
            if media_unknown:
                own: JsonObject = {**part.extra.get(DIALECT, {}), "fields": media_unknown}
                part = MediaPart(
                    media_type=part.media_type,
                    data=part.data,
                    uri=part.uri,
                    filename=part.filename,
                    extra={DIALECT: own},
                )
            outputs.append(part)
    if unknown:
        marks["response"] = unknown
    if part_fields:
        marks["fields"] = part_fields
    return ToolResultPart(
        call_id="" if call_id is None else as_str(call_id, f"{path}.id"),
        name=None if name is None else as_str(name, f"{path}.name"),
        output=tuple(outputs),
        outcome=outcome,
        extra={DIALECT: marks} if marks else {},
    )


def unwrap(response: JsonObject) -> tuple[ToolOutcome, OutputPart | None]:
    """The outcome and output a ``response`` object stands for (see the module table)."""
    if len(response) == 1:
        ((key, value),) = response.items()
        if key == "error":
            return "failed", TextPart(text=value) if isinstance(value, str) else JsonPart(
                value=value
            )
        if key == "output" and not isinstance(value, dict):
            return "success", TextPart(text=value) if isinstance(value, str) else JsonPart(
                value=value
            )
    return "success", JsonPart(value=response)


def encode_response_object(
    part: ToolResultPart, location: str, warnings: list[TranslationWarning]
) -> JsonObject:
    """The wire ``response`` object for a tool result's non-media output (see module table)."""
    exact = response_object(part)
    if exact is not None:
        return exact
    values = [item for item in part.output if not isinstance(item, MediaPart)]
    warnings.append(
        TranslationWarning(
            code="tool_output_flattened",
            location=location,
            message="several tool output parts sent as one Gemini response list",
        )
    )
    key = "output" if part.outcome == "success" else "error"
    return {key: [item.text if isinstance(item, TextPart) else item.value for item in values]}  # pyright: ignore[reportAttributeAccessIssue] -- values holds only text and JSON parts


def response_object(part: ToolResultPart) -> JsonObject | None:
    """The wire ``response`` object for a result with at most one non-media output part
    (exact, see the module table); ``None`` for several, which have no exact form."""
    key = "output" if part.outcome == "success" else "error"
    output = part.output
    if len(output) == 1 and isinstance(output[0], TextPart):  # the commonest result
        return {key: output[0].text}
    values = [item for item in output if not isinstance(item, MediaPart)]
    if not values:
        return {} if key == "output" else {"error": ""}
    if len(values) > 1:
        return None
    (only,) = values
    if isinstance(only, TextPart):
        return {key: only.text}
    assert isinstance(only, JsonPart)
    if isinstance(only.value, dict) and key == "output":
        return only.value
    return {key: only.value}
