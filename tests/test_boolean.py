"""The boolean keywords (not, oneOf, if/then/else, dependentRequired, dependentSchemas, draft-7
dependencies) agree with python-jsonschema on every value of a small universe, nested at any depth.

Objects are compiled with ``property_order="any"``, so an instance's key order never matters and
the comparison is on values alone. Every compiled grammar is also searched for dead ends.
"""

import itertools
import json

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import constrain
from oracle import agrees_on

NAMES = ["a", "b", "c"]
SCALARS = [None, True, False, 0, 1, 2, 3.5, -1, -0.25, 4.5, "", "a", "ab", "ba", "abc"]
MEMBER_VALUES = [1, "a", None, {"a": 1}]
OBJECTS = [dict(zip(keys, values)) for n in range(4) for keys in itertools.combinations(NAMES, n)
           for values in itertools.product(MEMBER_VALUES, repeat=n)]
ARRAYS = [list(t) for n in range(4) for t in itertools.product([1, None, "a"], repeat=n)]
UNIVERSE = SCALARS + OBJECTS + ARRAYS + [{"d": 1}, {"a": 1, "d": "x"}, {"ab": 1}, [[1]], [{"a": 1}]]

leaf = st.one_of(
    st.sampled_from(["null", "boolean", "integer", "number", "string", "object", "array"]).map(lambda t: {"type": t}),
    st.integers(-1, 3).map(lambda n: {"minimum": n}),
    st.integers(-1, 3).map(lambda n: {"exclusiveMaximum": n}),
    st.sampled_from([2, 3]).map(lambda n: {"multipleOf": n}),
    st.integers(0, 2).map(lambda n: {"maxLength": n}),
    st.integers(1, 2).map(lambda n: {"minLength": n}),
    st.sampled_from(["^a", "b$"]).map(lambda p: {"pattern": p}),
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True).map(lambda r: {"required": r}),
    st.integers(0, 2).map(lambda n: {"maxProperties": n}),
    st.integers(1, 2).map(lambda n: {"minProperties": n}),
    st.sampled_from(SCALARS).map(lambda v: {"const": v}),
    st.lists(st.sampled_from(SCALARS), min_size=1, max_size=3).map(lambda v: {"enum": v}),
    st.sampled_from(OBJECTS + ARRAYS + [[[1]], [{"a": 1}]]).map(lambda v: {"const": v}),
    st.lists(st.sampled_from(SCALARS + OBJECTS[:8] + ARRAYS[:8]), min_size=1, max_size=2).map(lambda v: {"enum": v}),
    st.integers(0, 2).map(lambda n: {"maxItems": n}),
    st.just({"prefixItems": [{"type": "integer"}]}),
    st.just({"items": False}),
    st.just({"items": {"type": "integer"}}),
    st.sampled_from([{"pattern": "^[ab]"}, {"enum": ["a", "d"]}, {"maxLength": 0}, {"not": {"const": "b"}},
                     {"not": {"pattern": "^a", "maxLength": 1}}]).map(lambda n: {"propertyNames": n}),
    st.sampled_from([{"type": "integer"}, {"const": None}]).map(lambda c: {"contains": c}),
    st.tuples(st.integers(0, 2), st.none() | st.integers(0, 2)).map(
        lambda t: {"contains": {"type": "null"}, "minContains": t[0], **({"maxContains": t[1]} if t[1] is not None else {})}),
    st.just({"properties": {"a": True}, "additionalProperties": False}),
    st.just({"properties": {"b": True}, "additionalProperties": {"type": "integer"}}),
    st.just({"patternProperties": {"^[bd]": {"type": "string"}}}),
    st.sampled_from([{"b$": {"minimum": 1}}, {"^a": {"maximum": 2}}]).map(lambda p: {"patternProperties": p}),
    st.just({"patternProperties": {"^a": {"type": "integer"}}, "additionalProperties": {"type": "null"}}),
    st.just(True),
    st.just(False),
)


def combine(children):
    pairs = st.lists(children, min_size=2, max_size=3)
    return st.one_of(
        children.map(lambda s: {"not": s}),
        pairs.map(lambda bs: {"oneOf": bs}),
        pairs.map(lambda bs: {"anyOf": bs}),
        pairs.map(lambda bs: {"allOf": bs}),
        st.tuples(children, children, children).map(lambda t: {"if": t[0], "then": t[1], "else": t[2]}),
        st.tuples(children, children).map(lambda t: {"if": t[0], "then": t[1]}),
        st.dictionaries(st.sampled_from(NAMES), children, min_size=1, max_size=2).map(lambda p: {"properties": p}),
        st.tuples(st.sampled_from(NAMES), st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True))
        .map(lambda t: {"dependentRequired": {t[0]: t[1]}}),
        st.tuples(st.sampled_from(NAMES), children).map(lambda t: {"dependentSchemas": {t[0]: t[1]}}),
        st.tuples(children, children).map(lambda t: {**t[0], **t[1]} if isinstance(t[0], dict) and isinstance(t[1], dict)
                                           else t[0]),
    )


schemas = st.recursive(leaf, combine, max_leaves=6)


def agree(schema, draft=jsonschema.Draft202012Validator):
    """Compile ``schema`` and compare with jsonschema on the universe; ``None`` if refused."""
    try:
        grammar = constrain.compile(schema, property_order="any", whitespace="compact", cache=False)
    except constrain.Unsatisfiable:
        assert not any(draft(schema).is_valid(v) for v in UNIVERSE), schema
        return "unsatisfiable"
    except (constrain.UnsupportedKeyword, constrain.SchemaTooComplex):
        return None
    oracle = draft(schema)
    for value in UNIVERSE:
        text = json.dumps(value, separators=(",", ":"))
        assert grammar.accepts(text) == oracle.is_valid(value), (schema, text)
    assert grammar.find_trap(500) is None, schema
    return "compiled"


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(schemas)
def test_boolean_keywords_agree_with_jsonschema(schema):
    """accepts(value) == jsonschema.is_valid(value) on the universe, whatever the nesting."""
    event(str(agree(schema)))


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(schemas)
def test_boolean_keywords_agree_below_a_property(schema):
    """The same, one level down, so each rewrite also runs in a fragment of its own."""
    event(str(agree({"type": "object", "properties": {"a": schema}, "required": ["a"]})))


@pytest.mark.parametrize("schema", [
    {"oneOf": [{"required": ["a"]}, {"required": ["b", "c"]}]},
    {"not": {"required": ["a", "b"]}},
    {"not": {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}},
    {"not": {"allOf": [{"required": ["a"]}, {"properties": {"b": {"type": "string"}}}]}},
    {"not": {"not": {"type": "string", "maxLength": 1}}},
    {"not": {"multipleOf": 2}},
    {"not": {"properties": {"a": {"not": {"const": 1}}}}},
    {"type": "object", "if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]},
     "else": {"required": ["c"]}},
    {"type": "object", "dependentRequired": {"a": ["b", "c"]}},
    {"type": "object", "dependentSchemas": {"a": {"properties": {"b": {"type": "string"}}}}},
    {"oneOf": [{"type": "string", "minLength": 2}, {"type": "string", "pattern": "b$"}]},
    {"oneOf": [{"properties": {"a": {}}, "additionalProperties": False}, {"properties": {"b": {}}, "required": ["b"]}]},
    {"not": {"patternProperties": {"^a": {"type": "integer"}}, "additionalProperties": False}},
    {"type": "number", "not": {"type": "integer"}, "maximum": 4},
    {"properties": {"a": {}, "ab": {}}, "propertyNames": {"maxLength": 1}},
    {"not": {"propertyNames": {"pattern": "^[ab]"}}},
    {"propertyNames": {"not": {"const": "b"}}},
    {"if": {"type": "integer"}, "then": {"not": {"const": 3.5}}},  # no integer to take out: all of them stay
    {"type": "integer", "not": {"enum": [3.5, 2]}},
])
def test_shapes_seen_in_real_schemas_compile_exactly(schema):
    """Forms that were refused before (not of several names, overlapping oneOf, conditionals)."""
    assert agree(schema) == "compiled"


