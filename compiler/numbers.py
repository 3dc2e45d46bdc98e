"""Numeric keywords as exact digit automata: the JSON number texts whose value meets the bounds.

A language model writes a number one digit at a time, so ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum`` and ``multipleOf`` have to be decided on the digits, and
exactly: a mask that lets ``0.49999`` through under ``minimum: 0.5`` breaks the promise that every
accepted text validates. Comparing a canonical decimal text with a constant needs no arithmetic:
without leading zeros a longer integer part is the larger number, equal lengths compare digit by
digit, and the fraction then compares digit by digit against the constant's fraction padded with
zeros. Divisibility is a remainder carried digit by digit. Each keyword therefore becomes a small
automaton read along the text, and the number automaton is their product with the number grammar,
explored from the start state so only reachable combinations are built.

Bounds are exact decimals: a float bound is the value of its JSON text (``0.1`` is one tenth, via
``repr``), never its binary approximation. ``portable`` (the default) keeps to what validators
that read numbers as doubles also accept (python-jsonschema, Ajv; jsonschema-rs refuses numbers
past the double range): a strict bound other than zero becomes the non-strict bound at the
adjacent double (``1.0000000000000001`` is above 1 but reads as 1.0, which ``exclusiveMinimum: 1``
refuses), and an exponent has at most two digits (``37e491`` is no finite double). Constrained numbers are written without an exponent
(``1e2`` is refused where a bound or ``multipleOf`` applies): with an exponent, the digit count no
longer says how large a number is, and the language is not even regular (``0.0…01e+k`` is at least
1 exactly when k exceeds the number of zeros). Bounds at zero are the exception: they only ask for
a sign, which the exponent never changes, so ``minimum: 0`` keeps ``1e-06``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Hashable, Protocol

from compiler.chardfa import CharDFA
from compiler.errors import InvalidSchema, SchemaTooComplex, Unsatisfiable

MAX_DIVISOR = 10_000
MAX_STATES = 20_000

_DIGITS = "0123456789"
_ALPHABET = "+-.0123456789Ee"  # in code point order, so equal targets merge into ranges


_BUILT: dict[tuple, CharDFA] = {}  # a number automaton depends on its keywords alone: made once per process
_BUILT_MAX = 1024


def number_dfa(integer: bool, minimum=None, maximum=None, exclusive_minimum=None, exclusive_maximum=None,
               multiple_of=None, pointer: str = "", max_states: int = MAX_STATES, portable: bool = True) -> CharDFA:
    """``_number_dfa``, kept per process by its keywords (typed: ``1`` and ``1.0`` differ in error
    wording); a keyword set that fails is not kept, so its error names each schema's own pointer."""
    bounds = (minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of)
    key = (integer, max_states, portable, *((type(v).__name__, v) for v in bounds))
    try:
        dfa = _BUILT.get(key)
    except TypeError:  # a bound that is no number: _number_dfa words the error
        return _number_dfa(integer, *bounds, pointer=pointer, max_states=max_states, portable=portable)
    if dfa is None:
        dfa = _number_dfa(integer, *bounds, pointer=pointer, max_states=max_states, portable=portable)
        if len(_BUILT) >= _BUILT_MAX:
            _BUILT.pop(next(iter(_BUILT)))
        _BUILT[key] = dfa = dfa.frozen()
    return dfa


