"""Lowering of objects and arrays, the free "any value", and the whitespace between tokens."""

from __future__ import annotations

import functools
import math

from automaton.counted import CountedBlock

from . import chardfa
from .context import REGEX_DIALECT, WHITESPACE, Slot, count_of
from .counting import items_template
from .ir import ANY, NEVER, ArrayRules, Node, NumberRules, ObjectRules, make
from .errors import SchemaError, SchemaTooComplex, UnsupportedKeyword
from .merge import both_nodes, copied, trivial
from .any_order import ANY_ORDER_MAX, GRID_MAX, LAZY_ORDER_MAX
from .one_of import pinned_values
from .values import json_equal
from .refs import child
from .regex import pattern_dfa

MAX_CONTAINS = 6  # contains met in one allOf, each found or not (2**n columns)
MAX_WITNESSES = 6  # 'some member' constraints met by additional properties of one object (2**n states)
MAX_DISTINCT_SETS = 4096  # sets of values a uniqueItems array may have used, a state each, made at compile
DISTINCT_GRID_MAX = 256  # sets up to which they are made at compile (past it, where a generation reaches them)
MAX_INTEGER_VALUES = 64  # integers between bounds read as a finite set of item values
COUNTED_ITEMS_MIN = 16  # this many optional items or more are a counted block (no contains or prefixItems)


def item_cases(items, also: list) -> list:
    """An array item met with each set of the ``contains`` schemas ``also``, indexed by the set as
    a bit mask (0: the item alone): what ``lower_array`` calls, and the deferral judges."""
    return [functools.reduce(both_nodes, [c for i, c in enumerate(also) if found >> i & 1], items)
            for found in range(1 << len(also))]


