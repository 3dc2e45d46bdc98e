"""``uniqueItems``: exact where each position's items come from a finite set of values (a state per
set of values used), refused with its pointer where they do not, and exact in ``validate`` always."""

import json

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import compiler.containers
import constrain
from compiler.any_order import LAZY_ORDER_MAX
from oracle import agrees_on

SCALARS = [None, True, False, 0, 1, 1.0, 2, -1, 2.5, "", "a", "b", "é", [1], [1.0], {"a": 1}]


def _items():
    """Item schemas with a finite set of values, some of them equal as JSON values (1 and 1.0)."""
    enums = st.lists(st.sampled_from(SCALARS), min_size=1, max_size=6).map(lambda vs: {"enum": vs})
    ranges = st.tuples(st.integers(-2, 3), st.integers(0, 4), st.booleans()).map(
        lambda t: {"type": "integer", "minimum": t[0], ("exclusiveMaximum" if t[2] else "maximum"): t[0] + t[1]})
    kinds = st.sampled_from([{"type": "boolean"}, {"type": "null"}, {"type": ["boolean", "null"]}, {"const": "a"},
                             {"anyOf": [{"const": "a"}, {"enum": [1, "b"]}]}, {"oneOf": [{"const": 1}, {"enum": [1.0, 2]}]},
                             {"anyOf": [{"type": "boolean"}, {"const": [1]}], "not": {"const": False}}])
    narrowed = st.tuples(enums, st.sampled_from([{}, {"type": "integer"}, {"not": {"const": 1}}, {"minLength": 1}])).map(
        lambda t: {**t[0], **t[1]})
    return enums | ranges | kinds | narrowed


