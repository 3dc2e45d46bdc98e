"""Roots of every kind, and what the document may contain around the root value."""

import pytest

import constrain

ANY_DOCS = ["null", "true", "false", "0", "-1.5e3", '"x"', "[]", "{}", '[1, {"a": [null]}]', '{"a": {"b": "c"}}']


@pytest.mark.parametrize("schema", [{}, True, {"description": "anything"}])
def test_empty_schema_and_true_accept_any_json_value(schema):
    """`{}` and `true` mean any JSON value, of every type."""
    g = constrain.compile(schema)
    for doc in ANY_DOCS:
        assert g.accepts(doc), doc
    for doc in ["", "nul", "[1,]", "{1: 2}", "'x'", "01"]:
        assert not g.accepts(doc), doc


def test_false_root_is_unsatisfiable():
    """`false` admits nothing: a compile error, not an automaton that never accepts."""
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile(False)


@pytest.mark.parametrize("schema,good,bad", [
    ({"type": "object"}, ['{}', '{"a": 1}'], ['[]', '1']),
    ({"type": "array"}, ['[]', '[1, "a"]'], ['{}', '"[]"']),
    ({"type": "string"}, ['""', '"a"'], ['1', 'null']),
    ({"type": "number"}, ['1', '1.5', '-0', '2e10'], ['"1"', 'true']),
    ({"type": "integer"}, ['1', '-7', '0'], ['1.0', '1.5', '"1"', 'true', '1e2']),
    ({"type": "boolean"}, ['true', 'false'], ['1', 'null']),
    ({"type": "null"}, ['null'], ['0', '""']),
    ({"enum": ["a", 2, None]}, ['"a"', '2', 'null'], ['"b"', '3']),
    ({"const": {"k": [1, 2]}}, ['{"k": [1, 2]}', '{"k":[1,2]}'], ['{"k": [2, 1]}']),
    ({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s"}, ['"x"'], ['1']),
    ({"type": ["string", "null"]}, ['"x"', 'null'], ['1']),
])
def test_root_of_every_kind(schema, good, bad):
    """Each kind of root accepts its values and only those."""
    g = constrain.compile(schema)
    for doc in good:
        assert g.accepts(doc), doc
    for doc in bad:
        assert not g.accepts(doc), doc


@pytest.mark.parametrize("schema,doc", [({"type": "object"}, "{}"), ({"type": "integer"}, "12"),
                                        ({"type": "string"}, '"a"'), ({}, "null")])
def test_no_whitespace_around_the_root(schema, doc):
    """The document is the value alone: no leading or trailing whitespace."""
    g = constrain.compile(schema, whitespace="flexible")
    assert g.accepts(doc)
    assert not g.accepts(" " + doc)
    assert not g.accepts(doc + "\n")


def test_root_number_is_complete_at_a_terminal_state_yet_extendable():
    """'12' is a complete document and also a prefix of '123'."""
    g = constrain.compile({"type": "integer"})
    assert g.accepts("12") and g.accepts("123")
    assert not g.accepts("1.") and g.accepts_prefix("1")


def test_whitespace_modes():
    """compact allows none, bounded a few characters, flexible any amount."""
    doc = '{"a": [1,  2]}'
    schema = {"type": "object", "properties": {"a": {"type": "array"}}}
    assert not constrain.compile(schema, whitespace="compact").accepts(doc)
    assert constrain.compile(schema, whitespace="compact").accepts('{"a":[1,2]}')
    assert constrain.compile(schema, whitespace="bounded").accepts(doc)
    long = '{"a":' + " " * 50 + "[1]}"
    assert not constrain.compile(schema, whitespace="bounded").accepts(long)
    assert constrain.compile(schema, whitespace="flexible").accepts(long)
