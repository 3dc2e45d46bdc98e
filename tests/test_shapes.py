"""Equal subschemas share one fragment (``compiler/shapes.py``, on their nodes), whatever their annotations, and
only where a ``$ref`` in them means the same everywhere; the masks stay the brute-force answer."""

import json

import numpy as np
import pytest

import constrain
from automaton.dfa import DEAD
from automaton.index import token_index
from test_masks import brute_force

RULE = {"type": "object", "allOf": [{"$ref": "#/$defs/base"}], "properties": {"auto": {"type": "boolean"}}}
RULES = {
    "$id": "https://example.com/rules.json",  # a root base URI alone changes no $ref
    "$defs": {"base": {"type": "object", "properties": {
        "active": {"type": "boolean"}, "excludes": {"type": "array", "items": {"type": "string"}}}}},
    "type": "object",
    "properties": {"one": {**RULE, "description": "the first"}, "two": {**RULE, "title": "the second"},
                   "three": RULE, "list": {"type": "array", "items": RULE}, "last": {"type": "integer"}},
    "additionalProperties": False,
}


def _fragments(schema) -> int:
    return len(constrain.compile(schema, cache=False).automaton.program.fragments)


def test_equal_subschemas_share_a_fragment_whatever_their_annotations():
    """The four uses of RULE (two annotated) are one fragment: making one of them differ adds fragments."""
    same = _fragments(RULES)
    other = json.loads(json.dumps(RULES))
    other["properties"]["two"]["properties"] = {"auto": {"type": "integer"}}
    assert _fragments(other) > same


def test_subschemas_under_another_base_uri_are_kept_apart():
    """``{"$ref": "#/$defs/x"}`` under a nested ``$id`` names another schema: no sharing there."""
    schema = {
        "$id": "https://example.com/root.json",
        "$defs": {"x": {"type": "integer"}},
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/x"},
            "b": {"$id": "https://example.com/other.json", "$defs": {"x": {"type": "string"}},
                  "type": "object", "properties": {"c": {"$ref": "#/$defs/x"}}, "required": ["c"]},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    g = constrain.compile(schema, whitespace="compact", cache=False)
    assert g.automaton.walk(b'{"a":1,"b":{"c":"s"}}') != DEAD
    assert g.automaton.walk(b'{"a":1,"b":{"c":1}}') == DEAD
    assert g.automaton.walk(b'{"a":"s"') == DEAD


def test_a_schema_that_holds_itself_is_refused_naming_where():
    """A Python dict may hold itself (no JSON text can): every walk of it would go round for ever,
    so loading refuses it, naming where it comes back, for ``compile`` and ``validate`` alike."""
    loop = {"type": "object"}
    loop["properties"] = {"again": {"type": "array", "items": loop}}
    for check in (lambda: constrain.compile(loop, cache=False), lambda: constrain.validate({}, loop)):
        with pytest.raises(constrain.InvalidSchema, match="holds itself.*/properties/again/items"):
            check()
    shared = {"type": "string"}  # one object in two places holds nothing of itself
    constrain.compile({"type": "object", "properties": {"a": shared, "b": {"items": shared}}}, cache=False)


def _node(schema):
    from compiler.build import build
    from compiler.refs import SchemaDocument

    return build(SchemaDocument(schema))


def test_contents_count_what_nodes_say():
    """Annotations, ``$defs`` and spellings of one meaning (``"string"`` or ``["string"]``) aside,
    equal contents are one number; a ``properties`` order, a ``$ref``'s text and ``false`` against
    ``true`` are not the same content."""
    from compiler.shapes import Shapes

    shapes = Shapes()
    base = shapes.of(_node({"type": "object", "properties": {"a": {"type": "string"}, "b": True}}))
    assert base == shapes.of(_node({"type": ["object"], "title": "t", "$defs": {"x": {}},
                                     "properties": {"a": {"type": ["string"], "description": "d"}, "b": {}}}))
    assert base != shapes.of(_node({"type": "object", "properties": {"b": True, "a": {"type": "string"}}}))
    assert base != shapes.of(_node({"type": "object", "properties": {"a": {"type": "string"}, "b": False}}))
    refs = [shapes.of(_node({"$defs": {"x": {}, "y": {}}, "items": {"$ref": f"#/$defs/{name}"}})) for name in "xy"]
    assert refs[0] != refs[1]
    assert shapes.of(_node({"unevaluatedItems": {"type": "string"}})) != shapes.of(_node({"unevaluatedItems": {"type": "integer"}}))
    said = [{}, {"const": False}, {"const": None}, {"const": 0}, {"enum": []}, {"minItems": 0}]
    assert len({shapes.of(_node(schema)) for schema in said}) == len(said)  # each says something else


def test_masks_of_shared_fragments_equal_brute_force(vocabulary_by_name):
    """Every state along a document whose objects repeat one schema in several places."""
    vocab = vocabulary_by_name("gpt-2")
    grammar = constrain.compile(RULES, property_order="any", cache=False)
    index = token_index(grammar, vocab)
    document = {"one": {"active": True, "excludes": ["a}b", "x\"]"]}, "two": {"auto": False, "zz": {"k": [1, "}"]}},
                "three": {}, "list": [{"active": False}, {"excludes": []}, {}], "last": 3}
    dfa = grammar.automaton
    state = dfa.start
    for k, byte in enumerate(json.dumps(document).encode()):
        if k % 3 == 0:
            assert np.array_equal(index.mask(state), brute_force(grammar, vocab, state)), k
        state = dfa.step(state, byte)
        assert state != DEAD
    assert dfa.is_accepting(state)


def test_deep_and_shallow_walks_number_alike():
    """Past ``NESTED_MAX`` levels the explicit walk numbers what recursion does not: equal contents
    still get one number, whichever walk met them."""
    from compiler.shapes import NESTED_MAX, Shapes

    def nested(depth: int, leaf: dict) -> dict:
        schema = leaf
        for i in range(depth):
            schema = {"type": "object", "properties": {"a": schema}, "title": str(i)}
        return schema

    shapes = Shapes()
    deep = _node(nested(NESTED_MAX * 3, {"type": "string"}))
    assert shapes.of(deep) is not None
    inner = deep
    for _ in range(NESTED_MAX * 2):
        inner = inner.object.properties["a"]
    assert shapes.of(_node(nested(NESTED_MAX, {"type": "string"}))) == shapes.of(inner)  # titles aside, equal
    assert shapes.of(_node(nested(NESTED_MAX, {"type": "integer"}))) != shapes.of(inner)
    fresh = Shapes()  # the shallow one first this time, its number then found at the bottom of the deep one
    shallow = fresh.of(_node(nested(3, {"type": "string"})))
    deep = _node(nested(NESTED_MAX * 3, {"type": "string"}))
    assert fresh.of(deep) is not None
    for _ in range(NESTED_MAX * 3 - 3):
        deep = deep.object.properties["a"]
    assert fresh.of(deep) == shallow
