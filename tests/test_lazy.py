"""Fragments lowered when first reached (``compiler.deferral``, ``Program.enter``): the same
language as lowering everything at compile, no dead ends, errors still at compile, pickles whole."""

import json
import pickle
import warnings
from collections import deque

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import constrain
from automaton.program import STAND_IN
from automaton.dfa import DEAD
from compiler.errors import SchemaTooComplex


def same_language(lazy, eager, budget: int = 3000) -> bytes | None:
    """Explore both automata in step, breadth first: a byte string on which they differ (one
    accepts, or reads on, where the other does not), or None within ``budget`` state pairs."""
    a, b = lazy.automaton, eager.automaton
    seen = {(a.start, b.start): b""}
    order = deque(seen)
    while order and len(seen) < budget:
        pair = order.popleft()
        path = seen[pair]
        s, t = pair
        if a.is_accepting(s) != b.is_accepting(t):
            return path
        for byte, (x, y) in enumerate(zip(a.row(s), b.row(t))):
            if (x == DEAD) != (y == DEAD):
                return path + bytes([byte])
            if x != DEAD and (x, y) not in seen:
                seen[x, y] = path + bytes([byte])
                order.append((x, y))
    return None


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 40},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "email": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "ç"]}, "maxItems": 3},
        "address": {"$ref": "#/$defs/address"},
        "extra": {},
    },
    "required": ["name", "address"],
    "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"},
                                                             "any": True},
                          "required": ["city", "any"]}},
}

