"""``oneOf`` over objects decided member by member: the set of branches still alive is the state.

"Exactly one branch" written as each branch without the others multiplies out: each "without" is
a complement, a union of cases, and their meets pass any bound at a dozen branches (an address
``oneOf`` by country with no ``required``). But an object satisfies a branch of plain object
keywords (``properties``, ``required``, ``additionalProperties``, the count of members) exactly
when each of its members meets what that branch says of its key, each name the branch requires
was written and the count is within its bounds. So the
object's automaton can carry the set of branches that every member so far has met (the *alive*
set): a member's value is split into regions by which branches' schemas it meets, each region
narrowing the set; a name passed over drops the branches that require it; and ``}`` closes only
where one branch is alive. A branch whose keywords met out into an ``anyOf`` is several such
leaves, alive while one of them is; what the branches allow of other types is a ``oneOf`` of its
own, lowered beside.

``Lowering.one_of`` takes this up where the branches are not proven apart, before writing each
branch without the others (whose cases multiplied past their bounds at a dozen branches, and
whose complements of member values were refused where the regions here need none). The same
object decides a ``not`` of a ``oneOf`` or ``anyOf`` of such branches (``objects_outside``), where
the complement's "none of them" would meet every branch's complement: the rest's leaves are
alive beside the negated branches', and ``}`` closes where one of the rest's is and no negated
branch (for a ``oneOf``: not exactly one) is. Everything here is decided when the schema is met
(refused there, the complement's cases stand in); writing it waits for the lowering
(``lower_choice``).
"""

from __future__ import annotations

import json
import math

from . import chardfa
from .any_order import ANY_ORDER_MAX
from .context import Slot, count_of
from .keywords import TYPES
from .errors import SchemaError
from .formats import UNCOMPLEMENTED
from .ir import ANY, FACETS, NEVER, Node, ObjectRules, literal_values, make, said, says_only
from .merge import both_nodes, copied, is_union, trivial
from .one_of import exact_branches, overlaps

_LITERAL_FIELDS = frozenset(("types", "enum", "const"))  # a schema whose literals ``_literal_test`` looks up
# what a leaf may say: a type, plain object keywords, and what holds of other types alone (no
# complement's field: those facets' fields outside these mark one)
_PLAIN_FACETS = {"object": frozenset({"properties", "required", "additional", "min_properties", "max_properties"}),
                 "string": frozenset({"min_length", "max_length", "patterns"}),
                 "number": frozenset({"minimum", "maximum", "exclusive_minimum", "exclusive_maximum", "multiples"}),
                 "array": frozenset({"min_items", "max_items", "prefix", "rest", "listed", "contains", "unique"})}
_OTHER_TYPES = frozenset({"string", "number", "array", "formats"})
MAX_LEAVES = 64          # object schemas the branches meet out into
MAX_PLACES = 2048        # (position, alive set, members written) places of one object
MAX_REGIONS = 16         # sets of a key's value schemas that may meet, each a region of its values
MAX_LITERALS = 4096      # values the literal schemas of one key may take, each checked against them all
MAX_UNWRAPPED = 8        # references and one-schema unions a ``not`` is read through
FEW_CASES = 64           # a not's cases (``_cases`` multiplied) the complement writes rather than this module
NOT_OBJECTS = frozenset(TYPES) - {"object", "integer"}  # every type but object ("number" holds integers)


class ObjectChoice:
    """What ``Lowering.met`` makes of a ``oneOf`` over objects, decided and not yet written:
    ``moves[place]`` lists ``(how, name, value schema, slot, next place)``, ``how`` one of "skip"
    (a name passed over), "named" and "other" (a key beyond the names); ``closes`` holds the places
    ``}`` may follow. A place is ``(position, alive, count)``: the index of the next name (the
    schema's order) or the set of names written (any order), the leaves alive as a bit mask, and
    the members written, up to one past every leaf's bounds (the separator before the next, and
    ``minProperties``/``maxProperties``). ``others``: the ``oneOf`` of what the branches allow of
    other types (None: no other type), lowered beside."""

    def __init__(self, names: list, start: tuple, moves: dict, closes: set, others=None, empty: str = ""):
        self.names, self.start, self.moves, self.closes, self.others = names, start, moves, closes, others
        self.empty = empty  # why no object closes, where none does


