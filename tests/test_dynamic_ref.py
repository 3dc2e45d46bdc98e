"""``$dynamicRef``: each one resolved as the dynamic scope of the path that reaches it has it
(``compiler/dynamic.py``), alike for ``compile``, ``validate`` and ``describe_shape``."""

import json
import time

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import constrain
from constrain import InvalidSchema, SchemaTooComplex, UnsupportedKeyword
from constrain.repair import describe_shape

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ROOT = "https://example.com/root"


def extensible_list(item: dict) -> dict:
    """A generic list whose items any resource entered before it may define (``#item``)."""
    return {"$id": "list", "type": "array", "items": {"$dynamicRef": "#item"},
            "$defs": {"default": {"$dynamicAnchor": "item", **item}}}


def test_the_outermost_dynamic_anchor_in_scope_is_the_target():
    schema = {"$schema": DRAFT, "$id": ROOT, "$ref": "list",
              "$defs": {"mine": {"$dynamicAnchor": "item", "type": "string"}, "list": extensible_list({"type": "integer"})}}
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts('["a", "b"]') and not grammar.accepts('["a", 4]')
    assert constrain.validate(["a", 4], schema) == ["/1: expected string"]
    assert "array of strings" in describe_shape(schema)
    # the list on its own (its own resource first in scope) takes its default
    alone = {"$schema": DRAFT, "$id": ROOT, "$ref": "list", "$defs": {"list": extensible_list({"type": "integer"})}}
    assert constrain.compile(alone, cache=False).accepts("[1, 2]")
    assert not constrain.compile(alone, cache=False).accepts('["a"]')


def test_a_subschema_with_its_own_id_enters_its_resource_where_it_stands():
    """Not only a ``$ref``: the walk into a subschema that sets its own ``$id`` enters it too."""
    schema = {"$schema": DRAFT, "$id": ROOT, "type": "object",
              "properties": {"words": {"$id": "words", "$ref": "list",
                                       "$defs": {"it": {"$dynamicAnchor": "item", "type": "string"}}},
                             "counts": {"$ref": "list"}},
              "$defs": {"list": extensible_list({"type": "integer"})}}
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts('{"words": ["a"], "counts": [1]}')
    assert not grammar.accepts('{"words": [1]}') and not grammar.accepts('{"counts": ["a"]}')
    assert constrain.validate({"words": [1], "counts": ["a"]}, schema) == ["/words/0: expected string",
                                                                           "/counts/0: expected integer"]


def test_a_ref_into_a_resource_below_its_root_enters_it():
    """A ``$ref`` to ``second#/$defs/stuff`` puts resource ``second`` in scope though its root is never
    evaluated; ``first``, entered before it, declares no dynamic anchor of the name."""
    def resource(name, then, length):
        return {"$id": name, "$defs": {"stuff": then, "length": {**length, "maxLength": {"first": 1, "second": 2, "third": 3}[name]}}}

    schema = {"$schema": DRAFT, "$id": ROOT, "$ref": "first#/$defs/stuff",
              "$defs": {"first": resource("first", {"$ref": "second#/$defs/stuff"}, {}),
                        "second": resource("second", {"$ref": "third#/$defs/stuff"}, {"$dynamicAnchor": "length"}),
                        "third": resource("third", {"$dynamicRef": "#length"}, {"$dynamicAnchor": "length"})}}
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts('"hi"') and not grammar.accepts('"hey"')
    assert constrain.validate("hey", schema) and not constrain.validate("hi", schema)


def test_a_ref_beside_a_dynamic_ref_applies_too():
    """Both apply; the ``$ref`` is resolved where it stands (the list's own ``short``)."""
    schema = {"$schema": DRAFT, "$id": ROOT, "$ref": "list",
              "$defs": {"mine": {"$dynamicAnchor": "item", "type": "string"}, "short": {"maxLength": 2},
                        "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#item", "$ref": "#/$defs/short"},
                                 "$defs": {"short": {"minLength": 1}, "default": {"$dynamicAnchor": "item"}}}}}
    grammar = constrain.compile(schema, cache=False)
    validator = jsonschema.Draft202012Validator(schema)
    for doc, valid in ((["abc", "c"], True), ([""], False), ([1], False)):
        assert grammar.accepts(json.dumps(doc)) == validator.is_valid(doc) == valid, doc