TREE = {  # recursive, with a waiting part whose required value is any JSON value (one frame)
    "$defs": {"node": {"type": "object", "properties": {
        "meta": {"type": "object", "properties": {"note": {}}, "required": ["note"]},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["meta"]}},
    "$ref": "#/$defs/node",
}


@pytest.mark.parametrize("schema", [PERSON, TREE])
@pytest.mark.parametrize("max_depth", [2, 3, 16])  # at 1 the tree has no document (a frame for the node, one for "note")
def test_lazy_and_eager_grammars_read_the_same_language(schema, max_depth):
    lazy = constrain.compile(schema, cache=False, max_depth=max_depth)
    eager = constrain.compile(schema, cache=False, max_depth=max_depth, lazy=False)
    assert lazy.program.waiting, "nothing waited: the test would prove nothing"
    assert not eager.program.waiting
    assert same_language(lazy, eager) is None
    assert lazy.find_trap(3000) is None


def test_only_the_parts_a_document_reaches_are_lowered():
    lazy = constrain.compile(PERSON, cache=False)
    eager = constrain.compile(PERSON, cache=False, lazy=False)
    assert lazy.program.size < eager.program.size
    waiting = len(lazy.program.waiting)
    assert lazy.accepts('{"name": "Ann", "address": {"city": "Oslo", "any": [1, {"x": null}]}}')
    assert 0 < len(lazy.program.waiting) < waiting  # the address and its members; not tags or email
    assert not lazy.accepts('{"name": "Ann", "address": {"city": "Oslo"}}')
    assert lazy.accepts('{"name": "A", "tags": ["\\u00e7", "a"], "address": {"city": "", "any": 1}}')


def test_a_pickled_grammar_is_whole():
    lazy = constrain.compile(PERSON, cache=False)
    assert lazy.program.waiting
    back = pickle.loads(pickle.dumps(lazy))
    assert not back.program.waiting and back.program.expander is None
    assert same_language(back, constrain.compile(PERSON, cache=False, lazy=False)) is None


def test_a_grammar_with_parts_waiting_is_freed_without_the_collector():
    """The program holds the lowering that lowers what waits, not the other way round: dropping
    the grammar frees both at once (a cycle would wait for a full collection, tables and all)."""
    import gc
    import weakref

    enabled = gc.isenabled()
    gc.disable()
    try:
        grammar = constrain.compile(PERSON, cache=False)
        assert grammar.program.waiting
        program = weakref.ref(grammar.program)
        del grammar
        assert program() is None
    finally:
        if enabled:
            gc.enable()


def test_what_could_fail_is_lowered_at_compile():
    """A part that could raise or warn does not wait: a schema is refused, or warned of, whole."""
    bad_pattern = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string", "pattern": "(?<=x)y"}}}
    with pytest.raises(constrain.UnsupportedKeyword):
        constrain.compile(bad_pattern, cache=False)
    unknown = {"type": "object", "properties": {"a": {"type": "string", "format": "no-such-format"}}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        constrain.compile(unknown, cache=False)
    assert any("no-such-format" in str(w.message) for w in caught)


def test_what_waits_still_counts_against_the_state_budget():
    """Parts that would not fit the budget are lowered at compile, and refused there."""
    wide = {"type": "object", "properties": {f"p{i}": {"type": "object", "properties": {
        f"q{i}_{j}": {"type": "string"} for j in range(40)}} for i in range(40)}}
    assert constrain.compile(wide, cache=False).program.waiting
    with pytest.raises(SchemaTooComplex):
        constrain.compile(wide, cache=False, max_states=20_000)


def test_a_value_of_unknown_words_alone_is_any_value():
    """``{"x-...": ...}`` constrains nothing: any value, the recursive fragment, which needs a frame
    (MaskBench's o62947 has ``"items": {"$rel": ...}`` under ``minItems: 1``)."""
    schema = {"type": "object", "properties": {"a": {"type": "array", "minItems": 1, "items": {"$rel": "#/x"}}},
              "required": ["a"]}
    for depth in (1, 2):
        lazy = constrain.compile(schema, cache=False, max_depth=depth)
        assert lazy.program.waiting
        lazy.program.expand_all()  # refused, were the waiting part's start said to finish with no frame
        assert same_language(lazy, constrain.compile(schema, cache=False, max_depth=depth, lazy=False)) is None


def test_a_part_that_cannot_finish_does_not_wait():
    """An optional property no value satisfies is lowered at compile (its key then is never offered)."""
    schema = {"type": "object", "properties": {"a": {"type": "string", "minLength": 3, "maxLength": 2},
                                               "b": {"type": "object", "required": ["c"]},
                                               "c": {"allOf": [{"const": 1}, {"const": "a"}]}, "d": {"enum": []},
                                               "e": {"type": "integer", "enum": [1.0]}}}  # 1.0 is no integer
    lazy = constrain.compile(schema, cache=False)
    assert not lazy.program.waiting
    assert same_language(lazy, constrain.compile(schema, cache=False, lazy=False)) is None
    assert lazy.find_trap(3000) is None


LEAVES = st.sampled_from([
    {"type": "string"}, {"type": "string", "maxLength": 3}, {"type": "integer", "minimum": 1, "maximum": 40},
    {"type": "boolean"}, {"enum": ["x", "é", 2, None]}, {"const": "k"}, {}, True, False,
    {"type": "string", "format": "date"}, {"type": "number", "exclusiveMinimum": 0},
    {"type": "string", "pattern": "^a+$"}, {"anyOf": [{"type": "null"}, {"type": "integer"}]},
    {"type": "string", "pattern": "^(ab|c)*$", "minLength": 3, "maxLength": 4},
    {"type": "string", "pattern": "^x[0-9]{2,3}$", "maxLength": 2}, {"pattern": "b", "maxLength": 2},
    {"type": "string", "pattern": "^[a-c]{2,40}$", "minLength": 5}, {"type": "string", "pattern": "^\\S+( \\S+){0,3}$"},
    {"type": "string", "pattern": "^$|^(?:\\w+ ){0,20}\\w+$", "minLength": 1, "maxLength": 9},
    {"type": ["string", "null"], "minLength": 2}, {"type": "integer", "minimum": 3, "maximum": 2},
    {"x-note": "an unknown word: any value"}, {"type": "array", "uniqueItems": False},
    {"type": "string", "enum": ["s", 1]}, {"anyOf": [{"type": "string", "maxLength": 1}, {"const": 0}]},
])


def _compose(children):
    props = st.dictionaries(st.sampled_from(["a", "b", "c", "dé"]), children, max_size=3)
    return st.one_of(
        props.flatmap(lambda p: st.builds(
            lambda req, extra: {"type": "object", "properties": p, "required": req, "additionalProperties": extra},
            st.lists(st.sampled_from(sorted(p) or ["a"]), unique=True, max_size=2), st.sampled_from([True, False]))),
        st.builds(lambda items, lo: {"type": "array", "items": items, "minItems": lo, "maxItems": 3}, children,
                  st.integers(0, 2)),
        st.builds(lambda s: {"$ref": "#/$defs/shared", "$defs": {"shared": s}}, children),
        st.builds(lambda a, b: {"allOf": [a, b]}, children, children),
        # waiting as the lowering meets them: complements, products of branches, columns of matches
        st.builds(lambda a: {"not": a}, children),
        st.builds(lambda a, b: {"oneOf": [a, b]}, children, children),
        st.builds(lambda a, b: {"type": "object", "anyOf": [a, b], "properties": {"a": a}}, children, children),
        st.builds(lambda a, b: {"type": "array", "contains": a, "items": b, "maxItems": 3}, children, children),
        st.builds(lambda a, b: {"type": "array", "allOf": [{"contains": a}, {"contains": b}], "maxItems": 3},
                  children, children),
        st.builds(lambda a, b, keys: {"type": "object", "properties": {"a": a}, "additionalProperties": False,
                                      "patternProperties": {k: b for k in keys}},
                  children, children, st.sampled_from([["^x"], ["^a"], ["^x", "y$"], ["(?<=x)"]])),
        st.builds(lambda a, b, c: {"type": "object", "properties": {"k": {"enum": [1, 2]}},
                                   "oneOf": [{"properties": {"k": {"const": 1}, "v": a}, "required": ["k"]},
                                             {"properties": {"k": {"const": 2}, "v": b}, "required": ["k"]}, c]},
                  children, children, children),
        st.builds(lambda a, b: {"type": "object", "allOf": [{"$ref": "#/$defs/part"}], "properties": {"z": a},
                                "$defs": {"part": {"properties": {"y": b}, "required": ["y"]}}}, children, children),
    )


SCHEMAS = st.recursive(LEAVES, _compose, max_leaves=8)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, st.sampled_from([1, 3]))
def test_generated_schemas_read_the_same_language_lazily(schema, max_depth):
    try:
        eager = constrain.compile(schema, cache=False, lazy=False, max_depth=max_depth)
    except constrain.SchemaError as exc:
        with pytest.raises(type(exc)):
            constrain.compile(schema, cache=False, max_depth=max_depth)
        return
    lazy = constrain.compile(schema, cache=False, max_depth=max_depth)
    assert same_language(lazy, eager, 1500) is None
    assert lazy.find_trap(1500) is None


RULES = {  # a linter's configuration: each rule an ``allOf`` of the shared rule and its own options
    "type": "object",
    "properties": {f"Rule{i}": {"allOf": [{"$ref": "#/$defs/rule"},
                                          {"properties": {"limit": {"type": "integer", "maximum": i}}}]}
                   for i in range(4)},
    "$defs": {"rule": {"type": "object", "properties": {"active": {"type": "boolean"}}, "required": ["active"]}},
}


def test_an_all_of_waits_met_once():
    """A property whose ``allOf`` meets into a quiet schema waits as that met schema, and reads
    as it would lowered at compile; a meeting that fails still fails at compile."""
    lazy = constrain.compile(RULES, cache=False)
    assert len(lazy.program.waiting) == 4  # the rules themselves, not their members
    assert same_language(lazy, constrain.compile(RULES, cache=False, lazy=False)) is None
    assert lazy.accepts('{"Rule2": {"active": true, "limit": 2}}')
    assert not lazy.accepts('{"Rule2": {"active": true, "limit": 3}}')
    assert not lazy.accepts('{"Rule1": {"limit": 1}}')
    clash = {"type": "object", "required": ["a"],
             "properties": {"a": {"allOf": [{"$ref": "#/$defs/rule"}, {"type": "string"}]}}, "$defs": RULES["$defs"]}
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile(clash, cache=False)


def test_a_pattern_waits_once_it_is_known_to_compile():
    """A string with a pattern waits once the pattern's determinisation (all that can refuse it)
    has run; what it cannot be lowered to still fails at compile, whole."""
    words = {"type": "object", "properties": {
        "summary": {"type": "string", "pattern": "^(?:\\S+\\s+){0,49}\\S+$", "maxLength": 300},
        "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]+$", "minLength": 5}}, "required": ["code"]}
    lazy = constrain.compile(words, cache=False)
    assert len(lazy.program.waiting) == 2
    assert same_language(lazy, constrain.compile(words, cache=False, lazy=False)) is None
    assert lazy.accepts('{"summary": "two words", "code": "ABC-1"}')
    assert not lazy.accepts('{"summary": "two  ", "code": "ABC-1"}')
    blowup = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(a|b)*a(a|b){20}$"}}}
    with pytest.raises(SchemaTooComplex):
        constrain.compile(blowup, cache=False)
    for never in ({"pattern": "^[a-z]+$", "maxLength": 0}, {"pattern": "^abc$", "minLength": 4},
                  {"pattern": "^\\ud800$"}):
        schema = {"type": "object", "properties": {"a": {"type": "string", **never}}, "required": ["a"]}
        with pytest.raises(constrain.Unsatisfiable):
            constrain.compile(schema, cache=False)
        optional = {"type": "object", "properties": {"a": {"type": "string", **never}}}
        assert not constrain.compile(optional, cache=False).program.waiting


