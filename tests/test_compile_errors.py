"""Bad and hostile schemas get a clear error naming the place, in bounded time and memory."""

import json
import re

import pytest

import constrain


def test_unsupported_keyword_names_keyword_and_pointer():
    """`uniqueItems` deep inside is refused with its JSON pointer, never ignored."""
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"uniqueItems": True}}}}
    with pytest.raises(constrain.UnsupportedKeyword) as err:
        constrain.compile(schema)
    assert err.value.keyword == "uniqueItems"
    assert "/properties/a/items/uniqueItems" in str(err.value)


@pytest.mark.parametrize("keyword,value", [("$recursiveRef", "#"), ("$recursiveAnchor", True)])
def test_each_unsupported_keyword_is_an_error(keyword, value):
    """Every vocabulary keyword we do not enforce raises UnsupportedKeyword."""
    with pytest.raises(constrain.UnsupportedKeyword, match=re.escape(keyword)):
        constrain.compile({"type": "object", keyword: value})


def test_annotations_and_unknown_keywords_are_ignored():
    """title, description, x-... and propertyOrder change nothing."""
    g = constrain.compile({"type": "string", "title": "t", "description": "d", "default": "x", "examples": ["y"],
                           "$comment": "c", "x-extra": 1, "propertyOrder": 3})
    assert g.accepts('"z"')


def test_root_pointer_is_worded_for_people():
    """A problem at the root says 'at the schema root'."""
    with pytest.raises(constrain.UnsupportedKeyword, match="at /uniqueItems"):
        constrain.compile({"uniqueItems": True})


def test_empty_property_name_is_written_quoted():
    """A property named "" shows as \"\" in the pointer."""
    with pytest.raises(constrain.UnsupportedKeyword, match='/properties/""/uniqueItems'):
        constrain.compile({"properties": {"": {"uniqueItems": True}}})


def test_error_inside_ref_target_names_the_reference():
    """A problem inside a $ref target also names the reference that led there."""
    schema = {"$defs": {"bad": {"uniqueItems": True}}, "type": "object", "properties": {"x": {"$ref": "#/$defs/bad"}}}
    with pytest.raises(constrain.UnsupportedKeyword) as err:
        constrain.compile(schema)
    assert "/$defs/bad/uniqueItems" in str(err.value) and "#/$defs/bad" in str(err.value)


@pytest.mark.parametrize("schema", ["{not json", b"[1, 2", [1, 2], 3, None, "null"])
def test_malformed_input_is_invalid_schema(schema):
    """Malformed JSON text, or a list where a schema should be, is InvalidSchema."""
    with pytest.raises(constrain.InvalidSchema):
        constrain.compile(schema)


def test_list_where_a_subschema_should_be():
    """A list as a property schema is InvalidSchema naming the property."""
    with pytest.raises(constrain.InvalidSchema, match="/properties/a"):
        constrain.compile({"properties": {"a": [1]}})


