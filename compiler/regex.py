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

Dialect details: Unicode ("u" flag) semantics as JSON Schema recommends (``.`` is one scalar,
``\\u{1F600}`` and surrogate-pair escapes are one scalar), with Annex B leniencies real schemas
rely on (a lone ``{``, ``}`` or ``]`` is literal, ``[\\d-z]`` is a union); Python's ``(?P<name>``
is read as a named group. Python's ``re`` (python-jsonschema's engine) disagrees with ECMA on
``\\D`` and ``\\W`` (ECMA's match non-ASCII digits and letters, Python's do not) and on the
whitespace set of ``\\s``/``\\S`` (U+FEFF; U+001C-U+001F, U+0085): there we follow ECMA, and
``dialect="portable"`` accepts only what both accept. ``{,n}`` (literal in ECMA, a repetition in
Python) is refused.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

import numpy as np

from compiler import chardfa, prebuilt
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
MAX_DFA_STATES = 20_000  # a pattern's automaton, before minimising
MAX_WORK = 1_000_000  # closure steps and range events; MaskBench patterns need < 100k
MAX_DEPTH = 100  # group nesting (each level costs several Python frames)
COUNTED_GROUP_MIN = 16  # a bounded group repetition with this many optional copies or more is counted


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
_PYTHON_DOT = complement(((10, 10),))  # Python's ``.``: all but a line feed (ECMA's DOT is within it)
_ECMA_ESCAPES = {"d": DIGIT, "D": complement(DIGIT), "w": WORD, "W": complement(WORD),
                 "s": normalize(SPACE), "S": complement(SPACE)}
_CONTROL_ESCAPES = {"t": 9, "n": 10, "v": 11, "f": 12, "r": 13}
_BRACES = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_GROUP_NAME = re.compile(r"P?<([A-Za-z_$][A-Za-z0-9_$]*)>")


def _union(a: Ranges, b: Ranges) -> Ranges:
    return normalize(a + b)


@functools.lru_cache(maxsize=None)
def _class_escape(dialect: str, name: str, negated: bool) -> Ranges:
    """A class escape's scalars: the narrow reading where a scalar must match it, the wide one inside
    a negated class. For "portable", narrow = ECMA ∩ Python and wide = ECMA ∪ Python, so the pattern
    accepts only strings both engines accept (python-jsonschema uses ``re``); "either" the other way
    round, a superset of both readings (for ``not``). Python's whole class is asked of ``re`` only
    where a reading needs it (``\\D`` narrow, ``\\d`` wide): ``\\d``, ``\\w`` and ``\\s`` as written
    need only ECMA's few scalars checked."""
    if dialect == "ecma":
        return _ECMA_ESCAPES[name]
    if dialect == "either":
        return _class_escape("portable", name, not negated)
    if dialect != "portable":
        raise ValueError(f"unknown regex dialect {dialect!r}")
    low = name.lower()
    ecma = _ECMA_ESCAPES[low]
    if (name == low) != negated:  # \d narrow: ECMA ∩ Python; \D wide: the complement of that
        both = _python_keeps(low, ecma)
        return both if name == low else complement(both)
    either = _union(ecma, _python_class(low))  # \d wide: ECMA ∪ Python; \D narrow: its complement
    return either if name == low else complement(either)


def _python_keeps(name: str, ranges: Ranges) -> Ranges:
    """The scalars of ``ranges`` (a few) that Python's ``\\name`` matches."""
    escape = re.compile(f"\\{name}")
    return normalize((c, c) for lo, hi in ranges for c in range(lo, hi + 1) if escape.fullmatch(chr(c)))


@functools.lru_cache(maxsize=None)
def _python_class(name: str) -> Ranges:
    """Every scalar Python's ``\\name`` matches: shipped in ``compiler.prebuilt`` for the Unicode
    version it was computed with, else asked of ``re``."""
    return prebuilt.python_class(name) or scan_python_class(name)


