"""The deterministic byte automaton, built lazily from a ``Program`` by subset construction.

A configuration is a call stack of program states, the last one current, the ones below it the
states to resume when each called fragment finishes. Stacks are interned as numbers (a stack is its
parent stack and its top), so a configuration is one int, and what depends on a configuration
alone (its byte moves, its closure) is computed once for every automaton state it appears in. A
DFA state is the set of configurations that can read a next byte (its *kernel*, a sorted tuple of
stack numbers) plus whether the document may end here. States are numbered as they are first
reached and their transitions are cached, so a warm step is one list lookup; the set of states
stays finite because recursion depth is bounded.

A state's row (its successor on each of the 256 bytes) is kept as two parts: its distinct
successors (*targets*, ``DEAD`` first) and, per byte, the index of its successor among them
(*picks*, a ``bytes`` object): ~0.4 KB a row instead of 2.1 KB for a 256-entry tuple, which the
garbage collector also traversed once; a pick of 0 is a refused byte, so walks test it as is. (A
row with more than 255 distinct successors, which JSON text hardly reaches, has two-byte picks,
an ``array('H')``.)
"""

from __future__ import annotations

import threading
from array import array
from functools import lru_cache
from itertools import compress

import numpy as np

from .program import Program

DEAD = -1
STACK_WIDTH = 1 << 40  # program states a stack key leaves room for (a program grows: ``Program.enter``)
FEW_MOVES = 64  # bytes read up to which a state lists them (``moves``)
_UNSEEN = object()
EMPTY = 0  # the empty stack's number
ENDS = -1  # first in a closed kernel when the document may end there
_PICK = [bytes([k]) for k in range(256)]
_NONE_READ = bytes(256)  # the picks of a row that refuses every byte
_PICK_DTYPE = {bytes: np.uint8, array: np.uint16}  # picks of a row, and of one with over 255 targets

Kernel = tuple[int, ...]  # sorted stack numbers
# A kernel and whether the document may end there as one tuple: ``ENDS`` first when it may. One
# object, not a pair: every new state and stack keeps a few, and each container kept alive brings
# the next garbage collection closer (a pair was a third of what a token step left behind).
Closed = tuple[int, ...]


@lru_cache(maxsize=None)
def _range_picks(key: int) -> bytes:
    """The picks of a row whose one successor is read on the bytes of range ``key`` (``lo << 8 |
    hi``): one object shared by every such row."""
    lo, hi = key >> 8, key & 255
    return bytes(lo) + _PICK[1] * (hi - lo + 1) + bytes(255 - hi)


