"""Behaviour of in-document `$ref` resolution and schema loading."""

import json

import jsonschema
import pytest

import constrain

from compiler.errors import InvalidSchema, UnsupportedKeyword
from compiler.load import load_schema
from compiler.refs import SchemaDocument, child, split_pointer


def test_child_escapes_tilde_and_slash():
    """Pointer segments are joined with ~0 / ~1 escaping; the root pointer is the empty string."""
    assert child("", "properties", "a/b") == "/properties/a~1b"
    assert child("/x", "~", 3) == "/x/~0/3"
    assert child("") == ""
    assert split_pointer("/properties/a~1b/~0") == ["properties", "a/b", "~"]


def test_hash_alone_is_the_document_root():
    """`#` resolves to the root schema at pointer ''."""
    schema = {"properties": {"next": {"$ref": "#"}}}
    assert SchemaDocument(schema).resolve("#", "/properties/next") == ("", schema)


def test_pointer_fragment_unescapes_tilde_slash_and_percent():
    """`#/a~1b`, `#/t~0` and `%20` are decoded; the target pointer comes back JSON-pointer escaped."""
    schema = {"$defs": {"a/b": {"type": "null"}, "t~": {"type": "string"}, "x y": {"const": 1}}}
    doc = SchemaDocument(schema)
    assert doc.resolve("#/$defs/a~1b", "") == ("/$defs/a~1b", {"type": "null"})
    assert doc.resolve("#/$defs/t~0", "") == ("/$defs/t~0", {"type": "string"})
    assert doc.resolve("#/$defs/x%20y", "") == ("/$defs/x y", {"const": 1})


def test_defs_and_definitions_at_any_depth():
    """`$defs` and `definitions` are found wherever the pointer says, including list indexes."""
    schema = {"anyOf": [{"definitions": {"d": {"type": "integer"}}}],
              "properties": {"p": {"$defs": {"e": {"type": "boolean"}}}}}
    doc = SchemaDocument(schema)
    assert doc.resolve("#/anyOf/0/definitions/d", "/x") == ("/anyOf/0/definitions/d", {"type": "integer"})
    assert doc.resolve("#/properties/p/$defs/e", "") == ("/properties/p/$defs/e", {"type": "boolean"})


def test_root_id_sets_the_base_uri():
    """With a root `$id`, a relative ref naming the document itself resolves inside it."""
    schema = {"$id": "http://example.com/root.json", "$defs": {"a": {"type": "string"}}}
    doc = SchemaDocument(schema)
    assert doc.resolve("root.json#/$defs/a", "")[0] == "/$defs/a"
    assert doc.resolve("http://example.com/root.json#/$defs/a", "")[0] == "/$defs/a"


def test_embedded_id_is_a_resource_with_its_own_fragments():
    """A nested `$id` opens a resource: relative refs join against it, `#/...` is relative to it."""
    schema = {
        "$id": "http://x/root.json",
        "properties": {"item": {"$ref": "item.json"}},
        "$defs": {"item": {"$id": "item.json", "$defs": {"n": {"type": "number"}},
                           "properties": {"n": {"$ref": "#/$defs/n"}}}},
    }
    doc = SchemaDocument(schema)
    assert doc.resolve("item.json", "/properties/item")[0] == "/$defs/item"
    assert doc.resolve("#/$defs/n", "/$defs/item/properties/n") == ("/$defs/item/$defs/n", {"type": "number"})
    assert doc.resolve("http://x/item.json#/$defs/n", "")[0] == "/$defs/item/$defs/n"


def test_relative_id_without_absolute_base():
    """A relative `$id` with no root base still names a resource that relative refs can reach."""
    schema = {"$defs": {"i": {"$id": "item.json", "type": "array"}}, "items": {"$ref": "item.json"}}
    assert SchemaDocument(schema).resolve("item.json", "/items")[0] == "/$defs/i"


