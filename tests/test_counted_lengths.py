"""Long length bounds are counted, not unrolled: small programs, and the same language as python-jsonschema's."""

import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import constrain

# scalars that exercise every way of writing one: ASCII, two- to four-byte UTF-8, characters that
# must be escaped, and (in ``spell``) escapes of scalars that need none
ALPHABET = st.sampled_from(["a", "Z", "-", " ", "é", "日", "😀", '"', "\\", "\n", "\x01", "/"])


def spell(text: str, escape_all: bool) -> str:
    """``text`` as a JSON string: every scalar ``\\uXXXX``-escaped (a surrogate pair above the BMP),
    or as ``json.dumps`` writes it, raw outside ASCII."""
    if not escape_all:
        return json.dumps(text, ensure_ascii=False)
    return '"' + "".join(json.dumps(ch, ensure_ascii=True)[1:-1] if ord(ch) >= 0x80 else "\\u%04x" % ord(ch)
                         for ch in text) + '"'


def compiled(schema):
    """python-jsonschema's reading (dialect "spec"), the oracle here; the portable default, a
    subset of it, is tested in test_portable.py."""
    return constrain.compile(schema, whitespace="compact", dialect="spec")


def accepts(schema, document: str) -> bool:
    """Whether ``schema`` compiles and accepts ``document`` (a schema nothing satisfies is refused)."""
    try:
        return compiled(schema).accepts(document)
    except constrain.SchemaError:
        return False


@pytest.mark.parametrize("bound", [255, 32_767, 65_535, 400_000])
def test_a_long_max_length_is_a_small_program(bound):
    """A string of at most ``bound`` scalars is a template of a few states and a count, whatever the bound."""
    program = compiled({"type": "string", "maxLength": bound}).program
    assert program.written - program.included < 120  # past the prelude
    assert [block.hi for block in program.counted] == [bound]


def test_a_pattern_under_a_long_max_length_is_counted_within_the_budget():
    """A data URL's pattern (about 40 states) under ``maxLength: 32767`` is a million counted states,
    each five bytes of flags: it weighs one eighth of a written state against ``max_states`` (it
    was refused at 500,000), and agrees with python-jsonschema at its bound. Hostile bounds past
    the budget still are refused, at once."""
    schema = {"type": "string", "maxLength": 32767, "pattern": "^data:image/(png|jpeg);base64,[0-9a-zA-Z+/=]*$"}
    grammar = compiled(schema)
    assert grammar.program.size > grammar.program.max_states > grammar.program.weight
    oracle = jsonschema.Draft202012Validator(schema)
    for text in ["data:image/png;base64,AAAA", "data:image/png;base64," + "A" * 32745, "data:image/png;base64," + "A" * 32746,
                 "data:image/gif;base64,AA"]:
        assert grammar.accepts(json.dumps(text)) == oracle.is_valid(text), len(text)
    with pytest.raises(constrain.SchemaTooComplex):
        compiled({"type": "object", "properties": {f"k{i}": {**schema, "maxLength": 400_000} for i in range(3)}})


def test_a_pattern_of_one_repeated_class_is_counted():
    """``^C{m,n}$`` is the class and a count, however large ``n`` (no longer unrolled by the regex NFA)."""
    program = compiled({"type": "string", "pattern": "^[a-z0-9_]{1,400000}$"}).program
    own = program.written - program.included  # the states written for this schema, past the prelude
    assert own < 100 and [(block.lo, block.hi) for block in program.counted] == [(1, 400_000)]


def test_hostname_is_counted():
    """hostname's 253 characters are counted (its 63-character labels are its template)."""
    program = compiled({"type": "string", "format": "hostname"}).program
    assert program.written - program.included < 1_000 and [block.hi for block in program.counted] == [253, 254]


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from(["a", "Z", "0", "-", ".", "b" * 30, "c" * 62, "é"]), max_size=14),
       max_length=st.none() | st.integers(0, 260))
