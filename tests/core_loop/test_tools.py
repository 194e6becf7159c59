"""Tools from callables: schema, validation, sync/async invocation, output conversion."""

from __future__ import annotations

from typing import Annotated

import pydantic
import pytest

from interlock.core_loop import Tool, ToolArgumentsError, ToolContext, output_parts, tool
from interlock.transcript import JsonPart, TextPart, ToolCallPart


@tool(approval="always")
def forecast(
    ctx: ToolContext,
    city: Annotated[str, pydantic.Field(description="City name")],
    days: int = 1,
) -> str:
    """Forecast the weather.

    More detail that is not the description.
    """
    return f"{city}:{days}:{ctx.occurrence_id}"


def test_schema_comes_from_the_signature() -> None:
    assert forecast.name == "forecast" and forecast.description == "Forecast the weather."
    assert forecast.parameters["required"] == ["city"]
    properties = forecast.parameters["properties"]
    assert isinstance(properties, dict) and set(properties) == {"city", "days"}, (
        "context is injected, not declared"
    )
    assert properties["city"] == {"description": "City name", "title": "City", "type": "string"}
    spec = forecast.spec
    assert spec.owner == "local" and spec.parameters == forecast.parameters


def test_validation_rejects_bad_arguments() -> None:
    good = ToolCallPart(call_id="c", name="forecast", arguments='{"city":"Oslo"}')
    assert forecast.validate(good) == {"city": "Oslo", "days": 1}
    for arguments in ('{"city": 1}', '{"city":"a","extra":1}', "nope", "[]"):
        with pytest.raises(ToolArgumentsError):
            forecast.validate(ToolCallPart(call_id="c", name="forecast", arguments=arguments))


async def test_sync_and_async_callables_run() -> None:
    call = ToolCallPart(
        call_id="c", name="forecast", arguments='{"city":"Oslo"}', occurrence_id="o"
    )
    context = ToolContext(thread_id="t", call=call)
    assert await forecast.call({"city": "Oslo", "days": 2}, context) == "Oslo:2:o"

    @tool
    async def later(value: int) -> int:
        return value * 2

    assert await later.call({"value": 4}, context) == 8


def test_client_tool_is_declaration_only() -> None:
    client = Tool.client("pick", description="Pick one")
    assert client.client_owned and client.spec.owner == "client"
    assert not forecast.client_owned


def test_output_parts() -> None:
    class Point(pydantic.BaseModel):
        x: int

    assert output_parts(None) == ()
    assert output_parts("hi") == (TextPart(text="hi"),)
    assert output_parts({"a": 1}) == (JsonPart(value={"a": 1}),)
    assert output_parts(Point(x=1)) == (JsonPart(value={"x": 1}),)
    assert output_parts([TextPart(text="a"), JsonPart(value=1)]) == (
        TextPart(text="a"),
        JsonPart(value=1),
    )
    assert output_parts({1, 2}) in ((TextPart(text="{1, 2}"),),)


def test_approval_rule_errors_mean_approval_needed() -> None:
    def broken(arguments: object) -> bool:
        raise KeyError("x")

    guarded = Tool.from_function(lambda: None, name="g", approval=broken)
    assert guarded.needs_approval(ToolCallPart(call_id="c", name="g"))
    assert not Tool.from_function(lambda: None, name="h").needs_approval(
        ToolCallPart(call_id="c", name="h")
    )