def test_a_ref_inside_a_relative_resource_resolves_there():
    """A `$ref` written inside a resource named by a relative `$id` (the document has no base URI)
    is made absolute at load against "sub/a", which leaves it relative: resolved, it must name that
    resource, not "sub/sub/a" (a remote reference, refused). Compiled and validated as
    python-jsonschema reads it: the pointer is the resource's own, not the root's."""
    schema = {"$defs": {"a": {"$id": "sub/a", "$defs": {"x": {"type": "integer"}}, "properties": {"p": {"$ref": "#/$defs/x"}}},
                        "x": {"type": "string"}},
              "properties": {"q": {"$ref": "#/$defs/a"}}}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    oracle = jsonschema.Draft202012Validator(schema)
    for value in ({"q": {"p": 1}}, {"q": {"p": "s"}}, {"q": {}}):
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == oracle.is_valid(value), value
        assert (constrain.validate(value, schema) == []) == oracle.is_valid(value), value


def test_urn_base_keeps_fragment_refs_inside():
    """Non-hierarchical bases (urn:) still resolve `#...` refs (urljoin alone would lose them)."""
    schema = {"$id": "urn:example:root", "$defs": {"a": {"type": "null"}}}
    assert SchemaDocument(schema).resolve("#/$defs/a", "")[0] == "/$defs/a"


def test_anchor_and_draft7_hash_id():
    """`$anchor: "foo"` and draft 7's `$id: "#foo"` are both plain-name fragments."""
    schema = {"$defs": {"a": {"$anchor": "A", "type": "string"}, "b": {"$id": "#B", "type": "null"}}}
    doc = SchemaDocument(schema)
    assert doc.resolve("#A", "/properties/x")[0] == "/$defs/a"
    assert doc.resolve("#B", "")[0] == "/$defs/b"


def test_anchor_is_scoped_to_its_resource():
    """An anchor under an embedded `$id` is reached through that resource's URI."""
    schema = {"$id": "http://x/r.json",
              "$defs": {"s": {"$id": "s.json", "$defs": {"t": {"$anchor": "T", "const": 1}}}}}
    doc = SchemaDocument(schema)
    assert doc.resolve("s.json#T", "")[0] == "/$defs/s/$defs/t"
    with pytest.raises(InvalidSchema):
        doc.resolve("#T", "")


def test_draft4_id_is_honoured_but_not_in_2020_12():
    """`id` sets the base in draft 4 documents; in 2020-12 it is an unknown keyword."""
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#",
              "definitions": {"a": {"id": "a.json", "type": "string"}}}
    assert SchemaDocument(draft4).resolve("a.json", "")[0] == "/definitions/a"
    modern = {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "$defs": {"a": {"id": "a.json", "type": "string"}}}
    with pytest.raises(UnsupportedKeyword):
        SchemaDocument(modern).resolve("a.json", "")


def test_property_named_id_is_not_an_identifier():
    """A property called `id` or `$id` is a name, not a base URI."""
    schema = {"properties": {"id": {"type": "string"}, "$id": {"type": "integer"}},
              "$defs": {"a": {"type": "null"}}}
    doc = SchemaDocument(schema)
    assert doc.resolve("#/$defs/a", "/properties/id")[0] == "/$defs/a"
    assert doc.resolve("#/properties/$id", "")[1] == {"type": "integer"}


def test_fragment_only_ids_do_not_change_the_base():
    """jsonschema.net-style `$id: "#/properties/x"` leaves the base alone."""
    schema = {"$id": "http://example.com/root.json", "definitions": {"d": {"type": "null"}},
              "properties": {"x": {"$id": "#/properties/x", "$ref": "#/definitions/d"}}}
    assert SchemaDocument(schema).resolve("#/definitions/d", "/properties/x")[0] == "/definitions/d"


def test_unresolvable_ref_is_invalid_schema_at_the_ref():
    """A missing target is `InvalidSchema` naming the pointer of the schema holding the $ref."""
    doc = SchemaDocument({"properties": {"a": {"$ref": "#/$defs/missing"}}})
    with pytest.raises(InvalidSchema) as info:
        doc.resolve("#/$defs/missing", "/properties/a")
    assert info.value.pointer == "/properties/a"
    assert "unresolvable $ref '#/$defs/missing'" in str(info.value)
    with pytest.raises(InvalidSchema):
        doc.resolve("#nosuchanchor", "")