def _number_dfa(
    integer: bool,
    minimum=None,
    maximum=None,
    exclusive_minimum=None,
    exclusive_maximum=None,
    multiple_of=None,
    pointer: str = "",
    max_states: int = MAX_STATES,
    portable: bool = True,
) -> CharDFA:
    """The trimmed automaton of the number texts (``integer`` or any number) meeting the keywords.

    Unconstrained numbers follow the full JSON grammar (an integer never has a fraction or an
    exponent; ``-0`` is the integer 0). With any bound or ``multipleOf`` the texts are plain
    decimals, any number of fraction digits, trailing zeros allowed. Raises ``InvalidSchema`` for a
    bound that is not a finite number or a ``multipleOf`` that is not positive, ``Unsatisfiable``
    when no number meets the keywords, and ``SchemaTooComplex`` past ``MAX_DIVISOR`` or
    ``max_states``.
    """
    lows = _limits(pointer, ("minimum", minimum, False), ("exclusiveMinimum", exclusive_minimum, True))
    highs = _limits(pointer, ("maximum", maximum, False), ("exclusiveMaximum", exclusive_maximum, True))
    lower = _tightest(lows, lower=True)
    upper = _tightest(highs, lower=False)
    _check_interval(lower, upper, pointer)
    limits = lows + highs
    if portable:
        lower, upper = _as_double(lower, lower=True), _as_double(upper, lower=False)
        _check_interval(lower, upper, pointer)

    constrained = any(lim.value != 0 for lim in limits) or multiple_of is not None
    exponent = not (integer or constrained)
    components: list[_Component] = [_Grammar(fraction=not integer, exponent=exponent,
                                             exponent_digits=2 if portable else None)]
    if lower is not None:
        components.append(_Compare(lower.value, {1} if lower.strict else {0, 1}))
    if upper is not None:
        components.append(_Compare(upper.value, {-1} if upper.strict else {-1, 0}))
    if multiple_of is not None:
        components.append(_Multiple(_divisor(multiple_of, pointer), pointer))

    dfa = _intersect(components, max_states, pointer).trimmed()
    if not dfa.accepting:
        kind = "integer" if integer else "number"
        if multiple_of is not None:
            kind += f" that is a multiple of {_show(multiple_of)}"
        meets = ", ".join(f"{lim.keyword} {_show(lim.given)}" for lim in limits)
        raise Unsatisfiable(pointer, f"no {kind} meets {meets}")
    return dfa


# --- the keywords' values --------------------------------------------------------------------


@dataclass(frozen=True)
class _Limit:
    """One bound keyword: its exact value, whether it excludes that value, and what the schema said."""

    keyword: str
    value: Decimal
    strict: bool
    given: object


def _limits(pointer: str, *given: tuple[str, object, bool]) -> list[_Limit]:
    """The bounds the schema gives, as ``(keyword, value, strict)``, made exact."""
    return [
        _Limit(keyword, _exact(value, keyword, pointer), strict, value)
        for keyword, value, strict in given
        if value is not None
    ]


def _exact(value, keyword: str, pointer: str) -> Decimal:
    """The exact decimal a JSON number denotes; a float is read back from its shortest text."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise InvalidSchema(pointer, f"{keyword} must be a number, not {value!r}")
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if not number.is_finite():
        raise InvalidSchema(pointer, f"{keyword} must be a finite number, not {value!r}")
    return number


def _tightest(limits: list[_Limit], lower: bool) -> _Limit | None:
    """The bound that implies the others on one side; at equal values the exclusive one."""
    if not limits:
        return None
    if lower:
        return max(limits, key=lambda lim: (lim.value, lim.strict))
    return min(limits, key=lambda lim: (lim.value, not lim.strict))


def _as_double(limit: _Limit | None, lower: bool) -> _Limit | None:
    """A strict bound other than zero as the non-strict bound at the next double beyond it: a
    number that reads as a double at least that far passes the strict bound in every validator."""
    if limit is None or not limit.strict or limit.value == 0:
        return limit
    beyond = math.nextafter(float(limit.value), math.inf if lower else -math.inf)
    return _Limit(limit.keyword, Decimal(beyond), False, limit.given)


def _check_interval(lower: _Limit | None, upper: _Limit | None, pointer: str) -> None:
    """Refuse crossed bounds with the keywords' own words, before building anything."""
    if lower is None or upper is None:
        return
    low = f"{lower.keyword} {_show(lower.given)}"
    high = f"{upper.keyword} {_show(upper.given)}"
    if lower.value > upper.value:
        raise Unsatisfiable(pointer, f"{low} is above {high}")
    if lower.value == upper.value and (lower.strict or upper.strict):
        raise Unsatisfiable(pointer, f"{low} and {high} leave no number between them")


def common_multiple(steps: tuple):
    """The least number that each of ``steps`` (a meet's ``multipleOf``s) divides, exactly as
    decimals (None for none): numerators' least common multiple over denominators' greatest common
    divisor, a power of ten's divisor, so the decimal ends."""
    if len(steps) < 2:
        return steps[0] if steps else None
    parts = [Fraction(_exact(step, "multipleOf", "")) for step in steps]
    top, bottom = math.lcm(*(p.numerator for p in parts)), math.gcd(*(p.denominator for p in parts))
    places = 0
    while 10**places % bottom:
        places += 1
    return Decimal(f"{top * 10**places // bottom}e-{places}")  # (read from text: exact at any length)


def _divisor(multiple_of, pointer: str) -> Decimal:
    k = _exact(multiple_of, "multipleOf", pointer)
    if k <= 0:
        raise InvalidSchema(pointer, f"multipleOf must be positive, not {_show(multiple_of)}")
    return k


