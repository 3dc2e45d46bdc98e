"""Plain text: what a free JSON string reads without a second look.

Most tokens of a vocabulary are *plain*: UTF-8 text (maybe ending inside a scalar) with no quote,
backslash or control character. Inside a free string (a value, an additional key, a string with room left under
its ``maxLength``) every plain token up to some length is allowed, so such a state's mask is "the
plain tokens that fit" plus a walk over the few other tokens. ``TextReach`` computes, from the
program alone and once per program state, how many bytes of *any* plain text a state is sure to
read; it is a lower bound (sound), and ``UNBOUNDED`` when every plain text of any length is read.
"""

from __future__ import annotations

import threading
from collections import deque
from functools import lru_cache
from dataclasses import dataclass

UNBOUNDED = 1 << 30
ROOM_CAP = 256  # rooms are exact up to this many bytes (more than any plain token needs)
HORIZON = 2 * ROOM_CAP  # steps explored from a query; states past it count as reading nothing
STATE_BUDGET = 5_000  # states explored per query; past it the rest count as reading nothing

# The UTF-8 decoder over plain text: boundary, then the states inside a multi-byte scalar.
B, C1, C2, C3, E0, ED, F0, F4 = range(8)
PLAIN_STEPS = {
    B: ((0x20, 0x21, B), (0x23, 0x5B, B), (0x5D, 0x7E, B), (0xC2, 0xDF, C1), (0xE0, 0xE0, E0),
        (0xE1, 0xEC, C2), (0xED, 0xED, ED), (0xEE, 0xEF, C2), (0xF0, 0xF0, F0), (0xF1, 0xF3, C3),
        (0xF4, 0xF4, F4)),
    C1: ((0x80, 0xBF, B),), C2: ((0x80, 0xBF, C1),), C3: ((0x80, 0xBF, C2),),
    E0: ((0xA0, 0xBF, C1),), ED: ((0x80, 0x9F, C1),), F0: ((0x90, 0xBF, C2),), F4: ((0x80, 0x8F, C2),),
}


_TABLE = [[-1] * 256 for _ in PLAIN_STEPS]
for _u, _steps in PLAIN_STEPS.items():
    for _lo, _hi, _next in _steps:
        _TABLE[_u][_lo: _hi + 1] = [_next] * (_hi - _lo + 1)


def _never(_state: int) -> bool:
    """The compiler declares states that read plain text forever, never another class."""
    return False


def _plain_run(data: bytes) -> tuple[int, int]:
    """How far ``data`` is plain text: the index of the first byte that is not (``len(data)``
    when all are), and the decoder state before it."""
    u = B
    for i, b in enumerate(data):
        nxt = _TABLE[u][b]
        if nxt < 0:
            return i, u
        u = nxt
    return len(data), u


def breaks_strings(data: bytes) -> bool:
    """Plain text up to a byte that no JSON string reads raw: a control character, or bytes that are
    not UTF-8. Inside a string such a token can never be read, whatever the schema."""
    end, u = _plain_run(data)
    if end == len(data):
        return False
    b = data[end]
    return b < 0x20 or u != B or 0x80 <= b < 0xC2 or b >= 0xF5


def is_plain(data: bytes) -> bool:
    """Plain text, possibly ending inside a scalar: every byte a step of ``PLAIN_STEPS`` from the
    boundary (no quote, backslash, control character or DEL; no invalid or stray UTF-8)."""
    return bool(data) and _plain_run(data)[0] == len(data)


MULTI_BYTE = 2  # the fewest bytes of a scalar outside ASCII


@dataclass(frozen=True)
class TextClass:
    """A kind of text whose room is measured: its ASCII bytes, and whether every scalar outside
    ASCII belongs to it too."""

    ascii_ranges: tuple[tuple[int, int], ...]
    multibyte: bool


PLAIN = TextClass(((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x7E)), multibyte=True)
DIGITS = TextClass(((0x30, 0x39),), multibyte=False)
WHITESPACE = TextClass(((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)), multibyte=False)


def is_whitespace(data: bytes) -> bool:
    """JSON whitespace only (space, tab, line feed, carriage return)."""
    return bool(data) and not data.strip(b" \t\n\r")


def _pieces(lo: int, hi: int, edges):
    """``lo..hi`` cut at the bounds of ``edges`` (``(a, b, target)``, inclusive): each piece
    ``(x, y)`` (``y`` exclusive) with the targets of the edges covering all of it."""
    cuts = sorted({lo, hi + 1} | {max(a, lo) for a, b, _ in edges if a <= hi and b >= lo}
                  | {min(b, hi) + 1 for a, b, _ in edges if a <= hi and b >= lo})
    for x, y in zip(cuts, cuts[1:]):
        yield x, y, [t for a, b, t in edges if a <= x and y - 1 <= b]