def test_a_scope_the_validators_read_otherwise_is_refused():
    """The root binds ``#n``, a subschema with its own ``$id`` binds it too and holds the
    ``$dynamicRef``, no reference followed in between: the specification's scope holds the root
    (strings), python-jsonschema's and jsonschema-rs's do not (integers). Refused, never either."""
    schema = {"$schema": DRAFT, "$id": ROOT, "$defs": {"r": {"$dynamicAnchor": "n", "type": "string"}},
              "properties": {"x": {"$id": "x", "$defs": {"m": {"$dynamicAnchor": "n", "type": "integer"}},
                                   "items": {"$dynamicRef": "#n"}}}}
    assert jsonschema.Draft202012Validator(schema).is_valid({"x": [1]})
    for check in (lambda: constrain.compile(schema, cache=False), lambda: constrain.validate({"x": [1]}, schema)):
        with pytest.raises(UnsupportedKeyword, match="python-jsonschema") as info:
            check()
        assert info.value.pointer == "/properties/x/items"
    # the first reference followed from the root puts it in their scope, even one within its resource
    within = {"$schema": DRAFT, "$id": ROOT, "$ref": "#/$defs/a",
              "$defs": {"r": {"$dynamicAnchor": "n", "type": "string"}, "a": {"properties": schema["properties"]}}}
    assert not jsonschema.Draft202012Validator(within).is_valid({"x": [1]})
    assert constrain.compile(within, cache=False).accepts('{"x": ["a"]}')
    # ... but not a later one within a resource, after the first has put another resource there
    later = {"$schema": DRAFT, "$id": ROOT, "$ref": "b",
             "$defs": {"b": {"$id": "b", "$defs": {"r": {"$dynamicAnchor": "n", "type": "string"}, "inner": schema["properties"]["x"]},
                             "properties": {"x": {"$ref": "#/$defs/inner"}}}}}
    assert jsonschema.Draft202012Validator(later).is_valid({"x": [1]})
    with pytest.raises(UnsupportedKeyword, match="python-jsonschema"):
        constrain.compile(later, cache=False)
    # followed from the root by a reference, the root is in both scopes: strings
    referred = {**schema, "properties": {"x": {"$ref": "x"}},
                "$defs": {**schema["$defs"], "x": schema["properties"]["x"]}}
    grammar = constrain.compile(referred, cache=False)
    assert grammar.accepts('{"x": ["a"]}') and not grammar.accepts('{"x": [1]}')
    assert jsonschema.Draft202012Validator(referred).is_valid({"x": ["a"]})


def test_without_the_bookend_a_dynamic_ref_is_a_plain_ref():
    """The initial target must be a dynamic anchor of that name; a plain ``$anchor`` of the same
    name elsewhere in scope is not one."""
    schema = {"$schema": DRAFT, "$id": ROOT, "$ref": "list",
              "$defs": {"mine": {"$dynamicAnchor": "item", "type": "string"},
                        "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#item"},
                                 "$defs": {"default": {"$anchor": "item", "type": "integer"}}}}}
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts("[1]") and not grammar.accepts('["a"]')
    plain = {"$schema": DRAFT, "$id": ROOT, "$ref": "list",
             "$defs": {"mine": {"$anchor": "item", "type": "string"}, "list": extensible_list({"type": "integer"})}}
    assert constrain.compile(plain, cache=False).accepts("[1]")


def test_a_recursive_tree_made_strict_by_the_resource_that_extends_it():
    tree = {"$id": "tree", "$dynamicAnchor": "node", "type": "object",
            "properties": {"data": True, "children": {"type": "array", "items": {"$dynamicRef": "#node"}}}}
    strict = {"$schema": DRAFT, "$id": ROOT, "$dynamicAnchor": "node", "$ref": "tree",
              "unevaluatedProperties": False, "$defs": {"tree": tree}}
    grammar = constrain.compile(strict, cache=False)
    deep = {"children": [{"data": 1, "children": [{"children": [{"data": 2}]}]}]}
    assert grammar.accepts(json.dumps(deep)) and constrain.validate(deep, strict) == []
    typo = {"children": [{"children": [{"daat": 1}]}]}
    assert not grammar.accepts(json.dumps(typo))
    assert constrain.validate(typo, strict) and not jsonschema.Draft202012Validator(strict).is_valid(typo)
    assert grammar.find_trap(budget=2_000) is None
    loose = {"$schema": DRAFT, "$id": ROOT, "$ref": "tree", "$defs": {"tree": tree}}
    assert constrain.compile(loose, cache=False).accepts(json.dumps(typo))


