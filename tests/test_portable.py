"""The portable dialect (the default): only what python-jsonschema, jsonschema-rs and Ajv all
accept; ``dialect="spec"`` reads the specification alone."""

import json

import pytest

import constrain
from compiler import chardfa
from compiler.formats import format_terms
from compiler.regex import pattern_dfa
from compiler.validation import validate
from compiler.validator_formats import _AJV, _IGNORE_CASE, portable_terms


@pytest.mark.parametrize("name", sorted(_AJV))
def test_portable_formats_sit_inside_both_readings(name):
    """Each portable format automaton is non-empty and inside both python-jsonschema's reading
    (ours) and Ajv's."""
    ajv = pattern_dfa(_AJV[name], ignore_case=name in _IGNORE_CASE, max_states=50_000)
    for (cut, _, _), (ours, _, _) in zip(portable_terms(name), format_terms(name)):
        assert not cut.is_empty
        assert chardfa.difference(cut, ours).is_empty
        assert chardfa.difference(cut, ajv).is_empty


@pytest.mark.parametrize("name, ajv_refuses, both_accept", [
    ("uri", "a:", "urn:isbn:0451450523"),
    ("email", "a@b", "first.last+tag@example.co.uk"),
    ("duration", "P1.5D", "P1DT2H"),
    ("duration", "-P1D", "P3W"),
    ("ipv6", "2001:db8::1", "2001:db8::1"),
])
def test_validate_agrees_with_the_portable_reading(name, ajv_refuses, both_accept):
    """validate() refuses by default what Ajv refuses and python-jsonschema accepts; "spec" keeps
    python-jsonschema's reading."""
    schema = {"type": "string", "format": name}
    assert validate(both_accept, schema) == [] == validate(both_accept, schema, dialect="spec")
    if ajv_refuses != both_accept:
        assert validate(ajv_refuses, schema, dialect="spec") == []
        assert validate(ajv_refuses, schema) != []


def test_patterns_read_portably_by_default():
    """U+FEFF is whitespace to ECMA-262, not to Python's re: refused by default, accepted in "spec"."""
    schema = {"type": "string", "pattern": r"^\s*\d+$"}
    assert validate("\ufeff12", schema) != []
    assert validate("\ufeff12", schema, dialect="spec") == []
    assert validate(" 12", schema) == []


def test_unknown_dialect_is_a_clear_error():
    with pytest.raises(ValueError, match="dialect"):
        constrain.compile({"type": "string"}, dialect="python")
    with pytest.raises(ValueError, match="dialect"):
        validate("x", {"type": "string"}, dialect="ecma")


@pytest.mark.parametrize("schema, portable_refuses, both_accept", [
    ({"type": "string", "pattern": r"^\s*\d+$"}, '"\ufeff12"', '" 12"'),
    ({"type": "string", "pattern": r"^\W$"}, '"争"', '"-"'),
    ({"type": "string", "not": {"pattern": r"^\s"}}, '"\\u001cx"', '"x"'),  # U+001C: \s to re only
    ({"type": "string", "format": "uri"}, '"a:"', '"a:b"'),
    ({"type": "string", "format": "email"}, '"a@b"', '"a@b.co"'),
    ({"type": "string", "format": "email"}, '"' + "a" * 65 + '@b.co"', '"' + "a" * 64 + '@b.co"'),
    ({"type": "string", "format": "hostname"}, '"example.com."', '"example.com"'),
    ({"type": "number", "format": "int32"}, "2147483648", "-2147483648"),
    ({"type": "number", "format": "int64"}, "1.5", "9007199254740993"),
    ({"type": "number", "not": {"const": 2}}, "2.0000000000000001", "2.000000000000001"),
    ({"type": "number", "exclusiveMinimum": 1}, "1.0000000000000001", "1.0000000000000003"),
    ({"type": "number"}, "37e491", "37e49"),
])
def test_compiled_grammars_keep_to_the_portable_reading(schema, portable_refuses, both_accept):
    """By default a grammar refuses what one validator would; dialect="spec" takes it back."""
    portable, spec = constrain.compile(schema), constrain.compile(schema, dialect="spec")
    assert portable.accepts(both_accept) and spec.accepts(both_accept)
    assert not portable.accepts(portable_refuses) and spec.accepts(portable_refuses)


