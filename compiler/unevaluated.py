"""``unevaluatedProperties`` and ``unevaluatedItems`` rewritten into keywords the lowering has.

What a schema evaluates (the keys and items its keywords and in-place subschemas looked at)
depends on which of its ``anyOf``/``oneOf``/``if`` branches an instance passes. So we list
*cases*: pairs (condition, evaluated) such that, for an instance valid against the rest of the
schema,

- sound: when a case's condition holds, the instance's evaluated set includes the case's;
- complete: some case's condition holds with the instance's evaluated set exactly.

Since "what is not evaluated meets U" only gets weaker as more is evaluated, the keyword is exactly
``anyOf`` over the cases of (condition and the unevaluated part meeting U), written with
``properties``/``patternProperties``/``additionalProperties`` (``prefixItems``/``items``). A
subset of ``anyOf`` branches that pass is a case; one ``oneOf`` branch is; ``if``/``then``/``else``
and the dependency keywords arrive as ``anyOf`` from ``boolean.expand``; ``not`` evaluates nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .boolean import conditional_parts
from .errors import UnsupportedKeyword
from .ir import ANY, NEVER, ArrayRules, Node, ObjectRules, make
from .merge import both_nodes, copied, trivial
from .refs import child

KEYWORDS = ("unevaluatedProperties", "unevaluatedItems")
MAX_CASES = 64
MAX_DEPTH = 32


@dataclass(frozen=True)
class Seen:
    """What one case evaluated: keys by name and pattern, items by position and ``contains``."""

    names: tuple = ()
    patterns: tuple = ()
    prefix: int = 0
    contains: tuple = ()
    everything: bool = False

    def __or__(self, other: "Seen") -> "Seen":
        return Seen(_union(self.names, other.names), _union(self.patterns, other.patterns),
                    max(self.prefix, other.prefix), _union(self.contains, other.contains, by_id=True),
                    self.everything or other.everything)

    def covers(self, other: "Seen") -> bool:
        return self.everything or not other.everything and set(other.names) <= set(self.names) and set(
            other.patterns) <= set(self.patterns) and other.prefix <= self.prefix and all(
            any(c is d for d in self.contains) for c in other.contains)

    @property
    def empty(self) -> bool:
        return self == Seen()


def _union(a: tuple, b: tuple, by_id: bool = False) -> tuple:
    if by_id:
        return a + tuple(x for x in b if not any(x is y for y in a))
    return a + tuple(x for x in b if x not in a)


class Evaluation:
    """``rewrite(node, where)``: ``node`` (the schema at pointer ``where`` in ``document``, its
    conditionals not yet expanded) with its unevaluated keywords replaced by ``allOf`` parts."""

    def __init__(self, document):
        self.doc = document

    def rewrite(self, node: Node, where: str) -> Node:
        if not node.unevaluated:
            return node
        out = copied(node)
        out.unevaluated, out.unevaluated_properties, out.unevaluated_items = False, None, None
        parts = list(node.all_of)
        for keyword, limit, rest in (("unevaluatedProperties", self.limit_properties, node.unevaluated_properties),
                                     ("unevaluatedItems", self.limit_items, node.unevaluated_items)):
            if rest is None or trivial(rest):
                continue
            self._at = child(where, keyword)
            options = [both_nodes(cond, limit(seen, rest)) for cond, seen in self.cases(node, keyword, 0, own=False)]
            if any(trivial(o) for o in options):
                continue
            options = [o for o in options if o is not NEVER]
            parts.append(options[0] if len(options) == 1 else make(any_of=options) if options else NEVER)
        out.all_of = parts
        return out

    @staticmethod
    def limit_properties(seen: Seen, rest: Node) -> Node:
        if seen.everything:
            return ANY
        return make(object={"properties": dict.fromkeys(seen.names, ANY),
                            "pattern_properties": [(p, ANY) for p in seen.patterns], "additional": rest})

    @staticmethod
    def limit_items(seen: Seen, rest: Node) -> Node:
        if seen.everything:
            return ANY
        rest = make(any_of=[*seen.contains, rest]) if seen.contains else rest
        return make(array={"prefix": [ANY] * seen.prefix, "rest": rest})

    # -- cases ------------------------------------------------------------------------------------
    def evaluated(self, node: Node, keyword: str, own: bool) -> Seen:
        """What ``node``'s own keywords evaluate for ``keyword`` (``own``: its own ``keyword`` too,
        which evaluates everything where it sits below the schema being rewritten)."""
        if keyword == "unevaluatedProperties":
            obj = node.object or ObjectRules()
            return Seen(names=tuple(obj.properties), patterns=tuple(p for p, _ in obj.pattern_properties),
                        everything=obj.additional is not None or own and node.unevaluated_properties is not None)
        arr = node.array or ArrayRules()
        contains = (arr.contains,) if arr.contains is not None and not arr.listed and self.doc.contains_evaluates else ()
        return Seen(prefix=len(arr.prefix), contains=contains,  # (a list ``items``: the rest is additionalItems)
                    everything=arr.rest is not None or own and node.unevaluated_items is not None)

    def cases(self, node: Node, keyword: str, depth: int, own: bool = True) -> list:
        """The (condition, Seen) cases of ``node`` for ``keyword``: no case where no instance passes."""
        if node is ANY:
            return [(ANY, Seen())]
        if node is NEVER:
            return []
        if depth > MAX_DEPTH:
            raise UnsupportedKeyword(self._at, keyword, f"in-place subschemas nested over {MAX_DEPTH} deep")
        out = [(ANY, self.evaluated(node, keyword, own))]
        for part in ([node.ref] if node.ref is not None else []) + node.all_of + conditional_parts(node, annotated=True):
            out = self.product(out, self.cases(part, keyword, depth + 1))
        for applicator, listed in (("anyOf", node.any_of), ("oneOf", node.one_of)):
            branches = [[(both_nodes(b, cond), seen) for cond, seen in self.cases(b, keyword, depth + 1)]
                        for b in listed or ()]
            options = [(ANY, Seen())]
            for branch in branches:
                if all(seen.empty for _, seen in branch):
                    continue  # it evaluates nothing, whether it passes or not
                # anyOf: every subset of the branches that pass; oneOf: the one that passes
                options = self.bound(options + (self.product(options, branch) if applicator == "anyOf" else branch))
            out = self.product(out, options)
        return out

    def product(self, left: list, right: list) -> list:
        if len(left) * len(right) > 4 * MAX_CASES:  # before the quadratic pruning below
            self.too_many()
        out = []
        for cond_a, a in left:
            for cond_b, b in right:
                cond = both_nodes(cond_a, cond_b)
                if cond is not NEVER:
                    out.append((cond, a | b))
        # a case that always applies and evaluates at least as much makes another redundant
        kept = [(c, s) for i, (c, s) in enumerate(out) if not any(
            j != i and d is ANY and t.covers(s) and (not s.covers(t) or j < i) for j, (d, t) in enumerate(out))]
        return self.bound(kept)

    def bound(self, cases: list) -> list:
        if len(cases) > MAX_CASES:
            self.too_many()
        return cases

    def too_many(self):
        keyword = self._at.rsplit("/", 1)[-1]
        raise TooManyCases(self._at, keyword, f"more than {MAX_CASES} cases of what is evaluated")


class TooManyCases(UnsupportedKeyword):
    """What is evaluated has more cases than one automaton should hold (a validator can judge each
    instance instead)."""
