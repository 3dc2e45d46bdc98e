"""unevaluatedProperties and unevaluatedItems: exact, against python-jsonschema, with no dead ends.

Schemas put the keyword beside every in-place applicator (allOf, anyOf, oneOf, if/then/else,
dependentSchemas, $ref, not) at several depths; instances draw keys and items from a small pool, so
that evaluated and unevaluated members both occur. Documents are written in any key order and the
grammar is compiled with ``property_order="any"``: the language is under test, not the order.
"""

import itertools
import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import constrain
from compiler.validation import validate

KEYS = ["a", "b", "c", "x1"]
VALUES = [1, "s", None]
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def agree(schema, instances):
    """The grammar, our validator and python-jsonschema give each instance the same verdict."""
    schema = {"$schema": DRAFT, **schema}
    grammar = constrain.compile(schema, property_order="any", cache=False)
    reference = jsonschema.Draft202012Validator(schema)
    assert grammar.find_trap(2000) is None
    for instance in instances:
        expected = reference.is_valid(instance)
        text = json.dumps(instance, separators=(",", ":"))
        assert grammar.accepts(text) == expected, (schema, text)
        assert (validate(instance, schema) == []) == expected, (schema, text)


OBJECTS = [dict(zip(keys, vals)) for n in range(3) for keys in itertools.permutations(KEYS, n)
           for vals in itertools.product(VALUES[:2], repeat=n)]
ARRAYS = [list(items) for n in range(4) for items in itertools.product(VALUES, repeat=n)]