@pytest.mark.parametrize("schema, portable_refuses, both_accept", [
    ({"type": "string", "format": "url"}, '"foo"', '"https://example.com/a?b#c"'),
    ({"type": "string", "format": "url"}, '"https://ab.cd?x"', '"Https://x--y.co"'.replace("--", "-")),
    ({"type": "string", "format": "byte"}, '"abc"', '"aGVsbG8="'),
    ({"type": "string", "format": "idn-email"}, '"x@y"', '"a@b.co"'),
    ({"type": "number", "multipleOf": 10}, "99999999999999999999990", "999999999999999999990"),
])
def test_formats_and_multiples_only_ajv_checks(schema, portable_refuses, both_accept):
    """Ajv's own formats (url, byte) and its decimal-text multipleOf (x/step from 1e21 reads as
    exponential): kept to by default, open under "spec"."""
    portable, spec = constrain.compile(schema), constrain.compile(schema, dialect="spec")
    assert portable.accepts(both_accept) and spec.accepts(both_accept)
    assert not portable.accepts(portable_refuses) and spec.accepts(portable_refuses)
    value = json.loads(portable_refuses)
    assert validate(value, schema) != [] and validate(value, schema, dialect="spec") == []


def test_validate_reads_openapi_integer_formats_as_ajv_does():
    """int32/int64 on numbers: an integer (int32 within its range) by default, open under "spec"."""
    int32, int64 = {"type": "number", "format": "int32"}, {"type": "number", "format": "int64"}
    assert validate(-(2**31), int32) == [] and validate(2**31, int32) != [] and validate(1.5, int64) != []
    assert validate(2**31, int32, dialect="spec") == [] and validate(1.5, int64, dialect="spec") == []


@pytest.mark.parametrize("schema, taken, kept", [
    ({"not": {"format": "email"}}, "a@b", "ab"),  # an email to python-jsonschema (an "@"), not to Ajv
    ({"type": "string", "not": {"pattern": "^\\s$"}}, "\ufeff", "a"),  # U+FEFF: \s to ECMA-262, not to re
    ({"oneOf": [{"pattern": "^\\s$"}, {"const": "\ufeff"}, {"const": "b"}]}, "\ufeff", "b"),
    ({"if": {"pattern": "^\\s$"}, "then": {"const": " "}}, "\ufeff", " "),
    ({"type": "array", "contains": {"pattern": "^\\s$"}, "minContains": 0, "maxContains": 0}, ["\ufeff"], ["a"]),
])
def test_a_reading_under_not_keeps_out_what_any_validator_takes(schema, taken, kept):
    """Under a ``not``, the other branches of a ``oneOf``, an ``if``'s test and a ``maxContains``,
    a pattern or format is read as the validators that take most read it: a value one of them takes
    there is refused portably, by ``validate`` and by an enum's filter in ``compile``, as in the
    "spec" reading (ECMA-262's ``\\s``, python-jsonschema's email)."""
    assert validate(taken, schema) != [] and validate(taken, schema, dialect="spec") != []
    assert validate(kept, schema) == []
    grammar = constrain.compile({**schema, "enum": [taken, kept]}, cache=False)
    assert not grammar.accepts(json.dumps(taken)) and grammar.accepts(json.dumps(kept))