def _show(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


# --- components: automata read side by side along the text ------------------------------------


class _Component(Protocol):
    """A deterministic automaton given by its step function; ``None`` means the text is refused.

    A component only has to be right on texts of the number grammar: the grammar is itself a
    component of every product, so what the others do with ``--1`` or ``01`` never matters.
    """

    start: Hashable

    def step(self, state: Hashable, ch: str) -> Hashable | None: ...

    def accepts(self, state: Hashable) -> bool: ...


class _Grammar:
    """``-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?``, the optional parts when allowed."""

    start = "start"

    def __init__(self, fraction: bool, exponent: bool, exponent_digits: int | None = None):
        nonzero = dict.fromkeys("123456789", "int")
        table = {
            "start": {"-": "sign", "0": "zero", **nonzero},
            "sign": {"0": "zero", **nonzero},
            "zero": {},
            "int": dict.fromkeys(_DIGITS, "int"),
        }
        if fraction:
            table["zero"]["."] = table["int"]["."] = "point"
            table["point"] = dict.fromkeys(_DIGITS, "frac")
            table["frac"] = dict.fromkeys(_DIGITS, "frac")
        if exponent:
            for state in ("zero", "int", "frac"):
                table[state].update(dict.fromkeys("eE", "e"))
            table["e"] = {"+": "esign", "-": "esign", **dict.fromkeys(_DIGITS, "exp")}
            table["esign"] = dict.fromkeys(_DIGITS, "exp")
            if exponent_digits is None:
                table["exp"] = dict.fromkeys(_DIGITS, "exp")
            else:  # "exp" after one digit, then "exp2", ... each a digit more
                names = ["exp"] + [f"exp{k}" for k in range(2, exponent_digits + 1)]
                for here, there in zip(names, names[1:] + [None]):
                    table[here] = {} if there is None else dict.fromkeys(_DIGITS, there)
                self.exponent_ends = frozenset(names)
        self.table = table

    def step(self, state, ch):
        return self.table[state].get(ch)

    exponent_ends = frozenset({"exp"})

    def accepts(self, state):
        return state in ("zero", "int", "frac") or state in self.exponent_ends


class _Compare:
    """Whether the value v compares with the constant c as wanted: ``cmp(v, c) in wanted``.

    States are ``(sign, magnitude state)``; a negative text compares its magnitude with -c and flips
    the outcome. Magnitude states: ``("int", i, rel)`` after i integer digits, ``rel`` comparing them
    with the first i digits of the target; ``("frac", j)`` with the integer part equal and j fraction
    digits equal to the target's; ``("decided", r)`` once further digits cannot change the outcome.
    """

    start = "start"

    def __init__(self, c: Decimal, wanted: set[int]):
        self.wanted = frozenset(wanted)
        self.targets = {1: _Digits.of(c), -1: _Digits.of(c.copy_negate())}

    def _begin(self, sign: int):
        # A magnitude is never negative, so it is above a negative target whatever its digits.
        return (sign, ("int", 0, 0) if self.targets[sign] is not None else ("decided", 1))

    def step(self, state, ch):
        if state == "start":
            return self._begin(-1) if ch == "-" else self.step(self._begin(1), ch)
        sign, magnitude = state
        if magnitude[0] == "exponent":  # only reached for a target of zero: the sign is settled
            return state
        if ch in "eE":  # the grammar allows an exponent only when every bound is zero
            return (sign, ("exponent", magnitude))
        after = _magnitude_step(self.targets[sign], magnitude, ch)
        return None if after is None else (sign, after)

    def accepts(self, state):
        if state == "start":
            return False
        sign, magnitude = state
        if magnitude[0] == "exponent":
            magnitude = magnitude[1]
        return sign * _magnitude_outcome(self.targets[sign], magnitude) in self.wanted


@dataclass(frozen=True)
class _Digits:
    """A non-negative decimal as the texts the comparison reads: integer digits, fraction digits."""

    integer: str  # no leading zero; "0" below one
    fraction: str  # no trailing zero

    @classmethod
    def of(cls, value: Decimal) -> "_Digits | None":
        if value < 0:
            return None
        integer, _, fraction = format(value.copy_abs(), "f").partition(".")
        return cls(integer, fraction.rstrip("0"))


def _cmp(a: str, b: str) -> int:
    return (a > b) - (a < b)


def _magnitude_step(target: _Digits | None, state, ch: str):
    kind = state[0]
    if kind == "decided":
        return state if ch in _DIGITS or ch == "." else None
    if kind == "int":
        _, i, rel = state
        n = len(target.integer)
        if ch in _DIGITS:
            if i == n:  # a longer integer part (no leading zeros) is a larger number
                return ("decided", 1)
            return ("int", i + 1, rel or _cmp(ch, target.integer[i]))
        if ch == ".":
            if i < n:
                return ("decided", -1)
            return ("decided", rel) if rel else ("frac", 0)
        return None
    _, j = state
    if ch not in _DIGITS:
        return None
    digits = target.fraction
    rel = _cmp(ch, digits[j] if j < len(digits) else "0")
    return ("decided", rel) if rel else ("frac", min(j + 1, len(digits)))


def _magnitude_outcome(target: _Digits | None, state) -> int:
    """How the magnitude read so far compares with the target if the text ends here."""
    kind = state[0]
    if kind == "decided":
        return state[1]
    if kind == "int":
        _, i, rel = state
        if i < len(target.integer):
            return -1
        return rel or (-1 if target.fraction else 0)
    # The target's fraction has no trailing zero: digits left over mean it is larger.
    return -1 if state[1] < len(target.fraction) else 0


class _Multiple:
    """Whether v is a multiple of k = K / 10**places (K an integer not divisible by ten, or places 0).

    v / k is an integer exactly when v * 10**places is an integer (no nonzero fraction digit past
    ``places``) divisible by K. States carry the remainder of the digits read so far modulo K:
    ``("int", r)`` in the integer part, ``("frac", r, j)`` after j fraction digits; ending there
    leaves the scaled value ``r * 10**(places - j)`` modulo K.
    """

    start = "start"

    def __init__(self, k: Decimal, pointer: str):
        _, digits, exponent = k.as_tuple()
        digits = list(digits)
        while digits[-1] == 0:
            digits.pop()
            exponent += 1
        if len(digits) + max(exponent, 0) > len(str(MAX_DIVISOR)):
            raise SchemaTooComplex(pointer, f"multipleOf {k} needs more than {MAX_DIVISOR} remainders")
        scaled = int("".join(map(str, digits))) * 10 ** max(exponent, 0)
        if scaled > MAX_DIVISOR:
            raise SchemaTooComplex(pointer, f"multipleOf {k} needs {scaled} remainders (limit {MAX_DIVISOR})")
        self.divisor = scaled
        self.places = max(-exponent, 0)

    def step(self, state, ch):
        if state == "start":
            return ("int", 0) if ch == "-" else self.step(("int", 0), ch)
        if ch == ".":
            return ("frac", state[1], 0) if state[0] == "int" else None
        if ch not in _DIGITS:
            return None
        remainder = (10 * state[1] + int(ch)) % self.divisor
        if state[0] == "int":
            return ("int", remainder)
        _, r, j = state
        if j < self.places:
            return ("frac", remainder, j + 1)
        return state if ch == "0" else None

    def accepts(self, state):
        if state == "start":
            return False
        read = state[2] if state[0] == "frac" else 0
        return state[1] * pow(10, self.places - read, self.divisor) % self.divisor == 0


# --- the product ---------------------------------------------------------------------------------


def _intersect(components: list[_Component], max_states: int, pointer: str) -> CharDFA:
    """The reachable part of the components' product: a text is accepted when all accept it."""
    start = tuple(c.start for c in components)
    index = {start: 0}
    order = [start]
    edges: list[list[tuple[int, int, int]]] = []
    for state in order:  # grows while we walk it: breadth-first exploration
        row = []
        for ch in _ALPHABET:
            after = _step_all(components, state, ch)
            if after is None:
                continue
            if after not in index:
                if len(order) >= max_states:
                    raise SchemaTooComplex(pointer, f"the number automaton needs more than {max_states} states")
                index[after] = len(order)
                order.append(after)
            row.append((ord(ch), index[after]))
        edges.append(_ranges(row))
    accepting = {
        i for i, state in enumerate(order) if all(c.accepts(s) for c, s in zip(components, state))
    }
    return CharDFA(0, edges, accepting)


def _step_all(components: list[_Component], state: tuple, ch: str) -> tuple | None:
    after = []
    for component, s in zip(components, state):
        t = component.step(s, ch)
        if t is None:
            return None
        after.append(t)
    return tuple(after)


def _ranges(row: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Merge edges on consecutive code points with the same target into one range."""
    merged: list[tuple[int, int, int]] = []
    for code, target in row:
        if merged and merged[-1][1] == code - 1 and merged[-1][2] == target:
            merged[-1] = (merged[-1][0], code, target)
        else:
            merged.append((code, code, target))
    return merged
