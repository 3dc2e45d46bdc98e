"""How a Unicode scalar may be written inside a JSON string, as byte paths.

Two policies:

* ``literal`` (keys, ``enum``, ``const``): a scalar outside ASCII comes raw (its UTF-8 bytes) or as
  ``\\uXXXX`` in either hex case (a surrogate pair above the BMP); the quote, the backslash and
  control characters only escaped (short escape or ``\\u00XX``); every other ASCII scalar raw only,
  so a model nudged off its preferred spelling cannot drift into ``\\u006f``.
* free (strings with no fixed value): any scalar raw except ``"``, ``\\`` and controls, and any
  scalar escaped (``\\uXXXX``, or a short escape including ``\\/``).

A path is a list of inclusive byte ranges; ``add_scalar`` threads a scalar's paths between two
program states, sharing common prefixes.
"""

from __future__ import annotations

from functools import lru_cache

from automaton.plain import PLAIN
from automaton.program import Program

Path = tuple[tuple[int, int], ...]

SHORT_ESCAPES = {0x22: ord('"'), 0x5C: ord("\\"), 0x08: ord("b"), 0x0C: ord("f"),
                 0x0A: ord("n"), 0x0D: ord("r"), 0x09: ord("t")}
SOLIDUS = 0x2F
SURROGATES = (0xD800, 0xDFFF)
# the scalars that ``automaton.plain`` counts as plain text: its ASCII, and every scalar outside
# ASCII that UTF-8 can write (no lone surrogate)
PLAIN_SCALARS = PLAIN.ascii_ranges + ((0x80, SURROGATES[0] - 1), (SURROGATES[1] + 1, 0x10FFFF))
_UTF8_BOUNDS = ((0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF))


def _split_fixed(lo: int, hi: int, base: int, width: int) -> list[list[tuple[int, int]]]:
    """Digit-range sequences of fixed ``width`` in ``base`` covering exactly ``lo..hi``."""
    if width == 0:
        return [[]]
    unit = base ** (width - 1)
    dlo, rlo = divmod(lo, unit)
    dhi, rhi = divmod(hi, unit)
    if dlo == dhi:
        return [[(dlo, dlo)] + rest for rest in _split_fixed(rlo, rhi, base, width - 1)]
    out: list[list[tuple[int, int]]] = []
    if rlo:
        out += [[(dlo, dlo)] + rest for rest in _split_fixed(rlo, unit - 1, base, width - 1)]
        dlo += 1
    tail: list[list[tuple[int, int]]] = []
    if rhi != unit - 1:
        tail = [[(dhi, dhi)] + rest for rest in _split_fixed(0, rhi, base, width - 1)]
        dhi -= 1
    if dlo <= dhi:
        out.append([(dlo, dhi)] + [(0, base - 1)] * (width - 1))
    return out + tail