def _nested(depth: int) -> dict:
    schema = {"type": "null"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_deeply_nested_schema_is_bounded():
    """Nesting compiles within the limits; past them it is a clear error, never a RecursionError or a hang."""
    assert constrain.compile(_nested(200)).accepts('{"a":' * 200 + "null" + "}" * 200)
    with pytest.raises(constrain.SchemaTooComplex, match="automaton states at /properties/a/properties/a/"):
        constrain.compile(_nested(10_000))  # lowered level by level until max_states runs out
    with pytest.raises(constrain.SchemaTooComplex, match="compiling took over 0 s"):
        constrain.compile(_nested(10_000), max_seconds=0)  # the time limit stops the same walk
    text = '{"type": "object", "properties": {"a": ' * 10_000 + "{}" + "}}" * 10_000
    with pytest.raises(constrain.InvalidSchema, match="nested too deeply to parse"):
        constrain.compile(text)


def test_a_value_nested_past_the_depth_limit_is_too_complex_for_compile_and_validate():
    """An enum or const value nested deeper than validate walks (1,000 levels) is refused by both, in
    the same words, where validate had filtered it out and compile called the schema unsatisfiable."""
    deep = []
    for _ in range(1_200):
        deep = [deep]
    for schema, pointer in (({"type": "array", "enum": [1, deep]}, "/enum/1"), ({"not": {"const": deep}}, "/not/const")):
        with pytest.raises(constrain.SchemaTooComplex, match=f"nested deeper than 1000 levels at {pointer}") as compiled:
            constrain.compile(schema, cache=False)
        with pytest.raises(constrain.SchemaTooComplex) as validated:
            constrain.validate([], schema)
        assert str(compiled.value) == str(validated.value)


def test_huge_enum_is_bounded():
    """An enum of 100,000 strings compiles or is refused as too complex."""
    values = [f"value number {i}" for i in range(100_000)]
    try:
        g = constrain.compile({"enum": values})
    except constrain.SchemaTooComplex:
        return
    assert g.accepts('"value number 99999"') and not g.accepts('"value number 100000"')


def test_ref_cycle_without_base_case_is_unsatisfiable():
    """A $ref cycle that can never close is Unsatisfiable, not a hang."""
    schema = {"$defs": {"a": {"type": "object", "properties": {"n": {"$ref": "#/$defs/a"}}, "required": ["n"]}},
              "$ref": "#/$defs/a"}
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile(schema)


def test_pure_ref_loop_is_an_error():
    """`a` refers to `b` refers to `a` with nothing else: refused with a clear error."""
    schema = {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    with pytest.raises(constrain.SchemaError):
        constrain.compile(schema)


def test_unresolvable_ref_is_invalid():
    """A $ref to nowhere is InvalidSchema."""
    with pytest.raises(constrain.InvalidSchema, match="nowhere"):
        constrain.compile({"$ref": "#/$defs/nowhere"})


def test_state_limit_is_enforced():
    """Exceeding max_states is SchemaTooComplex naming the limit."""
    with pytest.raises(constrain.SchemaTooComplex):
        constrain.compile({"enum": [f"v{i}" for i in range(2000)]}, max_states=500)


def test_huge_counts_are_refused():
    """maxLength or minItems in the millions are refused as too complex."""
    with pytest.raises(constrain.SchemaTooComplex):
        constrain.compile({"type": "array", "minItems": 10_000_000})


def test_required_false_property_is_unsatisfiable():
    """A required property whose schema is false can never be satisfied."""
    with pytest.raises(constrain.Unsatisfiable, match="x"):
        constrain.compile({"type": "object", "properties": {"x": False}, "required": ["x"]})


def test_options_are_checked():
    """A wrong option value is a ValueError, not a crash later."""
    with pytest.raises(ValueError):
        constrain.compile({}, whitespace="wide")
    with pytest.raises(ValueError):
        constrain.compile({}, max_depth=-1)
    assert json.dumps  # keep import used


@pytest.mark.parametrize("schema,good,bad", [
    ({"not": {"type": "string"}}, ["1", "null", "{}"], ['"a"']),
    ({"type": "string", "not": {"enum": ["a", "b"]}}, ['"c"', '"ab"'], ['"a"', '"\\u0062"']),
    ({"type": "integer", "not": {"const": 2}}, ["1", "3"], ["2", "2.0"]),
    ({"not": {"pattern": "^x"}}, ['"ax"'], ['"xa"', "1"]),
    ({"type": "object", "not": {"required": ["a"]}}, ["{}", '{"b":1}'], ['{"a":1}']),
    ({"type": "boolean", "not": {"const": True}}, ["false"], ["true"]),
])
def test_not_is_exact_where_its_complement_is(schema, good, bad):
    """`not` of types, literal values, one pattern or one required name is compiled exactly."""
    g = constrain.compile(schema, whitespace="compact")
    assert all(g.accepts(x) for x in good) and not any(g.accepts(x) for x in bad)


def test_not_without_an_exact_complement_is_refused():
    """`not` of a format we do not enforce or of uniqueItems is an UnsupportedKeyword naming its
    pointer (array and object literals have one: ``test_boolean.py``)."""
    with pytest.raises(constrain.UnsupportedKeyword, match="/properties/p/not/format"):
        constrain.compile({"properties": {"p": {"not": {"format": "idn-hostname"}}}})
    g = constrain.compile({"type": "string", "not": {"enum": [[1], {"a": 1}, "a"]}})  # no array or object lowered
    assert g.accepts('"b"') and not g.accepts('"a"')
    with pytest.raises(constrain.UnsupportedKeyword, match="/not/uniqueItems"):
        constrain.compile({"not": {"uniqueItems": True}})
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile({"not": {}})


def test_one_of_with_a_discriminator_is_exact():
    """oneOf branches told apart by a required const property compile; non-objects match both
    branches, so they match no oneOf and are refused."""
    g = constrain.compile({"oneOf": [{"properties": {"k": {"const": "a"}}, "required": ["k"]},
                                     {"properties": {"k": {"const": "b"}}, "required": ["k"]}]}, whitespace="compact")
    assert g.accepts('{"k":"a"}') and g.accepts('{"k":"b"}')
    assert not g.accepts('{"k":"c"}') and not g.accepts("1") and not g.accepts("{}")


def test_one_of_through_refs_and_types():
    """A $ref branch is followed before the proof: a date-time string or null."""
    g = constrain.compile({"$defs": {"t": {"type": "string", "format": "date"}},
                           "oneOf": [{"$ref": "#/$defs/t"}, {"type": "null"}]})
    assert g.accepts('"2024-02-29"') and g.accepts("null") and not g.accepts('"2023-02-29"')


def test_one_of_that_may_overlap_is_exactly_one():
    """Two branches a value could both satisfy: each branch without the other, never widened to anyOf."""
    g = constrain.compile({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, whitespace="compact")
    assert g.accepts('{"a":1}') and g.accepts('{"b":{"a":1}}')
    assert not any(g.accepts(x) for x in ('{"a":1,"b":2}', '{"b":1,"a":2}', "{}", "1", '"a"'))


def test_formats_validators_check_but_we_do_not_are_refused():
    """idn-hostname is checked by python-jsonschema: accepting any string would be unsound, so it
    is refused, naming the keyword; unknown formats stay annotations."""
    for name in ("idn-hostname",):
        with pytest.raises(constrain.UnsupportedKeyword, match="format"):
            constrain.compile({"type": "string", "format": name})
    with pytest.warns(UserWarning, match="unknown format"):
        assert constrain.compile({"type": "string", "format": "x-colour"}, cache=False).accepts('"red"')
    for name in ("idn-hostname",):  # a format beside a type that is no string: nothing
        schema = {"type": ["integer", "null"], "format": name}
        assert constrain.compile(schema, cache=False).accepts("5")
        assert constrain.validate(5, schema) == [] and constrain.validate("x", schema) != []
        with pytest.raises(constrain.UnsupportedKeyword, match="format"):
            constrain.validate(5, {"type": ["integer", "string"], "format": name})


@pytest.mark.parametrize("enabled", [True, False])
def test_compiling_leaves_the_garbage_collector_as_it_found_it(enabled):
    """Compiles pause the collector (their containers all live until the end) and put it back as
    it was, after an error too, and when threads compile at once."""
    import gc
    from concurrent.futures import ThreadPoolExecutor

    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        constrain.compile({"type": "string", "maxLength": 2000}, cache=False)
        assert gc.isenabled() == enabled
        with pytest.raises(constrain.Unsatisfiable):
            constrain.compile({"allOf": [{"type": "string"}, {"type": "integer"}]}, cache=False)
        assert gc.isenabled() == enabled
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda n: constrain.compile({"type": "string", "maxLength": n}, cache=False),
                          range(500, 540)))
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()



def test_one_of_pinned_by_a_required_enum_met_with_the_schemas_own_is_proven_disjoint():
    """Branches pinning a required property to different values are disjoint even when each pin
    is met with the schema's own enum of that property (a lazy meet, ``merge.both_nodes``: an
    ``allOf`` underneath), so exactly-one needs no complement there (whose names came first in the order)."""
    from compiler.build import Reader
    from compiler.ir import make
    from compiler.merge import both_nodes
    from compiler.one_of import exact_branches, overlaps
    from compiler.refs import SchemaDocument

    own = {"type": "string", "enum": ["A", "B", "C"]}
    read = Reader(SchemaDocument(True)).of
    met = [make(types=("object",), object={"required": ["type"], "properties": {
        "type": both_nodes(read(own), read({"enum": [v]})), "unit": read({"const": v})}}) for v in "ABC"]
    assert exact_branches(met) == met
    assert overlaps(met) == [set(), set(), set()]
    schema = {"type": "object", "properties": {"type": own, "id": {"type": "string"}}, "required": ["type", "id"],
              "dependencies": {"type": {"oneOf": [{"properties": {"type": {"enum": [v]}, "unit": {"const": v}}} for v in "ABC"]}}}
    g = constrain.compile(schema, whitespace="compact", cache=False)
    assert g.accepts('{"type":"B","id":"x","unit":"B"}') and not g.accepts('{"type":"B","id":"x","unit":"A"}')


@pytest.mark.parametrize("schema", [
    {"properties": []}, {"required": "a"}, {"required": [1]}, {"minLength": -1}, {"maxItems": 1.5},
    {"enum": 3}, {"items": 5}, {"pattern": 3}, {"format": 3}, {"type": "strin"}, {"type": ["string", 3]},
    {"$ref": 3}, {"allOf": []}, {"anyOf": {}}, {"multipleOf": 0}, {"minimum": "1"},
    {"dependentRequired": {"a": "b"}}, {"unevaluatedProperties": 3},
    {"type": "string", "items": {"minimum": "x"}},  # a keyword the string never reads is still checked
    {"$defs": {"a": {"enum": {}}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
    # what JSON cannot write, in a schema handed over as a Python dict
    {"minimum": float("nan")}, {"maximum": float("inf")}, {"multipleOf": float("inf")}, {"exclusiveMinimum": float("-inf")},
    {"enum": ["a", float("nan")]}, {"enum": [{1, 2}]}, {"const": {"a": [float("inf")]}}, {"const": {1: "a"}},
    {"properties": {"p": {"enum": [(1, {2: 3})]}}},
])
def test_compile_and_validate_refuse_a_malformed_keyword_in_the_same_words(schema):
    """Each keyword's value is checked once (``compiler/build.py``): ``compile`` and ``validate``
    raise the same InvalidSchema with the same pointer, never a TypeError."""
    with pytest.raises(constrain.InvalidSchema) as compiled:
        constrain.compile(schema, cache=False)
    with pytest.raises(constrain.InvalidSchema) as validated:
        constrain.validate(None, schema)
    assert str(compiled.value) == str(validated.value)


def test_an_all_of_met_with_itself_is_bounded():
    """An ``allOf`` whose branches are ``allOf``s doubles when met, level after level: a clear error
    in bounded time and memory (found by the lazy-lowering property test: 24 GB before, when the
    branches reached the ``allOf`` again; such a loop is now refused as one that never descends)."""
    defs = {f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(10)}
    schema = {"$ref": "#/$defs/d0", "$defs": {**defs, "d10": {"pattern": "b"}}}
    for lazy in (True, False):
        with pytest.raises(constrain.SchemaTooComplex, match="allOf of more than 256 branches"):
            constrain.compile(schema, cache=False, lazy=lazy)
    again = {"$ref": "#/$defs/shared"}
    looping = {"$ref": "#/$defs/shared", "$defs": {"shared": {"allOf": [again, again]}}}
    with pytest.raises(constrain.InvalidSchema, match="loops back without descending"):
        constrain.compile(looping, cache=False)


def test_a_ref_loop_that_never_descends_is_refused_by_compile_and_validate_alike():
    """``a = anyOf [a, null]`` applies ``a`` to its own instance without end (python-jsonschema
    recurses until it fails): compile refuses it as validate does, wherever the loop sits."""
    schema = {"type": "object",
              "properties": {"a": {"$ref": "#/$defs/ok"}, "b": {"$ref": "#/$defs/loop"}},
              "$defs": {"ok": {"type": "integer"}, "loop": {"anyOf": [{"$ref": "#/$defs/loop"}, {"type": "null"}]}}}
    for refuse in (lambda: constrain.compile(schema, cache=False), lambda: constrain.validate({}, schema)):
        with pytest.raises(constrain.InvalidSchema, match="loops back without descending") as caught:
            refuse()
        assert "/$defs/loop/anyOf/0" in str(caught.value)


@pytest.mark.parametrize("applicator", ["anyOf", "allOf"])
def test_one_of_proof_reads_each_schema_once_however_references_fan_out(applicator, monkeypatch):
    """A oneOf branch whose references fan out six ways eight levels deep (a small schema naming
    6**8 paths) is read once per schema object by the disjointness proof: reading every path had
    taken 80 s past the 20 s compile limit (allOf) and, for a while, 135 s (anyOf)."""
    from compiler import one_of
    reads = []
    for name in ("_read_object_facts", "_read_admitted_kinds"):
        monkeypatch.setattr(one_of, name, lambda *args, read=getattr(one_of, name): reads.append(1) or read(*args))
    defs = {f"l{i}": {applicator: [{"$ref": f"#/$defs/l{i + 1}"}] * 6 + [{"type": "object", "required": ["a"]}]}
            for i in range(8)}
    defs["l8"] = {"type": "object", "required": ["b"]}
    schema = {"$defs": defs, "oneOf": [{"$ref": "#/$defs/l0"}, {"type": "object", "properties": {"a": False}}]}
    try:
        constrain.compile(schema, cache=False)
    except constrain.SchemaError:
        pass  # refused or compiled: either way in bounded work
    assert 0 < len(reads) < 2_000


def test_a_complement_is_made_once_per_schema_however_references_fan_out(monkeypatch):
    """``not`` of an allOf whose references fan out six ways eight deep: each schema's complement
    is made once and shared, and equal branches of a union are one (it had made 6**8)."""
    from compiler.boolean import Complement
    made = []
    complement = Complement._complement
    monkeypatch.setattr(Complement, "_complement", lambda self, *args: made.append(1) or complement(self, *args))
    defs = {f"l{i}": {"allOf": [{"$ref": f"#/$defs/l{i + 1}"}] * 6} for i in range(8)}
    defs["l8"] = {"type": "object", "required": ["b"]}
    grammar = constrain.compile({"$defs": defs, "not": {"$ref": "#/$defs/l0"}}, whitespace="compact", cache=False)
    assert grammar.accepts("1") and grammar.accepts('{"a":1}') and not grammar.accepts('{"b":1}')
    assert len(made) < 50


def test_meetings_that_multiply_within_one_fragment_stop_at_the_time_limit():
    """A oneOf over branches that fan out through references meets without end inside one
    fragment: the compile's time limit stops it there too (it had run for minutes past it)."""
    defs = {f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}] * 6 + [{"type": "string"}]} for i in range(9)}
    defs["l9"] = {"type": "object", "required": ["b"], "properties": {"b": {"enum": [1, 2]}}}
    schema = {"$defs": defs, "oneOf": [{"$ref": "#/$defs/l0"}, {"type": "object"}]}
    with pytest.raises(constrain.SchemaTooComplex, match="compiling took over 1 s"):
        constrain.compile(schema, cache=False, max_seconds=1)
