"""Equal subschemas share one fragment, and states that differ only below a frame no token can
leave without a bracket share their masks: both must leave every mask equal to the brute force."""

import json

import numpy as np
import pytest

import constrain
from automaton.dfa import DEAD
from automaton.index import TokenIndex, token_index
from test_masks import brute_force

RULE = {"type": "object", "allOf": [{"$ref": "#/$defs/base"}], "properties": {"auto": {"type": "boolean"}}}
RULES = {
    "$defs": {"base": {"type": "object", "properties": {
        "active": {"type": "boolean"}, "excludes": {"type": "array", "items": {"type": "string"}}}}},
    "type": "object",
    "properties": {"one": {**RULE, "description": "the first"}, "two": {**RULE, "title": "the second"},
                   "three": RULE, "list": {"type": "array", "items": RULE}, "last": {"type": "integer"}},
    "additionalProperties": False,
}
DOCUMENTS = [
    {"one": {"active": True, "excludes": ["a}b", "x\"]"]}, "two": {"auto": False, "zz": {"k": [1, "}"]}},
     "three": {}, "list": [{"active": False}, {"excludes": []}, {}], "last": 3},
    {"three": {"excludes": ["]"], "auto": True}, "list": [], "one": {"q": "\"}"}},
]


def _fragments(schema) -> int:
    return len(constrain.compile(schema, cache=False).automaton.program.fragments)


def test_equal_subschemas_share_a_fragment_whatever_their_annotations():
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


NOTES = {"type": "object", "properties": {
    "title": {"type": "string", "maxLength": 300}, "tags": {"type": "array", "items": {"type": "string", "maxLength": 300}},
    "short": {"type": "string", "minLength": 280, "maxLength": 290}}}
NOTES_DOCUMENTS = [
    {"title": "a long title " * 5, "tags": ["x" * 50, "y}]\"" * 20, "é" * 60, "w" * 299]},
    {"short": "z" * 10 + "ü" * 275, "tags": ["w" * 299]},
]


def test_counted_positions_far_from_both_bounds_read_alike():
    """maxLength 300 (one fragment for both uses): positions 0..44 have room for any token of up to
    256 bytes; minLength 280: from positions 0..23 no such token reaches it. Each group stands for its first."""
    from automaton.views import Barriers

    program = constrain.compile(NOTES, cache=False).automaton.program
    (first, _, lo, hi), (first2, _, lo2, hi2) = sorted(program.counters, key=lambda c: c[2])
    assert (lo, hi, lo2, hi2) == (0, 300, 280, 290)
    alike = Barriers(program, 256).alike
    assert [alike(first + n) for n in (0, 44, 45)] == [first, first, first + 45]
    assert [alike(first2 + n) for n in (0, 23, 24, 285)] == [first2, first2, first2 + 24, first2 + 285]


@pytest.mark.parametrize("schema,document", [(RULES, d) for d in DOCUMENTS] + [(NOTES, d) for d in NOTES_DOCUMENTS])
def test_masks_shared_through_views_equal_brute_force(vocabulary_by_name, monkeypatch, schema, document):
    """Every state along a document whose objects repeat one schema in several places, or whose
    strings count their length: the masks that came from another state's view are the brute-force
    answer too."""
    vocab = vocabulary_by_name("gpt-2")
    monkeypatch.setattr("automaton.index.VIEW_WORTH", 0.0)  # every mask's view is remembered
    grammar = constrain.compile(schema, property_order="any", cache=False)
    index = token_index(grammar, vocab)
    shared = []
    through_view = TokenIndex._through_view

    def counted(self, state, shown):
        m = through_view(self, state, shown)
        if m is not None:
            shared.append(state)
        return m

    monkeypatch.setattr(TokenIndex, "_through_view", counted)
    dfa = grammar.automaton
    state = dfa.start
    for k, byte in enumerate(json.dumps(document).encode()):
        before = len(shared)
        mask = index.mask(state)
        if len(shared) > before or k % 5 == 0:  # each shared mask, and some others
            assert np.array_equal(mask, brute_force(grammar, vocab, state)), (k, bytes([byte]))
        state = dfa.step(state, byte)
        assert state != DEAD
    assert len(shared) >= 5  # later rule objects' states came from earlier ones' views
