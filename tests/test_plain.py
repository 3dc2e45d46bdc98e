"""Plain text: the tokens a free string takes without a walk, and the room a state surely has."""

import hashlib

import numpy as np

import constrain
from automaton.index import token_index
from automaton.plain import PLAIN, UNBOUNDED, WHITESPACE, TextReach, is_plain


def test_plain_text_is_utf8_without_quote_backslash_or_controls():
    """Plain bytes: printable ASCII but `"` and `\\`, and valid UTF-8, maybe cut inside a scalar."""
    assert is_plain(b"hello world") and is_plain("Lençóis".encode()) and is_plain("日本".encode()[:4])
    for data in (b"", b'say "hi"', b"a\\b", b"line\n", b"\x7f", b"\x80abc", b"\xc0\xaf", b"\xed\xa0\x80",
                 b"\xf4\x90\x80\x80", b"\xf5"):
        assert not is_plain(data), data


def test_tokens_that_break_strings_run_into_a_control_character_or_bad_utf8():
    """Plain text then a control character or broken UTF-8 breaks every JSON string; a quote, a
    backslash or DEL does not (a string may end, escape, or hold DEL)."""
    from automaton.plain import breaks_strings

    for data in (b"ab\n", b"\t", "é".encode()[:1] + b"a", b"a\x80", b"\xc0", b"x\xf8"):
        assert breaks_strings(data), data
    for data in (b'ab"', b"a\\n", b"a\x7f", b"plain", "日本".encode()[:4]):
        assert not breaks_strings(data), data


def _state_after(grammar, text: bytes) -> int:
    state = grammar.automaton.walk(text)
    assert state >= 0
    return state


def test_room_of_a_free_string_is_unbounded_and_a_counted_one_is_what_is_left():
    """A state inside a free string reads any plain text; under maxLength it reads what is left."""
    grammar = constrain.compile({"type": "object", "properties": {
        "free": {"type": "string"}, "short": {"type": "string", "maxLength": 20},
        "code": {"type": "string", "pattern": "^[a-z]+$"}}, "additionalProperties": False})
    from automaton.plain import TextReach

    reach = TextReach(grammar.automaton.program, grammar.automaton.program.live(0))

    def room(text):
        return max(reach(top) for top, _ in grammar.automaton.tops(_state_after(grammar, text)))

    assert room(b'{"free":"abc') == UNBOUNDED
    assert room(b'{"short":"') == 20
    assert room('{"short":"日本'.encode()) == 18  # scalars count once, bytes are what a token holds
    assert room(b'{"code":"ab') == 0  # a pattern that refuses some plain text
    assert room(b'{') == 0


def test_a_room_query_past_the_budget_keeps_its_lower_bounds(monkeypatch):
    """Words counted inside a counted string (``(?:\\S+\\s+){0,199}`` under maxLength) make every
    room query explore its whole state budget; the values it found are lower bounds (the states
    past the budget count as reading nothing), and they are kept, so the next query from a state
    it explored costs nothing. Each such query once explored the budget again (150 ms each)."""
    from automaton import plain

    monkeypatch.setattr(plain, "STATE_BUDGET", 300)
    grammar = constrain.compile({"type": "string", "maxLength": 300, "pattern": "^(?:\\S+\\s+){0,199}\\S+$"},
                                dialect="spec")  # ECMA-262's classes: the shape this test was measured on
    dfa = grammar.automaton
    reach = TextReach(dfa.program, dfa.program.live(0))
    explored = []
    successors = reach._successors
    monkeypatch.setattr(reach, "_successors", lambda s: explored.append(s) or successors(s))

    def room(text):
        return max(reach(top) for top, _ in dfa.tops(_state_after(grammar, text)))

    first = room(b'"ab')
    assert len(explored) >= plain.STATE_BUDGET  # the budget was hit
    assert 0 <= first <= 300
    explored.clear()
    assert room(b'"abc') >= 0 and room(b'"abc d') >= 0
    assert not explored  # states the first query reached: answered from its memo


