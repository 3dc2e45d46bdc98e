"""The boolean keywords rewritten into what the lowering enforces exactly: ``not`` pushed inward one
keyword at a time (De Morgan), ``oneOf`` as "this branch and none of the others", ``if``/``then``/
``else`` and the dependency keywords as ``anyOf``.

A complement is shallow: it stops at each subschema in a value position (a property, an item),
leaving ``{"not": sub}`` there to be rewritten when that fragment is lowered, so a recursive
schema stays finite. The leaves with no positive keyword use the lowering's markers:
``_not_values`` (excluded literals), ``_not_patterns``, ``_not_multiples``, ``_not_integer`` and
``_some_member`` (an object has a member with a key in a language and a value meeting a schema).
"""

from __future__ import annotations

from .context import Slot
from .errors import UnsupportedKeyword
from .ir import NEVER, ArrayRules, Node, NumberRules, ObjectRules, StringRules, literal_values
from .merge import is_trivial
from .one_of import KINDS
from .validator_formats import INTEGER_FORMATS

CONDITIONAL = ("if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies")
MAX_REF_DEPTH = 32


def expand(rules: dict, read) -> dict:
    """``rules`` with the conditional keywords moved into ``allOf`` as ``anyOf`` of their cases
    (``conditional_parts`` of its node, ``read(rules)``)."""
    if not any(key in rules for key in CONDITIONAL):
        return rules
    node = read(rules)
    rules = {key: value for key, value in rules.items() if key not in CONDITIONAL}  # (``then``, ``else`` without ``if`` do nothing)
    parts = [*rules.pop("allOf", []), *conditional_parts(node)]
    if parts:
        rules["allOf"] = parts
    return rules


def conditional_parts(node: Node, annotated: bool = False) -> list:
    """``node``'s ``if``/``then``/``else`` and dependencies, each an ``anyOf`` of its cases.
    ``annotated``: a dependency's case also requires its name, so that the case passes only where
    the keyword applied (what the case evaluates counts only then: ``unevaluated.py``)."""
    parts = []
    if node.if_ is not None:
        test = node.if_.source
        then, else_ = (True if sub is None else sub.source for sub in (node.then, node.else_))
        parts.append({"anyOf": [{"allOf": [test, then]}, {"allOf": [{"not": test}, else_]}]})
    for name, need in node.object.dependent if node.object is not None else ():
        absent = {"properties": {name: False}}  # non-objects pass both branches' keywords
        present = {"required": need} if isinstance(need, list) else need.source
        if annotated:
            present = {"required": [name], "allOf": [present]}
        parts.append({"anyOf": [absent, present]})
    return parts


