"""`pattern` → CharDFA: ECMA-262 search semantics, refusals that name the construct, bounded work."""

import re

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from compiler.chardfa import CharDFA
from compiler.errors import InvalidSchema, SchemaTooComplex, UnsupportedKeyword
from compiler.regex import either_dfa, pattern_dfa

ECMA_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

# (ECMA source, the same language in Python `re` syntax with no flags)
ATOMS = [
    ("a", "a"), ("b", "b"), ("\\.", "\\."), ("\\-", "\\-"), ("-", "-"),
    ("\\d", "[0-9]"), ("\\D", "[^0-9]"), ("\\w", "[A-Za-z0-9_]"), ("\\W", "[^A-Za-z0-9_]"),
    ("\\s", f"[{ECMA_SPACE}]"), ("\\S", f"[^{ECMA_SPACE}]"), (".", "[^\n\r\u2028\u2029]"),
    ("[a-c]", "[a-c]"), ("[^a\\d]", "[^a0-9]"), ("[\\s_]", f"[{ECMA_SPACE}_]"), ("\\u00e9", "\u00e9"),
]
ANCHORS = [("^", "\\A"), ("$", "\\Z")]
ALPHABET = "ab-._0 \n\r\u2028\u00a0\ufeff\x1c\u00e9\u0663c"


def _quantified(pair, quantifier):
    ecma, py = pair
    return f"(?:{ecma}){quantifier}", f"(?:{py}){quantifier}"


def _regexes(depth: int):
    """Generated patterns nested at most ``depth`` deep: Python's ``re`` backtracks, and quantifiers
    nested without bound took it exponential time on a 7-character text (a run hung on one)."""
    atoms = st.sampled_from(ATOMS)
    if depth == 0:
        return atoms
    inner = _regexes(depth - 1)
    return st.one_of(
        atoms,
        st.sampled_from(ANCHORS),
        st.tuples(inner, inner).map(lambda p: (p[0][0] + p[1][0], p[0][1] + p[1][1])),
        st.tuples(inner, inner).map(lambda p: (f"(?:{p[0][0]}|{p[1][0]})", f"(?:{p[0][1]}|{p[1][1]})")),
        st.tuples(inner, st.sampled_from(["*", "+", "?", "{2}", "{0,2}", "{1,3}", "{2,}", "*?"]))
          .map(lambda p: _quantified(*p)),
    )


regexes = _regexes(4)


@settings(max_examples=150, deadline=None)
@given(regexes, st.lists(st.text(alphabet=ALPHABET, max_size=7), min_size=1, max_size=8))
def test_matches_like_python_search_with_ecma_classes(pair, texts):
    """On generated patterns and strings, the DFA agrees with `re.search` on the ECMA-translated pattern."""
    _agrees_with_python(*pair, texts)


def _agrees_with_python(ecma: str, py: str, texts) -> None:
    """The DFA of ``ecma`` matches each text as Python's ``re.search`` with ``py`` does (a pattern
    past the compile budget is refused as too complex: the bound works, nothing to compare)."""
    try:
        dfa = pattern_dfa(ecma)
    except SchemaTooComplex:
        assume(False)
    compiled = re.compile(py)
    for text in texts:
        assert dfa.matches(text) == bool(compiled.search(text)), (ecma, text)


REAL_PATTERNS = [
    r"^[a-zA-Z0-9_-]{1,64}$", r"^\d{3}-\d{2}-\d{4}$", r"^[A-Z]{2}$", r"^(\+|-)?\d+(\.\d+)?$",
    r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", r"^#[0-9a-fA-F]{6}$", r"\.json$", r"^(https?|ftp)://", r"v\d+",
    r"^\S+( \S+)*$", r"^(?:[a-z]+/)*[a-z]+$", r"[{}]", r"^a{2,}b{0,1}c?$", r"^[\w.]+$", r"^\s*$",
]


@settings(max_examples=150, deadline=None)
@given(_regexes(2), _regexes(2), regexes, st.booleans(), st.lists(st.text(alphabet=ALPHABET, max_size=7), min_size=1, max_size=8))
def test_leading_lookaheads_match_like_python(ahead, also, rest, positive, texts):
    """``^(?!A)(?=B)C`` and ``^(?=A)C``, generated: the DFA agrees with Python's ``re.search``."""
    if positive:
        ecma, py = f"^(?={ahead[0]}){rest[0]}", f"\\A(?={ahead[1]}){rest[1]}"
    else:
        ecma, py = f"^(?!{ahead[0]})(?={also[0]}){rest[0]}", f"\\A(?!{ahead[1]})(?={also[1]}){rest[1]}"
    _agrees_with_python(ecma, py, texts)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(REAL_PATTERNS), st.text(alphabet="aZ09_-.@ /:#{}+bcjsonhtpv", max_size=12))
