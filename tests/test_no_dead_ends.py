"""No reachable state is a dead end: find_trap explores each hand-written schema's automaton."""

import pytest

import constrain
from test_fuzz import HAND_WRITTEN
from test_masks import SCHEMAS as MASK_SCHEMAS
from test_tool_calls import ADD, WEATHER

OTHERS = [
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a", "b"], "minProperties": 3,
     "maxProperties": 4},
    {"type": "array", "prefixItems": [{"type": "string"}, {"const": 1}], "items": False, "minItems": 1},
    {"type": "object", "patternProperties": {"^x-": {"type": "string"}, "y$": {"type": "integer"}},
     "additionalProperties": False, "minProperties": 1},
    {"$defs": {"t": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#/$defs/t"}, "minItems": 1}]}},
     "$ref": "#/$defs/t"},
    {"type": "string", "pattern": "^(ab|cd)+$", "minLength": 3, "maxLength": 9},
    {"oneOf": [{"type": "string", "format": "email"}, {"type": "integer", "multipleOf": 7}]},
    {"allOf": [{"properties": {"id": {"type": "integer"}}, "required": ["id"]}, {"properties": {"n": {}}}]},
    {"type": "string", "not": {"enum": ["a", "b"]}, "maxLength": 1},
]


@pytest.mark.parametrize("schema", HAND_WRITTEN + MASK_SCHEMAS + OTHERS + [WEATHER["function"]["parameters"],
                                                                          ADD["parameters"]])
@pytest.mark.parametrize("whitespace", ["compact", "bounded", "flexible"])
def test_no_reachable_dead_end(schema, whitespace):
    """find_trap explores up to 3,000 states and finds none that cannot reach acceptance."""
    assert constrain.compile(schema, whitespace=whitespace).find_trap(3000) is None


def test_find_trap_finds_a_planted_dead_end(monkeypatch):
    """With liveness pruning switched off, an optional property that can never hold a value is a
    dead end after its key; find_trap reports it with the bytes that lead there."""
    from automaton.program import Program

    schema = {"type": "object", "properties": {"a": {"allOf": [{"type": "string"}, {"type": "integer"}]}}}
    assert constrain.compile(schema, cache=False).find_trap(3000) is None
    monkeypatch.setattr(Program, "live", lambda self, depth: bytearray(b"\x01") * len(self.edges))
    trap = constrain.compile(schema, cache=False).find_trap(3000)
    assert trap is not None and trap[1].startswith(b'{"a"')
