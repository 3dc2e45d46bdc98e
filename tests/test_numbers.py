"""Number automata against exact rational arithmetic: the accepted texts are exactly the valid ones
(``portable=False``, the specification's reading); the portable default against validators that
read numbers as doubles."""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.errors import InvalidSchema, SchemaTooComplex, Unsatisfiable
from compiler.numbers import number_dfa as portable_number_dfa

number_dfa = functools.partial(portable_number_dfa, portable=False)

INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")

BOUNDS = ("minimum", "maximum", "exclusive_minimum", "exclusive_maximum")
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- the oracle ----------------------------------------------------------------------------------


def exact(value) -> Fraction:
    """A JSON number's value: a float is the decimal its shortest text says."""
    return Fraction(Decimal(repr(value))) if isinstance(value, float) else Fraction(value)


def valid(text: str, integer: bool, **keywords) -> bool:
    """Whether ``text`` is in the canonical shape and its value meets the keywords (bounds at zero,
    which only ask for a sign, keep the exponent)."""
    constrained = keywords.get("multiple_of") is not None or any(
        v is not None and exact(v) != 0 for k, v in keywords.items() if k != "multiple_of")
    grammar = INTEGER if integer else DECIMAL if constrained else JSON_NUMBER
    if not grammar.fullmatch(text):
        return False
    v = Fraction(Decimal(text))
    lo, hi = keywords.get("minimum"), keywords.get("maximum")
    xlo, xhi = keywords.get("exclusive_minimum"), keywords.get("exclusive_maximum")
    k = keywords.get("multiple_of")
    return (
        (lo is None or v >= exact(lo))
        and (hi is None or v <= exact(hi))
        and (xlo is None or v > exact(xlo))
        and (xhi is None or v < exact(xhi))
        and (k is None or (v / exact(k)).denominator == 1)
    )


def satisfiable(integer: bool, **keywords) -> bool:
    """Whether some value meets the keywords: the smallest candidate above the lower bound fits."""
    def bounds(*keys):
        return [(exact(keywords[k]), k.startswith("exclusive")) for k in keys if keywords.get(k) is not None]

    lows, highs = bounds("minimum", "exclusive_minimum"), bounds("maximum", "exclusive_maximum")
    k = keywords.get("multiple_of")
    step = exact(k) if k is not None else None
    if integer:
        step = Fraction(1) if step is None else Fraction(step.numerator)  # integer multiples of p/q
    if not lows or not highs:
        return True
    lo, lo_strict = max(lows, key=lambda b: (b[0], b[1]))
    hi, hi_strict = min(highs, key=lambda b: (b[0], not b[1]))
    if step is None:
        return lo < hi or (lo == hi and not (lo_strict or hi_strict))
    first = math.ceil(lo / step) * step
    if lo_strict and first == lo:
        first += step
    return first < hi or (first == hi and not hi_strict)


# --- strategies ----------------------------------------------------------------------------------


def decimal_text(value: Fraction, trailing_zeros: int = 0) -> str:
    """The plain decimal text of a value whose denominator is a power of ten."""
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
    scaled = abs(value * 10**places).numerator
    digits = str(scaled).rjust(places + 1, "0")
    integer, fraction = digits[: len(digits) - places], digits[len(digits) - places :]
    fraction += "0" * trailing_zeros
    return ("-" if value < 0 else "") + integer + ("." + fraction if fraction else "")


small_decimals = st.builds(
    lambda n, places: Fraction(n, 10**places), st.integers(-2000, 2000), st.integers(0, 3)
)
# Bounds as json.loads gives them: an int, or a float for a text with a fraction.
json_bounds = small_decimals.map(lambda v: json.loads(decimal_text(v)))

canonical_texts = st.builds(
    lambda sign, whole, fraction, exponent: sign + str(whole) + fraction + exponent,
    st.sampled_from(["", "-"]),
    st.one_of(st.integers(0, 20), st.integers(0, 10**6)),
    st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=5).map(lambda d: "." + d)),
    st.sampled_from(["", "", "", "e5", "E+0", "e-07", "E12"]),
)

