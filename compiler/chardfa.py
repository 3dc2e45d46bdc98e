"""A deterministic automaton over Unicode scalars, the common currency of patterns, formats and numbers.

Regexes, formats and numeric ranges are all built at the scalar level first (where a character
class is one edge), then lowered to bytes in one place (``compiler.strings``), which decides how
each scalar may be written inside a JSON string (raw UTF-8 or an escape).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from functools import lru_cache

MAX_SCALAR = 0x10FFFF


def _covers(row: list[tuple[int, int, int]], ranges: tuple[tuple[int, int], ...]) -> bool:
    """Whether the edges of ``row`` together hold every scalar of ``ranges``."""
    spans = sorted((lo, hi) for lo, hi, _ in row)
    i = 0
    for a, b in ranges:
        x = a
        while x <= b:
            while i < len(spans) and spans[i][1] < x:
                i += 1
            if i == len(spans) or spans[i][0] > x:
                return False
            x = spans[i][1] + 1
    return True



@dataclass
class CharDFA:
    """States are ``0..n-1``; ``edges[q]`` lists ``(lo, hi, target)`` with disjoint inclusive ranges.
    ``derived`` holds what is made from a finished automaton once (its byte template), so an
    automaton cached per process carries it along."""

    start: int = 0
    edges: list[list[tuple[int, int, int]]] = field(default_factory=list)  # tuples once ``frozen``
    accepting: set[int] = field(default_factory=set)
    derived: dict = field(default_factory=dict, compare=False, repr=False)
    total: bool = False  # every state reads every scalar and can reach acceptance (see other_strings)
    # set by other_strings: every string but these, as their complete trie and its sink, the last state
    names: frozenset | None = field(default=None, compare=False, repr=False)

    @property
    def size(self) -> int:
        return len(self.edges)

    def add_state(self, accepting: bool = False) -> int:
        self.edges.append([])
        if accepting:
            self.accepting.add(len(self.edges) - 1)
        return len(self.edges) - 1

    def frozen(self) -> CharDFA:
        """This automaton, its rows made tuples, for a process-wide cache (callers must not mutate
        it): tuples of numbers leave the cyclic collector's view, whose full passes had walked
        every cached row as a list (97 thousand after MaskBench's sample: 75 ms a pass, in the
        middle of some token's mask)."""
        self.edges = tuple(map(tuple, self.edges))
        return self

    def step(self, q: int, scalar: int) -> int | None:
        for lo, hi, t in self.edges[q]:
            if lo <= scalar <= hi:
                return t
        return None

    def matches(self, text: str) -> bool:
        q: int | None = self.start
        for ch in text:
            q = self.step(q, ord(ch))
            if q is None:
                return False
        return q in self.accepting

    def finishing(self, unwritable: tuple[int, int] | None = None) -> frozenset[int]:
        """The states that can reach acceptance, along edges holding a scalar outside ``unwritable``
        (kept in ``derived``: automata cached per process are lowered by many compiles)."""
        if self.total:
            return frozenset(range(len(self.edges)))
        return self._kept(("finishing", unwritable), self._finishing)

    def _finishing(self, unwritable) -> frozenset[int]:
        reverse: list[list[int]] = [[] for _ in self.edges]
        for q, row in enumerate(self.edges):
            for lo, hi, t in row:
                if unwritable is None or lo < unwritable[0] or hi > unwritable[1]:
                    reverse[t].append(q)
        live = bytearray(len(self.edges))
        todo = list(self.accepting)
        for q in todo:
            live[q] = 1
        while todo:
            for p in reverse[todo.pop()]:
                if not live[p]:
                    live[p] = 1
                    todo.append(p)
        return frozenset(q for q, ok in enumerate(live) if ok)

    def closed_under(self, ranges: tuple[tuple[int, int], ...]) -> frozenset[int]:
        """The greatest set of states that read every scalar of ``ranges`` (sorted, disjoint) and
        stay in the set doing so: from them, any text of those scalars is read, however long."""
        if self.total:
            return frozenset(range(len(self.edges)))
        return self._kept(("closed_under", ranges), self._closed_under)

    def _kept(self, key: tuple, make):
        """``make(key[1])``, computed once per size of the automaton (``derived`` holds it)."""
        key += (len(self.edges),)
        done = self.derived.get(key)
        if done is None:
            done = self.derived[key] = make(key[1])
        return done

    def _closed_under(self, ranges) -> frozenset[int]:
        n = len(self.edges)
        keep = bytearray(n)
        reverse: list[list[int]] = [[] for _ in range(n)]
        ends = [b for _, b in ranges]  # sorted, as the ranges are disjoint and sorted
        for q, row in enumerate(self.edges):
            keep[q] = _covers(row, ranges)
            for lo, hi, t in row:
                i = bisect_left(ends, lo)  # the first range ending at or past lo: it meets the edge or none does
                if i < len(ends) and ranges[i][0] <= hi:
                    reverse[t].append(q)
        todo = [q for q in range(n) if not keep[q]]
        while todo:
            for p in reverse[todo.pop()]:
                if keep[p]:
                    keep[p] = 0
                    todo.append(p)
        return frozenset(q for q in range(n) if keep[q])

    def trimmed(self) -> "CharDFA":
        """Drop states that cannot reach acceptance (and edges into them), renumbering the rest."""
        live = self.finishing()
        if self.start not in live:
            return CharDFA(0, [[]], set())
        order = sorted(live, key=lambda q: (q != self.start, q))
        index = {q: i for i, q in enumerate(order)}
        edges = [[(lo, hi, index[t]) for lo, hi, t in self.edges[q] if t in live] for q in order]
        return CharDFA(0, edges, {index[q] for q in self.accepting})

    @property
    def is_empty(self) -> bool:
        """No accepting state is reachable (a forward search; nothing is rebuilt)."""
        seen, todo = {self.start}, [self.start]
        while todo:
            q = todo.pop()
            if q in self.accepting:
                return False
            for _, _, t in self.edges[q]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return True


    def count_up_to(self, bound: int) -> int:
        """How many strings the automaton accepts, or ``bound + 1`` where more (or infinitely
        many): a string that loops through a state that can finish is infinitely many."""
        live = self.finishing()
        if self.start not in live:
            return 0
        counts: dict[int, int] = {}
        stack, on_path = [(self.start, iter(self.edges[self.start]))], {self.start}
        while stack:
            q, edges = stack[-1]
            for lo, hi, t in edges:
                if t not in live or t in counts:
                    continue
                if t in on_path:
                    return bound + 1  # a loop among states that can finish
                on_path.add(t)
                stack.append((t, iter(self.edges[t])))
                break
            else:
                stack.pop()
                on_path.discard(q)
                total = sum((hi - lo + 1) * counts[t] for lo, hi, t in self.edges[q] if t in live)
                counts[q] = min(int(q in self.accepting) + total, bound + 1)
        return counts[self.start]

def any_string() -> CharDFA:
    """Every string (one accepting state looping on every scalar)."""
    return CharDFA(0, [[(0, MAX_SCALAR, 0)]], {0})


def literal_strings(strings) -> CharDFA:
    """A trie accepting exactly ``strings``."""
    dfa = CharDFA()
    dfa.add_state()
    children: list[dict[int, int]] = [{}]
    for s in strings:
        q = 0
        for ch in s:
            cp = ord(ch)
            nxt = children[q].get(cp)
            if nxt is None:
                nxt = dfa.add_state()
                children.append({})
                children[q][cp] = nxt
                dfa.edges[q].append((cp, cp, nxt))
            q = nxt
        dfa.accepting.add(q)
    return dfa


def _complete(dfa: CharDFA) -> CharDFA:
    """The same language with a total transition function (a sink state fills the gaps)."""
    edges = [list(row) for row in dfa.edges]
    sink = len(edges)
    edges.append([(0, MAX_SCALAR, sink)])
    for row in edges[:sink]:
        row.sort()
        gaps, nxt = [], 0
        for lo, hi, _ in row:
            if lo > nxt:
                gaps.append((nxt, lo - 1, sink))
            nxt = hi + 1
        if nxt <= MAX_SCALAR:
            gaps.append((nxt, MAX_SCALAR, sink))
        row += gaps
    return CharDFA(dfa.start, edges, set(dfa.accepting))


@lru_cache(maxsize=2048)
def other_strings(names: frozenset) -> CharDFA:
    """Every string but ``names`` (an object's additional keys), made once per process per name set:
    the names' trie made complete (what no name goes on with leads to a state accepting anything),
    every state accepting but the names' ends. So it is ``total``: no search needs to find that."""
    children: list[dict[int, int]] = [{}]  # the trie, as ``literal_strings`` numbers it
    ends = set()
    for name in sorted(names):
        q = 0
        for ch in name:
            kids = children[q]
            q = kids.get(ord(ch))
            if q is None:
                q = kids[ord(ch)] = len(children)
                children.append({})
        ends.add(q)
    sink = len(children)
    edges = []
    for kids in children:  # as ``_complete`` writes a row: the children in order, then the gaps
        row, gaps, nxt = [], [], 0
        for cp in sorted(kids):
            row.append((cp, cp, kids[cp]))
            if cp > nxt:
                gaps.append((nxt, cp - 1, sink))
            nxt = cp + 1
        if nxt <= MAX_SCALAR:
            gaps.append((nxt, MAX_SCALAR, sink))
        edges.append(row + gaps)
    edges.append([(0, MAX_SCALAR, sink)])
    dfa = CharDFA(0, edges, set(range(sink + 1)) - ends, total=True)
    dfa.names = names
    return dfa.frozen()


def complement(dfa: CharDFA) -> CharDFA:
    full = _complete(dfa)
    return CharDFA(full.start, full.edges, set(range(full.size)) - full.accepting).trimmed()


def _build(start, accepting, successors, max_states: int) -> CharDFA:
    """A DFA explored from ``start``: states are keys; ``successors(key)`` yields ``(lo, hi, key)``."""
    out = CharDFA()
    index = {start: out.add_state()}
    todo = [start]
    while todo:
        key = todo.pop()
        src = index[key]
        if accepting(key):
            out.accepting.add(src)
        for lo, hi, nxt in successors(key):
            dst = index.get(nxt)
            if dst is None:
                if out.size >= max_states:
                    raise OverflowError(f"more than {max_states} states")
                dst = index[nxt] = out.add_state()
                todo.append(nxt)
            out.edges[src].append((lo, hi, dst))
    return out.trimmed()


def intersect(a: CharDFA, b: CharDFA, max_states: int = 100_000) -> CharDFA:
    """Product automaton: strings accepted by both."""
    return _build((a.start, b.start), lambda k: k[0] in a.accepting and k[1] in b.accepting, _pairs(a, b), max_states)


def meets(a: CharDFA, b: CharDFA, max_states: int = 100_000) -> bool:
    """Whether some string is accepted by both: the product searched until a pair accepts (none
    built: where they meet, the search most often stops within a few states)."""
    successors = _pairs(a, b)
    seen, todo = {(a.start, b.start)}, [(a.start, b.start)]
    while todo:
        p, q = key = todo.pop()
        if p in a.accepting and q in b.accepting:
            return True
        for _, _, nxt in successors(key):
            if nxt not in seen:
                if len(seen) >= max_states:
                    raise OverflowError(f"more than {max_states} states")
                seen.add(nxt)
                todo.append(nxt)
    return False


def _pairs(a: CharDFA, b: CharDFA):
    """The product's ``successors(pair)``: each pair of rows merged as two sorted lists (a format's
    rows hold dozens of ranges: every pair of them was 60 ms for an email pattern)."""
    rows_a, rows_b = _SortedRows(a), _SortedRows(b)

    def successors(key):
        p, q = key
        row1, row2 = rows_a[p], rows_b[q]
        i = j = 0
        while i < len(row1) and j < len(row2):
            lo1, hi1, t1 = row1[i]
            lo2, hi2, t2 = row2[j]
            if lo1 <= hi2 and lo2 <= hi1:
                yield max(lo1, lo2), min(hi1, hi2), (t1, t2)
            if hi1 < hi2:
                i += 1
            else:
                j += 1

    return successors


class _SortedRows(dict):
    """A DFA's rows sorted by their ranges (disjoint ones), each sorted when first asked."""

    def __init__(self, dfa: CharDFA):
        super().__init__()
        self.dfa = dfa

    def __missing__(self, q: int) -> list:
        row = self[q] = sorted(self.dfa.edges[q])
        return row


def union(a: CharDFA, b: CharDFA) -> CharDFA:
    return complement(intersect(complement(a), complement(b)))


def union_of(dfas) -> CharDFA:
    """The strings any of ``dfas`` accepts (none for none)."""
    out = None
    for d in dfas:
        out = d if out is None else union(out, d)
    return literal_strings([]) if out is None else out


def difference(a: CharDFA, b: CharDFA) -> CharDFA:
    return intersect(a, complement(b))


def with_length(dfa: CharDFA, min_len: int, max_len: int | None, max_states: int = 100_000) -> CharDFA:
    """Restrict to strings of ``min_len..max_len`` scalars (a counter that saturates at ``min_len``)."""
    cap = max_len if max_len is not None else min_len
    if dfa.size == 1 and dfa.accepting == {0} and dfa.edges[0] and all(t == 0 for _, _, t in dfa.edges[0]):
        # one looping state (free text or a character class): the counter is the whole automaton
        if cap + 1 > max_states:
            raise OverflowError(f"more than {max_states} states")
        ranges = [(lo, hi) for lo, hi, _ in dfa.edges[0]]
        edges = [[(lo, hi, n + 1) for lo, hi in ranges] for n in range(cap)]
        edges.append([] if max_len is not None else [(lo, hi, cap) for lo, hi in ranges])
        return CharDFA(0, edges, set(range(min_len, cap + 1)))

    def successors(key):
        q, n = key
        if max_len is not None and n >= max_len:
            return
        for lo, hi, t in dfa.edges[q]:
            yield lo, hi, (t, min(n + 1, cap))

    return _build((dfa.start, 0), lambda k: k[0] in dfa.accepting and k[1] >= min_len, successors, max_states)
