"""Lowering of scalar values: null, booleans, numbers and strings (scalar automata to bytes)."""

from __future__ import annotations

import functools
import itertools
import json
import math
from decimal import Decimal

from . import chardfa
from .chardfa import CharDFA
from automaton.counted import CountedBlock

from .context import REGEX_DIALECT, where
from .counting import FOREVER_MAX, by_target, counted, counted_group, template
from .errors import SchemaError, SchemaTooComplex, Unsatisfiable, UnsupportedKeyword
from .formats import CHECKED_BUT_OPEN, UNCOMPLEMENTED, format_terms
from .values import json_in
from .ir import literal_values
from .numbers import MAX_STATES as NUMBER_STATES, common_multiple, number_dfa
from .refs import child
from .regex import either_dfa, pattern_dfa, pattern_terms
from .ir import ABSENT, ANY, NEVER, Node, NumberRules, StringRules, said
from .values import is_number
from .validator_formats import INTEGER_FORMATS, QUOTIENT_LIMIT, ajv_dfa, portable_terms
from .strings import BYTES, FREE, KEY, LITERAL, PLAIN_SCALARS, SURROGATES, add_scalar, ascii_raw, spelled_parts


NON_INTEGER = r"^-?(0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*$"  # a number whose value is not an integer, without exponent


