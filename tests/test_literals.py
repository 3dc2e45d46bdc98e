"""The literal rules: keys, enum and const values are matched scalar by scalar."""

import json
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from compiler import scalars

import constrain

SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def const(value):
    return constrain.compile({"const": value}, whitespace="compact")


def q(body: str) -> str:
    return '"' + body + '"'


@pytest.mark.parametrize("char,short", SHORT.items())
def test_short_escape_and_its_u_form_are_both_accepted(char, short):
    """Each character with a short escape matches as the short escape and as \\u00XX in both cases."""
    g = const("a" + char + "b")
    code = ord(char)
    assert g.accepts(q("a" + short + "b"))
    assert g.accepts(q(f"a\\u{code:04x}b"))
    assert g.accepts(q(f"a\\u{code:04X}b"))


@pytest.mark.parametrize("char", ["\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f"])
def test_raw_control_characters_are_refused(char):
    """A control character inside a literal may only come escaped."""
    g = const("a" + char)
    assert not g.accepts(q("a" + char))
    assert g.accepts(q(f"a\\u{ord(char):04x}"))


def test_control_without_short_escape_needs_u_form():
    """U+0001 has no short escape: only \\u0001 (either case) spells it."""
    g = const("\x01\x1f")
    assert g.accepts(q("\\u0001\\u001f"))
    assert g.accepts(q("\\u0001\\u001F"))
    assert not g.accepts(q("\\x01\\u001f"))


def test_raw_quote_and_backslash_are_refused():
    """The quote ends a string and the backslash starts an escape: neither may stand raw."""
    assert not const('a"b').accepts(q('a"b'))
    assert not const("a\\b").accepts(q("a\\b"))


@pytest.mark.parametrize("char", ["A", "o", "/", " ", "~", "0", "\x7f"])
def test_escaped_plain_ascii_is_refused(char):
    """Plain ASCII is raw only: no \\u0041, no \\/ for a literal, whether the literal is all plain
    ASCII (written as its bytes) or holds a scalar with other spellings (written scalar by scalar)."""
    for lead in ("x", "é"):
        g = const(lead + char)
        assert g.accepts(q(lead + char))
        assert not g.accepts(q(f"{lead}\\u{ord(char):04x}"))
        assert not g.accepts(q(f"{lead}\\u{ord(char):04X}"))
        if char == "/":
            assert not g.accepts(q(lead + "\\/"))


def test_non_ascii_raw_escaped_lower_upper_and_mixed():
    """'Lençóis Maranhenses' matches raw, as \\u escapes in either case, and mixed."""
    g = const("Lençóis Maranhenses")
    for text in ["Lençóis Maranhenses", "Len\\u00e7\\u00f3is Maranhenses", "Len\\u00E7\\u00F3is Maranhenses",
                 "Len\\u00e7óis Maranhenses", "Lenç\\u00F3is Maranhenses", "Len\\u00E7\\u00f3is Maranhenses"]:
        assert g.accepts(q(text)), text
    assert not g.accepts(q("\\u004cen\\u00e7\\u00f3is Maranhenses"))
    assert not g.accepts(q("Lencois Maranhenses"))


def test_wrong_hex_letters_are_refused():
    """Only hex digits spell an escape, and only the right code point."""
    g = const("é")
    assert g.accepts(q("\\u00e9"))
    for bad in ["\\u00g9", "\\u00e8", "\\u0e9", "\\u00e", "\\U00e9", "\\x00e9"]:
        assert not g.accepts(q(bad)), bad


def test_astral_scalar_as_surrogate_pair():
    """Above the BMP the escape is a surrogate pair, either case; raw UTF-8 too."""
    g = const("😀")
    for text in ["😀", "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\uD83d\\udE00"]:
        assert g.accepts(q(text)), text


def test_dead_surrogate_prefixes_are_refused_early():
    """A high surrogate must be followed by the matching low one: wrong prefixes die at once."""
    g = const("😀")
    assert g.accepts_prefix('"\\ud83d\\ude')
    assert not g.accepts_prefix('"\\ud83d\\ud8')
    assert not g.accepts_prefix('"\\ude00')
    assert not g.accepts(q("\\ud83d"))
    assert not g.accepts(q("\\ud83d\\ude01")) and not g.accepts(q("\\ud83d\\uddff"))
    assert not g.accepts(q("\\ude00\\ud83d"))