def test_not_of_a_format_keeps_out_every_reading_of_it():
    """``not format`` keeps out what python-jsonschema or Ajv takes (an email with an "@" and no dot;
    a URI reference holding a quote, which Ajv takes and rfc3987 does not), a format only Ajv checks
    leaves no string (the others take any), and a format enforced as a subset of its reading
    (regex, uri-template) is refused."""
    grammar = constrain.compile({"type": "string", "not": {"format": "email"}}, cache=False)
    assert not grammar.accepts('"a@b"') and not grammar.accepts('"a@b.co"') and grammar.accepts('"ab"')
    schema = {"type": "string", "not": {"format": "uri-reference"}}
    grammar = constrain.compile(schema, cache=False)
    assert not grammar.accepts('"a\\"b"') and grammar.accepts('"a b"')
    assert validate('a"b', schema) != [] and validate('a"b', schema, dialect="spec") == [] and validate("a b", schema) == []
    with pytest.raises(constrain.Unsatisfiable):
        constrain.compile({"type": "string", "not": {"format": "url"}}, cache=False)
    with pytest.warns(UserWarning, match="unknown format 'url'"), pytest.raises(constrain.Unsatisfiable):
        constrain.compile({"type": "string", "not": {"format": "url"}}, dialect="spec", cache=False)
    for name in ("regex", "uri-template"):
        with pytest.raises(constrain.UnsupportedKeyword, match="'not' of format"):
            constrain.compile({"not": {"format": name}}, cache=False)


def test_a_key_the_readings_differ_on_meets_both_schemas():
    """A key one regex reading matches a key pattern on and the other does not (U+FEFF for
    ``^\\s$``) meets both the pattern's schema and additionalProperties' in the portable dialect,
    in ``compile`` and ``validate`` alike; a plain space matches in both readings."""
    schema = {"type": "object", "patternProperties": {"^\\s$": {"type": ["integer", "null"]}},
              "additionalProperties": {"type": ["string", "null"]}}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    for doc, ok in (({"\ufeff": 1}, False), ({"\ufeff": "a"}, False), ({"\ufeff": None}, True), ({" ": 1}, True),
                    ({" ": "a"}, False), ({"x": "a"}, True)):
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) is ok, doc
        assert (validate(doc, schema) == []) is ok, doc
    assert validate({"\ufeff": 1}, schema, dialect="spec") == []  # ECMA-262 alone: the pattern's schema


def test_a_key_pattern_with_a_lookahead_covers_the_keys_the_readings_may_differ_on():
    """Where a key pattern's either-reading is refused (a lookahead), the keys holding a scalar the
    engines may read apart (non-ASCII, CR, LF, U+001C-U+001F) meet both schemas: narrower, never
    wider; ASCII keys are read exactly, and ``validate`` under a ``not`` takes the same cover."""
    schema = {"type": "object", "patternProperties": {"^(?!x)\\w+$": {"type": "integer"}},
              "additionalProperties": {"type": "string"}}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    for doc, ok in (({"ab": 1}, True), ({"ab": "s"}, False), ({"xb": "s"}, True), ({"é": 1}, False), ({"é": "s"}, False)):
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) is ok, doc
    assert validate({"é": 1}, schema) != [] and validate({"ab": 1}, schema) == []
    assert validate("a", {"not": {"pattern": "^(?!b)"}}) != [] and validate("b", {"not": {"pattern": "^(?!b)"}}) == []


@pytest.mark.parametrize("pattern, taken, kept", [
    ("^.$", "\r", "ab"),        # Python's "." takes CR (and U+2028), ECMA-262's does not
    ("^.$", "\u2028", "ab"),
    ("^a$", "a\n", "ab"),       # Python's "$" holds before a final line feed
    ("a$", "ba\n", "a\nb"),
    ("a$b?", "a\n", "b"),       # "$" with more after it: covered (every string with a line feed is out)
])
def test_dot_and_dollar_under_not_keep_out_what_python_matches(pattern, taken, kept):
    """A string python-jsonschema's ``re`` matches a pattern on is refused under its ``not`` in the
    portable dialect, by ``compile`` and ``validate``; ECMA-262 alone (``spec``) takes it."""
    schema = {"type": "string", "not": {"pattern": pattern}}
    assert validate(taken, schema) != [] and validate(taken, schema, dialect="spec") == []
    assert validate(kept, schema) == []
    grammar = constrain.compile(schema, cache=False)
    assert not grammar.accepts(json.dumps(taken)) and grammar.accepts(json.dumps(kept))
    assert constrain.compile(schema, dialect="spec", cache=False).accepts(json.dumps(taken))


