"""The fragments every grammar may call, written once per process: the spellings of the scalar sets
that recur in almost every schema (a free string's non-ASCII and ASCII scalars, a literal's
escaped-only ASCII). Each is a trie of raw UTF-8 and ``\\uXXXX`` forms, about 100 states in all:
written per grammar they were a quarter of a median program. A new program starts with their rows
(tuples, shared by reference) and the lowering's ``shared`` finds them by key.
"""

from __future__ import annotations

from functools import cache

from automaton.program import Program

from .strings import ESCAPED_ONLY, add_scalar

NON_ASCII = ((0x80, 0x10FFFF),)
ASCII = ((0, 0x7F),)
# (lowering's ``shared`` keys, the scalars, the literal rules?): a non-ASCII scalar is spelled
# alike under both rules, so both keys name one fragment
_PARTS = (((("scalar", NON_ASCII, False), ("scalar", NON_ASCII, True)), NON_ASCII, False),
          ((("scalar", ASCII, False),), ASCII, False),
          ((("scalar", ESCAPED_ONLY, True),), ESCAPED_ONLY, True))


@cache
def prelude() -> tuple[Program, dict]:
    """The prelude program (rows frozen into tuples) and its fragments by ``shared`` key."""
    prog = Program()
    keys = {}
    for names, scalars, literal in _PARTS:
        frag = prog.new_fragment()
        f = prog.fragments[frag]
        add_scalar(prog, f.start, f.final, scalars, literal=literal)
        keys.update(dict.fromkeys(names, frag))
    prog.edges, prog.eps, prog.calls = ([tuple(row) for row in rows] for rows in (prog.edges, prog.eps, prog.calls))
    return prog, keys