@pytest.mark.parametrize("literal", [[], {}, [1, "a"], {"a": 1, "b": None}, {"a": [1, {"b": None}], "c": "x"},
                                     [[1], {"a": [None]}]])
def test_not_of_an_array_or_object_literal_is_every_other_value(literal):
    """``not`` of an array or object ``const`` (or an ``enum`` holding one) is its shape's complement:
    another length or key set, or some item or member unequal (nested literals the same way), equal
    as JSON compares (1 and 1.0 alike, key order aside); once refused as a whole."""
    nearby = [literal, json.loads(json.dumps(literal).replace("1", "1.0")), [literal], {"a": literal}]
    if isinstance(literal, list):
        nearby += [literal[:-1], literal + [None], literal[::-1]]
    else:
        nearby += [dict(reversed(list(literal.items()))), {**literal, "d": 1}] + [
            {k: v for k, v in literal.items() if k != name} for name in literal]
    for schema in ({"not": {"const": literal}}, {"not": {"enum": ["a", literal, 2]}},
                   {"type": ["array", "object"], "not": {"const": literal}},
                   {"properties": {"a": {"not": {"const": literal}}}}):
        assert agrees_on(schema, UNIVERSE + nearby) == "compiled", schema
        assert constrain.compile(schema, cache=False).find_trap(500) is None, schema


def test_members_that_must_exist_among_additional_ones_are_bounded():
    """Each ``not`` of a patternProperties asks for some member (a key it matches, a value it
    refuses); additional members may be the witnesses of up to six such at once (a state per set
    of those found), exact; a seventh is a clear refusal, never a state blow-up."""
    def some_of(letters):
        return {"type": "object", "allOf": [{"not": {"patternProperties": {f"^{c}": {"not": {"type": "integer"}}}}}
                                            for c in letters]}

    letters = "abcdef"
    values = [dict.fromkeys(letters, 1), dict.fromkeys(letters[:-1], 1), {**dict.fromkeys(letters, 1), "z": "x"},
              {"ab": 1, **dict.fromkeys(letters[1:], 1)}, dict.fromkeys(letters, "s"), {"a": 1, "af": 2}]
    assert agrees_on(some_of(letters), values) == "compiled"
    assert constrain.compile(some_of(letters), cache=False).find_trap(500) is None
    with pytest.raises(constrain.UnsupportedKeyword, match="more than 6 members that must exist"):
        constrain.compile(some_of("abcdefg"), cache=False)


def test_draft7_dependencies_both_forms():
    """``dependencies`` lists names or gives a schema, as draft 7 reads it."""
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "dependencies": {"a": ["b"], "c": {"required": ["a"]}}}
    assert agree(schema, jsonschema.Draft7Validator) == "compiled"


def test_not_of_a_recursive_schema_is_bounded():
    """``not`` of a schema that refers to itself at the same value is refused, never a hang."""
    schema = {"$defs": {"loop": {"anyOf": [{"$ref": "#/$defs/loop"}, {"type": "null"}]}},
              "not": {"$ref": "#/$defs/loop"}}
    with pytest.raises((constrain.UnsupportedKeyword, constrain.InvalidSchema)):
        constrain.compile(schema)


def test_not_of_a_recursive_tree_is_exact():
    """A complement that descends into the instance stays finite: not a tree of nulls."""
    schema = {"$defs": {"t": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"a": {"$ref": "#/$defs/t"}},
                                                                   "additionalProperties": False}]}},
              "not": {"$ref": "#/$defs/t"}}
    assert agree(schema) == "compiled"


def test_hostile_complements_are_bounded():
    """Complements whose automata or cases multiply (remainders of several divisors, many object
    literals) are refused as too complex, never a crash or an unbounded compile."""
    schema = {"type": "integer", "allOf": [{"not": {"multipleOf": p}} for p in (7, 11, 13, 17, 19, 23)]}
    with pytest.raises(constrain.SchemaTooComplex):
        constrain.compile(schema, cache=False)
    objects = {"type": "object", "not": {"enum": [{"a": i, "b": [i]} for i in range(50)]}}  # a union per literal, all met
    with pytest.raises((constrain.SchemaTooComplex, constrain.UnsupportedKeyword), match="more than 256"):
        constrain.compile(objects, cache=False)
    many = {"oneOf": [{"required": [f"k{i}"], "properties": {f"k{i}": {"type": "integer"}}} for i in range(40)]}
    try:
        grammar = constrain.compile(many, cache=False)
    except (constrain.SchemaTooComplex, constrain.UnsupportedKeyword):
        return
    assert grammar.accepts('{"k3":1}') and not grammar.accepts('{"k3":1,"k4":2}')


@pytest.mark.parametrize("draft,keyword,value,text", [
    ("http://json-schema.org/draft-04/schema#", "if", {"type": "object"}, "1"),
    ("http://json-schema.org/draft-04/schema#", "propertyNames", {"maxLength": 0}, '{"a":1}'),
    ("http://json-schema.org/draft-06/schema#", "if", {"type": "object"}, "1"),
    ("http://json-schema.org/draft-07/schema#", "dependentRequired", {"a": ["b"]}, '{"a":1}'),
    ("https://json-schema.org/draft/2020-12/schema", "dependencies", {"a": ["b"]}, '{"a":1}'),
])
def test_keywords_of_another_draft_are_ignored(draft, keyword, value, text):
    """A keyword the document's draft does not have is an unknown word there, as its validators read it."""
    schema = {"$schema": draft, keyword: value, **({"then": False} if keyword == "if" else {})}
    assert constrain.compile(schema, cache=False).accepts(text)
    assert constrain.validate(json.loads(text), schema) == []


@pytest.mark.parametrize("schema", [
    {"allOf": [{"contains": {"type": "integer"}}, {"contains": {"type": "null"}}]},
    {"allOf": [{"contains": {"type": "integer"}}, {"contains": {"minimum": 1}}], "maxItems": 2},
    {"allOf": [{"contains": {"type": "integer"}}, {"contains": {"type": "null"}}, {"contains": {"const": "a"}}]},
    {"type": "array", "allOf": [{"not": {"items": {"type": "integer"}}}, {"not": {"items": {"type": "string"}}}]},
    {"allOf": [{"contains": {"type": "integer"}, "maxContains": 1}, {"not": {"contains": {"type": "integer"}, "minContains": 2}}]},
    {"allOf": [{"contains": {"type": "integer"}}, {"minContains": 0}]},
    {"allOf": [{"contains": {"type": "integer"}, "minContains": 2}, {"contains": {"type": "integer"}, "maxContains": 3}]},
])
def test_contains_from_several_allof_branches_each_find_an_item(schema):
    """Each contains of an allOf needs an item of its own or shares one (one item may meet several);
    one contains met with its own counts keeps the larger least (1 where unsaid) and the smaller most."""
    assert agree(schema) == "compiled"


