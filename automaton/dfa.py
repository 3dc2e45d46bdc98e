"""The deterministic byte automaton, built lazily from a ``Program`` by subset construction.

A configuration is a call stack: a tuple of program states, the last one current, the ones below
it the states to resume when each called fragment finishes. A DFA state is the set of
configurations that can read a next byte (its *kernel*) plus whether the document may end here.
States are numbered as they are first reached and their transitions are cached, so a warm step is
one list lookup; the set of states stays finite because recursion depth is bounded.
"""

from __future__ import annotations

import threading
from array import array
from itertools import compress

import numpy as np

from .program import Program

DEAD = -1
FEW_MOVES = 64  # bytes read up to which a state lists them (``moves``)
_UNSEEN = object()

Config = tuple[int, ...]
Kernel = tuple[Config, ...]  # sorted


class LazyDFA:
    def __init__(self, program: Program, max_states: int = 200_000):
        self.program = program
        self.max_states = max_states
        # kernels are sorted tuples of configurations: tuples of ints are untracked by the garbage
        # collector once it has seen them, so a large automaton does not slow full collections
        self._kernels: list[Kernel] = []
        self._depths: list[tuple[int, ...]] = []  # per state, each configuration's depth left
        self._local_memo: dict[tuple[int, int], tuple] = {}  # (program state, depth left) -> _local
        self._edges_memo: dict[tuple[int, int], tuple] = {}  # (program state, depth left) -> _live_edges
        self._moves: dict[int, tuple[tuple[int, int], ...] | None] = {}  # per state: (byte, successor) read
        # the state that a set of moved configurations (with their depths left) closes into: many
        # rows move into the same set (about half of them across MaskBench, 70% in a big schema)
        self._closed: dict = {}
        self._accepting: list[bool] = []
        self._ids: dict[tuple[Kernel, bool], int] = {}
        self._rows: list[tuple[int, ...] | None] = []
        # The rows again, flat and shifted by one (entry (s + 1) * 256 + b holds successor + 1, and
        # row 0 stands for DEAD, all zeros) so a vectorised walk needs no masking of dead states;
        # filled only for the states such a walk meets.
        self._flat = np.zeros(65 * 256, dtype=np.int32)
        self._has = np.zeros(65, dtype=bool)
        self._has[0] = True
        self._lock = threading.Lock()
        frags = program.fragments
        costly = [f.costs_depth for f in frags]
        self._costs = bytes(map(costly.__getitem__, program.owner))  # per program state
        is_final = bytearray(program.size)
        for f in frags:
            is_final[f.final] = 1
        self._is_final = bytes(is_final)
        # states whose closure is themselves: byte edges only, not a fragment's final state
        self._simple = bytes([1 if edges and not eps and not calls and not final else 0 for edges, eps, calls, final
                              in zip(program.edges, program.eps, program.calls, is_final)])
        root = program.fragments[program.root]
        self.start = self._intern(*self._closure([((root.start,), program.max_depth - self._costs[root.start])]))

    # -- public byte-step API ----------------------------------------------------------------
    def step(self, state: int, byte: int) -> int:
        row = self._rows[state]
        if row is None:
            row = self.row(state)
        return row[byte]

    def is_accepting(self, state: int) -> bool:
        return self._accepting[state]

    def walk(self, data: bytes, state: int | None = None) -> int:
        """The state after ``data`` from ``state`` (default: start), or ``DEAD``."""
        s = self.start if state is None else state
        for b in data:
            if s == DEAD:
                return DEAD
            row = self._rows[s]
            if row is None:
                row = self.row(s)
            s = row[b]
        return s

    def configurations(self, state: int) -> Kernel:
        """The call stacks that ``state`` stands for (those that can read a next byte)."""
        return self._kernels[state]

    @property
    def num_states(self) -> int:
        return len(self._kernels)

    def row(self, state: int) -> tuple[int, ...]:
        """All 256 successors of ``state`` (``DEAD`` where a byte is refused), computed once."""
        row = self._rows[state]
        if row is not None:
            return row
        with self._lock:
            row = self._rows[state]
            if row is None:
                # a tuple: untracked by the garbage collector, unlike a list
                self._rows[state] = tuple(self._compute_row(state))
                row = self._rows[state]
        return row

    def _grow(self, states: int) -> None:
        """Room in the flat table for ``states`` states (doubling), so every state id indexes it."""
        if states + 1 <= len(self._has):
            return
        grown = max(2 * len(self._has), states + 1)
        flat = np.zeros(grown * 256, dtype=np.int32)
        flat[: len(self._flat)] = self._flat
        has = np.zeros(grown, dtype=bool)
        has[: len(self._has)] = self._has
        self._flat, self._has = flat, has

    def moves(self, state: int) -> tuple[tuple[int, int], ...] | None:
        """The bytes ``state`` reads and where each leads, computed once; None when it reads more
        than ``FEW_MOVES`` bytes (a walk then looks bytes up in the row instead)."""
        found = self._moves.get(state, _UNSEEN)
        if found is _UNSEEN:
            row = self.row(state)
            # the bytes read picked out in C: most states that a wide trie node meets read few
            found = self._moves[state] = None if row.count(DEAD) < 256 - FEW_MOVES else tuple(
                [(b, row[b]) for b in compress(range(256), map(DEAD.__ne__, row))])
        return found

    def shifted_table(self, shifted: np.ndarray) -> np.ndarray:
        """The flat shifted table, with rows present for every state in ``shifted`` (ids + 1)."""
        with self._lock:
            self._grow(self.num_states)
        has = self._has[shifted]
        if not has.all():
            for slot in set(shifted[~has].tolist()):
                row = self.row(slot - 1)
                with self._lock:
                    self._flat[slot * 256: slot * 256 + 256] = np.frombuffer(array("i", row), dtype=np.int32) + 1
                    self._has[slot] = True
        return self._flat

    # -- construction ------------------------------------------------------------------------
    def depths(self, state: int) -> tuple[int, ...]:
        """The recursive frames each configuration of ``state`` may still push, in the same order."""
        return self._depths[state]

    def _closure(self, configs) -> tuple[Kernel, bool, tuple[int, ...]]:
        """The configurations that ``configs`` (pairs of call stack and depth left) reach without
        reading a byte and that read one, whether the document may end, and their depths left.

        Each stack's top is closed on its own (``_local``, memoised per program state and depth), so
        a closure is a few tuple joins; only a top that finishes its fragment returns into the stack
        below, which is then closed the same way."""
        simple, costs, local = self._simple, self._costs, self._local_memo
        if len(configs) == 1 and simple[configs[0][0][-1]]:  # a literal's next byte, most often
            c, left = configs[0]
            return (c,), False, (left,)
        kernel: dict[Config, int] = {}
        accepting = False
        returned: set[Config] = set()
        todo = list(configs)
        while todo:
            c, left = todo.pop()
            s = c[-1]
            if simple[s]:
                kernel[c] = left
                continue
            found = local.get((s, left))
            if found is None:
                found = local[(s, left)] = self._local(s, left)
            tails, lefts, returns = found
            head = c[:-1]
            for tail, tail_left in zip(tails, lefts):
                kernel[head + tail] = tail_left
            if returns:
                if not head:
                    accepting = True  # the root fragment finished
                elif head not in returned:
                    returned.add(head)
                    todo.append((head, left + costs[s]))
        ordered = sorted(kernel)
        return tuple(ordered), accepting, tuple([kernel[c] for c in ordered])

    def _local(self, state: int, left: int) -> tuple[tuple[Config, ...], tuple[int, ...], bool]:
        """The closure of one stack top: the stacks (this frame, then any frames it calls) that
        read a byte, with their depths left, and whether the frame itself may finish."""
        prog = self.program
        edges, eps, calls, frags = prog.edges, prog.eps, prog.calls, prog.fragments
        costs, is_final = self._costs, self._is_final
        seen: set[Config] = set()
        stack = [((state,), left)]
        tails, lefts = [], []
        returns = False
        while stack:
            c, left = stack.pop()
            if c in seen:
                continue
            seen.add(c)
            s = c[-1]
            if edges[s]:
                tails.append(c)
                lefts.append(left)
            left_below = left + costs[s]  # what the stack without its top has left
            if is_final[s]:
                if len(c) == 1:
                    returns = True
                else:
                    stack.append((c[:-1], left_below))
            if eps[s] or calls[s]:
                live = prog.live(left)
                for t in eps[s]:
                    if live[t]:
                        stack.append((c[:-1] + (t,), left_below - costs[t]))
                for g, r in calls[s]:
                    frag = frags[g]
                    inner = left - 1 if frag.costs_depth else left
                    if inner >= 0 and live[r] and prog.live(inner)[frag.start]:
                        stack.append((c[:-1] + (r, frag.start), left_below - costs[r] - costs[frag.start]))
        return tuple(tails), tuple(lefts), returns

    def _intern(self, kernel: Kernel, accepting: bool, depths: tuple[int, ...]) -> int:
        if not kernel and not accepting:
            return DEAD
        key = (kernel, accepting)
        sid = self._ids.get(key)
        if sid is None:
            if len(self._kernels) >= self.max_states:
                raise AutomatonTooLarge(f"more than {self.max_states} automaton states reached")
            sid = len(self._kernels)
            self._ids[key] = sid
            self._kernels.append(kernel)
            self._depths.append(depths)
            self._accepting.append(accepting)
            self._rows.append(None)
        return sid

    def _compute_row(self, state: int) -> list[int]:
        """Successors for all bytes at once. The configurations' moves are grouped by byte range;
        when the ranges do not overlap (most states), each range's moves are closed once as they
        are, else the byte axis is first cut at every range boundary (``_cut``)."""
        ranges: dict[int, list[tuple[Config, int]]] = {}  # lo << 8 | hi -> (moved, depth left)
        edges_of, memo = self._live_edges, self._edges_memo
        for c, left in zip(self._kernels[state], self._depths[state]):
            top = c[-1]
            found = memo.get((top, left))
            if found is None:
                found = memo[(top, left)] = edges_of(top, left)
            head = c[:-1]
            for key, t in found:
                # a byte edge stays in its fragment: the depth left is kept
                same = ranges.get(key)
                if same is None:
                    ranges[key] = [(head + (t,), left)]
                else:
                    same.append((head + (t,), left))
        bounds = sorted(ranges)
        if all((a & 255) < (b >> 8) for a, b in zip(bounds, bounds[1:])):
            pieces = [(key >> 8, (key & 255) + 1, ranges[key]) for key in bounds]
        else:
            pieces = _cut(ranges)
        row = [DEAD] * 256
        closed = self._closed
        for a, b, moved in pieces:
            # a sorted tuple, not a frozenset: the collector stops tracking tuples of numbers
            key = moved[0] if len(moved) == 1 else tuple(sorted(set(moved)))
            sid = closed.get(key)
            if sid is None:
                sid = closed[key] = self._intern(*self._closure([key] if len(moved) == 1 else key))
            row[a:b] = [sid] * (b - a)
        return row

    def _live_edges(self, top: int, left: int) -> tuple[tuple[int, int], ...]:
        """The byte edges of program state ``top`` into states live with ``left``, as pairs of
        range (``lo << 8 | hi``, so the ranges of a row group by an int) and target."""
        live = self.program.live(left)
        return tuple([(lo << 8 | hi, t) for lo, hi, t in self.program.edges[top] if live[t]])


def _cut(ranges: dict[int, list]) -> list[tuple[int, int, list]]:
    """Overlapping byte ranges (``lo << 8 | hi``) swept into pieces ``(start, end exclusive,
    moves)``: at each boundary moves start or end, and between two the set is fixed."""
    events: dict[int, list[tuple[int, tuple]]] = {}
    for key, moved in ranges.items():
        for c in moved:
            events.setdefault(key >> 8, []).append((1, c))
            events.setdefault((key & 255) + 1, []).append((-1, c))
    pieces = []
    active: dict[tuple, int] = {}
    cuts = sorted(events)
    for a, b in zip(cuts, cuts[1:] + [256]):
        for delta, c in events[a]:
            n = active.get(c, 0) + delta
            if n:
                active[c] = n
            else:
                del active[c]
        if active and a < 256:
            pieces.append((a, b, list(active)))
    return pieces


class AutomatonTooLarge(Exception):
    """More DFA states were reached than the configured budget allows."""