def test_hostname_strings_agree_with_python_jsonschema(parts, max_length):
    """Up to ~400 characters, with or without a maxLength of its own: accepted exactly when valid."""
    text = "".join(parts)
    schema = {"type": "string", "format": "hostname", **({} if max_length is None else {"maxLength": max_length})}
    expected = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).is_valid(text)
    assert accepts(schema, spell(text, False)) is expected


@settings(max_examples=60, deadline=None)
@given(lo=st.integers(0, 40), span=st.none() | st.integers(0, 40), extra=st.integers(-3, 3),
       text=st.lists(ALPHABET, max_size=85).map("".join), escape_all=st.booleans())
def test_lengths_count_scalars_like_python_jsonschema(lo, span, extra, text, escape_all):
    """minLength/maxLength near the text's length: accepted exactly when python-jsonschema validates,
    each escaped scalar counting once."""
    lo = max(0, lo + len(text) // 2)
    schema = {"type": "string", "minLength": lo, **({} if span is None else {"maxLength": lo + span})}
    if span is not None and extra < 0:
        schema["maxLength"] = max(0, len(text) + extra)
        schema["minLength"] = min(lo, schema["maxLength"])
    expected = jsonschema.Draft202012Validator(schema).is_valid(text)
    assert compiled(schema).accepts(spell(text, escape_all)) is expected


@settings(max_examples=60, deadline=None)
@given(pattern=st.sampled_from(["^[a-zé-]+$", "^(ab|c)*$", "@", "^[^\"]*x$", "^[a-z]+(-[a-z]+)*$", "^[a-zé-]{3,60}$",
                                 "^.{0,29}$", "^[^@]{2,}$", "^[abc😀]{5}$"]),
       lo=st.integers(0, 70), hi=st.integers(0, 90),
       text=st.lists(st.sampled_from(["a", "b", "c", "x", "é", "-", "@", "😀"]), max_size=80).map("".join),
       escape_all=st.booleans())
def test_a_pattern_with_long_length_bounds_agrees_with_python_jsonschema(pattern, lo, hi, text, escape_all):
    """A pattern crossed with length bounds, counted or built as a product, validates like python-jsonschema."""
    schema = {"type": "string", "pattern": pattern, "minLength": lo, "maxLength": hi}
    expected = jsonschema.Draft202012Validator(schema).is_valid(text)
    assert accepts(schema, spell(text, escape_all)) is expected


@pytest.mark.parametrize("schema", [
    {"type": "string", "maxLength": 40_000},
    {"type": "string", "minLength": 3000},
    {"type": "string", "format": "hostname"},
    {"type": "string", "pattern": "^[a-z]+@[a-z]+$", "minLength": 2, "maxLength": 5000},
    {"type": "object", "properties": {"a": {"type": "string", "maxLength": 65_535}, "b": {"type": "integer"}},
     "required": ["a", "b"]},
])
def test_counted_strings_have_no_dead_end(schema):
    """Every state reached from the start of a counted string can still finish."""
    assert compiled(schema).find_trap(3000) is None


def test_the_last_scalars_under_a_long_bound():
    """Under the bound one more scalar of any spelling is read; at the bound only the closing quote."""
    grammar = compiled({"type": "string", "minLength": 4_999, "maxLength": 5_000})
    assert not grammar.accepts(spell("é" * 4_998, False))
    assert grammar.accepts(spell("é" * 4_999, False))
    assert grammar.accepts(spell("é" * 4_999, False)[:-1] + "\\ud83d\\ude00\"")
    assert not grammar.accepts_prefix(spell("é" * 5_000 + "a", False)[:-1])


def test_a_pickled_counted_grammar_is_self_contained():
    import pickle

    grammar = compiled({"type": "string", "maxLength": 65_535})
    again = pickle.loads(pickle.dumps(grammar))
    assert again.accepts(spell("x" * 65_535, False)) and not again.accepts(spell("x" * 65_536, False))


def test_format_and_pattern_templates_are_shared_by_grammars():
    """Two schemas using one format (or pattern) share its byte template: made once per process."""
    def templates(schema):
        program = compiled(schema).program
        program.expand_all()  # the string fields wait to be lowered until reached
        return {id(block.template) for block in program.counted}

    for string in ({"type": "string", "format": "uri"}, {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$"}):
        one = templates({"type": "object", "properties": {"a": string}})
        other = templates({"type": "array", "items": [{"type": "integer"}, string]})
        assert one and one == other


@settings(max_examples=300, deadline=None)
@given(st.frozensets(st.text(ALPHABET, max_size=4), max_size=6))
def test_additional_keys_template_read_off_the_trie_is_the_general_one(names):
    """An object's other keys: ``other_strings`` builds the names' complete trie in one pass and its
    template is read off the trie's shape; both equal what the general constructions make."""
    import dataclasses

    from compiler import chardfa, counting

    dfa = chardfa.other_strings.__wrapped__(names)
    trie = chardfa._complete(chardfa.literal_strings(sorted(names)))
    assert (dfa.start, dfa.edges, dfa.accepting) == (trie.start, trie.frozen().edges, set(range(trie.size)) - trie.accepting)
    fast, general = counting._keys_template(dfa, True, None), counting._template(dfa, True, None)
    assert dataclasses.astuple(fast) == dataclasses.astuple(general)


def test_additional_keys_exclude_the_names_however_spelled():
    """A key other than the names is any string but them: a name spelled with an escape is that
    name (refused as an additional key), other keys may use escapes."""
    names = {name: {"type": "integer"} for name in ("alpha", "beta", "gamma", "delta")}
    grammar = compiled({"type": "object", "properties": names, "additionalProperties": {"type": "boolean"}})
    assert grammar.accepts('{"alpha":1,"alphab":true,"bet":false}')
    assert not grammar.accepts('{"alphab":1}')
    assert not grammar.accepts('{"alpha":1,"alpha":true}')
    assert not grammar.accepts('{"alpha":1,"\\u0062eta":true}')
    assert grammar.accepts('{"alpha":1,"\\u00e9":true,"\\n":false}')


def test_unknown_format_names_are_not_cached():
    """Format names come from schemas: only the known ones' automata are kept."""
    from compiler.formats import _terms

    before = _terms.cache_info().currsize
    for i in range(50):
        with pytest.warns(UserWarning):
            compiled({"type": "string", "format": f"made-up-{i}"})
    assert _terms.cache_info().currsize == before


def test_a_pickled_grammar_needs_nothing_of_the_process_that_compiled_it(tmp_path):
    """A grammar with counted and shared blocks, unpickled in a fresh process, accepts the same strings."""
    import pickle
    import subprocess
    import sys

    schema = {"type": "object", "properties": {"h": {"type": "string", "format": "hostname"},
                                               "s": {"type": "string", "maxLength": 70_000}}}
    (tmp_path / "g.pickle").write_bytes(pickle.dumps(compiled(schema)))
    script = ("import pickle, sys; g = pickle.load(open(sys.argv[1], 'rb'));"
              "print(g.accepts('{\"h\":\"a.b\",\"s\":\"x\"}'), g.accepts('{\"h\":\"a..b\"}'))")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "g.pickle")], capture_output=True, text=True,
                         check=True, cwd=str(tmp_path), env={"PYTHONPATH": ":".join(sys.path)})
    assert out.stdout.split() == ["True", "False"]


