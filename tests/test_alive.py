"""``oneOf`` over objects decided member by member (``compiler/alive.py``), and ``oneOf`` branches
proven apart by their patterns (``compiler/one_of.py``): each agrees with python-jsonschema and
leaves no dead end, in either property order."""

import itertools
import json

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import constrain
import compiler.alive
import compiler.lower
from compiler.alive import AliveObjects
from compiler.merge import exactly_one

COUNTRIES = {"BRA": ["AC", "AL", "SP"], "ITA": ["AL", "MI", "SP"], "USA": ["AL", "CA", "NY"], "CAN": ["ON", "QC"],
             "MEX": ["CH", "MI", "QR"], "IND": ["KA", "MH"], "CHN": ["11", "12"], "FRA": ["75", "13"],
             "ESP": ["M", "B"], "DEU": ["BY", "BE"], "JPN": ["13", "27"], "AUS": ["NSW", "QLD"]}
ADDRESS = {"type": "object", "properties": {"street": {"type": "string"}},
           "oneOf": [{"properties": {"country": {"enum": [c]}, "state": {"type": "string", "enum": states},
                                     "postalCode": {"type": "string", "maxLength": 5}}}
                     for c, states in COUNTRIES.items()]}


def addresses():
    """Objects with every mix of a country (or none, or one no branch names), a state shared by
    several countries (or none), and the members outside the oneOf."""
    for country, state, post, street in itertools.product([None, "BRA", "ITA", "CAN", "XXX"],
                                                          [None, "AL", "SP", "ON", "QC", "ZZ", 1],
                                                          [None, "12345", "123456"], [None, "Main", 5]):
        value = {k: v for k, v in (("country", country), ("state", state), ("postalCode", post), ("street", street))
                 if v is not None}
        yield value
    yield {"country": "BRA", "other": 1}
    yield "BRA"


@pytest.mark.parametrize("order", ["schema", "any"])
def test_a_oneof_by_an_optional_member_is_exact(order):
    """Twelve branches told apart by a member every one of them may omit (an address by country):
    each branch without the others multiplies past any bound, but the set of branches still
    alive after each member is small. An object without a country is valid only where its state belongs to one
    country alone; a state shared by three countries, or none at all, matches several branches."""
    grammar = constrain.compile(ADDRESS, property_order=order, whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(ADDRESS)
    for value in addresses():
        shape = json.dumps(value, separators=(",", ":"))
        if order == "schema" and isinstance(value, dict):  # the canonical order: as the schema writes its keywords
            shape = json.dumps({k: value[k] for k in ["street", "country", "state", "postalCode", "other"] if k in value},
                               separators=(",", ":"))
        assert grammar.accepts(shape) == oracle.is_valid(value), shape
    assert grammar.accepts('{"state":"QC"}') and not grammar.accepts('{"state":"AL"}') and not grammar.accepts("{}")
    assert grammar.find_trap(2000) is None


def test_a_discriminator_beside_a_catch_all_branch():
    """Branches pinned to literals and one that takes any other string (Travis CI's deploy
    providers): each literal keeps its branch, every other string the catch-all."""
    providers = ["script", "npm", "surge", "releases", "heroku", "s3", "pages", "gcs", "ftp"]
    schema = {"type": "object", "oneOf": [
        *({"properties": {"provider": {"enum": [p]}, "key": {"type": "string"}}, "required": ["provider"]}
          for p in providers),
        {"properties": {"provider": {"type": "string", "not": {"enum": providers}}, "key": {"type": "integer"}},
         "required": ["provider"]}]}
    values = [{"provider": p, "key": k} for p in providers[:3] + ["other", 1] for k in ("s", 1)] + [
        {"provider": "npm"}, {"key": "s"}, {"provider": "other"}]
    grammar = constrain.compile(schema, property_order="any", whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema)
    for value in values:
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == oracle.is_valid(value), value
    assert grammar.find_trap(2000) is None


def test_one_name_of_many_each_required_by_its_own_branch():
    """An assertion object with exactly one of 26 operators (helm-unittest's): every branch allows
    every name and requires its own, so two written keep two branches alive whatever follows;
    such places are never written, and the object takes one operator and the shared members."""
    ops = [f"op{i}" for i in range(26)]
    schema = {"type": "object", "properties": {**dict.fromkeys(ops, True), "template": {"type": "string"}},
              "additionalProperties": False,
              "oneOf": [{"properties": {op: {"type": "object"}}, "required": [op]} for op in ops]}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema)
    for value in [{"op3": {}}, {"op3": {}, "template": "t"}, {"op3": 1}, {"op3": {}, "op7": {}}, {}, {"template": "t"},
                  {"op25": {}, "x": 1}]:
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == oracle.is_valid(value), value
    assert grammar.find_trap(2000) is None


