"""Token masks equal the brute-force answer: walk every token's bytes through the automaton."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import constrain
from automaton.dfa import DEAD
from automaton.index import token_index
from automaton.matcher import Matcher

SCHEMAS = [
    {"type": "object", "properties": {
        "destination": {"enum": ["Lençóis Maranhenses", "Jericoacoara", "日本"]},
        "nights": {"type": "integer", "minimum": 1, "maximum": 30},
        "notes": {"type": "string", "maxLength": 12},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 3}},
     "required": ["destination", "nights"]},
    {"type": "array", "items": {"anyOf": [{"type": "number", "minimum": -2.5}, {"type": "boolean"}, {"type": "null"}]}},
    {},
    # free strings with room left (maxLength), additional keys beside known ones, a pattern
    {"type": "object", "properties": {"name": {"type": "string", "minLength": 2, "maxLength": 40},
                                      "active": {"type": "boolean"},
                                      "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]+$"}}},
    # counts far from their bounds, whose masks are computed from a state standing for many counts:
    # between the bounds (a word-count pattern inside a long maxLength), and far below minLength
    {"type": "array", "items": {"type": "string", "maxLength": 400, "pattern": "^(?:\\S+\\s+){0,29}\\S+$"}},
    {"type": "string", "minLength": 300, "maxLength": 1000},
]


def brute_force(grammar, vocab, state):
    dfa = grammar.automaton
    mask = np.zeros(vocab.size, dtype=bool)
    for tid, data in enumerate(vocab.token_bytes):
        if data and dfa.walk(data, state) != DEAD:
            mask[tid] = True
    if dfa.is_accepting(state):
        mask[sorted(vocab.eos_ids)] = True
    return mask


@st.composite
def reachable_state(draw, grammar):
    """A state reached by random bytes the automaton allows (independent of the masks)."""
    dfa = grammar.automaton
    state = dfa.start
    for _ in range(draw(st.integers(0, 40))):
        allowed = [b for b, t in enumerate(dfa.row(state)) if t != DEAD]
        if not allowed:
            break
        state = dfa.row(state)[draw(st.sampled_from(allowed))]
    return state


@pytest.mark.parametrize("schema_index", range(len(SCHEMAS)))
def test_masks_equal_brute_force(vocabulary, schema_index):
    """For random reachable states, mask() is exactly the set of tokens that walk, plus EOS when accepting."""
    grammar = constrain.compile(SCHEMAS[schema_index])
    index = token_index(grammar, vocabulary)

    @settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(reachable_state(grammar))
    def check(state):
        assert np.array_equal(index.mask(state), brute_force(grammar, vocabulary, state))

    check()


NESTED = {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}, "minItems": 1}]}
WALKED = [(SCHEMAS[0], '{"destination": "Lençóis Maranhenses", "nights": 3, "tags": ["ab", "c"]}'),
          (SCHEMAS[1], "[1.5, true, null, -2.5]"),
          (SCHEMAS[2], '{"a": [{"b": "\\u00e9"}, 7], "c": {}}'),
          (SCHEMAS[3], '{"name": "Zoë", "code": "AB-12", "extra": [1, "x"]}'),
          (NESTED, "[" * 15)]  # down to the depth bound (16 frames), where "[" is refused


@pytest.mark.parametrize("schema, document", WALKED)
def test_a_walk_through_states_without_rows_finds_what_their_rows_say(schema, document):
    """A walk computes only the successor it needs where a state has no row yet; every such
    successor (each byte, at each state of a document's path) equals the row computed later."""
    dfa = constrain.compile(schema, cache=False).automaton
    passed = []
    state = dfa.start
    for byte in document.encode():
        assert dfa._picks[state] is None  # met first by this walk
        passed.append((state, [dfa.successor(state, b) for b in range(256)]))
        state = passed[-1][1][byte]
        assert state != DEAD
    assert dfa.walk(document.encode()) == state
    passed.append((state, [dfa.successor(state, b) for b in range(256)]))
    for state, successors in passed:
        assert list(dfa.row(state)) == successors
    assert dfa.successor(DEAD, document.encode()[0]) == DEAD  # not the last state's row


def test_padded_ids_and_special_tokens_are_never_allowed(vocabulary):
    """Ids past the tokenizer and special tokens stay masked in every state."""
    grammar = constrain.compile({"type": "string"})
    m = Matcher(grammar, vocabulary)
    specials = [i for i, b in enumerate(vocabulary.token_bytes) if b is None and i not in vocabulary.eos_ids]
    for token in (b'"', b"a", b'"'):
        mask = m.mask()
        assert not mask[specials].any()
        tid = next(i for i, b in enumerate(vocabulary.token_bytes) if b == token)
        assert m.advance(tid)
    assert m.accepting and m.mask()[sorted(vocabulary.eos_ids)].all()


def test_matcher_walks_rolls_back_and_wedges(vocabulary_by_name):
    """advance/rollback/forced_bytes, and a token that cannot walk wedges the matcher (EOS only)."""
    vocab = vocabulary_by_name("llama-bpe")
    grammar = constrain.compile({"type": "object", "properties": {"answer": {"const": "yes"}},
                                 "required": ["answer"], "additionalProperties": False}, whitespace="compact")
    m = Matcher(grammar, vocab)
    assert m.forced_bytes() == b'{"answer":"yes"}'
    brace = vocab.token_bytes.index(b"{")
    assert m.advance(brace)
    m.rollback(1)
    assert m.state == grammar.start
    bad = vocab.token_bytes.index(b"[")
    assert not m.advance(bad)
    assert m.wedged and m.state == grammar.start
    assert np.flatnonzero(m.mask()).tolist() == sorted(vocab.eos_ids)
    m.reset()
    assert not m.wedged and m.mask()[brace]


def test_the_guard_ends_the_sequence_on_an_automaton_limit_or_an_early_eos(vocabulary_by_name, caplog):
    """An automaton limit while masking, or EOS before the document is complete, is logged once and
    leaves the matcher allowing only EOS; nothing is raised, and padding after EOS is ignored."""
    import logging

    vocab = vocabulary_by_name("gpt-2")
    eos = sorted(vocab.eos_ids)
    grammar = constrain.compile({"type": "array", "items": {"type": "string", "maxLength": 40}}, cache=False)
    m = Matcher(grammar, vocab)
    grammar.automaton.max_states = grammar.automaton.num_states  # no room for one more state
    with caplog.at_level(logging.ERROR, logger="constrain"):
        assert np.flatnonzero(m.mask()).tolist() == eos
        assert np.flatnonzero(m.mask()).tolist() == eos
    assert m.wedged and len([r for r in caplog.records if r.name == "constrain"]) == 1
    assert m.advance(eos[0]) is False and m.finished  # the guard's EOS ends it, not as a valid document
    caplog.clear()
    m2 = Matcher(constrain.compile({"const": "yes"}), vocab)
    with caplog.at_level(logging.ERROR, logger="constrain"):
        assert not m2.advance(eos[0])  # EOS before '"yes"' was written: the mask was bypassed
        assert not m2.advance(vocab.token_bytes.index(b'"'))  # padding after the end changes nothing
    assert m2.finished and m2.state == m2.dfa.start
    assert len([r for r in caplog.records if r.name == "constrain"]) == 1


def test_a_dropped_grammar_is_freed_at_once_not_by_the_cyclic_collector(vocabulary_by_name):
    """A grammar holds its token index, and the index must not hold the grammar back: in a
    reference cycle, a dropped grammar (its automaton, rows and masks) waits for a full
    collection, which then frees it during some later token step of another grammar."""
    import gc
    import weakref

    from automaton.index import MASKS

    vocab = vocabulary_by_name("gpt-2")
    grammar = constrain.compile({"type": "object", "properties": {"a": {"type": "array", "items": {}}}}, cache=False)
    matcher = Matcher(grammar, vocab)
    single = {data: t for t, data in enumerate(vocab.token_bytes) if data and len(data) == 1}
    for byte in b'{"a": [1, {"b": null':  # a mask at every step: rows, masks and stacks to free
        assert matcher.mask()[single[bytes([byte])]]
        assert matcher.advance(single[bytes([byte])])
    refs = [weakref.ref(grammar), weakref.ref(grammar.automaton), weakref.ref(matcher.index)]
    held = MASKS.used
    was = gc.isenabled()
    gc.disable()
    try:
        grammar = matcher = None
        assert all(ref() is None for ref in refs)
    finally:
        if was:
            gc.enable()
    assert MASKS.used < held  # its masks left the account with it


def test_the_masks_of_all_grammars_stay_under_one_budget(vocabulary_by_name):
    """Grammars cached by compile each hold their masks; past the process-wide budget the oldest
    mask goes first, whichever grammar holds it, is computed again when asked, and a grammar that
    is dropped takes its masks off the account."""
    import gc

    from automaton.index import MASKS

    vocab = vocabulary_by_name("gpt-2")
    limit = MASKS.limit
    MASKS.limit = 12 * vocab.size  # room for a dozen masks: older ones (other tests') go first
    try:
        grammars = [constrain.compile({"type": "array", "items": {"type": "integer", "minimum": k}}, cache=False)
                    for k in range(4)]
        first = {}
        for g in grammars:
            index = token_index(g, vocab)
            state = g.automaton.start
            for byte in b"[5, 22, 3":  # valid for every minimum
                first[(id(g), state)] = index.mask(state).copy()
                state = g.automaton.step(state, byte)
            assert MASKS.used <= MASKS.limit
        held = sum(len(token_index(g, vocab)._cache) for g in grammars)
        assert held == 12 and MASKS.used == held * vocab.size
        assert not token_index(grammars[0], vocab)._cache  # the oldest went first
        for g in grammars:  # evicted masks come back the same
            for (gid, state), mask in first.items():
                if gid == id(g):
                    assert np.array_equal(token_index(g, vocab).mask(state), mask)
        index = token_index(grammars[-1], vocab)  # a mask computed twice at once (threads) counts once
        state, kept = next(iter(index._cache.items()))
        used = MASKS.used
        assert MASKS.add(index, state, kept.copy()) is kept and MASKS.used == used
        grammars = g = index = None
        gc.collect()
        assert MASKS.used == 0
    finally:
        MASKS.limit = limit


def test_a_row_with_a_successor_for_every_byte_keeps_them_all():
    """A row is kept as its distinct successors and a pick per byte; a state whose 256 bytes lead
    to 256 different states (more than one byte can number, with the refused byte's slot) still
    gives every successor, through a row, a step, a walk and the row as an array."""
    from automaton.dfa import LazyDFA
    from automaton.program import Program

    program = Program()
    root = program.new_fragment()
    start, final = program.fragments[root].start, program.fragments[root].final
    for b in range(256):
        middle = program.new_state(root)
        program.byte(start, b, b, middle)
        program.byte(middle, b, b, final)  # each byte's state reads that byte again, then ends
    program.finish(root)
    dfa = LazyDFA(program)
    row = dfa.row(dfa.start)
    assert DEAD not in row and len(set(row)) == 256
    for b in (0, 1, 200, 255):
        after = dfa.step(dfa.start, b)
        assert after == row[b] and dfa.walk(bytes([b, b])) != DEAD and dfa.walk(bytes([b, (b + 1) % 256])) == DEAD
        assert dfa.is_accepting(dfa.walk(bytes([b, b])))
    assert dfa.row_array(dfa.start).tolist() == list(row) and dfa.moves(dfa.start) is None
    assert len(dfa.parts(dfa.start)[0]) == 257  # DEAD and 256 successors: picks wider than a byte


def test_a_ready_vector_refuses_ids_past_the_mask():
    """Logits wider than the vocabulary (a model's padded vocab_size): the extra ids get -inf."""
    from constrain.bias import numpy_bias

    mask = np.array([True, False, True])
    assert numpy_bias(mask, 5).tolist() == [0, -np.inf, 0, -np.inf, -np.inf]
    assert numpy_bias(mask, 2).tolist() == [0, -np.inf]


def greedy_tokens(vocab, text: str) -> list[int]:
    """``text`` as the longest tokens that spell it, left to right (a tokenizer's shape, not its choice)."""
    ids = {data: t for t, data in enumerate(vocab.token_bytes) if data and t not in vocab.eos_ids}
    data, out, i = text.encode(), [], 0
    while i < len(data):
        n = next(n for n in range(min(32, len(data) - i), 0, -1) if data[i: i + n] in ids)
        out.append(ids[data[i: i + n]])
        i += n
    return out


def test_counts_far_from_their_bounds_share_a_mask(vocabulary_by_name):
    """Inside a string under a long maxLength, every count far from the bounds has the mask of one
    state standing for them all: a 250-scalar string computes a handful of masks, not one per token."""
    vocab = vocabulary_by_name("llama-bpe")
    grammar = constrain.compile({"type": "string", "maxLength": 400}, cache=False)
    m = Matcher(grammar, vocab)
    shared = set()
    for t in greedy_tokens(vocab, '"' + "lorem ipsum dolor " * 14):
        m.mask()
        shared.add(m.mask_state())
        assert m.advance(t)
    assert len(shared) <= 3  # before the quote, inside it (the counts far from 400), and the start
    assert np.array_equal(m.mask(), brute_force(grammar, vocab, m.state))


def test_a_word_count_pattern_under_a_long_max_length_stays_small(vocabulary_by_name):
    """Masks inside a word-count pattern under ``maxLength: 300`` walk the vocabulary from states
    that forget the count, so a long document reaches a few hundred automaton states: with a
    state per count each mask interned ~3,000 and MaskBench's o21072 hit the 200,000-state limit,
    ending its documents early. The masks stay exact."""
    vocab = vocabulary_by_name("llama-bpe")
    schema = {"type": "array", "items": {"type": "string", "maxLength": 300, "pattern": "^(?:\\S+\\s+){0,29}\\S+$"}}
    grammar = constrain.compile(schema, cache=False)
    m = Matcher(grammar, vocab)
    tokens = greedy_tokens(vocab, json.dumps(["this is a sample criterion of cultural fit, item %d" % i for i in range(6)]))
    for k, t in enumerate(tokens):
        if k in (5, 12):
            assert np.array_equal(m.mask(), brute_force(grammar, vocab, m.state))
        assert m.mask()[t] and m.advance(t)
    assert m.accepting and not m.wedged
    assert grammar.automaton.num_states < 3_000  # 754 here; 30,758 with a state per count