def test_grammars_share_the_prelude():
    """The fragments every grammar may call are written once per process and options: two grammars
    hold the same row objects for them, and a free string's spellings go through them."""
    a = compiled({"type": "object", "properties": {"x": {"type": "string"}}}).program
    b = compiled({"type": "array", "items": {"type": "string", "maxLength": 3}}).program
    assert a.included == b.included > 50
    assert all(a.edges[s] is b.edges[s] for s in range(a.included))
    grammar = compiled({"type": "string", "maxLength": 3})
    for text in ['"\\u00e9\\u00C9\\/"', '"\u00e9\U0001F600\\ud83d\\ude00"', '"\\n\\"\\\\"']:
        assert grammar.accepts(text), text
    for text in ['"\\ud83d"', '"abcd"', '"\\u00g0"']:
        assert not grammar.accepts(text), text


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"alpha": {"type": "string", "pattern": "^a+b*$"}, "b\u00e9ta": {}}},
    {"type": "string", "format": "uri"},
    {"type": "string", "pattern": "^[a-z]+( [a-z]+)*$", "maxLength": 300},
])
def test_a_programs_rows_of_its_blocks_are_the_blocks_own(schema):
    """``Rows`` holds a block's rows as ``edges_of``, ``calls_of`` and ``eps_of`` make them, for every
    block of the program."""
    program = constrain.compile(schema, cache=False).program
    assert program.counted
    for block in program.counted:
        for kind in ("edges_of", "calls_of", "eps_of"):
            for s in range(block.first, block.first + block.size):
                assert getattr(program, kind[:-3] if kind != "eps_of" else "eps")[s] == getattr(block, kind)(s)


