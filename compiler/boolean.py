"""The boolean keywords rewritten into what the lowering enforces exactly: ``not`` pushed inward one
keyword at a time (De Morgan), ``oneOf`` as "this branch and none of the others", ``if``/``then``/
``else`` and the dependency keywords as ``anyOf``.

A complement is a node made from the fields of the node it negates, and shallow: it stops at each
subschema in a value position (a property, an item), leaving a node of ``not sub`` there to be
rewritten when that fragment is lowered, so a recursive schema stays finite. The leaves with no
positive keyword are the fields ``ir.py`` marks "a complement's": values ruled out, patterns and
formats no string matches, steps, no integer, and some member (an object has a member with a key
in a language and a value meeting a schema).
"""

from __future__ import annotations

from .context import Slot
from .errors import UnsupportedKeyword
from .ir import ANY, NEVER, ArrayRules, Node, NumberRules, ObjectRules, StringRules, literal_values, make
from .merge import copied, kinds_of, trivial
from .one_of import KINDS
from .validator_formats import INTEGER_FORMATS

CONDITIONAL = ("if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies")
MAX_REF_DEPTH = 32


def conditional(node: Node) -> bool:
    """Whether ``node`` has a conditional keyword (``if``, ``then``, ``else``, a dependency) to expand."""
    return (node.if_ is not None or node.then is not None or node.else_ is not None
            or node.object is not None and bool(node.object.dependent))


def expanded(node: Node) -> Node:
    """``node`` with its conditional keywords moved into ``allOf`` as ``anyOf`` of their cases
    (``then`` and ``else`` without ``if`` dropped: they do nothing)."""
    out = copied(node)
    out.if_ = out.then = out.else_ = None
    if node.object is not None:
        out.object = ObjectRules()
        out.object.__dict__.update(vars(node.object), dependent=[], dependent_schemas={})
    out.all_of = [*node.all_of, *conditional_parts(node)]
    return out


def conditional_parts(node: Node, annotated: bool = False) -> list[Node]:
    """``node``'s ``if``/``then``/``else`` and dependencies, each an ``anyOf`` of its cases.
    ``annotated``: a dependency's case also requires its name, so that the case passes only where
    the keyword applied (what the case evaluates counts only then: ``unevaluated.py``)."""
    parts = []
    if node.if_ is not None:
        test = node.if_
        then, else_ = (ANY if sub is None else sub for sub in (node.then, node.else_))
        parts.append(make(any_of=[make(all_of=[test, then]), make(all_of=[make(not_=test), else_])]))
    for name, need in node.object.dependent if node.object is not None else ():
        absent = make(object={"properties": {name: NEVER}})  # non-objects pass both branches' keywords
        present = make(object={"required": need}) if isinstance(need, list) else need
        if annotated:
            present = make(object={"required": [name]}, all_of=[present])
        parts.append(make(any_of=[absent, present]))
    return parts