@st.composite
def _arrays(draw):
    schema = {"type": "array", "uniqueItems": True, "items": draw(_items())}
    if draw(st.booleans()):
        schema["prefixItems"] = draw(st.lists(_items(), min_size=1, max_size=2))
    if draw(st.booleans()):
        schema["minItems"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        schema["maxItems"] = draw(st.integers(0, 4))
    return schema


@pytest.fixture(params=["grid", "lazy"])
def sets_used(request, monkeypatch):
    """The sets of values used made at compile, or (the bound patched to none) where reached."""
    if request.param == "lazy":
        monkeypatch.setattr(compiler.containers, "DISTINCT_GRID_MAX", 0)
    return request.param


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(_arrays(), st.lists(st.lists(st.sampled_from(SCALARS), max_size=5), min_size=8, max_size=8))
def test_distinct_items_from_finite_sets_agree_with_jsonschema(sets_used, schema, arrays):
    """Grammar, ``validate`` and python-jsonschema agree on arrays with and without repeats (1 and
    1.0 are one value, true and 1 are two), the sets of values used made at compile or where a
    generation reaches them, and no state of the grammar is a dead end."""
    arrays += [[v, v] for v in SCALARS[:6]] + [[1, 1.0], [True, 1], [0, False], [None]]
    if '"integer"' in json.dumps(schema):  # an integer is written without a fraction (python-jsonschema takes 1.0)
        arrays = [a for a in arrays if 1.0 not in [x for x in a if type(x) is float]]
    outcome = agrees_on(schema, arrays)
    event(outcome)
    assert outcome != "refused", schema
    if outcome == "compiled":
        assert constrain.compile(schema, cache=False).find_trap(3000) is None


def test_each_value_at_most_once_and_the_exhausted_set_ends_the_array():
    g = constrain.compile({"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True},
                          whitespace="compact", cache=False)
    assert g.accepts('["c","a","b"]') and g.accepts("[]")
    assert not g.accepts('["a","b","a"]') and not g.accepts('["a","b","c","a"]')
    numbers = constrain.compile({"type": "array", "items": {"enum": [1, 1.0, True, 2]}, "uniqueItems": True},
                                whitespace="compact", cache=False)  # 1 and 1.0 are one value, true another
    assert numbers.accepts("[1,true,2]") and numbers.accepts("[1.0,2]")
    assert not numbers.accepts("[1,1.0]") and not numbers.accepts("[1.0,1]") and not numbers.accepts("[2,1,1]")
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile({"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 3}, cache=False)


@pytest.mark.parametrize("schema, pointer", [
    ({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "string"}, "uniqueItems": True},
     "/uniqueItems"),
    ({"type": "array", "items": {"type": ["string", "integer"]}, "uniqueItems": True}, "/uniqueItems"),
    ({"type": "array", "items": {"anyOf": [{"type": "string"}, {"enum": ["a", 1]}]}, "uniqueItems": True},
     "/uniqueItems"),
    ({"uniqueItems": True}, "/uniqueItems"),
    ({"properties": {"a": {"type": "array", "items": {"type": "integer", "minimum": 0}, "uniqueItems": True}}},
     "/properties/a/uniqueItems"),
    ({"type": "array", "items": {"enum": [1, 2]}, "contains": {"const": 1}, "uniqueItems": True}, "/uniqueItems"),
    ({"not": {"type": "array", "uniqueItems": True}}, "/not/uniqueItems"),
])
def test_distinct_items_of_an_open_set_are_refused_with_their_pointer(schema, pointer):
    """Never a wider language: where the values are not a finite set seen in the schema, the
    keyword is refused where it stands (``validate`` still checks it)."""
    with pytest.raises(constrain.UnsupportedKeyword, match=f"at {pointer}") as info:
        constrain.compile(schema, cache=False)
    assert info.value.keyword in ("uniqueItems", "not")
    assert constrain.validate([1, 1], {"type": "array", "uniqueItems": True}) != []


def test_many_values_make_their_sets_where_reached():
    """Past ``DISTINCT_GRID_MAX`` sets (and without a prefix) a set of values used is made when a
    generation first reaches it: 257 values compile, each set a fragment of its own; past
    ``LAZY_ORDER_MAX`` values, or where sets cannot wait, the 2**n sets are too many."""
    values = [f"feature-{i}" for i in range(257)]
    schema = {"type": "array", "items": {"enum": values}, "uniqueItems": True, "minItems": 2}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    before = grammar.program.size
    picked = values[::-7]
    assert grammar.accepts(json.dumps(picked, separators=(",", ":")))
    assert not grammar.accepts(json.dumps(picked + [picked[3]], separators=(",", ":")))
    assert not grammar.accepts(json.dumps(values[:1], separators=(",", ":")))  # minItems
    assert grammar.program.size > before and grammar.find_trap(budget=2_000) is None
    with pytest.raises(constrain.SchemaTooComplex, match=f"uniqueItems over {LAZY_ORDER_MAX + 1} values"):
        constrain.compile({**schema, "items": {"enum": list(range(LAZY_ORDER_MAX + 1))}}, cache=False)
    with pytest.raises(constrain.SchemaTooComplex, match="uniqueItems over 20 values"):
        constrain.compile({"type": "array", "items": {"enum": list(range(20))}, "uniqueItems": True}, lazy=False, cache=False)
    few = constrain.compile({"type": "array", "items": {"enum": list(range(20))}, "uniqueItems": True, "maxItems": 2},
                            whitespace="compact", lazy=False, cache=False)  # sets of at most two values: 211 states
    assert few.accepts("[3,19]") and not few.accepts("[3,3]") and not few.accepts("[1,2,3]")
    with pytest.raises(constrain.Unsatisfiable):  # more distinct values asked than there are
        constrain.compile({**schema, "items": {"enum": values[:20]}, "minItems": 21}, cache=False)


@pytest.mark.parametrize("value, errors", [([1, 2, 1.0], ["/: items 0 and 2 are equal (uniqueItems)"]),
                                           ([{"a": [1], "b": 2}, {"b": 2, "a": [1.0]}], ["/: items 0 and 1 are equal (uniqueItems)"]),
                                           ([True, 1, 0, False, "1"], []), (["x"] * 1, [])])
def test_validate_checks_distinct_items_of_any_kind(value, errors):
    schema = {"type": "array", "uniqueItems": True}
    assert constrain.validate(value, schema) == errors
    assert jsonschema.Draft202012Validator(schema).is_valid(value) == (errors == [])
