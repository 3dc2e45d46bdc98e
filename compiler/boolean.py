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
from .merge import constraints, is_trivial
from .one_of import KINDS
from .build import ARRAY_WORDS, NUMBER_WORDS, OBJECT_WORDS, STRING_WORDS
from .validator_formats import INTEGER_FORMATS

CONDITIONAL = ("if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies")
MAX_REF_DEPTH = 32


def expand(rules: dict, annotated: bool = False) -> dict:
    """``rules`` with the conditional keywords moved into ``allOf`` as ``anyOf`` of their cases.
    ``annotated``: a dependency's case also requires its name, so that the case passes only where
    the keyword applied (what the case evaluates counts only then: ``unevaluated.py``)."""
    if not any(key in rules for key in CONDITIONAL):
        return rules
    rules = dict(rules)
    parts = list(rules.pop("allOf", []))
    if "if" in rules:
        test, then, else_ = rules.pop("if"), rules.pop("then", True), rules.pop("else", True)
        parts.append({"anyOf": [{"allOf": [test, then]}, {"allOf": [{"not": test}, else_]}]})
    rules.pop("then", None), rules.pop("else", None)  # without 'if' they do nothing
    for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
        for name, need in (rules.pop(keyword, None) or {}).items():
            absent = {"properties": {name: False}}  # non-objects pass both branches' keywords
            present = {"required": need} if isinstance(need, list) else need
            if annotated:
                present = {"required": [name], "allOf": [present]}
            parts.append({"anyOf": [absent, present]})
    if parts:
        rules["allOf"] = parts
    return rules