def test_real_patterns_agree_with_python_on_ascii(pattern, text):
    """Typical schema patterns agree with Python's ASCII-mode `re.search` on ASCII strings without newlines."""
    assert pattern_dfa(pattern).matches(text) == bool(re.search(pattern, text, re.ASCII))


@pytest.mark.parametrize("pattern, yes, no", [
    ("abc", ["abc", "xxabcxx"], ["ab", "acb", ""]),
    ("^abc", ["abc", "abcd"], ["xabc"]),
    ("abc$", ["abc", "xabc"], ["abcd", "abc\n"]),
    ("^abc$", ["abc"], ["abcd", "xabc", "abc\n"]),
    ("^a$|^b$", ["a", "b"], ["ab", "", "ba"]),
    ("^a|b$", ["ax", "xb", "a", "b"], ["xa", "bx"]),
    ("(^|,)x", ["x", "a,x", "x,"], ["ax"]),
    ("a^b", [], ["ab", "a^b", ""]),
    ("^$", [""], ["a", "\n"]),
    ("^", ["", "anything"], []),
])
def test_anchors_follow_ecma_search_semantics(pattern, yes, no):
    """`^`/`$` anchor the ends wherever they appear; without them a match may sit anywhere."""
    dfa = pattern_dfa(pattern)
    assert all(dfa.matches(s) for s in yes)
    assert not any(dfa.matches(s) for s in no)


@pytest.mark.parametrize("pattern, yes, no", [
    (r"^\d$", ["7"], ["\u0663", "\uff17"]),
    (r"^\w$", ["a", "_", "Z"], ["\u00e9", "\u0663"]),
    (r"^\s$", [" ", "\ufeff", "\u00a0", "\u2028", "\x0b"], ["\x1c", "\x85"]),
    (r"^.$", ["a", "\u00e9", "\U0001f600"], ["\n", "\r", "\u2028", "\u2029"]),
    (r"^[^a]$", ["b", "\n"], ["a"]),
    (r"^\uD83D\uDE00$", ["\U0001f600"], ["\ud83d"]),
    (r"^\u{1F600}\x41\cJ$", ["\U0001f600A\n"], []),
    (r"^[\d-z]$", ["5", "-", "z"], ["y"]),
    (r"^[]$", [], ["", "a"]),
    (r"^[^]$", ["a", "\n"], [""]),
])
def test_character_classes_use_the_ecma_dialect(pattern, yes, no):
    """`\\d`, `\\w`, `\\s`, `.` and escapes mean what ECMA-262 says, not what Python says."""
    dfa = pattern_dfa(pattern)
    assert all(dfa.matches(s) for s in yes)
    assert not any(dfa.matches(s) for s in no)


@pytest.mark.parametrize("pattern, texts", [
    ("^(?!@@)[@a-zA-Z0-9_-]+$", ["@@a", "@a", "abc", "@", "", "@@"]),
    ("^(?!pattern$).*$", ["pattern", "patterns", "x", "", "pattern\n"]),
    ("^(?=[^=]+$)(?!\\s+$)(.|\\n)+$", ["a=b", "   ", "ab", " a", "", "a\nb"]),
    ("^(?![iI][oO]broker)", ["iobroker", "IObroker.x", "io", "x", ""]),
    ("^(?!.*\\/)^(.*[^.]+.*)$", ["a/b", "ab", "...", "a.b"]),
    ("^(?!.*://)(?=.{1,10}$)[a-z.]+$", ["ab.c", "a://b", "abcdefghijk", "", "abcdefghij"]),
    ("^(?!(if|else|for)$)[a-z_]\\w*$", ["if", "iff", "else", "_x", "for1", "9a"]),
])
def test_lookaheads_right_after_a_leading_caret_are_exact(pattern, texts):
    """``^(?!X)`` and ``^(?=X)`` (as real schemas write them: a reserved word, a scheme, a length
    read ahead) leave out, or keep only, the strings with a prefix matching X; the same answer as
    Python's ``re`` (whose lookaheads read as ECMA-262's here) in every dialect the compiler reads."""
    for dialect in ("ecma", "portable"):
        dfa = pattern_dfa(pattern, dialect=dialect)
        assert [dfa.matches(t) for t in texts] == [re.search(pattern, t) is not None for t in texts], dialect
    try:  # under a not: refused where the readings may differ ("." "$" and class escapes), else ECMA-262's
        either = pattern_dfa(pattern, dialect="either")
    except UnsupportedKeyword as refusal:
        assert "under 'not'" in str(refusal) and any(c in pattern for c in ".$\\")
    else:
        assert either is pattern_dfa(pattern) and not any(c in pattern for c in ".$\\")


