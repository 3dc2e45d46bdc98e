"""Equal subschemas share one fragment (``compiler/shapes.py``), whatever their annotations, and
only where a ``$ref`` in them means the same everywhere; the masks stay the brute-force answer."""

import json

import numpy as np

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


def test_a_schema_that_contains_itself_is_not_numbered():
    """A Python dict may hold itself (no JSON text can): it is lowered by identity, not shared."""
    from compiler.shapes import Shapes

    loop = {"type": "object"}
    loop["properties"] = {"again": loop}
    assert Shapes().of(loop) is None
    assert Shapes().of({"type": "object", "properties": {"x": {}}}) is not None


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
    still get one number, whichever walk met them, and a value containing itself gets none."""
    from compiler.shapes import NESTED_MAX, Shapes

    def nested(depth: int, leaf: dict) -> dict:
        schema = leaf
        for i in range(depth):
            schema = {"type": "object", "properties": {"a": schema}, "title": str(i)}
        return schema

    shapes = Shapes()
    deep = nested(NESTED_MAX * 3, {"type": "string"})
    assert shapes.of(deep) is not None
    inner = deep
    for _ in range(NESTED_MAX * 2):
        inner = inner["properties"]["a"]
    assert shapes.of(nested(NESTED_MAX, {"type": "string"})) == shapes.of(inner)  # titles aside, equal
    assert shapes.of(nested(NESTED_MAX, {"type": "integer"})) != shapes.of(inner)
    fresh = Shapes()  # the shallow one first this time, its number then found at the bottom of the deep one
    shallow = fresh.of(nested(3, {"type": "string"}))
    deep = nested(NESTED_MAX * 3, {"type": "string"})
    assert fresh.of(deep) is not None
    for _ in range(NESTED_MAX * 3 - 3):
        deep = deep["properties"]["a"]
    assert fresh.of(deep) == shallow
    for depth in (2, NESTED_MAX * 2):  # caught by the recursion, and by the walk
        looped: dict = {"type": "object", "properties": {}}
        looped["properties"]["self"] = nested(depth, looped)
        assert Shapes().of(looped) is None