@pytest.mark.parametrize("most", [199, 20_000])
def test_a_bounded_group_repetition_is_counted(most):
    """``(?:\\S+\\s+){0,n}\\S+`` (at most n + 1 words) is a few states and a count of words, whatever n."""
    program = compiled({"type": "string", "pattern": f"^(?:\\S+\\s+){{0,{most}}}\\S+$"}).program
    assert [(block.lo, block.hi) for block in program.counted] == [(0, most)]
    assert program.counted[0].width < 10 and program.written - program.included < 400


COUNTED_GROUPS = ["^(?:\\S+\\s+){0,19}\\S+$", "^$|(^(?:\\S+\\s+){0,16}\\S+$)", "^(([0-9]|[a-f]){2}){0,17}$",
                  "^x(ab){3,22}y$", "^(a|bc){0,20}$", "^([a-z]+,){0,17}[a-z]+$", "^(a*b?){0,20}$",
                  "^(?:ab|a){0,18}b$", "^(?:[ab]{2}){2,20}(?:c|ab)$"]


@settings(max_examples=300, deadline=None)
@given(pattern=st.sampled_from(COUNTED_GROUPS), max_length=st.none() | st.integers(0, 60),
       text=st.lists(st.sampled_from(["a", "b", "c", " ", "\t", ",", "é", "x", "y", "0", "f", "ab", "a b"]),
                     max_size=40).map("".join), escape_all=st.booleans())
def test_a_counted_group_agrees_with_python_jsonschema(pattern, max_length, text, escape_all):
    """A pattern's counted group (or the unrolled automaton where its iterations are ambiguous, or a
    maxLength is a second count) validates like python-jsonschema, near the count's bound too."""
    schema = {"type": "string", "pattern": pattern, **({} if max_length is None else {"maxLength": max_length})}
    expected = jsonschema.Draft202012Validator(schema).is_valid(text)
    assert accepts(schema, spell(text, escape_all)) is expected


@pytest.mark.parametrize("pattern", COUNTED_GROUPS)
def test_counted_groups_have_no_dead_end(pattern):
    assert compiled({"type": "string", "pattern": pattern}).find_trap(3000) is None


@pytest.mark.parametrize("pattern, counted", [
    ("^(?:\\S+\\s+){0,19}\\S+$", True), ("^(a*b?){0,20}$", False), ("x(ab){0,20}y", False),
    ("^(ab){0,15}$", False), ("^((ab){0,20}c)*$", False), ("^(?:ab|a){0,18}b$", True)])
def test_which_group_repetitions_are_counted(pattern, counted):
    """Counted: one bounded repetition of 16 or more optional copies, anchored at the start, its
    iterations told apart as the text is read; else unrolled as before (a block of one count)."""
    program = compiled({"type": "string", "pattern": pattern}).program
    assert any(block.hi is not None for block in program.counted) is counted


