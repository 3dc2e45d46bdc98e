"""Objects whose named properties may come in any order (``property_order="any"``)."""

import itertools
import json

import jsonschema
import numpy as np
import pytest

import constrain
from compiler.containers import ANY_ORDER_MAX

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"},
                                           "d": {"type": "null"}},
          "required": ["a", "c"]}
VALUES = {"a": 1, "b": "x", "c": True, "d": None, "z": [1]}


def _instances(names):
    """Every object over every subset of ``names`` in every order, as compact JSON text."""
    for size in range(len(names) + 1):
        for subset in itertools.permutations(names, size):
            yield json.dumps({k: VALUES[k] for k in subset})


@pytest.mark.parametrize("extra", [True, False])
@pytest.mark.parametrize("bounds", [{}, {"minProperties": 3}, {"maxProperties": 3}])
def test_any_order_accepts_exactly_the_valid_objects_in_every_order(extra, bounds):
    """Against python-jsonschema, every subset of the names (and an additional one) in every order."""
    schema = {**SCHEMA, "additionalProperties": extra, **bounds}
    grammar = constrain.compile(schema, property_order="any")
    validator = jsonschema.Draft202012Validator(schema)
    checked = 0
    for text in _instances(["a", "b", "c", "d", "z"]):
        assert grammar.accepts(text) == validator.is_valid(json.loads(text)), text
        checked += 1
    assert checked > 300
    assert grammar.find_trap() is None


def test_any_order_lets_additional_keys_come_before_a_single_name():
    """One named property beside additional keys: the names may still come in any order."""
    for schema in ({"properties": {"b": {"type": "string"}}}, {"properties": {"b": {"type": "string"}}, "required": ["b"]},
                   {"properties": {"b": {"type": "string"}}, "additionalProperties": False}):
        grammar = constrain.compile(schema, property_order="any")
        validator = jsonschema.Draft202012Validator(schema)
        for text in _instances(["b", "z", "d"]):
            assert grammar.accepts(text) == validator.is_valid(json.loads(text)), (schema, text)
        assert grammar.find_trap() is None


def test_schema_order_stays_the_default_and_keys_come_once():
    """By default only the schema's order is accepted; in any order a name still comes once."""
    ordered = constrain.compile(SCHEMA)
    free = constrain.compile(SCHEMA, property_order="any")
    assert ordered.accepts('{"a": 1, "c": true}') and not ordered.accepts('{"c": true, "a": 1}')
    assert free.accepts('{"c": true, "a": 1}') and free.accepts('{"d": null, "c": true, "b": "x", "a": 1}')
    assert not free.accepts('{"a": 1, "c": true, "a": 2}')
    assert not free.accepts('{"c": true, "b": "x"}')  # "a" is required


def test_objects_beyond_the_limit_keep_the_schema_order():
    """Tracking which names were written costs 2**n states: past ANY_ORDER_MAX names the order is fixed."""
    names = [f"p{i}" for i in range(ANY_ORDER_MAX + 1)]
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names}}
    grammar = constrain.compile(schema, property_order="any")
    assert grammar.accepts(json.dumps({n: 1 for n in names}))
    assert not grammar.accepts(json.dumps({n: 1 for n in reversed(names)}))
    small = constrain.compile({"type": "object", "properties": {n: {"type": "integer"} for n in names[:-1]}},
                              property_order="any")
    assert small.accepts(json.dumps({n: 1 for n in reversed(names[:-1])}))


def test_property_order_must_be_schema_or_any():
    with pytest.raises(ValueError, match="property_order"):
        constrain.compile(SCHEMA, property_order="sorted")


def test_any_order_masks_equal_the_brute_force_answer(vocabulary):
    from test_masks import brute_force
    from automaton.index import token_index

    grammar = constrain.compile({**SCHEMA, "additionalProperties": False}, property_order="any",
                                whitespace="flexible")
    index = token_index(grammar, vocabulary)
    for text in (b"{", b'{"c": true', b'{"c": true, "', b'{"d": null, "a": 1,'):
        state = grammar.automaton.walk(text)
        assert state >= 0, text
        assert np.array_equal(index.mask(state), brute_force(grammar, vocabulary, state)), text


def test_check_command_takes_the_property_order(tmp_path, capsys):
    """`constrain check --property-order any` compiles the any-order automaton (the size it reports)."""
    from constrain.cli import main

    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    sizes = {}
    for order in ("schema", "any"):
        assert main(["check", "--schema", str(path), "--property-order", order]) == 0
        sizes[order] = int(capsys.readouterr().out.split("ok: ")[1].split()[0])
    for order, size in sizes.items():
        assert constrain.compile(SCHEMA, property_order=order, cache=False, lazy=False).program.size == size
    assert sizes["any"] != sizes["schema"]


def test_branches_that_only_speak_of_declared_names_keep_the_schema_order():
    """An ``if``/``then`` on a declared property (any allOf whose branches name no property the
    schema lacks) keeps the schema's property order; a branch bringing names of its own (a base
    schema) puts them first."""
    props = {"a": {"type": "string"}, "b": {"type": "boolean"}, "d": {"type": "string"}}
    conditional = {"type": "object", "properties": props,
                   "allOf": [{"if": {"properties": {"b": {"const": False}}}, "then": {"required": ["d"]}}]}
    grammar = constrain.compile(conditional, whitespace="compact", cache=False)
    assert grammar.accepts('{"a":"x","b":false,"d":"t"}') and grammar.accepts('{"a":"x","b":true}')
    assert not grammar.accepts('{"b":false,"a":"x","d":"t"}') and not grammar.accepts('{"a":"x","b":false}')
    based = {"type": "object", "properties": {"d": {}}, "allOf": [{"properties": {"base": {}}}]}
    grammar = constrain.compile(based, whitespace="compact", cache=False)
    assert grammar.accepts('{"base":1,"d":2}') and not grammar.accepts('{"d":2,"base":1}')
