"""A key or a unique array's string never written twice where a repeat would pass an invalid
document (``automaton/keys.py``).

JSON parsers keep a repeated key's last value, so where the grammar counts members among free
keys or asks some member to be a witness, ``{"a": 1, "a": 2}`` is text the automaton alone would
pass with a document that is invalid; distinct strings of a ``uniqueItems`` array are no regular
language either. ``accepts`` refuses such text and a matcher never writes it."""

import json
import random

import jsonschema
import numpy as np
import pytest

import constrain
from automaton import keys
from automaton.matcher import Matcher

COUNTED = {"type": "object", "minProperties": 3, "additionalProperties": {"type": "integer"}}
# some member must be a witness of the 'not' (an item not a multiple of 4) among keys matching 'b'
WITNESS = {"type": "object", "required": ["abcd"], "allOf": [
    {"additionalProperties": {"type": "array", "minItems": 2}},
    {"patternProperties": {"a": {"type": "array", "items": {"type": "integer", "multipleOf": 5, "minimum": 0, "maximum": 1000}}},
     "additionalProperties": False},
    {"not": {"patternProperties": {"b": {"type": "array", "items": {"multipleOf": 4}}}}}]}
# a oneOf decided member by member: the first branch counts members, the second judges values
ALIVE = {"type": "object", "oneOf": [{"maxProperties": 1}, {"additionalProperties": {"type": "integer"}}]}
# strings of a uniqueItems array, nested in another (itself free to repeat) and beside a plain one
UNIQUE = {"type": "object", "required": ["tags"], "properties": {
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": True, "minItems": 2},
    "rows": {"type": "array", "items": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
    "free": {"type": "array", "items": {"type": "string"}}}}
# strings alone, as a union of strings: a few named and the rest of some length
UNION = {"type": "array", "uniqueItems": True, "items": {"$ref": "#/$defs/word"},
         "$defs": {"word": {"anyOf": [{"enum": ["a", "b"]}, {"type": "string", "minLength": 1, "maxLength": 2}]}}}


@pytest.mark.parametrize("schema, repeated, distinct", [
    (COUNTED, '{"a": 1, "b": 2, "a": 3}', '{"a": 1, "b": 2, "c": 3}'),
    (WITNESS, '{"abcd": [20, 40], "ab": [10, 15], "ab": [20, 40]}', '{"abcd": [20, 40], "ab": [10, 15]}'),
    (ALIVE, '{"a": 1, "a": 2}', '{"a": 1, "b": 2}'),
    (UNIQUE, '{"tags": ["a", "b", "a"]}', '{"tags": ["a", "b"], "rows": [["a"], ["a"]], "free": ["a", "a"]}'),
    (UNIQUE, '{"tags": ["a", "b"], "rows": [["a", "b"], ["b", "\\u0062"]]}', '{"tags": ["ab", "a\\u0062c"]}'),
    (UNION, '["a", "x", "a"]', '["a", "x", "b", "yy"]'),
])
def test_accepts_refuses_a_repeated_key_whose_document_is_invalid(schema, repeated, distinct):
    grammar = constrain.compile(schema)
    assert not jsonschema.Draft202012Validator(schema).is_valid(json.loads(repeated))
    assert grammar.automaton.walk(repeated.encode()) != -1  # what the automaton alone would pass
    assert not grammar.accepts(repeated) and not grammar.accepts_prefix(repeated[:-1])
    assert jsonschema.Draft202012Validator(schema).is_valid(json.loads(distinct)) and grammar.accepts(distinct)


def test_the_key_walk_reads_escapes_strings_and_nesting():
    state = keys.walk(keys.START, b'{"a": "\\"a\\"", "b": {"a": [1, {"a": 2}]}, "c\\u0061": 1, ')
    assert state is not keys.REPEATED and state[0] == (frozenset({"a", "b", "ca"}),)
    assert keys.walk(state, b'"\\u0063a"') is keys.REPEATED  # the same key spelled with an escape
    assert keys.walk(state, b'"cb"') is not keys.REPEATED
    assert keys.walk(keys.START, b'{"a": 1, "a"', strict=False)[0] == (frozenset({"a"}),)
    assert keys.walk(keys.START, b'{"a": "x\\"", "a"') is keys.REPEATED  # past a value's escaped quote


def _masked_walk(m: Matcher, vocab, text: bytes) -> None:
    """Walk ``text`` a byte token at a time (each a token of its own in the vocabulary)."""
    single = {vocab.token_bytes[t]: t for t in range(vocab.size) if vocab.token_bytes[t] and len(vocab.token_bytes[t]) == 1}
    for b in text:
        token = single[bytes((b,))]
        assert m.mask()[token], (text, bytes((b,)))
        assert m.advance(token)


def test_the_mask_never_closes_a_key_its_object_has(vocabulary_by_name):
    vocab = vocabulary_by_name("llama-bpe")
    m = Matcher(constrain.compile(COUNTED), vocab)
    _masked_walk(m, vocab, b'{"a": 1, "a')
    allowed = np.flatnonzero(m.mask())
    heads = [vocab.token_bytes[t].split(b'"')[0] for t in allowed if b'"' in vocab.token_bytes[t]]
    assert heads and all(heads)  # the key goes on before any quote: "a" is written already
    closes = [t for t in range(vocab.size) if vocab.token_bytes[t] in (b'"', b'":', b'":"')]
    assert closes and not m.mask()[closes].any()
    assert m.mask_state() != Matcher(constrain.compile(COUNTED), vocab).mask_state()  # a mask of its own
    # the mask bypassed: the guard keeps the state and ends the sequence
    assert not m.advance(closes[0]) and m.done and m.mask()[sorted(vocab.eos_ids)].all()
    m.rollback(0)
    assert not m.done
    m.rollback(1)  # back before the key's letter: the key 'a' may not close there either
    assert m.mask()[[t for t in range(vocab.size) if vocab.token_bytes[t] == b'a"']].sum() == 0


def test_the_mask_never_closes_a_string_its_unique_array_has(vocabulary_by_name):
    vocab = vocabulary_by_name("llama-bpe")
    m = Matcher(constrain.compile(UNIQUE), vocab)
    _masked_walk(m, vocab, b'{"tags": ["a", "b", "a')
    closes = [t for t in range(vocab.size) if vocab.token_bytes[t] in (b'"', b'",', b'"]', b'", ')]
    assert closes and not m.mask()[closes].any()
    assert m.mask()[[t for t in range(vocab.size) if vocab.token_bytes[t] == b'c"']].all()
    _masked_walk(m, vocab, b'b"], "rows": [["a", "b"], ["a')  # another array: its own strings
    assert m.mask()[closes].any()

# free keys and item strings from a finite set: what is left of them must stay reachable
FINITE_KEYS = {"type": "object", "propertyNames": {"enum": ["a", "b", "c"]}, "minProperties": 2,
               "additionalProperties": {"type": "integer"}}
FINITE_ITEMS = {"type": "array", "items": {"type": "string", "pattern": "^(x|y|zz)$"}, "uniqueItems": True}


@pytest.mark.parametrize("schema, text, stranding", [
    (FINITE_KEYS, b'{"a": 1, "b": 2, "c": 3', [b",", b", "]),
    (FINITE_KEYS, b'{"a": 1, "b": 2, ', [b'"a', b'"b', b'"a"', b'"b":']),
    (FINITE_ITEMS, b'["x", "zz", "y"', [b",", b", ", b', "']),
    (FINITE_ITEMS, b'["x", "zz", "', [b"x", b"z", b"zz"]),
])
def test_a_finite_set_of_strings_never_strands_a_generation(vocabulary_by_name, schema, text, stranding):
    """A token after which the string due could only repeat one (all of a finite set written) is
    out of the mask, so the mask never empties on the way."""
    vocab = vocabulary_by_name("llama-bpe")
    m = Matcher(constrain.compile(schema), vocab)
    _masked_walk(m, vocab, text)
    out = [t for t in range(vocab.size) if vocab.token_bytes[t] in stranding]
    assert out and not m.mask()[out].any()
    assert m.mask().any()


def test_tokens_with_the_same_bytes_strand_alike(vocabulary_by_name):
    """A SentencePiece vocabulary spells a byte twice (``z`` and its byte token ``<0x7A>``): where
    the letter would strand the string due, both are out of the mask."""
    vocab = vocabulary_by_name("llama-spm")
    m = Matcher(constrain.compile(FINITE_ITEMS), vocab)
    _masked_walk(m, vocab, b'["zz", "x", "')
    twins = [t for t in range(vocab.size) if vocab.token_bytes[t] == b"z"]
    assert len(twins) == 2 and not m.mask()[twins].any()
    assert m.mask()[[t for t in range(vocab.size) if vocab.token_bytes[t] == b"y"]].all()


def test_an_escape_spelling_a_written_string_strands_as_its_letters_do():
    """Where the string due can only close as one written, a token spelling more of it with an
    escape (``\\u007a`` for ``z``) is out of the mask as the letter is; one spelling another is not."""
    vocab = constrain.Vocabulary([bytes([b]) for b in range(256)] + [b"\\u007a", b"\\u0079", None], {258})
    m = Matcher(constrain.compile(FINITE_ITEMS), vocab)
    for b in b'["zz", "x", "':
        assert m.mask()[b] and m.advance(b)
    assert m.try_walk(256) != -1 and not m.mask()[256] and not m.mask()[ord("z")]
    assert m.mask()[257] and m.mask()[ord("y")]  # "y" is still to come


@pytest.mark.parametrize("schema, text, token, fresh", [
    (COUNTED, b"", b'{"a":1,"a"', b'{"a":1,"b"'),
    (UNIQUE, b'{"tags":', b'["a","a"', b'["a","b"'),
    (UNIQUE, b'{"tags": ["a", "b"], "rows": [["a"],', b'["b","b"', b'["b","a"'),  # (nested, past a plain array)
    (FINITE_ITEMS, b"", b'["x","y","zz","', b'["x","y","'),  # the string due can only repeat one
])
def test_a_token_that_opens_a_container_never_repeats_inside_it(schema, text, token, fresh):
    """A token that opens an object or a unique array and writes a string twice inside it (or
    leaves one due that can only repeat) is out of the mask, whatever came before it."""
    vocab = constrain.Vocabulary([bytes([b]) for b in range(256)] + [token, fresh, None], {258})
    m = Matcher(constrain.compile(schema), vocab)
    for b in text:
        assert m.mask()[b] and m.advance(b)
    assert m.try_walk(256) != -1 and not m.mask()[256] and m.mask()[257]


@pytest.mark.parametrize("schema", [COUNTED, WITNESS, ALIVE, UNIQUE, UNION, FINITE_KEYS, FINITE_ITEMS])
def test_sampled_documents_have_distinct_strings_and_are_valid(vocabulary_by_name, schema, caplog):
    """Random tokens from the mask, those of a few letters preferred (keys from a small
    alphabet: repeats likely, as from a model that keeps to a few words): each document parses
    with distinct keys and is valid."""
    vocab = vocabulary_by_name("llama-bpe")
    grammar = constrain.compile(schema, whitespace="compact")
    rng = random.Random(7)
    validator = jsonschema.Draft202012Validator(schema)
    few = np.array([bool(data) and set(data) <= set(b'{}[]",:abxyz0125') for data in vocab.token_bytes])

    def distinct(pairs):
        names = [k for k, _ in pairs]
        assert len(names) == len(set(names)), names
        return dict(pairs)

    lengths = np.array([len(data) if data else 0 for data in vocab.token_bytes])
    finished = 0
    for _ in range(20):
        m = Matcher(grammar, vocab)
        text = b""
        for _ in range(400):
            allowed = np.flatnonzero(m.mask() & (lengths > 0))
            if m.accepting and (not len(allowed) or rng.random() < 0.3):
                break
            preferred = allowed[few[allowed] & (lengths[allowed] <= 3)]
            token = int(rng.choice(list(preferred if len(preferred) else allowed)))
            assert m.advance(token)
            text += vocab.token_bytes[token]
        if m.accepting:
            assert validator.is_valid(json.loads(text, object_pairs_hook=distinct)), text
            finished += 1
    assert finished >= 8
    assert not [r for r in caplog.records if r.name == "constrain"]  # never let through, never wedged


@pytest.mark.parametrize("schema", [
    {"type": "object", "propertyNames": {"maxLength": 0}, "minProperties": 2},
    {"type": "object", "propertyNames": {"enum": ["a", "b"]}, "minProperties": 3},
    {"type": "object", "properties": {"x": {}}, "propertyNames": {"pattern": "^[ab]$"}, "minProperties": 3,
     "additionalProperties": {"type": "integer"}},
    {"type": "array", "items": {"type": "string", "pattern": "^(x|yy)$"}, "uniqueItems": True, "minItems": 3},
    {"type": "array", "items": {"type": "string", "maxLength": 0}, "uniqueItems": True, "minItems": 2},
])
def test_more_members_than_distinct_strings_is_unsatisfiable(schema):
    """Each key, each unique item once: an object or array needing more than there are has no instance."""
    with pytest.raises(constrain.Unsatisfiable, match="distinct"):
        constrain.compile(schema, cache=False)
    count = "minProperties" if "minProperties" in schema else "minItems"
    assert constrain.compile(dict(schema, **{count: schema[count] - 1}), cache=False)
