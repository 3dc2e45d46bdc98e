"""One grammar for a call to any of several tools."""

import warnings

import pytest

import constrain

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"$ref": "#/$defs/city"}}, "required": ["city"],
    "$defs": {"city": {"type": "string", "minLength": 1}}}}}
ADD = {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                                      "required": ["a", "b"], "additionalProperties": False}}
BROKEN = {"name": "broken", "parameters": {"type": "object", "properties": {"x": {"uniqueItems": True}}}}


def test_call_names_a_tool_and_carries_its_arguments():
    """Each tool's arguments follow that tool's own schema, $refs included."""
    g = constrain.compile_tools([WEATHER, ADD])
    assert g.accepts('{"name": "get_weather", "arguments": {"city": "Paris"}}')
    assert g.accepts('{"name": "add", "arguments": {"a": 1, "b": 2}}')
    assert not g.accepts('{"name": "add", "arguments": {"city": "Paris"}}')
    assert not g.accepts('{"name": "get_weather", "arguments": {"city": ""}}')
    assert not g.accepts('{"name": "sub", "arguments": {}}')


def test_uncompilable_tool_is_dropped_with_a_warning_naming_it():
    """A tool whose schema cannot compile is dropped; the warning names it and the pointer."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = constrain.compile_tools([BROKEN, ADD])
    assert any("broken" in str(w.message) and "/properties/x/uniqueItems" in str(w.message) for w in caught)
    assert g.accepts('{"name": "add", "arguments": {"a": 1, "b": 2}}')
    assert not g.accepts('{"name": "broken", "arguments": {}}')


def test_required_tool_that_fails_is_an_error():
    """A tool listed as required must compile."""
    with pytest.raises(constrain.UnsupportedKeyword):
        constrain.compile_tools([BROKEN, ADD], required=["broken"])


def test_bad_tool_lists_are_refused():
    """Duplicate names, nameless tools and an empty result are clear errors."""
    with pytest.raises(ValueError):
        constrain.compile_tools([ADD, ADD])
    with pytest.raises(ValueError):
        constrain.compile_tools([{"parameters": {}}])
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        constrain.compile_tools([BROKEN])