MUTATIONS = [
    lambda t: "0" + t,  # leading zero
    lambda t: "+" + t,
    lambda t: "-" + t,  # "--1" when already negative
    lambda t: t + ".",
    lambda t: t.replace("0.", ".", 1),  # ".5"
    lambda t: t + "e5",
    lambda t: t + "E-2",
    lambda t: t + "0",
    lambda t: t[:-1],
    lambda t: t.lstrip("-"),
]


@st.composite
def candidates(draw, keywords: dict) -> list[str]:
    """Random number texts, texts right at and beside the bounds, and near misses of both."""
    texts = draw(st.lists(canonical_texts, min_size=5, max_size=10))
    anchors = [exact(v) for v in keywords.values() if v is not None] + [Fraction(0)]
    for _ in range(draw(st.integers(5, 15))):
        anchor = draw(st.sampled_from(anchors))
        delta = Fraction(draw(st.integers(-30, 30)), 10 ** draw(st.integers(0, 4)))
        k = keywords.get("multiple_of")
        if k is not None and draw(st.booleans()):
            delta = exact(k) * draw(st.integers(-3, 3))
            anchor = exact(k) * round(anchor / exact(k))
        texts.append(decimal_text(anchor + delta, draw(st.integers(0, 2))))
    mutated = [draw(st.sampled_from(MUTATIONS))(t) for t in draw(st.lists(st.sampled_from(texts), max_size=8))]
    return texts + mutated + ["", "-", "--1", "1.", ".5", "+1"]


@st.composite
def constraints(draw, divisors=None) -> dict:
    shared = draw(st.lists(json_bounds, min_size=1, max_size=2))  # so bounds often coincide
    keywords = {key: draw(st.one_of(st.none(), json_bounds, st.sampled_from(shared))) for key in BOUNDS}
    keywords["multiple_of"] = draw(st.sampled_from(divisors)) if divisors else None
    return keywords


# --- checks --------------------------------------------------------------------------------------


def assert_well_formed(dfa) -> None:
    """Deterministic, every state reachable from the start and able to reach acceptance."""
    for row in dfa.edges:
        spans = sorted((lo, hi) for lo, hi, _ in row)
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
    seen, todo = {dfa.start}, [dfa.start]
    while todo:
        for _, _, t in dfa.edges[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert seen == set(range(dfa.size))
    assert dfa.trimmed().size == dfa.size


def assert_agrees(integer: bool, keywords: dict, texts: list[str]) -> None:
    try:
        dfa = number_dfa(integer, **keywords)
    except Unsatisfiable:
        assert not satisfiable(integer, **keywords)
        assert not any(valid(t, integer, **keywords) for t in texts)
        return
    assert satisfiable(integer, **keywords)
    assert_well_formed(dfa)
    for text in texts:
        assert dfa.matches(text) == valid(text, integer, **keywords), text


# --- differential tests --------------------------------------------------------------------------


@SETTINGS
@given(st.booleans(), constraints().flatmap(lambda kw: st.tuples(st.just(kw), candidates(kw))))
def test_bounds_accept_exactly_the_valid_texts(integer, case):
    """Random inclusive, exclusive and one-sided bounds accept exactly the texts exact arithmetic accepts."""
    keywords, texts = case
    assert_agrees(integer, keywords, texts)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.booleans(),
    constraints(divisors=[3, 7, 10, 0.01, 0.5, 2.5, 1, 0.25]).flatmap(
        lambda kw: st.tuples(st.just(kw), candidates(kw))
    ),
)
def test_multiple_of_accepts_exactly_the_multiples(integer, case):
    """multipleOf (integer and decimal divisors, with or without bounds) accepts exactly the multiples."""
    keywords, texts = case
    assert_agrees(integer, keywords, texts)