class LazyDFA:
    def __init__(self, program: Program, max_states: int = 200_000):
        self.program = program
        self.max_states = max_states
        # interned stacks: number -> parent's number, top program state, recursive frames it may
        # still push (its depth left); number 0 is the empty stack
        # (arrays, which the garbage collector does not walk, unlike lists)
        self._parent = array("q", [EMPTY])
        self._top = array("q", [-1])
        self._left = array("q", [program.max_depth])
        self._width = STACK_WIDTH
        # parent * program size + top -> number; numbers in it start at 1, so the hot loops'
        # ``ids.get(key) or push(...)`` calls ``_push`` for a new stack only
        self._stack_ids: dict[int, int] = {}
        self._stack_moves: dict[int, tuple[int, ...]] = {}  # number -> its byte moves (``_moves_of``)
        self._stack_closures: dict[int, Closed] = {}  # number -> ``_close_one``
        self._local_memo: dict[tuple[int, int], tuple] = {}  # (program state, depth left) -> _local
        # kernels are sorted tuples of ints: untracked by the garbage collector once it has seen
        # them, so a large automaton does not slow full collections
        self._kernels: list[Kernel] = []
        self._moves: dict[int, bytes | None] = {}  # per state: the bytes it reads, when few
        # the state that a set of moved configurations closes into: many rows move into the same
        # set (about half of them across MaskBench, 70% in a big schema)
        self._closed: dict = {}
        self._accepting = bytearray()
        self._ids: dict[Closed, int] = {}
        # each state's row in two parts (see the module docstring), None until computed
        self._targets: list[tuple[int, ...] | None] = []
        self._picks: list[bytes | None] = []
        # single successors (state << 8 | byte -> state) of states without a row, for walks that
        # only pass through them (``successor``)
        self._passed: dict[int, int] = {}
        # The rows again, flat and shifted by one, for the states a vectorised walk meets only:
        # each such state gets a slot (``_slot_of``, indexed by state id + 1), and entry
        # slot * 256 + b holds the successor's id + 1; slot 0 stands for DEAD (all zeros, id 0), so
        # the walk needs no masking of dead states. Sized by those states, not by all of them.
        # 8 slots at first, doubled as walks meet more: a grammar kept unused holds 8 KB, not 64
        self._flat = np.zeros(8 * 256, dtype=np.int32)
        self._slot_of = np.full(64, -1, dtype=np.int64)
        self._slot_of[0] = 0
        self._slots_used = 1
        self._lock = threading.Lock()
        self.facts: dict = {}  # what walks beside the automaton learn of its states, by (kind, state)
        # mask twins (``mask_state``): per reach of tokens, a kind (1, 2, ...); per state, its kind
        # (0: an exact state); per kind, stack -> the stack standing for it
        self._twin_kinds: dict[int, int] = {}
        self._reach_of_kind: dict[int, int] = {}
        self._kind = bytearray()
        self._represented: dict[int, dict[int, int]] = {}
        self._closed_twins: dict[int, dict] = {}  # per kind, as ``_closed``
        # the written states' rows, read from their tuples (``Rows`` makes a counted block's, which
        # are numbered after them, and a grown segment's, through a dict: the hot loops ask it only for those)
        self._stop = program.written
        self._written_edges, self._written_eps, self._written_calls = program.written_rows()
        # per program state (the program's own arrays, grown in place with its segments)
        self._costs, self._is_final, self._simple = program.costs, program.is_final, program.simple
        root = program.fragments[program.root]
        self.start = self._intern(self._close_one(self._push(EMPTY, root.start)))

    # -- public byte-step API ----------------------------------------------------------------
    def step(self, state: int, byte: int) -> int:
        targets, picks = self.parts(state)
        return targets[picks[byte]]

    def is_accepting(self, state: int) -> bool:
        return self._accepting[state] == 1

    def walk(self, data: bytes, state: int | None = None) -> int:
        """The state after ``data`` from ``state`` (default: start), or ``DEAD``. A state met without
        its row gets only the successor the walk needs: a token walked after its mask passes
        through states no mask asks for (a key's letters inside one token), whose rows would be
        most of the step."""
        s = self.start if state is None else state
        targets, picks = self._targets, self._picks
        for b in data:
            if s == DEAD:
                return DEAD
            pick = picks[s]
            s = targets[s][pick[b]] if pick is not None else self.successor(s, b)
        return s

    def successor(self, state: int, byte: int) -> int:
        """``row(state)[byte]``, computing that one entry alone when the row is not there yet."""
        if state == DEAD:
            return DEAD
        pick = self._picks[state]
        if pick is not None:
            return self._targets[state][pick[byte]]
        key = state << 8 | byte
        sid = self._passed.get(key)
        if sid is not None:
            return sid
        with self._lock:
            top, left, parent, push = self._top, self._left, self._parent, self._push
            live, stop, written, edges = self.program.live, self._stop, self._written_edges, self.program.edges
            moved = [push(parent[c], t) for c in self._kernels[state]
                     for lo, hi, t in (written[top[c]] if top[c] < stop else edges[top[c]])
                     if lo <= byte <= hi and live(left[c])[t]]
            sid = self._passed[key] = self._state_after(moved, self._kind[state]) if moved else DEAD
        return sid

    def tops(self, state: int) -> list[tuple[int, int]]:
        """Each configuration of ``state`` as its current program state and the recursive frames
        it may still push (what the token index asks of a state)."""
        top, left = self._top, self._left
        return [(top[c], left[c]) for c in self._kernels[state]]

    def mask_state(self, state: int, reach: int) -> int:
        """The state a token mask of ``state`` is computed from, for tokens of at most ``reach``
        bytes: itself in a program without counted blocks, else its *mask twin*: the same
        configurations, each counted frame's count moved to the one standing for it
        (``CountedBlock.representative``), and rows whose every target is made a twin the same way.
        Each step keeps the twin equivalent to the exact state for the rest of a token, so a token
        walked from the twin survives exactly when it does from ``state``; but the twins forget the
        counts far from their bounds, so a string under ``maxLength: 300`` (whose masks walked
        ~3,000 states of count and template per token, each count new) reaches a few states per
        template state, and its masks are shared by every count."""
        if not self.program.counted:
            return state
        with self._lock:
            kind = self._twin_kinds.get(reach)
            if kind is None:
                kind = self._twin_kinds[reach] = len(self._twin_kinds) + 1
                self._reach_of_kind[kind] = reach
                self._represented[kind] = {}
                self._closed_twins[kind] = {}
            closed = self._kernels[state]
            return self._intern((ENDS,) + closed if self._accepting[state] else closed, kind)

    def _represent(self, c: int, kind: int) -> int:
        """Stack ``c`` with each frame in a counted block at its representative count."""
        memo = self._represented[kind]
        reach = self._reach_of_kind[kind]
        path = []
        x = c
        while x != EMPTY and x not in memo:
            path.append(x)
            x = self._parent[x]
        base = memo[x] if x != EMPTY else EMPTY
        program = self.program
        written = program.written
        for y in reversed(path):
            top = self._top[y]
            block = program.block_at(top) if top >= written else None
            if block is not None:
                n, q = divmod(top - block.first, block.width)
                top = block.first + block.representative(n, reach) * block.width + q
            base = memo[y] = y if base == self._parent[y] and top == self._top[y] else self._push(base, top)
        return base

    @property
    def num_states(self) -> int:
        return len(self._kernels)

    def parts(self, state: int) -> tuple[tuple[int, ...], bytes]:
        """The row of ``state`` as its targets and picks (module docstring), computed once: its
        successor on byte ``b`` is ``targets[picks[b]]``, and ``picks[b]`` is 0 where ``b`` is refused."""
        picks = self._picks[state]
        if picks is None:
            with self._lock:
                picks = self._picks[state]
                if picks is None:
                    targets, picks = self._compute_row(state)
                    self._targets[state] = targets
                    self._picks[state] = picks
        return self._targets[state], picks

    def row(self, state: int) -> tuple[int, ...]:
        """All 256 successors of ``state`` (``DEAD`` where a byte is refused), as one tuple made
        for the caller (walks use ``parts``)."""
        targets, picks = self.parts(state)
        return tuple(map(targets.__getitem__, picks))

    def row_array(self, state: int) -> np.ndarray:
        """``row(state)`` as an int32 array."""
        targets, picks = self.parts(state)
        return np.asarray(targets, dtype=np.int32)[np.frombuffer(picks, dtype=_PICK_DTYPE[type(picks)])]

    def moves(self, state: int) -> bytes | None:
        """The bytes ``state`` reads (its row then exists), computed once; None when it reads more
        than ``FEW_MOVES`` bytes (a walk then looks bytes up in the row instead)."""
        found = self._moves.get(state, _UNSEEN)
        if found is _UNSEEN:
            picks = self.parts(state)[1]
            # the bytes read picked out in C: most states that a wide trie node meets read few
            found = self._moves[state] = None if picks.count(0) < 256 - FEW_MOVES else bytes(
                compress(range(256), picks))
        return found

    def slots(self, shifted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The flat table and the slot in it of each state of ``shifted`` (ids + 1), their rows
        filled in first (see ``__init__``)."""
        with self._lock:
            if len(self._slot_of) <= self.num_states:
                grown = np.full(max(2 * len(self._slot_of), self.num_states + 1), -1, dtype=np.int64)
                grown[: len(self._slot_of)] = self._slot_of
                self._slot_of = grown
        slot = self._slot_of[shifted]
        missing = slot < 0
        if missing.any():
            for shifted_id in set(shifted[missing].tolist()):
                row = self.row_array(shifted_id - 1) + 1
                with self._lock:
                    n = self._slots_used
                    if (n + 1) * 256 > len(self._flat):
                        flat = np.zeros(2 * len(self._flat), dtype=np.int32)
                        flat[: len(self._flat)] = self._flat
                        self._flat = flat
                    self._flat[n * 256: n * 256 + 256] = row
                    self._slot_of[shifted_id] = n
                    self._slots_used = n + 1
            slot = self._slot_of[shifted]
        return self._flat, slot

    # -- construction ------------------------------------------------------------------------
    def _push(self, parent: int, top: int) -> int:
        """The number of the stack ``parent`` with ``top`` on it (interned)."""
        key = parent * self._width + top
        c = self._stack_ids.get(key)
        if c is None:
            c = self._stack_ids[key] = len(self._top)
            self._parent.append(parent)
            self._top.append(top)
            self._left.append(self._left[parent] - self._costs[top])
        return c

    def _close_one(self, c: int) -> Closed:
        """The configurations that stack ``c`` reaches without reading a byte and that read one,
        and whether the document may end there; computed once per stack.

        Each top is closed on its own (``_local``, memoised per program state and depth), its tails
        pushed on the stack below; only a top that finishes its fragment returns into the stack
        below, which is then closed the same way."""
        found = self._stack_closures.get(c)
        if found is not None:
            return found
        if self._simple[self._top[c]]:  # a literal's next byte, most often
            found = self._stack_closures[c] = (c,)
            return found
        local, parent, top, left = self._local_memo, self._parent, self._top, self._left
        ids, push, width = self._stack_ids, self._push, self._width
        kernel: list[int] = []
        x = c
        while True:
            s, below = top[x], parent[x]
            key = (s, left[x])
            part = local.get(key)
            if part is None:
                part = local[key] = self._local(s, left[x])
            tails, returns = part
            for tail in tails:
                y = below
                for t in tail:
                    y = ids.get(y * width + t) or push(y, t)
                kernel.append(y)
            if not returns:
                break
            if below == EMPTY:
                kernel.append(ENDS)  # the root fragment finished
                break
            known = self._stack_closures.get(below)
            if known is not None:
                kernel += known
                break
            x = below
        found = self._stack_closures[c] = tuple(sorted(set(kernel)))
        return found

    def _closure(self, moved) -> Closed:
        """What the moved stacks ``moved`` (an int, or a sorted tuple of several) close into."""
        if type(moved) is int:
            return self._close_one(moved)
        close = self._close_one
        kernel: set[int] = set()
        for c in moved:
            kernel.update(close(c))
        return tuple(sorted(kernel))

    def _local(self, state: int, left: int) -> tuple[tuple[tuple[int, ...], ...], bool]:
        """The closure of one stack top: the stacks (this frame, then any frames it calls) that
        read a byte, as the states to push in place of the top, and whether the frame itself may
        finish."""
        prog = self.program
        edges, eps, calls, frags = prog.edges, prog.eps, prog.calls, prog.fragments
        stop, written_edges, written_eps, written_calls = self._stop, self._written_edges, self._written_eps, self._written_calls
        costs, is_final, waiting = self._costs, self._is_final, prog.waiting
        seen: set[tuple[int, ...]] = set()
        stack = [((state,), left)]
        tails = []
        returns = False
        while stack:
            c, left = stack.pop()
            if c in seen:
                continue
            seen.add(c)
            s = c[-1]
            if s < stop:
                s_edges, s_eps, s_calls = written_edges[s], written_eps[s], written_calls[s]
            else:
                s_edges, s_eps, s_calls = edges[s], eps[s], calls[s]
            if s_edges:
                tails.append(c)
            left_below = left + costs[s]  # what the stack without its top has left
            if is_final[s]:
                if len(c) == 1:
                    returns = True
                else:
                    stack.append((c[:-1], left_below))
            if s_eps or s_calls:
                live = prog.live(left)
                for t in s_eps:
                    if live[t]:
                        stack.append((c[:-1] + (t,), left_below - costs[t]))
                for g, r in s_calls:
                    frag = frags[g]
                    inner = left - 1 if frag.costs_depth else left
                    if inner >= 0 and live[r] and prog.live(inner)[frag.start]:
                        if waiting and g in waiting:
                            prog.enter(g)  # lowered now: its start moves to the new segment
                        stack.append((c[:-1] + (r, frag.start), left_below - costs[r] - costs[frag.start]))
        return tuple(tails), returns

    def _intern(self, closed: Closed, kind: int = 0) -> int:
        """The state of a closed set of configurations: an exact one, or (``kind`` > 0) the mask
        twin of it, its stacks represented first."""
        if not closed:
            return DEAD
        if kind:
            ends = closed[0] == ENDS
            represent = self._represent
            closed = (-1 - kind, *((ENDS,) if ends else ()), *sorted({represent(c, kind) for c in closed[ends:]}))
        sid = self._ids.get(closed)
        if sid is None:
            if len(self._kernels) >= self.max_states:
                raise AutomatonTooLarge(f"more than {self.max_states} automaton states reached")
            sid = len(self._kernels)
            self._ids[closed] = sid
            start = 1 if kind else 0
            accepting = closed[start] == ENDS
            self._kernels.append(closed[start + accepting:])
            self._accepting.append(accepting)
            self._kind.append(kind)
            self._targets.append(None)
            self._picks.append(None)
        return sid

    def _compute_row(self, state: int) -> tuple[tuple[int, ...], bytes]:
        """Successors for all bytes at once, as targets and picks. The configurations' moves are
        grouped by byte range; when the ranges do not overlap (most states), each range's moves are
        closed once as they are, else the byte axis is first cut at every range boundary (``_cut``)."""
        known, moves_of = self._stack_moves, self._moves_of
        kernel = self._kernels[state]
        ranges: dict[int, list[int]] = {}  # lo << 8 | hi -> moved stacks
        for c in kernel:
            found = known.get(c)
            if found is None:
                found = known[c] = moves_of(c)
            if len(found) == 2 and len(kernel) == 1:  # one configuration, one edge (a literal's next byte): most rows
                sid = self._state_after([found[1]], self._kind[state])
                return ((DEAD,), _NONE_READ) if sid == DEAD else ((DEAD, sid), _range_picks(found[0]))
            pairs = iter(found)
            for key, moved in zip(pairs, pairs):
                same = ranges.get(key)
                if same is None:
                    ranges[key] = [moved]
                else:
                    same.append(moved)
        pieces = []
        end = 0
        for key in sorted(ranges):
            if key >> 8 < end:  # overlapping ranges
                pieces = _cut(ranges)
                break
            end = (key & 255) + 1
            pieces.append((key >> 8, end, ranges[key]))
        targets = [DEAD]
        index = {DEAD: 0}
        picks = bytearray(256)
        state_after, kind = self._state_after, self._kind[state]
        for a, b, moved in pieces:
            sid = state_after(moved, kind)
            k = index.get(sid)
            if k is None:
                k = index[sid] = len(targets)
                targets.append(sid)
            if k < 256:
                picks[a:b] = _PICK[k] * (b - a)
        if len(targets) <= 256:
            return tuple(targets), bytes(picks)
        wide = array("H", bytes(512))  # more distinct successors than a byte can number
        for a, b, moved in pieces:  # each piece's state is known now (``_closed``)
            wide[a:b] = array("H", [index[state_after(moved, kind)]]) * (b - a)
        return tuple(targets), wide

    def _state_after(self, moved: list[int], kind: int = 0) -> int:
        """The state that the stacks ``moved`` by one byte close into (its mask twin for a ``kind``)."""
        # a sorted tuple, not a frozenset: the collector stops tracking tuples of numbers
        key = moved[0] if len(moved) == 1 else tuple(sorted(set(moved)))
        closed = self._closed_twins[kind] if kind else self._closed
        sid = closed.get(key)
        if sid is None:
            sid = closed[key] = self._intern(self._closure(key), kind)
        return sid

    def _moves_of(self, c: int) -> tuple[int, ...]:
        """The byte edges of stack ``c``'s top into states live with its depth left, as range
        (``lo << 8 | hi``, so the ranges of a row group by an int) and stack moved to, one after
        the other in one flat tuple (a byte edge stays in its fragment: the depth left is kept)."""
        live = self.program.live(self._left[c])
        below = self._parent[c]
        ids, push, base = self._stack_ids, self._push, below * self._width
        flat: list[int] = []
        top = self._top[c]
        for lo, hi, t in self._written_edges[top] if top < self._stop else self.program.edges[top]:
            if live[t]:
                flat += (lo << 8 | hi, ids.get(base + t) or push(below, t))
        return tuple(flat)


def _cut(ranges: dict[int, list]) -> list[tuple[int, int, list]]:
    """Overlapping byte ranges (``lo << 8 | hi``) swept into pieces ``(start, end exclusive,
    moves)``: at each boundary moves start or end, and between two the set is fixed."""
    events: dict[int, list[tuple[int, int]]] = {}
    for key, moved in ranges.items():
        for c in moved:
            events.setdefault(key >> 8, []).append((1, c))
            events.setdefault((key & 255) + 1, []).append((-1, c))
    pieces = []
    active: dict[int, int] = {}
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
