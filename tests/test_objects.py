"""Objects whose named properties may come in any order (``property_order="any"``)."""

import itertools
import json
import pickle
import random

import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import constrain
import compiler.containers
from compiler.any_order import ANY_ORDER_MAX, LAZY_ORDER_MAX

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"},
                                           "d": {"type": "null"}},
          "required": ["a", "c"]}
VALUES = {"a": 1, "b": "x", "c": True, "d": None, "z": [1]}


def _instances(names):
    """Every object over every subset of ``names`` in every order, as compact JSON text."""
    for size in range(len(names) + 1):
        for subset in itertools.permutations(names, size):
            yield json.dumps({k: VALUES[k] for k in subset})


@pytest.fixture(params=["grid", "lazy"])
def sets_written(request, monkeypatch):
    """Each way of tracking the names written: states made at compile, or (every object past one
    name) a fragment per set made where a generation reaches it."""
    if request.param == "lazy":
        monkeypatch.setattr(compiler.containers, "GRID_MAX", 1)
    return request.param


@pytest.mark.parametrize("extra", [True, False])
@pytest.mark.parametrize("bounds", [{}, {"minProperties": 3}, {"minProperties": 4}, {"maxProperties": 3},
                                    {"maxProperties": 2}])
def test_any_order_accepts_exactly_the_valid_objects_in_every_order(extra, bounds, sets_written):
    """Against python-jsonschema, every subset of the names (and an additional one) in every order."""
    schema = {**SCHEMA, "additionalProperties": extra, **bounds}
    grammar = constrain.compile(schema, property_order="any", cache=False)
    validator = jsonschema.Draft202012Validator(schema)
    checked = 0
    for text in _instances(["a", "b", "c", "d", "z"]):
        assert grammar.accepts(text) == validator.is_valid(json.loads(text)), text
        checked += 1
    assert checked > 300
    assert grammar.find_trap() is None


def test_any_order_lets_additional_keys_come_before_a_single_name(sets_written):
    """One named property beside additional keys: the names may still come in any order."""
    for schema in ({"properties": {"b": {"type": "string"}}}, {"properties": {"b": {"type": "string"}}, "required": ["b"]},
                   {"properties": {"b": {"type": "string"}}, "additionalProperties": False},
                   {"properties": {"b": {"type": "string"}, "d": {"type": "null"}}, "required": ["d"],
                    "patternProperties": {"^z": {"type": "array"}}, "minProperties": 3}):
        grammar = constrain.compile(schema, property_order="any", cache=False)
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


def test_a_large_object_asking_more_members_than_it_can_have_is_unsatisfiable():
    """The sets' stand-in asks ``minProperties`` of the members beyond the required ones: a closed
    object of eight names (past GRID_MAX) asking nine has no instance, asking eight takes them all."""
    names = [f"n{i}" for i in range(8)]
    closed = {"type": "object", "properties": {n: {"type": "integer"} for n in names}, "additionalProperties": False}
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile({**closed, "minProperties": 9}, property_order="any", cache=False)
    with pytest.raises(constrain.Unsatisfiable):  # one name can never be written
        constrain.compile({**closed, "minProperties": 8, "properties": {**closed["properties"], "n3": False}},
                          property_order="any", cache=False)
    every = constrain.compile({**closed, "minProperties": 8}, property_order="any", cache=False)
    assert every.accepts(json.dumps({n: 1 for n in reversed(names)}))
    assert not every.accepts(json.dumps({n: 1 for n in names[1:]}))
    assert every.find_trap(budget=2_000) is None


def test_large_objects_take_any_order_set_by_set():
    """Past GRID_MAX names the sets written are fragments made where a generation reaches them:
    compiling stays linear in the names, and every order of every subset is judged as the spec does."""
    names = [f"p{i}" for i in range(40)]
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names}, "required": names[::7],
              "additionalProperties": False}
    grammar = constrain.compile(schema, property_order="any", cache=False)
    assert grammar.program.size < 2_000
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(7)
    for _ in range(200):
        subset = rng.sample(names, rng.randint(0, len(names)))
        doc = {n: 1 for n in subset}
        assert grammar.accepts(json.dumps(doc)) == validator.is_valid(doc), subset
    assert grammar.accepts(json.dumps({n: 1 for n in reversed(names)}))
    assert not grammar.accepts('{"p0": 1, "p7": 1, "p14": 1, "p21": 1, "p28": 1, "p35": 1, "p0": 1}')
    assert grammar.find_trap(budget=3_000) is None
    assert not constrain.compile(schema, property_order="any", lazy=False).accepts(json.dumps({n: 1 for n in reversed(names)}))
    few = {"type": "object", "properties": {n: {"type": "integer"} for n in names[:ANY_ORDER_MAX]}}
    assert constrain.compile(few, property_order="any", lazy=False).accepts(json.dumps({n: 1 for n in names[ANY_ORDER_MAX - 1::-1]}))


