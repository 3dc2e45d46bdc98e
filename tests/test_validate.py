"""Behaviour of `constrain.validate`: precise errors, the compiler's semantics, python-jsonschema's verdicts."""

import copy
import json
import unicodedata

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import constrain
from compiler.errors import InvalidSchema, SchemaError, UnsupportedKeyword
from constrain.validate import MAX_DEPTH, Validator, json_equal, validate

ORDER = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "minLength": 3},
        "status": {"enum": ["open", "closed"]},
        "items": {"type": "array", "items": {
            "type": "object", "properties": {"qty": {"type": "integer", "minimum": 1}}}},
    },
    "required": ["sku"],
    "additionalProperties": False,
}


# --- the wording of errors ------------------------------------------------------------------------

def test_error_strings_name_pointer_and_problem():
    """Errors read "<pointer>: <problem>" for every failure the issue lists."""
    instance = {"sku": "AB", "status": "lost", "x": 1, "items": [{"qty": 0}, {"qty": 2.5}]}
    assert validate(instance, ORDER) == [
        "/sku: shorter than 3",
        '/status: must be one of ["open", "closed"]',
        "/x: not allowed",
        "/items/0/qty: below minimum 1",
        "/items/1/qty: expected integer",
    ]


def test_missing_required_property_is_named_by_its_pointer():
    """A missing required name is reported at the pointer it would have had."""
    assert validate({}, ORDER) == ["/sku: required"]


def test_root_is_written_as_slash():
    """The root pointer is shown as "/"."""
    assert validate([], ORDER) == ["/: expected object"]


def test_valid_instance_has_no_errors():
    """A valid instance gives an empty list."""
    assert validate({"sku": "ABC", "items": [{"qty": 2}], "status": "open"}, ORDER) == []


def test_pointer_segments_are_escaped():
    """Property names with / and ~ are JSON-pointer escaped in errors."""
    schema = {"properties": {"a/b": {"type": "string"}, "c~d": {"type": "string"}}}
    assert validate({"a/b": 1, "c~d": 2}, schema) == ["/a~1b: expected string", "/c~0d: expected string"]


@pytest.mark.parametrize("schema, instance, message", [
    ({"type": "string", "maxLength": 2}, "abc", "/: longer than 2"),
    ({"type": "number", "maximum": 5}, 6, "/: above maximum 5"),
    ({"exclusiveMinimum": 1}, 1, "/: at or below exclusive minimum 1"),
    ({"exclusiveMaximum": 1.5}, 2, "/: at or above exclusive maximum 1.5"),
    ({"multipleOf": 0.5}, 0.7, "/: not a multiple of 0.5"),
    ({"minItems": 2}, [1], "/: fewer than 2 items"),
    ({"maxItems": 0}, [1], "/: more than 0 items"),
    ({"minProperties": 1}, {}, "/: fewer than 1 properties"),
    ({"maxProperties": 0}, {"a": 1}, "/: more than 0 properties"),
    ({"const": "on"}, "off", '/: must be "on"'),
    ({"type": ["string", "null"]}, 1, "/: expected string or null"),
    (False, 1, "/: not allowed"),
])
def test_each_keyword_has_a_sentence(schema, instance, message):
    """Every keyword failure is worded as pointer plus a short reason."""
    assert validate(instance, schema) == [message]