REPOSITORIES = {  # a oneOf whose branches overlap (``_attributes`` is optional): each branch and not the others
    "type": "object", "required": ["items"],
    "oneOf": [{"properties": {
        "_attributes": {"type": "object", "required": ["kind"], "properties": {"kind": {"enum": [kind]}}},
        "items": {"type": "array", "items": {"type": "object", "required": names,
                                             "properties": {n: {"type": "string", "minLength": 1} for n in names}}}}}
        for kind, names in (("zypp", ["alias", "url"]), ("apt", ["url", "suite"]), ("yum", ["alias", "mirror"]))],
}


def test_a_product_of_complements_waits_met_once():
    """The cases of a complement, the branches an ``anyOf`` meets its siblings into and the items
    a ``contains`` counts are judged as the lowering meets them, so an overlapping ``oneOf``'s
    products wait instead of being lowered whole at compile, and read as they would then."""
    lazy = constrain.compile(REPOSITORIES, cache=False, property_order="any", whitespace="compact")
    eager = constrain.compile(REPOSITORIES, cache=False, property_order="any", whitespace="compact", lazy=False)
    assert lazy.program.size < eager.program.size // 3  # (3,000 states lowered at compile before)
    assert same_language(lazy, eager, 5000) is None
    validator = jsonschema.Draft202012Validator(REPOSITORIES)
    for value in ({"items": []}, {"items": [{"url": "u", "suite": "s"}]}, {"items": [{"alias": "a", "url": "u"}]},
                  {"_attributes": {"kind": "apt"}, "items": [{"url": "u", "suite": "s"}]},
                  {"_attributes": {"kind": "apt"}, "items": [{"alias": "a", "url": "u"}]},
                  {"items": [{"alias": "a", "url": "u", "mirror": "m"}]}, {"items": [{"url": "u"}]}):
        text = json.dumps(value, separators=(",", ":"))
        assert lazy.accepts(text) == validator.is_valid(value), text
    assert lazy.find_trap(3000) is None


