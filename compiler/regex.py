"""JSON Schema ``pattern`` → ``CharDFA``: ECMA-262 search semantics, built by hand, bounded.

Why our own parser rather than interegular: the dialect must be ECMA's (``\\d`` is ``[0-9]``,
``\\s`` is ECMA's whitespace set, ``.`` excludes the four line terminators), interegular parses
Python's and refuses ``^``/``$``; anchors anywhere (``^a$|^b$``, ``(^|,)x``) fall out of the
construction below for free; and every limit (repetition size, automaton states, work) is checked
by us before or while we build, so a hostile pattern is refused instead of hanging.

Pipeline: parse to a tiny AST → size check → Thompson NFA (epsilon, ``^`` and ``$`` edges) →
subset construction over scalar ranges with search semantics → Hopcroft minimisation → trim.
Search semantics: the NFA start is re-entered before every character (an unanchored left side),
and once a match has ended the DFA moves to an absorbing accept-everything state (unanchored
right side). ``^`` edges are followed only before the first character, ``$`` edges only when
deciding acceptance at the end of the input.
"""

from __future__ import annotations

import functools
import re

from compiler.chardfa import MAX_SCALAR, CharDFA
from compiler.errors import InvalidSchema, SchemaTooComplex, UnsupportedKeyword

Ranges = tuple[tuple[int, int], ...]

SCALARS: Ranges = ((0, 0xD7FF), (0xE000, MAX_SCALAR))  # Unicode scalars: no surrogates
DIGIT: Ranges = ((0x30, 0x39),)
WORD: Ranges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
SPACE: Ranges = ((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                 (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
                 (0xFEFF, 0xFEFF))
LINE_TERMINATORS: Ranges = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))

MAX_NFA_STATES = 100_000
MAX_WORK = 4_000_000  # closure steps and range events during determinisation
MAX_DEPTH = 200  # group nesting


def normalize(ranges) -> Ranges:
    """Sort, merge and clip ranges to the Unicode scalars."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        for slo, shi in SCALARS:
            a, b = max(lo, slo), min(hi, shi)
            if a > b:
                continue
            if out and a <= out[-1][1] + 1:
                out[-1][1] = max(out[-1][1], b)
            else:
                out.append([a, b])
    return tuple((a, b) for a, b in out)


def complement(ranges) -> Ranges:
    """The scalars not in `ranges`."""
    out, nxt = [], 0
    for lo, hi in normalize(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_SCALAR:
        out.append((nxt, MAX_SCALAR))
    return normalize(out)


DOT = complement(LINE_TERMINATORS)
_CLASS_ESCAPES = {"d": DIGIT, "D": complement(DIGIT), "w": WORD, "W": complement(WORD),
                  "s": normalize(SPACE), "S": complement(SPACE)}
_CONTROL_ESCAPES = {"t": 9, "n": 10, "v": 11, "f": 12, "r": 13}
_BRACES = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_GROUP_NAME = re.compile(r"(?:P?)<([A-Za-z_$][A-Za-z0-9_$]*)>")


class _Refusal(Exception):
    """Why a pattern cannot be compiled; turned into the public error with the caller's pointer."""

    def __init__(self, kind: str, text: str):
        super().__init__(text)
        self.kind, self.text = kind, text


def _invalid(text):
    return _Refusal("invalid", text)


def _unsupported(text):
    return _Refusal("unsupported", text)


def _too_complex(text):
    return _Refusal("complex", text)


# ---------------------------------------------------------------------------------------- parser
# AST nodes: ("set", ranges) | ("seq", nodes) | ("alt", nodes) | ("rep", node, lo, hi|None)
#            | ("bol",) | ("eol",)

