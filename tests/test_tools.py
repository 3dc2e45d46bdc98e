"""Behaviour of `normalize_tool_schema`: boolean subschemas rewritten for servers that reject them."""

import copy
import json

import jsonschema
import pytest

from constrain.tools import normalize_tool_schema
from constrain.validate import validate

RECORD = {
    "type": "object",
    "properties": {"source": {"$ref": "#/$defs/RecordSource"}},
    "required": ["source"],
    "$defs": {
        "RecordSource": {
            "oneOf": [
                {"type": "object", "properties": {"kind": {"const": "url"}, "url": {"type": "string"}},
                 "required": ["kind", "url"], "additionalProperties": False},
                {"type": "object", "properties": {"kind": {"const": "note"}, "evidence": True},
                 "required": ["kind"], "additionalProperties": False},
            ]
        }
    },
}


def has_boolean_subschema(schema) -> bool:
    """Whether a boolean sits where llama.cpp wants an object (booleans of additional* are fine)."""
    text = json.dumps(schema)
    for keep in ('"additionalProperties": true', '"additionalProperties": false',
                 '"additionalItems": false', '"additionalItems": true'):
        text = text.replace(keep, "")
    return ": true" in text or ": false" in text or "[true" in text or "[false" in text \
        or ", true" in text or ", false" in text


def test_evidence_true_under_defs_oneof_normalises_and_compiles():
    """The LM Studio / llama.cpp failure case: `evidence: true` becomes {} and the schema compiles."""
    before = copy.deepcopy(RECORD)
    out = normalize_tool_schema(RECORD)
    assert out["$defs"]["RecordSource"]["oneOf"][1]["properties"]["evidence"] == {}
    assert not has_boolean_subschema(out)
    assert RECORD == before
    note = {"source": {"kind": "note", "evidence": [1, "x"]}}
    assert validate(note, out) == [] and validate(note, RECORD) == []
    constrain = pytest.importorskip("constrain")
    grammar = constrain.compile(out)
    assert grammar.accepts(json.dumps(note, separators=(",", ":")))


def test_true_property_becomes_empty_schema():
    """`"p": true` under properties is `{}` (the name stays declared)."""
    assert normalize_tool_schema({"properties": {"p": True}}) == {"properties": {"p": {}}}


def test_false_property_is_dropped_with_its_required_entry():
    """`"p": false` removes the property and its name from `required` (and an emptied `required`)."""
    schema = {"properties": {"p": False, "q": {"type": "string"}}, "required": ["p", "q"]}
    assert normalize_tool_schema(schema) == {"properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert normalize_tool_schema({"properties": {"p": False}, "required": ["p"]}) == {"properties": {}}


@pytest.mark.parametrize("keyword", ["anyOf", "oneOf"])
def test_false_branch_is_dropped(keyword):
    """A `false` branch of anyOf/oneOf never matches, so it goes; no branch left is `{"not": {}}`."""
    assert normalize_tool_schema({keyword: [False, {"type": "null"}]}) == {keyword: [{"type": "null"}]}
    assert normalize_tool_schema({keyword: [False]}) == {keyword: [{"not": {}}]}
    assert normalize_tool_schema({keyword: [True, {"type": "null"}]}) == {keyword: [{}, {"type": "null"}]}


def test_allof_true_branch_is_dropped_and_false_becomes_not():
    """`true` in allOf constrains nothing; `false` there is spelled `{"not": {}}`."""
    assert normalize_tool_schema({"allOf": [True, {"type": "null"}]}) == {"allOf": [{"type": "null"}]}
    assert normalize_tool_schema({"type": "string", "allOf": [True]}) == {"type": "string"}
    assert normalize_tool_schema({"allOf": [False]}) == {"allOf": [{"not": {}}]}


@pytest.mark.parametrize("schema, expected", [
    ({"items": False}, {"maxItems": 0}),
    ({"prefixItems": [{"type": "string"}], "items": False},
     {"prefixItems": [{"type": "string"}], "maxItems": 1}),
    ({"prefixItems": [{}, {}], "items": False, "maxItems": 1}, {"prefixItems": [{}, {}], "maxItems": 1}),
    ({"prefixItems": [{}, {}], "items": False, "maxItems": 5}, {"prefixItems": [{}, {}], "maxItems": 2}),
])
def test_items_false_caps_max_items(schema, expected):
    """`items: false` becomes maxItems = the tuple length (or a tighter maxItems), 0 without a tuple."""
    assert normalize_tool_schema(schema) == expected


def test_items_false_keeps_the_meaning():
    """The capped form accepts exactly what `items: false` accepted (python-jsonschema as judge)."""
    schema = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False}
    out = normalize_tool_schema(schema)
    for instance in ([], ["a"], ["a", 1], ["a", 1, None], [1]):
        assert jsonschema.Draft202012Validator(schema).is_valid(instance) == \
            jsonschema.Draft202012Validator(out).is_valid(instance)