SERVICES = {  # a cluster's configuration: services of several kinds, labels by pattern
    "type": "object",
    "properties": {f"service{i}": {"$ref": "#/$defs/service"} for i in range(6)},
    "$defs": {
        "service": {"type": "object", "required": ["kind"],
                    "properties": {"kind": {"enum": ["web", "db"]}, "labels": {"$ref": "#/$defs/labels"}},
                    "oneOf": [{"properties": {"kind": {"const": "web"}, "port": {"type": "integer"}}},
                              {"properties": {"kind": {"const": "db"}, "engine": {"enum": ["pg", "my"]}}}]},
        "labels": {"type": "object", "patternProperties": {"^[a-z]+$": {"type": "string"}},
                   "additionalProperties": False},
    },
}


def test_a_one_of_and_pattern_properties_wait():
    """A ``oneOf`` is judged as the lowering meets it (its branches, proven disjoint or each without
    the others), and an object whose one key pattern compiles and names no property waits: the
    services are not lowered at compile, and read as they would have been."""
    lazy = constrain.compile(SERVICES, cache=False, property_order="any", whitespace="compact")
    eager = constrain.compile(SERVICES, cache=False, property_order="any", whitespace="compact", lazy=False)
    # the service waits whole, one fragment for the six (its parts waited one by one before: 600 states of 620)
    # (the six services in any order are sets of names waiting beside it: ``any_order.py``)
    assert [w for w in lazy.program.waiting.values() if w != STAND_IN] == [True]
    assert lazy.program.size < eager.program.size * 3 // 4
    assert same_language(lazy, eager, 5000) is None
    validator = jsonschema.Draft202012Validator(SERVICES)
    for value in ({"service1": {"kind": "web", "port": 1, "labels": {"app": "x"}}}, {"service2": {"kind": "db"}},
                  {"service0": {"kind": "db", "engine": "pg", "port": 1}}, {"service3": {"labels": {"App": "x"}}},
                  {"service4": {"kind": "web", "labels": {"app": 1}}}, {"service5": {"kind": "web", "engine": "x"}}):
        text = json.dumps(value, separators=(",", ":"))
        assert lazy.accepts(text) == validator.is_valid(value), text
    assert lazy.find_trap(3000) is None
    # a pattern that cannot compile; two whose schemas clash on a key both match (each a contains
    # counted, which do not meet); one whose schema clashes with a named property's: refused at
    # compile, lazy or not
    counted = [{"type": "array", "contains": {"const": n}, "minContains": 2} for n in (1, 2)]
    for labels in ({"patternProperties": {"(?<=a)": {"type": "string"}}},
                   {"patternProperties": {"^a": counted[0], "b$": counted[1]}},
                   {"properties": {"ab": counted[0]}, "patternProperties": {"^a": counted[1]}}):
        schema = {"type": "object",
                  "properties": {"service": {"type": "object", "properties": {"labels": {"type": "object", **labels}}}}}
        with pytest.raises(constrain.SchemaError) as eager:
            constrain.compile(schema, cache=False, lazy=False)
        with pytest.raises(eager.type):
            constrain.compile(schema, cache=False)