def test_masks_inside_counted_strings_allow_exactly_what_fits(vocabulary):
    """Near the end of a maxLength string only tokens that fit are allowed, and a closing quote is."""
    grammar = constrain.compile({"type": "string", "maxLength": 3})
    index = token_index(grammar, vocabulary)
    state = _state_after(grammar, b'"a')
    mask = index.mask(state)
    for tid in np.flatnonzero(mask):
        data = vocabulary.token_bytes[tid]
        assert grammar.automaton.walk(data, state) >= 0
    fits = [t for t, d in enumerate(vocabulary.token_bytes) if d and d.isalpha() and d.isascii() and len(d) <= 2]
    too_long = [t for t, d in enumerate(vocabulary.token_bytes) if d and d.isalpha() and d.isascii() and len(d) == 3]
    assert fits and mask[fits].all() and too_long and not mask[too_long].any()


def test_whitespace_runs_are_taken_whole_and_masks_stay_exact(vocabulary):
    """With unbounded whitespace, masks between values (where whitespace runs are taken whole)
    still equal the brute-force answer."""
    from test_masks import brute_force

    grammar = constrain.compile({"type": "object", "properties": {"a": {"type": "integer"}, "b": {}}},
                                whitespace="flexible")
    index = token_index(grammar, vocabulary)
    for text in (b"{", b'{"a":', b'{"a": 5', b'{"a": 5,', b'{"a": 5, "b": [', b'{"a": 5, "b": {"x" :'):
        state = _state_after(grammar, text)
        assert index.room(state, WHITESPACE) > 0 or text == b'{"a": 5'
        assert np.array_equal(index.mask(state), brute_force(grammar, vocabulary, state)), text


def test_states_that_loop_on_a_class_take_its_tokens_whole_and_walk_the_rest(vocabulary):
    """Inside a pattern string that loops on a byte class, the shortcut's mask is the brute-force one."""
    from test_masks import brute_force

    grammar = constrain.compile({"type": "object", "properties": {
        "etag": {"type": "string", "pattern": "^[\\w.:-]+$"}, "n": {"type": "integer"}}}, whitespace="flexible")
    index = token_index(grammar, vocabulary)
    state = _state_after(grammar, b'{"etag": "ab')
    loop = np.zeros(vocabulary.size, dtype=bool)
    used = index.tries._loop_allowed(grammar.automaton, state, loop)
    expected = brute_force(grammar, vocabulary, state)
    assert np.array_equal(index.mask(state), expected)
    assert used and np.array_equal(loop, expected)
    fits = [t for t, d in enumerate(vocabulary.token_bytes) if d and d.isascii() and d.replace(b"_", b"").isalnum()]
    assert fits and expected[fits].all()


def test_configurations_read_plain_text_together_and_refused_first_bytes_are_left_out(vocabulary):
    """A key that is a pattern property's `/...` or else any name: no configuration alone reads
    every plain text, together they do; a key that may not start with `/` (a `false` pattern
    property) reads every plain text but that. Both masks equal the brute-force answer."""
    from test_masks import brute_force

    together = constrain.compile({"type": "object", "patternProperties": {"^/": {"type": "integer"}},
                                  "additionalProperties": {"type": "boolean"}})
    refusing = constrain.compile({"type": "object", "patternProperties": {"^/": False},
                                  "additionalProperties": {"type": "boolean"}})
    for grammar, refused in ((together, frozenset()), (refusing, frozenset(b"/"))):
        index = token_index(grammar, vocabulary)
        state = _state_after(grammar, b'{"')
        assert index.plain_room(state) == (UNBOUNDED, refused)
        mask = index.mask(state)
        assert np.array_equal(mask, brute_force(grammar, vocabulary, state))
        slash = [t for t, d in enumerate(vocabulary.token_bytes) if d and d[:1] == b"/" and len(d) > 1 and is_plain(d)]
        assert slash and mask[slash].all() == (not refused) and mask[slash].any() == (not refused)