class _Refused(Exception):
    """The ``oneOf`` is not one this module decides (the complement's cases stand in)."""


class AliveObjects:
    """Mixin of ``Lowering``; ``not_alive`` holds the keys (``schema_key``) of the ``oneOf``s and
    ``not``s refused here, or being decided; ``outside_made`` the ``not``s decided;
    ``regions_made`` a member's regions by the keys of the schemas they split (None: refused)."""

    def objects_alive(self, node: Node, slot: Slot) -> ObjectChoice | None:
        """``node``'s ``oneOf`` (each branch met with the rest) as an ``ObjectChoice``; None where a
        branch is not made of object schemas of plain object keywords, or a bound is passed."""
        key = self.schema_key(node)
        if key in self.not_alive:  # refused before, or being decided (a member's value is the same oneOf)
            return None
        self.not_alive.add(key)
        try:
            base = copied(node)
            base.one_of, base.one_of_first = None, False
            leaves, owner, others = self._leaves(base, node.one_of, lambda i: slot.at("oneOf", i))
            others = self._others(others, slot)
            names = _names(node, node.one_of_first, leaves)
            choice = self._decide(names, leaves, owner, slot, others, _exactly_one(owner),
                                  "no object meets exactly one oneOf branch (those that hold hold together)")
        except (_Refused, SchemaError, RecursionError):
            return None
        self.not_alive.discard(key)
        return choice

    def objects_outside(self, node: Node, slot: Slot) -> ObjectChoice | None:
        """``node``'s ``not`` of a ``oneOf`` or an ``anyOf`` whose branches are objects of plain
        object keywords, as an ``ObjectChoice``: the rest's leaves (owner -1) beside the negated
        branches' leaves, closing where one of the rest's is alive and, of the negated branches,
        not exactly one (``oneOf``) or none (``anyOf``). What the complement writes instead is
        "none of the branches" as a meet of their complements, which multiplies past its bounds
        at a few branches of a few names each (a discriminated union's ``not``). Every value of
        another type fails the negated branches: what the rest allows of other types is lowered
        beside. None where it does not apply, or where the complement's cases are few (about
        ``FEW_CASES``): they wait to be lowered as they are reached, where this is lowered whole."""
        key = ("not", self.schema_key(node))
        if key in self.not_alive:
            return None
        if key in self.outside_made:  # (a member's regions are written anew for each set of leaves alive)
            return self.outside_made[key]
        self.not_alive.add(key)
        try:
            negated, where = node.not_, slot.at("not")
            for _ in range(MAX_UNWRAPPED):  # a union or meet of one schema is that schema (a region's complement)
                negated, where = self.follow_refs(negated, where)
                if negated is ANY or negated is NEVER:
                    return None
                negated = self.expanded_node(negated, where.pointer)
                told = said(negated)
                if told.keys() not in ({"any_of"}, {"all_of"}) or len(next(iter(told.values()))) != 1:
                    break
                negated = next(iter(told.values()))[0]
            word, field = ("oneOf", "one_of") if negated.one_of is not None else ("anyOf", "any_of")
            branches = getattr(negated, field)
            if branches is None or len(branches) < 2 or not _plain(negated, {field}):
                return None
            if math.prod(self._cases(b, where) for b in branches) <= FEW_CASES:
                return None
            base = copied(negated)
            setattr(base, field, None)
            theirs, owner, their_others = self._leaves(base, branches, lambda i: where.at(word, i))
            whole = 0  # the negated branches every value of another type meets (they speak of objects alone)
            for parts in their_others.values():
                if not any(said(part).keys() == {"types"} and NOT_OBJECTS <= set(part.types) for part in parts):
                    return None  # a branch that allows some values of other types: the complement's cases stand in
                whole += 1
            rest = copied(node)
            rest.not_ = None
            ours, _, mine = self._leaves(ANY, [rest], lambda i: slot)
            # a value of another type the rest allows meets the ``whole`` branches: outside the
            # negated oneOf unless they are one, outside the anyOf where there are none
            kept = whole != 1 if word == "oneOf" else whole == 0
            others = _any_of(mine[0]) if kept and 0 in mine else None
            leaves, owner = ours + theirs, [-1] * len(ours) + owner
            if len(leaves) > MAX_LEAVES:
                return None
            needed = (1 << len(ours)) - 1
            accept = _not_one(owner, needed) if word == "oneOf" else _none(needed)
            choice = self._decide(_names(node, False, leaves), leaves, owner, slot, others, accept,
                                  "no object meets the rest and fails the 'not'", needed)
        except (_Refused, SchemaError, RecursionError):
            return None
        self.not_alive.discard(key)
        self.outside_made[key] = choice
        return choice

    def _cases(self, branch, slot: Slot) -> int:
        """About how many cases the complement of ``branch`` writes: one per keyword, one per name
        it requires or gives a schema (its "none of them" meets those of every branch)."""
        node = self.follow_refs(branch, slot)[0]
        if node is ANY or node is NEVER:
            return 1
        told = said(node)
        words = sum(len(said(part)) if field in FACETS else 1 for field, part in told.items())
        obj = node.object or ObjectRules()
        return max(1, words + len(obj.required) + len(obj.properties))

    def _leaves(self, base: Node, branches: list, where_of) -> tuple[list, list, dict]:
        """The object schemas each of ``branches`` met with ``base`` meets out into (the leaves) and
        the branch of each; and what each branch allows of other types (branch -> its parts)."""
        leaves, owner, others = [], [], {}
        for i, branch in enumerate(branches):
            where = where_of(i)
            todo = [self.meet_nodes(base, branch, where)]
            while todo:
                met = self.follow_refs(todo.pop(), where)[0]
                if met is NEVER:
                    continue
                met = self.met(met, where)
                if not isinstance(met, Node):
                    raise _Refused
                if is_union(met):  # a branch met out into several: each a leaf of it
                    todo += reversed(met.any_of)
                    continue
                kinds = set(met.types if met.types is not None else TYPES)
                if "object" not in kinds:
                    others.setdefault(i, []).append(met)
                    continue
                if not _plain(met, _OTHER_TYPES):
                    raise _Refused
                leaf = Node()
                leaf.types, leaf.object = ("object",), met.object
                leaves.append(leaf)
                owner.append(i)
                if kinds - {"object"}:  # what it says of other types: a value of one of them is no object
                    other = copied(met)
                    other.object, other.types = None, tuple(sorted(kinds - {"object"}))
                    others.setdefault(i, []).append(other)
                if len(leaves) > MAX_LEAVES:
                    raise _Refused
        if not leaves:
            raise _Refused
        return leaves, owner, others

    def _others(self, others: dict, slot: Slot):
        """The ``oneOf`` of what the branches allow of other types (``_leaves``; None: nothing),
        lowered beside the objects. Where those parts are not proven apart, each is met now
        without the others: a complement the lowering refuses there (``not`` of ``items`` beside
        an unevaluated rewrite's ``prefixItems``) refuses the choice, and the complement's
        cases of the whole branches stand in."""
        branches = [_any_of(parts) for parts in others.values()]
        if len(branches) <= 1:
            return branches[0] if branches else None
        choice = make(one_of=branches)
        if exact_branches(branches) is None:
            met = self.met(choice, slot)
            for case in met.any_of if isinstance(met, Node) and met.any_of is not None else ():
                self.met(case, slot)
        return choice

    def _decide(self, names: list, leaves: list, owner: list, slot: Slot, others, accept, empty: str,
                needed: int = 0) -> ObjectChoice:
        """The places of the object and their moves, from the start; ``accept(satisfied)``: whether
        ``}`` may close where the leaves ``satisfied`` hold; ``empty``: why none can; ``needed``: leaves
        of which one must stay alive (``objects_outside``), else ``_hopeless`` prunes for exactly one branch."""
        objs = [leaf.object or ObjectRules() for leaf in leaves]
        told = [[obj.properties[n] if n in obj.properties else self.additional(obj) for obj in objs]
                for n in names]  # per name, what each leaf says of its value
        beyond = [self.additional(obj) for obj in objs]
        requires = [sum(1 << k for k, obj in enumerate(objs) if n in obj.required) for n in names]
        any_order = self.options.property_order == "any" and 0 < len(names) <= ANY_ORDER_MAX
        everyone = (1 << len(leaves)) - 1
        least = [count_of(obj.min_properties, "minProperties", slot) for obj in objs]
        most = [count_of(obj.max_properties, "maxProperties", slot) for obj in objs]
        cap = max([1] + least + [m + 1 for m in most if m is not None])
        short = [_union(1 << k for k in range(len(leaves)) if least[k] > c) for c in range(cap + 1)]
        over = [_union(1 << k for k in range(len(leaves)) if most[k] is not None and most[k] < c) for c in range(cap + 1)]
        regions: dict[tuple, list] = {}
        if any(b is not False for b in beyond) and (len({self._said_key(b) for b in beyond}) > 1 or any(
                n >= 2 for n in least) or any(m is not None for m in most)):
            self.prog.distinct_strings = True  # a free key written twice would be judged twice, or counted twice

        def split(j, alive):  # (value schema, the leaves it keeps) for name j (None: beyond the names)
            key = (j, alive)
            if key not in regions:
                where = slot.at("properties", names[j]) if j is not None else slot.at("additionalProperties")
                regions[key] = self._value_regions(told[j] if j is not None else beyond, alive, where)
            return regions[key]

        if needed:
            def hopeless(at, alive) -> bool:
                return not alive & needed
        else:
            hopeless = self._hopeless(names, told, beyond, requires, owner, any_order, list(zip(least, most)))

        start = (0, everyone, 0)
        moves: dict[tuple, list] = {}
        closes = set()
        todo = [start]
        while todo:
            place = todo.pop()
            if place in moves:
                continue
            if len(moves) >= MAX_PLACES:
                raise _Refused
            at, alive, count = place
            out = moves[place] = []
            enough = alive & ~short[count]  # (the leaves that may close here, as far as counts go)
            written = min(count + 1, cap)  # one more member written: the leaves that allow so many
            room = alive & ~over[written]
            if any_order:
                missing = _union(requires[j] for j in range(len(names)) if not at >> j & 1)
                if accept(enough & ~missing):
                    closes.add(place)
                steps = [(j, at | 1 << j) for j in range(len(names)) if not at >> j & 1]
            elif at < len(names):
                kept = alive & ~requires[at]
                if kept:
                    out.append(("skip", None, None, None, (at + 1, kept, count)))
                steps = [(at, at + 1)]
            else:
                if accept(enough):
                    closes.add(place)
                steps = []
            for j, after in steps:
                for schema, keeps in split(j, room):
                    if room & keeps:
                        where = slot.at("properties", names[j])
                        out.append(("named", names[j], schema, where, (after, room & keeps, written)))
            if any_order or at == len(names):
                for schema, keeps in split(None, room):
                    if room & keeps:
                        out.append(("other", None, schema, slot.at("additionalProperties"), (at, room & keeps, written)))
            out[:] = [move for move in out if move[4][1] and not hopeless(*move[4][:2])]
            todo += [move[4] for move in out]
        return ObjectChoice(names, start, moves, closes, others, empty)

    def _hopeless(self, names, said, beyond, requires, owner, any_order, bounds):
        """``hopeless(position, alive)``: whether no way on leaves one branch alive alone, as far as
        what the leaves say of the names ahead tells: a leaf is the last of its kind only where every
        leaf of another branch alive can be dropped while it is kept (a name ahead the other
        requires and it does not, a value its schema allows and the other's, which does not
        allow every value, may not, or other bounds on the count of members). Two branches that
        nothing ahead tells apart stay alive together: a place so reached is not written (what
        multiplied out past any bound where many branches each require a name of their own, all of
        them allowed by the rest)."""
        key = self._said_key
        count = len(owner)
        kin = [_union(1 << c for c in range(count) if owner[c] == owner[b]) for b in range(count)]

        def apart(keys, needed=0):  # per leaf, the leaves one member may drop while keeping it
            return [_union(1 << c for c in range(count) if needed >> c & 1 and not needed >> b & 1 or (
                keys[b] != "none" and keys[c] != "any" and keys[c] != keys[b])) for b in range(count)]

        by_name = [apart([key(s) for s in said[j]], requires[j]) for j in range(len(names))]
        extras = apart([key(s) for s in beyond])
        extras = [mask | _union(1 << c for c in range(count) if bounds[c] != bounds[b]) for b, mask in enumerate(extras)]
        memo: dict = {}

        def hopeless(at, alive) -> bool:
            if (at, alive) not in memo:
                ahead = [j for j in range(len(names)) if not at >> j & 1] if any_order else range(at, len(names))
                memo[at, alive] = not any(
                    alive & ~kin[b] & ~(extras[b] | _union(by_name[j][b] for j in ahead)) == 0
                    for b in range(count) if alive >> b & 1)
            return memo[at, alive]

        return hopeless

    def _said_key(self, node: Node):
        """What tells apart what leaves say of a member's value: "any", "none" or its content."""
        if trivial(node):
            return "any"
        return "none" if node is NEVER else self.schema_key(node)

    def _value_regions(self, said: list, alive: int, slot: Slot) -> list:
        """A member's values split by which of the leaves ``alive`` their schemas (``said``) allow:
        (a schema of the values, the leaves that allow them, as a bit mask)."""
        free = 0  # leaves allowing any value
        told: dict = {}  # schema key -> [schema, leaves saying it]
        for k, schema in enumerate(said):
            if not alive >> k & 1 or schema is NEVER:
                continue
            if trivial(schema):
                free |= 1 << k
            else:
                told.setdefault(self.schema_key(schema), [schema, 0])[1] |= 1 << k
        if not told:
            return [(ANY, free)] if free else []
        key = (tuple(told), bool(free))  # the same schemas, whichever leaves say them: the same regions
        if key not in self.regions_made:
            try:
                self.regions_made[key] = self._split_values([schema for schema, _ in told.values()], bool(free), slot)
            except _Refused:
                self.regions_made[key] = None
        regions = self.regions_made[key]
        if regions is None:
            raise _Refused
        masks = [leaves for _, leaves in told.values()]
        return [(region, (free if with_free else 0) | _union(masks[i] for i in inside)) for region, inside, with_free in regions]

    def _split_values(self, schemas: list, free: bool, slot: Slot) -> list:
        """The values of a member split by which of ``schemas`` allow them (and, with ``free``, the
        values none allows): (a schema of the values, the indexes of those allowing them, whether
        they are values none allows)."""
        out = []
        finite = [self.finite_values(schema, slot) for schema in schemas]
        literals = list({json.dumps(v, sort_keys=True): v for values in finite if values is not None for v in values}.values())
        if len(literals) > MAX_LITERALS:
            raise _Refused
        checks = [self._literal_test(schema) for schema in schemas] if literals else []
        kept: dict = {}  # the schemas a value meets -> (one of them, the values that meet them)
        for i, value in enumerate(literals):
            if i % 256 == 255:
                self._check_deadline()
            inside = tuple(t for t, check in enumerate(checks) if check(value))
            if inside:
                kept.setdefault(inside, (schemas[inside[0]], []))[1].append(value)
        for inside, (schema, values) in kept.items():  # values meeting the same schemas: one region
            out.append((both_nodes(schema, make(enum=values)), inside, free))
        allowed = [v for _, values in kept.values() for v in values]
        beside = [make(not_=make(enum=allowed))] if allowed else []  # the values not met above
        general = [t for t, values in enumerate(finite) if values is None]
        may = self._overlaps([schemas[t] for t in general])
        for inside in _cliques(may):  # each set of them that may meet, and none of the others that may meet it
            parts = [schemas[general[t]] for t in inside]
            others = [schemas[general[u]] for u in range(len(general)) if u not in inside and all(u in may[t] for t in inside)]
            parts += beside + ([make(not_=make(any_of=others))] if others else [])
            region = parts[0] if len(parts) == 1 else make(all_of=parts)
            if self._may_hold(region, slot):
                out.append((region, tuple(general[t] for t in inside), free))
        if free:  # values none of the schemas allows: the leaves that allow any
            outside = beside + ([make(not_=make(any_of=[schemas[t] for t in general]))] if general else [])
            region = outside[0] if len(outside) == 1 else make(all_of=outside)
            if self._may_hold(region, slot):
                out.append((region, (), True))
        return out

    def _literal_test(self, schema):
        """Whether ``schema`` allows a literal: a set lookup for a string where the schema is an
        ``enum`` or ``const`` (of type string, or any), which no reading of numbers touches; else
        ``Validator``, the one judge of everything else (a thousand-value enum against a few
        schemas had cost jfrog-pipelines' compile half its time)."""
        judge = self.judge(schema)
        node = schema
        values = literal_values(node) if node is not ANY and node is not NEVER and says_only(node, _LITERAL_FIELDS) else None
        if values is None or node.types is not None and "string" not in node.types:
            return judge
        strings = frozenset(v for v in values if isinstance(v, str))
        return lambda value: value in strings if isinstance(value, str) else judge(value)

    def _may_hold(self, region, slot: Slot) -> bool:
        """Whether a region of values may hold any (False: its schemas cannot meet). A complement
        the lowering would refuse at its top (``not`` of a format it cannot complement) refuses the
        choice here, while the complement's cases can still stand in."""
        met = self.met(region, slot)
        todo = [met]
        while todo:
            node = todo.pop()
            if isinstance(node, Node):
                todo += node.any_of or ()
                if node.string is not None and any(f in UNCOMPLEMENTED for f in node.string.not_formats):
                    raise _Refused
        return met is not NEVER

    def _overlaps(self, schemas: list) -> list[set]:
        """For each of ``schemas``, the others some value may meet together with it, as far as
        ``one_of`` can prove two disjoint."""
        return overlaps(schemas) if schemas else []

    def lower_choice(self, choice: ObjectChoice, slot: Slot, src: int, dst: int) -> None:
        """Write ``choice``: a state per place, a member's fragment per move."""
        if choice.others is not None:
            self.value(choice.others, slot, src, dst)
        if not choice.closes:
            self.never(slot, choice.empty)
        states = {place: self.state(src) for place in choice.moves}
        self.prog.text(src, b"{", states[choice.start])
        end = self.state(src)
        for place, here in states.items():
            if place in choice.closes:
                self.ws(here, end)
            for how, name, schema, where, after in choice.moves[place]:
                if how == "skip":
                    self.prog.epsilon(here, states[after])
                else:
                    member = self.named_member(name, schema, where) if how == "named" else self._other_member(
                        choice.names, schema, where)
                    self.next_member(here, place[2], member, states[after])
        self.prog.text(end, b"}", dst)

    def _other_member(self, names: list, schema, where: Slot) -> int:
        """A member with a key beyond ``names`` and a value of ``schema``, one fragment per both."""
        key = (("beyond", frozenset(names)), self.schema_key(schema))
        frag = self._members.get(key)
        if frag is None:
            keys = self.shared(key[0], lambda a, b: self.key_string(chardfa.other_strings(frozenset(names)), a, b))
            frag = self._members[key] = self.member(lambda a, b: self.prog.call(a, keys, b), schema, where)
        return frag