HAND_WRITTEN = [
    {"properties": {"a": {}}, "unevaluatedProperties": False},
    {"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "unevaluatedProperties": False},
    {"anyOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
               {"properties": {"b": {"type": "integer"}}, "required": ["b"]}], "unevaluatedProperties": False},
    {"oneOf": [{"properties": {"a": {"const": 1}}, "required": ["a"]},
               {"properties": {"b": {}}, "required": ["b"]}], "unevaluatedProperties": {"type": "string"}},
    {"if": {"properties": {"a": {"const": 1}}, "required": ["a"]}, "then": {"properties": {"b": {}}},
     "else": {"properties": {"c": {}}}, "unevaluatedProperties": False},
    {"properties": {"a": {}}, "dependentSchemas": {"a": {"properties": {"b": {}}}}, "unevaluatedProperties": False},
    {"patternProperties": {"^x": {}}, "allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False},
    {"$defs": {"ab": {"properties": {"a": {}, "b": {}}}}, "$ref": "#/$defs/ab", "unevaluatedProperties": False},
    {"not": {"properties": {"a": {"const": 1}}, "required": ["a"]}, "unevaluatedProperties": {"const": 1}},
    {"allOf": [{"properties": {"a": {}}, "unevaluatedProperties": True}], "unevaluatedProperties": False},
    {"properties": {"a": {"properties": {"b": {}}, "unevaluatedProperties": False}}, "unevaluatedProperties": False},
    {"allOf": [{"properties": {"a": {}}}, {"unevaluatedProperties": False}]},  # a cousin is not seen
    {"additionalProperties": {"type": "integer"}, "unevaluatedProperties": False},
    {"enum": [{"a": 1}, {"b": 1}, {"a": "s", "b": 1}], "properties": {"a": {}}, "unevaluatedProperties": False},  # literals judged
]

HAND_WRITTEN_ITEMS = [
    {"prefixItems": [{}], "unevaluatedItems": False},
    {"prefixItems": [{}], "allOf": [{"prefixItems": [{}, {}]}], "unevaluatedItems": {"type": "string"}},
    {"anyOf": [{"prefixItems": [{"const": 1}]}, {"prefixItems": [True, {"type": "null"}]}], "unevaluatedItems": False},
    {"contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}},
    {"if": {"prefixItems": [{"const": 1}]}, "then": {"prefixItems": [True, True]}, "unevaluatedItems": False},
    {"items": {"type": "integer"}, "unevaluatedItems": False},
    {"oneOf": [{"contains": {"const": 1}}, {"prefixItems": [{"type": "string"}]}], "unevaluatedItems": {"type": "null"}},
    {"enum": [[1], [1, "s"], []], "prefixItems": [{}], "unevaluatedItems": False},  # literals judged
]


@pytest.mark.parametrize("schema", HAND_WRITTEN)
def test_unevaluated_properties_agree_with_jsonschema(schema):
    agree(schema, OBJECTS + [1, "s"])


@pytest.mark.parametrize("schema", HAND_WRITTEN_ITEMS)
def test_unevaluated_items_agree_with_jsonschema(schema):
    agree(schema, ARRAYS + [{}])


value = st.sampled_from([{}, {"type": "integer"}, {"type": "string"}, {"const": 1}, False])


def object_schema(depth: int):
    own = st.fixed_dictionaries({}, optional={
        "properties": st.dictionaries(st.sampled_from(KEYS), value, max_size=2),
        "patternProperties": st.just({"^x": {"type": "integer"}}),
        "required": st.lists(st.sampled_from(KEYS), max_size=1, unique=True),
    })
    if depth == 0:
        return own
    inner = object_schema(depth - 1)
    return st.builds(lambda base, extra: {**base, **extra}, own, st.fixed_dictionaries({}, optional={
        "allOf": st.lists(inner, min_size=1, max_size=2),
        "anyOf": st.lists(inner, min_size=1, max_size=2),
        "oneOf": st.lists(inner, min_size=1, max_size=2),
        "if": inner, "then": inner, "else": inner,
        "dependentSchemas": st.dictionaries(st.sampled_from(KEYS), inner, max_size=1),
        "unevaluatedProperties": st.sampled_from([True, False, {"type": "integer"}]),
    }))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(object_schema(2), st.sampled_from([False, {"type": "string"}]))
def test_generated_unevaluated_properties_agree_with_jsonschema(schema, unevaluated):
    schema = {**schema, "unevaluatedProperties": unevaluated}
    try:
        constrain.compile(schema, property_order="any", cache=False)
    except constrain.Unsatisfiable:  # then nothing validates
        reference = jsonschema.Draft202012Validator({"$schema": DRAFT, **schema})
        assert not any(reference.is_valid(instance) for instance in OBJECTS + [1, "s", None, []])
        return
    except (constrain.UnsupportedKeyword, constrain.SchemaTooComplex):  # a product past its bound, said so
        return
    agree(schema, OBJECTS)


def test_too_many_cases_are_refused_with_the_pointer():
    branches = [{"properties": {f"k{i}": {}}} for i in range(8)]
    with pytest.raises(constrain.UnsupportedKeyword, match="/unevaluatedProperties"):
        constrain.compile({"anyOf": branches, "unevaluatedProperties": False}, cache=False)


WIDE = [f"k{i}" for i in range(8)]
PAST_THE_BOUND = [  # each more than 64 cases of what is evaluated
    {"anyOf": [{"properties": {k: {"type": "integer"}}} for k in WIDE], "unevaluatedProperties": False},
    {"anyOf": [{"properties": {k: {}}, "required": [k]} for k in WIDE], "patternProperties": {"^x": {}},
     "unevaluatedProperties": {"type": "string"}},
    {"allOf": [{"$ref": "#/$defs/wide"}], "if": {"required": ["k0"]}, "then": {"properties": {"a": {}}},
     "else": {"dependentSchemas": {"k1": {"properties": {"b": {}}}}}, "unevaluatedProperties": False,
     "$defs": {"wide": {"anyOf": [{"properties": {k: {"const": 1}}} for k in WIDE]}}},
    {"oneOf": [{"anyOf": [{"properties": {k: {"type": "integer"}}} for k in WIDE]},
               {"required": ["a"], "additionalProperties": {"type": "integer"}}], "unevaluatedProperties": False},
]


@pytest.mark.parametrize("schema", PAST_THE_BOUND)
def test_past_the_case_bound_the_validator_judges_each_instance(schema):
    """What the compile refuses as too many cases (it has one automaton for all instances), the
    validator judges instance by instance from the names the subschemas it passes evaluate, as the
    specification collects annotations, agreeing with python-jsonschema."""
    with pytest.raises(constrain.UnsupportedKeyword, match="cases of what is evaluated"):
        constrain.compile(schema, cache=False)
    reference = jsonschema.Draft202012Validator({"$schema": DRAFT, **schema})
    names = WIDE[:3] + ["a", "b", "x1", "z"]
    instances = [dict(zip(keys, vals)) for n in range(3) for keys in itertools.combinations(names, n)
                 for vals in itertools.product([1, "s"], repeat=n)]
    for instance in instances:
        assert (validate(instance, schema) == []) == reference.is_valid(instance), (schema, instance)


@pytest.mark.parametrize("schema", [{"not": {"$ref": "#"}}, {"if": {"$ref": "#"}}, {"else": {"$ref": "#"}, "if": False},
                                    {"dependentSchemas": {"a": {"$ref": "#"}}}])
def test_a_loop_through_any_in_place_keyword_is_refused_at_once(schema):
    with pytest.raises(constrain.InvalidSchema, match="loops back"):
        validate({"a": 1}, schema)


def test_draft7_ignores_unevaluated_keywords():
    """Draft 7 has no such keywords: unknown words there, as python-jsonschema reads them."""
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {}},
              "unevaluatedProperties": False}
    assert constrain.compile(schema, cache=False).accepts('{"a":1,"b":2}')
    assert validate({"a": 1, "b": 2}, schema) == []