EXHAUSTIVE_CASES = [
    (True, {}),
    (False, {}),
    (True, {"minimum": -1, "maximum": 10}),
    (False, {"minimum": 0.5}),
    (False, {"exclusive_minimum": -1.05, "exclusive_maximum": 1.5}),
    (False, {"maximum": 0}),
    (True, {"exclusive_minimum": 0}),
    (False, {"minimum": 0.15, "maximum": 0.5}),
    (True, {"multiple_of": 5, "maximum": 100}),
    (False, {"multiple_of": 0.5, "minimum": -10}),
]


@pytest.mark.parametrize("integer, keywords", EXHAUSTIVE_CASES)
def test_every_short_text_is_judged_exactly(integer, keywords):
    """Every text of up to five characters over -.015e is accepted exactly when it is valid."""
    dfa = number_dfa(integer, **keywords)
    assert_well_formed(dfa)
    for size in range(6):
        for chars in itertools.product("-.015e", repeat=size):
            text = "".join(chars)
            assert dfa.matches(text) == valid(text, integer, **keywords), text


# --- shape ---------------------------------------------------------------------------------------


def test_unconstrained_number_allows_exponent():
    """A number without keywords follows the full JSON grammar, exponent included."""
    dfa = number_dfa(False)
    assert all(dfa.matches(t) for t in ["1e5", "-0.5E+3", "0e0", "12.50e-07"])
    assert not any(dfa.matches(t) for t in ["1e", "1.e5", "e5", "1e+", "01", "1E5.0"])


def test_constrained_number_refuses_exponent():
    """A bound away from zero or a multipleOf restricts numbers to plain decimals."""
    for keywords in ({"minimum": 0.5}, {"exclusive_maximum": 1e9}, {"multiple_of": 1}, {"minimum": 0, "maximum": 9}):
        dfa = number_dfa(False, **keywords)
        assert dfa.matches("100") or dfa.matches("1")
        assert not dfa.matches("1e2") and not dfa.matches("1e0")


def test_bounds_at_zero_keep_the_exponent():
    """A bound at zero asks only for a sign, which no exponent changes: MaskBench's ``"minimum": 0``
    numbers come as ``1e-06``."""
    dfa = number_dfa(False, minimum=0)
    assert all(dfa.matches(t) for t in ["1e-06", "2.5E+3", "0e9", "-0.0e-2", "0"])
    assert not any(dfa.matches(t) for t in ["-1e-06", "-2E0", "1e", "1e+"])
    dfa = number_dfa(False, exclusive_minimum=0.0, exclusive_maximum=None)
    assert dfa.matches("3e-300") and not dfa.matches("0e5") and not dfa.matches("-0.0E1")
    dfa = number_dfa(False, maximum=0)
    assert dfa.matches("-1e5") and dfa.matches("0E-1") and not dfa.matches("1e-5")


def test_integer_refuses_fraction_and_exponent():
    """An integer is -?(0|[1-9][0-9]*): no fraction, not even .0, and no exponent."""
    dfa = number_dfa(True)
    assert dfa.matches("-0") and dfa.matches("120")
    assert not any(dfa.matches(t) for t in ["1.0", "1e2", "00", "-", "+1"])


def test_exclusive_bound_wins_a_tie():
    """With minimum and exclusiveMinimum (or the maxima) at the same value, that value is excluded."""
    dfa = number_dfa(True, minimum=3, exclusive_minimum=3, maximum=7, exclusive_maximum=7)
    assert [t for t in map(str, range(10)) if dfa.matches(t)] == ["4", "5", "6"]


def test_tighter_of_two_bounds_applies():
    """Of minimum and exclusiveMinimum (or the maxima), the one that excludes more applies."""
    dfa = number_dfa(True, minimum=2, exclusive_minimum=3, maximum=8, exclusive_maximum=7)
    assert [t for t in map(str, range(10)) if dfa.matches(t)] == ["4", "5", "6"]
    dfa = number_dfa(True, minimum=4, exclusive_minimum=1, maximum=6, exclusive_maximum=9)
    assert [t for t in map(str, range(10)) if dfa.matches(t)] == ["4", "5", "6"]