class Complement:
    """``complement(schema, slot)``: a schema matching exactly the JSON values ``schema`` rejects.

    ``follow(schema, slot)`` resolves a ``$ref`` (returning the target and its slot);
    ``expanded(rules, pointer)`` reads a schema's keywords as the lowering does (``Lowering.expanded``);
    ``read(schema)`` is its node (``build.Reader.of``), whose fields the complement negates one at
    a time. Each schema object's complement is made once and shared (equal branches of a union are
    one), so references that fan out many times over cost what the schemas do."""

    def __init__(self, follow, expanded, read):
        self.follow = follow
        self.expanded = expanded
        self.read = read
        self._made: dict[int, tuple] = {}  # id of a schema -> (the schema, its complement)

    def __call__(self, schema, slot: Slot, depth: int = 0):
        if depth > MAX_REF_DEPTH:
            raise UnsupportedKeyword(slot.pointer, "not", "'not' of a schema that refers back to itself", slot.via)
        if schema is True or schema is False:
            return not schema
        made = self._made.get(id(schema))
        if made is None:
            made = self._made[id(schema)] = (schema, self._complement(schema, slot, depth))
        return made[1]

    def _complement(self, schema: dict, slot: Slot, depth: int):
        branches = self.cases(self.read(self.expanded(schema, slot.pointer)), slot, depth)
        if any(b is True for b in branches):
            return True
        branches = _distinct([b for b in branches if b is not False])
        if not branches:
            return False
        return branches[0] if len(branches) == 1 else {"anyOf": branches}

    def cases(self, node: Node, slot: Slot, depth: int) -> list:
        """The values that fail some field of ``node`` (a union, as a list of schemas). A facet
        of a type ``node.types`` does not list holds of every value it does list: ``not (type and
        it)`` is ``not type``, so it adds nothing."""
        kinds = None if node.types is None else {"number" if t == "integer" else t for t in node.types}

        def speaks(kind) -> bool:
            return kinds is None or kind in kinds

        out = [] if node.types is None else self.types(node.types)
        values = literal_values(node)  # an array or object among them: ``unequal`` where one is lowered
        out += [] if values is None else [{"_not_values": values}]
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
                out.append({"type": "string", "_not_formats": (fmt,)})
        for word, parts in (("allOf", node.all_of), ("anyOf", node.any_of), ("oneOf", node.one_of)):
            if parts is not None:
                out += self.combined(word, [part.source for part in parts], slot, depth)
        if node.not_ is not None:
            out.append(node.not_.source)
        if node.ref is not None:
            target, target_slot = self.follow({"$ref": node.ref_text}, slot)
            out.append(self(target, target_slot, depth + 1))
        for field, word in _UNCOMPLEMENTED:
            facet, _, name = field.rpartition(".")
            part = getattr(node, facet) if facet else node
            if part is not None and getattr(part, name) != getattr(type(part), name) and (not facet or speaks(facet)):
                at = slot.at(word)
                raise UnsupportedKeyword(at.pointer, "not", f"'not' of {word}", at.via)
        return out

    @staticmethod
    def types(types: tuple) -> list:
        kinds = {"number" if t == "integer" else t for t in types}
        out = [{"type": sorted(set(KINDS) - kinds)}] if set(KINDS) - kinds else []
        if "integer" in types and "number" not in types:
            out.append({"type": "number", "_not_integer": True})
        return out

    @staticmethod
    def numbers(number: NumberRules) -> list:
        """Below the least, above the most (each bound's opposite, with its exclusiveness turned
        round: draft 4's flags are on their bounds already), or not a multiple of some step."""
        opposite = {"minimum": "exclusiveMaximum", "maximum": "exclusiveMinimum",
                    "exclusiveMinimum": "maximum", "exclusiveMaximum": "minimum"}
        out = [{"type": "number", opposite[word]: bound}
               for word, bound in zip(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), number.bounds)
               if bound is not None]
        return out + [{"type": "number", "_not_multiples": [step]} for step in number.multiples]

    @staticmethod
    def strings(string: StringRules) -> list:
        return _counts("string", "Length", string.min_length, string.max_length) + [
            {"type": "string", "_not_patterns": (pattern,)} for pattern in string.patterns]

    @staticmethod
    def objects(obj: ObjectRules) -> list:
        out = [{"type": "object", "properties": {name: False}} for name in obj.required]
        out += _counts("object", "Properties", obj.min_properties, obj.max_properties)
        out += [{"type": "object", "required": [name], "properties": {name: {"not": sub.source}}}
                for name, sub in obj.properties.items() if not is_trivial(sub.source)]
        out += [{"type": "object", "_some_member": [{"pattern": p, "value": {"not": sub.source}}]}
                for p, sub in obj.pattern_properties if not is_trivial(sub.source)]
        # some member beyond the named and patterned keys, wrong (``additional_unless``: outside
        # its side's patterns only)
        names, patterns = sorted(obj.properties), sorted(p for p, _ in obj.pattern_properties)
        beyond = [] if obj.additional is None else [(patterns, obj.additional)]
        out += [{"type": "object", "_some_member": [{"outside": names, "patterns": sorted(unless), "value": {"not": value.source}}]}
                for unless, value in beyond + list(obj.additional_unless) if not is_trivial(value.source)]
        if obj.property_names is not None and not is_trivial(obj.property_names.source):  # some key it rules out
            out.append({"type": "object", "_some_member": [{"names": obj.property_names.source, "value": True}]})
        return out

    def arrays(self, arr: ArrayRules, slot: Slot) -> list:
        out = _counts("array", "Items", arr.min_items, arr.max_items) + self.positions([n.source for n in arr.prefix])
        rest = arr.rest
        if rest is not None and not is_trivial(rest.source):  # the rest of the array, after the positions
            if rest is NEVER:
                out.append({"type": "array", "minItems": len(arr.prefix) + 1})
            elif not arr.prefix:  # some item is wrong
                out.append({"type": "array", "contains": {"not": rest.source}})
            else:
                word = "additionalItems" if arr.listed else "items"
                at = slot.at(word)
                raise UnsupportedKeyword(at.pointer, "not", f"'not' of {word} (a member that must exist somewhere)", at.via)
        if arr.contains is not None:  # fewer matches than minContains, or more than maxContains
            value, least, most = arr.contains.source, arr.min_contains, arr.max_contains
            out += [] if least == 0 else [{"type": "array", "items": {"not": value}}] if least == 1 else [
                {"type": "array", "contains": value, "minContains": 0, "maxContains": least - 1}]
            out += [{"type": "array", "contains": value, "minContains": most + 1}] if most is not None else []
        return out

    def combined(self, word: str, parts: list, slot: Slot, depth: int) -> list:
        if word == "allOf":
            return [self(part, slot.at("allOf", i), depth) for i, part in enumerate(parts)]
        if word == "anyOf":
            return [{"allOf": _distinct([self(part, slot.at("anyOf", i), depth) for i, part in enumerate(parts)])}]
        # oneOf: none of them, or two at once
        none = {"allOf": _distinct([self(part, slot.at("oneOf", i), depth) for i, part in enumerate(parts)])}
        return [none] + [{"allOf": [a, b]} for i, a in enumerate(parts) for b in parts[i + 1:]]

    def unequal(self, v, slot: Slot) -> dict:
        """The values other than array or object ``v`` (as JSON compares them): the complement of
        its shape, each item or member there ``{"const": ...}`` (whose own complement excludes a
        nested array or object the same way where it is lowered)."""
        if isinstance(v, list):
            shape = {"type": "array", "minItems": len(v), "maxItems": len(v), "prefixItems": [{"const": x} for x in v]}
        else:
            shape = {"type": "object", "required": list(v), "properties": {k: {"const": x} for k, x in v.items()},
                     "additionalProperties": False}
        return {"anyOf": self.cases(self.read(shape), slot, 0)}

    @staticmethod
    def positions(prefix: list) -> list:
        """Arrays failing the position schemas: long enough to reach position i, and wrong there."""
        return [{"type": "array", "minItems": i + 1, "prefixItems": [True] * i + [{"not": sub}]}
                for i, sub in enumerate(prefix) if not is_trivial(sub)]


def _distinct(schemas: list) -> list:
    """``schemas`` with each object once (a complement made once is shared by every use)."""
    return list({id(s): s for s in schemas}.values())


def _counts(kind: str, noun: str, least, most) -> list:
    """Fewer than ``least`` or more than ``most`` (lengths, items, properties)."""
    out = [{"type": kind, "max" + noun: least - 1}] if least else []
    return out + ([{"type": kind, "min" + noun: most + 1}] if most is not None else [])


# what a node may say that has no complement here, as "facet.field" and the keyword it words
# (conditionals, dependencies and unevaluated keywords are rewritten before: ``expanded``)
_UNCOMPLEMENTED = (("array.unique", "uniqueItems"), ("not_values", "_not_values"),
                   ("string.not_patterns", "_not_patterns"), ("string.not_formats", "_not_formats"),
                   ("number.not_multiples", "_not_multiples"), ("number.not_integer", "_not_integer"),
                   ("object.some_member", "_some_member"), ("array.contains_also", "_contains_also"),
                   ("object.dependent", "dependentSchemas"), ("if_", "if"), ("unevaluated", "unevaluatedProperties"))