def test_unique_items_false_says_nothing():
    schema = {"type": "array", "uniqueItems": False, "items": {"type": "integer"}}
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts("[1,1]") and not grammar.accepts('["a"]')
    assert validate([1, 1], schema) == []
    with pytest.raises(constrain.Unsatisfiable):  # 'not' of a schema every value satisfies
        constrain.compile({"not": {"uniqueItems": False}}, cache=False)


def test_deep_in_place_nesting_is_bounded():
    """allOf inside allOf 10,000 deep under unevaluatedProperties: a clear error, from both the compiler
    and the validator, never a RecursionError."""
    schema: dict = {"properties": {"a": {}}}
    for _ in range(10_000):
        schema = {"allOf": [schema]}
    schema["unevaluatedProperties"] = False
    with pytest.raises(constrain.UnsupportedKeyword, match="nested over 32 deep"):
        constrain.compile(schema, cache=False)
    with pytest.raises(constrain.UnsupportedKeyword, match="nested over 32 deep"):
        validate({}, schema)


@pytest.mark.parametrize("schema", [
    {"enum": [{"x": {"a": 1}}, {"x": {"b": 1}}], "properties": {"x": {"properties": {"a": {}}, "unevaluatedProperties": False}}},
    {"enum": [[{"a": 1}], [{"b": 1}]], "items": {"properties": {"a": {}}, "unevaluatedProperties": False}},
    {"enum": [[[1]], [[1, 2]]], "items": {"prefixItems": [{}], "unevaluatedItems": False}},
    {"enum": [{"x": "2020-01-01"}, {"x": "no"}], "additionalProperties": {"format": "date"}}])
def test_literals_are_judged_by_the_keywords_below_them(schema):
    """An enum's values are judged against the rest of their schema, down to the unevaluated
    keywords and formats of the values inside them (the lowering's validator prepares each node it reaches)."""
    schema = {"$schema": DRAFT, **schema}
    grammar = constrain.compile(schema, property_order="any", cache=False)
    reference = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    verdicts = [grammar.accepts(json.dumps(v, separators=(",", ":"))) for v in schema["enum"]]
    assert verdicts == [reference.is_valid(v) for v in schema["enum"]] == [True, False]