_ARRAYS = [[], [1], ["a"], [1, "a"], [1, 1], [1, 1, 1], ["a", "a"], [None], [1, None, "a"], [[1]], {}, 1, {"a": [1]}]
_MATCHED = [{"type": "integer"}, {"type": "string"}, {"const": 1}, {"minimum": 1}, {}, {"not": {"type": "integer"}}]
_ARRAY_CLAUSES = st.one_of(
    st.builds(lambda m, lo, hi: {"contains": m, **({"minContains": lo} if lo is not None else {}),
                                 **({"maxContains": hi} if hi is not None else {})},
              st.sampled_from(_MATCHED), st.none() | st.integers(0, 3), st.none() | st.integers(0, 3)),
    st.sampled_from([{"items": {"type": "integer"}}, {"prefixItems": [{"type": "integer"}]}, {"minItems": 2}, {"maxItems": 2},
                     {"oneOf": [{"contains": {"type": "integer"}}, {"contains": {"type": "string"}}]},
                     {"if": {"contains": {"const": 1}}, "then": {"maxItems": 1}, "else": {"minItems": 1}},
                     {"unevaluatedItems": False, "prefixItems": [{}]},
                     {"properties": {"a": {"contains": {"type": "integer"}, "maxContains": 1}}},
                     {"anyOf": [{"maxItems": 0}, {"contains": {"type": "string"}, "minContains": 2}]}]))


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.booleans(), _ARRAY_CLAUSES), min_size=1, max_size=3))
def test_generated_contains_meets_agree_with_jsonschema(parts):
    """``contains`` with its counts met with others and with complements, in the grammar and in
    ``validate``, as python-jsonschema reads them (or refused)."""
    schema = {"allOf": [{"not": c} if negated else c for negated, c in parts]}
    event(agrees_on(schema, _ARRAYS))


def test_counts_beside_contains_met_from_several_branches_are_refused():
    """The items a ``contains`` matches are counted, or, with ``contains`` met from several allOf
    branches, tracked as the set of those found, which holds no count: ``minContains`` or
    ``maxContains`` there is refused, never dropped (dropping it accepted ``[1,"a"]`` for
    ``not: {anyOf: [{contains: integer, maxContains: 1}, {oneOf: [contains integer, contains string]}]}``)."""
    integer, string = {"type": "integer"}, {"type": "string"}
    for schema in ({"not": {"anyOf": [{"contains": integer, "maxContains": 1},
                                      {"oneOf": [{"contains": integer}, {"contains": string}]}]}},
                   {"allOf": [{"contains": integer, "minContains": 2}, {"allOf": [{"contains": integer}, {"contains": string}]}]}):
        with pytest.raises(constrain.UnsupportedKeyword, match="beside a contains met from another allOf branch"):
            constrain.compile(schema, cache=False)
        nested = {"type": "object", "properties": {"x": schema}}  # refused at compile, not when first reached
        with pytest.raises(constrain.UnsupportedKeyword, match="beside a contains met from another allOf branch"):
            constrain.compile(nested, cache=False)
    assert agree({"allOf": [{"contains": integer}, {"contains": string}]}) == "compiled"


def test_up_to_six_contains_met_in_one_allof_each_find_an_item():
    """Nested conditionals on ``contains`` beside ``unevaluatedItems: false`` meet six of them in one
    branch (each found or not: 64 columns); a seventh is refused where it stands."""
    chained = {"if": {"contains": {"const": "a"}},
               "then": {"if": {"contains": {"const": "b"}}, "then": {"if": {"contains": {"const": "c"}}}},
               "unevaluatedItems": False}
    arrays = [[], ["a", "a"], ["a", "b", "a", "b", "a"], ["c", "a", "c", "c", "b", "a"], ["b", "b"], ["c", "c"],
              ["c", "b", "c", "b", "c"], ["c", "a", "c", "a", "c"], ["a", "c"], ["d"]]
    assert agrees_on(chained, arrays) == "compiled"
    letters = "abcdefg"
    six = {"allOf": [{"contains": {"const": x}} for x in letters[:6]]}
    assert agrees_on(six, [list(letters[:6]), list(letters[:5]), list(reversed(letters[:6])) + ["g"]]) == "compiled"
    with pytest.raises(constrain.UnsupportedKeyword, match="more than 6 contains met in one allOf"):
        constrain.compile({"allOf": [{"contains": {"const": x}} for x in letters]}, cache=False)


def test_not_of_a_format_is_the_strings_it_rules_out():
    """``not format`` accepts the strings the format's automaton refuses, nothing else; a format
    checked beyond its automaton (regex) or without one (idn-hostname) is refused, as are numbers'
    (a format bounded in length: ``test_not_hostname_keeps_out_hostnames_within_their_lengths``)."""
    schema = {"not": {"format": "date"}}
    grammar = constrain.compile(schema, cache=False)
    for text, ok in (('"2020-01-01"', False), ('"2020-13-01"', True), ('"x"', True), ("1", False), ("null", False)):
        assert grammar.accepts(text) is ok, text
        assert (constrain.validate(json.loads(text), schema) == []) is ok, text
    assert not constrain.compile({"type": "string", "not": {"format": "uuid"}}, cache=False).accepts(
        '"123e4567-e89b-12d3-a456-426614174000"')
    for name in ("idn-hostname", "regex", "int32"):
        with pytest.raises(constrain.UnsupportedKeyword, match="'not' of format"):
            constrain.compile({"not": {"format": name}}, cache=False)


@pytest.mark.parametrize("order", ["schema", "any"])
def test_a_complement_keeps_the_keywords_its_draft_ignores(order):
    """``not items`` is "some item is wrong", written with ``contains``: in a draft-4 document, which
    ignores a ``contains`` of its own, the complement's must still count (ignoring it accepted every
    array, and a oneOf of two objects both valid: o69190)."""
    d4 = "http://json-schema.org/draft-04/schema#"
    g = constrain.compile({"$schema": d4, "not": {"items": {"type": "integer"}}}, cache=False, property_order=order)
    assert g.accepts('["a"]') and not g.accepts("[1]") and not g.accepts("[]")
    assert constrain.compile({"$schema": d4, "type": "array", "contains": {"type": "integer"}}, cache=False).accepts('["a"]')
    schema = {"$schema": d4, "oneOf": [{"$ref": "#/definitions/a"}, {"$ref": "#/definitions/b"}], "definitions": {
        "a": {"type": "object", "required": ["a"], "properties": {"a": {"type": "array", "items": {"type": "integer"}}}},
        "b": {"type": "object", "required": ["b"]}}}
    g = constrain.compile(schema, cache=False, whitespace="compact", property_order=order)
    assert not g.accepts('{"a":[],"b":{}}') and g.accepts('{"a":["x"],"b":{}}') and g.accepts('{"a":[1]}')


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-06/schema#",
                                   "http://json-schema.org/draft-07/schema#"])