BOUND_FAMILIES = [  # a counted pattern, and texts of k iterations for k around its bound
    ("^(?:\\S+\\s+){0,19}\\S+$", lambda k: [" ".join(["w"] * k), " ".join(["wé"] * k) + " ", "\t".join(["ab"] * k)]),
    ("^(?:[ab]{2}){2,20}(?:c|ab)$", lambda k: ["ab" * k + "c", "ab" * k + "ab", "ba" * k + "a"]),
    ("^x(ab){3,22}y$", lambda k: ["x" + "ab" * k + "y", "x" + "ab" * k + "ay"]),
    ("^([a-z]+,){0,17}[a-z]+$", lambda k: [",".join(["a"] * k), ",".join(["bc"] * k) + ","]),
    ("^(?:ab|a){0,18}b$", lambda k: ["ab" * k + "b", "a" * k + "b", "a" * k]),
    ("^(a|bc){0,20}$", lambda k: ["a" * k, "bc" * k, "a" * k + "b"]),
]


@pytest.mark.parametrize("pattern, texts", BOUND_FAMILIES)
def test_a_counted_group_at_its_bound(pattern, texts):
    """Around the group's bound, texts and their prefixes are accepted exactly when python-jsonschema
    validates them (and each accepted text's every prefix still reads on): no count lost or gained."""
    grammar = compiled({"type": "string", "pattern": pattern})
    validator = jsonschema.Draft202012Validator({"type": "string", "pattern": pattern})
    for k in range(26):
        for text in texts(k):
            expected = validator.is_valid(text)
            document = spell(text, False)
            assert grammar.accepts(document) is expected, (text, expected)
            if expected:
                assert all(grammar.accepts_prefix(document[:i]) for i in range(len(document)))


@pytest.mark.parametrize("pattern", ["^(ab){10,100000016}$", "^(ab){100000000,100000016}$", "^x(a|b){0,999999999}$"])
def test_a_huge_group_repetition_is_refused_in_bounded_time(pattern):
    """A count past the state budget, or required copies past the NFA bound: SchemaTooComplex, at once."""
    with pytest.raises(constrain.SchemaTooComplex):
        compiled({"type": "string", "pattern": pattern})


ITEM_ARRAYS = [
    {"type": "array", "items": {"type": "integer"}, "maxItems": 17},
    {"type": "array", "maxItems": 16},  # any item: the recursive any-value fragment
    {"type": "array", "items": {"$ref": "#"}, "maxItems": 18},  # itself: counts against max_depth
    {"type": "array", "items": {"type": "integer", "minimum": 5, "maximum": 3}, "maxItems": 20},  # no item
    {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}, "maxItems": 16}, "maxItems": 19},
    {"type": "object", "properties": {"a": {"type": "array", "items": {"$ref": "#"}, "maxItems": 16}}, "required": ["a"]},
    {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 19},  # the required items written
    {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"$ref": "#"}]}, "minItems": 1, "maxItems": 17},
]


def _items(block) -> bool:
    return block.template.slots == ("item",)


def _unrolled(schema, whitespace):
    """The same schema with its arrays' counts unrolled, as before counted items."""
    from compiler import containers

    saved, containers.COUNTED_ITEMS_MIN = containers.COUNTED_ITEMS_MIN, 1 << 30
    try:
        return constrain.compile(schema, whitespace=whitespace, max_whitespace=2, max_depth=3, cache=False)
    finally:
        containers.COUNTED_ITEMS_MIN = saved


ITEM_TEXTS = st.sampled_from(["1", "7", "true", '"a"', "[]", "[1]", "[[]]", "[[[]]]", "[[[[]]]]", "[[[[[[[[]]]]]]]]", " 1",
                              "  1  ", "1   ",
                              '{"a":[]}'])
HEADS = st.sampled_from(["", "", "", "[", "[1,", '{"a":', '{"a":[', " "])
TAILS = st.sampled_from(["", "", "", "]", "}", ",1]", "]}", " "])