def test_minus_zero_is_zero():
    """-0 is the value zero: excluded by exclusiveMinimum 0, allowed by maximum 0."""
    assert not number_dfa(True, exclusive_minimum=0).matches("-0")
    assert number_dfa(True, maximum=0).matches("-0")
    assert number_dfa(False, maximum=0).matches("-0.000")


def test_integer_bounds_round_inwards():
    """An integer with minimum 1.5 and maximum 4.5 means 2 to 4."""
    dfa = number_dfa(True, minimum=1.5, maximum=4.5)
    assert [t for t in map(str, range(-1, 7)) if dfa.matches(t)] == ["2", "3", "4"]


def test_float_bounds_are_their_decimal_text():
    """maximum 0.1 is one tenth exactly, not the binary float just above it."""
    dfa = number_dfa(False, maximum=0.1)
    assert dfa.matches("0.1") and dfa.matches("0.1000")
    assert not dfa.matches("0.1000000000000000055511151231257827")


def test_decimal_bounds_are_accepted():
    """Bounds parsed with parse_float=Decimal work like their floats."""
    dfa = number_dfa(False, minimum=Decimal("0.25"), exclusive_maximum=Decimal("1E+1"))
    assert dfa.matches("0.25") and dfa.matches("9.999") and not dfa.matches("10")


def test_huge_bounds_stay_small_and_exact():
    """Bounds of 309 digits give an automaton of a few thousand states at most, exact to the last digit."""
    dfa = number_dfa(False, minimum=-1e308, maximum=1e308)
    assert dfa.size < 3000
    top = "1" + "0" * 308
    assert dfa.matches(top) and dfa.matches("-" + top) and dfa.matches(top + ".000")
    assert dfa.matches("9" * 308) and dfa.matches("-" + "9" * 308 + ".99")
    assert not any(dfa.matches(t) for t in ["9" * 309, top[:-1] + "1", top + ".1", "-" + top + ".01", "1e308"])
    ints = number_dfa(True, exclusive_minimum=-(10**40), maximum=10**40)
    assert ints.matches("1" + "0" * 40) and not ints.matches("-1" + "0" * 40)
    assert ints.matches("-" + "9" * 40) and not ints.matches("1" + "0" * 39 + "1")


def test_multiple_of_decimal_allows_trailing_zeros_only():
    """multipleOf 0.01 accepts at most two significant fraction digits, trailing zeros allowed."""
    dfa = number_dfa(False, multiple_of=0.01)
    assert dfa.matches("1.25") and dfa.matches("1.2500") and dfa.matches("-3")
    assert not dfa.matches("1.251") and not dfa.matches("1.2501")


def test_integer_multiple_of_a_fraction():
    """An integer multiple of 2.5 is a multiple of 5."""
    dfa = number_dfa(True, multiple_of=2.5, minimum=0, maximum=20)
    assert [t for t in map(str, range(-5, 25)) if dfa.matches(t)] == ["0", "5", "10", "15", "20"]


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "integer, keywords, reason",
    [
        (False, {"minimum": 5, "maximum": 3}, "minimum 5 is above maximum 3"),
        (False, {"exclusive_minimum": 3, "maximum": 3}, "exclusiveMinimum 3 and maximum 3 leave no number"),
        (False, {"minimum": 2.5, "exclusive_maximum": 2.5}, "minimum 2.5 and exclusiveMaximum 2.5"),
        (True, {"minimum": 1.5, "maximum": 1.9}, "no integer meets minimum 1.5, maximum 1.9"),
        (True, {"minimum": 1, "maximum": 6, "multiple_of": 7}, "no integer that is a multiple of 7"),
        (False, {"exclusive_minimum": 0, "exclusive_maximum": 0.5, "multiple_of": 0.5}, "multiple of 0.5"),
    ],
)
def test_empty_range_is_unsatisfiable_with_reason(integer, keywords, reason):
    """Crossed bounds, or bounds with no integer or multiple between them, raise Unsatisfiable saying why."""
    with pytest.raises(Unsatisfiable, match=re.escape(reason)) as caught:
        number_dfa(integer, pointer="/properties/n", **keywords)
    assert caught.value.pointer == "/properties/n"