def test_enum_values_are_filtered_by_the_complements_own_keywords(draft):
    """An enum beside ``not`` keeps the values the complement admits: its ``contains`` (draft 4 has
    none of its own) and ``if``/``propertyNames`` are read in every draft when the compiler wrote
    them (the filter read them with the document's unknown words and kept ``[1]`` in draft 4)."""
    cases = [({"enum": [[1], ["a"]], "not": {"items": {"type": "integer"}}}, ([1], ["a"])),
             ({"enum": [[1], ["a"]], "contains": {"type": "string"}}, ([1], ["a"])),
             ({"enum": [{"a": 1}, {"b": 1}], "propertyNames": {"pattern": "^a$"}}, ({"a": 1}, {"b": 1})),
             ({"enum": [1, "x"], "if": {"type": "integer"}, "then": {"minimum": 5}}, (1, "x")),
             ({"enum": [{"a": 1}, {}], "dependencies": {"a": ["b"]}}, ({"a": 1}, {}))]
    for schema, instances in cases:
        schema = {"$schema": draft, **schema}
        grammar = constrain.compile(schema, cache=False, whitespace="compact")
        oracle = jsonschema.validators.validator_for(schema)(schema)
        for instance in instances:
            assert grammar.accepts(json.dumps(instance, separators=(",", ":"))) == oracle.is_valid(instance), (schema, instance)
            assert (constrain.validate(instance, schema) == []) == oracle.is_valid(instance), (schema, instance)


ENUM_POOL = [None, True, 3, 4, 3.5, 6, "a", "b", "2024-01-01", [], [1], ["a"], [1, "a"], {}, {"a": 1}, {"b": "x"}, {"ab": "s"},
             {"ab": 2, "c": None}]


@pytest.mark.parametrize("negated", [
    {"type": "integer"}, {"type": ["integer", "string"]}, {"enum": [3, "a", [1]]}, {"const": {"a": 1}},
    {"multipleOf": 2}, {"minimum": 3.5}, {"exclusiveMaximum": 4}, {"pattern": "^a"}, {"format": "date"},
    {"maxLength": 1}, {"additionalProperties": {"type": "integer"}}, {"patternProperties": {"^a": {"type": "integer"}}},
    {"propertyNames": {"maxLength": 1}}, {"properties": {"a": {"const": 1}}, "additionalProperties": False},
    {"contains": {"type": "string"}}, {"items": {"type": "integer"}}, {"required": ["a"]},
    {"anyOf": [{"type": "integer"}, {"pattern": "b"}]}, {"not": {"multipleOf": 3}},
    {"allOf": [{"items": {"type": "string"}}, {"additionalProperties": {"type": "null"}}]}])
def test_an_enum_beside_each_complement_keeps_what_the_complement_admits(negated):
    """Each leaf a complement writes in the lowering's own words (values, patterns, formats,
    multiples, 'not an integer', some member, one more ``contains``) is read by ``validate`` when it
    filters an enum beside it, with the meaning python-jsonschema gives ``not``."""
    for schema in ({"enum": ENUM_POOL, "not": negated}, {"enum": ENUM_POOL, "not": negated, "type": ["array", "object"]},
                   {"enum": ENUM_POOL, "allOf": [{"not": negated}, {"not": {"const": "b"}}]},
                   {"enum": ENUM_POOL, "not": negated, "contains": {"type": "integer"}}):
        oracle = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
        try:
            grammar = constrain.compile(schema, cache=False, whitespace="compact", property_order="any")
        except constrain.UnsupportedKeyword:
            continue
        except constrain.Unsatisfiable:
            assert not any(oracle.is_valid(value) for value in ENUM_POOL), schema
            continue
        for value in ENUM_POOL:
            assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == oracle.is_valid(value), (schema, value)


def test_a_document_naming_no_draft_keeps_dependencies():
    """Without `$schema`, draft 7's `dependencies` still applies: ignoring it would widen the language."""
    schema = {"type": "object", "dependencies": {"a": ["b"]}}
    grammar = constrain.compile(schema, cache=False, property_order="any")
    assert not grammar.accepts('{"a":1}') and grammar.accepts('{"a":1,"b":2}')
    assert constrain.validate({"a": 1}, schema) != []


def test_a_schemas_underscore_words_are_unknown_keywords():
    """``_id`` or ``_format`` in a schema are words outside the vocabularies (ignored)."""
    g = constrain.compile({"allOf": [{"_id": 1}, {"_id": 2}], "not": {"_format": "x", "type": "string"}}, cache=False)
    assert g.accepts("1") and not g.accepts('"a"')


@pytest.mark.parametrize("word, value", [("_not_integer", True), ("_not_values", [3, "a", None]),
                                         ("_not_multiples", [3]), ("_not_patterns", ["a"]), ("_not_formats", ["date"]),
                                         ("_some_member", [{"names": True, "value": False}]), ("_extra_witness", 1),
                                         ("_contains_also", [{"type": "string"}])])
def test_the_lowerings_own_words_are_unknown_words_in_a_schema(word, value):
    """The words the lowering once wrote a complement's leaves in (``_not_values`` ...) are unknown
    words in a user's schema like any other: ignored by ``compile`` and ``validate`` alike, here,
    under ``$ref``, under ``not`` and in a draft 7 document. (``_not_integer`` had refused ``3``,
    ``_extra_witness`` had crashed.)"""
    docs = [3, 3.5, "a", "b", None, {}, {"a": 1}, [], ["a"], [1]]
    for schema in ({word: value}, {"$defs": {"d": {word: value}}, "$ref": "#/$defs/d"},
                   {"not": {word: value, "type": "integer"}},
                   {"$schema": "http://json-schema.org/draft-07/schema#", "items": {word: value}}):
        grammar = constrain.compile(schema, cache=False, property_order="any", whitespace="compact")
        oracle = jsonschema.Draft202012Validator(schema) if "$schema" not in schema else jsonschema.Draft7Validator(schema)
        for doc in docs:
            expected = oracle.is_valid(doc)
            assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) == expected, (schema, doc)
            assert (constrain.validate(doc, schema) == []) == expected, (schema, doc)


def test_one_of_on_a_discriminator_read_through_allof_and_refs():
    """Branches that pin a name their shared base requires (``allOf: [{$ref: base}, ...]``) are
    disjoint: the oneOf is their union, with no complements (ten of them had been a product past 256
    branches), and still exact."""
    kinds = [f"k{i}" for i in range(10)]
    schema = {"$defs": {"base": {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}},
              "oneOf": [{"allOf": [{"$ref": "#/$defs/base"}, {"properties": {"kind": {"const": k}, "n": {"type": "integer"}}}]}
                        for k in kinds]}
    grammar = constrain.compile(schema, property_order="any", whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema)
    for doc in [{"kind": "k3"}, {"kind": "k3", "n": 1}, {"kind": "k3", "n": "x"}, {"kind": "x"}, {"n": 1}, {}]:
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) == oracle.is_valid(doc), doc


def test_one_of_ignores_pins_its_draft_ignores():
    """In a draft 7 document a ``$ref`` hides its siblings: branches that differ only there are the
    same schema, so every value matches both and the oneOf allows nothing."""
    for wrap in (lambda s: s, lambda s: {"allOf": [s]}):
        schema = {"$schema": "http://json-schema.org/draft-07/schema#",
                  "definitions": {"base": {"type": "object", "required": ["kind"]}},
                  "oneOf": [wrap({"$ref": "#/definitions/base", "properties": {"kind": {"const": k}}}) for k in ("a", "b")]}
        assert agree(schema, jsonschema.Draft7Validator) == "unsatisfiable"