class Complement:
    """``complement(node, slot)``: the node of exactly the JSON values ``node`` rejects, made by
    negating its fields one at a time.

    ``follow(node, slot)`` is the target of ``node``'s ``$ref`` and its slot;
    ``expanded(node, pointer)`` reads a node's keywords as the lowering does (``Lowering.expanded_node``).
    Each node's complement is made once and shared (equal branches of a union are one), so
    references that fan out many times over cost what the schemas do."""

    def __init__(self, follow, expanded):
        self.follow = follow
        self.expanded = expanded
        self._made: dict[int, tuple] = {}  # id of a node -> (the node, its complement)

    def __call__(self, node: Node, slot: Slot, depth: int = 0) -> Node:
        if depth > MAX_REF_DEPTH:
            raise UnsupportedKeyword(slot.pointer, "not", "'not' of a schema that refers back to itself", slot.via)
        if node is ANY or node is NEVER:
            return NEVER if node is ANY else ANY
        made = self._made.get(id(node))
        if made is None:
            made = self._made[id(node)] = (node, self._complement(node, slot, depth))
        return made[1]

    def _complement(self, node: Node, slot: Slot, depth: int) -> Node:
        branches = self.cases(self.expanded(node, slot.pointer), slot, depth)
        if any(b is ANY for b in branches):
            return ANY
        branches = _distinct([b for b in branches if b is not NEVER])
        if not branches:
            return NEVER
        return branches[0] if len(branches) == 1 else make(any_of=branches)

    def cases(self, node: Node, slot: Slot, depth: int) -> list[Node]:
        """The values that fail some field of ``node`` (a union, as a list of nodes). A facet
        of a type ``node.types`` does not list holds of every value it does list: ``not (type and
        it)`` is ``not type``, so it adds nothing."""
        kinds = kinds_of(node.types)

        def speaks(kind) -> bool:
            return kinds is None or kind in kinds

        out = [] if node.types is None else self.types(node.types)
        values = literal_values(node)  # an array or object among them: ``unequal`` where one is lowered
        out += [] if values is None else [make(not_values=values)]
        if node.number is not None and speaks("number"):
            out += self.numbers(node.number)
        if node.string is not None and speaks("string"):
            out += self.strings(node.string)
        if node.object is not None and speaks("object"):
            out += self.objects(node.object)
        if node.array is not None and speaks("array"):
            out += self.arrays(node.array, slot)
        for fmt in node.formats:  # a string the format rules out (numbers' formats stay refused)
            if fmt in INTEGER_FORMATS:
                if speaks("number"):
                    at = slot.at("format")
                    raise UnsupportedKeyword(at.pointer, "not", f"'not' of format {fmt!r}", at.via)
            elif speaks("string"):
                out.append(make(types=("string",), string={"not_formats": (fmt,)}))
        for word, parts in (("allOf", node.all_of), ("anyOf", node.any_of), ("oneOf", node.one_of)):
            if parts is not None:
                out += self.combined(word, parts, slot, depth)
        if node.not_ is not None:
            out.append(node.not_)
        if node.ref is not None:
            target, target_slot = self.follow(node, slot)
            out.append(self(target, target_slot, depth + 1))
        for field, word in _UNCOMPLEMENTED:
            facet, _, name = field.rpartition(".")
            part = getattr(node, facet) if facet else node
            if part is not None and getattr(part, name) != getattr(type(part), name) and (not facet or speaks(facet)):
                at = slot.at(word)
                raise UnsupportedKeyword(at.pointer, "not", f"'not' of {word}", at.via)
        return out

    @staticmethod
    def types(types: tuple) -> list[Node]:
        kinds = kinds_of(types)
        out = [make(types=tuple(sorted(set(KINDS) - kinds)))] if set(KINDS) - kinds else []
        if "integer" in types and "number" not in types:
            out.append(make(types=("number",), number={"not_integer": True}))
        return out

    @staticmethod
    def numbers(number: NumberRules) -> list[Node]:
        """Below the least, above the most (each bound's opposite, with its exclusiveness turned
        round: draft 4's flags are on their bounds already), or not a multiple of some step."""
        opposite = {"minimum": "exclusive_maximum", "maximum": "exclusive_minimum",
                    "exclusive_minimum": "maximum", "exclusive_maximum": "minimum"}
        out = [make(types=("number",), number={opposite[field]: bound})
               for field, bound in zip(("minimum", "maximum", "exclusive_minimum", "exclusive_maximum"), number.bounds)
               if bound is not None]
        return out + [make(types=("number",), number={"not_multiples": (step,)}) for step in number.multiples]

    @staticmethod
    def strings(string: StringRules) -> list[Node]:
        return _counts("string", "length", string.min_length, string.max_length) + [
            make(types=("string",), string={"not_patterns": (pattern,)}) for pattern in string.patterns]

    @staticmethod
    def objects(obj: ObjectRules) -> list[Node]:
        out = [make(types=("object",), object={"properties": {name: NEVER}}) for name in obj.required]
        out += _counts("object", "properties", obj.min_properties, obj.max_properties)
        out += [make(types=("object",), object={"required": [name], "properties": {name: make(not_=sub)}})
                for name, sub in obj.properties.items() if not trivial(sub)]
        out += [make(types=("object",), object={"some_member": [("pattern", p, make(not_=sub))]})
                for p, sub in obj.pattern_properties if not trivial(sub)]
        # some member beyond the named and patterned keys, wrong (``additional_unless``: outside
        # its side's patterns only)
        names, patterns = tuple(sorted(obj.properties)), tuple(sorted(p for p, _ in obj.pattern_properties))
        beyond = [] if obj.additional is None else [(patterns, obj.additional)]
        out += [make(types=("object",),
                     object={"some_member": [("outside", (names, tuple(sorted(unless))), make(not_=value))]})
                for unless, value in beyond + list(obj.additional_unless) if not trivial(value)]
        if obj.property_names is not None and not trivial(obj.property_names):  # some key it rules out
            out.append(make(types=("object",), object={"some_member": [("names", obj.property_names, ANY)]}))
        return out

    def arrays(self, arr: ArrayRules, slot: Slot) -> list[Node]:
        out = _counts("array", "items", arr.min_items, arr.max_items) + self.positions(arr.prefix)
        rest = arr.rest
        if rest is not None and not trivial(rest):  # the rest of the array, after the positions
            if rest is NEVER:
                out.append(make(types=("array",), array={"min_items": len(arr.prefix) + 1}))
            elif not arr.prefix:  # some item is wrong
                out.append(make(types=("array",), array={"contains": make(not_=rest)}))
            else:
                word = "additionalItems" if arr.listed else "items"
                at = slot.at(word)
                raise UnsupportedKeyword(at.pointer, "not", f"'not' of {word} (a member that must exist somewhere)", at.via)
        if arr.contains is not None:  # fewer matches than minContains, or more than maxContains
            value, least, most = arr.contains, arr.min_contains, arr.max_contains
            out += [] if least == 0 else [make(types=("array",), array={"rest": make(not_=value)})] if least == 1 else [
                make(types=("array",), array={"contains": value, "min_contains": 0, "max_contains": least - 1})]
            out += [make(types=("array",), array={"contains": value, "min_contains": most + 1})] if most is not None else []
        return out

    def combined(self, word: str, parts: list[Node], slot: Slot, depth: int) -> list[Node]:
        negated = [self(part, slot.at(word, i), depth) for i, part in enumerate(parts)]
        if word == "allOf":
            return negated
        if word == "anyOf":
            return [make(all_of=_distinct(negated))]
        # oneOf: none of them, or two at once
        return [make(all_of=_distinct(negated))] + [make(all_of=[a, b]) for i, a in enumerate(parts) for b in parts[i + 1:]]

    def unequal(self, v, slot: Slot) -> Node:
        """The values other than array or object ``v`` (as JSON compares them): the complement of
        its shape, each item or member there ``{"const": ...}`` (whose own complement excludes a
        nested array or object the same way where it is lowered)."""
        if isinstance(v, list):
            shape = make(types=("array",), array={"min_items": len(v), "max_items": len(v),
                                                  "prefix": [make(const=x) for x in v]})
        else:
            shape = make(types=("object",), object={"required": list(v), "properties": {k: make(const=x) for k, x in v.items()},
                                                    "additional": NEVER})
        return make(any_of=self.cases(shape, slot, 0))

    @staticmethod
    def positions(prefix: list[Node]) -> list[Node]:
        """Arrays failing the position schemas: long enough to reach position i, and wrong there."""
        return [make(types=("array",), array={"min_items": i + 1, "prefix": [ANY] * i + [make(not_=sub)]})
                for i, sub in enumerate(prefix) if not trivial(sub)]


def _distinct(nodes: list) -> list:
    """``nodes`` with each once (a complement made once is shared by every use)."""
    return list({id(n): n for n in nodes}.values())


def _counts(kind: str, noun: str, least, most) -> list[Node]:
    """Fewer than ``least`` or more than ``most`` (lengths, items, properties)."""
    out = [make(types=(kind,), **{kind: {"max_" + noun: least - 1}})] if least else []
    return out + ([make(types=(kind,), **{kind: {"min_" + noun: most + 1}})] if most is not None else [])


# what a node may say that has no complement here, as "facet.field" and the keyword it words
# (conditionals, dependencies and unevaluated keywords are rewritten before: ``expanded``)
_UNCOMPLEMENTED = (("array.unique", "uniqueItems"), ("not_values", "_not_values"),
                   ("string.not_patterns", "_not_patterns"), ("string.not_formats", "_not_formats"),
                   ("number.not_multiples", "_not_multiples"), ("number.not_integer", "_not_integer"),
                   ("object.some_member", "_some_member"), ("array.contains_also", "_contains_also"),
                   ("object.dependent", "dependentSchemas"), ("if_", "if"), ("unevaluated", "unevaluatedProperties"))