def test_byte_split_scalars_walk_byte_by_byte():
    """A scalar may arrive split across tokens: each UTF-8 prefix is alive, a wrong byte is not."""
    g = const("é")
    raw = '"é"'.encode()
    for i in range(1, len(raw)):
        assert g.accepts_prefix(raw[:i])
    assert not g.accepts_prefix(b'"\xc3\xa8')
    assert not g.accepts_prefix(b'"\xc3"')


def test_names_compare_by_scalar_not_normalisation():
    """A decomposed 'é' in required does not match a precomposed key."""
    nfc = unicodedata.normalize("NFC", "é")
    nfd = unicodedata.normalize("NFD", "é")
    with pytest.raises(constrain.Unsatisfiable, match="required"):
        constrain.compile({"type": "object", "properties": {nfc: {"type": "integer"}}, "required": [nfd],
                           "additionalProperties": False})
    g = constrain.compile({"type": "object", "properties": {nfc: {"type": "integer"}}, "required": [nfd]},
                          whitespace="compact")
    assert not g.accepts(json.dumps({nfc: 1}, ensure_ascii=False))
    assert g.accepts(json.dumps({nfc: 1, nfd: 2}, ensure_ascii=False, separators=(",", ":")))
    g = constrain.compile({"type": "object", "properties": {nfc: {"type": "integer"}}, "required": [nfc],
                           "additionalProperties": False}, whitespace="compact")
    assert g.accepts(json.dumps({nfc: 1}, ensure_ascii=False, separators=(",", ":")))
    assert not g.accepts(json.dumps({nfd: 1}, ensure_ascii=False, separators=(",", ":")))


def test_property_names_follow_the_literal_rules():
    """Keys are literals too: escapes for non-ASCII, never for plain ASCII."""
    g = constrain.compile({"type": "object", "properties": {"città": {"type": "null"}}, "required": ["città"],
                           "additionalProperties": False}, whitespace="compact")
    assert g.accepts('{"città":null}')
    assert g.accepts('{"citt\\u00e0":null}')
    assert not g.accepts('{"\\u0063itt\\u00e0":null}')


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"città": {"type": "null"}}},  # additional keys
    {"type": "object", "patternProperties": {"^[a-z\u00e0-\u00ff]+$": {"type": "null"}}, "additionalProperties": False},
    {"type": "object", "propertyNames": {"maxLength": 5}},
])
def test_keys_beyond_the_names_follow_the_literal_rules(schema):
    """Every key is spelled by the literal rules, named or not: plain ASCII raw only, the rest raw or escaped."""
    g = constrain.compile(schema, whitespace="compact")
    for key in ["ab", "\\u00e0b", "\u00e0b", "\\u00E0b"]:
        assert g.accepts('{"%s":null}' % key), key
    for key in ["\\u0061b", "a\\u0062", "\\/b"]:
        assert not g.accepts('{"%s":null}' % key), key
    if "patternProperties" not in schema:
        assert g.accepts('{"a\\nb":null}') and g.accepts('{"a\\u000Ab":null}') and g.accepts('{"\\"\\\\":null}')
        assert g.accepts('{"\\ud83d\\ude00":null}') and g.accepts('{"\U0001F600":null}')


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.text("ab\u00e0\"", min_size=1, max_size=4), min_size=1, max_size=4, unique=True),
       keys=st.lists(st.text("ab\u00e0\"\\u00", max_size=6), min_size=1, max_size=12))
def test_keys_beyond_the_names_read_as_a_block_as_written_out(names, keys):
    """An object's keys beyond its names, a block whose states are made when reached, accept what the
    written-out automaton accepts (every escape form and prefix of a name), and leave no trap."""
    schema = {"type": "object", "properties": {n: {"type": "null"} for n in names}, "additionalProperties": {"const": 1}}
    grammars = []
    for written_max in (0, 1 << 30):  # every key automaton a block, then every one written out
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(scalars, "KEY_WRITTEN_MAX", written_max)
            grammars.append(constrain.compile(schema, whitespace="compact", cache=False))
    block, written = grammars
    assert block.program.counted and not written.program.counted
    for key in keys + [json.dumps(n)[1:-1] for n in names]:
        for value in ("null", "1"):
            text = '{"%s":%s}' % (key, value)
            assert block.accepts(text) == written.accepts(text), text
    assert block.find_trap() is None