def test_items_true_is_dropped():
    """`items: true` constrains nothing and is removed."""
    assert normalize_tool_schema({"type": "array", "items": True}) == {"type": "array"}


@pytest.mark.parametrize("schema, expected", [
    ({"$defs": {"never": False, "any": True}}, {"$defs": {"never": {"not": {}}, "any": {}}}),
    ({"prefixItems": [False, True]}, {"prefixItems": [{"not": {}}, {}]}),
    ({"patternProperties": {"^x": False}}, {"patternProperties": {"^x": {"not": {}}}}),
    ({"contains": False}, {"contains": {"not": {}}}),
    ({"not": True}, {"not": {}}),
    ({"items": [True, False]}, {"items": [{}, {"not": {}}]}),
])
def test_false_elsewhere_becomes_not_empty(schema, expected):
    """Where no rule drops it, `false` is `{"not": {}}` and `true` is `{}`."""
    assert normalize_tool_schema(schema) == expected


def test_additional_properties_keeps_booleans():
    """additionalProperties (and additionalItems, unevaluated*) keep their boolean values."""
    schema = {"properties": {"a": {"additionalProperties": True}}, "additionalProperties": False,
              "items": [{}], "additionalItems": False, "unevaluatedProperties": False}
    assert normalize_tool_schema(schema) is schema


def test_boolean_root():
    """A boolean root becomes `{}` or `{"not": {}}`."""
    assert normalize_tool_schema(True) == {}
    assert normalize_tool_schema(False) == {"not": {}}


def test_nested_rewrites_reach_every_depth():
    """Booleans deep inside properties, items, $defs and applicators are all rewritten."""
    schema = {"properties": {"a": {"type": "array", "items": {"anyOf": [{"properties": {"x": True}}, False]}}},
              "$defs": {"d": {"oneOf": [{"items": {"properties": {"y": False}, "required": ["y"]}}]}}}
    assert normalize_tool_schema(schema) == {
        "properties": {"a": {"type": "array", "items": {"anyOf": [{"properties": {"x": {}}}]}}},
        "$defs": {"d": {"oneOf": [{"items": {"properties": {}}}]}},
    }


def test_input_is_never_mutated_and_unchanged_parts_are_shared():
    """The input stays as it was; subschemas with nothing to rewrite are reused, not copied."""
    untouched = {"type": "object", "properties": {"n": {"type": "integer"}}}
    schema = {"properties": {"keep": untouched, "p": True}}
    before = copy.deepcopy(schema)
    out = normalize_tool_schema(schema)
    assert schema == before
    assert out is not schema and out["properties"]["keep"] is untouched


def test_nothing_to_rewrite_returns_the_same_object():
    """A schema without boolean subschemas comes back as the very same object."""
    schema = copy.deepcopy(RECORD)
    schema["$defs"]["RecordSource"]["oneOf"][1]["properties"]["evidence"] = {}
    assert normalize_tool_schema(schema) is schema
    assert normalize_tool_schema({}) == {}


def test_deep_schema_does_not_recurse():
    """A schema nested 10,000 levels deep is rewritten without RecursionError."""
    schema: object = {"properties": {"leaf": True}}
    for _ in range(10_000):
        schema = {"items": schema}
    out = normalize_tool_schema(schema)
    for _ in range(10_000):
        out = out["items"]
    assert out == {"properties": {"leaf": {}}}