class Complement:
    """``complement(schema, slot)``: a schema matching exactly the JSON values ``schema`` rejects.

    ``follow(schema, slot)`` resolves a ``$ref`` (returning the target and its slot);
    ``expanded(rules, pointer)`` reads a schema's keywords as the lowering does (``Lowering.expanded``).
    Each schema object's complement is made once and shared (equal branches of a union are one), so
    references that fan out many times over cost what the schemas do."""

    def __init__(self, follow, expanded):
        self.follow = follow
        self.expanded = expanded
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
        rules = constraints(self.expanded(schema, slot.pointer))
        if not rules:
            return False
        declared = rules.get("type")
        kinds = None if declared is None else {"number" if t == "integer" else t
                                               for t in ([declared] if isinstance(declared, str) else declared)}
        branches = []
        for key, value in rules.items():
            if kinds is not None and _speaks_to(key, value) not in kinds | {None}:
                continue  # it holds of every value of the types listed: not(type and it) is not(type)
            branches.extend(self.keyword(key, value, rules, slot, depth))
        if any(b is True for b in branches):
            return True
        branches = _distinct([b for b in branches if b is not False])
        if not branches:
            return False
        return branches[0] if len(branches) == 1 else {"anyOf": branches}

    def keyword(self, key, value, rules, slot: Slot, depth: int) -> list:
        """The values that fail ``key`` alone (a union, as a list of schemas)."""
        at = slot.at(key)
        if key == "type":
            types = {value} if isinstance(value, str) else set(value)
            kinds = {"number" if t == "integer" else t for t in types}
            out = [{"type": sorted(set(KINDS) - kinds)}] if set(KINDS) - kinds else []
            if "integer" in types and "number" not in types:
                out.append({"type": "number", "_not_integer": True})
            return out
        if key in ("enum", "const"):
            values = value if key == "enum" else [value]
            return [{"_not_values": list(values)}]  # an array or object among them: ``unequal`` where one is lowered
        if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            return self.bound(key, value, rules)
        if key == "multipleOf":
            return [{"type": "number", "_not_multiples": [step]} for step in (value if isinstance(value, tuple) else (value,))]
        if key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
            kind = {"L": "string", "I": "array", "P": "object"}[key[3]]
            if key.startswith("min"):
                return [{"type": kind, "max" + key[3:]: value - 1}] if value > 0 else []
            return [{"type": kind, "min" + key[3:]: value + 1}]
        if key == "pattern":
            return [{"type": "string", "_not_patterns": (value,)}]
        if key == "required":
            return [{"type": "object", "properties": {name: False}} for name in value]
        if key == "properties":
            return [{"type": "object", "required": [name], "properties": {name: {"not": sub}}}
                    for name, sub in value.items() if not is_trivial(sub)]
        if key in ("items", "prefixItems") and isinstance(value, list):
            return self.positions(value)
        if key in ("items", "additionalItems"):  # the rest of the array, after the positions
            prefix = rules.get("items") if key == "additionalItems" else rules.get("prefixItems", [])
            if key == "additionalItems" and not isinstance(prefix, list) or is_trivial(value):
                return []  # additionalItems without a list of items does nothing
            if value is False:
                return [{"type": "array", "minItems": len(prefix) + 1}]
            if not prefix:  # some item is wrong
                return [{"type": "array", "contains": {"not": value}}]
        if key == "contains":  # fewer matches than minContains, or more than maxContains
            least, most = rules.get("minContains", 1), rules.get("maxContains")
            out = [] if least == 0 else [{"type": "array", "items": {"not": value}}] if least == 1 else [
                {"type": "array", "contains": value, "minContains": 0, "maxContains": least - 1}]
            return out + ([{"type": "array", "contains": value, "minContains": most + 1}] if most is not None else [])
        if key in ("minContains", "maxContains"):
            return []  # read with contains; alone they say nothing
        if key == "additionalProperties":  # some member beyond the named and patterned keys, wrong
            if is_trivial(value):
                return []
            names, patterns = sorted(rules.get("properties", {})), sorted(rules.get("patternProperties", {}))
            return [{"type": "object", "_some_member": [{"outside": names, "patterns": patterns, "value": {"not": value}}]}]
        if key == "_additional_unless":  # as additionalProperties, but outside its side's patterns only
            names = sorted(rules.get("properties", {}))
            return [{"type": "object", "_some_member": [{"outside": names, "patterns": sorted(u["patterns"]),
                                                         "value": {"not": u["value"]}}]}
                    for u in value if not is_trivial(u["value"])]
        if key == "patternProperties":
            return [{"type": "object", "_some_member": [{"pattern": p, "value": {"not": sub}}]}
                    for p, sub in value.items() if not is_trivial(sub)]
        if key == "propertyNames":  # some key it rules out
            return [] if is_trivial(value) else [{"type": "object", "_some_member": [{"names": value, "value": True}]}]
        if key in ("items", "additionalItems"):
            raise UnsupportedKeyword(at.pointer, "not", f"'not' of {key} (a member that must exist somewhere)", at.via)
        if key == "allOf":
            return [self(part, slot.at("allOf", i), depth) for i, part in enumerate(value)]
        if key == "anyOf":
            return [{"allOf": _distinct([self(part, slot.at("anyOf", i), depth) for i, part in enumerate(value)])}]
        if key == "oneOf":  # none of them, or two at once
            none = {"allOf": _distinct([self(part, slot.at("oneOf", i), depth) for i, part in enumerate(value)])}
            return [none] + [{"allOf": [a, b]} for i, a in enumerate(value) for b in value[i + 1:]]
        if key == "not":
            return [value]
        if key == "$ref":
            target, target_slot = self.follow({"$ref": value}, slot)
            return [self(target, target_slot, depth + 1)]
        if key == "format":  # a string the format rules out (numbers' formats stay refused)
            if isinstance(value, str) and value in INTEGER_FORMATS:
                raise UnsupportedKeyword(at.pointer, "not", f"'not' of format {value!r}", at.via)
            return [{"type": "string", "_not_formats": (value,)}]
        raise UnsupportedKeyword(at.pointer, "not", f"'not' of {key}", at.via)

    def unequal(self, v, slot: Slot) -> dict:
        """The values other than array or object ``v`` (as JSON compares them): the complement of
        its shape, each item or member there ``{"const": ...}`` (whose own complement excludes a
        nested array or object the same way where it is lowered)."""
        if isinstance(v, list):
            shape = {"type": "array", "minItems": len(v), "maxItems": len(v), "prefixItems": [{"const": x} for x in v]}
        else:
            shape = {"type": "object", "required": list(v), "properties": {k: {"const": x} for k, x in v.items()},
                     "additionalProperties": False}
        return {"anyOf": [b for key, value in shape.items() for b in self.keyword(key, value, shape, slot, 0)]}

    @staticmethod
    def bound(key, value, rules) -> list:
        if isinstance(value, bool):  # draft 4: the flag is read with its bound
            return []
        opposite = {"minimum": "exclusiveMaximum", "maximum": "exclusiveMinimum",
                    "exclusiveMinimum": "maximum", "exclusiveMaximum": "minimum"}[key]
        flag = rules.get("exclusive" + key[0].upper() + key[1:]) if key in ("minimum", "maximum") else None
        if flag is True:  # draft 4 exclusive bound: its complement includes the bound
            opposite = "maximum" if key == "minimum" else "minimum"
        return [{"type": "number", opposite: value}]

    @staticmethod
    def positions(prefix: list) -> list:
        """Arrays failing the position schemas: long enough to reach position i, and wrong there."""
        return [{"type": "array", "minItems": i + 1, "prefixItems": [True] * i + [{"not": sub}]}
                for i, sub in enumerate(prefix) if not is_trivial(sub)]


def _distinct(schemas: list) -> list:
    """``schemas`` with each object once (a complement made once is shared by every use)."""
    return list({id(s): s for s in schemas}.values())


_KIND_OF = {**dict.fromkeys(STRING_WORDS, "string"), **dict.fromkeys(NUMBER_WORDS, "number"),
            **dict.fromkeys(OBJECT_WORDS | {"_additional_unless"}, "object"),
            **dict.fromkeys(ARRAY_WORDS | {"additionalItems", "minContains", "maxContains"}, "array")}


def _speaks_to(key, value) -> str | None:
    """The one JSON type a keyword constrains (it holds of every other value), None for any."""
    if key == "format":
        return "number" if value in INTEGER_FORMATS else "string"
    return _KIND_OF.get(key)