def test_enum_of_many_strings_shares_prefixes():
    """A large enum compiles and matches exactly its members."""
    values = [f"item-{i:05d}" for i in range(5000)]
    g = constrain.compile({"enum": values}, whitespace="compact")
    assert g.accepts('"item-04999"')
    assert not g.accepts('"item-05000"')


def test_free_strings_allow_every_escape():
    """Outside literals any scalar may be escaped, including plain ASCII and the solidus."""
    g = constrain.compile({"type": "string"})
    for text in ["\\u0041", "\\/", "\\n", "\\u00e9", "\\ud83d\\ude00", "é", "😀"]:
        assert g.accepts(q(text)), text
    for text in ["\n", "\\x", "\\u12", "\\ud83d", "\\ude00"]:
        assert not g.accepts(q(text)), text


@pytest.mark.parametrize("data", [b'"\xc0\x80"', b'"\xed\xa0\x80"', b'"\xf5\x80\x80\x80"', b'"\xc3"', b'"\xe2\x82"'])
def test_free_strings_refuse_invalid_utf8(data):
    """Overlong forms, encoded surrogates, bytes past U+10FFFF and truncated scalars are refused."""
    assert not constrain.compile({"type": "string"}).accepts(data)


def test_an_integer_literal_is_spelled_as_validate_takes_it():
    """1 and 1.0 are one JSON value, but an integer is written without a fraction: beside
    ``type: integer`` an enum's 1 is spelled ``1`` only, and its 1.0 is spelled ``1`` (it had been
    refused as unsatisfiable), as ``validate`` judges each spelling."""
    for schema in ({"type": "integer", "enum": [1]}, {"type": "integer", "enum": [1.0]}, {"type": "number", "enum": [1]},
                   {"enum": [1.0, "a"]}, {"type": "integer", "const": 2.0, "minimum": 2}):
        grammar = constrain.compile(schema, cache=False)
        for text in ("1", "1.0", "2", "2.0"):
            assert grammar.accepts(text) == (constrain.validate(json.loads(text), schema) == []), (schema, text)
    assert constrain.compile({"type": "integer", "enum": [1.0]}, cache=False).accepts("1")


@pytest.mark.parametrize("rest", [{"items": {"type": "integer"}, "additionalProperties": {"type": "integer"}},
                                  {"items": {"type": "number"}}, {},
                                  {"anyOf": [{"prefixItems": [{"type": "integer"}]}, {"prefixItems": [True, {"type": "integer"}]}]}])
def test_a_number_inside_an_enum_value_is_spelled_as_validate_takes_it(rest):
    """An integral number inside an array or object value is spelled both ways where the schema
    lets each spelling of the whole value through: beside ``items: {type: integer}`` the grammar had
    accepted ``[1.0]`` for an enum's ``[1]``, which ``validate`` refuses. What it accepts here,
    ``validate`` takes, and each valid value is written some way."""
    values = [[1], [1.0, 3], {"a": 2.0}, {"a": [2, 1.5]}, [1.0, 2.0], [True, 0]]
    schema = {"enum": values, **rest}
    grammar = constrain.compile(schema, cache=False, whitespace="compact")
    texts = ["[1]", "[1.0]", "[1,3]", "[1.0,3]", "[1,3.0]", '{"a":2}', '{"a":2.0}', '{"a":[2,1.5]}', '{"a":[2.0,1.5]}',
             "[1,2]", "[1.0,2]", "[1,2.0]", "[1.0,2.0]", "[true,0]", "[true,0.0]"]
    for text in texts:
        if grammar.accepts(text):
            assert constrain.validate(json.loads(text), schema) == [], (schema, text)
    for value in values:  # each value is still written some way wherever validate takes it
        if constrain.validate(value, schema) == []:
            spellings = [t for t in texts if json.loads(t) == value and constrain.validate(json.loads(t), schema) == []]
            assert any(grammar.accepts(t) for t in spellings), (schema, value)
