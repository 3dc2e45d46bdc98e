"""Counted blocks: ``n`` copies of a small template automaton, one per count, never written out.

A string of at most 65,535 scalars is one state per scalar counted: unrolled, a schema with two such
fields was 130,000 program states and a third of a second to build. A counted block keeps the
template (the scalar automaton in bytes, made once per automaton: a format's or a pattern's once per
process) and the bounds; state ``(n, q)`` (count ``n``,
template state ``q``) has the number ``first + n * width + q``, and its edges are made when someone
asks for them, from the template's with their targets moved to count ``n + 1``. So a block costs
its template whatever its count, and what the lazy DFA reaches is what it pays for.

Liveness is arithmetic: ``(n, q)`` can finish exactly when the exit can and ``q`` is at most
``hi - n`` scalars from acceptance (``dist``). That is exact when every count between ``lo`` and
``hi`` that the template can reach from ``q`` is one it can reach with the fewest or more scalars:
true when ``lo`` is 0, or when every accepting template state reads a scalar into another one
(the compiler checks which before it asks for a block). A block with no bounds at all
(``lo`` 0, ``hi`` None: one count) is how a free string's pattern or format is lowered: its template
is shared, so each grammar pays only for the block. A pattern's counted group (``{0,199}`` words)
is a block whose count moves on only where an iteration begins: its template's other targets stay
at the count (``Template``), and ``dist`` counts iterations. An array of at most ``maxItems`` items
is a block too (``compiler.counting.items_template``): each count's item is a call into the item's
fragment.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

UNREACHABLE = 1 << 62  # the ``dist`` of a template state that cannot reach acceptance
Edges = tuple[tuple[int, int, int], ...]
Calls = tuple[tuple[int, int], ...]


@dataclass(frozen=True, eq=False)
class Template:
    """A scalar automaton written in bytes, made once per automaton and shared by every block (and
    grammar) that uses it. State ``q`` reads ``edges[q]`` (byte ranges to template states) and
    ``calls[q]`` (``(slot, template state)``: the fragment a block puts in that slot, returning
    there), each one scalar; ``slots`` says what each slot's fragment reads, for the compiler. A
    target ``t`` below the width stays at the count, ``width + t`` is ``t`` at the next one: a
    length's template moves every scalar on, a pattern's counted group only those that begin an
    iteration."""

    edges: tuple[Edges, ...]
    calls: tuple[Calls, ...]
    slots: tuple
    accepting: bytes
    dist: tuple[int, ...]  # counts from each state to acceptance, at the fewest
    forever: frozenset[int]  # states that read plain text forever, staying among them

    @property
    def size(self) -> int:
        return len(self.edges)

    @cached_property
    def farthest(self) -> int:
        """The greatest finite ``dist``."""
        return max((d for d in self.dist if d < UNREACHABLE), default=0)


@dataclass(eq=False)
class CountedBlock:
    """``template`` between ``lo`` and ``hi`` counts (scalars, or a pattern's group iterations): a
    state leaves for ``exit`` when the template accepts there and the count is at least ``lo``.
    Counts run to ``hi``, or without bound (``hi`` None: past ``lo`` the count stays at ``lo``)."""

    template: Template
    fragments: tuple[int, ...]  # the fragment in each of the template's call slots
    lo: int
    hi: int | None
    start: int  # template state entered
    exit: int
    owner: int  # the fragment the block is part of
    first: int = -1  # set by ``Program.finish``

    @property
    def width(self) -> int:
        return len(self.template.edges)

    @property
    def rows(self) -> int:
        """Counts held: ``0..hi``, or ``0..lo`` when unbounded."""
        return (self.lo if self.hi is None else self.hi) + 1

    @property
    def size(self) -> int:
        return self.rows * self.width

    @property
    def entry(self) -> int:
        return self.first + self.start

    def _row(self, s: int) -> tuple[int, int, int]:
        """The template state of ``s``, the number its targets are added to (template state 0 at this
        count: a target past the width is in the next count), and the targets kept: those of the
        next count are cut at the last count of a bounded block, which reads no further."""
        n, q = divmod(s - self.first, self.width)
        base = self.first + n * self.width
        if self.hi is None:  # past ``lo`` the count stays (every target of such a template is next)
            return q, base - self.width if n >= self.lo else base, 2 * self.width
        return q, base, 2 * self.width if n < self.hi else self.width

    def _edges(self, q: int, base: int, cut: int) -> Edges:
        """Template state ``q``'s edges from the count whose template state 0 is ``base``."""
        return tuple([(lo, hi, base + t) for lo, hi, t in self.template.edges[q] if t < cut])

    def _calls(self, q: int, base: int, cut: int) -> Calls:
        frags = self.fragments
        return tuple([(frags[k], base + t) for k, t in self.template.calls[q] if t < cut])

    def edges_of(self, s: int) -> Edges:
        return self._edges(*self._row(s))

    def calls_of(self, s: int) -> Calls:
        return self._calls(*self._row(s))

    def eps_of(self, s: int) -> tuple[int, ...]:
        n, q = divmod(s - self.first, self.width)
        return (self.exit,) if self.template.accepting[q] and n >= self.lo else ()

    def representative(self, n: int, reach: int) -> int:
        """The count standing for ``n`` where only texts of at most ``reach`` scalars are read: far
        below ``lo``, and from ``lo`` to far below ``hi``, every count opens the exit at the same
        points of such a text (never, or from its start) and keeps every template state live along
        it, so one count stands for all of them; near a bound each count is its own."""
        margin = reach + self.template.farthest + 1
        if n <= self.lo - margin:
            return self.lo - margin
        if n >= self.lo and (self.hi is None or n <= self.hi - margin):
            return self.lo
        return n

    def merges_counts(self, reach: int) -> bool:
        """Whether ``representative`` has some count stand for another at ``reach``: a bound longer
        than the reach (a long ``minLength``, or ``maxLength`` well past ``minLength``)."""
        margin = reach + self.template.farthest + 1
        return self.lo - margin >= 1 or (self.hi is not None and self.hi - margin >= self.lo + 1)

    def live_bytes(self) -> bytes:
        """Per state of the block, whether it can finish, given that the exit can: one row per
        count, the same row up to the last few counts (as many as the farthest state's ``dist``).
        An array's items block needs no more: its state after a comma is reached only once an item
        was written at the same depth, so another can be."""
        dist = self.template.dist
        if self.hi is None:
            return bytes(d < UNREACHABLE for d in dist) * self.rows
        tail = max((d for d in dist if d <= self.hi), default=0)
        full = self.rows - tail
        last = [bytes(d <= self.hi - n for d in dist) for n in range(full, self.rows)]
        return bytes(d <= self.hi for d in dist) * full + b"".join(last)

    def reads_forever(self, s: int) -> bool:
        """Whether state ``s`` reads plain text forever: the template's do at the last count when it
        repeats (asked per state: a big object's keys block holds thousands)."""
        q = s - self.first - self.lo * self.width
        return self.hi is None and 0 <= q < self.width and q in self.template.forever


class Rows(dict):
    """A program's per-state table (edges, epsilon moves or calls) over its written states, its
    counted blocks, which make theirs when first asked, and the segments of its waiting fragments
    (``Program.enter``): ``rows[s]`` as for a tuple. A dict of the rows asked so far, so that
    asking again is the dict's own lookup, in C (the lazy DFA and the room analysis ask a state's
    rows again and again: a method per lookup cost cold masks 12%)."""

    __slots__ = ("blocks", "kind", "starts", "written", "grown")

    def __init__(self, written: tuple, blocks: list[CountedBlock], starts: list[int], kind: str, grown=()):
        super().__init__()
        self.written = written
        self.blocks = blocks  # the program's lists, which segments extend
        self.starts = starts
        self.kind = kind  # "edges_of", "calls_of" or "eps_of"
        self.grown: list[tuple[int, tuple]] = []
        for first, rows in grown:
            self.grow(first, rows)

    def grow(self, first: int, rows: tuple) -> None:
        """Add a segment's written rows, numbered from ``first``."""
        self.grown.append((first, rows))
        self.update(zip(range(first, first + len(rows)), rows))

    def __missing__(self, s: int):
        if 0 <= s < len(self.written):
            row = self[s] = self.written[s]
            return row
        row = self[s] = getattr(block_of(self.blocks, self.starts, s), self.kind)(s)
        return row

    def __reduce__(self):  # what was asked is asked again
        return Rows, (self.written, self.blocks, self.starts, self.kind, self.grown)


def block_of(blocks: list[CountedBlock], starts: list[int], s: int) -> CountedBlock:
    """The block holding state ``s`` (past the written states), by bisection on ``starts``."""
    return blocks[bisect_right(starts, s) - 1]
