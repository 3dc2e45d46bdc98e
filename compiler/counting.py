"""Free strings as counted blocks (``automaton.counted``): the template of a scalar automaton, made
once per automaton, and when a string's length bounds can be a count instead of a product.

``chardfa.with_length`` crosses a scalar automaton with a count: one state per (state, count), so
``maxLength: 65535`` was 65,536 states built for every compile. A counted block holds the automaton
once and the count aside; it is exact when a state's fewest scalars to acceptance (``dist``) settle
whether it can still finish within the bounds: when ``minLength`` is 0 (only an upper bound to stay
under), or when every accepting state reads a scalar into an accepting state (then from a state
``dist`` scalars from acceptance, every longer length is reachable too, so any lower bound is).
A pattern's counted group (``regex.counted_pattern``) is a block too, counting the group's
iterations from 0 to the most left optional; a length beside it would be a second count, so the
pattern is then unrolled (``counted_group``).

The template hangs on its automaton (``CharDFA.derived``): formats and patterns are cached per
process (``format_terms``, ``pattern_dfa``'s LRU), so their templates are made once per process,
shared by every grammar that uses them, and freed with the automaton when its cache lets it go. A
grammar's blocks hold their template, so a pickled grammar carries it along.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache

from automaton.counted import UNREACHABLE, Template

from .chardfa import MAX_SCALAR, CharDFA
from .ir import Node
from .regex import CountedPattern, counted_pattern
from .strings import PLAIN_SCALARS, SURROGATES, ascii_raw, spelled_parts, subtract_points

COUNTED_MIN = 64  # product states from which a counter pays; below it the product is built as before
# automata up to this size are checked for states that read plain text forever; the larger ones
# count (a long maxLength unrolled), so they have none, and the check would cost
FOREVER_MAX = 1024


def _writable(lo: int, hi: int) -> bool:
    """Some scalar of ``lo..hi`` is not a lone surrogate, which JSON text cannot hold."""
    return lo < SURROGATES[0] or hi > SURROGATES[1]


def _distances(dfa: CharDFA, stepped: frozenset[int] | None = None) -> list[int]:
    """Per state, the fewest counts to acceptance over writable scalars (``UNREACHABLE`` when none
    leads there): each scalar counts, or (``stepped``) each entry into a stepped state."""
    reverse: list[list[int]] = [[] for _ in dfa.edges]
    for q, row in enumerate(dfa.edges):
        for lo, hi, t in row:
            if _writable(lo, hi):
                reverse[t].append(q)
    dist = [UNREACHABLE] * dfa.size
    todo = deque()
    for q in sorted(dfa.accepting):
        dist[q] = 0
        todo.append(q)
    while todo:  # breadth first, a count of 0 ahead of the queue (each scalar counts 0 or 1)
        t = todo.popleft()
        cost = 1 if stepped is None or t in stepped else 0
        for q in reverse[t]:
            if dist[t] + cost < dist[q]:
                dist[q] = dist[t] + cost
                todo.append(q) if cost else todo.appendleft(q)
    return dist


def by_target(row) -> list[tuple[int, tuple[tuple[int, int], ...]]]:
    """A scalar automaton's row as (target, the scalar ranges leading there)."""
    if len(row) == 1:  # most rows
        lo, hi, t = row[0]
        return [(t, ((lo, hi),))]
    by_target: dict[int, list[tuple[int, int]]] = {}
    for lo, hi, t in row:
        by_target.setdefault(t, []).append((lo, hi))
    return [(t, tuple(ranges)) for t, ranges in by_target.items()]


def template(dfa: CharDFA, literal: bool = False, stepped: frozenset[int] | None = None) -> Template:
    """``dfa`` as a free string writes it (``literal``: under the literal rules, as keys beyond the
    names are written): per state, the raw ASCII bytes of its scalars, and call slots for their
    escapes and multi-byte forms (one slot per scalar set, split at ASCII, so the big non-ASCII
    part, the same in almost every set, is one fragment per grammar). Each scalar moves to the next
    count, or (``stepped``: a pattern's counted group) only those entering a stepped state. Made
    once per rules."""
    name = "key template" if literal else "stepped template" if stepped is not None else "template"
    found = dfa.derived.get(name)
    if found is None:
        made = _keys_template if literal and dfa.names is not None and stepped is None else _template
        found = dfa.derived[name] = made(dfa, literal, stepped)
    return found


def _template(dfa: CharDFA, literal: bool, stepped: frozenset[int] | None) -> Template:
    width = dfa.size
    slots: dict[tuple, int] = {}
    plans: dict[tuple, tuple[list, list[int]]] = {}  # per scalar set: its raw ASCII ranges, its slots
    edges, calls = [], []
    for row in dfa.edges:
        row_edges, row_calls = [], []
        for t, scalars in by_target(row):
            plan = plans.get(scalars)
            if plan is None:
                plan = plans[scalars] = (ascii_raw(scalars), [slots.setdefault(part, len(slots))
                                                              for part in spelled_parts(scalars, literal)])
            t += width if stepped is None or t in stepped else 0  # a target in the next count
            for a, b in plan[0]:
                row_edges.append((a, b, t))
            for k in plan[1]:
                row_calls.append((k, t))
        edges.append(tuple(row_edges))
        calls.append(tuple(row_calls))
    forever: frozenset[int] = frozenset()
    if dfa.size <= FOREVER_MAX and stepped is None:
        forever = frozenset(dfa.closed_under(PLAIN_SCALARS) & dfa.finishing(SURROGATES))
    return Template(tuple(edges), tuple(calls), tuple(slots), bytes(q in dfa.accepting for q in range(dfa.size)),
                    tuple(_distances(dfa, stepped)), forever)