@pytest.mark.parametrize("schema,valid,invalid", [
    ({"oneOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "^b"}]}, ['"ab"', '"ba"'], ['"c"', "1"]),
    ({"type": "object", "oneOf": [{"properties": {"type": {"type": "string", "pattern": f"^basic:{t}:$"}, "value": v},
                                   "required": ["type", "value"], "additionalProperties": False}
                                  for t, v in [("string", {"type": "string"}), ("integer", {"type": "integer"}),
                                               ("flag", {"type": "boolean"})]]},
     ['{"type":"basic:string:","value":"x"}', '{"type":"basic:flag:","value":true}'],
     ['{"type":"basic:flag:","value":"x"}', '{"type":"basic:other:","value":1}']),
    ({"type": "object", "oneOf": [{"properties": {"k": {"const": "ab"}}, "required": ["k"]},
                                  {"properties": {"k": {"type": "string", "pattern": "^b"}}, "required": ["k"]}]},
     ['{"k":"ab"}', '{"k":"bb"}'], ['{"k":"cb"}', "{}"]),
])
def test_patterns_prove_branches_apart(schema, valid, invalid, monkeypatch):
    """Branches whose strings (or a required member's) match disjoint patterns in every regex
    reading exclude each other: ``oneOf`` is their union, with no complement written."""
    monkeypatch.setattr(compiler.lower, "exactly_one", _never_called)
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    assert all(grammar.accepts(t) for t in valid) and not any(grammar.accepts(t) for t in invalid)


def _never_called(*args):
    raise AssertionError("the branches were not proven apart")


def test_patterns_are_proven_apart_in_every_reading():
    """``^a$`` and ``^a\\n$`` are apart as ECMA-262 reads them, but Python's ``$`` also matches
    before a final line feed: "a\\n" matches both there, so no portable grammar may take it."""
    schema = {"oneOf": [{"type": "string", "pattern": "^a$"}, {"type": "string", "pattern": "^a\\n$"}]}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    assert grammar.accepts('"a"') and not grammar.accepts('"a\\n"')
    assert constrain.compile(schema, whitespace="compact", cache=False, dialect="spec").accepts('"a\\n"')


def test_overlapping_patterns_are_not_proven_apart():
    """``^a`` and ``b$`` share "ab": exactly one holds of "aa" and "bb", neither of "ab"."""
    schema = {"oneOf": [{"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "b$"}]}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    assert [grammar.accepts(t) for t in ['"aa"', '"bb"', '"ab"', '"c"']] == [True, True, False, False]


NAMES = ["a", "b", "c"]
VALUES = [1, 2, "a", "b", None, {"a": 1}]
OBJECTS = [dict(zip(keys, values)) for n in range(4) for keys in itertools.combinations(NAMES, n)
           for values in itertools.product(VALUES, repeat=n)] + [{"d": 1}, {"a": 1, "d": "x"}, None, 1, "a", "ab", [1]]
member_schema = st.sampled_from([True, False, {"type": "integer"}, {"type": "string"}, {"const": 1}, {"enum": [1, "a"]},
                                 {"enum": ["a", "b"]}, {"minimum": 2}, {"type": "string", "pattern": "^a"},
                                 {"not": {"const": 2}}, {"type": "object"}])
branch = st.builds(
    lambda kinds, props, required, extra: {**kinds, "properties": props, "required": required,
                                           **({"additionalProperties": extra} if extra is not None else {})},
    st.sampled_from([{"type": "object"}, {"type": "object"}, {}, {"type": ["string", "object"], "maxLength": 1},
                     {"type": ["object", "null"]}, {"type": "object", "maxProperties": 1},
                     {"type": "object", "minProperties": 2}]),
    st.dictionaries(st.sampled_from(NAMES), member_schema, max_size=3),
    st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
    st.sampled_from([None, False, {"type": "integer"}]))
nested = st.builds(lambda a, b: {"anyOf": [a, b]}, branch, branch)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(branch | nested, min_size=2, max_size=4), st.sampled_from(["schema", "any"]))
def test_member_by_member_agrees_with_jsonschema(branches, order):
    """Every ``oneOf`` of object branches that are not proven apart is decided member by member
    (what branches allow of other types beside; the complement refused, so none falls back to it
    unseen); it agrees with
    python-jsonschema on every value of a small universe (an object in any key order, or in the
    schema's) and leaves no dead end."""
    schema = {"oneOf": branches}
    event(_decided_agrees(schema, order, [(compiler.lower, "exactly_one", _too_complex)]))


def _decided_agrees(schema, order: str, patches: list) -> str:
    """Compile ``schema`` with ``patches`` (module or class, name, value) in place and compare it
    with python-jsonschema on ``OBJECTS`` (an object in any key order); no dead end. Says how it
    went: decided member by member, as before, unsatisfiable or refused."""
    used = []
    try:
        with pytest.MonkeyPatch.context() as patch:
            for where, name, value in patches:
                patch.setattr(where, name, value)
            patch.setattr(AliveObjects, "lower_choice", _counting(AliveObjects.lower_choice, used))
            grammar = constrain.compile(schema, property_order=order, whitespace="compact", cache=False, lazy=False)
    except constrain.Unsatisfiable:
        assert not any(jsonschema.Draft202012Validator(schema).is_valid(v) for v in OBJECTS)
        return "unsatisfiable"
    except (constrain.SchemaTooComplex, constrain.UnsupportedKeyword):
        return "refused"
    oracle = jsonschema.Draft202012Validator(schema)
    for value in OBJECTS:
        texts = [json.dumps(dict(p), separators=(",", ":")) for p in itertools.permutations(value.items())] if isinstance(
            value, dict) else [json.dumps(value)]
        assert any(grammar.accepts(t) for t in texts) == oracle.is_valid(value), (schema, value)
    assert grammar.find_trap(1000) is None, schema
    return "member by member" if used else "as before"


def _too_complex(branches, *args):
    """``exactly_one`` refused for object branches (what they allow of other types, as before)."""
    if any(b.object is not None and b.object.properties for b in branches):  # (nodes)
        raise constrain.SchemaTooComplex("", "the complement refused, for the test")
    return exactly_one(branches, *args)


def _counting(method, used):
    def counted(self, *args):
        used.append(1)
        return method(self, *args)
    return counted


def test_member_by_member_is_bounded():
    """Branches whose members split into more regions than the bounds allow are left to the
    complement, which refuses them clearly, in bounded time."""
    schema = {"type": "object", "oneOf": [{"properties": {f"k{j}": {"minimum": i + j} for j in range(6)}}
                                          for i in range(24)]}
    with pytest.raises((constrain.SchemaTooComplex, constrain.UnsupportedKeyword), match="more than 256"):
        constrain.compile(schema, cache=False)


def test_branches_that_hold_together_are_unsatisfiable():
    """Where every object that meets one branch meets another, no object is valid: a clear
    ``Unsatisfiable`` that says why, not an automaton with no way out."""
    schema = {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["a"], "properties": {"b": True}},
                                          {"required": ["a"], "additionalProperties": True}]}
    assert not any(jsonschema.Draft202012Validator(schema).is_valid(v) for v in OBJECTS)
    with pytest.raises(constrain.Unsatisfiable, match="exactly one oneOf branch"):
        constrain.compile(schema, cache=False)


object_branch = st.builds(lambda kinds, rest: {**{k: v for k, v in rest.items() if k != "type"}, **kinds}, st.sampled_from(
    [{"type": "object"}, {"type": "object", "maxProperties": 1}, {"type": "object", "minProperties": 2}, {},
     {"type": ["object", "string"]}]), branch)
rest_schema = st.sampled_from([{}, {"type": "object"}, {"type": ["object", "string"]}, {"properties": {"a": {"type": "integer"}}},
                               {"properties": {"c": {"type": "string"}}, "required": ["c"]},
                               {"type": "object", "additionalProperties": {"type": "integer"}}])


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(object_branch | st.builds(lambda a, b: {"anyOf": [a, b]}, object_branch, object_branch),
                min_size=2, max_size=4), st.sampled_from(["oneOf", "anyOf"]), rest_schema, st.sampled_from(["schema", "any"]))
def test_not_of_object_branches_agrees_with_jsonschema(branches, word, rest, order):
    """The ``not`` of a ``oneOf`` or ``anyOf`` of object branches is decided member by member
    (the complement's cases refused, so none stands in unseen): an object closes where the rest
    holds and, of the branches, not exactly one (none) does; other values where the rest allows
    them and the branches that speak of objects alone (every other value meets them) are not
    one (none). Agrees with python-jsonschema on a small universe and leaves no dead end."""
    schema = {**rest, "not": {word: branches}}

    def outside(self, node, slot):  # the complement's cases refused for this ``not`` (elsewhere as before)
        if node.not_ is not None and node.not_.source is schema["not"]:
            raise constrain.SchemaTooComplex("", "the complement refused, for the test")
        return _OUTSIDE(self, node, slot)

    # however few the complement's cases would be
    event(_decided_agrees(schema, order, [(compiler.lower.Lowering, "outside", outside), (compiler.alive, "FEW_CASES", 0)]))


_OUTSIDE = compiler.lower.Lowering.outside


def test_not_of_a_discriminated_union_is_decided_member_by_member():
    """An item that is none of eight kinds of expression, each pinned by ``kind`` and requiring
    names of its own (MaskBench o58661, where an item of one kind's array is checked against the
    rest): "none of them" met as the complements of eight branches passed 256 cases; member by
    member the object closes where no branch is alive. A ``oneOf``'s ``not`` closes where none
    or two are; one whose branches every object meets is unsatisfiable, and says why."""
    kinds = [{"type": "object", "properties": {"kind": {"const": k}, f"{k}1": {"type": "integer"},
                                              f"{k}2": {"type": "string"}}, "required": ["kind", f"{k}1"]}
             for k in "abcdefgh"]
    for word in ("anyOf", "oneOf"):
        schema = {"type": "object", "properties": {"kind": {"type": "string"}}, "not": {word: kinds}}
        grammar = constrain.compile(schema, whitespace="compact", cache=False)
        oracle = jsonschema.Draft202012Validator(schema)
        for value in [{"kind": "a", "a1": 1}, {"kind": "a", "a1": "x"}, {"kind": "a"}, {"kind": "z", "a1": 1},
                      {"kind": "b", "b1": 1, "b2": 2}, {"kind": 1}, {}, {"kind": "h", "h1": 1, "x": None}]:
            text = json.dumps(value, separators=(",", ":"))
            assert grammar.accepts(text) == oracle.is_valid(value), (word, value)
        assert grammar.find_trap(2000) is None
    nine = {"anyOf": [{"required": [f"k{i}"], "properties": {f"k{i}": {"type": "integer"}}} for i in range(9)]}
    schema = {"type": "object", "not": nine}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    for value in [{"k0": 1}, {"k0": "s"}, {}, {"k3": 2, "k5": "x"}, {"k8": None}, {"k1": "s", "k2": "t"}]:
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == jsonschema.Draft202012Validator(
            schema).is_valid(value), value
    with pytest.MonkeyPatch.context() as patch, pytest.raises(constrain.Unsatisfiable, match="fails the 'not'"):
        patch.setattr(compiler.alive, "FEW_CASES", 0)  # (two cases: the complement would write them)
        constrain.compile({"type": "object", "not": {"anyOf": [{"type": "object"}, {"required": ["a"]}]}}, cache=False)


def test_a_one_of_met_before_the_properties_brings_its_names_first():
    """An ``allOf`` whose branch is a ``oneOf`` (through a ``$ref``) meets the schema's own
    ``properties`` after it: the met schema writes its ``oneOf`` first, so the branches' names
    come first in the canonical order, as the meet of the two dicts had it (Grunt's watch task:
    ``events`` before ``spawn``). The meet of nodes keeps that order (``Node.one_of_first``)."""
    schema = {"definitions": {"events": {"oneOf": [
        {"properties": {"events": {"type": "array", "items": {"type": "string"}}}},
        {"properties": {"events": {"type": "string"}}}]}},
        "type": "object", "allOf": [{"$ref": "#/definitions/events"}], "properties": {"spawn": {"type": "boolean"}}}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema)
    for value in ({"events": ["a"], "spawn": True}, {"events": "a", "spawn": False}, {"events": "a"}, {"spawn": True},
                  {"events": 1, "spawn": True}, {}):
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == oracle.is_valid(value), value
    assert not grammar.accepts('{"spawn":true,"events":"a"}')
    assert grammar.find_trap(500) is None
