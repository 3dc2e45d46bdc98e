"""When a string's length bounds can be a counter (``automaton.counted``) instead of a product.

``chardfa.with_length`` crosses a scalar automaton with a count: one state per (state, count), so
``maxLength: 65535`` was 65,536 states built for every compile. A counted block holds the automaton
once and the count aside; it is exact when a state's fewest scalars to acceptance (``dist``) settle
whether it can still finish within the bounds: when ``minLength`` is 0 (only an upper bound to stay
under), or when every accepting state reads a scalar into an accepting state (then from a state
``dist`` scalars from acceptance, every longer length is reachable too, so any lower bound is).
"""

from __future__ import annotations

from automaton.counted import UNREACHABLE

from .chardfa import CharDFA

COUNTED_MIN = 64  # product states from which a counter pays; below it the product is built as before


def writable(lo: int, hi: int, unwritable: tuple[int, int]) -> bool:
    """Some scalar of ``lo..hi`` lies outside ``unwritable`` (lone surrogates, which JSON text cannot hold)."""
    return lo < unwritable[0] or hi > unwritable[1]


def distances(dfa: CharDFA, unwritable: tuple[int, int]) -> list[int]:
    """Per state, the fewest writable scalars to acceptance (``UNREACHABLE`` when none leads there)."""
    reverse: list[list[int]] = [[] for _ in dfa.edges]
    for q, row in enumerate(dfa.edges):
        for lo, hi, t in row:
            if writable(lo, hi, unwritable):
                reverse[t].append(q)
    dist = [UNREACHABLE] * dfa.size
    frontier = sorted(dfa.accepting)
    for q in frontier:
        dist[q] = 0
    steps = 0
    while frontier:
        steps += 1
        nxt = []
        for t in frontier:
            for q in reverse[t]:
                if dist[q] == UNREACHABLE:
                    dist[q] = steps
                    nxt.append(q)
        frontier = nxt
    return dist


def _accepting_goes_on(dfa: CharDFA, unwritable: tuple[int, int]) -> bool:
    """Every accepting state reads a writable scalar into an accepting state."""
    return all(any(t in dfa.accepting and writable(lo, hi, unwritable) for lo, hi, t in dfa.edges[q])
               for q in dfa.accepting)


def counter_distances(dfa: CharDFA, lo: int, hi: int | None, unwritable: tuple[int, int]) -> list[int] | None:
    """``distances`` when ``dfa`` within ``lo..hi`` scalars is best a counted block (exact, and
    larger than ``COUNTED_MIN`` as a product), else None (build ``with_length``'s product)."""
    rows = (lo if hi is None else hi) + 1
    if rows * dfa.size < COUNTED_MIN or (hi is not None and lo > hi):
        return None
    if not (hi is not None and lo == 0) and not _accepting_goes_on(dfa, unwritable):
        return None
    return distances(dfa, unwritable)