def test_anyof_of_types_merges_into_one_type_error():
    """`anyOf` of plain types (pydantic's Optional) reads as one "expected X or Y"."""
    schema = {"properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}
    assert validate({"n": "3"}, schema) == ["/n: expected integer or null"]


def test_anyof_reports_the_branch_of_the_right_type():
    """When only one branch has the instance's type, its errors are the ones reported."""
    schema = {"anyOf": [{"type": "object", "required": ["id"]}, {"type": "null"}]}
    assert validate({}, schema) == ["/id: required"]


def test_oneof_matching_two_branches_fails():
    """`oneOf` needs exactly one matching branch."""
    schema = {"oneOf": [{"type": "integer"}, {"minimum": 0}]}
    assert validate(-1, schema) == []
    assert validate(3, schema) == ["/: matches more than one alternative of oneOf (0, 1)"]
    assert validate("x", {"oneOf": [{"type": "integer"}, {"type": "null"}]}) == ["/: expected integer or null"]


# --- the compiler's semantics ----------------------------------------------------------------------

def test_true_is_neither_integer_nor_number():
    """Booleans are not numbers; 3.5 and 1.0 are not integers (the grammar reads the text "1.0")."""
    assert validate(True, {"type": "integer"}) == ["/: expected integer"]
    assert validate(False, {"type": "number"}) == ["/: expected number"]
    assert validate(3.5, {"type": "integer"}) == ["/: expected integer"]
    assert validate(1.0, {"type": "integer"}) == ["/: expected integer"]
    assert validate(3, {"type": "number"}) == []


def test_enum_uses_json_equality():
    """`true != 1`, `1 == 1.0`, objects compare without order, arrays with order."""
    assert validate(True, {"enum": [1]}) == ["/: must be one of [1]"]
    assert validate(1, {"enum": [True]}) == ["/: must be one of [true]"]
    assert validate(1.0, {"const": 1}) == []
    assert validate({"b": 1, "a": [1, 2]}, {"const": {"a": [1, 2], "b": 1}}) == []
    assert validate([2, 1], {"const": [1, 2]}) != []
    assert json_equal([True, {"x": 1.0}], [True, {"x": 1}])


def test_strings_compare_scalar_by_scalar():
    """NFC and NFD spellings are different values; length counts scalars."""
    nfc, nfd = "é", unicodedata.normalize("NFD", "é")
    assert validate(nfd, {"enum": [nfc]}) != []
    assert validate(nfc, {"enum": [nfc]}) == []
    assert validate("😀", {"maxLength": 1}) == []
    assert validate(nfd, {"maxLength": 1}) == ["/: longer than 1"]


def test_numbers_are_exact_decimals():
    """multipleOf and bounds compare the decimal text, not binary floating point."""
    assert validate(0.3, {"multipleOf": 0.1}) == []
    assert validate(10**30 + 1, {"multipleOf": 2}) == ["/: not a multiple of 2"]
    assert validate(0.30000000000000004, {"maximum": 0.3}) == ["/: above maximum 0.3"]
    assert validate(10**23, {"maximum": 1e23}) == []


def test_draft4_boolean_exclusive_bounds():
    """Draft 4's `exclusiveMinimum: true` makes `minimum` strict; `false` leaves it inclusive."""
    assert validate(5, {"minimum": 5, "exclusiveMinimum": True}) == ["/: at or below exclusive minimum 5"]
    assert validate(5, {"minimum": 5, "exclusiveMinimum": False}) == []
    assert validate(5, {"maximum": 5, "exclusiveMaximum": True}) == ["/: at or above exclusive maximum 5"]
    assert validate(5, {"exclusiveMaximum": True}) == []


def test_draft7_tuple_items_and_additional_items():
    """A list under `items` is a tuple; `additionalItems` governs the rest."""
    schema = {"items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False}
    assert validate(["a", 1], schema) == []
    assert validate(["a", "b"], schema) == ["/1: expected integer"]
    assert validate(["a", 1, None], schema) == ["/2: not allowed"]


def test_prefix_items_and_items_false():
    """2020-12 tuples: `prefixItems` then `items` for the rest."""
    schema = {"prefixItems": [{"type": "string"}], "items": False}
    assert validate(["a"], schema) == []
    assert validate(["a", 1], schema) == ["/1: not allowed"]
    assert validate(["a", 1], {"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}) == []


def test_pattern_properties_and_additional_properties():
    """Names matching a pattern use its schema; the rest fall to additionalProperties."""
    schema = {"properties": {"id": {"type": "integer"}},
              "patternProperties": {"^x-": {"type": "string"}},
              "additionalProperties": False}
    assert validate({"id": 1, "x-a": "s"}, schema) == []
    assert validate({"x-a": 1}, schema) == ["/x-a: expected string"]
    assert validate({"y": 1}, schema) == ["/y: not allowed"]


def test_pattern_is_an_unanchored_ecma_search():
    """`pattern` searches; `\\d` is ASCII only, as in ECMA-262 (unlike Python's `re`)."""
    assert validate("xx12yy", {"pattern": "[0-9]+"}) == []
    assert validate("١٢", {"pattern": "^\\d+$"}) == ['/: does not match pattern "^\\\\d+$"']
    assert validate("é", {"pattern": "^\\w$"}) != []
    assert validate("abc\n", {"pattern": "^abc$"}) != []


def test_unsupported_pattern_construct_is_refused_like_the_compiler():
    """Lookarounds and backreferences raise UnsupportedKeyword('pattern') at the keyword."""
    with pytest.raises(UnsupportedKeyword) as info:
        validate("a", {"properties": {"p": {"pattern": "(?=a)a"}}})
    assert info.value.keyword == "pattern" and info.value.pointer == "/properties/p/pattern"
    with pytest.raises(UnsupportedKeyword):
        validate({}, {"patternProperties": {"(a)\\1": {}}})


def test_known_formats_are_checked_and_unknown_ones_are_annotations():
    """date-time, email, uuid ... are enforced; an unknown format accepts any string."""
    assert validate("2024-02-30", {"format": "date"}) == ["/: not a valid date"]
    assert validate("2024-02-29T10:00:00Z", {"format": "date-time"}) == []
    assert validate("not-a-uuid", {"format": "uuid"}) == ["/: not a valid uuid"]
    assert validate("10:20:30Z", {"format": "time"}) == []  # RFC 3339 time, not draft 3's HH:MM:SS
    assert validate("10:20:30", {"format": "time"}) == ["/: not a valid time"]
    assert validate("whatever", {"format": "topic"}) == []
    assert validate(3, {"format": "date"}) == []


def test_refs_resolve_like_the_compiler():
    """`$ref` into `$defs`, `definitions`, anchors and `$id` resources."""
    schema = {"$id": "http://x/root.json",
              "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"$ref": "item.json"},
                             "c": {"$ref": "#flag"}},
              "$defs": {"n": {"type": "integer"}, "flag": {"$anchor": "flag", "type": "boolean"},
                        "item": {"$id": "item.json", "type": "string"}}}
    assert validate({"a": 1, "b": "s", "c": True}, schema) == []
    assert validate({"a": "1", "b": 2, "c": 0}, schema) == [
        "/a: expected integer", "/b: expected string", "/c: expected boolean"]


def test_recursive_schema_validates_by_descent():
    """A self-referencing tree schema validates nested instances."""
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
            "additionalProperties": False}
    assert validate({"kids": [{"kids": []}, {}]}, tree) == []
    assert validate({"kids": [{"kids": [{"bad": 1}]}]}, tree) == ["/kids/0/kids/0/bad: not allowed"]


def test_ref_loop_without_descent_is_invalid_schema():
    """`{"$ref": "#"}` never reaches a value: refused instead of recursing forever."""
    with pytest.raises(InvalidSchema):
        validate(1, {"$ref": "#"})
    with pytest.raises(InvalidSchema):
        validate(1, {"anyOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"allOf": [{"$ref": "#"}]}}})


@pytest.mark.parametrize("keyword, value", [("$recursiveRef", "#")])
def test_unsupported_keywords_raise_like_the_compiler(keyword, value):
    """Every keyword of compiler.keywords.UNSUPPORTED raises UnsupportedKeyword at its pointer."""
    with pytest.raises(UnsupportedKeyword) as info:
        validate({}, {"properties": {"a": {keyword: value}}})
    assert info.value.keyword == keyword
    assert info.value.pointer == f"/properties/a/{keyword}"


def test_unsupported_keyword_behind_a_ref_names_the_ref():
    """A refusal inside a `$ref` target names the reference that led there."""
    with pytest.raises(UnsupportedKeyword) as info:
        validate(1, {"properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"$recursiveRef": "#"}}})
    assert info.value.via == ("#/$defs/x",)
    assert "reached through $ref '#/$defs/x'" in str(info.value)


def test_unreachable_defs_are_not_checked():
    """Like the compiler, only subschemas reachable from the root matter."""
    assert validate(1, {"$defs": {"unused": {"$recursiveRef": "#"}}, "type": "integer"}) == []


def test_unknown_keywords_are_ignored():
    """Keywords outside the vocabularies (x-..., propertyOrder) do not change validity."""
    assert validate({"a": 1}, {"x-tags": [1], "propertyOrder": ["a"], "_format": "q",
                               "properties": {"a": {"type": "integer", "ignoreCase": True}}}) == []


@pytest.mark.parametrize("schema", [{"type": "strin"}, {"required": "a"}, {"minLength": -1},
                                    {"anyOf": []}, {"properties": {"a": 3}}, {"multipleOf": 0},
                                    {"$ref": "#/nowhere"}, {"enum": "a"}])
def test_malformed_schema_is_invalid_schema(schema):
    """A schema that is not valid JSON Schema raises InvalidSchema, whatever the instance."""
    with pytest.raises(InvalidSchema):
        validate(1, schema)


def test_remote_ref_is_unsupported():
    """References to other documents are refused, never fetched."""
    with pytest.raises(UnsupportedKeyword):
        validate(1, {"$ref": "https://example.com/schema.json"})


def test_schema_and_instance_are_not_mutated():
    """validate reads its arguments only."""
    schema, instance = copy.deepcopy(ORDER), {"sku": "A", "items": [{"qty": "1"}]}
    before = copy.deepcopy(instance)
    validate(instance, schema)
    assert schema == ORDER and instance == before


def test_schema_text_and_pydantic_models_are_accepted():
    """The schema may be JSON text or a pydantic model, as for compile."""
    assert validate(1, '{"type": "string"}') == ["/: expected string"]
    pydantic = pytest.importorskip("pydantic")

    class Item(pydantic.BaseModel):
        qty: int

    assert validate({"qty": "x"}, Item) == ["/qty: expected integer"]


# --- depth and non-JSON values -------------------------------------------------------------------

def nested(depth, leaf=None):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def test_deep_instance_is_an_error_not_a_recursion_error():
    """More than MAX_DEPTH nested containers is a validation error."""
    errors = validate(nested(MAX_DEPTH + 1), {})
    assert len(errors) == 1 and errors[0].endswith(f"nested deeper than {MAX_DEPTH} levels")
    assert validate(nested(MAX_DEPTH), {"type": "array"}) == []


def test_deep_schema_and_instance_validate_without_recursion():
    """A schema 5,000 levels deep checks an instance MAX_DEPTH deep on the explicit stack."""
    schema: object = {"type": "null"}
    for _ in range(5000):
        schema = {"type": "array", "items": schema}
    assert validate(nested(MAX_DEPTH - 1), schema) == ["/" + "0/" * (MAX_DEPTH - 2) + "0: expected array"]
    deep_allof: object = {"type": "integer"}
    for _ in range(5000):
        deep_allof = {"allOf": [deep_allof]}
    assert validate("x", deep_allof) == ["/: expected integer"]


@pytest.mark.parametrize("instance, what", [(float("nan"), "nan"), (float("inf"), "inf"), ({1, 2}, "set"),
                                            (object(), "object")])
def test_non_json_values_are_errors(instance, what):
    """NaN, infinities and Python-only types are not JSON."""
    assert validate(instance, {}) == [f"/: not a JSON value ({what})"]


def test_non_string_keys_are_errors():
    """Object keys must be strings."""
    assert validate({1: "a"}, {}) == ["/: object key 1 is not a string"]


def test_validator_is_reusable():
    """A Validator checks the schema once and validates many instances."""
    v = Validator(ORDER)
    assert v.is_valid({"sku": "abc"}) and not v.is_valid({"sku": 1})


# --- agreement with python-jsonschema -------------------------------------------------------------

NAMES = ["a", "b", "c", "é", "x-1", ""]
WORDS = ["", "a", "ab", "abc", "é", "😀", "2024-01-31", "2024-13-01", "10:20:30Z", "10:20:30",
         "2024-01-31T10:20:30Z", "a@b.co", "192.168.0.1", "::1", "P1D", "x y",
         "123e4567-e89b-12d3-a456-426614174000", "http://x.org/a?b", "/a/b", "0/a", "ex-ample.com"]
NUMBERS = [0, 1, -1, 2, 3, 7, 10, 0.5, -2.5, 1.25, 3.75]
FORMATS = ["date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid",
           "uri", "uri-reference", "json-pointer", "relative-json-pointer", "unknown-format"]
PATTERNS = ["^a", "b$", "^[a-c]*$", "é", "^.{2}$", "a|^$", "^(ab)+$", "[0-9]", "^[^a]"]

bound = st.sampled_from([-1, 0, 1, 2, 2.5, 5])
leaf_schemas = st.one_of(
    st.sampled_from([True, False, {}]),
    st.sampled_from(["null", "boolean", "integer", "number", "string", "array", "object"]).map(
        lambda t: {"type": t}),
    st.lists(st.sampled_from(["null", "integer", "string", "number"]), min_size=1, max_size=2,
             unique=True).map(lambda ts: {"type": ts}),
    st.fixed_dictionaries({}, optional={"minimum": bound, "maximum": bound, "exclusiveMinimum": bound,
                                        "exclusiveMaximum": bound,
                                        "multipleOf": st.sampled_from([1, 2, 0.5, 0.25])}),
    st.fixed_dictionaries({}, optional={"minLength": st.integers(0, 3), "maxLength": st.integers(0, 3),
                                        "pattern": st.sampled_from(PATTERNS),
                                        "format": st.sampled_from(FORMATS)}),
    st.lists(st.sampled_from(WORDS[:6] + NUMBERS[:4] + [None, True, False, [1], {"a": 1}]),
             min_size=1, max_size=4).map(lambda v: {"enum": v}),
    st.sampled_from(WORDS[:4] + [1, 1.0, True, None, [1, "a"], {"a": [True]}]).map(lambda v: {"const": v}),
)


def composite(children):
    obj = st.fixed_dictionaries({}, optional={
        "properties": st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
        "patternProperties": st.dictionaries(st.sampled_from(["^x-", "b", "é"]), children, max_size=2),
        "additionalProperties": children,
        "required": st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
        "minProperties": st.integers(0, 2), "maxProperties": st.integers(0, 3),
        "type": st.just("object"),
    })
    arr = st.fixed_dictionaries({}, optional={
        "prefixItems": st.lists(children, max_size=2), "items": children,
        "minItems": st.integers(0, 2), "maxItems": st.integers(0, 3), "type": st.just("array"),
    })
    applicators = st.sampled_from(["anyOf", "oneOf", "allOf"]).flatmap(
        lambda k: st.lists(children, min_size=1, max_size=3).map(lambda bs: {k: bs}))
    return st.one_of(obj, arr, applicators)


def with_defs(schema_strategy):
    """A root with `$defs` whose entries the schema refers to by `$ref`."""
    refs = st.sampled_from([{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}])
    inner = st.recursive(leaf_schemas | refs, composite, max_leaves=6)
    return st.builds(lambda root, a, b: {**root, "$defs": {"a": a, "b": b}} if isinstance(root, dict) else root,
                     inner, schema_strategy, schema_strategy)


schemas = st.recursive(leaf_schemas, composite, max_leaves=8)
json_values = st.recursive(
    st.sampled_from(WORDS) | st.sampled_from(NUMBERS) | st.sampled_from([None, True, False]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
    max_leaves=10,
)


MISSING_CHECKERS = [f for f in FORMATS if f != "unknown-format"
                    and f not in jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers]
needs_format_extras = pytest.mark.skipif(
    bool(MISSING_CHECKERS), reason=f"jsonschema's format extras are not installed (no checker for "
                                   f"{', '.join(MISSING_CHECKERS)}): pip install 'jsonschema[format]'")


def python_jsonschema_valid(instance, schema) -> bool:
    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return validator.is_valid(instance)


@needs_format_extras
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas | with_defs(schemas), json_values)
def test_agrees_with_python_jsonschema(schema, instance):
    """For every schema within the supported keywords, validity matches Draft202012Validator."""
    ours = validate(instance, schema)
    event("valid" if not ours else "invalid")
    assert (ours == []) == python_jsonschema_valid(instance, schema), ours


@needs_format_extras
@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b"]), schemas, max_size=2), json_values)
def test_agrees_with_python_jsonschema_on_object_properties(properties, instance):
    """Objects with required properties and closed shapes agree too."""
    schema = {"type": "object", "properties": properties, "required": list(properties),
              "additionalProperties": False}
    assert (validate(instance, schema) == []) == python_jsonschema_valid(instance, schema)


@pytest.mark.parametrize("schema, instance", [
    ({"minimum": 1, "exclusiveMinimum": True}, 1), ({"minimum": 1, "exclusiveMinimum": True}, 1.5),
    ({"maximum": 1, "exclusiveMaximum": True}, 1), ({"maximum": 1, "exclusiveMaximum": False}, 1),
])
def test_draft4_bounds_agree_with_draft4_validator(schema, instance):
    """Draft 4's boolean exclusive bounds match Draft4Validator."""
    assert (validate(instance, schema) == []) == jsonschema.Draft4Validator(schema).is_valid(instance)


@pytest.mark.parametrize("schema, instance", [
    ({"items": [{"type": "integer"}], "additionalItems": {"type": "string"}}, [1, "a", "b"]),
    ({"items": [{"type": "integer"}], "additionalItems": {"type": "string"}}, [1, 2]),
    ({"items": [{"type": "integer"}], "additionalItems": False}, [1, 2]),
    ({"items": [{"type": "integer"}]}, [1, None]),
])
def test_draft7_tuples_agree_with_draft7_validator(schema, instance):
    """Draft 7's array-form `items` and `additionalItems` match Draft7Validator."""
    assert (validate(instance, schema) == []) == jsonschema.Draft7Validator(schema).is_valid(instance)


# --- agreement with the compiled grammar -------------------------------------------------------------

def _canonical(instance, order):
    """Serialise compactly with object keys in the canonical order the grammar accepts."""
    if isinstance(instance, dict):
        keys = sorted(instance, key=lambda k: (order.index(k) if k in order else len(order), k))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + _canonical(instance[k], order)
                              for k in keys) + "}"
    if isinstance(instance, list):
        return "[" + ",".join(_canonical(v, order) for v in instance) + "]"
    return json.dumps(instance, ensure_ascii=False)


GRAMMAR_NAMES = ["a", "b", "c"]  # properties listed in this order; other keys sort after them
grammar_leaves = st.one_of(
    st.sampled_from([True, {}]),
    st.sampled_from(["null", "boolean", "integer", "number", "string"]).map(lambda t: {"type": t}),
    st.builds(lambda lo, hi: {"type": "integer", "minimum": lo, "maximum": hi},
              st.integers(-3, 3), st.integers(-3, 5)),
    st.builds(lambda lo, hi: {"type": "string", "minLength": lo, "maxLength": hi},
              st.integers(0, 2), st.integers(0, 3)),
    st.lists(st.sampled_from(["a", "ab", "é", 1, None, True]), min_size=1, max_size=3, unique_by=repr).map(
        lambda v: {"enum": v}),
)


def grammar_composite(children):
    def obj(props, required, extra):
        names = [n for n in GRAMMAR_NAMES if n in props]
        return {"type": "object", "properties": {n: props[n] for n in names},
                "required": [n for n in names if n in required], **extra}
    return st.one_of(
        st.builds(obj, st.dictionaries(st.sampled_from(GRAMMAR_NAMES), children, max_size=3),
                  st.sets(st.sampled_from(GRAMMAR_NAMES)),
                  st.sampled_from([{}, {"additionalProperties": False}])),
        st.builds(lambda items, lo: {"type": "array", "items": items, "minItems": lo, "maxItems": 3},
                  children, st.integers(0, 2)),
        st.lists(children, min_size=2, max_size=2).map(lambda bs: {"anyOf": bs}),
    )


grammar_values = st.recursive(
    st.sampled_from(["a", "ab", "é", "", 0, 1, -2, 4, 2.5, None, True, False]),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.sampled_from(GRAMMAR_NAMES + ["z"]), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(grammar_leaves, grammar_composite, max_leaves=6), grammar_values)
def test_agrees_with_the_compiled_grammar(schema, instance):
    """validate(...) == [] exactly when the compiled grammar accepts the canonical serialisation
    (objects in any order: the schema order puts an object's declared names before additional
    keys, which a serialisation cannot know for every branch of an ``anyOf``)."""
    compiler_grammar = pytest.importorskip("compiler.grammar")
    try:
        grammar = compiler_grammar.compile(schema, whitespace="compact", property_order="any")
    except SchemaError:  # schemas the compiler refuses (or cannot satisfy) are not compared
        assume(False)
    text = _canonical(instance, GRAMMAR_NAMES)
    valid = validate(instance, schema) == []
    event("valid" if valid else "invalid")
    assert valid == grammar.accepts(text), text


@pytest.mark.parametrize("left,right", [(int(1.2345678901234567e25), 1.2345678901234567e25), (1, True), ([0], [False])])
def test_merged_enums_compare_values_as_validate_does(left, right):
    """An allOf of two enums keeps only values JSON-equal in both (numbers by their decimal text): the
    integer a large float rounds to is not that float, so no value is left and compiling refuses it."""
    schema = {"allOf": [{"enum": [left]}, {"enum": [right]}]}
    assert constrain.validate(left, schema)
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile(schema)


@pytest.mark.parametrize("applicator", ["anyOf", "oneOf", "allOf"])
def test_a_value_meets_each_subschema_once_however_references_fan_out(applicator, monkeypatch):
    """Branches that refer six ways to the next level, eight levels deep (a small schema naming
    6**8 paths): each node judges each value once per validation, where walking every path had
    taken over a minute."""
    from compiler.validation import Validator
    visits = []
    visit = Validator._visit
    monkeypatch.setattr(Validator, "_visit", lambda self, *args: visits.append(1) or visit(self, *args))
    defs = {f"l{i}": {applicator: [{"$ref": f"#/$defs/l{i + 1}"}] * 6} for i in range(8)}
    defs["l8"] = {"type": "object", "required": ["b"]}
    schema = {"$defs": defs, "$ref": "#/$defs/l0"}
    for instance, valid in (({}, False), ({"b": 1}, applicator != "oneOf"), ([1], False)):
        visits.clear()
        assert (validate(instance, schema) == []) == valid
        assert len(visits) < 200