def scan_python_class(name: str) -> Ranges:
    """Python's ``\\name`` asked of ``re`` itself over every code point (30-40 ms)."""
    every = np.arange(MAX_SCALAR + 1, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    return normalize((m.start(), m.end() - 1) for m in re.finditer(f"\\{name}+", every))


class _Ambiguous(Exception):
    """A counted group's iterations cannot be told apart as the pattern is read: it is unrolled."""


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
#            | ("bol",) | ("eol",) | ("count", node): any number of node, each begun by a tagged edge

class _Parser:
    """Recursive descent over ECMA-262 pattern syntax (Annex B leniency for ``{``, ``}``, ``]``)."""

    def __init__(self, pattern: str, dialect: str = "ecma", ignore_case: bool = False):
        self.p, self.i, self.depth = pattern, 0, 0
        self.dialect, self.ignore_case = dialect, ignore_case

    def escape_class(self, c: str, negated: bool = False) -> Ranges:
        """A class escape's scalars (the wide reading inside a negated class)."""
        return _class_escape(self.dialect, c, negated)

    def literal(self, ranges) -> Ranges:
        """``ranges`` with their ASCII letters in both cases under ``ignore_case`` (JavaScript's
        ``i`` flag without ``u`` folds no other scalar into ASCII)."""
        if not self.ignore_case:
            return normalize(ranges)
        ranges = list(ranges)
        for lo, hi in list(ranges):
            for a, z in ((0x41, 0x5A), (0x61, 0x7A)):
                if lo <= z and hi >= a:
                    ranges.append((max(lo, a) ^ 0x20, min(hi, z) ^ 0x20))
        return normalize(ranges)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def parse(self):
        node = self.disjunction()
        if self.i < len(self.p):
            raise _invalid("unmatched ')'")
        return _python_ends(node) if self.dialect == "either" else node

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
        if atom[0] == "look":
            raise _unsupported("a quantified lookahead")
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
            return ("set", _PYTHON_DOT if self.dialect == "either" else DOT)
        if c == "(":
            return self.group()
        if c == "[":
            return ("set", self.char_class())
        if c == "\\":
            self.i += 1
            return self.atom_escape()
        if c == "{" and re.match(r"\{,[0-9]+\}", self.p[self.i:]):
            raise _unsupported("quantifier {,n} (a literal in ECMA-262, a repetition in Python)")
        if c in "*+?" or (c == "{" and _BRACES.match(self.p, self.i)):
            raise _invalid(f"nothing to repeat before {c!r}")
        self.i += 1
        return ("set", self.literal([(ord(c), ord(c))]))

    def group(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _too_complex(f"groups nested more than {MAX_DEPTH} deep")
        rest = self.p[self.i + 1:self.i + 4]
        if rest.startswith("?"):
            if rest.startswith(("?=", "?!")):
                return self.lookahead(rest[1] == "!")
            kinds = (("?:", None), ("?<=", "lookbehind (?<=...)"), ("?<!", "negative lookbehind (?<!...)"),
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

    def lookahead(self, negated: bool):
        """``(?=X)`` or ``(?!X)`` as ``("look", negated, X)``, X's text (``_determinized`` takes
        lookaheads right after a leading ``^`` and refuses the others)."""
        self.i += 3
        start = self.i
        self.disjunction()
        if self.peek() != ")":
            raise _invalid("missing ')'")
        self.i += 1
        self.depth -= 1
        return ("look", negated, self.p[start:self.i - 1])

    def atom_escape(self):
        c = self.peek()
        if not c:
            raise _invalid("pattern ends with a backslash")
        if c in _ECMA_ESCAPES:
            self.i += 1
            return ("set", self.escape_class(c))
        if c in "bB":
            raise _unsupported(f"word boundary \\{c}")
        if c in "123456789":
            raise _unsupported(f"backreference \\{c}")
        if c == "k":
            raise _unsupported("named backreference \\k<...>")
        return ("set", self.literal([(cp := self.char_escape(), cp)]))

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
            a = self.class_atom(negate)
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                b = self.class_atom(negate)
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
        return complement(self.literal(ranges)) if negate else self.literal(ranges)

    def class_atom(self, negated: bool):
        """A scalar (int) or a class escape's ranges (wide ones in a negated class)."""
        c = self.p[self.i]
        self.i += 1
        if c != "\\":
            return ord(c)
        e = self.peek()
        if not e:
            raise _invalid("pattern ends with a backslash")
        if e in _ECMA_ESCAPES:
            self.i += 1
            return self.escape_class(e, negated)
        if e == "b":
            self.i += 1
            return 8
        if e == "-":
            self.i += 1
            return 0x2D
        if e in "123456789" or e in "Bk":
            raise _unsupported(f"escape \\{e} inside a character class")
        return self.char_escape()


_EITHER_END = ("alt", (("eol",), ("seq", (("set", ((10, 10),)), ("eol",)))))


def _python_ends(node, final: bool = True):
    """``node`` with each ``$`` read as either engine's (``dialect="either"``): Python's also holds
    before a final line feed, so ``$`` at the end of the pattern becomes ``(?:$|\n$)``. A ``$`` with
    more of the pattern after it is refused (``either_dfa`` then covers the pattern)."""
    tag = node[0]
    if tag == "eol":
        if not final:
            raise _unsupported("'$' before more of the pattern, under 'not' or beside a key pattern's other reading")
        return _EITHER_END
    if tag == "seq":
        items = node[1]
        last = len(items) - 1
        while last > 0 and items[last][0] in ("eol", "bol"):  # ``$$`` and ``$^`` end it too
            last -= 1
        return ("seq", tuple(_python_ends(x, final and i >= last) for i, x in enumerate(items)))
    if tag == "alt":
        return ("alt", tuple(_python_ends(x, final) for x in node[1]))
    if tag in ("rep", "count"):
        return (tag, _python_ends(node[1], False), *node[2:])
    return node


def _size(node, limit: int) -> int:
    """NFA states the node expands to (capped just above `limit`), computed before building."""
    tag = node[0]
    if tag in ("set", "bol", "eol"):
        return 2
    if tag == "look":
        raise _unsupported("lookahead (?=...) or (?!...) other than right after a leading ^")
    if tag == "count":
        return _size(node[1], limit) + 3
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
    """Thompson NFA: each state has at most one character edge, plus epsilon/^/$ edges, and the
    tagged epsilon edges that begin an iteration of a counted group."""

    def __init__(self):
        self.char: list[tuple[Ranges, int] | None] = []
        self.eps: list[list[int]] = []
        self.bol: list[list[int]] = []
        self.eol: list[list[int]] = []
        self.tag: list[list[int]] = []

    def state(self) -> int:
        for table in (self.eps, self.bol, self.eol, self.tag):
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
        if tag == "count":
            e, loop, begin = self.state(), self.state(), self.state()
            self.eps[s].append(loop)
            self.eps[loop].append(e)
            self.tag[loop].append(begin)
            self.eps[self.build(node[1], begin)].append(loop)
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

def _determinize(nfa: _NFA, start: int, final: int, max_states: int) -> tuple[CharDFA, frozenset[int]]:
    """The DFA, and the states whose entry counts one more iteration of the counted group (none
    without one). With a counted group a thread in an iteration not yet counted is NFA state
    ``q + n``: an iteration is counted on the first character that only such threads read (the
    others die there), so every thread of a DFA state has the state's count, or is one iteration
    ahead and still pending. A pending thread that would begin another iteration (or reach the end
    of the pattern through the loop) cannot be counted: _Ambiguous, and the pattern is unrolled."""
    work = 0
    n = len(nfa.char)
    counting = any(nfa.tag)

    def closure(seeds, at_start: bool, at_end: bool) -> frozenset:
        nonlocal work
        seen, stack = set(seeds), list(seeds)
        while stack:
            q = stack.pop()
            work += 1
            r = q - n if q >= n else q
            nxt = nfa.eps[r]
            if at_start and nfa.bol[r]:
                nxt = nxt + nfa.bol[r]
            if at_end and nfa.eol[r]:
                nxt = nxt + nfa.eol[r]
            if q != r:
                nxt = [t + n for t in nxt]
            if nfa.tag[r]:
                if q != r:  # a second iteration begun before a character: an empty one
                    raise _Ambiguous
                nxt = nxt + [t + n for t in nfa.tag[r]]
            for t in nxt:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        if work > MAX_WORK:
            raise _too_complex("pattern needs too much work to compile")
        return frozenset(q for q in seen if nfa.char[q % n] is not None or nfa.eol[q % n] or q == final)

    def accepts_at_end(states) -> bool:
        waiting = [q for q in states if nfa.eol[q % n]]
        return bool(waiting) and final in closure(waiting, False, True)

    @functools.lru_cache(maxsize=None)
    def segments(classes: frozenset) -> tuple[list, list[tuple[int, int, frozenset]]]:
        """Cut the scalar line where the set of classes (by index) containing a scalar changes."""
        nonlocal work
        keys = list(classes)
        events = sorted((x, d, i) for i, r in enumerate(keys)
                        for lo, hi in r for x, d in ((lo, 1), (hi + 1, -1)))
        work += len(events)
        out, active = [], set()
        for k, (pos, d, i) in enumerate(events):
            (active.add if d > 0 else active.discard)(i)
            end = events[k + 1][0] - 1 if k + 1 < len(events) else pos - 1
            if active and end >= pos:
                out.append((pos, end, frozenset(active)))
        return keys, out

    dfa = CharDFA()
    stepped: set[int] = set()
    matched = dfa.add_state(accepting=True)  # a match has ended: anything may follow
    dfa.edges[matched] = [(lo, hi, matched) for lo, hi in SCALARS]
    init = closure([start], True, False)
    if final in init:
        return dfa, frozenset()
    first = dfa.add_state(accepting=final in closure([start], True, True))
    dfa.start = first
    base = closure([start], False, False)  # re-entered before every character: unanchored left
    if counting and base:
        raise _Ambiguous  # a match begun later would count from zero
    ids: dict[tuple[frozenset, bool], int] = {}
    after: dict[frozenset, frozenset] = {}  # NFA states moved to -> their closure with ``base``
    todo = [(first, init)]
    while todo:
        q, states = todo.pop()
        groups: dict[Ranges, list[int]] = {}
        for s in states:
            edge = nfa.char[s % n]
            if edge is not None:  # the target carries the iteration its thread was about to begin
                groups.setdefault(edge[0], []).append(edge[1] + s - s % n)
        groups.setdefault(SCALARS, [])  # every scalar re-enters `base`, consumed or not
        memo: dict[frozenset, int] = {}
        row: list[tuple[int, int, int]] = []
        keys, cuts = segments(frozenset(groups))
        for lo, hi, key in cuts:
            if key not in memo:
                seeds = frozenset([t for i in key for t in groups[keys[i]]])
                step = bool(seeds) and min(seeds) >= n  # read only by threads beginning an iteration
                if step:
                    seeds = frozenset(t - n for t in seeds)
                nxt = after.get(seeds)
                if nxt is None:  # many states move to the same NFA states: their closure once
                    nxt = after[seeds] = closure(seeds, False, False) | base
                if not nxt:
                    memo[key] = -1  # nothing alive: no edge
                elif final in nxt and not step:
                    memo[key] = matched
                elif (nxt, step) in ids:
                    memo[key] = ids[nxt, step]
                else:
                    if dfa.size >= max_states:
                        raise _too_complex(f"pattern needs more than {max_states} automaton states")
                    t = ids[nxt, step] = memo[key] = dfa.add_state(accepting=final in nxt or accepts_at_end(nxt))
                    if step:
                        stepped.add(t)
                    if final in nxt:  # a match ended by the iteration's character: as ``matched``
                        dfa.edges[t] = list(dfa.edges[matched])
                    else:
                        todo.append((t, nxt))
            t = memo[key]
            if t < 0:
                continue
            if row and row[-1][2] == t and row[-1][1] == lo - 1:
                row[-1] = (row[-1][0], hi, t)
            else:
                row.append((lo, hi, t))
        dfa.edges[q] = row
    return dfa, frozenset(stepped)


# -------------------------------------------------------------------------------- minimisation

def _reachable(dfa: CharDFA) -> CharDFA:
    """Only the states reachable from the start, renumbered (start first)."""
    order, index = [dfa.start], {dfa.start: 0}
    for q in order:
        for _, _, t in dfa.edges[q]:
            if t not in index:
                index[t] = len(order)
                order.append(t)
    return CharDFA(0, [[(lo, hi, index[t]) for lo, hi, t in dfa.edges[q]] for q in order],
                   {index[q] for q in dfa.accepting if q in index})


def _symbol_classes(dfa: CharDFA) -> list[int]:
    """One representative scalar per class of scalars that every row treats alike.

    Classes come from refining the line by each distinct row *shape* (its ranges, targets
    numbered by first use): a 700-range identifier class used by 200 states is one class.
    """
    cuts = sorted({0, MAX_SCALAR + 1} | {lo for row in dfa.edges for lo, _, _ in row}
                  | {hi + 1 for row in dfa.edges for _, hi, _ in row})
    where = {c: k for k, c in enumerate(cuts)}
    shapes = set()
    for row in dfa.edges:
        local: dict[int, int] = {}
        shapes.add(tuple((lo, hi, local.setdefault(t, len(local))) for lo, hi, t in row))
    label = [0] * (len(cuts) - 1)
    for shape in shapes:
        part = [-1] * len(label)
        for lo, hi, t in shape:
            part[where[lo]:where[hi + 1]] = [t] * (where[hi + 1] - where[lo])
        names: dict[tuple[int, int], int] = {}
        label = [names.setdefault(pair, len(names)) for pair in zip(label, part)]
    first: dict[int, int] = {}
    for k, c in enumerate(label):
        first.setdefault(c, cuts[k])
    return list(first.values())


def minimized(dfa: CharDFA) -> CharDFA:
    """Hopcroft's algorithm over the DFA's symbol classes; the result is trimmed and minimal."""
    dfa = _reachable(dfa).trimmed()
    n = dfa.size
    dead = n
    columns = []  # per symbol class: target of every state (dead = n)
    starts = [[lo for lo, _, _ in row] for row in dfa.edges]
    for scalar in _symbol_classes(dfa):
        column = [dead] * (n + 1)
        for q, row in enumerate(dfa.edges):
            e = bisect.bisect_right(starts[q], scalar) - 1
            if e >= 0 and row[e][1] >= scalar:
                column[q] = row[e][2]
        columns.append(column)
    inverse = []
    for column in columns:
        inv: dict[int, list[int]] = {}
        for q, t in enumerate(column):
            inv.setdefault(t, []).append(q)
        inverse.append(inv)
    accepting = set(dfa.accepting)
    blocks = [b for b in (set(accepting), set(range(n + 1)) - accepting) if b]
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
    out = CharDFA(block_of[dfa.start], [[] for _ in blocks], {block_of[q] for q in accepting})
    for b, members in enumerate(blocks):
        rep = min(members)
        if rep == dead:
            continue
        row = out.edges[b]
        for lo, hi, t in dfa.edges[rep]:
            t = block_of[t]
            if row and row[-1][2] == t and row[-1][1] == lo - 1:
                row[-1] = (row[-1][0], hi, t)
            else:
                row.append((lo, hi, t))
    return out.trimmed()


# ------------------------------------------------------------------------------------ public API

@functools.lru_cache(maxsize=1024)
def _determinized(pattern: str, max_states: int, dialect: str, ignore_case: bool = False):
    """The DFA before minimisation, or the refusal: whatever can refuse a pattern happens here."""
    try:
        ast, looks = _leading_lookaheads(_Parser(pattern, dialect, ignore_case).parse())
        if _size(ast, MAX_NFA_STATES) > MAX_NFA_STATES:
            raise _too_complex(f"pattern expands to more than {MAX_NFA_STATES} NFA states")
        nfa = _NFA()
        start = nfa.state()
        final = nfa.build(ast, start)
        dfa = _determinize(nfa, start, final, max_states)[0]
        for negated, text in looks:
            dfa = _looked_ahead(dfa, negated, text, max_states, dialect, ignore_case)
        return dfa.frozen()
    except _Refusal as refusal:
        return refusal
    except RecursionError:
        return _too_complex("pattern nests too deeply")


def _leading_lookaheads(ast) -> tuple[tuple, list[tuple[bool, str]]]:
    """``ast`` without the lookaheads right after its leading ``^`` (``^(?!X)(?=Y)...``), and
    those lookaheads; one anywhere else is refused (``_size``)."""
    if ast[0] != "seq" or not ast[1] or ast[1][0] != ("bol",):
        return ast, []
    items, n = ast[1], 1
    while n < len(items) and items[n][0] == "look":
        n += 1
    return ("seq", items[:1] + items[n:]), [(look[1], look[2]) for look in items[1:n]]


def _looked_ahead(dfa: CharDFA, negated: bool, text: str, max_states: int, dialect: str, ignore_case: bool) -> CharDFA:
    """``dfa`` (a pattern anchored by a leading ``^``) less, or within, the strings with a prefix
    matching ``text`` at the start: what ``(?!text)`` or ``(?=text)`` right after the ``^`` asks.
    Portable: a string is out where either reading finds ``(?!text)``'s prefix, in where both find
    ``(?=text)``'s (the narrower side of each); under ``not`` (either reading) it is refused."""
    if dialect == "either":
        raise _unsupported("lookahead (?=...) or (?!...) in a pattern under 'not'")
    prefixed = _compile(f"^(?:{text})", max_states, "either" if negated and dialect == "portable" else dialect,
                        ignore_case)
    if isinstance(prefixed, _Refusal):
        raise prefixed
    try:
        return chardfa.difference(dfa, prefixed) if negated else chardfa.intersect(dfa, prefixed, max_states)
    except OverflowError:
        raise _too_complex(f"a lookahead's automaton has more than {max_states} states") from None


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str, max_states: int, dialect: str, ignore_case: bool = False):
    """The minimal DFA, or the refusal (cached too, so a hostile pattern costs its work once)."""
    found = _determinized(pattern, max_states, dialect, ignore_case)
    return found if isinstance(found, _Refusal) else minimized(found).frozen()


@dataclass(frozen=True)
class CountedPattern:
    """A pattern with its widest bounded group repetition counted instead of unrolled: ``dfa`` reads
    the pattern with that group repeated without bound, and each entry into a state of ``stepped``
    begins one more of its optional iterations, of which at most ``most`` may be begun
    (``compiler.counting`` makes the counted block). ``(?:\\S+\\s+){0,199}\\S+`` (at most 200 words)
    is five states and a count, where unrolled it was 400 states and 50 ms to build."""

    dfa: CharDFA
    stepped: frozenset[int]
    most: int
    shortest: int  # the fewest scalars of a match (one with no optional iteration)


@functools.lru_cache(maxsize=1024)
def counted_pattern(pattern: str, dialect: str = "ecma") -> CountedPattern | None:
    """The pattern with a counted group, or None: no bounded group repetition of at least
    ``COUNTED_GROUP_MIN`` optional copies outside any other repetition, a pattern not anchored at
    the start, iterations that cannot be told apart as the text is read (``(a*b?){0,20}``), or
    anything ``pattern_dfa`` refuses: those are built unrolled, as before."""
    if _one_class_repeated(pattern, dialect) is not None:
        return None  # counted by its length, one state wide (``pattern_terms``)
    try:
        found = _count_group(_Parser(pattern, dialect).parse())
        if found is None:
            return None
        ast, most = found
        if _size(ast, MAX_NFA_STATES) > MAX_NFA_STATES:
            return None
        nfa = _NFA()
        start = nfa.state()
        dfa, stepped = _determinize(nfa, start, nfa.build(ast, start), MAX_DFA_STATES)
    except (_Refusal, _Ambiguous, RecursionError):
        return None
    shortest = _shortest(dfa)
    return CountedPattern(dfa, stepped, most, shortest) if stepped and shortest is not None else None


def _count_group(ast) -> tuple[tuple, int] | None:
    """``ast`` with its widest bounded repetition ``G{m,n}`` (not inside another repetition) as ``G``
    ``m`` times then ``("count", G)``, and ``n - m``; None when there is none worth counting."""
    found = []

    def visit(node):
        if node[0] in ("seq", "alt"):
            for child in node[1]:
                visit(child)
        elif node[0] == "rep" and node[3] is not None and node[3] - node[2] >= COUNTED_GROUP_MIN:
            found.append(node)

    visit(ast)
    if not found:
        return None
    widest = max(found, key=lambda rep: (rep[3] - rep[2]) * _size(rep[1], MAX_NFA_STATES))
    _, body, lo, hi = widest
    if lo * _size(body, MAX_NFA_STATES) > MAX_NFA_STATES:
        return None  # its required copies alone are too many (``pattern_dfa`` words the refusal)

    def rewrite(node):
        if node is widest:
            return ("seq", (body,) * lo + (("count", body),))
        if node[0] in ("seq", "alt"):
            return (node[0], tuple(rewrite(child) for child in node[1]))
        return node

    return rewrite(ast), hi - lo


@dataclass(frozen=True)
class Outline:
    """What lowering a pattern will build, known before it is built (``compiler.deferral``):
    the length range its terms carry (``{m,n}`` of a one-class pattern), the fewest scalars of a
    match (None: nothing matches) and whether every longer length matches
    too, at most how many states its automaton has, and at most how many scalar ranges its rows
    hold (each row's grouped ranges become shared fragments, a few states per range)."""

    least: int
    most: int | None
    shortest: int | None
    every_length: bool
    states: int
    ranges: int


@functools.lru_cache(maxsize=4096)
def pattern_outline(pattern: str, dialect: str = "ecma", counted: bool = False) -> Outline | None:
    """``pattern_terms``' outcome in outline, None when it would refuse the pattern: only the
    determinisation is run (the rest, minimising and lowering, cannot fail), so a string fragment
    with a pattern may wait to be lowered when first reached. ``counted``: lowered with its group
    counted (``counting.counted_group``)."""
    if counted:
        group = counted_pattern(pattern, dialect)
        return Outline(0, None, group.shortest, False, group.dfa.size * (group.most + 1), _row_ranges(group.dfa))
    shape = _one_class_repeated(pattern, dialect)
    if shape is not None:
        ranges, lo, hi = shape
        return Outline(lo, hi, 0 if ranges else None, True, 1, len(ranges))
    found = _determinized(pattern, MAX_DFA_STATES, dialect)
    if isinstance(found, _Refusal):
        return None
    return Outline(0, None, _shortest(found), False, found.size, _row_ranges(found))


def _row_ranges(dfa: CharDFA) -> int:
    """The scalar ranges of the automaton's distinct rows (each grouped range becomes a fragment)."""
    return sum(map(len, {tuple((lo, hi) for lo, hi, _ in row) for row in dfa.edges}))


def _shortest(dfa: CharDFA) -> int | None:
    """The fewest scalars from the start to acceptance (classes hold no lone surrogate: ``normalize``)."""
    seen, frontier, steps = {dfa.start}, [dfa.start], 0
    while frontier:
        if any(q in dfa.accepting for q in frontier):
            return steps
        nxt = []
        for q in frontier:
            for lo, hi, t in dfa.edges[q]:
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier, steps = nxt, steps + 1
    return None


def pattern_dfa(pattern: str, pointer: str = "", *, max_states: int = MAX_DFA_STATES,
                dialect: str = "ecma", ignore_case: bool = False) -> CharDFA:
    """The strings `s` for which ``pattern`` holds (ECMA-262 search), as a trimmed minimal DFA.

    ``dialect="portable"`` keeps only strings that Python's ``re`` (python-jsonschema's engine)
    accepts too: ``\\D``, ``\\W``, ``\\s`` and ``\\S`` then avoid the scalars the engines disagree on;
    ``"either"`` takes every string one of them accepts (what ``not`` must keep out).
    ``ignore_case``: JavaScript's ``i`` flag (ASCII letters match either case), for validators'
    own format regexes.
    The result is cached and shared: callers must not mutate it.
    Raises InvalidSchema (bad syntax), UnsupportedKeyword (lookarounds, backreferences, word
    boundaries, inline flags, property classes, dialect-dependent escapes) or SchemaTooComplex.
    """
    if dialect != "ecma" and not _READ_APART_SYNTAX.search(pattern):
        dialect = "ecma"  # every reading is ECMA's: one automaton, built once, the same object
    result = _compile(pattern, max_states, dialect, ignore_case)
    if isinstance(result, CharDFA):
        return result
    if result.kind == "invalid":
        raise InvalidSchema(pointer, f"invalid pattern {pattern!r}: {result.text}")
    if result.kind == "unsupported":
        raise UnsupportedKeyword(pointer, "pattern", detail=result.text)
    raise SchemaTooComplex(pointer, result.text)


# the scalars Python's re and ECMA-262 may read apart: \s (U+FEFF, U+001C-U+001F ...), \d and \w
# (Unicode digits and letters), \b, "." (CR, U+2028, U+2029) and "$" (before a final line feed)
_READ_APART = "[\\n\\r\\x1c-\\x1f\\u0080-\\u{10FFFF}]"
# what the dialects read apart, as written (a superset: an escaped dot too): without any, one reading
_READ_APART_SYNTAX = re.compile(r"\\[dDsSwWbB]|[.$]")


@functools.lru_cache(maxsize=None)
def either_dfa(pattern: str, pointer: str = "") -> CharDFA:
    """The strings some engine matches ``pattern`` on (``dialect="either"``), or where that reading
    is refused (a lookahead) a cover of them: the portable reading and every string holding a
    scalar the engines may read apart. What a key pattern's schema and a ``not`` keep to."""
    try:
        return pattern_dfa(pattern, pointer, dialect="either")
    except UnsupportedKeyword:
        return chardfa.union(pattern_dfa(pattern, pointer, dialect="portable"), pattern_dfa(_READ_APART)).frozen()


def pattern_terms(pattern: str, pointer: str = "", *, dialect: str = "ecma") -> tuple:
    """``pattern_dfa`` as length-ranged terms ``((dfa, min, max or None), ...)``, as formats give
    theirs: a whole string of one class repeated (``^[0-9a-zA-Z_-]{1,255}$``) is the class's
    one-state loop within ``{m,n}`` scalars, which the lowering counts instead of unrolling
    (``compiler.counting``: no bound too large for the NFA here); any other pattern is its
    automaton at any length."""
    shape = _one_class_repeated(pattern, dialect)
    if shape is None:
        return ((pattern_dfa(pattern, pointer, dialect=dialect), 0, None),)
    ranges, lo, hi = shape
    return ((_class_loop(ranges), lo, hi),)


@functools.lru_cache(maxsize=4096)
def _one_class_repeated(pattern: str, dialect: str) -> tuple[Ranges, int, int | None] | None:
    """``(class, m, n)`` for a pattern ``^C{m,n}$`` (or ``^C*$``, ``^C+$``...), else None (a refused
    pattern too: ``pattern_dfa`` words its refusal)."""
    try:
        ast = _Parser(pattern, dialect).parse()
    except (_Refusal, RecursionError):
        return None
    if ast[0] != "seq" or len(ast[1]) != 3 or ast[1][0] != ("bol",) or ast[1][2] != ("eol",):
        return None
    rep = ast[1][1]
    if rep[0] != "rep" or rep[1][0] != "set":
        return None
    return rep[1][1], rep[2], rep[3]


@functools.lru_cache(maxsize=4096)
def _class_loop(ranges: Ranges) -> CharDFA:
    """Every string of ``ranges`` (one accepting state reading them), one object per class."""
    return CharDFA(0, [[(lo, hi, 0) for lo, hi in ranges]], {0}).frozen()