def _encode(cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


def utf8_paths(lo: int, hi: int) -> list[Path]:
    """Byte-range paths of the UTF-8 encodings of scalars ``lo..hi`` (no surrogates in it)."""
    out: list[Path] = []
    for blo, bhi in _UTF8_BOUNDS:
        x, y = max(lo, blo), min(hi, bhi)
        if x <= y:
            out += _utf8_same_length(x, y)
    return out


def _utf8_same_length(lo: int, hi: int) -> list[Path]:
    todo = [(lo, hi)]
    out: list[Path] = []
    while todo:
        lo, hi = todo.pop()
        n = len(_encode(lo))
        for i in range(1, n):
            m = (1 << (6 * i)) - 1
            if lo & ~m != hi & ~m:
                if lo & m:
                    todo += [((lo | m) + 1, hi), (lo, lo | m)]
                    break
                if hi & m != m:
                    todo += [(hi & ~m, hi), (lo, (hi & ~m) - 1)]
                    break
        else:
            a, b = _encode(lo), _encode(hi)
            out.append(tuple((a[i], b[i]) for i in range(n)))
    return out


def _hex_digit_bytes(lo: int, hi: int) -> list[tuple[int, int]]:
    """Byte ranges spelling hex digits ``lo..hi`` in either case."""
    out = []
    if lo <= 9:
        out.append((0x30 + lo, 0x30 + min(hi, 9)))
    if hi >= 10:
        a, b = max(lo, 10) - 10, hi - 10
        out += [(0x61 + a, 0x61 + b), (0x41 + a, 0x41 + b)]
    return out


def _hex4_paths(lo: int, hi: int) -> list[list[list[tuple[int, int]]]]:
    """Each path step is a list of byte ranges (the hex digit in both cases)."""
    return [[_hex_digit_bytes(a, b) for a, b in seq] for seq in _split_fixed(lo, hi, 16, 4)]


def _without_surrogates(ranges):
    for lo, hi in ranges:
        if hi < SURROGATES[0] or lo > SURROGATES[1]:
            yield lo, hi
            continue
        if lo < SURROGATES[0]:
            yield lo, SURROGATES[0] - 1
        if hi > SURROGATES[1]:
            yield SURROGATES[1] + 1, hi


def _intersect(ranges, lo: int, hi: int):
    for a, b in ranges:
        x, y = max(a, lo), min(b, hi)
        if x <= y:
            yield x, y


def subtract_points(ranges, points):
    """Sorted disjoint ``ranges`` less the scalars ``points``."""
    for lo, hi in ranges:
        for p in sorted(q for q in points if lo <= q <= hi):
            if lo <= p - 1:
                yield lo, p - 1
            lo = p + 1
        if lo <= hi:
            yield lo, hi


BACKSLASH, QUOTE, LETTER_U = 0x5C, 0x22, 0x75  # noqa: E702
ESCAPED_ONLY = ((0, 0x1F), (QUOTE, QUOTE), (BACKSLASH, BACKSLASH))  # the ASCII a literal never writes raw
# how a scalar automaton's scalars are spelled (``ScalarLowering.lower_chardfa``)
BYTES, LITERAL, KEY, FREE = "bytes", "literal", "key", "free"
StepPath = list[list[tuple[int, int]]]  # each step: alternative byte ranges


@lru_cache(maxsize=8192)
def split_ascii(ranges: tuple[tuple[int, int], ...]) -> list[tuple[tuple[int, int], ...]]:
    """``ranges`` cut into its ASCII part and the rest (each non-empty part once)."""
    parts = [tuple(_intersect(ranges, 0, 0x7F)), tuple(_intersect(ranges, 0x80, 0x10FFFF))]
    return [p for p in parts if p]


def raw_only(text: str) -> bool:
    """Whether the literal rules write every scalar of ``text`` raw only (plain ASCII, none escaped-only)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


@lru_cache(maxsize=8192)
def spelled_parts(ranges: tuple[tuple[int, int], ...], literal: bool) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The parts of ``ranges`` whose spellings other than one raw ASCII byte are written as shared
    fragments: its ASCII part and the rest; under the literal rules plain ASCII is raw only, so the
    ASCII part is only its escaped-only scalars (the same for every set of letters). Cached: an
    additional key's automaton asks it for "every scalar but this letter", letter by letter."""
    parts = split_ascii(ranges)
    if literal and parts and parts[0][0][0] <= 0x7F:
        ascii_part = tuple(r for lo, hi in ESCAPED_ONLY for r in _intersect(parts[0], lo, hi))
        parts = ([ascii_part] if ascii_part else []) + parts[1:]
    return tuple(parts)


@lru_cache(maxsize=8192)
def ascii_raw(ranges: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """The part of ``ranges`` written as one raw ASCII byte (the common case, kept as plain edges)."""
    return list(subtract_points(_intersect(ranges, 0x20, 0x7F), (QUOTE, BACKSLASH)))


def scalar_paths(ranges: tuple[tuple[int, int], ...], literal: bool, raw_ascii: bool = True) -> list[StepPath]:
    """Every way to write one scalar from ``ranges`` inside a JSON string, as step paths
    (without the one-byte raw ASCII forms when ``raw_ascii`` is False)."""
    ranges = list(_without_surrogates(ranges))
    raw = subtract_points(_intersect(ranges, 0x20 if raw_ascii else 0x80, 0x10FFFF), (QUOTE, BACKSLASH))
    out: list[StepPath] = [[[r] for r in p] for lo, hi in raw for p in utf8_paths(lo, hi)]
    members = lambda cp: any(lo <= cp <= hi for lo, hi in ranges)  # noqa: E731
    for cp, letter in SHORT_ESCAPES.items():
        if members(cp):
            out.append([[(BACKSLASH, BACKSLASH)], [(letter, letter)]])
    if not literal and members(SOLIDUS):
        out.append([[(BACKSLASH, BACKSLASH)], [(SOLIDUS, SOLIDUS)]])
    if literal:
        escapable = list(_intersect(ranges, 0, 0x1F)) + [(c, c) for c in (QUOTE, BACKSLASH) if members(c)]
        escapable += list(_intersect(ranges, 0x80, 0x10FFFF))
    else:
        escapable = ranges
    prefix = [[(BACKSLASH, BACKSLASH)], [(LETTER_U, LETTER_U)]]
    for lo, hi in escapable:
        for a, b in _intersect([(lo, hi)], 0, 0xFFFF):
            out += [prefix + hexes for hexes in _hex4_paths(a, b)]
        for a, b in _intersect([(lo, hi)], 0x10000, 0x10FFFF):
            out += [prefix + high + prefix + low for high, low in _surrogate_paths(a, b)]
    return out


def _surrogate_paths(lo: int, hi: int):
    """(high hex path, low hex path) pairs covering astral scalars ``lo..hi``."""
    hlo, llo = divmod(lo - 0x10000, 0x400)
    hhi, lhi = divmod(hi - 0x10000, 0x400)
    parts = []
    if hlo == hhi:
        parts.append((hlo, hlo, llo, lhi))
    else:
        parts.append((hlo, hlo, llo, 0x3FF))
        if hlo + 1 <= hhi - 1:
            parts.append((hlo + 1, hhi - 1, 0, 0x3FF))
        parts.append((hhi, hhi, 0, lhi))
    for h1, h2, l1, l2 in parts:
        for high in _hex4_paths(0xD800 + h1, 0xD800 + h2):
            for low in _hex4_paths(0xDC00 + l1, 0xDC00 + l2):
                yield high, low


def add_scalar(prog: Program, src: int, dst: int, ranges: tuple[tuple[int, int], ...], literal: bool) -> None:
    """Thread from ``src`` to ``dst`` every way to write one scalar of ``ranges`` but its one-byte raw
    ASCII forms (``scalar_paths``), as one trie: common prefixes shared."""
    inner, edges = _scalar_trie(ranges, literal)
    if not edges:
        return
    states = prog.new_states(prog.owner[src], inner)
    ends = [src, dst, *states]
    out = prog.edges
    for a, lo, hi, b in edges:
        out[ends[a]].append((lo, hi, ends[b]))
    prog.finishes_like(states, dst)  # a trie: each inner state goes on to dst, so finishes when it does


@lru_cache(maxsize=4096)
def _scalar_trie(ranges: tuple[tuple[int, int], ...], literal: bool) -> tuple[int, tuple[tuple[int, int, int, int], ...]]:
    """The trie of ``scalar_paths(ranges, literal, raw_ascii=False)``, made once: its number of
    inner states and its edges ``(from, lo, hi, to)``, with 0 the start, 1 the end and 2... the
    inner states (tuples, so the collector stops tracking the cache)."""
    children: dict[tuple[int, tuple], int] = {}
    edges: list[tuple[int, int, int, int]] = []
    inner = 0
    for path in scalar_paths(ranges, literal, raw_ascii=False):
        state = 0
        for i, step in enumerate(path):
            if i == len(path) - 1:
                edges += [(state, lo, hi, 1) for lo, hi in step]
                break
            key = (state, tuple(step))
            nxt = children.get(key)
            if nxt is None:
                nxt = children[key] = 2 + inner
                inner += 1
                edges += [(state, lo, hi, nxt) for lo, hi in step]
            state = nxt
    return inner, tuple(edges)
