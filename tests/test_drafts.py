"""Each draft reads its own vocabulary: generated schemas mixing keywords of several drafts, directly
and under ``not``, agree with python-jsonschema's validator for the draft they name, in the compiled
grammar and in ``validate`` (a keyword a draft does not have is an unknown word there)."""

import json

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from oracle import agrees_on

DRAFTS = ["http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-06/schema#",
          "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema",
          "https://json-schema.org/draft/2020-12/schema"]
VALUES = [None, True, 0, 7, -2.5, "", "a", "ab", [], [1], ["a"], [1, "a"], [1, 1], {}, {"a": 1}, {"b": "x"},
          {"a": 1, "b": 2}, {"a": "x", "c": None}, {"a": [1]}, {"a": ["a", 1]}, {"a": {"a": 1}}, {"a": {"b": 2}}]
# keywords of every draft, several of them unknown to the earlier ones
CLAUSES = [
    {"contains": {"type": "string"}}, {"contains": {"type": "integer"}, "minContains": 2},
    {"contains": {"type": "integer"}, "maxContains": 1},
    {"propertyNames": {"pattern": "^a$"}}, {"propertyNames": {"maxLength": 0}},
    {"if": {"type": "integer"}, "then": {"minimum": 5}}, {"if": {"type": "string"}, "else": {"type": "null"}},
    {"dependencies": {"a": ["b"]}}, {"dependencies": {"a": {"required": ["c"]}}},
    {"dependentRequired": {"a": ["b"]}}, {"dependentSchemas": {"a": {"required": ["b"]}}},
    {"items": {"type": "integer"}}, {"items": [{"type": "integer"}], "additionalItems": False},
    {"prefixItems": [{"type": "integer"}], "items": {"not": {}}},
    {"prefixItems": [{"type": "integer"}], "additionalItems": False}, {"items": {"type": "integer"}, "additionalItems": False},
    {"properties": {"a": {"type": "integer"}}, "unevaluatedProperties": False},
    {"prefixItems": [{"type": "integer"}], "unevaluatedItems": False}, {"minContains": 0, "contains": {"type": "null"}},
    {"required": ["a"]}, {"minItems": 2}, {"maxProperties": 1}, {"type": ["array", "object"]},
    {"const": [1]}, {"exclusiveMinimum": 0}, {"minimum": 0, "exclusiveMinimum": True},
    {"$ref": "#/definitions/number", "minimum": 5}, {"$ref": "#/definitions/number", "type": "integer"},
    {"oneOf": [{"type": "integer"}, {"minimum": 5}]}, {"anyOf": [{"required": ["a"]}, {"maxItems": 1}]},
    {"properties": {"a": {}}, "additionalProperties": False}, {"patternProperties": {"^b": {"type": "integer"}}},
    {"minLength": 1, "pattern": "^a"}, {"multipleOf": 2}, {"type": "integer"}, {"uniqueItems": False},
    {"items": {"enum": [1, "a", 1.0, [1]]}, "uniqueItems": True}, {"items": {"type": "boolean"}, "uniqueItems": True},
    {"anyOf": [{"properties": {"a": {"type": "integer"}}}, {"required": ["b"]}], "unevaluatedProperties": False},
    {"$ref": "#/definitions/chain"}, {"additionalProperties": {"type": "integer"}}, {"propertyNames": {"enum": ["a", "b"]}},
    {"contains": {"const": 1}, "items": {"type": "integer"}}, {"not": {"enum": [[1], {"a": 1}]}},
    {"allOf": [{"minItems": 1}, {"not": {"contains": {"type": "string"}}}]},
    {"if": {"required": ["a"]}, "then": {"properties": {"a": {"type": "integer"}}}, "unevaluatedProperties": False},
    {"contains": {"oneOf": [{"type": "integer"}, {"minimum": 5}]}},
    {"allOf": [{"contains": {"type": "integer"}, "minContains": 2}, {"contains": {"type": "string"}, "maxContains": 1}]},
    {"contains": {"type": "integer"}, "unevaluatedItems": False},
    {"dependentSchemas": {"a": {"properties": {"b": {"type": "integer"}}}}, "unevaluatedProperties": False},
    {"oneOf": [{"required": ["a"]}, {"properties": {"b": {"type": "string"}}, "required": ["b"]}],
     "unevaluatedProperties": {"type": "integer"}},
    {"not": {"if": {"type": "array"}, "then": {"contains": {"type": "integer"}}, "else": {"type": "object"}}},
]


