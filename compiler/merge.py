"""``allOf`` (and a ``$ref`` with sibling keywords) folded into one schema: the meet of two nodes.

Each field has an exact meet: bounds take the tighter value, ``required`` and ``properties``
unite, ``types`` and the literals intersect, patterns, formats and steps accumulate (the lowering
intersects their automata), and where one side's patterns are not the other's, each side's
``additionalProperties`` stays its own (``ObjectRules.additional_unless``: the keys outside that
side's patterns). Subschemas in the same place meet lazily (``both_nodes``: an ``allOf`` of the
two, met when lowered). Whatever has no exact meet here raises ``UnsupportedKeyword`` rather than
widening the language.
"""

from __future__ import annotations

from .errors import UnsupportedKeyword
from .ir import (ABSENT, ANY, NEVER, ArrayRules, Node, NumberRules, ObjectRules, StringRules, literal_values, said, same,
                 says, says_only)
from .values import json_in

PRODUCT_MAX = 256  # branches of two anyOf lists met


def may_meet(node) -> bool:
    """Whether the lowering's ``met`` may change ``node``: an ``allOf``, a ``not``, a ``oneOf`` or
    an ``anyOf`` beside other keywords at its top."""
    return isinstance(node, Node) and (bool(node.all_of) or node.not_ is not None or node.one_of is not None
                                       or node.any_of is not None and not is_union(node))


def kinds_of(types) -> set[str] | None:
    """The JSON types ``types`` (a node's) allow, integer counted as number (None: any)."""
    return None if types is None else {"number" if k == "integer" else k for k in types}


# -- the meet of nodes ----------------------------------------------------------------------------
def trivial(node: Node) -> bool:
    """Whether ``node`` allows every value: it says nothing, or its facets say nothing."""
    if node is ANY:
        return True
    return node is not NEVER and says_only(node, _FACETS) and all(
        part is None or says_only(part, _NOTHING) for part in (node.string, node.number, node.object, node.array))


def both_nodes(a: Node, b: Node) -> Node:
    """A subschema meeting ``a`` and ``b`` without meeting their fields yet (met when lowered):
    an ``allOf`` of their parts, with the types both allow (read by later meets to drop
    branches early)."""
    if trivial(a):
        return b
    if trivial(b):
        return a
    if a is NEVER or b is NEVER:
        return NEVER
    out = Node()
    # a meet of meets is one list (an anyOf product's branches meet one more case per fold: nested,
    # 125 folds were 125 levels of lowering)
    out.all_of = [*(a.all_of if _is_node_meet(a) else [a]), *(b.all_of if _is_node_meet(b) else [b])]
    kinds = [k for k in (kinds_of(a.types), kinds_of(b.types)) if k is not None]
    if kinds:
        common = set.intersection(*kinds)
        if not common:
            return NEVER
        out.types = tuple(sorted(common))
    return out


def rules_out(node: Node, name) -> bool:
    """Whether ``node`` surely allows no member ``name``: its schema there is ``false``, or the
    object is closed (``additionalProperties: false``, no key patterns) and does not name it."""
    obj = node.object
    if obj is None:
        return False
    if name in obj.properties:
        return obj.properties[name] is NEVER
    return obj.additional is NEVER and not obj.pattern_properties


def implied(rules: Node, part: Node) -> bool:
    """Whether the object-only ``rules`` surely satisfy ``part``: a union of which one branch only
    rules out members ``rules`` rules out already (the complement of ``required`` beside a closed
    object that does not name the name)."""
    return rules.types == ("object",) and is_union(part) and any(
        said(b).keys() <= {"types", "object"} and kinds_of(b.types) in (None, {"object"})
        and b.object is not None and said(b.object).keys() == {"properties"}
        and all(sub is NEVER and rules_out(rules, n) for n, sub in b.object.properties.items())
        for b in part.any_of)


def exactly_one(branches: list[Node], overlaps: list | None = None) -> list[Node]:
    """``oneOf`` as a union of branches that exclude each other: branch i and not any other it
    might overlap (``overlaps[i]``, all others when not given)."""
    out = []
    for i, b in enumerate(branches):
        others = [o for j, o in enumerate(branches) if j != i and (overlaps is None or j in overlaps[i])]
        if not others:
            out.append(b)
            continue
        none = Node()
        none.any_of = others
        if b is not ANY and b is not NEVER and b.not_ is None and b.ref is None:
            alone = copied(b)  # beside the branch's own keywords, so its properties keep their place in the order
            alone.not_ = none
        else:
            negated = Node()
            negated.not_ = none
            alone = Node()
            alone.all_of = [b, negated]
        out.append(alone)
    return out