def test_ref_to_a_non_schema_is_invalid():
    """A pointer that lands on a list or a string is not a schema."""
    doc = SchemaDocument({"required": ["a"], "$defs": {}})
    with pytest.raises(InvalidSchema):
        doc.resolve("#/required", "")


def test_remote_reference_is_unsupported():
    """Other documents and metaschema URLs are never fetched: UnsupportedKeyword('$ref')."""
    doc = SchemaDocument({"properties": {"a": {"$ref": "other.json"}}})
    for ref in ("other.json", "http://json-schema.org/draft-07/schema#", "https://x.org/s.json#/a"):
        with pytest.raises(UnsupportedKeyword) as info:
            doc.resolve(ref, "/properties/a")
        assert info.value.keyword == "$ref" and "remote reference" in str(info.value)


def test_duplicate_id_is_ambiguous_only_when_referenced():
    """Two resources with one URI load fine; a ref to that URI is an invalid schema."""
    schema = {"$defs": {"a": {"$id": "http://x/d.json"}, "b": {"$id": "http://x/d.json"}}}
    doc = SchemaDocument(schema)
    with pytest.raises(InvalidSchema):
        doc.resolve("http://x/d.json", "")


def test_deep_document_is_indexed_without_recursion():
    """A schema nested 10,000 levels deep indexes and resolves without RecursionError."""
    schema: object = {"$ref": "#/$defs/leaf"}
    for _ in range(10_000):
        schema = {"items": schema}
    schema["$defs"] = {"leaf": {"$anchor": "L", "type": "null"}}
    doc = SchemaDocument(schema)
    assert doc.resolve("#/$defs/leaf", "/items" * 10_000) == ("/$defs/leaf", {"$anchor": "L", "type": "null"})
    assert doc.resolve("#L", "/items" * 5000)[0] == "/$defs/leaf"


def test_boolean_root_document():
    """A boolean schema is a document whose only target is itself."""
    assert SchemaDocument(True).resolve("#", "") == ("", True)


def test_load_schema_accepts_dict_bool_text_and_bytes():
    """Dicts and booleans pass through unchanged; JSON text and bytes are parsed."""
    schema = {"type": "string"}
    assert load_schema(schema) is schema
    assert load_schema(False) is False
    assert load_schema('{"type": "integer"}') == {"type": "integer"}
    assert load_schema(b"true") is True


def test_load_schema_reports_json_error_position():
    """Malformed JSON text is InvalidSchema at the root with the line and column of the error."""
    with pytest.raises(InvalidSchema) as info:
        load_schema('{"type": }')
    assert info.value.pointer == ""
    assert "line 1 column 10" in str(info.value)
    with pytest.raises(InvalidSchema):
        load_schema('{"minimum": NaN}')


@pytest.mark.parametrize("value, kind", [([], "a list"), ("[1, 2]", "a list"), (3, "a number"),
                                         (None, "null"), ('"s"', "a string")])
def test_load_schema_refuses_non_schemas(value, kind):
    """Anything but an object or a boolean is InvalidSchema naming what it was."""
    with pytest.raises(InvalidSchema) as info:
        load_schema(value)
    assert f"a schema must be an object or a boolean, not {kind}" in str(info.value)


def test_load_schema_takes_a_pydantic_model():
    """A pydantic v2 model class is turned into its JSON schema."""
    pydantic = pytest.importorskip("pydantic")

    class Item(pydantic.BaseModel):
        sku: str
        qty: int = 1

    schema = load_schema(Item)
    assert schema["properties"]["sku"]["type"] == "string"
    assert schema["required"] == ["sku"]


def test_pointer_missing_in_a_nested_resource_falls_back_to_the_root():
    """Sloppy documents give a subschema an `id` yet mean the root's `#/definitions/...`."""
    schema = {"definitions": {"d": {"type": "null"}},
              "properties": {"x": {"id": "Thing", "properties": {"y": {"$ref": "#/definitions/d"}}}}}
    doc = SchemaDocument(schema)
    assert doc.resolve("#/definitions/d", "/properties/x/properties/y") == ("/definitions/d", {"type": "null"})