class ScalarLowering:
    """Mixin of ``Lowering``: one method per scalar type, and the scalar-automaton lowering."""

    def lower_null(self, node: Node, slot, src, dst):
        if not json_in(None, node.not_values):
            self.prog.text(src, b"null", dst)

    def lower_boolean(self, node: Node, slot, src, dst):
        for value in (True, False):
            if not json_in(value, node.not_values):
                self.prog.text(src, json.dumps(value).encode(), dst)

    def lower_integer(self, node: Node, slot, src, dst):
        """Integers are written without fraction or exponent: ``7``, never ``7.0`` (as MaskBench's
        labels and Rust's jsonschema read it; python-jsonschema would also take ``7.0``)."""
        self.lower_number(node, slot, src, dst, integer=True)

    def lower_number(self, node: Node, slot, src, dst, integer=False):
        number = node.number or NumberRules()
        lo, hi, xlo, xhi = number.bounds
        if number.not_integer and integer:
            return self.never(slot, "'not integer' of an integer")
        portable = self.options.dialect == "portable"
        formats = node.formats
        not_steps = number.not_multiples
        for step in (*number.multiples, *not_steps) if portable else ():
            if is_number(step) and step > 0:  # Ajv's division is exact below this quotient
                limit = Decimal(QUOTIENT_LIMIT) * Decimal(repr(step))
                xlo = -limit if not is_number(xlo) else max(xlo, -limit)
                xhi = limit if not is_number(xhi) else min(xhi, limit)
        for f in formats if portable else ():
            if f in INTEGER_FORMATS:
                integer, bounds = True, INTEGER_FORMATS[f]
                if bounds is not None:
                    lo = bounds[0] if not is_number(lo) else max(lo, bounds[0])
                    hi = bounds[1] if not is_number(hi) else min(hi, bounds[1])
        excluded = [v for v in node.not_values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        fraction = number.not_integer
        key = ("number", integer, _num_key(lo), _num_key(hi), _num_key(xlo), _num_key(xhi), tuple(map(_num_key, number.multiples)),
               tuple(map(_num_key, excluded)), tuple(map(_num_key, not_steps)), fraction)
        try:
            frag = self._shared.get(key)
            if frag is None:
                dfa = number_dfa(integer, minimum=lo, maximum=hi, exclusive_minimum=xlo, exclusive_maximum=xhi,
                                 multiple_of=common_multiple(number.multiples), pointer=slot.pointer, portable=portable)
                for v in excluded:  # every spelling of that value: 2, 2.0, 2.00 ... (portable: every
                    # text that reads as its double, so the open interval between the next doubles)
                    near = ({"exclusive_minimum": math.nextafter(v, -math.inf),
                             "exclusive_maximum": math.nextafter(v, math.inf)} if portable
                            else {"minimum": v, "maximum": v})
                    try:
                        dfa = chardfa.difference(dfa, number_dfa(integer, **near, portable=False))
                    except Unsatisfiable:  # no integer is that value: nothing to take out
                        continue
                for step in not_steps:  # products of remainders: bounded like the number automaton itself
                    multiples = number_dfa(integer, multiple_of=step, pointer=slot.pointer, portable=False)
                    dfa = chardfa.intersect(dfa, chardfa.complement(multiples), max_states=NUMBER_STATES)
                if fraction:  # not an integer: written with a non-zero fraction digit (canonical shape)
                    dfa = chardfa.intersect(dfa, pattern_dfa(NON_INTEGER, slot.pointer), max_states=NUMBER_STATES)
                if not dfa.accepting:
                    raise Unsatisfiable(slot.pointer, "no number is left once the excluded values are removed")
                frag = self.shared(key, lambda a, b: self.lower_chardfa(dfa, a, b, BYTES))
        except Unsatisfiable as exc:
            self.never(slot, exc.reason)
            return
        except SchemaError as exc:
            exc.via = slot.via
            raise
        self.prog.call(src, frag, dst)

    def lower_string(self, node: Node, slot, src, dst):
        group = counted_group(node, REGEX_DIALECT[self.options.dialect])
        if group is not None:
            self.counted_string(group.dfa, 0, group.most, *self.quotes(src, dst), stepped=group.stepped)
            return
        try:
            terms = self.string_terms(node, slot)
            if terms == [(None, 0, None)]:
                self.prog.call(src, self.shared("string", self.free_string), dst)
                return
            lowered = [term for d, a, b in terms if (term := _lengths(d or chardfa.any_string(), a, b))]
        except OverflowError as exc:
            raise SchemaTooComplex(slot.pointer, f"string automaton has {exc}", slot.via) from None
        if not lowered:
            self.never(slot, "no string satisfies pattern/format/length")
            return
        open_, close = self.quotes(src, dst)
        for dfa, count, a, b in lowered:
            if count:
                self.counted_string(dfa, a, b, open_, close)
            else:
                self.lower_chardfa(dfa, open_, close, FREE)

    def key_language(self, schema, slot, depth: int = 0) -> CharDFA | None:
        """The strings a ``propertyNames`` schema allows, as one scalar automaton (None: any).
        Automata are closed under every boolean keyword, so ``not``, ``allOf``, ``anyOf``, ``oneOf``
        and a ``$ref`` beside other keywords are exact here; words of other types hold of any key."""
        if depth > KEY_DEPTH:
            raise UnsupportedKeyword(slot.pointer, "propertyNames", f"propertyNames nested over {KEY_DEPTH} deep "
                                     "(or referring back to themselves)", slot.via)
        node, slot = self.follow_refs(schema, slot)
        if node is ANY or node is NEVER:
            return None if node is ANY else chardfa.literal_strings([])
        node = self.expanded_node(node, slot.pointer)
        parts = []  # languages every key is in (None: any)
        if node.not_ is not None:
            ruled_out = self.key_language(node.not_, slot.at("not"), depth + 1)
            parts.append(chardfa.literal_strings([]) if ruled_out is None else chardfa.complement(ruled_out))
        if node.ref is not None:
            target, target_slot = self.ref_target(node, slot)
            parts.append(self.key_language(target, target_slot, depth + 1))
        for i, part in enumerate(node.all_of):
            parts.append(self.key_language(part, slot.at("allOf", i), depth + 1))
        for word, branches in (("anyOf", node.any_of), ("oneOf", node.one_of)):
            if branches is not None:
                languages = [self.key_language(b, slot.at(word, i), depth + 1) for i, b in enumerate(branches)]
                parts.append(_exactly_one(languages) if word == "oneOf" else _any_of(languages))
        other = sorted(said(node).keys() - _KEY_FIELDS)
        if other:  # (what ``expanded`` leaves is one of them: a conditional is an allOf by now)
            raise UnsupportedKeyword(slot.pointer, "propertyNames", f"propertyNames with {other[0].rstrip('_')}", slot.via)
        if node.types is not None and "string" not in node.types:
            return chardfa.literal_strings([])
        if node.enum is not None or node.const is not ABSENT or node.string is not None or node.formats or node.not_values:
            values = literal_values(node)
            if values is not None:
                parts.append(chardfa.literal_strings([v for v in values if isinstance(v, str)]))
            try:
                terms = [chardfa.with_length(d or chardfa.any_string(), a, b) for d, a, b in self.string_terms(node, slot)]
            except OverflowError as exc:
                raise SchemaTooComplex(slot.pointer, f"string automaton has {exc}", slot.via) from None
            parts.append(_any_of(terms))
        allowed = None
        for part in parts:
            if part is not None:
                allowed = part if allowed is None else chardfa.intersect(allowed, part)
        return allowed

    def format_outside(self, f, slot) -> tuple:
        """The strings no validator takes as format ``f`` (what a ``not`` of it leaves), as
        length-ranged terms like ``string_terms``': outside python-jsonschema's reading, and portably
        Ajv's where it differs (a format only Ajv checks leaves no string, as the others take any).
        A format with no checker leaves none; one that validators check without our automaton
        (``CHECKED_BUT_OPEN``) or beyond it (``SUBSET_FORMATS``) is refused."""
        if f in UNCOMPLEMENTED:
            raise UnsupportedKeyword(child(slot.pointer, "not", "format"), "not", f"'not' of format {f!r}", slot.via)
        portable = self.options.dialect == "portable"
        found = format_terms(f) if isinstance(f, str) else None
        if found is None:
            if not (portable and portable_terms(f) is not None):  # (Ajv's own: no warning)
                self.warn(f"unknown format {f!r} {where(slot)} is treated as a plain string: 'not' of it allows no string")
            return _NO_STRING
        return _outside(f, portable)

    def string_terms(self, node: Node, slot) -> list:
        """The strings ``node`` allows, as a union of scalar automata each within a length range
        ``(automaton or None for any string, least, most or None)``; most schemas have one term,
        hostname two (its total length is a range)."""
        string = node.string or StringRules()
        formats = node.formats
        lo, hi = int(string.min_length or 0), None if string.max_length is None else int(string.max_length)
        terms: list[tuple[CharDFA | None, int, int | None]] = [(None, lo, hi)]
        try:
            for p in string.patterns:
                found = pattern_terms(p, child(slot.pointer, "pattern"), dialect=REGEX_DIALECT[self.options.dialect])
                terms = [(_meet(d, pd), max(a, c), _least(b, e)) for d, a, b in terms for pd, c, e in found]
            for f in formats:
                if f in CHECKED_BUT_OPEN:  # validators check it: passing it unchecked would be unsound
                    raise UnsupportedKeyword(child(slot.pointer, "format"), "format",
                                             f"format {f!r} is not enforced", slot.via)
                found = None if not isinstance(f, str) else (
                    portable_terms(f) if self.options.dialect == "portable" else format_terms(f))
                if found is None:
                    self.warn(f"unknown format {f!r} {where(slot)} is treated as a plain string")
                    continue
                terms = [(_meet(d, fd), max(a, c), _least(b, e)) for d, a, b in terms for fd, c, e in found]
            excluded = [v for v in node.not_values if isinstance(v, str)]
            if excluded:
                terms = [(chardfa.difference(d or chardfa.any_string(), chardfa.literal_strings(excluded)), a, b)
                         for d, a, b in terms]
            for p in string.not_patterns:
                # a string either reading matches is out (portable): both must find no match
                pointer = child(slot.pointer, "not", "pattern")
                pd = either_dfa(p, pointer) if self.options.dialect == "portable" else pattern_dfa(p, pointer)
                terms = [(chardfa.difference(d or chardfa.any_string(), pd), a, b) for d, a, b in terms]
            for f in string.not_formats:
                outside = self.format_outside(f, slot)
                terms = [(_meet(d, od), max(a, c), _least(b, e)) for d, a, b in terms for od, c, e in outside]
        except SchemaError as exc:
            exc.via = slot.via
            raise
        return terms

    def counted_string(self, dfa: CharDFA, lo: int, hi: int | None, src: int, dst: int, literal: bool = False,
                       stepped: frozenset[int] | None = None) -> None:
        """The scalars of ``dfa``, ``lo..hi`` of them (``stepped``: of its group iterations), as a
        counted block over its template (``compiler.counting``; ``literal``: spelled under the
        literal rules): this grammar gives it only the fragments of its call slots."""
        shape = template(dfa, literal, stepped)
        prog = self.prog
        fragments = tuple(self.scalar_fragment(part, literal) for part in shape.slots)
        prog.counted_block(src, CountedBlock(shape, fragments, lo, hi, dfa.start, dst, prog.owner[src]))

    def string_plan(self, scalars: tuple, plans: dict, literal: bool) -> tuple[list, list]:
        """How a string writes one scalar of ``scalars``: its raw ASCII byte ranges, and the shared
        fragments of its other spellings (split at ASCII, so the big non-ASCII part, the same in almost
        every set, is built once per schema; under the literal rules an ASCII part is only its
        escaped-only scalars, the same for every set of letters); memoised in ``plans``."""
        plan = plans.get(scalars)
        if plan is None:
            plan = plans[scalars] = (ascii_raw(scalars), [self.scalar_fragment(part, literal)
                                                          for part in spelled_parts(scalars, literal)])
        return plan

    def scalar_fragment(self, scalars: tuple, literal: bool) -> int:
        """The shared fragment writing one scalar of ``scalars`` in every way but one raw ASCII byte
        (``add_scalar``); scalars outside ASCII are spelled alike under both rules, so they share one."""
        literal = literal and scalars[0][0] <= 0x7F
        prog = self.prog
        return self.shared(("scalar", scalars, literal), lambda x, y: add_scalar(prog, x, y, scalars, literal=literal))

    def quotes(self, src: int, dst: int) -> tuple[int, int]:
        """The states just inside a string's quotes, written from ``src`` and on to ``dst``."""
        open_, close = self.state(src), self.state(src)
        self.prog.text(src, b'"', open_)
        self.prog.text(close, b'"', dst)
        return open_, close

    def quoted(self, dfa: CharDFA, src: int, dst: int, spelling: str) -> None:
        self.lower_chardfa(dfa, *self.quotes(src, dst), spelling)

    def key_string(self, dfa: CharDFA, src: int, dst: int) -> None:
        """A quoted key beyond an object's names (``dfa``: every string but them), spelled under the
        literal rules, as a block of no bound: its states are made only where a walk goes, and its
        liveness is arithmetic (almost a fifth of a median compile went to writing them out). A
        few states are written out (a block would save nothing), and so is the prelude's any object."""
        if dfa.size <= KEY_WRITTEN_MAX or self.writes_all:
            return self.quoted(dfa, src, dst, KEY)
        self.counted_string(dfa, 0, None, *self.quotes(src, dst), literal=True)

    def free_string(self, src: int, dst: int) -> None:
        self.quoted(chardfa.any_string(), src, dst, FREE)

    def lower_chardfa(self, dfa: CharDFA, src: int, dst: int, spelling: str) -> None:
        """Scalar automaton to bytes, each scalar spelled as ``spelling`` says: ``BYTES`` (ASCII only,
        scalars are bytes as they are), ``LITERAL`` (a literal's scalars, their few other spellings
        inline), ``KEY`` (the literal rules over sets of scalars: keys beyond the names) or ``FREE``."""
        prog = self.prog
        states = prog.new_states(prog.owner[src], dfa.size)
        prog.epsilon(src, states[dfa.start])
        for q in dfa.accepting:
            prog.epsilon(states[q], dst)
        plans: dict[tuple, tuple[list, list]] = {}  # per scalar set: its raw ASCII ranges, its fragments
        for q, row in enumerate(dfa.edges):
            a = states[q]
            edges, calls = prog.edges[a], prog.calls[a]
            for t, rest in by_target(row):
                b = states[t]
                if spelling == BYTES:
                    edges += [(lo, hi, b) for lo, hi in rest]
                    continue
                if spelling == LITERAL:  # one scalar: its few other spellings inline
                    edges += [(lo, hi, b) for lo, hi in ascii_raw(rest)]
                    add_scalar(prog, a, b, rest, literal=True)
                    continue
                plan = self.string_plan(rest, plans, spelling == KEY)
                edges += [(lo, hi, b) for lo, hi in plan[0]]
                calls += [(frag, b) for frag in plan[1]]
        forever = spelling in (KEY, FREE) and 2 <= dfa.size <= FOREVER_MAX
        if dfa.size < BLOCK_MIN and not forever:
            return
        finishing = dfa.finishing(None if spelling == BYTES else SURROGATES)
        if dfa.size >= BLOCK_MIN and len(finishing) == dfa.size:
            prog.finishes_like(states, dst)  # each state can finish, and then goes on from dst
        if forever:
            # states that read any plain text forever (an additional key past the names it might
            # still spell, a pattern's ``.*``): the token index need not explore them to know it
            prog.reads_plain_forever(states[q] for q in dfa.closed_under(PLAIN_SCALARS) & finishing)


def _meet(dfa: CharDFA | None, other: CharDFA) -> CharDFA:
    return other if dfa is None else chardfa.intersect(dfa, other)


def _least(a: int | None, b: int | None) -> int | None:
    """The tighter of two upper bounds (None: no bound)."""
    return b if a is None else a if b is None else min(a, b)


def _lengths(dfa: CharDFA, lo: int, hi: int | None) -> tuple | None:
    """``dfa`` within ``lo..hi`` scalars as ``(dfa, counted, lo, hi)``: a counted block over ``dfa``
    when ``counted`` (``compiler.counting``), else ``dfa`` is the product; None when no string is left."""
    count = counted(dfa, lo, hi)
    if count is None:
        return None
    if not count:
        dfa = chardfa.with_length(dfa, lo, hi)
    return None if dfa.is_empty else (dfa, count, lo, hi)


KEY_WRITTEN_MAX = 4  # key automata up to this size are written out, larger ones are blocks
BLOCK_MIN = 32  # scalar automata from this size on are checked for a liveness block (see Program)


def _num_key(v):
    return None if v is None else (type(v).__name__, repr(v))


KEY_DEPTH = 32  # propertyNames' subschemas (and references) inside one another, at most
# what a propertyNames node may say: of strings, of other types (which hold of any key), and the
# boolean keywords (``key_language`` reads each)
_KEY_FIELDS = frozenset({"types", "enum", "const", "formats", "not_values", "string", "number", "object", "array",
                         "not_", "ref_text", "all_of", "any_of", "one_of"})


def _any_of(languages: list) -> CharDFA | None:
    """The union of key languages (None: any key)."""
    if any(d is None for d in languages):
        return None
    return chardfa.union_of(languages)


def _exactly_one(languages: list) -> CharDFA:
    """The keys in exactly one of ``languages`` (None: any key): each less the union of the others,
    those before it and after it (unions of prefixes and suffixes, so a linear count of products)."""
    languages = [chardfa.any_string() if d is None else d for d in languages]
    before = [chardfa.literal_strings([])]
    for d in languages[:-1]:
        before.append(chardfa.union(before[-1], d))
    after = chardfa.literal_strings([])
    out = chardfa.literal_strings([])
    for i in reversed(range(len(languages))):
        out = chardfa.union(out, chardfa.difference(languages[i], chardfa.union(before[i], after)))
        after = chardfa.union(after, languages[i])
    return out


_NO_STRING = ((chardfa.literal_strings([]), 0, None),)  # terms that allow no string


@functools.lru_cache(maxsize=None)  # known formats only (``format_outside`` refuses the rest first)
def _outside(f: str, portable: bool) -> tuple:
    """``format_outside``'s terms, made once per process: for each set of the reading's terms whose
    automata a string is in (and not in the others'), the lengths none of that set allows."""
    found = format_terms(f)
    ajv = ajv_dfa(f) if portable else None
    out = []
    for inside in itertools.product((True, False), repeat=len(found)):
        dfa = chardfa.any_string() if ajv is None else chardfa.complement(ajv)
        for (d, _, _), held in zip(found, inside):
            dfa = chardfa.intersect(dfa, d) if held else chardfa.difference(dfa, d)
        if not dfa.is_empty:
            dfa = dfa.trimmed().frozen()
            out.extend((dfa, lo, hi) for lo, hi in _gaps([(a, b) for (_, a, b), held in zip(found, inside) if held]))
    return tuple(out) or _NO_STRING


def _gaps(ranges: list) -> list:
    """The lengths in none of ``ranges`` ((least, most or None), each inclusive), as such ranges."""
    out, at = [], 0
    for lo, hi in sorted(ranges):
        if lo > at:
            out.append((at, lo - 1))
        if hi is None:
            return out
        at = max(at, hi + 1)
    return out + [(at, None)]