def test_a_portable_lookahead_keeps_what_both_readings_keep():
    """U+FEFF is ``\\s`` to ECMA-262, not to Python's ``re``: ``^(?!\\s)`` keeps ``"\\ufeffa"`` for
    ``re`` only and ``^(?=\\s)`` keeps ``"\\ufeff"`` for ECMA-262 only, so the portable reading
    keeps neither."""
    assert re.search(r"^(?!\s)", "\ufeffa") and not pattern_dfa(r"^(?!\s)").matches("\ufeffa")
    assert not pattern_dfa(r"^(?!\s)", dialect="portable").matches("\ufeffa")
    assert pattern_dfa(r"^(?=\s)").matches("\ufeff") and not re.search(r"^(?=\s)", "\ufeff")
    assert not pattern_dfa(r"^(?=\s)", dialect="portable").matches("\ufeff")
    assert pattern_dfa(r"^(?!\s)", dialect="portable").matches("a")


@pytest.mark.parametrize("pattern, construct", [
    ("a(?=b)", "lookahead (?=...) or (?!...) other than right after a leading ^"),
    ("^(?:(?!a)b)", "lookahead (?=...) or (?!...) other than right after a leading ^"),
    ("^a|(?!b)c", "lookahead (?=...) or (?!...) other than right after a leading ^"),
    ("^(?=a)*b", "a quantified lookahead"),
    ("(?<=a)b", "lookbehind (?<=...)"),
    ("(?<!a)b", "negative lookbehind (?<!...)"),
    ("(a)\\1", "backreference \\1"),
    ("(?<n>a)\\k<n>", "named backreference"),
    ("\\bword\\b", "word boundary \\b"),
    ("(?i)abc", "inline flags (?i)"),
    ("\\p{L}+", "unicode property class \\p{L}"),
    ("\\Z", "escape \\Z"),
    ("^a{,2}$", "quantifier {,n}"),
])
def test_unsupported_constructs_are_refused_by_name(pattern, construct):
    """Lookarounds, backreferences, word boundaries, flags and property classes raise UnsupportedKeyword naming them."""
    with pytest.raises(UnsupportedKeyword) as info:
        pattern_dfa(pattern, "/properties/x/pattern")
    assert info.value.keyword == "pattern"
    assert construct in str(info.value)
    assert "/properties/x/pattern" in str(info.value)


@pytest.mark.parametrize("pattern", ["a)", "(a", "[a", "[b-a]", "a**", "*a", "a{3,2}", "^*", "\\"])
def test_invalid_regexes_are_invalid_schemas(pattern):
    """Syntax errors raise InvalidSchema quoting the pattern."""
    with pytest.raises(InvalidSchema) as info:
        pattern_dfa(pattern)
    assert repr(pattern) in str(info.value)


@pytest.mark.parametrize("pattern", [
    "(a{1,1000}){1,1000}", "a{99999999999}", "x{100001}", "((a|b)*c){500}", "(a|b)*a(a|b){30}",
    "(" * 150 + "a" + ")" * 150,
])
def test_hostile_patterns_raise_too_complex(pattern):
    """Repetition blow-ups, exponential determinisation and deep nesting raise SchemaTooComplex, not a hang."""
    with pytest.raises(SchemaTooComplex):
        pattern_dfa(pattern)


def test_state_bound_is_configurable():
    """`max_states` caps the automaton: a pattern that needs more states is refused."""
    assert pattern_dfa("^[a-z]{1,50}$").size <= 52
    with pytest.raises(SchemaTooComplex):
        pattern_dfa("^[a-z]{1,50}$", max_states=20)


def test_compiled_patterns_are_cached():
    """The same pattern returns the same (shared, not to be mutated) automaton."""
    assert pattern_dfa("^[a-z]+-\\d+$") is pattern_dfa("^[a-z]+-\\d+$", "/elsewhere")


@pytest.mark.parametrize("pattern, states", [
    ("^(?:a|a)b$", 3), ("^(?:ab|ab|ab)*$", 2), ("x", 2), ("^[ab]{2}$|^[ab]{2}$", 3), ("", 1),
])
def test_result_is_minimal_and_trimmed(pattern, states):
    """Equivalent states are merged and no state is dead."""
    dfa = pattern_dfa(pattern)
    assert dfa.size == states
    assert isinstance(dfa, CharDFA) and dfa.trimmed().size == dfa.size


