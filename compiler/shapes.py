"""Equal subschemas share one fragment: a number per distinct schema content.

Large schemas repeat themselves (128 of detekt's 267 rule objects are ``{"type": "object",
"allOf": [{"$ref": "#/$defs/ruleProperties"}]}``); lowered once, every place that uses one calls the
same fragment, so the program is smaller (4% fewer states over MaskBench's dev sample). Annotations and unknown keywords do not count, nor do
``$defs`` (reached only through a ``$ref``, which names them by pointer). Only sound while no
subschema sets its own base URI; the caller checks that. Each node is numbered once, by recursion
for the first ``NESTED_MAX`` levels (a third cheaper than an explicit stack) and by a walk past them,
so a deeply nested schema costs neither stack nor quadratic time.
"""

from __future__ import annotations

from .keywords import ANNOTATIONS, MARKERS, ONE_SCHEMA, SCHEMA_LISTS, SCHEMA_MAPS, VOCABULARY

SCHEMA, MAP, LIST, DATA = range(4)  # what a JSON value stands for where it is met
_CONTAINERS = (dict, list, tuple)
_IGNORED = ANNOTATIONS | {"$defs", "definitions", "$comment", "$schema", "$anchor"}
_COUNTED = (VOCABULARY | MARKERS) - _IGNORED  # the keywords a schema's content is made of


NESTED_MAX = 200  # levels ``Shapes._nested`` recurses before the walk takes over


class _Deep(Exception):
    pass


class _ContainsItself(Exception):
    pass


class Shapes:
    def __init__(self):
        self._numbers: dict[tuple, int] = {}
        self._memo: dict[tuple[int, int], int] = {}  # (id of a dict or list, kind) -> number
        self._keep: list = []  # the nodes numbered, kept alive so that their ids stay theirs

    def of(self, schema) -> int | None:
        """The number of ``schema``'s content (equal for equal contents); None for a value that
        contains itself."""
        if not isinstance(schema, _CONTAINERS):
            return self._number(self._leaf(schema, SCHEMA))
        memo = self._memo
        found = memo.get((id(schema), SCHEMA))
        if found is not None:
            return found
        try:
            return self._nested(schema, SCHEMA, set(), 0)
        except _Deep:  # the walk below, each node once, off the stack
            pass
        except _ContainsItself:
            return None
        busy: set[tuple[int, int]] = set()
        stack: list = [[schema, SCHEMA, None]]  # node, what it stands for, its parts once read
        while stack:
            item = stack[-1]
            node, kind, parts = item
            key = (id(node), kind)
            if key in memo:
                stack.pop()
                continue
            if parts is None:
                parts = item[2] = self._parts(node, kind)
            pending = [[c, k, None] for _, c, k in parts if isinstance(c, _CONTAINERS) and (id(c), k) not in memo]
            if pending and key not in busy:
                busy.add(key)
                stack.extend(pending)
                continue
            if pending:
                return None  # it contains itself (only a Python object can)
            stack.pop()
            busy.discard(key)
            memo[key] = self._number(self._content(node, kind, parts))
            self._keep.append(node)
        return memo[(id(schema), SCHEMA)]

    def _nested(self, node, kind: int, busy: set, depth: int) -> int:
        """``of`` for a node, recursively: the usual schema is shallow, and a call per node is
        cheaper than the explicit stack; past ``NESTED_MAX`` levels the caller walks instead."""
        key = (id(node), kind)
        found = self._memo.get(key)
        if found is not None:
            return found
        if key in busy:
            raise _ContainsItself
        if depth > NESTED_MAX:
            raise _Deep
        busy.add(key)
        nested = self._nested
        values = [(label, nested(v, k, busy, depth + 1) if isinstance(v, _CONTAINERS) else (k, type(v).__name__, v))
                  for label, v, k in self._parts(node, kind)]
        if isinstance(node, dict):
            values.sort()  # a dict's parts by key (a list's are in their order)
        busy.discard(key)
        number = self._memo[key] = self._number((kind, type(node).__name__, tuple(values)))
        self._keep.append(node)
        return number

    def _number(self, content: tuple) -> int:
        return self._numbers.setdefault(content, len(self._numbers))

    @staticmethod
    def _leaf(value, kind: int) -> tuple:
        return (kind, type(value).__name__, value)  # True, 1 and 1.0 stay apart

    @staticmethod
    def _parts(node, kind: int) -> list[tuple[object, object, int]]:
        """What the content of ``node`` is made of: (index or key, value, what the value stands for)."""
        if isinstance(node, (list, tuple)):
            inner = SCHEMA if kind == LIST else DATA
            return [(i, x, inner) for i, x in enumerate(node)]
        if kind in (MAP, DATA):
            inner = SCHEMA if kind == MAP else DATA
            return [(k, v, inner) for k, v in node.items()]
        return [(k, v, _kind_under(k, v)) for k, v in node.items() if k in _COUNTED]

    def _content(self, node, kind: int, parts: list) -> tuple:
        memo = self._memo
        values = [(label, memo[(id(v), k)] if isinstance(v, _CONTAINERS) else (k, type(v).__name__, v))
                  for label, v, k in parts]
        if isinstance(node, dict):
            values.sort()  # a dict's parts by key (a list's are in their order)
        return (kind, type(node).__name__, tuple(values))


def _kind_under(keyword: str, value) -> int:
    """What the value of a schema's keyword stands for."""
    kind = _KINDS.get(keyword, DATA)
    if kind == LIST and not isinstance(value, (list, tuple)):
        kind = SCHEMA if keyword in ONE_SCHEMA else DATA  # "items" holds one schema or a list
    elif kind == MAP and not isinstance(value, dict):
        kind = DATA
    return kind


_KINDS = {**dict.fromkeys(ONE_SCHEMA, SCHEMA), **dict.fromkeys(SCHEMA_MAPS, MAP), **dict.fromkeys(SCHEMA_LISTS | {"_contains_also"}, LIST)}