def test_a_key_python_matches_by_its_final_line_feed_meets_both_schemas():
    """``^a$`` matches the key "a\\n" in Python's reading only: that key meets the pattern's schema
    and additionalProperties' (here no value), where "a" meets the pattern's alone."""
    schema = {"type": "object", "patternProperties": {"^a$": {"type": "integer"}},
              "additionalProperties": {"type": "string"}}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    for doc, ok in (({"a": 1}, True), ({"a": "s"}, False), ({"a\n": 1}, False), ({"a\n": "s"}, False),
                    ({"b": "s"}, True)):
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) is ok, doc
        assert (validate(doc, schema) == []) is ok, doc


def test_a_lookahead_under_not_is_covered_not_refused():
    """``not`` of a pattern with a lookahead and a construct the engines read apart keeps out the
    portable reading and every string holding a scalar they may read apart (narrower than exact,
    never wider); with no such construct both readings are ECMA-262's, and it is exact."""
    grammar = constrain.compile({"type": "string", "not": {"pattern": "^(?!x)a."}}, cache=False)
    for text, ok in (("xab", True), ("ba", True), ("ab", False), ("a\u00e9", False), ("\u00e9", False)):
        assert grammar.accepts(json.dumps(text)) is ok, text
    grammar = constrain.compile({"type": "string", "not": {"pattern": "^(?!x)a"}}, cache=False)
    for text, ok in (("xa", True), ("ba", True), ("a", False), ("ab", False), ("\u00e9", True)):
        assert grammar.accepts(json.dumps(text)) is ok, text


def test_keys_between_the_readings_of_open_and_closed_objects():
    """The same key pattern in an open object and a closed one: a key only Python's reading matches
    ("x\\n" for ``^x$``) meets the pattern's schema in both, and is out of the closed one (where
    matching no pattern rules a key out); nineteen such patterns beside ``additionalProperties:
    false`` stay within the region bound."""
    pattern = {"^x$": {"type": "integer"}}
    schema = {"type": "object", "properties": {
        "a": {"type": "object", "patternProperties": pattern},
        "b": {"type": "object", "patternProperties": pattern, "additionalProperties": False}}}
    grammar = constrain.compile(schema, whitespace="compact", cache=False)
    for doc, ok in (({"a": {"x": 1, "y": "s"}, "b": {"x": 1}}, True), ({"a": {"x\n": 1}}, True),
                    ({"a": {"x\n": "s"}}, False), ({"b": {"x\n": 1}}, False), ({"b": {"y": 1}}, False)):
        assert grammar.accepts(json.dumps(doc, separators=(",", ":"))) is ok, doc
        assert (validate(doc, schema) == []) is ok, doc
    closed = {"type": "object", "additionalProperties": False,
              "patternProperties": {f"^k{i}:(en|nl)$": {"type": "string"} for i in range(19)}}
    grammar = constrain.compile(closed, whitespace="compact", cache=False)
    assert grammar.accepts('{"k3:en":"a","k18:nl":"b"}') and not grammar.accepts('{"k3:en\\n":"a"}')


def test_not_hostname_keeps_out_hostnames_within_their_lengths():
    """A hostname's reading is bounded in length (253 characters, 254 with a final dot): ``not``
    of it takes every string outside the labels' language, and the labels past those lengths."""
    schema = {"type": "string", "not": {"format": "hostname"}}
    grammar = constrain.compile(schema, cache=False)
    at_most = ".".join(["a" * 63] * 3 + ["a" * 61])  # 253 characters
    for text, ok in (("example.com", False), ("example.com.", False), (at_most, False), (at_most + ".", False),
                     (at_most + "a", True), (at_most + "a.", True), ("-bad", True), ("x..y", True), ("", True)):
        assert grammar.accepts(json.dumps(text)) is ok, text
        assert (validate(text, schema) == []) is ok, text