def test_one_of_of_required_names_under_closed_properties():
    """Both names are declared (one pinned by an enum), additional ones forbidden: a name one branch
    requires is allowed by the other, so the branches overlap and both at once is invalid (the proof
    had taken a declared, unpinned name for a forbidden one: MaskBench o90391)."""
    schema = {"type": "object", "properties": {"v": {"type": "string"}, "c": {"enum": ["s", "b"]}},
              "additionalProperties": False, "oneOf": [{"required": ["v"]}, {"required": ["c"]}]}
    assert agree(schema) == "compiled"
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    assert grammar.accepts('{"v":"1"}') and not grammar.accepts('{"v":"1","c":"s"}')


def test_branches_alike_but_for_one_name_compile_exactly():
    """Branches that say the same of most names (MaskBench o25751: repositories of four kinds, the
    kind not required): each branch is met with the complements of the others part by part, the
    cases it rules out dropped as they meet (a name it requires ruled out, the schema it gives a
    name negated, no type in common), so the product stays small (it passed 256 combined cases and
    was refused before) and exact."""
    names = ["alias", "name", "url", "path", "owner", "group"]
    branch = {"type": "object", "required": names, "properties": {n: {"type": "string", "minLength": 1} for n in names}}
    schema = {"type": "array", "items": {"oneOf": [{**branch, "properties": {**branch["properties"], "kind": {"const": k}}}
                                                   for k in "abcd"]}}
    grammar = constrain.compile(schema, property_order="any", whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema)
    item = dict.fromkeys(names, "x")
    for doc in ([item], [{**item, "kind": "a"}], [{**item, "kind": "e"}], [{**item, "alias": ""}],
                [{**item, "kind": "b"}, {**item, "kind": "d"}], [{**item, "kind": 1}], [{"kind": "a"}]):
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) == oracle.is_valid(doc), doc
    assert grammar.find_trap(3000) is None
    alike = {"properties": {"a": {"type": "string"}, "b": {"const": 1}}}
    assert agree({"oneOf": [alike, {"properties": {**alike["properties"], "b": {"const": 2}}}]}) == "compiled"
    assert agree({"type": "object", "required": ["a"], "properties": {"a": {"minLength": 1}},
                  "not": {"properties": {"a": {"minLength": 1}}}}) == "unsatisfiable"


FILTERS = {  # MaskBench o65012 in small: a oneOf of overlapping closed object kinds, one recursive
    "type": "object", "properties": {"filter": {"$ref": "#/definitions/bool"}}, "additionalProperties": False,
    "definitions": {
        "allowed": {"oneOf": [{"$ref": "#/definitions/basic"}, {"$ref": "#/definitions/exist"},
                              {"$ref": "#/definitions/bool"}]},
        "basic": {"type": "object", "properties": {"kind": {"enum": ["match", "in"]}, "field": {"type": "string"},
                                                   "value": {}, "range": {"type": "array"}},
                  "oneOf": [{"required": ["field", "value", "kind"]}, {"required": ["field", "range", "kind"]}],
                  "additionalProperties": False},
        "exist": {"type": "object", "properties": {"kind": {"enum": ["exist"]}, "field": {"type": "string"}},
                  "required": ["field", "kind"], "additionalProperties": False},
        "bool": {"type": "object", "properties": {"kind": {"enum": ["bool"]},
                                                  "must": {"type": "array", "items": {"$ref": "#/definitions/allowed"}},
                                                  "should": {"type": "array", "items": {"$ref": "#/definitions/allowed"}}},
                 "additionalProperties": False},
    },
}


def test_cases_a_closed_object_implies_or_rules_out_are_dropped():
    """The recursive kind met with the others' complements: a case "some name the other requires
    is missing" holds of a closed object that does not name it (the whole union holds: dropped),
    and a case requiring such a name is empty (dropped). Left in, each was one more configuration
    per nesting level of the lazy DFA (12 times more per level, 8,640 at depth three), and exact."""
    grammar = constrain.compile(FILTERS, cache=False, whitespace="compact", property_order="any")
    oracle = jsonschema.Draft7Validator(FILTERS)
    for doc in ({"filter": {"must": [{"field": "a", "kind": "exist"}]}}, {"filter": {"must": [{}]}},
                {"filter": {"must": [{"must": [{"field": "a", "value": 1, "kind": "match"}]}]}},
                {"filter": {"must": [{"field": "a", "value": 1, "range": [], "kind": "match"}]}},
                {"filter": {"should": [{"field": "a", "kind": "exist", "must": []}]}}, {"filter": {"kind": "bool"}},
                {"filter": {"must": [{"field": "a", "range": [], "kind": "in"}, {"kind": "bool", "should": []}]}}):
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) == oracle.is_valid(doc), doc
    assert grammar.find_trap(2000) is None
    sizes = []
    for prefix in ('{"filter":{"must":[{', '{"filter":{"must":[{"must":[{', '{"filter":{"must":[{"must":[{"should":[{'):
        state = grammar.start
        for byte in prefix.encode():
            state = grammar.step(state, byte)
        sizes.append(len(grammar.automaton._kernels[state]))  # the state's configurations
    assert sizes[2] <= 6 * sizes[1] and sizes[1] <= 6 * sizes[0], sizes


def test_a_reference_negated_is_read_where_it_is_written():
    """The same ``$ref`` text under two base URIs names two schemas: a name's schema in one branch
    is not taken for the one the other branch's complement negates because they are written alike
    (in a document with identifiers below its root nothing is compared by its text)."""
    schema = {"$id": "http://example.test/root", "oneOf": [
        {"$id": "http://example.test/a/", "$defs": {"s": {"type": "string"}}, "properties": {"v": {"$ref": "#/$defs/s"}}},
        {"$id": "http://example.test/b/", "$defs": {"s": {"type": "integer"}}, "properties": {"v": {"$ref": "#/$defs/s"}}}]}
    grammar = constrain.compile(schema, property_order="any", whitespace="compact", cache=False)
    assert grammar.accepts('{"v":"x"}') and grammar.accepts('{"v":1}')  # each matches one branch only
    assert not grammar.accepts("{}") and not grammar.accepts('{"v":null}') and not grammar.accepts("3")


def _nodes(schemas: list, read) -> list:
    """Each of ``schemas`` as its node (``read``: ``_reader``'s)."""
    return [read(s) for s in schemas]


def _reader(schema=True):
    """What the lowering hands ``one_of``: the node of a schema, read in ``schema``'s document."""
    from compiler.build import Reader
    from compiler.refs import SchemaDocument

    return Reader(SchemaDocument(schema)).of


def _conditional(test_value, required_in_test, then, else_):
    test = {"properties": {"a": {"const": test_value}}}
    if required_in_test:
        test["required"] = ["a"]
    out = {"if": test, "then": then}
    if else_ is not None:
        out["else"] = else_
    return out


cases = st.sampled_from([True, {"required": ["b"]}, {"required": ["c"]}, {"properties": {"b": {"type": "string"}}},
                         {"properties": {"c": {"const": None}}}, {"maxProperties": 2}])
chains = st.lists(st.tuples(st.sampled_from([1, "a", None, 2, "b", 3, "c", 4, 5, 6]), st.booleans(), cases,
                            st.none() | cases), min_size=9, max_size=12)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(chains, st.booleans())