class Meet:
    """``Meet(...)(a, b)``: the node meeting nodes ``a`` and ``b``, field by field (NEVER where no
    value can meet both)."""

    def __init__(self, pointer: str, matches, alike: bool):
        self.pointer = pointer
        self.matches = matches
        self.alike = alike

    def __call__(self, a: Node, b: Node) -> Node:
        if a is NEVER or b is NEVER:
            return NEVER
        out = copied(a)  # what a says, then each field b says met with it (most meets: a few fields)
        for field, theirs in vars(b).items():
            if field in _UNSAID or not says(Node, field, theirs):
                continue
            mine = getattr(a, field)
            if not says(Node, field, mine):
                setattr(out, field, theirs)
            elif field in _FACET_MEETS:
                setattr(out, field, getattr(self, _FACET_MEETS[field])(mine, theirs))
            elif field == "types":
                types = {t if t == u else "integer" for t in mine for u in theirs
                         if t == u or {t, u} == {"integer", "number"}}
                if not types:
                    return NEVER  # no type both allow: no value
                out.types = tuple(sorted(types))
            elif field == "formats":
                out.formats = _gathered(mine, theirs)
            elif field in ("not_values", "all_of"):
                setattr(out, field, mine + theirs)
            elif field == "not_":  # neither: not (a or b), one list however many meet
                out.not_ = Node()
                out.not_.any_of = [*branches(mine), theirs]
            elif field == "ref_text" and (mine != theirs or a.ref is not b.ref):
                raise UnsupportedKeyword(self.pointer, "$ref", "appears in several allOf branches with different values")
            elif field in _ONE_SIDE and not same(mine, theirs):
                # (conditionals and unevaluated keywords are rewritten before: ``expanded``)
                raise UnsupportedKeyword(self.pointer, _ONE_SIDE[field],
                                         "appears in several allOf branches with different values")
        if b.ref is not None and a.ref is None:
            out.ref, out.ref_pointer = b.ref, b.ref_pointer
        left, right = literal_values(a), literal_values(b)
        if left is not None and right is not None:
            out.enum, out.const = [v for v in left if json_in(v, right)], ABSENT
        elif right is not None:
            out.enum, out.const = b.enum, b.const
        self.unions(a, b, out)
        out.one_of_first = _one_of_first(a, b)
        if out.types is not None and set(out.types) == {"object"} and out.object is not None and any(
                rules_out(out, name) for name in out.object.required):
            return NEVER  # a name required and ruled out: no object
        return out

    def unions(self, a: Node, b: Node, out: Node) -> None:
        """``anyOf`` and ``oneOf`` met, once every other field is: two lists as their product
        (``pairs``); beside literals, the second judged value by value instead (no product)."""
        out.any_of, out.one_of = a.any_of, a.one_of
        if b.any_of is not None:
            if a.any_of is None:
                out.any_of = b.any_of
            elif self.same_list(a.any_of, b.any_of):  # the same branches twice (a $ref met with itself)
                pass
            elif literal_values(a) is not None or literal_values(b) is not None:
                union = Node()
                union.any_of = b.any_of
                out.all_of = out.all_of + [union]
            else:
                out.any_of = self.pairs(out, a.any_of, b.any_of)
        if b.one_of is not None:
            if a.one_of is None:
                out.one_of = b.one_of
            elif b.one_of and not self.same_list(a.one_of, b.one_of):
                # exactly one of each: the second as branches that exclude each other, met with any anyOf
                alone = exactly_one(b.one_of)
                out.any_of = alone if out.any_of is None else self.pairs(out, out.any_of, alone)

    def pairs(self, out: Node, va: list, vb: list) -> list:
        """Two anyOf lists met: every pair of branches, but those whose types cannot meet (nor
        ``out``'s), and those another pair holds: a branch of ``va`` that already meets a branch
        of ``vb`` (it is one, or one of its parts: ``x`` met with ``x`` is ``x``) is kept alone, as
        it holds its meet with every other, and a branch of ``vb`` that is a whole branch of
        ``va`` pairs with no other (``x`` holds ``y`` met with ``x``). The same ``$ref`` met with
        itself, or the complements of a ``oneOf``'s branches, each "a shared name is wrong",
        multiplied past the bound. ``alike``: branches written alike are one."""
        kinds = kinds_of(out.types)

        def alike(x, y) -> bool:
            return x is y or self.alike and same(x, y)

        alone = [x for x in va if any(alike(f, y) for f in (x, *(x.all_of if _is_node_meet(x) else ())) for y in vb)]
        if alone:
            va = [x for x in va if not any(x is a for a in alone)]
            vb = [y for y in vb if not any(alike(y, a) for a in alone)]
        pairs = [(x, ANY) for x in alone if _meets(kinds, kinds_of(x.types))]
        pairs += [(x, y) for x in va if _meets(kinds, kinds_of(x.types))
                  for y in vb if _meets(kinds_of(x.types), kinds_of(y.types), kinds)]
        if kinds == {"object"} and len(va) * len(vb) > 1:  # only objects: drop pairs their names rule out
            from .products import pair_filter  # (products reads one_of, which reads this module)

            can_meet = pair_filter(out, lambda node: node)
            pairs = [(x, y) for x, y in pairs if can_meet(x, y)]
        if len(pairs) > PRODUCT_MAX:
            raise UnsupportedKeyword(self.pointer, "anyOf", f"more than {PRODUCT_MAX} combined branches in allOf")
        return [both_nodes(x, y) for x, y in pairs] or [NEVER]

    @staticmethod
    def strings(a: StringRules, b: StringRules) -> StringRules:
        out = StringRules()
        out.min_length = _tighter(a.min_length, b.min_length, max)
        out.max_length = _tighter(a.max_length, b.max_length, min)
        out.patterns = _gathered(a.patterns, b.patterns)
        out.not_patterns = a.not_patterns + b.not_patterns
        out.not_formats = a.not_formats + b.not_formats
        return out

    @staticmethod
    def numbers(a: NumberRules, b: NumberRules) -> NumberRules:
        out = NumberRules()
        out.minimum = _tighter(a.minimum, b.minimum, max)
        out.maximum = _tighter(a.maximum, b.maximum, min)
        out.exclusive_minimum = _tighter(a.exclusive_minimum, b.exclusive_minimum, max)
        out.exclusive_maximum = _tighter(a.exclusive_maximum, b.exclusive_maximum, min)
        out.multiples = _gathered(a.multiples, b.multiples)
        out.not_multiples = tuple(a.not_multiples) + tuple(b.not_multiples)
        out.not_integer = a.not_integer or b.not_integer
        return out

    def objects(self, a: ObjectRules, b: ObjectRules) -> ObjectRules:
        out = ObjectRules()
        out.required = a.required + [name for name in b.required if name not in a.required]
        out.min_properties = _tighter(a.min_properties, b.min_properties, max)
        out.max_properties = _tighter(a.max_properties, b.max_properties, min)
        out.property_names = _lazy(a.property_names, b.property_names)
        out.additional = _lazy(a.additional, b.additional)
        out.dependent = a.dependent + b.dependent
        out.dependent_schemas = {**a.dependent_schemas, **b.dependent_schemas}
        out.some_member = a.some_member + b.some_member
        out.additional_unless = a.additional_unless + b.additional_unless
        if a.properties or b.properties:
            out.properties = self.properties(a, b)
        # a key meets every pattern it matches, from either side
        mine, theirs = dict(a.pattern_properties), dict(b.pattern_properties)
        out.pattern_properties = [(p, both_nodes(mine[p], theirs[p]) if p in mine and p in theirs else
                                   mine.get(p, theirs.get(p))) for p in {**mine, **theirs}]
        for x, y in ((a, b), (b, a)):  # x's patterned keys are additional to y: they meet y's additionalProperties
            theirs = dict(y.pattern_properties)
            mine = {p for p, _ in x.pattern_properties if p not in theirs}  # y's too: not additional
            if mine and y.additional is not None and y.additional is not ANY:
                # a name of y's that a pattern of x's matches would meet y's additionalProperties too
                named = [name for name, sub in y.properties.items() if sub is not NEVER]
                if theirs or any(self.matches(p, name) for p in mine for name in named):
                    # y's additionalProperties stays y's: for the keys outside the names that match
                    # none of y's patterns (each named key met it already, in ``properties``)
                    out.additional_unless = out.additional_unless + [(tuple(sorted(theirs)), y.additional)]
                    continue
                out.pattern_properties = [(p, both_nodes(sub, y.additional) if p in mine else sub)
                                          for p, sub in out.pattern_properties]
        return out

    def properties(self, a: ObjectRules, b: ObjectRules) -> dict:
        """Names from both; a name one side lacks meets that side's additionalProperties, unless one
        of its patternProperties matches the name (the lowering meets a named property with those),
        and each of its ``additional_unless`` whose patterns it matches none of."""
        def side(obj: ObjectRules, name) -> Node:
            if name in obj.properties:
                return obj.properties[name]
            if not obj.pattern_properties and not obj.additional_unless:  # (most objects)
                return ANY if obj.additional is None else obj.additional
            if any(self.matches(p, name) for p, _ in obj.pattern_properties):
                found = ANY
            else:
                found = obj.additional if obj.additional is not None else ANY
            for patterns, value in obj.additional_unless:
                if not any(self.matches(p, name) for p in patterns):
                    found = both_nodes(found, value)
            return found

        def meet(x: Node, y: Node) -> Node:
            if x is ANY or y is ANY:
                return y if x is ANY else x
            return NEVER if self.alike and (self.negation(x, y) or self.negation(y, x)) else both_nodes(x, y)

        names = list(a.properties) + [n for n in b.properties if n not in a.properties]
        return {name: meet(side(a, name), side(b, name)) for name in names}

    def same_list(self, x: list, y: list) -> bool:
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))

    def negation(self, x: Node, y: Node) -> bool:
        """Whether ``y`` is ``{"not": x}``, ``x`` written twice (a ``oneOf`` branch met with the
        complement of another that says the same of a name): nothing satisfies both."""
        return (x is not ANY and x is not NEVER and y.not_ is not None and said(y).keys() == {"not_"}
                and same(y.not_, x))

    def arrays(self, a: ArrayRules, b: ArrayRules) -> ArrayRules:
        out = ArrayRules()
        out.min_items = _tighter(a.min_items, b.min_items, max)
        out.max_items = _tighter(a.max_items, b.max_items, min)
        out.unique = a.unique or b.unique
        if _positional(a) or _positional(b):  # each position meets what each side says of that position
            out.prefix = [both_nodes(_at(a, i), _at(b, i)) for i in range(max(len(a.prefix), len(b.prefix)))]
            out.rest = both_nodes(a.rest or ANY, b.rest or ANY)
        out.contains, out.min_contains, out.max_contains = a.contains, a.min_contains, a.max_contains
        out.contains_also = a.contains_also + b.contains_also
        if b.contains is None:
            return out
        if a.contains is None:
            out.contains, out.min_contains, out.max_contains = b.contains, b.min_contains, b.max_contains
        elif same(a.contains, b.contains):
            # the same contains: matched between the larger least and the smaller most
            out.min_contains = max(a.min_contains, b.min_contains)
            out.max_contains = _tighter(a.max_contains, b.max_contains, min)
        elif _counted(a) or _counted(b):
            raise UnsupportedKeyword(self.pointer, "contains", "appears in several allOf branches with different values")
        else:
            out.contains_also = out.contains_also + [b.contains]  # each found once
        return out