@pytest.mark.parametrize("pattern, ecma_only, both", [
    (r"^\s$", ["\ufeff"], [" ", "\u00a0"]), (r"^\S$", ["\x1c", "\x85"], ["a"]), (r"^\D$", ["\u0663"], ["a"]),
    (r"^\W$", ["\u00e9"], ["-"]), (r"^[^\d]$", ["\u0663"], ["a"]), (r"^[^\S]$", ["\ufeff"], [" "]),
    (r"^[^\s]$", ["\x1c"], ["a"]),
])
def test_portable_dialect_drops_scalars_python_re_disagrees_on(pattern, ecma_only, both):
    """`dialect="portable"` rejects the scalars ECMA accepts but Python's `re` rejects, and keeps the rest."""
    portable = pattern_dfa(pattern, dialect="portable")
    for text in ecma_only:
        assert pattern_dfa(pattern).matches(text) and not re.search(pattern, text)
        assert not portable.matches(text)
    assert all(portable.matches(text) for text in both)


PORTABLE_ATOMS = ["a", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", ".", "[^\\s]", "[^a\\d]", "[\\s\\d]", "[^\\W]"]
portable_regexes = st.lists(
    st.tuples(st.sampled_from(PORTABLE_ATOMS), st.sampled_from(["", "*", "+", "?", "{1,2}"])),
    min_size=1, max_size=4,
).map(lambda parts: "".join(a + q for a, q in parts))


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["", "^"]), portable_regexes, st.sampled_from(["", "$"]),
       st.lists(st.text(alphabet="a5_ \x1c\x85\ufeff\u00a0\u0663\u00e9\n\u2028", max_size=5), min_size=1, max_size=6))
def test_portable_dialect_accepts_only_what_both_engines_accept(left, body, right, texts):
    """Every string the portable DFA accepts matches under ECMA semantics and under Python's `re`."""
    pattern = left + body + right
    portable, ecma = pattern_dfa(pattern, dialect="portable"), pattern_dfa(pattern)
    for text in texts:
        if portable.matches(text):
            assert ecma.matches(text) and re.search(pattern, text), (pattern, text)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["", "^"]), portable_regexes, st.sampled_from(["", "$", "$|b"]),
       st.lists(st.text(alphabet="a5 \ufeff\u0663\n\r\u2028", max_size=4), min_size=4, max_size=12))
@example("^", "a", "$", ["a\n"]).via("Python's $ before a final line feed")
@example("", "a.", "", ["a\r"]).via("Python's . on a carriage return")
def test_either_reading_covers_what_either_engine_matches(left, body, right, texts):
    """Every string ECMA-262 or Python's `re` matches a pattern on is in ``either_dfa`` (what a
    ``not`` keeps out): Python's ``.`` and final ``$`` included, a refused reading covered."""
    pattern = left + body + right
    either, ecma = either_dfa(pattern), pattern_dfa(pattern)
    for text in texts:
        if ecma.matches(text) or re.search(pattern, text):
            assert either.matches(text), (pattern, text)


def test_ignore_case_folds_ascii_letters_only():
    """JavaScript's i flag (validators' own format regexes): ASCII letters in either case, in
    literals, classes and negated classes; no other scalar folds into ASCII."""
    dfa = pattern_dfa("^[a-c]x[^d-f]$", ignore_case=True)
    assert dfa.matches("aXz") and dfa.matches("BxG")
    assert not dfa.matches("axD") and not dfa.matches("axd")
    assert not pattern_dfa("^k$", ignore_case=True).matches("\u212a")  # KELVIN SIGN
    assert not pattern_dfa("^[a-c]$").matches("B")


@settings(max_examples=100, deadline=None)
@given(regexes, regexes, st.lists(st.text(alphabet=ALPHABET, max_size=7), min_size=1, max_size=8))
def test_an_intersection_matches_what_both_match(a, b, texts):
    """``chardfa.intersect`` (each pair of rows merged as sorted range lists) keeps exactly the
    strings both automata accept, and so does its complement-based difference, the other way."""
    from compiler import chardfa

    try:
        left, right = pattern_dfa(a[0]), pattern_dfa(b[0])
    except SchemaTooComplex:
        assume(False)
    both, only_left = chardfa.intersect(left, right), chardfa.difference(left, right)
    for text in texts:
        assert both.matches(text) is (left.matches(text) and right.matches(text))
        assert only_left.matches(text) is (left.matches(text) and not right.matches(text))