def test_jackson_style_urn_ids_resolve():
    """`urn:` ids (Jackson's draft-4 output) name resources that refs reach directly."""
    schema = {"id": "urn:jsonschema:com:acme:Order",
              "properties": {"line": {"id": "urn:jsonschema:com:acme:Line", "type": "object"},
                             "next": {"$ref": "urn:jsonschema:com:acme:Line"}}}
    assert SchemaDocument(schema).resolve("urn:jsonschema:com:acme:Line", "/properties/next")[0] == "/properties/line"


def test_via_is_passed_on_to_errors():
    """The refs that led to a location are named in the error for a ref found there."""
    with pytest.raises(InvalidSchema) as info:
        SchemaDocument({}).resolve("#/missing", "/x", via=("#/a",))
    assert info.value.via == ("#/a",) and "reached through $ref '#/a'" in str(info.value)


@pytest.mark.parametrize("dialect, alone", [
    ("http://json-schema.org/draft-04/schema#", True),
    ("http://json-schema.org/draft-07/schema#", True),
    ("https://json-schema.org/draft/2020-12/schema", False),
    (None, False),
])
def test_ref_siblings_are_ignored_exactly_where_the_draft_says(dialect, alone):
    """Drafts 3 to 7 ignore the keywords beside a ``$ref`` (an unsupported one too), as their
    validators do; 2020-12, and a document that names no draft, apply both. The grammar and
    ``constrain.validate`` agree."""
    schema = {"definitions": {"point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
              "properties": {"at": {"$ref": "#/definitions/point", "type": "string", "maxProperties": 0}}}
    if dialect:
        schema["$schema"] = dialect
    text, value = '{"at": {"x": 1}}', {"at": {"x": 1}}
    grammar = constrain.compile(schema, whitespace="flexible", cache=False)
    assert grammar.accepts(text) == alone
    assert (constrain.validate(value, schema) == []) == alone
    assert not grammar.accepts('{"at": {"x": "no"}}')
    if alone:
        schema["properties"]["at"]["not"] = {"const": 1}
        assert constrain.compile(schema, whitespace="flexible", cache=False).accepts(text)
        assert constrain.validate(value, schema) == []
    # the same under an allOf, where the branches are met (and a reference's target, reached in turn)
    branch = schema["properties"].pop("at")
    schema["properties"]["at"] = {"allOf": [branch, {"$ref": "#/definitions/twice"}]}
    schema["definitions"]["twice"] = {"$ref": "#/definitions/point", "minProperties": 2}
    grammar = constrain.compile(schema, whitespace="flexible", cache=False)
    assert grammar.accepts(text) == alone
    assert (constrain.validate(value, schema) == []) == alone


def test_recursive_ref_beside_other_keywords_is_met_once_and_called_again():
    """``{"$ref": "#", "required": [...]}`` inside its own target: the met schema is one fragment that
    calls itself, so each level asks the same, at any depth (within max_depth)."""
    schema = {"type": "object", "properties": {"next": {"$ref": "#", "required": ["v"]}, "v": {"type": "integer"}}}
    grammar = constrain.compile(schema, whitespace="compact", property_order="any", cache=False)
    for text, ok in (("{}", True), ('{"next":{"v":1}}', True), ('{"next":{}}', False),
                     ('{"next":{"v":1,"next":{"v":2}}}', True), ('{"next":{"v":1,"next":{}}}', False)):
        assert grammar.accepts(text) is ok, text
        assert (constrain.validate(json.loads(text), schema) == []) is ok, text
    assert grammar.find_trap(2000) is None


# -- resources: the other files of a multi-file schema, handed over (never fetched) --------------
ADDRESS = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
           "properties": {"zip": {"$ref": "#/$defs/zip"}, "country": {"$ref": "countries.json"}},
           "required": ["zip"], "$defs": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}}}
