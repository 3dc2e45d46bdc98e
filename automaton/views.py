"""Masks shared by states that differ only where no token can reach: below a frame that must read
a closing bracket before it returns.

A state's configurations are call stacks. A frame whose remaining way to its fragment's end reads
``]`` or ``}`` on every path (an object or array not yet closed) hides the frames below it from any
token that holds neither byte: such a token's verdict depends only on the frames from that one up.
So two states whose stacks agree from those frames up (their *view*) allow the same tokens but for
the few that hold a bracket (about 1k of Llama 3's 128k), and those are walked again; when every
stack also has a frame above that must read a quote first (a key or string being written), only
tokens with a quote followed by a bracket are (about 100). In a large schema the same object
appears in many places (detekt's hundred rule objects, each item of an array of objects), and each
of its states would otherwise be a new walk of the vocabulary.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right

from .program import Program

CLOSERS = b"]}"
QUOTE = b'"'
BRACKETS, QUOTED_BRACKETS = 1, 2  # which tokens a view leaves to walk again: see ``escapes``
_MAX_NESTING = 200  # fragments followed into while asking ``must_read`` (deeper: counted as not)
SHAPE_STATES = 32  # states a frame's way up to its next bracket may have for a shape of its own


def escapes(data: bytes, kind: int) -> bool:
    """Whether a token may leave a view of that kind: it holds a bracket (``BRACKETS``), or a quote
    and a bracket after it (``QUOTED_BRACKETS``)."""
    if kind == BRACKETS:
        return b"]" in data or b"}" in data
    q = data.find(b'"')
    return q >= 0 and (b"]" in data[q:] or b"}" in data[q:])


class Barriers:
    """What every way on from a program state reads, computed on demand, once per state: whether
    it reads one of a few bytes before its fragment ends (``must_read``), or a quote before any
    bracket (``quote_first``). Sound under-estimates: a ``finishes_like`` block is taken to read
    nothing on its way to its witness, or anything when brackets are looked for, and fragments
    nested too deeply to follow count as reading nothing."""

    def __init__(self, program: Program, horizon: int):
        self.program = program
        self.horizon = horizon  # bytes of the longest token: texts up to that long are what matter
        self._counter_firsts = [first for first, _, _, _ in program.counters]
        self._alike: dict[int, int] = {}
        self._firsts = [first for first, _, _ in program.blocks]
        self._memo: dict[tuple[bytes, bytes], dict[int, bool]] = {}  # per question: state -> a way exists
        self._fragment_memo: dict[tuple[bytes, bytes], dict[int, bool]] = {}
        self.seen_from: dict[tuple[int, ...], tuple] = {}  # configuration -> ``seen_from_frames``
        self._shapes: dict[int, int] = {}  # state -> its shape: itself, or the number of its graph
        self._graphs: dict[tuple, int] = {}

    def must_read(self, state: int, banned: bytes) -> bool:
        """Whether every way from ``state`` to its fragment's final state reads a byte of ``banned``."""
        return not self._way(state, (banned, b""), 0)

    def quote_first(self, state: int) -> bool:
        """Whether every way from ``state`` reads a quote before it reads a bracket (or ends its
        fragment, which ``must_read(state, CLOSERS)`` says it does not do without one)."""
        return not self._way(state, (QUOTE, CLOSERS), 0)

    def shape(self, state: int):
        """What a frame at ``state`` reads before a bracket, as a number-free graph (its states
        numbered in the order met), so that two places of a schema that do the same there (the
        whitespace before one object's value and before another's of the same schema) look alike;
        ``state`` itself when that graph is large, meets a block, or holds a state not live at
        every depth (then liveness, which depends on what lies past the bracket, could tell them apart)."""
        found = self._shapes.get(state)
        if found is None:
            graph = self._shape(state)
            # a graph is named by a negative number, so that it sorts beside the states
            found = self._shapes[state] = state if graph is None else self._graphs.setdefault(graph, -1 - len(self._graphs))
        return found

    def _shape(self, state: int) -> tuple | None:
        prog = self.program
        live = prog.live(0)  # levels only grow: live here is live at every depth
        frag = prog.owner[state]
        final = prog.fragments[frag].final
        number = {state: 0}
        order = [state]
        out = [prog.fragments[frag].costs_depth]

        def at(t: int) -> int:
            k = number.get(t)
            if k is None:
                k = number[t] = len(order)
                order.append(t)
            return k

        for s in order:  # grows while it is walked
            if len(order) > SHAPE_STATES or not live[s] or self._witness(s) is not None:
                return None
            edges = tuple((lo, hi, -1 if lo == hi and lo in CLOSERS else at(t)) for lo, hi, t in prog.edges[s])
            calls = []
            for g, r in prog.calls[s]:
                if not (live[r] and live[prog.fragments[g].start]):
                    return None
                calls.append((g, -1 if self.must_read(prog.fragments[g].start, CLOSERS) else at(r)))
            out.append((edges, tuple(at(t) for t in prog.eps[s]), tuple(calls), s == final))
        return tuple(out)

    def alike(self, state: int) -> int:
        """The state that reads every text of up to ``horizon`` bytes as ``state`` does, the same
        for all such (``Program.counts``: the first position too far from min_len to reach it, or
        the first past min_len with that much room left before max_len), else ``state``."""
        found = self._alike.get(state)
        if found is None:
            found = self._alike[state] = self._alike_of(state)
        return found

    def counted(self, state: int) -> tuple[int, int, int, int | None] | None:
        """The counter (``Program.counts``) ``state`` is a position of, if any."""
        k = bisect_right(self._counter_firsts, state) - 1
        if k >= 0 and state < self.program.counters[k][1]:
            return self.program.counters[k]
        return None

    def _alike_of(self, state: int) -> int:
        counter = self.counted(state)
        if counter is None:
            return state
        first, stop, min_len, max_len = counter
        n = state - first
        if n + self.horizon < min_len:  # a token cannot take it to min_len: like position 0
            return first
        if n >= min_len and max_len is not None and max_len - n >= self.horizon:
            return first + min_len  # room for any token, and may end: like min_len
        return state

    def seen_from_frames(self, config: tuple[int, ...]) -> tuple[tuple[int, ...], int] | tuple[()]:
        """The part of a configuration that a view keeps (``view_of``), its topmost bracket
        frame by its shape, with the tokens that may leave it; empty when it has no such frame."""
        quoted = False
        for i in range(len(config) - 1, -1, -1):
            if self.must_read(config[i], CLOSERS):
                quoted = quoted or self.quote_first(config[i])
                alike = self.alike
                return (tuple([self.shape(alike(config[i]))] + [alike(p) for p in config[i + 1:]]),
                        QUOTED_BRACKETS if quoted else BRACKETS)
            quoted = quoted or self.must_read(config[i], QUOTE)
        return ()

    def _witness(self, state: int) -> int | None:
        """The witness of the ``finishes_like`` block holding ``state``, if any."""
        k = bisect_right(self._firsts, state) - 1
        if k >= 0:
            first, stop, witness = self.program.blocks[k]
            if first <= state < stop:
                return witness
        return None

    def _fragment_way(self, frag: int, question: tuple[bytes, bytes], nesting: int) -> bool:
        memo = self._fragment_memo.setdefault(question, {})
        found = memo.get(frag)
        if found is None:
            memo[frag] = True  # while it is being asked (a recursive call): assume a way exists
            found = memo[frag] = self._way(self.program.fragments[frag].start, question, nesting + 1)
        return found

    def _way(self, state: int, question: tuple[bytes, bytes], nesting: int) -> bool:
        """Whether some way from ``state`` avoids the bytes ``banned`` and either ends its fragment
        (when ``hits`` is empty) or reads a byte of ``hits``: a search within the frame; every state
        it met without success has no such way either."""
        banned, hits = question
        memo = self._memo.setdefault(question, {})
        found = memo.get(state)
        if found is not None:
            return found
        if nesting > _MAX_NESTING or nesting > sys.getrecursionlimit() // 4:
            return True
        prog = self.program
        final = prog.fragments[prog.owner[state]].final
        stopped = sorted(banned + hits)  # a way goes on along bytes of neither
        hit = sorted(hits)
        passing = (banned + hits, b"")  # a called fragment let through: it ends reading neither
        came = {state: state}  # each state met, from the one before it on the way

        def way_found(s: int) -> bool:
            memo[s] = True
            while s != state:  # the way found goes through every state back to ``state``
                s = came[s]
                memo[s] = True
            return True

        todo = [state]
        while todo:
            s = todo.pop()
            known = memo.get(s)
            if known or (s == final and not hits):
                return way_found(s)
            if known is False or s == final:
                continue
            witness = self._witness(s)
            if witness is not None:
                if hits:
                    return way_found(s)
                nexts = [witness]
            else:
                nexts = list(prog.eps[s])
                for lo, hi, t in prog.edges[s]:
                    if hit and bisect_right(hit, hi) > bisect_left(hit, lo):
                        return way_found(s)
                    if hi - lo + 1 > bisect_right(stopped, hi) - bisect_left(stopped, lo):
                        nexts.append(t)
                for g, r in prog.calls[s]:
                    if hits and self._fragment_way(g, question, nesting):
                        return way_found(s)
                    if self._fragment_way(g, passing, nesting):
                        nexts.append(r)
            for t in nexts:
                if t not in came:
                    came[t] = s
                    todo.append(t)
        for s in came:
            memo[s] = False
        return False