def clause(negated: bool, body: dict) -> dict:
    return {"not": body} if negated else body


def _schema(draft, enum, parts, nested):
    body = {**({"enum": enum} if enum else {}), "allOf": [clause(n, c) for n, c in parts]}
    if nested:  # the same one level down, under a property
        body = {"properties": {"a": body}}
    definitions = {"number": {"type": "number"}, "chain": {"$ref": "#/definitions/number"},
                   "tree": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/definitions/tree"}}]}}
    return {"$schema": draft, **body, "definitions": definitions}


schemas = st.builds(
    _schema, st.sampled_from(DRAFTS),
    st.none() | st.lists(st.sampled_from(VALUES), min_size=1, max_size=6, unique_by=json.dumps),
    st.lists(st.tuples(st.booleans(), st.sampled_from(CLAUSES)), min_size=1, max_size=3), st.booleans()).filter(
    lambda s: all(_written_in(s["$schema"], c.get("not", c)) for c in s.get("properties", {"a": s})["a"]["allOf"])
    and not _readings_differ(s))


def _written_in(draft: str, body: dict) -> bool:
    """Whether a clause is well-formed in ``draft``: 2020-12 has no array form of ``items``; a
    numeric ``exclusiveMinimum`` is draft 6's, a boolean one draft 4's (where python-jsonschema
    reads the other form as a flag, we read it as its own draft does: a malformed schema, read
    as its author meant)."""
    if isinstance(body.get("items"), list):
        return "2020-12" not in draft
    if "exclusiveMinimum" in body:
        return isinstance(body["exclusiveMinimum"], bool) == ("draft-04" in draft)
    return True


def _readings_differ(schema: dict) -> bool:
    """2019-09's ``unevaluatedItems`` sees ``items`` and ``additionalItems`` alone (its section
    9.3.1.4); python-jsonschema counts the items ``contains`` matched too, as 2020-12 does. We keep
    the specification's narrower reading: what we generate is valid under both."""
    text = json.dumps(schema)
    return "2019-09" in schema["$schema"] and '"contains"' in text and '"unevaluatedItems"' in text


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(schemas)
def test_generated_schemas_agree_with_their_drafts_validator(schema):
    """accepts(text) == the draft's validator == validate, for every value of a fixed pool."""
    event(agrees_on(schema, VALUES))


def test_a_one_of_branch_copied_by_the_compiler_keeps_its_drafts_reading():
    """``exactly_one`` writes each ``oneOf`` branch beside the complement of the others, a copy of
    its keywords: in a draft-4 document ``contains`` is no keyword there, so ``[]`` matches exactly
    one branch (found by a generated test: the copy read ``contains``)."""
    draft4 = "http://json-schema.org/draft-04/schema#"
    for schema in ({"$schema": draft4, "oneOf": [{"contains": {"type": "string"}}, {"not": {}}]},
                   {"$schema": draft4, "allOf": [{"oneOf": [{"type": "array"}, {"type": "null"}]},
                                                 {"oneOf": [{"contains": {"type": "string"}}, {"not": {}}]}]}):
        assert agrees_on(schema, [[], [1], None, "a"]) == "compiled"


def _nested(inner):
    listed = st.lists(inner, min_size=1, max_size=3)
    return (st.builds(lambda bs: {"allOf": bs}, listed) | st.builds(lambda bs: {"anyOf": bs}, listed)
            | st.builds(lambda bs: {"oneOf": bs}, listed) | st.builds(lambda b: {"not": b}, inner)
            | st.builds(lambda a, b, c: {"if": a, "then": b, "else": c}, inner, inner, inner)
            | st.builds(lambda b: {"properties": {"a": b}}, inner) | st.builds(lambda b: {"items": b}, inner)
            | st.builds(lambda b, n: {"contains": b, "minContains": n}, inner, st.integers(0, 2))
            | st.builds(lambda b: {"additionalProperties": b}, inner) | st.builds(lambda b: {"propertyNames": b}, inner)
            | st.builds(lambda b, c: {"properties": {"a": b}, "patternProperties": {"^b": c}}, inner, inner)
            | st.builds(lambda b: {"dependentSchemas": {"a": b}}, inner)
            | st.builds(lambda b, c: {"properties": {"a": b}, "unevaluatedProperties": c}, inner, inner)
            | st.builds(lambda b, c: {"prefixItems": [b], "unevaluatedItems": c}, inner, inner))


def _well_formed(schema: dict) -> bool:
    """``_written_in`` and ``_readings_differ`` for a whole nested schema, read off its text."""
    draft, text = schema["$schema"], json.dumps(schema)
    flag, number = '"exclusiveMinimum": true' in text, '"exclusiveMinimum": 0' in text
    return not (("2020-12" in draft and '"items": [' in text) or _readings_differ(schema)
                or (number if "draft-04" in draft else flag))


# (draft 4 has no boolean schemas: ``{"not": {}}`` and ``{}`` stand for them)
nested_schemas = st.builds(
    _schema, st.sampled_from(DRAFTS), st.none(),
    st.lists(st.tuples(st.just(False), st.recursive(st.sampled_from(CLAUSES + [{"not": {}}, {}, {"$ref": "#/definitions/tree"}]), _nested,
                                                    max_leaves=6)), min_size=1, max_size=1),
    st.booleans()).filter(_well_formed)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(nested_schemas)
def test_nested_applicators_agree_with_their_drafts_validator(schema):
    """The same agreement with clauses nested under applicators a few levels deep (a copy the
    compiler writes of a nested branch must keep its draft's reading)."""
    event(agrees_on(schema, VALUES))


def test_a_word_its_draft_does_not_have_is_unread_yet_a_pointer_still_leads_into_it():
    """The document is read as its draft reads it once, at load: a draft-4 ``contains`` is an
    unknown word (its value is not checked, ``uniqueItems`` in it refused nothing), yet a ``$ref``
    may still point into it, as into the ``definitions`` beside a draft-7 ``$ref``."""
    draft4, draft7 = DRAFTS[0], DRAFTS[2]
    unread = {"$schema": draft4, "type": "array", "contains": {"uniqueItems": True}, "if": 5}
    assert agrees_on(unread, [[], [1, 1], "a"]) == "compiled"
    into = {"$schema": draft4, "contains": {"type": "string"}, "properties": {"a": {"$ref": "#/contains"}}}
    assert agrees_on(into, [{"a": "x"}, {"a": 1}, [1]]) == "compiled"
    beside = {"$schema": draft7, "$ref": "#/definitions/a", "type": "string",
              "definitions": {"a": {"type": "integer", "properties": {"b": {"$ref": "#/definitions/a/properties/c"}},
                                    "$ref": "#/definitions/n", "maxProperties": 0}, "n": {"minimum": 3}}}
    assert agrees_on(beside, [1, 3, "a", 3.5, {}]) == "compiled"


def test_a_ref_outside_the_schema_keywords_is_read_as_its_draft_reads_it():
    """A ``$ref`` may lead where no schema keyword does (OpenAPI's ``components``, ``x-defs``): what
    it finds there is read as the draft reads it too, a draft 7 ``$ref``'s siblings and a word draft
    7 lacks left out (a review found the first kept, once the document was read at load)."""
    draft7 = DRAFTS[2]
    siblings = {"$schema": draft7, "properties": {"p": {"$ref": "#/components/schemas/A"}},
                "components": {"schemas": {"A": {"$ref": "#/components/schemas/B", "required": ["z"]},
                                           "B": {"type": "object"}}}}
    assert agrees_on(siblings, [{"p": {}}, {"p": 1}, {}]) == "compiled"
    unknown = {"$schema": draft7, "$ref": "#/x/a", "x": {"a": {"type": "object", "dependentRequired": {"a": ["b"]}}}}
    assert agrees_on(unknown, [{"a": 1}, {"a": 1, "b": 2}, 1]) == "compiled"


def test_a_resource_is_named_by_its_drafts_word_only():
    """Drafts 3 and 4 name a resource with ``id``, drafts 6 on with ``$id``; the other word is an
    unknown one that sets no base URI (so ``#/definitions/n`` below it still means the root's)."""
    for draft, other in ((DRAFTS[0], "$id"), (DRAFTS[2], "id"), (DRAFTS[4], "id")):
        schema = {"$schema": draft, "definitions": {"n": {"type": "string"}},
                  "properties": {"a": {other: "http://other.example/x.json", "definitions": {"n": {"type": "integer"}},
                                       "allOf": [{"$ref": "#/definitions/n"}]}}}
        assert agrees_on(schema, [{"a": 1}, {"a": "x"}, {}]) == "compiled"