def test_chains_of_discriminated_conditionals_compile_exactly(chain, required):
    """An ``allOf`` of nine to twelve ``if``/``then`` on one discriminator (a product of up to 4,096
    branches, refused past 256 before) keeps only the branches the discriminator's values allow
    together, and accepts what python-jsonschema does."""
    schema = {"type": "object", "allOf": [_conditional(*c) for c in chain], **({"required": ["a"]} if required else {})}
    assert agree(schema) in ("compiled", "unsatisfiable")


def test_a_schema_changed_between_two_compiles_is_read_again():
    """What a conditional's test pins is read from the schema as it is at each compile (the product's
    facts are not kept from one compile to the next)."""
    chain = [_conditional(v, False, {"required": ["b" if v == 3 else "c"]}, None) for v in range(10)]
    schema = {"type": "object", "required": ["a"], "allOf": chain}
    assert constrain.compile(schema, cache=False).accepts('{"a":3,"b":1}')
    chain[3]["if"]["properties"]["a"] = {"const": 5}  # a = 5 now meets two tests: b and c required
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts('{"a":5,"b":1,"c":1}') and not grammar.accepts('{"a":5,"c":1}')
    assert grammar.accepts('{"a":3}')


@pytest.mark.parametrize("inner", [
    {"type": "integer", "format": "hostname"}, {"type": ["string", "null"], "format": "int32"},
    {"type": "string", "minimum": 3, "multipleOf": 2}, {"type": "integer", "minimum": 3, "minLength": 2, "pattern": "a"},
    {"type": "array", "required": ["a"], "maxProperties": 0, "minItems": 1},
    {"type": ["object", "boolean"], "contains": {"type": "string"}, "properties": {"a": {"type": "integer"}}},
])
def test_not_of_a_keyword_its_types_never_meet_is_not_of_the_types(inner):
    """A keyword of one JSON type beside a ``type`` that excludes it holds of every value the type
    allows, so ``not`` of both is ``not`` of the type alone: no refusal where the keyword's own
    complement would be one (a format of bounded length, a number format)."""
    values = [None, True, 0, 4, 2.5, "", "a", "host.example", [], [1], {}, {"a": 1}, {"a": "x"}]
    assert agrees_on({"not": inner}, values) == "compiled"


def test_one_of_disjoint_by_what_every_branch_of_a_branch_pins_or_an_additional_value():
    """A branch that is itself a ``oneOf`` requires and pins what all its branches do (``type``,
    a string in each), and a name another branch leaves to ``additionalProperties: {enum: [false]}``
    can hold no string: the two are disjoint, so the oneOf is their union (MaskBench's composer
    repositories had been refused as a product past 256 branches). What only some branches require
    proves nothing."""
    from compiler.one_of import overlaps
    kinds = {k: {"type": "object", "required": ["type", "url"], "properties": {"type": {"enum": [k]}, "url": {"type": "string"}}}
             for k in ("vcs", "path", "pear")}
    flag = {"type": "object", "additionalProperties": {"enum": [False]}, "minProperties": 1, "maxProperties": 1}
    schema = {"$defs": {**kinds, "repository": {"type": "object", "oneOf": [{"$ref": f"#/$defs/{k}"} for k in kinds]}},
              "type": "array", "items": {"oneOf": [{"$ref": "#/$defs/repository"}, flag]}}
    grammar = constrain.compile(schema, property_order="any", whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema)
    docs = [[{"type": "vcs", "url": "u"}], [{"packagist.org": False}], [{"type": False}], [{"type": "vcs"}],
            [{"type": "git", "url": "u"}], [{"a": False, "b": False}], [{"type": "path", "url": "u", "x": False}]]
    for doc in docs:
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) == oracle.is_valid(doc), doc
    read = _reader(schema)  # (a lone $ref is followed to its target)
    assert overlaps(_nodes([{"$ref": "#/$defs/repository"}, flag], read)) == [set(), set()]
    some = {"type": "object", "anyOf": [{"required": ["x"]}, {"required": ["x", "y"]}]}
    assert overlaps(_nodes([some, {"type": "object", "properties": {"x": False}}], _reader())) == [set(), set()]
    some["anyOf"][1] = {"required": ["y"]}  # x is required by one branch only
    assert overlaps(_nodes([some, {"type": "object", "properties": {"x": False}}], _reader())) == [{1}, {0}]
    pinned = {"type": "object", "required": ["t"], "properties": {"t": {"enum": [1, "a"]}}}
    assert overlaps(_nodes([pinned, {"type": "object", "additionalProperties": {"enum": [False]}}], _reader())) == [set(), set()]
    pinned["properties"]["t"]["enum"].append(False)  # false is an additional value too
    assert overlaps(_nodes([pinned, {"type": "object", "additionalProperties": {"enum": [False]}}], _reader())) == [{1}, {0}]
    # what a lone $ref leads to is what pins a branch, or a name's value
    defs = {"$defs": {"a": {"enum": [1, "x"]}, "b": {"const": 2}, "t": {"type": "object", "properties": {"k": {"$ref": "#/$defs/b"}}}}}
    read = _reader(defs)
    assert overlaps(_nodes([{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}], read)) == [set(), set()]
    assert overlaps(_nodes([{"type": "object", "properties": {"k": {"const": 1}}, "required": ["k"]}, {"$ref": "#/$defs/t"}], read)) == [set(), set()]
    assert overlaps(_nodes([{"$ref": "#/$defs/a"}, {"enum": [2, "x"]}], read)) == [{1}, {0}]


_KEYS = ["a", "b", "ab", "ba", "xa", "bb", "c"]
_KEY_VALUES = [1, 2.5, "s", None]
_KEY_OBJECTS = [dict(zip(keys, values)) for n in range(4) for keys in itertools.combinations(_KEYS, n)
                for values in itertools.islice(itertools.product(_KEY_VALUES, repeat=n), 0, None, 3 if n > 1 else 1)]
_MEMBER = st.sampled_from([True, False, {"type": "integer"}, {"type": "string"}, {"type": ["number", "null"]},
                           {"multipleOf": 2.5}, {"not": {"type": "null"}}])
_OBJECT_PART = st.fixed_dictionaries({}, optional={
    "properties": st.dictionaries(st.sampled_from(["a", "b", "ab"]), _MEMBER, max_size=2),
    "patternProperties": st.dictionaries(st.sampled_from(["^a", "b$", "^x", "^.$"]), _MEMBER, min_size=1, max_size=2),
    "additionalProperties": _MEMBER,
    "required": st.lists(st.sampled_from(["a", "ba", "c"]), max_size=2, unique=True),
})


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_OBJECT_PART, min_size=2, max_size=3), st.sampled_from([{}, {"minProperties": 2}, {"maxProperties": 1}]),
       st.booleans())
def test_objects_met_with_different_patterns_and_additional_properties_agree_with_jsonschema(parts, counts, negated):
    """An allOf of objects whose patternProperties and additionalProperties differ keeps each side's
    additionalProperties to the keys its own names and patterns leave (``_additional_unless``), a
    required name matching several patterns meets them all, and ``multipleOf`` values gather (2.5
    and 2 meet at 10); negated too. Exact against python-jsonschema on every object over seven keys."""
    schema = {"type": "object", "allOf": parts, **counts}
    if negated:
        schema = {"type": "object", "not": schema}
    outcome = agrees_on(schema, _KEY_OBJECTS)
    event(outcome)
    if outcome == "compiled":
        assert constrain.compile(schema, property_order="any", whitespace="compact", cache=False).find_trap(500) is None