@settings(max_examples=200, deadline=None)
@given(schema=st.sampled_from(ITEM_ARRAYS), whitespace=st.sampled_from(["compact", "flexible", "bounded"]),
       head=HEADS, count=st.integers(0, 24), item=ITEM_TEXTS, other=ITEM_TEXTS,
       sep=st.sampled_from([",", ", ", ",,", " ,  ", ",   "]), last=st.sampled_from(["", ",", " ", "   "]), tail=TAILS)
def test_counted_items_read_as_unrolled_items(schema, whitespace, head, count, item, other, sep, last, tail):
    """An array of at most n items as a counted block accepts, and lets go on, exactly the texts the
    unrolled grid of counts did (every prefix too): near the bound, with items that cannot be
    written, and at the recursion limit (an item that is the array itself)."""
    items = [item] * count
    items[count // 2:count // 2 + 1] = [other] if count else []
    text = head + "[" + sep.join(items) + last + "]" + tail
    counted = constrain.compile(schema, whitespace=whitespace, max_whitespace=2, max_depth=3, cache=False)
    assert any(_items(block) for block in counted.program.counted) or "properties" in schema
    unrolled = _unrolled(schema, whitespace)
    assert not any(_items(block) for block in unrolled.program.counted)
    assert counted.accepts(text) is unrolled.accepts(text), text
    for end in range(len(text) + 1):
        assert counted.accepts_prefix(text[:end]) is unrolled.accepts_prefix(text[:end]), text[:end]


@pytest.mark.parametrize("text", ["[1,  2]", "[1  ,2]", "[1,   2]", "[1   ,2]", "[1,2   ]", "[   1]"])
def test_a_counted_items_whitespace_run_keeps_its_bound(text):
    """``bounded`` whitespace (at most 2 here) between counted items, as between unrolled ones: the
    generated test above finds a run past the bound only now and then (a mutation check survived
    it once)."""
    schema = ITEM_ARRAYS[0]
    counted = constrain.compile(schema, whitespace="bounded", max_whitespace=2, max_depth=3, cache=False)
    assert any(_items(block) for block in counted.program.counted)
    assert counted.accepts(text) is _unrolled(schema, "bounded").accepts(text) is (text.count(" ") <= 2), text


@pytest.mark.parametrize("schema", ITEM_ARRAYS)
def test_counted_items_have_no_dead_end(schema):
    assert constrain.compile(schema, cache=False).find_trap(20_000) is None


def test_items_near_the_bound_agree_with_python_jsonschema():
    """Up to and past maxItems, and every prefix of what is accepted."""
    schema = {"type": "array", "items": {"type": "integer"}, "maxItems": 18}
    grammar = compiled(schema)
    for n in range(22):
        text = json.dumps(list(range(n)), separators=(",", ":"))
        expected = jsonschema.Draft202012Validator(schema).is_valid(list(range(n)))
        assert grammar.accepts(text) is expected
        assert grammar.accepts_prefix(text[:-1]) is (n <= 18)
        assert grammar.accepts_prefix(text[:-1] + ",") is (1 <= n < 18)  # a comma only before one more item
        assert not grammar.accepts(text[:-1] + ",]")
    assert [block.hi for block in grammar.program.counted] == [18] and grammar.program.written - grammar.program.included < 20


def test_counted_items_that_nest_count_against_max_depth():
    """An item that is the array itself is a recursive call from the block: nesting stops at max_depth
    as it did unrolled."""
    schema = {"type": "array", "items": {"$ref": "#"}, "maxItems": 18}
    counted = constrain.compile(schema, whitespace="compact", max_depth=3, cache=False)
    unrolled = _unrolled(schema, "compact")
    for k in range(1, 7):
        text = "[" * k + "]" * k
        assert counted.accepts(text) is unrolled.accepts(text) is (k <= 3), k
        assert counted.accepts_prefix("[" * k) is (k <= 3), k