class ContainerLowering:
    """Mixin of ``Lowering``: arrays and objects count their items in a grid of states and call
    one fragment per member, so an item's schema is lowered once whatever the count."""

    def lower_array(self, node: Node, slot, src, dst):
        if any(isinstance(v, list) for v in node.not_values):
            return self.other_than(node, list, slot, src, dst)
        arr = node.array or ArrayRules()
        prefix = list(arr.prefix)
        items = arr.rest if arr.rest is not None else ANY
        prefix_word, item_slot = ("items", slot.at("additionalItems")) if arr.listed else ("prefixItems", slot.at("items"))
        lo, hi = count_of(arr.min_items, "minItems", slot), count_of(arr.max_items, "maxItems", slot)
        if hi is not None and lo > hi:
            self.never(slot, "minItems above maxItems")
            return
        # contains: items matching it are counted, up to at least minContains (at most maxContains)
        wanted = arr.contains
        least = count_of(arr.min_contains, "minContains", slot)
        most = count_of(arr.max_contains, "maxContains", slot) if wanted is not None else None
        if wanted is None or (least == 0 and most is None):
            wanted, least = None, 0
        if most is not None and least > most:
            self.never(slot, "minContains above maxContains")
            return
        # each column a count of matches; with contains from several allOf branches (each once,
        # ``_contains_also``) a set of those found instead, as bits
        also = [wanted, *arr.contains_also] if wanted is not None else []
        if len(also) > MAX_CONTAINS:
            raise UnsupportedKeyword(child(slot.pointer, "contains"), "contains",
                                     f"more than {MAX_CONTAINS} contains met in one allOf", slot.via)
        if len(also) > 1 and (least != 1 or most is not None):  # a set of those found has no counts
            raise UnsupportedKeyword(child(slot.pointer, "minContains" if least != 1 else "maxContains"), "contains",
                                     "minContains or maxContains beside a contains met from another allOf branch", slot.via)
        unique_strings = False  # a uniqueItems array of open strings: kept apart where written (``keys.py``)
        if arr.unique and (hi is None or hi > 1):
            if also:
                raise UnsupportedKeyword(child(slot.pointer, "uniqueItems"), "uniqueItems", "uniqueItems beside contains", slot.via)
            unique_strings = not prefix and self.open_strings(items, item_slot)
            if unique_strings and lo >= 2 and self.distinct_strings_below(items, item_slot, lo):
                self.never(slot, "minItems above the distinct strings the items allow")
                return
            if not unique_strings:
                positions = [(s, slot.at(prefix_word, i)) for i, s in enumerate(prefix)]
                return self.distinct_items(positions + [(items, item_slot)], lo, hi, slot, src, dst)
        if (wanted is None and not prefix and hi is not None and hi - lo >= COUNTED_ITEMS_MIN and not self.writes_all
                and not unique_strings):
            item, _ = self.callee(items, item_slot)
            if item is not None:
                self.counted_items(item, lo, hi, src, dst)
                return
        top = (1 << len(also)) - 1 if len(also) > 1 else least if most is None else most
        cap = hi if hi is not None else max(1, lo, len(prefix))
        grid = [[self.state(src) for _ in range(top + 1)] for _ in range(cap + 1)]
        self.prog.text(src, b"[", grid[0][0])
        if unique_strings:
            self.prog.unique_opens.add(grid[0][0])
            self.prog.distinct_strings = True
        end = self.state(src)
        for n, row in enumerate(grid):
            for k, here in enumerate(row):
                if n >= lo and k >= least and (len(also) < 2 or k == top):
                    self.ws(here, end)
            if hi is not None and n >= hi:
                continue
            schema, where = (prefix[n], slot.at(prefix_word, n)) if n < len(prefix) else (items, item_slot)
            if schema is NEVER:
                continue
            after = grid[min(n + 1, cap)]
            cases = [(schema, 0)] if wanted is None else [(both_nodes(schema, wanted), 1), (
                schema if most is None else both_nodes(schema, make(not_=wanted)), 0)]
            if len(also) > 1:  # the item meets each set of them (an item may meet several)
                cases = list(zip(item_cases(schema, also), range(top + 1)))
            starts = [self.separated(here, n) for here in row]  # past the separator, one per count of matches
            for sub, step in cases:
                if sub is NEVER:
                    continue
                for k, start in enumerate(starts):
                    if len(also) > 1:
                        self.call(sub, where, start, after[k | step])
                    elif most is None or k + step <= top:
                        self.call(sub, where, start, after[min(k + step, top)])
        self.prog.text(end, b"]", dst)

    def distinct_items(self, positions: list, lo: int, hi: int | None, slot: Slot, src: int, dst: int) -> None:
        """``uniqueItems`` where each position's items come from a finite set of values: a state
        per set of values used so far (what the language's own minimal automaton needs), from
        which each unused value goes on, ``positions``' schema met with that value (so the value
        is allowed exactly as the schema allows it). ``positions``: the prefix, then the rest.
        Without a prefix and past ``DISTINCT_GRID_MAX`` sets, they are those of an object's
        names in any order (``any_order.py``): made as a generation reaches them, n + 1 at most
        for n items, their liveness standing on "``minItems`` distinct values", which every set
        reached has too (its values were written, the others are still there)."""
        where = child(slot.pointer, "uniqueItems")
        universe: list = []  # the values, distinct as JSON values
        calls = []  # per position: (index into universe, the fragment of its schema met with the value)
        for schema, at in positions:
            values = self.finite_values(schema, at)
            if values is None:
                raise UnsupportedKeyword(where, "uniqueItems", "distinct items beyond a finite set of values (an "
                                         "enum or const, booleans, null, a small integer range)", slot.via)
            found = []
            for v in values:
                i = next((k for k, u in enumerate(universe) if json_equal(u, v)), None)
                if i is None:
                    i = len(universe)
                    universe.append(v)
                frag, _ = self.callee(both_nodes(schema, make(const=v)), at)
                if frag is not None:
                    found.append((i, frag))
            calls.append(found)
        sets = sum(math.comb(len(universe), k) for k in range(min(len(universe), len(universe) if hi is None else hi) + 1))
        if len(calls) == 1 and sets > DISTINCT_GRID_MAX and self.lazy_order:
            # one set of values for every position: each set used made where a generation reaches it
            if len(universe) > LAZY_ORDER_MAX:
                raise SchemaTooComplex(where, f"uniqueItems over {len(universe)} values: more than {LAZY_ORDER_MAX}",
                                       slot.via)
            values = list(dict(calls[0]).values())  # a value listed twice is one member
            return self.written_once(values, 0, [], lo, hi, len(values), slot, src, dst, b"[]")
        states = {0: self.state(src)}  # the set of values used (a bit mask) -> its state
        self.prog.text(src, b"[", states[0])
        end = self.state(src)
        todo = [0]
        while todo:
            used = todo.pop()
            here, n = states[used], used.bit_count()
            if n >= lo:
                self.ws(here, end)
            if hi is not None and n >= hi:
                continue
            start = None
            for i, frag in calls[min(n, len(calls) - 1)]:
                if used >> i & 1:
                    continue
                after = states.get(used | 1 << i)
                if after is None:
                    if len(states) >= MAX_DISTINCT_SETS:
                        raise SchemaTooComplex(where, f"uniqueItems over {len(universe)} values: more than "
                                                      f"{MAX_DISTINCT_SETS} sets of them", slot.via)
                    after = states[used | 1 << i] = self.state(src)
                    todo.append(used | 1 << i)
                if start is None:
                    start = self.separated(here, n)
                self.prog.call(start, frag, after)
        self.prog.text(end, b"]", dst)

    def open_strings(self, schema, slot: Slot) -> bool:
        """Whether ``schema`` allows strings alone, and no finite set of them (``finite_values``):
        a uniqueItems array of them keeps its strings apart as they are written (``keys.py``)."""
        return self.strings_alone(schema, slot) and self.finite_values(schema, slot) is None

    def strings_alone(self, schema, slot: Slot, depth: int = 0) -> bool:
        """Whether ``schema`` allows no value but strings: its type, its literals, each branch of
        the union it meets into."""
        node, slot = self.follow_refs(schema, slot)
        if node is NEVER:
            return True
        met = self.met(node, slot) if node is not ANY and depth <= 8 else None
        if not isinstance(met, Node):
            return False
        values = pinned_values(met)
        if values is not None:
            return all(isinstance(v, str) for v in values)
        if met.any_of is not None:
            return all(self.strings_alone(b, slot.at("anyOf", i), depth + 1) for i, b in enumerate(met.any_of))
        return met.types == ("string",)

    def distinct_strings_below(self, schema, slot: Slot, count: int) -> bool:
        """Whether ``schema`` (strings alone) allows fewer than ``count`` strings, as far as its
        language is plain to read (``key_language``; where it is not, not)."""
        try:
            language = self.key_language(schema, slot)
        except SchemaError:
            return False
        return language is not None and language.count_up_to(count) < count

    def finite_values(self, schema, slot: Slot, depth: int = 0) -> list | None:
        """A finite superset of the values ``schema`` allows, where one is plain to see: its
        ``enum`` or ``const``, booleans and null by ``type``, integers between near bounds, a union
        of such; None where none is (``distinct_items`` meets the schema with each value, so a
        superset is exact)."""
        node, slot = self.follow_refs(schema, slot)
        if node is ANY or depth > 8:
            return None
        if node is NEVER:
            return []
        node = self.met(node, slot)
        if not isinstance(node, Node):  # an object decided member by member: no finite set
            return None
        values = pinned_values(node)
        if values is not None:
            return values
        if node.any_of is not None:  # met: each branch holds the rest of the schema
            found = []
            for i, branch in enumerate(node.any_of):
                more = self.finite_values(branch, slot.at("anyOf", i), depth + 1)
                if more is None:
                    return None
                found += more
            return found
        kinds = set(node.types) if node.types is not None else None
        if kinds is not None and kinds <= {"boolean", "null"}:
            return [True, False] * ("boolean" in kinds) + [None] * ("null" in kinds)
        if kinds == {"integer"}:
            lo, hi, xlo, xhi = (node.number or NumberRules()).bounds
            lows = ([math.ceil(lo)] if lo is not None else []) + ([math.floor(xlo) + 1] if xlo is not None else [])
            highs = ([math.floor(hi)] if hi is not None else []) + ([math.ceil(xhi) - 1] if xhi is not None else [])
            low, high = max(lows, default=None), min(highs, default=None)
            if low is not None and high is not None and high - low < MAX_INTEGER_VALUES:
                return list(range(low, high + 1))
        return None

    def counted_items(self, item: int, lo: int, hi: int, src: int, dst: int) -> None:
        """An array of ``lo..hi`` items of fragment ``item``: the ``lo`` required ones written out,
        the optional rest a counted block (``counting.items_template``: three places, a run
        of whitespace states each, and the count), where the grid of counts wrote a few states and a
        call per count. The block is entered after ``[`` or after the last required item, and can
        always close the array there: its entry finishes when its exit does."""
        here, end = self.state(src), self.state(src)
        self.prog.text(src, b"[", here)
        for n in range(lo):
            after = self.state(src)
            self.prog.call(self.separated(here, n), item, after)
            here = after
        mode = self.options.whitespace
        run = {"compact": 0, "flexible": None}.get(mode, self.options.max_whitespace)
        shape = items_template(() if mode == "compact" else WHITESPACE, run)
        start = 0 if lo == 0 else shape.size // 3  # after ``[``, or after an item
        self.prog.counted_block(here, CountedBlock(shape, (item,), 0, hi - lo, start, end, self.prog.owner[src]))
        self.prog.text(end, b"]", dst)

    def other_than(self, node: Node, kind: type, slot, src, dst) -> None:
        """The arrays (or objects) ``node`` allows other than the literals of that kind a complement
        excluded (``not_values``): ``node`` met with each one's shape complement (``Complement.unequal``),
        only where such a value is lowered (an enum beside them is filtered instead)."""
        rest = copied(node)
        rest.not_values = []
        rest.types = ("array",) if kind is list else ("object",)
        rest.all_of = [*node.all_of, *(self.complement.unequal(v, slot) for v in node.not_values if isinstance(v, kind))]
        self.value(rest, slot, src, dst)

    def lower_object(self, node: Node, slot, src, dst, wanted: tuple = ()):
        """``wanted``: the 'some member' constraints additional members may be witnesses of
        (``some_member``), as (key automaton, its cache name, value schema)."""
        if any(isinstance(v, dict) for v in node.not_values):
            return self.other_than(node, dict, slot, src, dst)
        obj = node.object or ObjectRules()
        if obj.some_member:
            return self.some_member(node, slot, src, dst, wanted)
        props = dict(obj.properties)
        extra = self.additional(obj)
        required = obj.required
        lo, hi = count_of(obj.min_properties, "minProperties", slot), count_of(obj.max_properties, "maxProperties", slot)
        # a key pattern's schema applies to the keys some validator matches it on; additional
        # properties' where some matches none of them (portably, keys the readings differ on meet both)
        pattern_dfas = []  # (keys some validator matches the pattern on, its schema, its slot)
        for p, sub in obj.pattern_properties:
            pattern_dfas.append((self.key_pattern(p, slot, either=True), sub, slot.at("patternProperties", p)))
        written = [p for p, _ in obj.pattern_properties]
        for p in {p for patterns, _ in obj.additional_unless for p in patterns if p not in written}:
            written.append(p)  # (a meet keeps every side's patterns: none is missing but by a rewrite)
            pattern_dfas.append((self.key_pattern(p, slot, either=True), ANY, slot.at("patternProperties", p)))
        every = [self.key_pattern(p, slot) for p in written]  # the keys every validator matches each on
        unless = [(frozenset(written.index(p) for p in patterns), sub) for patterns, sub in obj.additional_unless]
        names_schema = obj.property_names
        allowed = self.key_language(names_schema, slot.at("propertyNames")) if names_schema is not None else None
        members = []  # (name, schema, slot, required)
        for name, sub in props.items():
            hits = [(s, ps) for d, s, ps in pattern_dfas if d.matches(name)]
            for s, ps in hits:
                sub = self.meet_nodes(sub, s, ps)
            if allowed is not None and not allowed.matches(name):
                sub = NEVER  # propertyNames rules the name out
            members.append((name, sub, slot.at("properties", name), name in required))
        for name in required:
            if name in props:
                continue
            hits = [(s, ps) for d, s, ps in pattern_dfas if d.matches(name)]
            sub, where = hits[0] if hits else (extra, slot.at("additionalProperties"))
            for s, _ in hits[1:]:  # a key meets every pattern it matches
                sub = both_nodes(sub, s)
            if hits and not any(d.matches(name) for d in every):  # a validator matching none
                sub = both_nodes(sub, extra)
            sub = self.unnamed(obj, name, sub, slot)
            if allowed is not None and not allowed.matches(name):
                sub = NEVER
            members.append((name, sub, where, True))
        for name, sub, where, req in members:
            if req and sub is NEVER:
                self.never(slot, f"required property {name!r} can never be valid")
                return
        names = {m[0] for m in members}
        keys = self.additional_keys(names, pattern_dfas, extra, slot, wanted,
                                    (allowed, self.schema_key(names_schema)) if allowed is not None else None, unless, every)
        n_min = sum(1 for m in members if m[3])
        if keys and (lo >= n_min + 2 or any(not trivial(value) for _, _, value in wanted)):
            self.prog.distinct_strings = True  # a free key written twice would count twice, or be a witness twice
            named = sum(1 for m in members if m[1] is not NEVER)
            if named + sum(k[4].count_up_to(lo) for k in keys) < lo:  # (each key once: so few of them)
                self.never(slot, "minProperties above the distinct keys the object allows")
                return
        if hi is not None and (lo > hi or n_min > hi):
            self.never(slot, "more properties required than maxProperties allows")
            return
        cap = max(1, lo) if hi is None else hi
        extras = [self.member(lambda a, b, k=k: self.prog.call(a, k, b), sub, where) for k, sub, where, _, _ in keys]
        # additional members that are witnesses some 'some member' asks for, holding their values:
        # (member, the set of them it is a witness of, as a bit mask)
        witnesses = []
        for k, sub, where, inside, _ in keys:
            for mask in range(1, 1 << len(wanted)):
                if mask & inside == mask:
                    value = sub
                    for t in range(len(wanted)):
                        value = both_nodes(value, wanted[t][2]) if mask >> t & 1 else value
                    witnesses.append((self.member(lambda a, b, k=k: self.prog.call(a, k, b), value, where), mask))
        full = (1 << len(wanted)) - 1
        named = [m for m in members if m[1] is not NEVER]
        # one name alone has an order only against additional keys, which may come before it
        if self.options.property_order == "any" and (len(named) > 1 or extras) and named:
            if len(named) <= GRID_MAX or (len(named) <= ANY_ORDER_MAX and (witnesses or not self.lazy_order)):
                return self.grid_members(named, extras, witnesses, full, lo, hi, cap, src, dst)
            if self.lazy_order and not witnesses and self.lazy_members(named, extras, lo, hi, cap, slot, src, dst):
                return
        grid = [[self.state(src) for _ in range(cap + 1)] for _ in range(len(members) + 1)]
        self.prog.text(src, b"{", grid[0][0])
        end = self.state(src)
        for i, (name, sub, where, req) in enumerate(members):
            member = None if sub is NEVER else self.named_member(name, sub, where)
            for c in range(cap + 1):
                if not req:
                    self.prog.epsilon(grid[i][c], grid[i + 1][c])
                if member is not None and (hi is None or c < hi):
                    self.next_member(grid[i][c], c, member, grid[i + 1][min(c + 1, cap)])
        rows = [grid[-1]] + [[self.state(src) for _ in range(cap + 1)] for _ in range(full)]  # by witnesses written
        for mask, row in enumerate(rows):
            for c in range(cap + 1):
                if c >= lo and mask == full:
                    self.ws(row[c], end)
                if hi is not None and c >= hi:
                    continue
                for member in extras:
                    self.next_member(row[c], c, member, row[min(c + 1, cap)])
                for member, found in witnesses:
                    if found | mask != mask:
                        self.next_member(row[c], c, member, rows[mask | found][min(c + 1, cap)])
        self.prog.text(end, b"}", dst)

    def some_member(self, node: Node, slot, src, dst, among: tuple):
        """An object with some member whose key is in a language and whose value meets a schema (the
        complement of additionalProperties or patternProperties): one case per named property that
        can be it, and one where an additional member is it (``among`` those ``lower_object`` wants)."""
        obj = node.object
        (how, keys, value), *others = obj.some_member
        rest = _with_object(node, some_member=others)
        props, required = obj.properties, obj.required
        key_dfa, name = self.member_keys(how, keys, slot)
        patterns = [self.key_pattern(p, slot) for p, _ in obj.pattern_properties]
        for n in list(props) + [r for r in required if r not in props]:
            if not key_dfa.matches(n) or props.get(n) is NEVER:
                continue
            if n in props:
                met = both_nodes(props[n], value)
            elif any(d.matches(n) for d in patterns):
                met = self.unnamed(obj, n, value, slot)  # the lowering meets it with the patterns' schemas
            else:
                met = self.unnamed(obj, n, both_nodes(self.additional(obj), value), slot)
            case = _with_object(rest, properties={**props, n: met}, required=required + ([n] if n not in required else []))
            self.lower_object(case, slot, src, dst, among)
        if self.additional(obj) is NEVER and not obj.pattern_properties:
            return  # a closed object: only its named properties can be the witness
        if len(among) >= MAX_WITNESSES:
            raise UnsupportedKeyword(slot.pointer, "not", f"more than {MAX_WITNESSES} members that must exist among "
                                     "additional properties", slot.via)
        self.lower_object(rest, slot, src, dst, among + ((key_dfa, name, value),))

    def unnamed(self, obj: ObjectRules, name: str, sub, slot):
        """``sub`` (what key ``name`` meets, the object not naming it) met with each side's
        additionalProperties that applies to it still (``ObjectRules.additional_unless``)."""
        for patterns, value in obj.additional_unless:
            if not any(self.key_pattern(p, slot).matches(name) for p in patterns):
                sub = both_nodes(sub, value)
        return sub

    def member_keys(self, how: str, keys, slot):
        """The keys a 'some member' constraint speaks of (``ObjectRules.some_member``), as a scalar
        automaton, and a name for it."""
        dialect = REGEX_DIALECT[self.options.dialect]
        if how == "names":  # a key propertyNames rules out
            allowed = self.key_language(keys, slot.at("propertyNames"))
            return chardfa.complement(allowed if allowed is not None else chardfa.any_string()), ("names", self.schema_key(keys))
        if how == "pattern":
            return pattern_dfa(keys, slot.pointer, dialect=dialect), ("pattern", keys)
        names, patterns = keys
        out = chardfa.other_strings(frozenset(names))
        for p in patterns:  # (keys no validator matches them on)
            out = chardfa.difference(out, self.key_pattern(p, slot, either=True))
        return out, ("outside", names, patterns)

    def named_member(self, name: str, sub, where: Slot) -> int:
        """One fragment per name and value schema, shared by every object that has that member
        (hundreds of rule objects in a linter's configuration share their common ones)."""
        key = (name, self.schema_key(sub))
        frag = self._members.get(key)
        if frag is None:
            frag = self._members[key] = self.member(lambda a, b: self.literal_string([name], a, b), sub, where)
        return frag

    def member(self, key, sub, where: Slot) -> int:
        """A fragment for one ``"key": value`` pair, shared by every count state that emits it."""
        frag = self.prog.new_fragment(counted=False)
        f = self.prog.fragments[frag]
        key_end = self.prog.new_state(frag)
        key(f.start, key_end)
        self.call(sub, where, self.punct_to(key_end, b":"), f.final)
        return frag

    def next_member(self, src: int, count: int, member: int, dst: int) -> None:
        self.prog.call(self.separated(src, count), member, dst)

    def additional_keys(self, names, pattern_dfas, extra, slot: Slot, wanted=(), allowed=None, unless=(), every=None):
        """(key fragment, value schema, slot, whose witness it may be as a bit mask, the keys'
        automaton) for keys beyond the names.

        The keys are split into regions by which patterns they match (and whether a witness of
        'some member' may have them); a key matching several patterns must satisfy all their
        schemas, one matching none the additionalProperties schema; and each of ``unless``, (a set
        of patterns by index, schema), meets the keys that match none of its set. ``every``: the
        keys every validator matches each pattern on, where ``pattern_dfas`` hold those some
        validator does (a key between them meets both the pattern's schema and what matching
        none asks).
        """
        n = len(pattern_dfas)
        differ = [i for i in range(n) if every is not None and every[i] is not pattern_dfas[i][0]]
        # where matching none asks nothing more (true) or rules a key out (false), the keys between
        # the readings need no regions of their own: they are as their patterns' other keys, or out
        settled = not unless and (extra is ANY or extra is NEVER)
        out_between = settled and bool(differ) and extra is NEVER
        if settled:
            differ = []
        cache_key = ("keys", frozenset(names), tuple(ps.pointer.rsplit("/", 1)[-1] for _, _, ps in pattern_dfas),
                     tuple(w[1] for w in wanted), allowed[1] if allowed else None, tuple(differ), out_between)
        regions = self._regions.get(cache_key)
        if regions is None:
            keys = allowed[0] if allowed else None
            if out_between:  # only keys every reading matches some pattern on (no other key is in)
                matched = chardfa.union_of(every)
                keys = matched if keys is None else chardfa.intersect(keys, matched)
            dfas = [d for d, _, _ in pattern_dfas] + [every[i] for i in differ] + [w[0] for w in wanted]
            regions = self._regions[cache_key] = self.key_regions(names, dfas, slot, keys)
        out = []
        base = n + len(differ)
        for i, (keys, hits) in enumerate(regions):
            inside = sum(1 << (h - base) for h in hits if h >= base)
            subs = [pattern_dfas[h][1:] for h in hits if h < n]
            matched = {h for h in hits if h < n and h not in differ} | {differ[h - n] for h in hits if n <= h < base}
            schema, where = (extra, slot.at("additionalProperties")) if not subs else subs[0]
            for sub, _ in subs[1:]:
                schema = both_nodes(schema, sub)
            if subs and not matched:  # some validator matches none of the patterns here
                schema = both_nodes(schema, extra)
            for indexes, sub in unless:
                if indexes.isdisjoint(matched):
                    schema = both_nodes(schema, sub)
            if schema is not NEVER:
                out.append((self.shared(cache_key + (i,), lambda a, b, k=keys: self.key_string(k, a, b)),
                            schema, where, inside, keys))
        return out

    def key_regions(self, names, dfas, slot: Slot, allowed=None):
        """Keys other than ``names`` (among those ``allowed``), split by which pattern automata they
        match: (automaton, indexes)."""
        others = chardfa.other_strings(frozenset(names))
        regions = [(others if allowed is None else chardfa.intersect(others, allowed), [])]
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
        self.prog.call(src, self.any_fragment(), dst)

    def any_fragment(self) -> int:
        return self.shared("any", self._build_any)

    def _build_any(self, src: int, dst: int) -> None:
        anything = make(object={"additional": ANY})
        for kind in ("null", "boolean", "number", "string", "array", "object"):
            getattr(self, "lower_" + kind)(anything, Slot(""), src, dst)

    def ws(self, src: int, dst: int) -> None:
        """Whitespace from ``src`` to ``dst``; ``src`` is a place in a container, every way on from
        which may start with whitespace."""
        mode = self.options.whitespace
        if mode == "compact":
            self.prog.epsilon(src, dst)
        elif mode == "flexible":
            self.prog.epsilon(self.spaced(src), dst)
        else:
            cur = src
            for _ in range(self.options.max_whitespace):
                self.prog.epsilon(cur, dst)
                nxt = self.state(src)
                for lo, hi in WHITESPACE:
                    self.prog.byte(cur, lo, hi, nxt)
                cur = nxt
            self.prog.epsilon(cur, dst)

    def spaced(self, src: int) -> int:
        """A state reached from place ``src`` over whitespace: in flexible mode ``src`` itself,
        looping on it (every way on from a place in a container may start with whitespace, and a
        state written per separator was two fifths of a median program's analysed states)."""
        if self.options.whitespace != "flexible":
            dst = self.state(src)
            self.ws(src, dst)
            return dst
        if src not in self._spaced:
            self._spaced.add(src)
            for lo, hi in WHITESPACE:
                self.prog.byte(src, lo, hi, src)
        return src

    def punct_to(self, src: int, char: bytes) -> int:
        """A new state past ``char`` read from place ``src``, with whitespace on both sides of it."""
        after = self.state(src)
        self.prog.text(self.spaced(src), char, after)
        return self.spaced(after)

    def separated(self, src: int, count: int) -> int:
        """A state past what comes before an item or member at place ``src``: whitespace after the
        opening bracket (``count`` 0), else a comma with whitespace around it; one per place and
        count, shared by every member that may come there."""
        key = (src, count)
        state = self._separated.get(key)
        if state is None:
            state = self._separated[key] = self.punct_to(src, b",") if count else self.spaced(src)
        return state


def _with_object(node: Node, **fields) -> Node:
    """A copy of ``node`` whose object facet says ``fields`` instead (its own facet, free to change)."""
    out = copied(node)
    out.object = ObjectRules()
    out.object.__dict__.update(vars(node.object), **fields)
    return out
