"""Lowering: a JSON Schema document into a ``Program`` (a byte NFA of calling fragments).

Every subschema that fills a slot (a property value, an array item, a ``$ref`` target) becomes a
fragment of its own, lowered once and called from each place that uses it; fragments are lowered
from a work queue, so a schema nested ten thousand levels deep never deepens the Python stack.
Inside a fragment, ``value`` threads the paths of one JSON value between two states.
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import dataclass

from automaton.program import Program, ProgramTooLarge

from . import chardfa
from .chardfa import CharDFA
from .errors import InvalidSchema, SchemaError, SchemaTooComplex, Unsatisfiable, UnsupportedKeyword
from .formats import format_dfa
from .keywords import TYPES, UNSUPPORTED
from .merge import both, constraints, is_trivial, json_in, merge
from .numbers import number_dfa
from .one_of import exact_branches
from .refs import SchemaDocument, child
from .regex import pattern_dfa
from .strings import add_paths, ascii_raw, scalar_paths
from .validation import Validator

WHITESPACE = (0x20, 0x09, 0x0A, 0x0D)
ANY_SCALAR = ((0, chardfa.MAX_SCALAR),)


@dataclass(frozen=True)
class Options:
    whitespace: str = "bounded"  # "compact" | "bounded" | "flexible"
    max_whitespace: int = 4  # consecutive whitespace characters in "bounded" mode
    strict: bool = False  # additionalProperties absent means false
    max_depth: int = 10  # recursive frames ($ref cycles, nested free JSON)
    max_states: int = 500_000
    max_seconds: float = 20.0

    def __post_init__(self):
        if self.whitespace not in ("compact", "bounded", "flexible"):
            raise ValueError(f"whitespace must be 'compact', 'bounded' or 'flexible', not {self.whitespace!r}")
        for name in ("max_whitespace", "max_depth", "max_states"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, not {value!r}")


@dataclass
class Slot:
    """Where a subschema sits: its JSON pointer and the ``$ref`` chain that led there."""

    pointer: str
    via: tuple[str, ...] = ()

    def at(self, *segments) -> "Slot":
        return Slot(child(self.pointer, *segments), self.via)


class Lowering:
    def __init__(self, document: SchemaDocument, options: Options):
        self.doc = document
        self.options = options
        self.prog = Program(max_states=options.max_states, max_depth=options.max_depth)
        self.warnings: list[str] = []
        self.reasons: list[tuple[Slot, str]] = []  # why parts of the schema can never match
        self._fragments: dict[int, int] = {}
        self._keep: list[object] = []  # merged schemas, kept alive so their ids stay unique
        self._queue: list[tuple[int, object, Slot]] = []
        self._shared: dict[object, int] = {}
        self._regions: dict[object, list] = {}
        self._deadline = time.monotonic() + options.max_seconds
        self._slot = Slot("")

    # -- driver ---------------------------------------------------------------------------------
    def compile(self) -> Program:
        try:
            root = self.fragment(self.doc.root, Slot(""))
            while self._queue:
                if time.monotonic() > self._deadline:
                    raise SchemaTooComplex(self._slot.pointer, f"compiling took over {self.options.max_seconds} s", self._slot.via)
                frag, schema, slot = self._queue.pop()
                self._slot = slot
                f = self.prog.fragments[frag]
                self.value(schema, slot, f.start, f.final)
        except ProgramTooLarge as exc:
            raise SchemaTooComplex(self._slot.pointer, str(exc), self._slot.via) from None
        except RecursionError:
            raise SchemaTooComplex(self._slot.pointer, "schema nested too deeply", self._slot.via) from None
        self.prog.finish(root)
        if not self.prog.root_is_live():
            slot, why = self.reasons[0] if self.reasons else (Slot(""), "no document can satisfy the schema")
            raise Unsatisfiable(slot.pointer, why, slot.via)
        return self.prog

    def fragment(self, schema, slot: Slot) -> int:
        """The fragment matching one value of ``schema`` (created once, lowered from the queue)."""
        key = id(schema)
        frag = self._fragments.get(key)
        if frag is None:
            frag = self.prog.new_fragment()
            self._fragments[key] = frag
            self._keep.append(schema)
            self._queue.append((frag, schema, slot))
        return frag

    def shared(self, key, build) -> int:
        """A fragment built once per ``key`` by ``build(start, final)`` (free strings, scalars, any)."""
        frag = self._shared.get(key)
        if frag is None:
            frag = self.prog.new_fragment()
            self._shared[key] = frag
            f = self.prog.fragments[frag]
            build(f.start, f.final)
        return frag

    def call(self, schema, slot: Slot, src: int, dst: int) -> None:
        schema, slot = self.follow_refs(schema, slot)
        if schema is True or (isinstance(schema, dict) and is_trivial(schema)):
            self.any_value(src, dst)
        elif schema is False:
            self.never(slot, "'false' schema")
        else:
            self.prog.call(src, self.fragment(schema, slot), dst)

    def follow_refs(self, schema, slot: Slot):
        """A schema that is only a ``$ref`` is its target: call the target's fragment directly, so
        a recursion level costs one frame, not two."""
        for _ in range(64):
            if not (isinstance(schema, dict) and "$ref" in schema and isinstance(schema["$ref"], str)):
                return schema, slot
            rules = constraints(schema)
            if len(rules) != 1:
                return schema, slot
            self.check_keywords(schema, slot)
            ref = rules["$ref"]
            pointer, schema = self.doc.resolve(ref, slot.pointer)
            slot = Slot(pointer, slot.via + (ref,))
        raise InvalidSchema(slot.pointer, "a $ref cycle that never reaches a schema", slot.via)

    def state(self, src: int) -> int:
        return self.prog.new_state(self.prog.owner[src])

    # -- one JSON value -------------------------------------------------------------------------
    def value(self, schema, slot: Slot, src: int, dst: int) -> None:
        self._slot = slot
        if schema is True:
            return self.any_value(src, dst)
        if schema is False:
            return self.never(slot, "'false' schema")
        if not isinstance(schema, dict):
            raise InvalidSchema(slot.pointer, f"a schema must be an object or a boolean, not {type(schema).__name__}", slot.via)
        self.check_keywords(schema, slot)
        rules = constraints(schema)
        if "$ref" in rules:
            ref = rules.pop("$ref")
            if not isinstance(ref, str):
                raise InvalidSchema(slot.pointer, "$ref must be a string", slot.via)
            target_ptr, target = self.doc.resolve(ref, slot.pointer)
            target_slot = Slot(target_ptr, slot.via + (ref,))
            if not rules:
                return self.call(target, target_slot, src, dst)
            if ref in slot.via:
                raise UnsupportedKeyword(slot.pointer, "$ref", "a recursive reference beside other keywords", slot.via)
            return self.value(self.meet(rules, target, target_slot), target_slot, src, dst)
        if "allOf" in rules:
            parts = rules.pop("allOf")
            if not isinstance(parts, list) or not parts:
                raise InvalidSchema(child(slot.pointer, "allOf"), "allOf must be a non-empty array", slot.via)
            merged = {}  # the branches first: their properties come before the schema's own
            for i, part in enumerate(parts + [rules]):
                merged = self.meet(merged, part, slot.at("allOf", i) if i < len(parts) else slot)
                if merged is False:
                    self.never(slot, "allOf branches that cannot meet")
                    return
            return self.value(merged, slot, src, dst)
        for keyword in ("anyOf", "oneOf"):
            if keyword in rules:
                branches = rules.pop(keyword)
                if not isinstance(branches, list) or not branches:
                    raise InvalidSchema(child(slot.pointer, keyword), f"{keyword} must be a non-empty array", slot.via)
                met = [self.meet(rules, b, slot.at(keyword, i)) for i, b in enumerate(branches)]
                if keyword == "oneOf":
                    exact = exact_branches(met, lambda b: self.follow_refs(b, slot)[0])
                    if exact is None:
                        raise UnsupportedKeyword(child(slot.pointer, keyword), "oneOf", "branches not provably disjoint", slot.via)
                    met = exact
                for i, branch in enumerate(met):
                    self.value(branch, slot.at(keyword, i), src, dst)
                return
        if "not" in rules:
            rules = self.negate(rules, slot)
            if rules is False:
                return self.never(slot, "'not' of a schema every value satisfies")
        if "enum" in rules or "const" in rules:
            return self.literals(rules, slot, src, dst)
        self.typed(rules, slot, src, dst)

    def negate(self, rules: dict, slot: Slot):
        """``not`` where its complement is exact here: types, literal values, one pattern, one
        required name. The result is ``rules`` narrowed (internal ``_not_*`` keys), or ``False``."""
        rules = dict(rules)
        neg, nslot = self.follow_refs(rules.pop("not"), slot.at("not"))
        if neg is False:
            return rules
        if neg is True or is_trivial(neg):
            return False
        if not isinstance(neg, dict):
            raise InvalidSchema(nslot.pointer, "a schema must be an object or a boolean", nslot.via)
        self.check_keywords(neg, nslot)
        what = constraints(neg)
        declared = rules.get("type", sorted(set(TYPES) - {"integer"}))
        types = {declared} if isinstance(declared, str) else set(declared)
        if "number" in types:
            types.add("integer")

        def only(*kinds):
            return sorted(types & set(kinds))

        if what.keys() == {"type"}:
            banned = {what["type"]} if isinstance(what["type"], str) else set(what["type"])
            if "number" in banned:
                banned.add("integer")
            if "integer" in banned and "number" not in banned and "number" in types:
                raise UnsupportedKeyword(nslot.pointer, "not", "'not integer' among numbers", slot.via)
            rules["type"] = sorted(types - banned)
        elif what.keys() <= {"enum", "const"}:
            values = list(what.get("enum", [])) + ([what["const"]] if "const" in what else [])
            if len(what) == 2:
                values = [v for v in values if json_in(v, [what["const"]])]
            if any(isinstance(v, (dict, list)) for v in values):
                raise UnsupportedKeyword(nslot.pointer, "not", "'not' of object or array values", slot.via)
            rules["_not_values"] = list(rules.get("_not_values", [])) + values
        elif what.keys() == {"pattern"}:  # non-strings satisfy any pattern, so only strings remain
            rules["type"] = only("string")
            rules["_not_patterns"] = tuple(rules.get("_not_patterns", ())) + (what["pattern"],)
        elif what.keys() == {"required"} and len(what["required"]) == 1:
            rules["type"] = only("object")
            rules["_absent"] = list(rules.get("_absent", [])) + list(what["required"])
        else:
            raise UnsupportedKeyword(nslot.pointer, "not", "only 'not' of type, enum/const, one pattern or one "
                                     "required name is exact here", slot.via)
        if not rules["type"] if "type" in rules else False:
            return False
        return rules

    def meet(self, a, b, slot: Slot):
        """``a`` and ``b`` merged into one schema (``$ref`` in ``b`` inlined, up to a bound)."""
        if b is True:
            return a
        if b is False:
            return False
        if not isinstance(b, dict):
            raise InvalidSchema(slot.pointer, f"a schema must be an object or a boolean, not {type(b).__name__}", slot.via)
        self.check_keywords(b, slot)
        if is_trivial(a):
            return b
        seen: list[str] = []

        def resolve(s):
            s = constraints(s) if isinstance(s, dict) else s
            while isinstance(s, dict) and "$ref" in s:
                ref = s["$ref"]
                if ref in seen or len(seen) > 32:
                    raise UnsupportedKeyword(slot.pointer, "$ref", "a recursive reference merged with other keywords", slot.via)
                seen.append(ref)
                _, target = self.doc.resolve(ref, slot.pointer)
                rest = {k: v for k, v in s.items() if k != "$ref"}
                if target is False:
                    return False
                if target is True:
                    s = rest
                    continue
                self.check_keywords(target, slot)
                s = merge(rest, constraints(target), slot.pointer, lambda x: x) if rest else constraints(target)
            return s

        merged = merge(a, b, slot.pointer, resolve)
        self._keep.append(merged)
        return merged

    def check_keywords(self, schema: dict, slot: Slot) -> None:
        for key in schema:
            if key in UNSUPPORTED:
                raise UnsupportedKeyword(child(slot.pointer, key), key, via=slot.via)

    # -- literals -------------------------------------------------------------------------------
    def literals(self, rules: dict, slot: Slot, src: int, dst: int) -> None:
        values = list(rules.pop("enum")) if "enum" in rules else None
        if "const" in rules:
            const = rules.pop("const")
            values = [const] if values is None or json_in(const, values) else []
        if not isinstance(values, list):
            raise InvalidSchema(child(slot.pointer, "enum"), "enum must be an array", slot.via)
        if rules:
            check = Validator(_plain_schema(rules))  # the same semantics, on each candidate value
            values = [v for v in values if check.is_valid(v)]
        if not values:
            self.never(slot, "no enum/const value satisfies the schema")
            return
        strings = [v for v in values if isinstance(v, str)]
        if strings:
            self.literal_string(strings, src, dst)
        for v in values:
            if not isinstance(v, str):
                self.literal_value(v, src, dst)

    def literal_string(self, strings, src: int, dst: int) -> None:
        """A quoted string equal to one of ``strings``, scalar by scalar (literal policy)."""
        open_, close = self.state(src), self.state(src)
        self.prog.text(src, b'"', open_)
        self.lower_chardfa(chardfa.literal_strings(strings), open_, close, literal=True)
        self.prog.text(close, b'"', dst)

    def literal_value(self, v, src: int, dst: int) -> None:
        if v is None or isinstance(v, bool):
            self.prog.text(src, json.dumps(v).encode(), dst)
        elif isinstance(v, (int, float)):
            for text in _number_texts(v):
                self.prog.text(src, text.encode(), dst)
        elif isinstance(v, str):
            self.literal_string([v], src, dst)
        elif isinstance(v, list):
            self.sequence([v_ for v_ in v], b"[", b"]", src, dst, lambda item, a, b: self.literal_value(item, a, b))
        elif isinstance(v, dict):
            def member(kv, a, b):
                key_end, val_start = self.state(a), self.state(a)
                self.literal_string([kv[0]], a, key_end)
                self.colon(key_end, val_start)
                self.literal_value(kv[1], val_start, b)
            self.sequence(list(v.items()), b"{", b"}", src, dst, member)
        else:
            raise InvalidSchema(self._slot.pointer, f"enum value {v!r} is not JSON", self._slot.via)

    def sequence(self, items, open_: bytes, close: bytes, src: int, dst: int, emit) -> None:
        """``open_`` items separated by commas ``close``, whitespace where JSON allows it."""
        cur = self.state(src)
        self.prog.text(src, open_, cur)
        for i, item in enumerate(items):
            start = self.state(src)
            if i:
                self.comma(cur, start)
            else:
                self.ws(cur, start)
            cur = self.state(src)
            emit(item, start, cur)
        end = self.state(src)
        self.ws(cur, end)
        self.prog.text(end, close, dst)

    # -- typed values ---------------------------------------------------------------------------
    def typed(self, rules: dict, slot: Slot, src: int, dst: int) -> None:
        declared = rules.get("type")
        if declared is None:
            types = set(TYPES) - {"integer"}
        else:
            types = {declared} if isinstance(declared, str) else set(declared)
            unknown = [t for t in types if t not in TYPES]
            if unknown or not types and not isinstance(declared, list):
                raise InvalidSchema(child(slot.pointer, "type"), f"unknown type {unknown[0] if unknown else declared!r}", slot.via)
            if "number" in types:
                types.discard("integer")
        if not types:
            self.never(slot, "an empty set of types")
        for t in sorted(types):
            getattr(self, "lower_" + t)(rules, slot, src, dst)

    def lower_null(self, rules, slot, src, dst):
        if not json_in(None, rules.get("_not_values", ())):
            self.prog.text(src, b"null", dst)

    def lower_boolean(self, rules, slot, src, dst):
        for value in (True, False):
            if not json_in(value, rules.get("_not_values", ())):
                self.prog.text(src, json.dumps(value).encode(), dst)

    def lower_integer(self, rules, slot, src, dst):
        """An integer is an integral number: written ``7``, or as a decimal with a zero fraction ``7.0``."""
        k = rules.get("multipleOf")
        step = 1 if k is None else _integer_step(k, child(slot.pointer, "multipleOf"), slot.via)
        self.lower_number({**rules, "multipleOf": step}, slot, src, dst)

    def lower_number(self, rules, slot, src, dst):
        lo, hi = rules.get("minimum"), rules.get("maximum")
        xlo, xhi = rules.get("exclusiveMinimum"), rules.get("exclusiveMaximum")
        if isinstance(xlo, bool):  # draft 4: a flag on minimum
            xlo, lo = (lo, None) if xlo else (None, lo)
        if isinstance(xhi, bool):
            xhi, hi = (hi, None) if xhi else (None, hi)
        excluded = [v for v in rules.get("_not_values", ()) if isinstance(v, (int, float)) and not isinstance(v, bool)]
        key = ("number", _num_key(lo), _num_key(hi), _num_key(xlo), _num_key(xhi), _num_key(rules.get("multipleOf")),
               tuple(map(_num_key, excluded)))
        try:
            frag = self._shared.get(key)
            if frag is None:
                dfa = number_dfa(False, minimum=lo, maximum=hi, exclusive_minimum=xlo,
                                 exclusive_maximum=xhi, multiple_of=rules.get("multipleOf"), pointer=slot.pointer)
                for v in excluded:  # every spelling of that value: 2, 2.0, 2.00 ...
                    dfa = chardfa.difference(dfa, number_dfa(False, minimum=v, maximum=v))
                if not dfa.accepting:
                    raise Unsatisfiable(slot.pointer, "no number is left once the excluded values are removed")
                frag = self.shared(key, lambda a, b: self.lower_chardfa(dfa, a, b, literal=None))
        except Unsatisfiable as exc:
            self.never(slot, exc.reason)
            return
        except SchemaError as exc:
            exc.via = slot.via
            raise
        self.prog.call(src, frag, dst)

    def lower_string(self, rules, slot, src, dst):
        patterns = rules.get("pattern", ())
        formats = rules.get("format", ())
        patterns = patterns if isinstance(patterns, tuple) else (patterns,)
        formats = formats if isinstance(formats, tuple) else (formats,)
        lo, hi = rules.get("minLength", 0), rules.get("maxLength")
        for name, bound in (("minLength", lo), ("maxLength", hi)):
            if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool) or bound < 0):
                if not (isinstance(bound, float) and bound.is_integer() and bound >= 0):
                    raise InvalidSchema(child(slot.pointer, name), f"{name} must be a non-negative integer", slot.via)
        lo, hi = int(lo), None if hi is None else int(hi)
        dfa: CharDFA | None = None
        try:
            for p in patterns:
                if not isinstance(p, str):
                    raise InvalidSchema(child(slot.pointer, "pattern"), "pattern must be a string", slot.via)
                pd = pattern_dfa(p, child(slot.pointer, "pattern"))
                dfa = pd if dfa is None else chardfa.intersect(dfa, pd)
            for f in formats:
                fd = format_dfa(f) if isinstance(f, str) else None
                if fd is None:
                    self.warn(f"unknown format {f!r} {_where(slot)} is treated as a plain string")
                    continue
                dfa = fd if dfa is None else chardfa.intersect(dfa, fd)
            excluded = [v for v in rules.get("_not_values", ()) if isinstance(v, str)]
            if excluded:
                dfa = chardfa.difference(dfa or chardfa.any_string(), chardfa.literal_strings(excluded))
            for p in rules.get("_not_patterns", ()):
                dfa = chardfa.difference(dfa or chardfa.any_string(), pattern_dfa(p, child(slot.pointer, "not", "pattern")))
            if dfa is None and lo == 0 and hi is None:
                self.prog.call(src, self.shared("string", self.free_string), dst)
                return
            dfa = dfa or chardfa.any_string()
            if lo or hi is not None:
                dfa = chardfa.with_length(dfa, lo, hi)
        except OverflowError as exc:
            raise SchemaTooComplex(slot.pointer, f"string automaton has {exc}", slot.via) from None
        except SchemaError as exc:
            exc.via = slot.via
            raise
        if dfa.is_empty:
            self.never(slot, "no string satisfies pattern/format/length")
            return
        self.quoted(dfa, src, dst, literal=False)

    def quoted(self, dfa: CharDFA, src: int, dst: int, literal: bool) -> None:
        open_, close = self.state(src), self.state(src)
        self.prog.text(src, b'"', open_)
        self.lower_chardfa(dfa, open_, close, literal)
        self.prog.text(close, b'"', dst)

    def free_string(self, src: int, dst: int) -> None:
        self.quoted(chardfa.any_string(), src, dst, literal=False)

    def lower_chardfa(self, dfa: CharDFA, src: int, dst: int, literal: bool | None) -> None:
        """Scalar automaton to bytes: ``literal=None`` means ASCII only, scalars are bytes as they are."""
        states = [self.state(src) for _ in range(dfa.size)]
        self.prog.epsilon(src, states[dfa.start])
        for q in dfa.accepting:
            self.prog.epsilon(states[q], dst)
        for q, row in enumerate(dfa.edges):
            by_target: dict[int, list[tuple[int, int]]] = {}
            for lo, hi, t in row:
                by_target.setdefault(t, []).append((lo, hi))
            for t, ranges in by_target.items():
                a, b = states[q], states[t]
                if literal is None:
                    for lo, hi in ranges:
                        self.prog.byte(a, lo, hi, b)
                    continue
                rest = tuple(ranges)
                for lo, hi in ascii_raw(rest):
                    self.prog.byte(a, lo, hi, b)
                if literal:  # one scalar: its few other spellings inline
                    add_paths(self.prog, a, b, scalar_paths(rest, True, raw_ascii=False))
                else:  # escapes and multi-byte forms: one shared fragment per scalar set
                    frag = self.shared(("scalar", rest), lambda x, y, r=rest: add_paths(self.prog, x, y, scalar_paths(r, False, raw_ascii=False)))
                    self.prog.call(a, frag, b)

    def lower_array(self, rules, slot, src, dst):
        prefix, items = rules.get("prefixItems"), rules.get("items", True)
        if isinstance(items, list):  # draft 7 tuple form
            prefix, items = items, rules.get("additionalItems", True)
            item_slot = slot.at("additionalItems")
        else:
            item_slot = slot.at("items")
        prefix = prefix or []
        lo, hi = _count(rules, "minItems", slot), _count(rules, "maxItems", slot)
        if hi is not None and lo > hi:
            self.never(slot, "minItems above maxItems")
            return
        cap = hi if hi is not None else max(1, lo, len(prefix))
        counts = [self.state(src) for _ in range(cap + 1)]
        self.prog.text(src, b"[", counts[0])
        end = self.state(src)
        for n, here in enumerate(counts):
            if n >= lo:
                self.ws(here, end)
            if hi is not None and n >= hi:
                continue
            schema, where = (prefix[n], slot.at("prefixItems" if "prefixItems" in rules else "items", n)) if n < len(prefix) else (items, item_slot)
            if schema is False:
                continue
            start = self.state(src)
            if n:
                self.comma(here, start)
            else:
                self.ws(here, start)
            self.call(schema, where, start, counts[min(n + 1, cap)])
        self.prog.text(end, b"]", dst)

    def lower_object(self, rules, slot, src, dst):
        props = rules.get("properties", {})
        if rules.get("_absent"):  # 'not required': the name may not appear at all
            props = {**props, **{name: False for name in rules["_absent"]}}
        patterns = rules.get("patternProperties", {})
        extra = rules.get("additionalProperties", False if self.options.strict else True)
        required = rules.get("required", [])
        if not isinstance(props, dict) or not isinstance(patterns, dict) or not isinstance(required, list):
            raise InvalidSchema(slot.pointer, "properties/patternProperties must be objects and required an array", slot.via)
        lo, hi = _count(rules, "minProperties", slot), _count(rules, "maxProperties", slot)
        pattern_dfas = []
        for p, sub in patterns.items():
            pattern_dfas.append((pattern_dfa(p, child(slot.pointer, "patternProperties", p)), sub, slot.at("patternProperties", p)))
        members = []  # (name, schema, slot, required)
        for name, sub in props.items():
            hits = [(s, ps) for d, s, ps in pattern_dfas if d.matches(name)]
            for s, ps in hits:
                sub = self.meet(sub, s, ps) if isinstance(sub, dict) else (False if sub is False else s)
            members.append((name, sub, slot.at("properties", name), name in required))
        for name in required:
            if not isinstance(name, str):
                raise InvalidSchema(child(slot.pointer, "required"), "required names must be strings", slot.via)
            if name in props:
                continue
            hits = [(s, ps) for d, s, ps in pattern_dfas if d.matches(name)]
            sub, where = (hits[0] if len(hits) == 1 else (extra, slot.at("additionalProperties")))
            if len(hits) > 1:
                raise UnsupportedKeyword(child(slot.pointer, "patternProperties"), "patternProperties", "a required name matching several patterns", slot.via)
            members.append((name, sub, where, True))
        for name, sub, where, req in members:
            if req and sub is False:
                self.never(slot, f"required property {name!r} can never be valid")
                return
        names = {m[0] for m in members}
        keys = self.additional_keys(names, pattern_dfas, extra, slot)
        n_min = sum(1 for m in members if m[3])
        if hi is not None and (lo > hi or n_min > hi):
            self.never(slot, "more properties required than maxProperties allows")
            return
        cap = max(1, lo) if hi is None else hi
        grid = [[self.state(src) for _ in range(cap + 1)] for _ in range(len(members) + 1)]
        self.prog.text(src, b"{", grid[0][0])
        end = self.state(src)
        for i, (name, sub, where, req) in enumerate(members):
            member = None if sub is False else self.member(lambda a, b, n=name: self.literal_string([n], a, b), sub, where)
            for c in range(cap + 1):
                if not req:
                    self.prog.epsilon(grid[i][c], grid[i + 1][c])
                if member is not None and (hi is None or c < hi):
                    self.next_member(grid[i][c], c, member, grid[i + 1][min(c + 1, cap)])
        last = grid[-1]
        extras = [self.member(lambda a, b, k=k: self.prog.call(a, k, b), sub, where) for k, sub, where in keys]
        for c in range(cap + 1):
            if c >= lo:
                self.ws(last[c], end)
            if hi is not None and c >= hi:
                continue
            for member in extras:
                self.next_member(last[c], c, member, last[min(c + 1, cap)])
        self.prog.text(end, b"}", dst)

    def member(self, key, sub, where: Slot) -> int:
        """A fragment for one ``"key": value`` pair, shared by every count state that emits it."""
        frag = self.prog.new_fragment(counted=False)
        f = self.prog.fragments[frag]
        key_end, val = self.prog.new_state(frag), self.prog.new_state(frag)
        key(f.start, key_end)
        self.colon(key_end, val)
        self.call(sub, where, val, f.final)
        return frag

    def next_member(self, src: int, count: int, member: int, dst: int) -> None:
        start = self.state(src)
        self.separator(src, start, count)
        self.prog.call(start, member, dst)

    def additional_keys(self, names, pattern_dfas, extra, slot: Slot):
        """(key fragment, value schema, slot) for keys beyond the declared names.

        The keys are split into regions by which patterns they match; a key matching several
        patterns must satisfy all their schemas, one matching none the additionalProperties schema.
        """
        cache_key = ("keys", frozenset(names), tuple(ps.pointer.rsplit("/", 1)[-1] for _, _, ps in pattern_dfas))
        regions = self._regions.get(cache_key)
        if regions is None:
            regions = self._regions[cache_key] = self.key_regions(names, [d for d, _, _ in pattern_dfas], slot)
        out = []
        for i, (keys, hits) in enumerate(regions):
            subs = [pattern_dfas[h][1:] for h in hits]
            if not subs:
                if extra is not False:
                    out.append((self.shared(cache_key + (i,), lambda a, b, k=keys: self.quoted(k, a, b, literal=False)),
                                extra, slot.at("additionalProperties")))
                continue
            schema = subs[0][0]
            for sub, _ in subs[1:]:
                schema = both(schema, sub)
            if schema is not False:
                out.append((self.shared(cache_key + (i,), lambda a, b, k=keys: self.quoted(k, a, b, literal=False)),
                            schema, subs[0][1]))
        return out

    def key_regions(self, names, dfas, slot: Slot):
        """Keys other than ``names``, split by which pattern automata they match: (automaton, indexes)."""
        regions = [(chardfa.complement(chardfa.literal_strings(names)), [])]
        for index, d in enumerate(dfas):
            refined = []
            for keys, hits in regions:
                inside, outside = chardfa.intersect(keys, d), chardfa.difference(keys, d)
                if inside.accepting:
                    refined.append((inside, hits + [index]))
                if outside.accepting:
                    refined.append((outside, hits))
            regions = refined
            if len(regions) > 32:
                raise UnsupportedKeyword(child(slot.pointer, "patternProperties"), "patternProperties",
                                         "more than 32 overlapping pattern regions", slot.via)
        return regions

    def any_value(self, src: int, dst: int) -> None:
        """Any JSON value: a shared recursive fragment (its nesting counts against ``max_depth``)."""
        self.prog.call(src, self.shared("any", self._build_any), dst)

    def _build_any(self, src: int, dst: int) -> None:
        for kind in ("null", "boolean", "number", "string", "array"):
            getattr(self, "lower_" + kind)({}, Slot(""), src, dst)
        self.lower_object({"additionalProperties": True}, Slot(""), src, dst)

    # -- punctuation ----------------------------------------------------------------------------
    def ws(self, src: int, dst: int) -> None:
        mode = self.options.whitespace
        if mode == "compact":
            self.prog.epsilon(src, dst)
        elif mode == "flexible":
            loop = self.state(src)
            self.prog.epsilon(src, loop)
            for b in WHITESPACE:
                self.prog.byte(loop, b, b, loop)
            self.prog.epsilon(loop, dst)
        else:
            cur = src
            for _ in range(self.options.max_whitespace):
                self.prog.epsilon(cur, dst)
                nxt = self.state(src)
                for b in WHITESPACE:
                    self.prog.byte(cur, b, b, nxt)
                cur = nxt
            self.prog.epsilon(cur, dst)

    def punct(self, src: int, char: bytes, dst: int) -> None:
        a, b = self.state(src), self.state(src)
        self.ws(src, a)
        self.prog.text(a, char, b)
        self.ws(b, dst)

    def comma(self, src: int, dst: int) -> None:
        self.punct(src, b",", dst)

    def colon(self, src: int, dst: int) -> None:
        self.punct(src, b":", dst)

    def separator(self, src: int, dst: int, count: int) -> None:
        """Before a member: whitespace after ``{``, or a comma after an earlier member."""
        if count:
            self.comma(src, dst)
        else:
            self.ws(src, dst)

    def never(self, slot: Slot, reason: str) -> None:
        self.reasons.append((slot, reason))

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            warnings.warn(message, stacklevel=4)


def _where(slot: Slot) -> str:
    from .errors import describe_pointer

    return describe_pointer(slot.pointer, slot.via)


def _count(rules: dict, name: str, slot: Slot) -> int | None:
    value = rules.get(name)
    if value is None:
        return 0 if name.startswith("min") else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidSchema(child(slot.pointer, name), f"{name} must be a non-negative integer", slot.via)
    if value > 100_000:
        raise SchemaTooComplex(child(slot.pointer, name), f"{name} of {value} is above the limit of 100000", slot.via)
    return value


def _integer_step(k, pointer: str, via) -> int:
    """The multiples of ``k`` that are integers are the multiples of its reduced numerator."""
    from fractions import Fraction

    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise InvalidSchema(pointer, "multipleOf must be a number above 0", via)
    return Fraction(repr(k) if isinstance(k, float) else k).numerator


def _num_key(v):
    return None if v is None else (type(v).__name__, repr(v))


def _number_texts(v) -> list[str]:
    """The canonical texts of a numeric literal: as JSON writes it, and integral values both ways."""
    texts = [json.dumps(v)]
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e16:
        texts.append(str(int(v)))
    elif isinstance(v, int):
        texts.append(f"{v}.0")
    return texts


def _plain_schema(rules: dict) -> dict:
    """Merged rules written back as a user-level schema (accumulated patterns/formats as allOf)."""
    out = {k: v for k, v in rules.items() if not isinstance(v, tuple) and not k.startswith("_")}
    extra = [{k: x} for k, v in rules.items() if isinstance(v, tuple) and not k.startswith("_") for x in v]
    extra += [{"not": {"enum": rules["_not_values"]}}] if rules.get("_not_values") else []
    extra += [{"not": {"pattern": p}} for p in rules.get("_not_patterns", ())]
    extra += [{"not": {"required": [name]}} for name in rules.get("_absent", ())]
    if extra:
        out["allOf"] = extra
    return out