class _Parser:
    """Recursive descent over ECMA-262 pattern syntax (Annex B leniencies for ``{``, ``}``, ``]``)."""

    def __init__(self, pattern: str):
        self.p, self.i, self.depth = pattern, 0, 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def parse(self):
        node = self.disjunction()
        if self.i < len(self.p):
            raise _invalid("unmatched ')'")
        return node

    def disjunction(self):
        alts = [self.alternative()]
        while self.peek() == "|":
            self.i += 1
            alts.append(self.alternative())
        return alts[0] if len(alts) == 1 else ("alt", tuple(alts))

    def alternative(self):
        items = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            items.append(self.term())
        return items[0] if len(items) == 1 else ("seq", tuple(items))

    def term(self):
        c = self.p[self.i]
        if c in "^$":
            self.i += 1
            if self.quantifier() is not None:
                raise _invalid(f"nothing to repeat after {c!r}")
            return ("bol",) if c == "^" else ("eol",)
        atom = self.atom()
        q = self.quantifier()
        if q is None:
            return atom
        if self.quantifier() is not None:
            raise _invalid("nothing to repeat (two quantifiers in a row)")
        return ("rep", atom, *q)

    def quantifier(self):
        """Parse ``* + ? {n} {n,} {n,m}`` (and a lazy ``?``, same language); None if absent."""
        c = self.peek()
        if c and c in "*+?":
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        elif c == "{" and (m := _BRACES.match(self.p, self.i)):
            digits = [d for d in (m.group(1), m.group(3)) if d]
            if any(len(d) > 9 for d in digits):
                raise _too_complex(f"repetition count {m.group(0)[:20]} is too large")
            lo = int(m.group(1))
            hi = lo if not m.group(2) else (int(m.group(3)) if m.group(3) else None)
            if hi is not None and lo > hi:
                raise _invalid(f"numbers out of order in {m.group(0)} quantifier")
            self.i = m.end()
        else:
            return None
        if self.peek() == "?":
            self.i += 1
        return lo, hi

    def atom(self):
        c = self.p[self.i]
        if c == ".":
            self.i += 1
            return ("set", DOT)
        if c == "(":
            return self.group()
        if c == "[":
            return ("set", self.char_class())
        if c == "\\":
            self.i += 1
            return self.atom_escape()
        if c in "*+?" or (c == "{" and _BRACES.match(self.p, self.i)):
            raise _invalid(f"nothing to repeat before {c!r}")
        self.i += 1
        return ("set", normalize([(ord(c), ord(c))]))

    def group(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _too_complex(f"groups nested more than {MAX_DEPTH} deep")
        rest = self.p[self.i + 1:self.i + 4]
        if rest.startswith("?"):
            kinds = (("?:", None), ("?=", "lookahead (?=...)"), ("?!", "negative lookahead (?!...)"),
                     ("?<=", "lookbehind (?<=...)"), ("?<!", "negative lookbehind (?<!...)"),
                     ("?P=", "named backreference (?P=...)"), ("?#", "comment group (?#...)"),
                     ("?>", "atomic group (?>...)"))
            for prefix, refused in kinds:
                if rest.startswith(prefix):
                    if refused:
                        raise _unsupported(refused)
                    self.i += 1 + len(prefix)
                    break
            else:
                m = _GROUP_NAME.match(self.p, self.i + 2)
                if m:
                    self.i = m.end()
                elif re.match(r"[a-zA-Z-]+[:)]", self.p[self.i + 2:]):
                    flags = re.match(r"[a-zA-Z-]+", self.p[self.i + 2:]).group(0)
                    raise _unsupported(f"inline flags (?{flags})")
                else:
                    raise _invalid("invalid group syntax after '(?'")
        else:
            self.i += 1
        node = self.disjunction()
        if self.peek() != ")":
            raise _invalid("missing ')'")
        self.i += 1
        self.depth -= 1
        return node

    def atom_escape(self):
        c = self.peek()
        if not c:
            raise _invalid("pattern ends with a backslash")
        if c in _CLASS_ESCAPES:
            self.i += 1
            return ("set", _CLASS_ESCAPES[c])
        if c in "bB":
            raise _unsupported(f"word boundary \\{c}")
        if c in "123456789":
            raise _unsupported(f"backreference \\{c}")
        if c == "k":
            raise _unsupported("named backreference \\k<...>")
        return ("set", normalize([(cp := self.char_escape(), cp)]))

    def char_escape(self) -> int:
        """The scalar of a character escape (after the backslash)."""
        c = self.p[self.i]
        self.i += 1
        if c in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[c]
        if c == "0" and not self.peek().isdigit():
            return 0
        if c == "0":
            raise _unsupported("octal escape \\0" + self.peek())
        if c == "c":
            if self.peek().isascii() and self.peek().isalpha():
                self.i += 1
                return ord(self.p[self.i - 1]) % 32
            raise _unsupported("\\c without a control letter")
        if c == "x":
            if re.fullmatch(r"[0-9A-Fa-f]{2}", self.p[self.i:self.i + 2]):
                self.i += 2
                return int(self.p[self.i - 2:self.i], 16)
            raise _unsupported("\\x without two hex digits")
        if c == "u":
            return self.unicode_escape()
        if c in "pP":
            name = re.match(r"\{[^}]*\}", self.p[self.i:])
            raise _unsupported(f"unicode property class \\{c}{name.group(0) if name else ''}")
        if c.isascii() and c.isalnum():
            raise _unsupported(f"escape \\{c} (not an ECMA-262 escape)")
        return ord(c)  # identity escape: \. \/ \- \$ ...

    def unicode_escape(self) -> int:
        """``\\uHHHH`` (a surrogate pair of two such escapes is one scalar) or ``\\u{H...}``."""
        if self.peek() == "{":
            m = re.match(r"\{([0-9A-Fa-f]{1,8})\}", self.p[self.i:])
            if not m or int(m.group(1), 16) > MAX_SCALAR:
                raise _invalid("bad \\u{...} escape")
            self.i += m.end()
            return int(m.group(1), 16)
        if not _HEX4.fullmatch(self.p[self.i:self.i + 4]):
            raise _unsupported("\\u without four hex digits")
        cp = int(self.p[self.i:self.i + 4], 16)
        self.i += 4
        if 0xD800 <= cp <= 0xDBFF and self.p[self.i:self.i + 2] == "\\u":
            low = self.p[self.i + 2:self.i + 6]
            if _HEX4.fullmatch(low) and 0xDC00 <= int(low, 16) <= 0xDFFF:
                self.i += 6
                return 0x10000 + ((cp - 0xD800) << 10) + (int(low, 16) - 0xDC00)
        return cp

    def char_class(self) -> Ranges:
        self.i += 1
        negate = self.peek() == "^"
        if negate:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        while True:
            if self.i >= len(self.p):
                raise _invalid("missing ']'")
            if self.p[self.i] == "]":
                self.i += 1
                break
            a = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                b = self.class_atom()
                if isinstance(a, int) and isinstance(b, int):
                    if a > b:
                        raise _invalid("range out of order in character class")
                    ranges.append((a, b))
                    continue
                ranges.append((0x2D, 0x2D))  # Annex B: [\d-z] is \d, '-' and 'z'
                for x in (a, b):
                    ranges.extend([(x, x)] if isinstance(x, int) else x)
                continue
            ranges.extend([(a, a)] if isinstance(a, int) else a)
        return complement(ranges) if negate else normalize(ranges)

    def class_atom(self):
        """A scalar (int) or a class escape's ranges."""
        c = self.p[self.i]
        self.i += 1
        if c != "\\":
            return ord(c)
        e = self.peek()
        if not e:
            raise _invalid("pattern ends with a backslash")
        if e in _CLASS_ESCAPES:
            self.i += 1
            return _CLASS_ESCAPES[e]
        if e == "b":
            self.i += 1
            return 8
        if e == "-":
            self.i += 1
            return 0x2D
        if e in "123456789" or e in "Bk":
            raise _unsupported(f"escape \\{e} inside a character class")
        return self.char_escape()


def _size(node, limit: int) -> int:
    """NFA states the node expands to (capped just above `limit`), computed before building."""
    tag = node[0]
    if tag in ("set", "bol", "eol"):
        return 2
    if tag in ("seq", "alt"):
        total = 2
        for child in node[1]:
            total += _size(child, limit)
            if total > limit:
                return limit + 1
        return total
    _, child, lo, hi = node
    copies = lo + 1 if hi is None else hi
    return min(limit + 1, _size(child, limit) * copies + 2)


# ------------------------------------------------------------------------------------------- NFA

class _NFA:
    """Thompson NFA: each state has at most one character edge, plus epsilon/^/$ edges."""

    def __init__(self):
        self.char: list[tuple[Ranges, int] | None] = []
        self.eps: list[list[int]] = []
        self.bol: list[list[int]] = []
        self.eol: list[list[int]] = []

    def state(self) -> int:
        for table in (self.eps, self.bol, self.eol):
            table.append([])
        self.char.append(None)
        return len(self.char) - 1

    def build(self, node, s: int) -> int:
        """Add `node` starting at state `s`; return its end state (which has no edges yet)."""
        tag = node[0]
        if tag == "set":
            if self.char[s] is not None:
                s2 = self.state()
                self.eps[s].append(s2)
                s = s2
            e = self.state()
            self.char[s] = (node[1], e)
            return e
        if tag == "seq":
            for child in node[1]:
                s = self.build(child, s)
            return s
        if tag == "alt":
            e = self.state()
            for child in node[1]:
                b = self.state()
                self.eps[s].append(b)
                self.eps[self.build(child, b)].append(e)
            return e
        if tag in ("bol", "eol"):
            e = self.state()
            (self.bol if tag == "bol" else self.eol)[s].append(e)
            return e
        _, child, lo, hi = node
        for _ in range(lo):
            s = self.build(child, s)
        e = self.state()
        if hi is None:
            loop = self.state()
            self.eps[s].append(loop)
            self.eps[self.build(child, loop)].append(loop)
            self.eps[loop].append(e)
            return e
        self.eps[s].append(e)
        for _ in range(hi - lo):
            s = self.build(child, s)
            self.eps[s].append(e)
        return e


# ----------------------------------------------------------------------------- determinisation

def _determinize(nfa: _NFA, start: int, final: int, max_states: int) -> CharDFA:
    work = 0

    def closure(seeds, at_start: bool, at_end: bool) -> frozenset:
        nonlocal work
        seen, stack = set(seeds), list(seeds)
        while stack:
            q = stack.pop()
            work += 1
            nxt = nfa.eps[q]
            if at_start and nfa.bol[q]:
                nxt = nxt + nfa.bol[q]
            if at_end and nfa.eol[q]:
                nxt = nxt + nfa.eol[q]
            for t in nxt:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        if work > MAX_WORK:
            raise _too_complex("pattern needs too much work to compile")
        return frozenset(q for q in seen if nfa.char[q] is not None or nfa.eol[q] or q == final)

    def accepts_at_end(states, at_start: bool) -> bool:
        waiting = [q for q in states if nfa.eol[q]]
        return bool(waiting) and final in closure(waiting, at_start, True)

    dfa = CharDFA()
    matched = dfa.add_state(accepting=True)  # a match has ended: anything may follow
    dfa.edges[matched] = [(lo, hi, matched) for lo, hi in SCALARS]
    init = closure([start], True, False)
    if final in init:
        return dfa
    first = dfa.add_state(accepting=accepts_at_end(closure([start], True, True), True))
    dfa.start = first
    base = closure([start], False, False)  # re-entered before every character: unanchored left
    ids: dict[frozenset, int] = {}
    todo = [(first, init)]
    while todo:
        q, states = todo.pop()
        groups: dict[Ranges, list[int]] = {}
        for s in states:
            edge = nfa.char[s]
            if edge is not None:
                groups.setdefault(edge[0], []).append(edge[1])
        events = []
        for g, ranges in enumerate(groups):
            for lo, hi in ranges:
                events.append((lo, g, 1))
                events.append((hi + 1, g, -1))
        work += len(events)
        events.sort()
        targets = list(groups.values())
        active: set[int] = set()
        memo: dict[frozenset, int] = {}
        row: list[tuple[int, int, int]] = []
        for k, (pos, g, delta) in enumerate(events):
            (active.add if delta > 0 else active.discard)(g)
            end = events[k + 1][0] - 1 if k + 1 < len(events) else pos - 1
            if not active or end < pos:
                continue
            key = frozenset(active)
            if key not in memo:
                seeds = [t for a in key for t in targets[a]]
                nxt = closure(seeds, False, False) | base
                if final in nxt:
                    memo[key] = matched
                elif nxt in ids:
                    memo[key] = ids[nxt]
                else:
                    if dfa.size >= max_states:
                        raise _too_complex(f"pattern needs more than {max_states} automaton states")
                    ids[nxt] = memo[key] = dfa.add_state(accepting=accepts_at_end(nxt, False))
                    todo.append((memo[key], nxt))
            t = memo[key]
            if row and row[-1][2] == t and row[-1][1] == pos - 1:
                row[-1] = (row[-1][0], end, t)
            else:
                row.append((pos, end, t))
        dfa.edges[q] = row
    return dfa


# -------------------------------------------------------------------------------- minimisation

def minimized(dfa: CharDFA) -> CharDFA:
    """Hopcroft's algorithm over the DFA's scalar-range equivalence classes; trimmed result."""
    dfa = dfa.trimmed()
    n = dfa.size
    cuts = sorted({lo for row in dfa.edges for lo, _, _ in row}
                  | {hi + 1 for row in dfa.edges for _, hi, _ in row})
    where = {c: k for k, c in enumerate(cuts)}
    dead = n
    delta = [[dead] * (n + 1) for _ in range(max(len(cuts) - 1, 0))]
    for q, row in enumerate(dfa.edges):
        for lo, hi, t in row:
            for k in range(where[lo], where[hi + 1]):
                delta[k][q] = t
    inverse = []
    for column in delta:
        inv: dict[int, list[int]] = {}
        for q, t in enumerate(column):
            inv.setdefault(t, []).append(q)
        inverse.append(inv)
    accepting = set(dfa.accepting)
    blocks = [b for b in (accepting, set(range(n + 1)) - accepting) if b]
    block_of = [0] * (n + 1)
    for b, members in enumerate(blocks):
        for q in members:
            block_of[q] = b
    pending = set(range(len(blocks)))
    while pending:
        splitter = list(blocks[pending.pop()])
        for inv in inverse:
            touched: dict[int, list[int]] = {}
            for t in splitter:
                for q in inv.get(t, ()):
                    touched.setdefault(block_of[q], []).append(q)
            for b, qs in touched.items():
                if len(qs) == len(blocks[b]):
                    continue
                new = len(blocks)
                moved = set(qs)
                blocks[b] -= moved
                blocks.append(moved)
                for q in qs:
                    block_of[q] = new
                if b in pending or len(moved) <= len(blocks[b]):
                    pending.add(new)
                else:
                    pending.add(b)
    out = CharDFA(block_of[dfa.start], [[] for _ in blocks],
                  {block_of[q] for q in accepting})
    for b, members in enumerate(blocks):
        rep = next(iter(members))
        row = out.edges[b]
        for k, column in enumerate(delta):
            t = block_of[column[rep]]
            lo, hi = cuts[k], cuts[k + 1] - 1
            if row and row[-1][2] == t and row[-1][1] == lo - 1:
                row[-1] = (row[-1][0], hi, t)
            else:
                row.append((lo, hi, t))
    return out.trimmed()


# ------------------------------------------------------------------------------------ public API

@functools.lru_cache(maxsize=4096)
def _compile(pattern: str, max_states: int):
    """The DFA, or the refusal (cached too, so a hostile pattern costs its work once)."""
    try:
        ast = _Parser(pattern).parse()
        if _size(ast, MAX_NFA_STATES) > MAX_NFA_STATES:
            raise _too_complex(f"pattern expands to more than {MAX_NFA_STATES} NFA states")
        nfa = _NFA()
        start = nfa.state()
        final = nfa.build(ast, start)
        return minimized(_determinize(nfa, start, final, max_states))
    except _Refusal as refusal:
        return refusal
    except RecursionError:
        return _too_complex("pattern nests too deeply")


def pattern_dfa(pattern: str, pointer: str = "", *, max_states: int = 20_000) -> CharDFA:
    """The strings `s` for which ``pattern`` holds (ECMA-262 search), as a trimmed minimal DFA.

    The result is cached and shared: callers must not mutate it.
    Raises InvalidSchema (bad syntax), UnsupportedKeyword (lookarounds, backreferences, word
    boundaries, inline flags, property classes, dialect-dependent escapes) or SchemaTooComplex.
    """
    result = _compile(pattern, max_states)
    if isinstance(result, CharDFA):
        return result
    if result.kind == "invalid":
        raise InvalidSchema(pointer, f"invalid pattern {pattern!r}: {result.text}")
    if result.kind == "unsupported":
        raise UnsupportedKeyword(pointer, "pattern", detail=result.text)
    raise SchemaTooComplex(pointer, result.text)