def test_each_path_to_a_dynamic_ref_has_its_own_scope():
    """The same generic list reached under two resources takes each one's items, and a scope left
    (the ``if``'s) binds nothing for the ``then``."""
    generic = {"$id": "generic", "properties": {"list": {"items": {"$dynamicRef": "#itemType"}}},
               "$defs": {"default": {"$dynamicAnchor": "itemType"}}}
    schema = {"$schema": DRAFT, "$id": ROOT,
              "if": {"$id": "first", "properties": {"kind": {"const": "numbers"}}, "required": ["kind"],
                     "$defs": {"t": {"$dynamicAnchor": "itemType", "type": "boolean"}}},
              "then": {"$ref": "numbers"}, "else": {"$ref": "strings"},
              "$defs": {"generic": generic,
                        "numbers": {"$id": "numbers", "$ref": "generic", "$defs": {"t": {"$dynamicAnchor": "itemType", "type": "number"}}},
                        "strings": {"$id": "strings", "$ref": "generic", "$defs": {"t": {"$dynamicAnchor": "itemType", "type": "string"}}}}}
    grammar = constrain.compile(schema, property_order="any", cache=False)
    validator = jsonschema.Draft202012Validator(schema)
    for doc in ({"kind": "numbers", "list": [1.5]}, {"kind": "numbers", "list": ["a"]}, {"kind": "numbers", "list": [True]},
                {"kind": "strings", "list": ["a"]}, {"kind": "strings", "list": [1]}, {"list": [True]}):
        assert grammar.accepts(json.dumps(doc)) == validator.is_valid(doc) == (constrain.validate(doc, schema) == []), doc


def test_a_dynamic_ref_that_leads_nowhere_is_an_error_naming_it():
    with pytest.raises(InvalidSchema, match=r"unresolvable \$dynamicRef '#x'.*properties/a") as info:
        constrain.compile({"properties": {"a": {"$dynamicRef": "#x"}}}, cache=False)
    assert info.value.pointer == "/properties/a"
    with pytest.raises(InvalidSchema, match=r"\$dynamicRef must be a string"):
        constrain.validate(1, {"items": {"$dynamicRef": 5}})
    with pytest.raises(UnsupportedKeyword, match="remote reference") as info:
        describe_shape({"$id": ROOT, "items": {"$dynamicRef": "https://elsewhere.example/s#x"}})
    assert info.value.keyword == "$dynamicRef"
    # unreached, it is not read (as a `$ref`)
    assert constrain.validate(1, {"$defs": {"unused": {"$dynamicRef": "#x"}}, "type": "integer"}) == []


def test_an_error_in_a_copied_schema_names_the_place_written():
    """The copies of ``/$defs/tree`` are ``/$defs/tree`` again: a refusal inside one points there."""
    tree = {"$id": "tree", "$dynamicAnchor": "node", "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "object"}, "uniqueItems": True},
                           "children": {"type": "array", "items": {"$dynamicRef": "#node"}}}}
    schema = {"$schema": DRAFT, "$id": ROOT, "$dynamicAnchor": "node", "$ref": "tree", "$defs": {"tree": tree}}
    with pytest.raises(UnsupportedKeyword) as info:
        constrain.compile(schema, cache=False)
    assert info.value.pointer == "/$defs/tree/properties/tags/uniqueItems"


def test_scopes_that_multiply_are_refused_in_bounded_time():
    """Resources ``r<i>`` bind anchor ``a<i>``, resources ``s<i>`` bind none, and each leads to both
    of the next level: 2**n bindings reach the last, each a copy of what follows."""
    n = 18
    defs = {}
    for i in range(n):
        onward = {"anyOf": [{"$ref": f"r{i + 1}"}, {"$ref": f"s{i + 1}"}]} if i + 1 < n else {"$dynamicRef": "r0#a0"}
        defs[f"r{i}"] = {"$id": f"r{i}", "$dynamicAnchor": f"a{i}", "type": "array", "items": onward}
        defs[f"s{i}"] = {"$id": f"s{i}", "type": "array", "items": onward}
    schema = {"$schema": DRAFT, "$id": ROOT, "$ref": "s0", "$defs": defs}
    started = time.monotonic()
    with pytest.raises(SchemaTooComplex, match="dynamicRef"):
        constrain.compile(schema, cache=False)
    assert time.monotonic() - started < 60  # a bound, not a speed target: unbounded, this would not end
    with pytest.raises(SchemaTooComplex, match="dynamicRef"):
        constrain.validate([], schema)