def test_a_cached_grammar_grown_past_half_its_bound_is_compiled_anew():
    """Sets of names made as generations reach them can grow without end over many requests: the
    cache hands out a fresh grammar once the automaton holds half its bound, the old one still walks."""
    names = [f"p{i}" for i in range(ANY_ORDER_MAX + 10)]
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names}, "required": ["p3"]}
    first = constrain.compile(schema, property_order="any")
    first.automaton.max_states = 4_000
    rng = random.Random(3)
    while not first.worn():
        first.accepts(json.dumps({n: 1 for n in rng.sample(names, len(names))}))
    second = constrain.compile(schema, property_order="any")
    assert second is not first and not second.worn()
    assert constrain.compile(schema, property_order="any") is second
    doc = json.dumps({n: 1 for n in reversed(names)})
    assert first.accepts(doc) and second.accepts(doc)


def test_a_large_object_in_any_order_pickles_as_its_schema():
    """Its sets may number 2**n: a pickled grammar carries the schema, lowered again where it lands."""
    names = [f"p{i}" for i in range(ANY_ORDER_MAX + 5)]
    schema = {"type": "object", "properties": {n: {"type": "string"} for n in names}, "required": names[:2]}
    grammar = constrain.compile(schema, property_order="any", cache=False)
    back = pickle.loads(pickle.dumps(grammar))
    doc = json.dumps({n: "x" for n in reversed(names)})
    assert back.accepts(doc) and grammar.accepts(doc)
    assert not back.accepts(json.dumps({n: "x" for n in names[1:]}))


def test_a_large_object_on_a_recursion_takes_any_order_at_every_depth():
    """A member's value holds the object again: its sets lie on a call cycle, the object's frames
    counted as in the schema's order (a nesting as deep, no deeper), any order at every depth."""
    names = [f"p{i}" for i in range(ANY_ORDER_MAX + 2)]
    schema = {"type": "object", "properties": {**{n: {"type": "integer"} for n in names}, "child": {"$ref": "#"}},
              "additionalProperties": False}

    def nested(depth: int, ordered: bool) -> dict:
        doc = {n: depth for n in (names if ordered else reversed(names))}
        return {**doc, "child": nested(depth - 1, ordered)} if depth else doc

    for max_depth in (2, 4):
        lazy = constrain.compile(schema, property_order="any", max_depth=max_depth, cache=False)
        ordered = constrain.compile(schema, max_depth=max_depth, cache=False)
        for depth in range(max_depth + 2):
            assert lazy.accepts(json.dumps(nested(depth, False))) == ordered.accepts(json.dumps(nested(depth, True))), depth
        assert lazy.accepts(json.dumps(nested(max_depth - 1, False)))
        assert lazy.find_trap() is None


def test_many_names_in_any_order_stay_linear_and_past_the_bound_keep_the_schema_order():
    """At LAZY_ORDER_MAX names: compiled in about the states of the schema's order, each set lowered
    where it is reached (in time linear in the names); past it, the schema's order."""
    names = [f"k{i}" for i in range(LAZY_ORDER_MAX)]
    schema = {"properties": {n: {"type": "boolean"} for n in names}, "required": names[:3]}
    grammar = constrain.compile(schema, property_order="any", cache=False)
    assert grammar.program.size < 1.2 * constrain.compile(schema, cache=False).program.size
    doc = {n: True for n in reversed(names[:40])}
    assert grammar.accepts(json.dumps(doc)) and not grammar.accepts(json.dumps(dict(list(doc.items())[:-1])))
    schema["properties"]["one_more"] = {}
    past = constrain.compile(schema, property_order="any", cache=False)
    assert past.accepts(json.dumps({n: True for n in names[:3]})) and not past.accepts(json.dumps({n: True for n in names[2::-1]}))