RAW_ASCII = tuple(ascii_raw(((0, MAX_SCALAR),)))  # the ASCII scalars the literal rules write raw only
ANY_SCALAR_PARTS = spelled_parts(((0, MAX_SCALAR),), True)


def _keys_template(dfa: CharDFA, literal: bool, stepped: None) -> Template:
    """``_template`` of ``other_strings``' automaton (an object's additional keys: half a median
    compile's templates), read off its shape: a trie state's row is its children, one scalar each,
    then the gaps between them into the sink. Names of plain ASCII leave every gap the same slots
    (the escaped-only ASCII and everything past ASCII), so no row's scalar sets are sorted into
    plans; a state is at most one scalar from acceptance (a gap reaches the sink)."""
    width = dfa.size
    sink = width - 1
    slots: dict[tuple, int] = {}
    edges, calls = [], []
    for row in dfa.edges:
        row_edges, row_calls, raw, odd = [], [], [], False
        for lo, hi, t in row:
            if t == sink:
                continue
            if lo in _RAW_POINTS:
                row_edges.append((lo, lo, t + width))
                raw.append(lo)
            else:  # a name's escaped-only or non-ASCII scalar: the gaps' own parts differ too
                odd = True
                row_calls += [(slots.setdefault(part, len(slots)), t + width) for part in spelled_parts(((lo, hi),), True)]
        if odd:
            gaps = tuple((lo, hi) for lo, hi, t in row if t == sink)
            row_edges += [(lo, hi, sink + width) for lo, hi in ascii_raw(gaps)]
            parts = spelled_parts(gaps, True)
        else:
            row_edges += [(lo, hi, sink + width) for lo, hi in _raw_gaps(tuple(raw))]
            parts = ANY_SCALAR_PARTS
        row_calls += [(slots.setdefault(part, len(slots)), sink + width) for part in parts]
        edges.append(tuple(row_edges))
        calls.append(tuple(row_calls))
    accepting = bytes(q in dfa.accepting for q in range(width))
    return Template(tuple(edges), tuple(calls), tuple(slots), accepting, tuple(1 - a for a in accepting),
                    frozenset(range(width)))  # every state: the automaton is total


_RAW_POINTS = frozenset(c for lo, hi in RAW_ASCII for c in range(lo, hi + 1))


@lru_cache(maxsize=4096)
def _raw_gaps(points: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The raw-only ASCII less ``points`` (a trie state's children), as ranges."""
    return tuple(subtract_points(RAW_ASCII, points))


def _goes_on(dfa: CharDFA) -> bool:
    """Every accepting state reads a scalar into an accepting state (then any lower bound is exact)."""
    return all(any(t in dfa.accepting and _writable(lo, hi) for lo, hi, t in dfa.edges[q]) for q in dfa.accepting)


def counted(dfa: CharDFA, lo: int, hi: int | None) -> bool | None:
    """Whether ``dfa`` within ``lo..hi`` scalars is best a counted block (exact, and larger than
    ``COUNTED_MIN`` as a product, or no bound at all); None when no string is left."""
    if hi is not None and lo > hi:
        return None
    if lo == 0 and hi is None:
        return True
    if ((lo if hi is None else hi) + 1) * dfa.size < COUNTED_MIN:
        return False
    shape = template(dfa)
    if not (hi is not None and lo == 0) and not _goes_on(dfa):
        return False
    return shape.dist[dfa.start] <= (UNREACHABLE - 1 if hi is None else hi) or None


def counted_group(node: Node, dialect: str) -> CountedPattern | None:
    """The string's pattern with its group repetition counted (``regex.counted_pattern``), when
    nothing else bounds the string (a ``maxLength`` or a format would be a second count: the pattern
    is then unrolled; a ``minLength`` within its shortest match says nothing) and a match fits the
    group's count. Asked by the lowering and by the deferral, which must agree."""
    string = node.string
    if (string is None or len(string.patterns) != 1 or string.max_length is not None or node.formats
            or node.not_values or string.not_patterns or string.not_formats):
        return None
    group = counted_pattern(string.patterns[0], dialect)
    if group is None or (string.min_length or 0) > group.shortest:
        return None
    return group if template(group.dfa, stepped=group.stepped).dist[group.dfa.start] <= group.most else None


@lru_cache(maxsize=None)
def items_template(space: tuple[tuple[int, int], ...], run: int | None) -> Template:
    """An array's items, counted: after ``[`` (states 0..k-1), after an item (k..2k-1), after a comma
    (2k..3k-1), where those before a comma may close the array; an item is a call (slot 0: the
    item's fragment) into the next count. Whitespace (the bytes of ``space``) moves along a run of
    ``k = run + 1`` states at each place, or (``run`` None) loops on one. One per whitespace mode."""
    k = 1 if run is None else run + 1
    width = 3 * k
    edges, calls = [], []
    for place in (0, k, 2 * k):
        for i in range(k):
            ahead = place + i if run is None else place + i + 1 if i < run else -1
            row = [(lo, hi, ahead) for lo, hi in space] if ahead >= 0 else []
            edges.append(tuple(row + ([(0x2C, 0x2C, 2 * k)] if place == k else [])))
            calls.append(() if place == k else ((0, width + k),))
    accepting = bytes([1] * (2 * k) + [0] * k)
    return Template(tuple(edges), tuple(calls), ("item",), accepting, (0,) * (2 * k) + (1,) * k, ())