ITEMS = {"string": {"type": "string"}, "integer": {"type": "integer"}, "short": {"type": "string", "maxLength": 1},
         "nested": {"type": "array", "items": {"$dynamicRef": "#item"}, "maxItems": 2}, "any": {}}
VALUES = ["a", "bc", 1, 2.5, True, None, [], ["a"], [1, ["b"]], [[["a"]]], {"k": 1}]


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from([None, *sorted(ITEMS)]), min_size=1, max_size=4), st.sampled_from(sorted(ITEMS)),
       st.sampled_from([None, *sorted(ITEMS)]), st.sampled_from(["ref", "branch", "embed"]), st.data())
def test_dynamic_scopes_agree_with_the_spec(wrappers, default, own, how, data):
    """A chain of resources, each binding ``#item`` to one of ``ITEMS`` or to nothing (an
    intermediate scope), ends at the extensible list, whose items may hold the list again; the
    root (binding ``#item`` itself or not) refers to the chain, to either of two chains, or embeds
    its first resource (where python-jsonschema's scope, which a resource joins only once a
    reference is followed from it, may part from the specification's: then refused). Every value
    is judged as python-jsonschema judges it, and no state is a dead end."""
    defs = {"list": extensible_list(ITEMS[default])}

    def chain(tag: str, kinds: list) -> str:
        nxt = "list"
        for i, kind in reversed(list(enumerate(kinds))):
            name = f"{tag}{i}"
            defs[name] = {"$id": name, "$ref": nxt}
            if kind is not None:
                defs[name]["$defs"] = {"it": {"$dynamicAnchor": "item", **ITEMS[kind]}}
            nxt = name
        return nxt

    first = chain("w", wrappers)
    schema = {"$schema": DRAFT, "$id": ROOT, "$defs": defs}
    if own is not None:
        defs["mine"] = {"$dynamicAnchor": "item", **ITEMS[own]}
    if how == "branch":
        other = chain("v", data.draw(st.lists(st.sampled_from([None, *sorted(ITEMS)]), min_size=1, max_size=3)))
        schema["anyOf"] = [{"$ref": first}, {"$ref": other}]
    elif how == "embed":
        schema["allOf"] = [defs.pop(first)]
    else:
        schema["$ref"] = first
    validator = jsonschema.Draft202012Validator(schema)
    try:
        grammar = constrain.compile(schema, cache=False)
    except UnsupportedKeyword as refused:
        assert how == "embed" and "python-jsonschema" in str(refused), refused
        event("refused: the readings part")
        return
    event(f"compiled ({how})")
    for _ in range(20):
        doc = data.draw(st.lists(st.sampled_from(VALUES), max_size=3))
        assert grammar.accepts(json.dumps(doc)) == validator.is_valid(doc), (schema, doc)
        assert (constrain.validate(doc, schema) == []) == validator.is_valid(doc), (schema, doc)
    assert grammar.find_trap(budget=1_000) is None


def test_a_deep_chain_of_references_unfolds_without_the_stack():
    """Each level a ``$ref`` beside its items, 2,000 deep, the ``$dynamicRef`` at the bottom: read
    with an explicit stack, each reference resolved from the base the walk knows."""
    inner = {"$dynamicRef": "#x"}
    for _ in range(2_000):
        inner = {"items": inner, "$ref": "#/$defs/a"}
    schema = {"$id": ROOT, "$defs": {"a": {"$dynamicAnchor": "x", "type": "array"}}, "items": inner}
    grammar = constrain.compile(schema, max_depth=4, cache=False)
    assert grammar.accepts("[[[[]]]]") and not grammar.accepts("[[[1]]]")
    assert constrain.validate([[[1]]], schema) != []
