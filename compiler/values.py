"""JSON values as JSON Schema sees them: their type, their equality, a number's exact value."""

from __future__ import annotations

import math
from decimal import Decimal


def is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def finite_number(x) -> bool:
    return is_number(x) and math.isfinite(x)


def decimal_of(x) -> Decimal:
    """The exact value of the decimal text number ``x`` serialises to (``json.dumps`` writes ``repr``)."""
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))


def non_negative_int(value) -> bool:
    """JSON Schema counts: non-negative integers, where 2.0 is an integer (draft 6 on)."""
    if isinstance(value, bool):
        return False
    return (isinstance(value, int) and value >= 0) or (isinstance(value, float) and value.is_integer() and value >= 0)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_equal(a, b) -> bool:
    """JSON equality, for instances and for the values inside schemas alike: ``true != 1``,
    ``1 == 1.0``, numbers as the decimal text they serialise to, objects unordered, strings by
    scalar; iterative, so a deep value cannot exhaust the recursion limit."""
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        if type(a) is type(b) and type(a) in _SCALARS:  # most comparisons: Python's equality is JSON's
            if a != b:
                return False
        elif isinstance(a, bool) or isinstance(b, bool):
            return False  # a boolean and something else
        elif is_number(a) and is_number(b):
            if decimal_of(a) != decimal_of(b):
                return False
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b))
        elif isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            stack.extend((a[k], b[k]) for k in a)
        elif type(a) is not type(b) or a != b:
            return False
    return True


def json_in(value, values) -> bool:
    """Whether ``value`` equals one of ``values`` as JSON compares them."""
    return any(json_equal(value, v) for v in values)


def json_type(x) -> str | None:
    """The JSON type of a Python value (``integer`` for an int, None for what JSON cannot write)."""
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, int):
        return "integer"
    if isinstance(x, float):
        return "number" if math.isfinite(x) else None
    if isinstance(x, str):
        return "string"
    if isinstance(x, (list, tuple)):
        return "array"
    if isinstance(x, dict):
        return "object"
    return None


MAX_DEPTH = 1000
"""How deep a value may nest: an instance ``validate`` reads, a value a schema holds (``enum``, ``const``)."""


def json_problems(value):
    """Yields ``(linked path, what is wrong, whether it is only nested too deep)`` for each part of
    ``value`` JSON cannot hold (a set, NaN, a key that is no string) or that nests past
    `MAX_DEPTH`; iterative, so a deep value cannot exhaust the recursion limit."""
    stack = [(value, None, 0)]
    while stack:
        x, path, depth = stack.pop()
        kind = json_type(x)
        if kind is None:
            yield path, f"not a JSON value ({repr(x) if isinstance(x, float) else type(x).__name__})", False
        elif kind in ("array", "object"):
            if depth + 1 > MAX_DEPTH:
                yield path, f"nested deeper than {MAX_DEPTH} levels", True
            elif kind == "array":
                stack.extend((v, (path, (i,)), depth + 1) for i, v in enumerate(x))
            else:
                for k, v in x.items():
                    if isinstance(k, str):
                        stack.append((v, (path, (k,)), depth + 1))
                    else:
                        yield path, f"object key {k!r} is not a string", False


def has_type(x, kind: str, actual: str) -> bool:
    if kind == "number":
        return actual in ("number", "integer")
    return kind == actual  # 1.0 is not an integer: the grammar writes integers without a fraction