@pytest.mark.parametrize(
    "keywords",
    [
        {"multiple_of": 10007},
        {"multiple_of": 123.457},
        {"multiple_of": 1e300},
        {"multiple_of": 9973, "minimum": 0, "maximum": 10**40},
    ],
)
def test_large_divisor_is_too_complex(keywords):
    """A divisor past 10,000 remainders, or a product past 20,000 states, raises SchemaTooComplex."""
    with pytest.raises(SchemaTooComplex):
        number_dfa(True, pointer="/n", **keywords)


def test_state_limit_is_an_option():
    """max_states bounds the product; exceeding it raises SchemaTooComplex."""
    with pytest.raises(SchemaTooComplex, match="more than 10 states"):
        number_dfa(False, minimum=-123.456, maximum=123.456, max_states=10)


@pytest.mark.parametrize(
    "keywords",
    [
        {"multiple_of": 0},
        {"multiple_of": -2.5},
        {"minimum": float("nan")},
        {"maximum": float("inf")},
        {"exclusive_minimum": "5"},
        {"exclusive_maximum": True},
    ],
)
def test_invalid_keyword_values_are_invalid_schema(keywords):
    """A non-positive multipleOf or a bound that is not a finite number raises InvalidSchema."""
    with pytest.raises(InvalidSchema):
        number_dfa(False, **keywords)


# --- portable: what validators reading doubles accept --------------------------------------------


def double_valid(text: str, integer: bool, **keywords) -> bool:
    """python-jsonschema's reading (and Ajv's): the text parsed as JSON (floats are doubles), the
    bounds compared as floats; numbers past the double range are refused (jsonschema-rs)."""
    value = json.loads(text)
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if integer and not (isinstance(value, int) or value.is_integer()):
        return False
    checks = {"minimum": lambda b: value >= b, "maximum": lambda b: value <= b,
              "exclusive_minimum": lambda b: value > b, "exclusive_maximum": lambda b: value < b}
    return all(checks[k](float(v)) for k, v in keywords.items() if v is not None)


@SETTINGS
@given(st.booleans(), constraints().flatmap(lambda kw: st.tuples(st.just(kw), candidates(kw))))
def test_portable_numbers_read_as_doubles_meet_the_bounds(integer, case):
    """Whatever the portable automaton accepts still meets the bounds once read as a double."""
    keywords, texts = case
    try:
        dfa = portable_number_dfa(integer, **keywords)
    except Unsatisfiable:
        return
    for text in texts:
        if dfa.matches(text):
            assert double_valid(text, integer, **keywords), text


def test_portable_strict_bounds_step_to_the_next_double():
    """Above 1 but read as 1.0: refused by exclusiveMinimum 1 in every validator, so not written;
    the first decimal past the next double is."""
    dfa = portable_number_dfa(False, exclusive_minimum=1, exclusive_maximum=2)
    assert not dfa.matches("1.0000000000000001") and dfa.matches("1.0000000000000003")
    assert not dfa.matches("1.9999999999999999") and dfa.matches("1.9999999999999997")
    assert number_dfa(False, exclusive_minimum=1).matches("1.0000000000000001")  # exact: it is above 1
    assert portable_number_dfa(False, exclusive_minimum=0).matches("1e-99")  # zero asks for a sign only


def test_portable_exponents_stay_in_the_double_range():
    """37e491 is valid JSON but no finite double (jsonschema-rs refuses it, JavaScript reads Infinity)."""
    dfa = portable_number_dfa(False)
    assert dfa.matches("1e99") and dfa.matches("-2.5E-07") and dfa.matches("1e+05")
    assert not dfa.matches("1e100") and not dfa.matches("37e491")
    assert number_dfa(False).matches("37e491")


def test_portable_bounds_with_no_double_between_are_unsatisfiable():
    """No double lies strictly between 1 and the next one."""
    with pytest.raises(Unsatisfiable):
        portable_number_dfa(False, exclusive_minimum=1, exclusive_maximum=1.0000000000000002)