_NOTHING = frozenset()
_ONE_SIDE = {"if_": "if", "then": "then", "else_": "else", "unevaluated_properties": "unevaluatedProperties",
             "unevaluated_items": "unevaluatedItems"}
_FACET_MEETS = {"string": "strings", "number": "numbers", "object": "objects", "array": "arrays"}
_FACETS = frozenset(_FACET_MEETS)
_UNSAID = frozenset(("enum", "const", "any_of", "one_of", "one_of_first"))  # met after the rest


def _one_of_first(a: Node, b: Node) -> bool:
    """Whether the meet writes its ``oneOf`` before its ``properties`` (``Node.one_of_first``): as
    ``a`` does, where ``a`` has both; ``a``'s words come before ``b``'s."""
    if a.one_of is not None:
        return a.one_of_first if _named(a) else _named(b)
    return False if _named(a) else b.one_of_first


def _named(node: Node) -> bool:
    return node.object is not None and bool(node.object.properties)


def _tighter(x, y, pick):
    return x if y is None else y if x is None else pick(x, y)


def _gathered(x: tuple, y: tuple) -> tuple:
    """Every entry of both that applies (patterns, formats, steps), each once."""
    return tuple(x) + tuple(v for v in y if v not in x)


def _lazy(x: Node | None, y: Node | None) -> Node | None:
    return x if y is None else y if x is None else both_nodes(x, y)