COUNTRIES = {"enum": ["BR", "PT"]}
PERSON = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
          "properties": {"home": {"$ref": "https://example.com/schemas/address.json"},
                         "zip": {"$ref": "https://example.com/schemas/address.json#/$defs/zip"}}}
RESOURCES = {"https://example.com/schemas/address.json": ADDRESS,
             "https://example.com/schemas/countries.json": COUNTRIES}


def test_a_remote_ref_reaches_a_resource_handed_over():
    """A $ref to another file resolves inside the resources given, relative refs in them against
    their own URI; the validator reads them the same way."""
    grammar = constrain.compile(PERSON, resources=RESOURCES, cache=False)
    from compiler.validation import validate
    for doc, valid in [({"home": {"zip": "12345", "country": "BR"}, "zip": "00000"}, True),
                       ({"home": {"zip": "1234"}}, False), ({"home": {"zip": "12345", "country": "ES"}}, False),
                       ({"zip": "abcde"}, False)]:
        assert grammar.accepts(json.dumps(doc)) == valid, doc
        assert (validate(doc, PERSON, resources=RESOURCES) == []) == valid, doc
    assert grammar.find_trap(2000) is None


def test_a_remote_ref_without_its_resource_stays_unsupported():
    with pytest.raises(UnsupportedKeyword, match="remote reference"):
        constrain.compile(PERSON, cache=False)
    with pytest.raises(UnsupportedKeyword, match="remote reference"):
        constrain.compile(PERSON, resources={"https://example.com/schemas/address.json": ADDRESS}, cache=False)


def test_a_resource_with_its_own_id_answers_to_both():
    resource = {"$id": "https://example.com/real.json", "type": "integer", "$defs": {"small": {"maximum": 3}}}
    schema = {"type": "array", "prefixItems": [{"$ref": "https://example.com/given.json"},
                                              {"$ref": "https://example.com/real.json#/$defs/small"}]}
    grammar = constrain.compile(schema, resources={"https://example.com/given.json": resource}, cache=False)
    assert grammar.accepts("[7, 2]") and not grammar.accepts("[7, 4]") and not grammar.accepts('["7", 2]')


@pytest.mark.parametrize("resources, error", [
    (["https://example.com/a.json"], TypeError),
    ({"a.json": {}}, ValueError),
    ({"https://example.com/a.json#x": {}}, ValueError),
    ({"https://example.com/a.json": [1]}, InvalidSchema),
    ({"https://example.com/a.json": {"$schema": "http://json-schema.org/draft-07/schema#"}}, UnsupportedKeyword),
])
def test_bad_resources_are_clear_errors(resources, error):
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "https://example.com/a.json"}
    with pytest.raises(error):
        constrain.compile(schema, resources=resources, cache=False)


def test_a_relative_ref_keeps_its_meaning_when_its_schema_is_inlined():
    """``b.json``'s ``#/definitions/inner`` means b's definitions, also once the root's allOf has
    merged b's keywords into the root (where ``#`` would be the root)."""
    schema = {"$id": "http://example.com/a.json",
              "properties": {"foo": {"$id": "b.json", "definitions": {"inner": {"type": "string"}},
                                     "allOf": [{"$ref": "#/definitions/inner"}]}},
              "allOf": [{"$ref": "b.json"}]}
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts('"x"') and not grammar.accepts("1")


def test_a_ref_reaches_a_dynamic_anchor_as_a_plain_one():
    """To a ``$ref`` a ``$dynamicAnchor`` is an anchor like any other; a ``$dynamicRef`` to it from
    where no other resource is in scope means the same (``test_dynamic_ref.py``)."""
    schema = {"$id": "https://example.com/root", "type": "array", "items": {"$ref": "#items"},
              "$defs": {"foo": {"$dynamicAnchor": "items", "type": "string"}}}
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts('["a", "b"]') and not grammar.accepts('["a", 4]')
    dynamic = constrain.compile({**schema, "items": {"$dynamicRef": "#items"}}, cache=False)
    assert dynamic.accepts('["a", "b"]') and not dynamic.accepts('["a", 4]')