def _held(owner: list, satisfied: int) -> int:
    """How many branches (owners from 0; the rest's leaves are -1) some satisfied leaf belongs to."""
    return len({owner[k] for k in range(len(owner)) if satisfied >> k & 1 and owner[k] >= 0})


def _exactly_one(owner: list):
    """``accept`` where the leaves satisfied belong to exactly one branch."""
    def accept(satisfied: int) -> bool:
        return _held(owner, satisfied) == 1
    return accept


def _not_one(owner: list, needed: int):
    """``accept`` where one of the ``needed`` leaves is satisfied and the others satisfied belong
    to no branch or to two or more."""
    def accept(satisfied: int) -> bool:
        return bool(satisfied & needed) and _held(owner, satisfied) != 1
    return accept


def _none(needed: int):
    """``accept`` where one of the ``needed`` leaves is satisfied and no other is."""
    def accept(satisfied: int) -> bool:
        return bool(satisfied & needed) and not satisfied & ~needed
    return accept


def _names(node: Node, theirs_first: bool, leaves: list) -> list:
    """The names of the leaves in the order the schema writes them: its own ``properties`` before or
    after the branches' as its keywords come (``theirs_first``: a ``oneOf`` written first brings its
    names first; the names a ``not`` speaks of come last, wherever it is written), the branches' in
    an order that keeps each branch's own where they agree (``_merged``)."""
    own = list(node.object.properties) if node.object is not None else []
    theirs = _merged([[n for n in dict.fromkeys([*leaf.object.properties, *leaf.object.required]) if n not in own]
                      if leaf.object is not None else [] for leaf in leaves])
    if theirs_first:
        return list(dict.fromkeys(theirs + own))
    return list(dict.fromkeys(own + theirs))