@lru_cache(maxsize=8192)
def _cover_spans(ranges: tuple[tuple[int, int], ...], spans: tuple[tuple[int, int], ...]):
    """``ranges`` cut at the bounds of ``spans``: per piece, the indices of the spans covering it
    (each distinct set once); None when a piece has none. States of one shape share the answer."""
    edges = [(a, b, i) for i, (a, b) in enumerate(spans)]
    found = set()
    for lo, hi in ranges:
        for _, _, covering in _pieces(lo, hi, edges):
            if not covering:
                return None
            found.add(tuple(covering))
    return tuple(found)


class TextReach:
    """``reach(state)``: bytes of any text of a ``TextClass`` (plain string text, whitespace) that
    program ``state`` surely reads at a scalar boundary, staying inside its fragment (memoised,
    thread-safe).

    ASCII comes from the state's own byte edges (after epsilon moves); the rest of plain text from
    calls to fragments that together read every scalar outside ASCII raw and return (how strings
    are lowered: the multi-byte forms of a class are shared fragments). Anything else counts as
    unread, which only makes the answer smaller.
    """

    def __init__(self, program, live, text: TextClass = PLAIN):
        self.program = program
        self.live = live  # the live states of the depth the configurations have left
        self.text = text
        self._memo: dict[int, int] = {}
        self._forever = program.reads_forever if text is PLAIN else _never  # declared by the compiler
        self._covers: dict[frozenset[int], bool] = {}
        self._lock = threading.Lock()

    def __call__(self, state: int) -> int:
        r = self._memo.get(state)
        if r is None:
            if self._forever(state):
                return UNBOUNDED
            with self._lock:
                r = self._memo.get(state)
                if r is None:
                    r = self._compute(state)
        return r

    def _closure(self, state: int):
        if not self.program.eps[state]:
            return (state,)
        seen = {state}
        todo = [state]
        while todo:
            for t in self.program.eps[todo.pop()]:
                if t not in seen and self.live[t]:
                    seen.add(t)
                    todo.append(t)
        return seen

    def moves(self, state: int) -> tuple[list[tuple[int, int, int]], list[tuple[int, int]]]:
        """The live byte edges ``(lo, hi, target)`` of ``state`` and its epsilon closure, and the
        calls ``(fragment, return state)`` that may read a scalar outside ASCII."""
        prog, live = self.program, self.live
        edges, calls = [], []
        for s in self._closure(state):
            edges += [(lo, hi, t) for lo, hi, t in prog.edges[s] if live[t]]
            if self.text.multibyte:
                for g, r in prog.calls[s]:
                    frag = prog.fragments[g]
                    if not frag.costs_depth and live[r] and live[frag.start]:
                        calls.append((g, r))
        return edges, calls

    def scalar_pieces(self, edges, calls) -> list[tuple[int, ...]] | None:
        """The return states that the scalars outside ASCII lead to, as pieces (each scalar leads
        to one of a piece's states at least, so a piece's greatest room is sound); None when some
        such scalar is refused or read by a raw byte edge.

        A fragment that reads every scalar by itself is one piece with all such fragments' returns;
        fragments that only read them together (a pattern's \\S and \\s) are a piece each."""
        if any(lo >= 0x80 for lo, _, _ in edges) or not calls:
            return None
        whole = tuple({r for g, r in calls if self._cover(frozenset((g,)))})
        if whole:
            return [whole]
        if not self._cover(frozenset(g for g, _ in calls)):
            return None
        return [(r,) for r in {r for _, r in calls}]

    def _successors(self, state: int) -> list[tuple[int, tuple[int, ...]]] | None:
        """Per piece of text (each ASCII run the byte edges cut, then the scalars outside ASCII):
        the bytes it costs and the states it may lead to; None when some text of the class is
        refused."""
        edges, calls = self.moves(state)
        cut = _cover_spans(self.text.ascii_ranges, tuple([(lo, hi) for lo, hi, _ in edges]))
        if cut is None:
            return None
        pieces = {(1, tuple({edges[i][2] for i in covering})) for covering in cut}
        if self.text.multibyte:
            scalars = self.scalar_pieces(edges, calls)
            if scalars is None:
                return None
            pieces.update((MULTI_BYTE, targets) for targets in scalars)
        return list(pieces)

    def _cover(self, fragments: frozenset[int]) -> bool:
        """The ``fragments`` together read every scalar outside ASCII in raw UTF-8, each such
        reading able to finish its fragment."""
        known = self._covers.get(fragments)
        if known is None:
            frags = self.program.fragments
            start = [(x, g) for g in fragments for x in self._closure(frags[g].start)]
            known = self._covers[fragments] = self._cover_from(start, B, 0)
        return known

    def _cover_from(self, positions: list[tuple[int, int]], u: int, depth: int) -> bool:
        """Every byte sequence that completes a scalar from decoder state ``u`` is read by one of
        ``positions`` (program state, its fragment) up to a state that may finish the fragment."""
        if depth > 3:
            return False
        prog, live, frags = self.program, self.live, self.program.fragments
        steps = PLAIN_STEPS[u] if u != B else [x for x in PLAIN_STEPS[B] if x[0] >= 0x80]
        for lo, hi, u2 in steps:
            edges = [(a, b, (t, g)) for s, g in positions for a, b, t in prog.edges[s] if live[t]]
            for _, _, nxt in _pieces(lo, hi, edges):
                if u2 == B:
                    if not any(frags[g].final in self._closure(t) for t, g in nxt):
                        return False
                elif not nxt or not self._cover_from([(c, g) for t, g in nxt for c in self._closure(t)], u2, depth + 1):
                    return False
        return True

    def _compute(self, start: int) -> int:
        """Explore the states plain text leads to (stopping at known ones), keep the greatest set
        that reads plain text forever (``UNBOUNDED``), then count the others' room from the sinks up."""
        memo = self._memo
        pieces: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
        value: dict[int, int] = {}  # final values: known states, blocked ones, then the rest
        steps = {start: 0}  # breadth first, so the states near the query are the ones known exactly
        queue = deque([start])
        while queue:
            s = queue.popleft()
            if s in memo:
                value[s] = memo[s]
                continue
            if self._forever(s):
                value[s] = UNBOUNDED
                continue
            succ = self._successors(s) if steps[s] < HORIZON and len(pieces) < STATE_BUDGET else None
            if succ is None:
                value[s] = 0
                continue
            pieces[s] = succ
            for _, targets in succ:
                for t in targets:
                    if t not in steps:
                        steps[t] = steps[s] + 1
                        queue.append(t)
        preds: dict[int, list[int]] = {}
        for s, succ in pieces.items():
            for _, targets in succ:
                for t in targets:
                    preds.setdefault(t, []).append(s)
        # the greatest set whose every piece leads into the set
        total = set(pieces) | {s for s, v in value.items() if v == UNBOUNDED}
        check = list(pieces)
        while check:
            s = check.pop()
            if s in total and s in pieces and not all(any(t in total for t in targets) for _, targets in pieces[s]):
                total.discard(s)
                check.extend(preds.get(s, ()))
        for s in total:
            value[s] = UNBOUNDED
        # the others, successors first; a state on a cycle outside the total set reads nothing more
        waiting = {s: {t for _, targets in succ for t in targets if t not in value}
                   for s, succ in pieces.items() if s not in total}
        ready = [s for s, w in waiting.items() if not w]
        while ready:
            s = ready.pop()
            best = UNBOUNDED - 1
            for cost, targets in pieces[s]:
                best = min(best, cost + max(value.get(t, 0) for t in targets))
            value[s] = best
            for p in preds.get(s, ()):
                w = waiting.get(p)
                if w is not None and s in w:
                    w.discard(s)
                    if not w:
                        ready.append(p)
        # a state far from the query may have met the horizon too soon: remember only the near ones,
        # whose room is exact up to ROOM_CAP (a cut horizon costs them at least that much); past the
        # budget, every value is a lower bound (sound: a room only allows less), and all are kept,
        # or each later query from these states would explore the budget again
        budget_hit = len(pieces) >= STATE_BUDGET
        for s in pieces:
            v = value.get(s, 0)
            if v == UNBOUNDED or budget_hit or steps[s] <= HORIZON - ROOM_CAP:
                memo[s] = v if v == UNBOUNDED else min(v, ROOM_CAP)
        v = value.get(start, 0)
        return memo.setdefault(start, v if v == UNBOUNDED else min(v, ROOM_CAP))