def test_a_ref_under_an_enum_filter_resolves_in_the_document():
    """Enum values are filtered by the schema beside them; a `$ref` there means the document's target
    (it was resolved against the filter's own little schema: "unresolvable")."""
    schema = {"allOf": [{"enum": [{"foo": False}, {"foo": 1}]},
                        {"not": {"not": {"additionalProperties": False, "properties": {"foo": {"$ref": "#/$defs/f"}}}}}],
              "$defs": {"f": {"type": "boolean"}}}
    grammar = constrain.compile(schema, cache=False)
    assert grammar.accepts('{"foo": false}') and not grammar.accepts('{"foo": 1}')


def test_an_embedded_resource_of_another_draft_is_refused():
    """A resource (its own ``$id``) naming another draft than the document's reads its keywords its
    own way: refused, naming its ``$schema``; of the document's draft, or in a document naming none
    (every keyword kept, the narrowest reading), or without an ``$id`` (``$schema`` says nothing
    there), it compiles."""
    d7, d12 = "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"
    mixed = {"$schema": d12, "$defs": {"x": {"$id": "http://e/z", "$schema": d7, "$ref": "#/definitions/i",
                                             "type": "string", "definitions": {"i": {"type": "integer"}}}},
             "$ref": "http://e/z"}
    with pytest.raises(constrain.UnsupportedKeyword, match="another draft") as raised:
        constrain.compile(mixed, cache=False)
    assert raised.value.pointer == "/$defs/x/$schema"
    with pytest.raises(constrain.UnsupportedKeyword, match="another draft"):
        constrain.validate(1, mixed)
    for root, inner, ident in ((d7, d7.rstrip("#"), True), (None, d7, True), (d12, d7, False)):
        resource = {"$schema": inner, "type": "integer", **({"$id": "http://e/z"} if ident else {})}
        schema = {**({"$schema": root} if root else {}), "definitions": {"x": resource},
                  "$ref": "http://e/z" if ident else "#/definitions/x"}
        grammar = constrain.compile(schema, cache=False)
        assert grammar.accepts("7") and not grammar.accepts('"a"')


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-04/schema#", "http://json-schema.org/draft-07/schema#",
                                   "https://json-schema.org/draft/2020-12/schema"])
def test_resources_are_read_as_their_draft_reads_them(draft):
    """A resource whose root is a `$ref` (siblings hidden in drafts 3 to 7, its URI too) and one
    naming itself with its draft's word (`id` in draft 4, `$id` after) answer to the URI they were
    handed over under as python-jsonschema's registry has them (a review found the first refused)."""
    referencing = pytest.importorskip("referencing")
    import jsonschema
    id_word = "id" if "draft-04" in draft else "$id"
    hidden = {"$ref": "#/definitions/small", "maximum": 1, "definitions": {"small": {"type": "integer", "maximum": 3}}}
    named = {id_word: "https://example.com/real.json", "type": "integer", "definitions": {"odd": {"not": {"multipleOf": 2}}}}
    resources = {"https://example.com/hidden.json": hidden, "https://example.com/given.json": named}
    schema = {"$schema": draft, "type": "array", ("prefixItems" if "2020" in draft else "items"): [
        {"$ref": "https://example.com/hidden.json"}, {"$ref": "https://example.com/given.json"},
        {"$ref": "https://example.com/real.json#/definitions/odd"}]}
    spec = referencing.jsonschema.specification_with(draft)
    registry = referencing.Registry().with_resources(
        (uri, referencing.Resource.from_contents(resource, default_specification=spec)) for uri, resource in resources.items())
    oracle = jsonschema.validators.validator_for(schema)(schema, registry=registry)
    grammar = constrain.compile(schema, resources=resources, cache=False)
    from compiler.validation import validate
    seen = set()
    for doc in ([0, 1, 3], [2, 1, 3], [4, 1, 3], [0, "a", 3], [0, 1, 2], ["a"], [3, 2, 5]):
        expected = oracle.is_valid(doc)
        seen.add(expected)
        assert grammar.accepts(json.dumps(doc)) == expected, doc
        assert (validate(doc, schema, resources=resources) == []) == expected, doc
    assert seen == {True, False}