def _positional(arr: ArrayRules) -> bool:
    """Whether ``arr`` says something of positions: a prefix, or what follows it."""
    return bool(arr.prefix) or arr.rest is not None or arr.listed


def _at(arr: ArrayRules, i: int) -> Node:
    return arr.prefix[i] if i < len(arr.prefix) else arr.rest or ANY


def _counted(arr: ArrayRules) -> bool:
    return arr.min_contains != 1 or arr.max_contains is not None


def branches(node: Node) -> list:
    """The branches of a bare ``anyOf`` (a union that may join another list), else the node alone."""
    return node.any_of if is_union(node) else [node]


def is_union(node: Node) -> bool:
    """Whether ``node`` is an ``anyOf`` and nothing else."""
    return node.any_of is not None and said(node).keys() == {"any_of"}


def _is_node_meet(node: Node) -> bool:
    """Only ``allOf`` (and the types its parts imply, or narrower): its parts may join another list."""
    return bool(node.all_of) and said(node).keys() <= {"all_of", "types"}


def _meets(*kinds) -> bool:
    """Whether some value could have a type each of ``kinds`` allows."""
    known = [k for k in kinds if k is not None]
    return not known or bool(set.intersection(*known))


def copied(node: Node) -> Node:
    """A new node saying what ``node`` says (the meet's own, free to change)."""
    out = Node()
    out.__dict__.update(vars(node))
    for field in ("source", "path", "via"):
        out.__dict__.pop(field, None)
    return out
