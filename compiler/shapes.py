"""Equal subschemas share one fragment: a number per distinct node content.

Large schemas repeat themselves (128 of detekt's 267 rule objects are ``{"type": "object",
"allOf": [{"$ref": "#/$defs/ruleProperties"}]}``); lowered once, every place that uses one calls the
same fragment, so the program is smaller (4% fewer states over MaskBench's dev sample). The content
is the node's (``ir.Node``: what its schema says, read once by ``build``), so annotations, unknown
keywords and ``$defs`` never count and no keyword table is needed here. A ``$ref`` counts by its
text (its target is not followed): only sound while no subschema sets its own base URI, which the
caller checks. Each node is numbered once, by recursion for the first ``NESTED_MAX`` levels (a
third cheaper than an explicit stack) and by a walk past them, so a deeply nested schema costs
neither stack nor quadratic time.
"""

from __future__ import annotations

from .ir import NEVER, ArrayRules, Node, NumberRules, ObjectRules, StringRules, said

_FACETS = frozenset((StringRules, NumberRules, ObjectRules, ArrayRules))
_CONTAINERS = frozenset((Node, dict, list, tuple))  # numbered by their parts (``type`` exactly: a `_Flat` is a leaf)
_SCALARS = frozenset((str, int, float, bool, type(None)))
_NODES = frozenset((Node,))


NESTED_MAX = 200  # levels ``Shapes._nested`` recurses before the walk takes over


class _Deep(Exception):
    pass


class Shapes:
    def __init__(self):
        self._numbers: dict[tuple, int] = {}
        self._memo: dict[int, int] = {}  # id of a node, facet or container -> number
        self._keep: list = []  # what was numbered, kept alive so that ids stay theirs

    def of(self, node: Node) -> int:
        """The number of ``node``'s content (equal for equal contents). Nothing in a node holds
        itself but through a ``$ref`` (``refs.py`` refuses a schema object that holds itself)."""
        memo = self._memo
        found = memo.get(id(node))
        if found is not None:
            return found
        try:
            return self._nested(node, 0)
        except _Deep:  # the walk below, each part once, off the stack
            pass
        stack: list = [[node, None]]  # part, its parts once read
        while stack:
            item = stack[-1]
            part, parts = item
            if id(part) in memo:
                stack.pop()
                continue
            if parts is None:
                parts = item[1] = _parts(part)
                pending = [[c, None] for _, c in parts if type(c) in _CONTAINERS and id(c) not in memo]
                if pending:
                    stack.extend(pending)
                    continue
            stack.pop()
            memo[id(part)] = self._number((type(part).__name__, tuple(
                (label, memo[id(c)] if type(c) in _CONTAINERS else _leaf(c)) for label, c in parts)))
            self._keep.append(part)
        return memo[id(node)]

    def _nested(self, part, depth: int) -> int:
        """``of`` recursively: the usual schema is shallow, and a call per part is cheaper than the
        explicit stack; past ``NESTED_MAX`` levels the caller walks instead."""
        found = self._memo.get(id(part))
        if found is not None:
            return found
        if depth > NESTED_MAX:
            raise _Deep
        nested = self._nested
        values = tuple([(label, nested(c, depth + 1) if type(c) in _CONTAINERS else _leaf(c))
                        for label, c in _parts(part)])
        number = self._memo[id(part)] = self._number((type(part).__name__, values))
        self._keep.append(part)
        return number

    def _number(self, content: tuple) -> int:
        return self._numbers.setdefault(content, len(self._numbers))


def _leaf(value) -> tuple:
    if type(value) is _Flat:
        return ("list", tuple(map(type, value)), tuple(value))
    return (type(value).__name__, value)  # True, 1 and 1.0 stay apart


def _parts(part) -> list[tuple[object, object]]:
    """What the content of ``part`` is made of, as (label, value): a node's fields that say
    something, its facets' and their maps and lists of nodes spread in (made for this node alone,
    numbering them apart would only cost), a map's entries in their order (a ``properties`` order is
    the order written), a list's items."""
    if isinstance(part, (list, tuple)):
        return list(enumerate(part))
    if isinstance(part, dict):
        return list(part.items())
    if part is NEVER:
        return [("never", True)]
    out = []
    for field, value in sorted(said(part).items()):
        if type(value) in _FACETS:
            for inner, x in sorted(said(value).items()):
                _spread((field, inner), x, out)
        else:
            _spread((field,), value, out)
    return out


def _spread(label: tuple, value, out: list) -> None:
    """``value`` under ``label``; a map or list of nodes entry by entry (an empty one is a leaf: an
    empty ``enum`` or ``anyOf`` allows nothing, unlike none)."""
    kind = type(value)
    if kind is dict and value and _NODES.issuperset(map(type, value.values())):
        out += [(label + (key,), v) for key, v in value.items()]
    elif kind is list and value and _NODES.issuperset(map(type, value)):
        out += [(label + (i,), v) for i, v in enumerate(value)]
    elif (kind is list or kind is tuple) and _SCALARS.issuperset(map(type, value)):
        out.append((label, _Flat(value)))  # (types, required, patterns, most enums: one leaf)
    else:
        out.append((label, value))


class _Flat(tuple):
    """A list of scalars counted as one leaf (``_leaf`` keeps their types: ``1`` and ``True`` apart)."""