@pytest.mark.parametrize("third", [{"properties": {"ab": {}, "xb": {}, "ax": {}}}, {"required": ["xb", "ax"]},
                                   {"required": ["xb"], "not": {"patternProperties": {"x": {"minimum": 5}}}},
                                   {"enum": [{"xb": 1}, {"xb": 1.5}, {"ax": "s"}, {"c": 2}, {"c": 1.5}]}])
def test_a_sides_additional_properties_reach_names_met_later(third):
    """Once two objects met keep each side's additionalProperties apart, a name a later part brings
    (named, required, in a complement's witness, or in an enum's value the validator filters) meets
    the side whose patterns it escapes: "xb" matches "b$" only, so it is A's additional, an integer."""
    a = {"patternProperties": {"^a": {}}, "additionalProperties": {"type": "integer"}}
    b = {"patternProperties": {"b$": {}}, "additionalProperties": {"type": "number"}}
    values = [{"xb": 1}, {"xb": "s"}, {"xb": 1.5}, {"ax": 1.5, "xb": 1}, {"ax": "s", "xb": 1}, {"ab": "s", "xb": 2},
              {"c": 1.5}, {"c": 1}, {"ax": 1, "xb": 1, "c": 1}]
    assert agrees_on({"type": "object", "allOf": [a, b, third]}, values) == "compiled"


def test_multiple_of_values_met_are_each_kept():
    """Two ``multipleOf`` meet at their least common multiple, exactly as decimals (0.1 and 0.15 at
    0.3); each still bounds a portable quotient, and each is named by the validator."""
    schema = {"allOf": [{"multipleOf": 0.1}, {"multipleOf": 0.15}]}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    assert [grammar.accepts(t) for t in ("0.3", "0.6", "0.15", "0.2", "3", "0.45")] == [True, True, False, False, True, False]
    # a multiple of 0.3 whose quotient by 0.1 is past what Ajv divides exactly, though not by 0.3
    assert not grammar.accepts("210000000000000000000") and grammar.accepts("90000000000000000000")
    assert constrain.validate(0.45, schema) == ["/: not a multiple of 0.1"]


_NAME_LEAVES = st.sampled_from([{"pattern": "^a"}, {"pattern": "b$"}, {"maxLength": 1}, {"minLength": 2},
                                {"enum": ["a", "ab", "ba", 3]}, {"const": "c"}, {"type": "string"}, {"type": "integer"},
                                {"minimum": 3}, {"$ref": "#/$defs/short"}, True, False])
_NAME_SCHEMAS = st.recursive(_NAME_LEAVES, lambda inner: st.one_of(
    st.builds(lambda s: {"not": s}, inner),
    *(st.lists(inner, min_size=1, max_size=3).map(lambda parts, w=w: {w: parts}) for w in ("allOf", "anyOf", "oneOf")),
    st.builds(lambda a, b: {**a, "allOf": [b]} if isinstance(a, dict) else {"allOf": [a, b]}, inner, inner)), max_leaves=5)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_NAME_SCHEMAS, min_size=1, max_size=2))
def test_property_names_under_every_boolean_keyword_agree_with_jsonschema(names):
    """``propertyNames`` is a language of keys, closed under ``not``, ``allOf``, ``anyOf``, ``oneOf``
    and a ``$ref`` beside other words; several met in one allOf are each kept; words of other types
    hold of every key. Exact against python-jsonschema."""
    schema = {"$defs": {"short": {"maxLength": 2}}, "type": "object", "allOf": [{"propertyNames": n} for n in names]}
    assert agrees_on(schema, _KEY_OBJECTS) in ("compiled", "unsatisfiable")


def test_literals_beside_products_past_the_bound_are_judged_one_by_one():
    """A ``not`` of a union of nine names' schemas meets 512 cases, and an allOf of two 17-branch
    unions 289 pairs, past the bounds (refused alone: key patterns keep the union from being
    decided member by member); beside an ``enum`` or ``const`` (wherever in the allOf) each
    value is judged against the rest instead: exact, and no product."""
    union = {"anyOf": [{"required": [f"k{i}"], "patternProperties": {f"^k{i}$": {"type": "integer"}}} for i in range(9)]}
    with pytest.raises(constrain.SchemaTooComplex, match="'not' of more than"):
        constrain.compile({"type": "object", "not": union}, cache=False)
    values = [{"k0": 1}, {"k0": "s"}, {}, {"k3": 2, "k5": "x"}, {"k8": None}, "k0"]
    assert agrees_on({"enum": values, "not": union}, values + [{"k1": "s"}]) == "compiled"
    least = {"anyOf": [{"minProperties": i} for i in range(17)]}
    most = {"anyOf": [{"maxProperties": i + 3} for i in range(17)]}
    with pytest.raises(constrain.UnsupportedKeyword, match="more than 256 combined branches"):
        constrain.compile({"allOf": [least, most]}, cache=False)
    values = [{}, {"a": 1}, {"a": 1, "b": 2, "c": 3, "d": 4}, 5]
    for schema in ({"allOf": [{"enum": values}, least, most]}, {"allOf": [least, {"enum": values}, most]},
                   {"allOf": [least, most], "const": {"a": 1}}):
        assert agrees_on(schema, values + [{"x": 1}]) == "compiled", schema


def test_a_branch_holding_both_enum_and_const_meets_as_both():
    """A branch with ``enum`` and ``const`` allows only the values both allow, met with another
    branch's literals too (hypothesis found ``if enum [true] then {const: null, enum: [true]}``
    accepting ``true``: the meet read the branch's enum and dropped its const)."""
    schema = {"if": {"enum": [True]}, "then": {"const": None, "enum": [True]}, "else": {"prefixItems": [{"type": "integer"}]}}
    assert agrees_on(schema, [True, False, None, [1], ["a"], 2]) == "compiled"
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile({"allOf": [{"enum": [True]}, {"const": None, "enum": [True]}]}, cache=False)


def test_one_of_disjoint_where_key_patterns_leave_a_required_name_out():
    """A closed object whose key patterns no reading matches a name on (``^[^$]`` and "$oid")
    cannot hold that name: a branch requiring it is disjoint from it, so the oneOf is a union, with
    no complements (MongoDB's extended JSON, o10566: its complements' cases had made one cold mask
    take 2.8 s at the third level of nesting). A pattern that may match the name proves nothing."""
    from compiler.one_of import overlaps
    sub = {"type": "object", "patternProperties": {"^[^$]": {"$ref": "#/$defs/value"}}, "additionalProperties": False}
    oid = {"type": "object", "properties": {"$oid": {"type": "string"}}, "required": ["$oid"], "additionalProperties": False}
    schema = {"$defs": {"value": {"oneOf": [{"type": "string"}, {"$ref": "#/$defs/oid"}, {"$ref": "#/$defs/sub"}]},
                        "oid": oid, "sub": sub}, "$ref": "#/$defs/value"}
    assert overlaps(_nodes([sub, oid], _reader(schema))) == [set(), set()]
    loose = {**sub, "patternProperties": {"^[^x]": {}}}  # "$oid" matches: may overlap
    assert overlaps(_nodes([loose, oid], _reader(schema))) == [{1}, {0}]
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema)
    for doc in ({"a": {"$oid": "x"}}, {"a": {"b": "c"}}, {"$oid": "x"}, {"$oid": 1}, {"a": {"$oid": "x", "b": "c"}},
                {}, {"a": {}}, "s", {"a": {"$x": "y"}}):
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) == oracle.is_valid(doc), doc