def test_scalars_that_only_some_calls_read_bound_the_room_by_the_worst_of_them(vocabulary):
    """Inside `^([ -~]|\\S|\\s[0-9])*$` a no-break space must be followed by a digit, so tokens
    holding one and then a letter are refused although \\S and \\s together read every scalar."""
    from test_masks import brute_force

    grammar = constrain.compile({"type": "string", "pattern": "^([\\x20-\\x7e]|\\S|\\s[0-9])*$"})
    index = token_index(grammar, vocabulary)
    state = _state_after(grammar, b'"ab')
    assert index.room(state, PLAIN) < UNBOUNDED
    assert np.array_equal(index.mask(state), brute_force(grammar, vocabulary, state))


def test_keys_past_some_names_walk_only_the_letters_that_may_still_spell_one(vocabulary):
    """Inside a key that may be a known name or any other: every plain ASCII byte but a few (the
    next letters of names) leads into the free key, which loops on them. Tokens are walked from
    there past their plain start, and those starting with a name's next letter from that
    letter's own state; the masks equal the brute-force answer."""
    from test_masks import brute_force
    from automaton.index import VocabTries

    grammar = constrain.compile({"type": "object", "properties": {
        "name": {"type": "string"}, "nickname": {"type": "integer"}, "active": {"type": "boolean"}}},
        whitespace="flexible")
    index = token_index(grammar, vocabulary)
    for prefix, odd in ((b'{"', b"an"), (b'{"n', b"ai"), (b'{"na', b"m"), (b'{"nick', b"n"), (b'{"zz', b"")):
        state = _state_after(grammar, prefix)
        looping = VocabTries._plain_loop(grammar.automaton, state)
        assert looping is not None and bytes(looping[1]) == bytes(sorted(odd)), prefix
        assert np.array_equal(index.mask(state), brute_force(grammar, vocabulary, state)), prefix


def test_strings_opened_inside_a_token_take_its_plain_tails_whole(vocabulary):
    """A value that may be a free string: tokens such as ` "..` open it and go on with plain text
    (a hub of the trie takes them whole: ` "$`, ` "/`...). The masks equal the brute-force answer where the string
    is free, bounded by `maxLength`, or closed by an enum, and where the quote closes a string."""
    from test_masks import brute_force

    grammar = constrain.compile({"type": "object", "properties": {
        "free": {"type": "string"}, "short": {"type": "string", "maxLength": 3},
        "pick": {"enum": ["ab", "cd"]}, "list": {"type": "array", "items": {"type": "string"}}}},
        whitespace="flexible")
    index = token_index(grammar, vocabulary)
    for prefix in (b'{"free":', b'{"free": ', b'{"short":', b'{"pick":', b'{"list": [', b'{"list": ["a"', b'{'):
        state = _state_after(grammar, prefix)
        assert np.array_equal(index.mask(state), brute_force(grammar, vocabulary, state)), prefix
    hub = [t for t, d in enumerate(vocabulary.token_bytes) if d and d[:2] == b' "' and is_plain(d[2:])]
    free = index.mask(_state_after(grammar, b'{"free":'))
    assert hub and free[hub].all()


def test_number_tokens_are_taken_whole_where_the_digits_are_free(vocabulary):
    """Below a digit of the trie lie the number tokens that go on with digits (`1`, `12`, `123`): a run,
    taken whole where the number surely reads that many more digits. The masks equal the brute-force
    answer where the digits are free (an integer's, a fraction's), bounded (`maximum`), or refused
    (after a leading zero), and where a pattern reads digits."""
    from test_masks import brute_force

    grammar = constrain.compile({"type": "object", "properties": {
        "free": {"type": "number"}, "small": {"type": "integer", "minimum": 0, "maximum": 4567},
        "code": {"type": "string", "pattern": "^#[0-9]{4}$"}}}, whitespace="flexible")
    index = token_index(grammar, vocabulary)
    prefixes = (b'{"free": ', b'{"free": 1', b'{"free": 0', b'{"free": -', b'{"free": 12.', b'{"free": 12.5e',
                b'{"small": ', b'{"small": 4', b'{"small": 45', b'{"small": 456', b'{"small": 9',
                b'{"code": "#', b'{"code": "#12')
    for prefix in prefixes:
        state = _state_after(grammar, prefix)
        assert np.array_equal(index.mask(state), brute_force(grammar, vocabulary, state)), prefix
    trie = index.tries.full
    digits = [t for t, d in enumerate(vocabulary.token_bytes) if d and d.isdigit() and len(d) > 1]
    if len(digits) >= 100:  # a vocabulary that merges digits has runs, and a free integer takes them
        assert trie.runs
        assert index.mask(_state_after(grammar, b'{"free": 1'))[digits].all()


