"""Objects whose named properties may come in any order (``property_order="any"``), each at most once.

Which names were written is the state: 2**n sets. Up to ``GRID_MAX`` names they are written out
at compile (``grid_members``; up to ``ANY_ORDER_MAX`` where sets cannot wait). Past it, one
fragment per set and count of members is made when a generation first reaches it (``lazy_members``): a generation passes n + 1 sets at most, each
lowered in time linear in n (a Kubernetes resource, a linter's configuration: MaskBench's objects
have up to 70 names and more). Past ``LAZY_ORDER_MAX`` names (about 10 ms a member written at 500)
the object keeps the schema's order.

A set's fragment waits with a *stand-in* (``Program.stand_in``, one per object): a call of the
required members in turn, then of as many distinct other members as ``minProperties`` asks beyond
them. It finishes where the object can be written at all, at every depth; every set a generation
can reach can finish there too (it reached the set over members it wrote, so they can finish
where it stands, and fewer are wanted past them). The stand-in also calls every other member on a
way that never finishes: a member whose value holds the object again puts the object on a call
cycle at compile, as its sets will, so that its frames are counted. The sets' fragments count no
frame of their own (as a member's does not): they sit inside the object's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GRID_MAX = 4  # named properties up to which the sets written are states made at compile (2**n)
ANY_ORDER_MAX = 10  # and where sets cannot wait (``lazy=False``, witnesses, ``alive``'s objects), up to which
LAZY_ORDER_MAX = 512  # and up to which a set's fragment is made where reached (each in time linear in n)


@dataclass
class Family:
    """One object's members, to lower the fragment of each set of names written (``rest``)."""

    members: list[int]      # the named members' fragments, in the schema's order
    required: int           # the required ones, a bit per member
    extras: list[int]       # additional members' fragments (any number of each, anywhere)
    lo: int
    hi: int | None
    cap: int                # counts of members past which nothing changes (as in schema order)
    stand_in: int           # the required members in turn: what a waiting set's liveness stands on
    slot: object
    rests: dict = field(default_factory=dict)  # (set, count) -> its fragment


@dataclass(frozen=True)
class Rest:
    """What a waiting set's fragment is lowered from (``Lowering.expand``)."""

    family: Family
    seen: int
    count: int