@pytest.mark.parametrize("value", [
    {"type": "integer", "not": {"type": "integer"}},  # an integer that is a fraction
    {"enum": [1, "x"], "not": {"enum": [1, "x"]}},  # every value excluded
    {"type": "array", "contains": {"type": "integer", "not": {"type": "integer"}}},  # no item can match
])
def test_a_met_schema_no_value_meets_is_lowered_at_compile(value):
    """What a complement leaves empty (a fraction among integers, an enum with each value excluded,
    a contains no item meets) is judged uninhabited: it never waits with its start taken as live."""
    schema = {"type": "object", "properties": {"a": value, "b": {"type": "string"}}}
    lazy = constrain.compile(schema, cache=False, whitespace="compact")
    assert same_language(lazy, constrain.compile(schema, cache=False, whitespace="compact", lazy=False)) is None
    assert not lazy.accepts_prefix('{"a":')
    assert lazy.find_trap(3000) is None


@pytest.mark.parametrize("value", [{"enum": [None], "const": {}}, {"not": {"not": {"const": {}, "enum": [None]}}},
                                   {"enum": ["a", "b"], "const": "c"}])
def test_a_required_value_whose_enum_and_const_allow_nothing_is_unsatisfiable(value):
    """A required member whose ``enum`` and ``const`` allow no value together: ``Unsatisfiable`` at
    compile. The deferral judged such a value by its ``enum`` alone and let it wait, so the schema
    compiled and generation stopped on an internal error where it reached the member (found by a
    generated test)."""
    schema = {"type": "object", "properties": {"a": value}, "required": ["a"]}
    for lazy in (True, False):
        with pytest.raises(constrain.Unsatisfiable):
            constrain.compile(schema, whitespace="compact", cache=False, lazy=lazy)
    allowed = {"type": "object", "properties": {"a": {"enum": [None, {}], "const": {}}}, "required": ["a"]}
    grammar = constrain.compile(allowed, whitespace="compact", cache=False)
    assert grammar.accepts('{"a":{}}') and not grammar.accepts('{"a":null}')
