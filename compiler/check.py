"""Each keyword's value checked and worded once, for ``compile`` and ``validate`` alike.

A schema is checked whole before it is lowered or used to validate: every subschema reachable from
the root (through ``$ref`` too), whether or not the lowering would read the keyword there, so that
a schema ``validate`` refuses is one ``compile`` refuses, with the same words and pointer.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from .errors import InvalidSchema, UnsupportedKeyword
from .keywords import TYPES, UNSUPPORTED, refused
from .refs import SchemaDocument, child, pointer_of

COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains",
          "maxContains")
BOUNDS = ("minimum", "maximum", "multipleOf")
SCHEMA_KINDS = (dict, bool)
SINGLE = ("additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames",
          "unevaluatedProperties", "unevaluatedItems")
LISTS = ("allOf", "anyOf", "oneOf")
DEPENDENT = ("dependentRequired", "dependentSchemas", "dependencies")
NUMERIC = frozenset(COUNTS + BOUNDS + ("exclusiveMinimum", "exclusiveMaximum"))
SUBSCHEMA_KEYS = frozenset(("properties", "patternProperties", "items", "prefixItems") + SINGLE + LISTS + DEPENDENT)


def is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def decimal_of(x) -> Decimal:
    """The exact value of the decimal text number ``x`` serialises to (``json.dumps`` writes ``repr``)."""
    return Decimal(x) if isinstance(x, int) else Decimal(repr(x))


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


def numeric_bounds(rules: dict) -> tuple:
    """``minimum``, ``maximum``, ``exclusiveMinimum`` and ``exclusiveMaximum`` (None where absent),
    draft 4's boolean flags moved onto their bound: ``{"minimum": 5, "exclusiveMinimum": true}`` is
    an exclusive minimum of 5, for the lowering and for validate alike."""
    lo, hi = rules.get("minimum"), rules.get("maximum")
    xlo, xhi = rules.get("exclusiveMinimum"), rules.get("exclusiveMaximum")
    if isinstance(xlo, bool):
        xlo, lo = (lo, None) if xlo else (None, lo)
    if isinstance(xhi, bool):
        xhi, hi = (hi, None) if xhi else (None, hi)
    return lo, hi, xlo, xhi


def non_negative_int(value) -> bool:
    """JSON Schema counts: non-negative integers, where 2.0 is an integer (draft 6 on)."""
    if isinstance(value, bool):
        return False
    return (isinstance(value, int) and value >= 0) or (isinstance(value, float) and value.is_integer() and value >= 0)


def check_node(node: dict, where: Callable[[], str], via: tuple = ()) -> list[tuple[tuple, object]]:
    """Refuse a keyword we cannot enforce or one whose value has the wrong shape; return the
    node's subschemas as ``(pointer segments, subschema)`` (not its ``$ref`` target). ``where`` gives
    the node's pointer (called only to word an error or a child's place)."""

    def invalid(key, reason):
        return InvalidSchema(child(where(), key), reason, via)

    if not UNSUPPORTED.isdisjoint(node):
        for key, value in node.items():
            if refused(key, value):
                raise UnsupportedKeyword(child(where(), key), key, via=via)
    kinds = node.get("type")
    if kinds is not None:
        listed = kinds if isinstance(kinds, list) else [kinds]
        if not listed or any(not isinstance(k, str) or k not in TYPES for k in listed):
            raise invalid("type", f"unknown type {kinds!r}")
    if "enum" in node and not isinstance(node["enum"], list):
        raise invalid("enum", "enum must be an array")
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise invalid("required", "required must be an array of strings")
    if not NUMERIC.isdisjoint(node):  # (most schemas have none: one set operation instead of the loops)
        for key in COUNTS:
            if key in node and not non_negative_int(node[key]):
                raise invalid(key, f"{key} must be a non-negative integer")
        for key in BOUNDS:
            if key in node and not is_number(node[key]):
                raise invalid(key, f"{key} must be a number")
        if "multipleOf" in node and node["multipleOf"] <= 0:
            raise invalid("multipleOf", "multipleOf must be greater than 0")
        for key in ("exclusiveMinimum", "exclusiveMaximum"):
            if key in node and not (is_number(node[key]) or isinstance(node[key], bool)):
                raise invalid(key, f"{key} must be a number")
    for key in ("pattern", "format", "$ref"):
        if key in node and not isinstance(node[key], str):
            raise invalid(key, f"{key} must be a string")
    found: list[tuple[str, object]] = []
    if SUBSCHEMA_KEYS.isdisjoint(node):  # a leaf
        return found

    def sub(segments: tuple, value) -> None:
        if not isinstance(value, SCHEMA_KINDS):
            raise InvalidSchema(child(where(), *segments), "a schema must be an object or a boolean", via)
        found.append((segments, value))

    for key in ("properties", "patternProperties"):
        if key in node:
            if not isinstance(node[key], dict):
                raise invalid(key, f"{key} must be an object")
            for name, value in node[key].items():
                sub((key, name), value)
    for key in SINGLE:
        if key in node:
            sub((key,), node[key])
    for key in DEPENDENT:
        if key in node:
            if not isinstance(node[key], dict):
                raise invalid(key, f"{key} must be an object")
            for name, need in node[key].items():
                if isinstance(need, list) and key != "dependentSchemas":
                    if not all(isinstance(r, str) for r in need):
                        raise invalid(key, f"{key} lists must hold property names")
                elif key != "dependentRequired":
                    sub((key, name), need)
                else:
                    raise invalid(key, "dependentRequired values must be arrays of names")
    if "items" in node:
        if isinstance(node["items"], list):
            for i, value in enumerate(node["items"]):
                sub(("items", i), value)
        else:
            sub(("items",), node["items"])
    for key in ("prefixItems", *LISTS):
        if key in node:
            if not isinstance(node[key], list) or (key != "prefixItems" and not node[key]):
                raise invalid(key, f"{key} must be a non-empty array")
            for i, value in enumerate(node[key]):
                sub((key, i), value)
    return found


def check_document(doc: SchemaDocument, root=None, visit=None) -> tuple[dict[int, tuple], dict[int, object]]:
    """``check_node`` on every subschema reachable from ``root`` (the document's by default),
    ``$ref`` targets included; returns what was reached (``id`` -> ``(node, linked path, via)``) and
    each ``$ref`` holder's target (by the holder's ``id``). ``visit(holder, node, where, path, via)``
    (the validator's) does more per node and may return more children, as ``(subschema, linked
    path, via)``. Paths are linked (``refs.pointer_of``) and spelled out only where needed: a schema
    nested 10,000 deep must not cost the square of its depth."""
    reached: dict[int, tuple] = {}
    refs: dict[int, object] = {}
    stack: list[tuple[object, object, tuple]] = [(doc.root if root is None else root, None, ())]
    while stack:
        holder, path, via = stack.pop()
        if not isinstance(holder, dict) or id(holder) in reached:
            continue
        reached[id(holder)] = (holder, path, via)
        node = doc.without_ref_siblings(holder)
        pointer = None

        def where(path=path):
            nonlocal pointer
            if pointer is None:
                pointer = pointer_of(path)
            return pointer

        children = [(value, (path, suffix), via) for suffix, value in check_node(node, where, via)]
        if visit is not None:
            children += visit(holder, node, where, path, via)
        if "$ref" in node:
            ref = node["$ref"]
            target_pointer, target = doc.resolve(ref, where(), via)
            refs[id(holder)] = target
            children.append((target, (None, target_pointer) if target_pointer else None, via + (ref,)))
        stack.extend(reversed(children))
    return reached, refs