def room_together(starts, text: TextClass, refused: frozenset[int] = frozenset()) -> int:
    """Bytes of any text of ``text`` not starting with a byte of ``refused`` that a set of
    configurations reads together: ``starts`` holds (analysis of the configuration's depth, its
    program state). Unlike the best of their rooms one by one, a first byte that only some of
    them read counts: a key that is any name but also a pattern property's ``/...``."""
    edges, calls = [], []
    for reach, state in starts:
        e, c = reach.moves(state)
        edges += [(lo, hi, (reach, t)) for lo, hi, t in e]
        calls.append((reach, e, c))
    best = UNBOUNDED
    for lo, hi in text.ascii_ranges:
        for x, y, targets in _pieces(lo, hi, edges):
            if targets:
                best = min(best, 1 + max(reach(t) for reach, t in targets))
            elif not refused.issuperset(range(x, y)):
                return 0
    if text.multibyte:
        # the scalars outside ASCII, through the configurations that read them all
        scalars = [min(max(reach(t) for t in piece) for piece in pieces)
                   for reach, e, c in calls for pieces in [reach.scalar_pieces(e, c)] if pieces]
        if not scalars:
            return 0
        best = min(best, MULTI_BYTE + max(scalars))
    return best if best >= UNBOUNDED else min(best, ROOM_CAP)