def _merged(orders: list) -> list:
    """One order of the names in ``orders`` where each name follows those it follows in any of them
    (where they disagree, the name seen first goes first)."""
    first = list(dict.fromkeys(n for order in orders for n in order))
    before: dict = {n: set() for n in first}
    for order in orders:
        for x, y in zip(order, order[1:]):
            before[y].add(x)
    out: list = []
    placed: set = set()
    while len(out) < len(first):
        waiting = [n for n in first if n not in placed]
        name = next((n for n in waiting if before[n] <= placed), waiting[0])
        out.append(name)
        placed.add(name)
    return out


def _cliques(may: list) -> list:
    """The sets of indexes whose members pairwise may meet (``may[t]``: those ``t`` may meet), the
    regions of a key's values; past `MAX_REGIONS` of them, refused."""
    found: list = []
    todo = [((t,), t) for t in range(len(may))]
    while todo:
        inside, last = todo.pop()
        found.append(inside)
        if len(found) > MAX_REGIONS:
            raise _Refused
        todo += [(inside + (u,), u) for u in range(last + 1, len(may)) if all(u in may[t] for t in inside)]
    return found


def _any_of(parts: list) -> Node:
    """One node, or the ``anyOf`` of several."""
    return parts[0] if len(parts) == 1 else make(any_of=parts)


def _plain(node: Node, also: frozenset) -> bool:
    """Whether ``node`` says nothing but a type, plain object keywords and the fields ``also``
    (``_OTHER_TYPES``: words of other types; a ``oneOf`` or ``anyOf`` field)."""
    told = said(node)
    if not told.keys() <= {"types", "object"} | also:
        return False
    return all(said(part).keys() <= _PLAIN_FACETS[field] for field, part in told.items() if field in _PLAIN_FACETS) and (
        node.array is None or not (node.array.listed and node.array.rest is not None))  # (additionalItems)


def _union(masks) -> int:
    out = 0
    for mask in masks:
        out |= mask
    return out
