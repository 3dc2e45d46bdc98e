"""Counted blocks: ``n`` copies of a small template automaton, one per count, never written out.

A string of at most 65,535 scalars is one state per scalar counted: unrolled, a schema with two such
fields was 130,000 program states and a third of a second to build. A counted block keeps the
template (the scalar automaton, lowered once) and the bounds; state ``(n, q)`` (count ``n``,
template state ``q``) has the number ``first + n * width + q``, and its edges are made when someone
asks for them, from the template's with their targets moved to count ``n + 1``. So a block costs
its template whatever its count, and what the lazy DFA reaches is what it pays for.

Liveness is arithmetic: ``(n, q)`` can finish exactly when the exit can and ``q`` is at most
``hi - n`` scalars from acceptance (``dist``). That is exact when every count between ``lo`` and
``hi`` that the template can reach from ``q`` is one it can reach with the fewest or more scalars:
true when ``lo`` is 0, or when every accepting template state reads a scalar into another one
(the compiler checks which before it asks for a block).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

UNREACHABLE = 1 << 62  # the ``dist`` of a template state that cannot reach acceptance
Edges = tuple[tuple[int, int, int], ...]
Calls = tuple[tuple[int, int], ...]


@dataclass(eq=False)
class CountedBlock:
    """Template state ``q`` reads ``edges[q]`` (byte ranges to template states) and ``calls[q]``
    (fragments returning to template states), each one scalar, so each moves to the next count; it
    leaves for ``exit`` when ``accepting[q]`` and the count is at least ``lo``. Counts run to ``hi``,
    or without bound (``hi`` None: past ``lo`` the count stays at ``lo``)."""

    edges: tuple[Edges, ...]
    calls: tuple[Calls, ...]
    accepting: bytes
    dist: tuple[int, ...]  # scalars from each template state to acceptance, at the fewest
    lo: int
    hi: int | None
    start: int  # template state entered
    exit: int
    owner: int  # the fragment the block is part of
    forever: tuple[int, ...] = ()  # template states that read plain text forever once the count stays
    first: int = -1  # set by ``Program.finish``

    @property
    def width(self) -> int:
        return len(self.edges)

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

    def _next_row(self, s: int) -> tuple[int, int]:
        """The template state of ``s`` and the number of template state 0 at the next count (-1 at
        the last count of a bounded block, which reads nothing more)."""
        n, q = divmod(s - self.first, self.width)
        if self.hi is None:
            return q, self.first + min(n + 1, self.lo) * self.width
        return q, (self.first + (n + 1) * self.width) if n < self.hi else -1

    def edges_of(self, s: int) -> Edges:
        q, base = self._next_row(s)
        return () if base < 0 else tuple([(lo, hi, base + t) for lo, hi, t in self.edges[q]])

    def calls_of(self, s: int) -> Calls:
        q, base = self._next_row(s)
        return () if base < 0 else tuple([(g, base + t) for g, t in self.calls[q]])

    def eps_of(self, s: int) -> tuple[int, ...]:
        n, q = divmod(s - self.first, self.width)
        return (self.exit,) if self.accepting[q] and n >= self.lo else ()

    def live_bytes(self) -> bytes:
        """Per state of the block, whether it can finish, given that the exit can: one row per
        count, the same row up to the last few counts (as many as the farthest state's ``dist``)."""
        if self.hi is None:
            return bytes(d < UNREACHABLE for d in self.dist) * self.rows
        tail = max((d for d in self.dist if d <= self.hi), default=0)
        full = self.rows - tail
        last = [bytes(d <= self.hi - n for d in self.dist) for n in range(full, self.rows)]
        return bytes(d <= self.hi for d in self.dist) * full + b"".join(last)

    def plain_forever(self) -> list[int]:
        """The states that read plain text forever: ``forever`` at the last count when it repeats."""
        base = self.first + self.lo * self.width
        return [] if self.hi is not None else [base + q for q in self.forever]


class Rows:
    """A program's per-state table (edges, epsilon moves or calls) over its written states and its
    counted blocks, which make theirs when asked: ``rows[s]`` as for a tuple."""

    __slots__ = ("written", "blocks", "starts", "kind")

    def __init__(self, written: tuple, blocks: list[CountedBlock], kind: str):
        self.written = written
        self.blocks = blocks
        self.starts = [b.first for b in blocks]
        self.kind = kind  # "edges_of", "calls_of" or "eps_of"

    def __getitem__(self, s: int):
        if s < len(self.written):
            return self.written[s]
        return getattr(block_of(self.blocks, self.starts, s), self.kind)(s)

    def __len__(self) -> int:
        last = self.blocks[-1]
        return last.first + last.size


def block_of(blocks: list[CountedBlock], starts: list[int], s: int) -> CountedBlock:
    """The block holding state ``s`` (past the written states), by bisection on ``starts``."""
    return blocks[bisect_right(starts, s) - 1]