def test_a_branch_both_unions_hold_is_met_once():
    """Four unions that each hold the same two branches beside three of their own (the
    complements of a ``oneOf``'s branches, each "a shared name is wrong"): met pair by pair they
    were 625 branches, past the bound; a shared branch met with anything is within itself, so it
    stands alone and the product keeps 83. Exact; a ``$ref`` met again with what it met already
    (each pair holds a branch of its own: 257 branches, now 17)."""
    shared = [{"type": "object", "required": ["x"]}, {"type": "object", "required": ["z"], "properties": {"z": {"const": 1}}}]
    parts = [{"anyOf": [*json.loads(json.dumps(shared)),
                        *({"type": "object", "required": [f"{c}{i}"], "properties": {f"{c}{i}": {"type": "integer"}}}
                          for c in "pqr")]} for i in range(4)]
    values = [{}, {"x": 1}, {"z": 1}, {"z": 2}, {"p0": 1, "q1": 2, "r2": 3, "p3": 4}, {"p0": 1, "q1": 2, "r2": 3},
              {"p0": "a", "q1": 2, "r2": 3, "p3": 4}, {"x": 1, "p0": "a"}, 5]
    assert agrees_on({"allOf": parts}, values) == "compiled"
    u, v = ({"anyOf": [{"type": "string", "minLength": n}, *({"type": "object", "required": [f"{c}{i}"]} for i in range(4))]}
            for n, c in ((0, "k"), (1, "m")))
    again = {"$defs": {"u": u, "v": v}, "allOf": [{"$ref": "#/$defs/u"}, {"$ref": "#/$defs/v"}, {"$ref": "#/$defs/u"},
                                                  {"$ref": "#/$defs/u"}]}
    assert agrees_on(again, ["s", "", {}, {"k2": 1}, {"k0": 1, "m3": 1}, {"m1": 1}, 1]) == "compiled"


@pytest.mark.parametrize("met", [{"allOf": [{"pattern": "x"}, {"pattern": "y"}]},
                                 {"allOf": [{"format": "date"}, {"format": "email"}]}])
def test_a_branch_whose_patterns_or_formats_met_is_negated_one_at_a_time(met):
    """A ``oneOf`` of objects decided member by member leaves its branches' strings to a ``oneOf`` of
    their own, each branch written without the other: the complement of a branch whose ``allOf``
    met two patterns (or formats) is a string failing either (it was a TypeError on the pair)."""
    schema = {"oneOf": [{"type": ["object", "string"], "properties": {"a": {"type": "integer"}}, **met},
                        {"type": ["object", "string"], "properties": {"a": {"type": "string"}}, "pattern": "z"}]}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    for value in ["xy", "xyz", "z", "x", "", "yx", "zxy", "2020-01-01", "a@b.c", "z@b.c", {"a": 1}, {"a": "s"}, {}]:
        text = json.dumps(value, separators=(",", ":"))
        assert grammar.accepts(text) == oracle.is_valid(value), text
    assert grammar.find_trap(500) is None


_MULTI_TYPED = st.tuples(
    st.lists(st.sampled_from(["object", "string", "number", "integer", "array", "null"]), min_size=2, max_size=3, unique=True),
    st.sampled_from([{}, {"format": "date"}, {"pattern": "^a"}, {"minLength": 2}, {"properties": {"a": {"format": "date"}}},
                     {"allOf": [{"pattern": "a"}, {"pattern": "b"}]}, {"allOf": [{"format": "date"}, {"maxLength": 10}]},
                     {"required": ["a"]}, {"multipleOf": 2, "allOf": [{"multipleOf": 3}]}]),
).map(lambda t: {"type": t[0], **t[1]})
_FORMATTED = ["2020-01-01", "x@y.z", {"a": "2020-01-01"}, [None], 6, 4]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.recursive(leaf | _MULTI_TYPED, combine, max_leaves=6), st.booleans())
def test_branches_of_several_types_agree_with_jsonschema_and_its_formats(schema, below):
    """Branches that allow objects beside other types (a ``oneOf`` of objects decided member by
    member lowers the other types apart), with patterns, formats and steps met in an ``allOf``:
    exact against python-jsonschema asserting formats, at the top and one level down."""
    schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]} if below else schema
    oracle = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    try:
        grammar = constrain.compile(schema, property_order="any", whitespace="compact", cache=False)
    except constrain.Unsatisfiable:
        assert not any(oracle.is_valid(v) for v in UNIVERSE + _FORMATTED), schema
        return event("unsatisfiable")
    except (constrain.UnsupportedKeyword, constrain.SchemaTooComplex):
        return event("refused")
    for value in UNIVERSE + _FORMATTED:
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == oracle.is_valid(value), (schema, value)
    assert grammar.find_trap(500) is None, schema
    event("compiled")


@pytest.mark.parametrize("negated", [{"minimum": 5, "exclusiveMinimum": True}, {"maximum": 5, "exclusiveMaximum": True},
                                     {"minimum": 5, "exclusiveMinimum": False}, {"maximum": 5},
                                     {"minimum": 1, "maximum": 5, "exclusiveMaximum": True}])
def test_not_of_draft4_bounds_reads_each_flag_on_its_bound(negated):
    """Draft 4's boolean exclusive bounds, negated: the complement reads the bound the flag makes
    exclusive (or not) from the node, so ``not {minimum: 5, exclusiveMinimum: true}`` holds 5."""
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "not": negated}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    oracle = jsonschema.Draft4Validator(schema)
    for value in [0, 1, 4, 4.5, 5, 5.0, 5.5, 6, "a", None]:
        assert grammar.accepts(json.dumps(value)) == oracle.is_valid(value), value


@pytest.mark.parametrize("parts", [
    [{"minimum": 1, "exclusiveMinimum": True}, {"minimum": 2}, {"maximum": 5, "exclusiveMaximum": True}, {"maximum": 4.5}],
    [{"minimum": 2, "exclusiveMinimum": True}, {"minimum": 2}, {"maximum": 4, "exclusiveMaximum": False}],
    [{"minimum": 2, "exclusiveMinimum": True}, {"maximum": 2}],
    [{"type": "object", "properties": {"a": {"minimum": 3, "exclusiveMinimum": True}}}, {"properties": {"a": {"maximum": 4}}}]])
def test_draft4_bounds_meet_in_an_allof(parts):
    """Draft 4's boolean exclusive bounds met in an ``allOf``: each sits on its bound in the node,
    so the meet takes the tighter of each. (Met as dicts of keywords, one side's flag went onto the
    other's bound, refusing 2 beside ``minimum: 2`` and an exclusive minimum of 1, and two flags
    were refused.)"""
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "allOf": parts}
    oracle = jsonschema.Draft4Validator(schema)
    values = [0, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 4.6, 5, 6, "a"]
    values += [{"a": v} for v in values]
    if not any(oracle.is_valid(v) for v in values):
        with pytest.raises(constrain.Unsatisfiable):
            constrain.compile(schema, whitespace="compact", cache=False)
        return
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    for value in values:
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == oracle.is_valid(value), value
