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


LONG_STRINGS = [
    {"type": "object", "properties": {"s": {"type": "string", "maxLength": 300}, "n": {"type": "integer"}},
     "required": ["s", "n"]},
    {"$defs": {"node": {"anyOf": [{"type": "null"}, {
        "type": "object", "properties": {"name": {"type": "string", "minLength": 2, "maxLength": 64},
                                         "next": {"$ref": "#/$defs/node"}}, "required": ["name", "next"]}]}},
     "$ref": "#/$defs/node"},
    {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+@[a-z]+\\.(com|org)$", "maxLength": 40}},
    {"enum": ["Lençóis Maranhenses", "Chapada Diamantina", "Fernando de Noronha", 3]},
    {"type": "array", "items": {"type": "string", "minLength": 70}},
    {"type": "string", "pattern": "^(ab)*$", "maxLength": 90},
    {"type": "string", "format": "hostname", "maxLength": 40},
    {"type": "string", "pattern": "^[a-c]+(-[a-c]+)*$", "minLength": 5, "maxLength": 80},
    # states that can go on only through a lone surrogate, which JSON text cannot hold: not a block
    {"enum": ["a" * 40 + "\ud800", "b"]},
]


def written_out(program):
    """The same program with every state written (counted blocks' too) and no block declared, so
    its liveness is the state-by-state analysis."""
    from automaton.program import Program

    out = Program(max_states=program.size + 1, max_depth=program.max_depth)
    owners = list(program.owner) + [b.owner for b in program.counted for _ in range(b.size)]
    for s, owner in enumerate(owners):
        out.new_state(owner)
        out.edges[s] += program.edges[s]
        out.eps[s] += program.eps[s]
        out.calls[s] += program.calls[s]
    out.fragments = [type(f)(f.start, f.final, f.counted) for f in program.fragments]
    out.finish(program.root)
    return out


@pytest.mark.parametrize("schema", LONG_STRINGS)
def test_liveness_blocks_agree_with_the_full_analysis(schema):
    """A scalar automaton whose every state can finish is settled as one block by its exit state, and
    a counted block by arithmetic; the liveness that gives equals the state-by-state analysis of the
    program written out, at every depth, with no dead end."""
    blocked = constrain.compile(schema, cache=False, max_depth=3, lazy=False)  # the program whole
    program = blocked.program
    own_blocks = [b for b in program.blocks if b[0] >= program.included]  # beyond the prelude's tries
    assert bool(own_blocks or program.counted) != ("\\ud800" in repr(schema))
    assert blocked.find_trap(3000) is None
    plain = written_out(program)
    for depth in range(4):
        assert program.live(depth) == plain.live(depth)


def test_a_long_string_keeps_its_exact_bound():
    grammar = constrain.compile(LONG_STRINGS[0], whitespace="compact")
    assert grammar.accepts('{"s":"%s","n":1}' % ("é" * 300))
    assert not grammar.accepts('{"s":"%s","n":1}' % ("é" * 301))
    assert not grammar.accepts('{"s":"%s"}' % ("é" * 300))