class AnyOrderLowering:
    """Mixin of ``Lowering``: named members in any order, each once."""

    def separator(self, count: int) -> int:
        """A fragment of what comes before a member: whitespace after ``{`` (``count`` 0), else a comma."""
        count = min(count, 1)
        return self.shared(("separator", count), lambda a, b: self.prog.epsilon(self.separated(a, count), b))

    def named_members(self, named) -> tuple[list[int], int]:
        """The fragments of the named members ``(name, schema, slot, required)``, and the required
        ones as a bit per member."""
        return [self.named_member(name, sub, at) for name, sub, at, _ in named], sum(1 << i for i, m in enumerate(named) if m[3])

    def grid_members(self, named, extras, witnesses, full: int, lo: int, hi: int | None, cap: int, src: int,
                     dst: int) -> None:
        """One state per set of names already written and count of members (capped as in schema
        order), additional members anywhere between them. There are 2**n such states, so each holds
        only calls: to a shared separator, then to the members not written yet, and an epsilon to
        one shared end."""
        n = len(named)
        members, required = self.named_members(named)
        grid = {(seen, c, f): self.state(src) for seen in range(1 << n) for c in range(min(seen.bit_count(), cap), cap + 1)
                for f in range(full + 1)}  # f: the witnesses of 'some member' written, as a bit mask
        self.prog.text(src, b"{", grid[0, 0, 0])
        closing, end = self.state(src), self.state(src)
        self.ws(closing, end)
        for (seen, c, f), here in grid.items():
            if c >= lo and seen & required == required and f == full:
                self.prog.epsilon(here, closing)
            if hi is not None and c >= hi:
                continue
            after = min(c + 1, cap)
            start = self.state(src)  # one separator, then any member not written yet
            self.prog.call(here, self.separator(c), start)
            for i, member in enumerate(members):
                if not seen >> i & 1:
                    self.prog.call(start, member, grid[seen | 1 << i, after, f])
            for member in extras:
                self.prog.call(start, member, grid[seen, after, f])
            for member, found in witnesses:
                if found | f != f:
                    self.prog.call(start, member, grid[seen, after, f | found])
        self.prog.text(end, b"}", dst)

    def lazy_members(self, named, extras, lo: int, hi: int | None, cap: int, slot, src: int, dst: int) -> bool:
        """The object as a family of waiting fragments, one per set of names written (the module's
        docstring); False past ``LAZY_ORDER_MAX`` names or where ``maxProperties`` leaves no room
        for the required members (the schema's order then)."""
        if len(named) > LAZY_ORDER_MAX or (hi is not None and hi < sum(1 for m in named if m[3])):
            return False
        members, required = self.named_members(named)
        self.written_once(members, required, extras, lo, hi, cap, slot, src, dst, b"{}")
        return True

    def written_once(self, members: list[int], required: int, extras: list[int], lo: int, hi: int | None, cap: int,
                     slot, src: int, dst: int, brackets: bytes) -> None:
        """Between ``brackets``, ``members`` each at most once in any order (``extras`` any number
        of times), as a family of waiting fragments, one per set written: an object's named
        members, or the values of a ``uniqueItems`` array (``containers.distinct_items``)."""
        family = Family(members, required, extras, lo, hi, cap, self.stand_in(members, required, extras, lo), slot)
        start, closed, end = self.state(src), self.state(src), self.state(src)
        self.prog.text(src, brackets[:1], start)
        self.prog.call(start, self.rest(family, 0, 0), closed)
        self.ws(closed, end)
        self.prog.text(end, brackets[1:], dst)

    def stand_in(self, members: list[int], required: int, extras: list[int], lo: int) -> int:
        """A fragment that finishes where an object can be written at all: each required member,
        then as many distinct other members (or additional ones) as ``minProperties`` asks beyond
        them. Where it can, every set a generation reaches can still close (the module's docstring);
        every other member is called on a way that never finishes (what the sets will call)."""
        frag = self.prog.new_fragment(counted=False)
        f = self.prog.fragments[frag]
        here = f.start
        nowhere = self.prog.new_state(frag)
        for i, member in enumerate(members + extras):
            if not required >> i & 1:
                self.prog.call(here, member, nowhere)
        for i, member in enumerate(members):
            if required >> i & 1:
                nxt = self.prog.new_state(frag)
                self.prog.call(here, member, nxt)
                here = nxt
        more = max(0, lo - required.bit_count())
        others = [m for i, m in enumerate(members) if not required >> i & 1]
        # (other member considered, members picked): each other member taken or passed, in turn
        grid = [[here if (i, j) == (0, 0) else self.prog.new_state(frag) for j in range(more + 1)]
                for i in range(len(others) + 1)]
        for i, row in enumerate(grid):
            for j, state in enumerate(row):
                if j == more:
                    self.prog.epsilon(state, f.final)
                    continue
                for extra in extras:
                    self.prog.call(state, extra, row[j + 1])
                if i < len(others):
                    self.prog.epsilon(state, grid[i + 1][j])
                    self.prog.call(state, others[i], grid[i + 1][j + 1])
        return frag

    def rest(self, family: Family, seen: int, count: int) -> int:
        """The fragment of the rest of an object with the names ``seen`` and ``count`` members
        written: made waiting, its liveness standing on the family's stand-in."""
        frag = family.rests.get((seen, count))
        if frag is None:
            frag = family.rests[seen, count] = self.prog.new_fragment(counted=False)  # frames: the object's
            f = self.prog.fragments[frag]
            self.prog.call(f.start, family.stand_in, f.final)
            self.prog.stand_in(frag)
            self._waiting[frag] = (Rest(family, seen, count), family.slot, 0)
        return frag

    def write_rest(self, rest: Rest, start: int, final: int) -> None:
        """The body of a set's fragment: close, or a separator, then a member not written yet (or
        an additional one) and the rest after it."""
        family, seen, count = rest.family, rest.seen, rest.count
        if count >= family.lo and seen & family.required == family.required:
            self.prog.epsilon(start, final)
        if family.hi is not None and count >= family.hi:
            return
        after = min(count + 1, family.cap)
        past = self.state(start)
        self.prog.call(start, self.separator(count), past)

        def then(member: int, written: int) -> None:
            needed = (family.required & ~written).bit_count()
            if family.hi is not None and after + needed > family.hi:
                return  # the required members left no longer fit
            back = self.state(start)
            self.prog.call(past, member, back)
            self.prog.call(back, self.rest(family, written, after), final)

        for i, member in enumerate(family.members):
            if not seen >> i & 1:
                then(member, seen | 1 << i)
        for member in family.extras:
            if after == count:  # the count stays: the same set, looping here
                self.prog.call(past, member, start)
            else:
                then(member, seen)