def test_property_order_must_be_schema_or_any():
    with pytest.raises(ValueError, match="property_order"):
        constrain.compile(SCHEMA, property_order="sorted")


def test_any_order_masks_equal_the_brute_force_answer(vocabulary, sets_written):
    from test_masks import brute_force
    from automaton.index import token_index

    grammar = constrain.compile({**SCHEMA, "additionalProperties": False}, property_order="any",
                                whitespace="flexible", cache=False)
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


TREE = {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
        "required": ["v"], "additionalProperties": False}
MEMBER_VALUES = {  # a value schema, and values of the instances (meeting it or not)
    "int": ({"type": "integer"}, [1, "x"]),
    "any": ({}, [None, [[1]], {"a": [{}]}]),
    "obj": ({"type": "object", "properties": {"x": {"type": "integer"}, "y": {}}, "required": ["x"]},
            [{"x": 1}, {"y": 2, "x": 3}, {"y": 1}]),
    "tree": ({"$ref": "#/$defs/tree"}, [{"v": 1}, {"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]}, {"kids": []}]),
    "self": ({"$ref": "#"}, [{}, {"n0": {"n1": {}}}, {"n0": 1}, {"zz": 5}]),
    "deep": ({"$ref": "#/$defs/pair"}, [{"k": {}}, {"k": {"p": {"k": {}}}}, {"k": 1}, {}]),  # two frames at least
}
PAIR = {"type": "object", "properties": {"k": {"$ref": "#/$defs/back"}}, "required": ["k"], "additionalProperties": False}
BACK = {"type": "object", "properties": {"p": {"$ref": "#/$defs/pair"}}, "additionalProperties": False}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(sorted(MEMBER_VALUES)), min_size=2, max_size=5), st.data())
def test_sets_made_where_reached_agree_with_the_spec(kinds, data):
    """Objects past the bound (patched to one name) whose members hold free values, nested objects,
    recursive definitions (one needing two frames) and the object itself: every order of every subset, with values that meet their schemas
    or not, is judged as python-jsonschema does; at a depth small enough to bind, as the grid made
    at compile judges it; and no state is a dead end."""
    names = [f"n{i}" for i in range(len(kinds))]
    required = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    bounds = data.draw(st.sampled_from([{}, {"minProperties": len(required) + 1}, {"maxProperties": len(required) + 1}]))
    extra = data.draw(st.sampled_from([True, False, {"type": "string"}]))
    schema = {"$defs": {"tree": TREE, "pair": PAIR, "back": BACK}, "type": "object", "properties": {n: MEMBER_VALUES[k][0] for n, k in zip(names, kinds)},
              "required": required, "additionalProperties": extra, **bounds}
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(compiler.containers, "GRID_MAX", ANY_ORDER_MAX)
            grid = constrain.compile(schema, property_order="any", max_depth=3, cache=False)
    except constrain.Unsatisfiable:  # more properties asked than the closed object has
        with pytest.MonkeyPatch.context() as patch, pytest.raises(constrain.Unsatisfiable):
            patch.setattr(compiler.containers, "GRID_MAX", 1)
            constrain.compile(schema, property_order="any", cache=False)
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiler.containers, "GRID_MAX", 1)
        lazy = constrain.compile(schema, property_order="any", cache=False)
        shallow = constrain.compile(schema, property_order="any", max_depth=3, cache=False)
    validator = jsonschema.Draft202012Validator(schema)
    for _ in range(30):
        chosen = data.draw(st.permutations(names + ["zz"]))[:data.draw(st.integers(0, len(names) + 1))]
        doc = {n: data.draw(st.sampled_from(MEMBER_VALUES[kinds[names.index(n)]][1] if n != "zz" else ["s", 5]))
               for n in chosen}
        text = json.dumps(doc)
        assert lazy.accepts(text) == validator.is_valid(doc), (schema, text)
        assert shallow.accepts(text) == grid.accepts(text), (schema, text)
    assert lazy.find_trap(budget=1_000) is None and shallow.find_trap(budget=1_000) is None