def test_declared_plain_forever_states_agree_with_the_analysis(vocabulary_by_name):
    """The compiler declares the states that read any plain text forever (an additional key past
    the names it might still spell, a pattern's open end); the room analysis, run without the
    declaration, finds each of them unbounded, and masks in keys whose names hold scalars outside
    ASCII equal the brute-force answer."""
    from test_masks import brute_force

    names = [hashlib.sha1(str(i).encode()).hexdigest()[:12] for i in range(120)]  # keys wider than 1,024 states
    for schema in ({"type": "object", "properties": {
            "alpha": {"type": "boolean"}, "alps": {"type": "string", "pattern": "^x-"}, "b": {"type": "null"}}},
            {"type": "object", "properties": {name: {"type": "integer"} for name in names}}):
        program = constrain.compile(schema, whitespace="flexible").program
        live = program.live(program.max_depth)
        declared = [s for s in range(program.size) if program.reads_forever(s)]
        assert len(declared) > 8
        undeclared = TextReach(program, live)
        undeclared._forever = lambda _s: False
        assert all(undeclared(s) == UNBOUNDED for s in declared)
        assert all(live[s] for s in declared)
    assert sum(program.block_at(s) is not None for s in declared) > 1024  # the keys' counted block

    vocab = vocabulary_by_name("llama-bpe")
    grammar = constrain.compile({"type": "object", "properties": {"café": {"type": "integer"},
                                                                  "naïve": {"type": "boolean"}}},
                                whitespace="flexible")
    index = token_index(grammar, vocab)
    for prefix in (b'{"', b'{"caf', b'{"caf\xc3', b'{"na', b'{"na\xc3\xaf', b'{"x', b'{"caf\\u00e'):
        state = _state_after(grammar, prefix)
        assert np.array_equal(index.mask(state), brute_force(grammar, vocab, state)), prefix


def test_a_loop_split_finds_where_each_token_leaves_its_class():
    """Tokens inside a class (not longer than the split looks), and for every other one the first
    byte outside it and its offset: tokens longer than that width leave at it at the latest."""
    from automaton.loops import WIDTH, LoopTokens

    letters = b"abcdefghij"
    tokens = [b"", b"abc", b"ab-c", b"-", b" ab", b"a" * WIDTH, b"a" * WIDTH + b"b", b"a" * (WIDTH + 3) + b"-",
              b"ab" * 20 + b"-", b"abc\xc3\xa9", bytes(range(256))]
    loop = np.zeros(256, dtype=bool)
    loop[list(letters)] = True
    split = LoopTokens(tokens).split(loop)
    expected_inside = [t for t, d in enumerate(tokens) if d and len(d) <= WIDTH and all(loop[b] for b in d)]
    expected_out = {}
    for t, d in enumerate(tokens):
        if d and t not in expected_inside:
            at = next((i for i, b in enumerate(d[:WIDTH]) if not loop[b]), WIDTH)
            expected_out[t] = (at, d[at])
    assert sorted(split.inside.tolist()) == expected_inside
    found = {t: (at, b) for t, at, b in zip(split.out_ids.tolist(), split.out_at.tolist(), split.out_byte.tolist())}
    assert found == expected_out
    assert found[7] == (WIDTH, ord("a")) and found[8] == (WIDTH, ord("a")) and found[2] == (2, ord("-"))