def view_of(dfa, barriers: Barriers, state: int) -> tuple[tuple, int] | None:
    """The view of ``state``: each configuration from its topmost frame that must read a bracket,
    with its depth left, and which tokens may leave it (``BRACKETS`` or ``QUOTED_BRACKETS``); None
    when some configuration has no such frame (then no other state shares its mask this way)."""
    seen = barriers.seen_from
    parts = set()
    kind = QUOTED_BRACKETS
    for c, left in zip(dfa.configurations(state), dfa.depths(state)):
        found = seen.get(c)
        if found is None:
            found = seen[c] = barriers.seen_from_frames(c)
        if not found:
            return None
        if found[1] == BRACKETS:
            kind = BRACKETS
        parts.add((found[0], left))
    return tuple(sorted(parts)), kind


def tops_of(dfa, barriers: Barriers, state: int) -> tuple | None:
    """What the view of ``state`` surely holds, cheap to find: the current program states (taken
    ``alike``) of its configurations that need not read a bracket, with their depths left. None
    unless one of them is a counted position (``Program.counts``): only there does a view pay
    (a new position's walk builds automaton states for every token's path, which the generation
    never visits; elsewhere a view only moves the work of the states it does visit to ``advance``)."""
    kernel = dfa.configurations(state)
    if not barriers.program.counters or not any(barriers.counted(c[-1]) for c in kernel):
        return None
    must_read, alike = barriers.must_read, barriers.alike
    return tuple(sorted({(alike(c[-1]), left) for c, left in zip(kernel, dfa.depths(state))
                         if not must_read(c[-1], CLOSERS)}))
