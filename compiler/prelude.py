"""The fragments every grammar may call, lowered once per process and set of options: the spellings
of the scalar sets that recur in almost every schema (a free string's non-ASCII and ASCII scalars,
a literal's escaped-only ASCII: tries of raw UTF-8 and ``\\uXXXX`` forms), a free string, and any
JSON value (what an absent ``additionalProperties`` lets in, so most objects call it). Written per
grammar they were a third of a median program; a new program now starts with their rows (tuples,
shared by reference) and the lowering's ``shared`` finds them by key.
"""

from __future__ import annotations

from functools import lru_cache

from automaton.program import Program

from .context import Options
from .refs import SchemaDocument
from .strings import ESCAPED_ONLY

NON_ASCII = ((0x80, 0x10FFFF),)
ASCII = ((0, 0x7F),)
# the scalar sets of those spellings, and whether under the literal rules
_SCALARS = ((NON_ASCII, False), (ASCII, False), (ESCAPED_ONLY, True))


@lru_cache(maxsize=16)
def prelude(whitespace: str, max_whitespace: int, dialect: str) -> tuple[Program, dict]:
    """The prelude program for these options (what the fragments depend on; rows frozen into
    tuples) and its fragments by ``shared`` key."""
    from .lower import Lowering  # the prelude is lowered as a schema's parts are

    lowering = Lowering(SchemaDocument(True), Options(whitespace=whitespace, max_whitespace=max_whitespace,
                                                      dialect=dialect), with_prelude=False)
    for scalars, literal in _SCALARS:
        lowering.scalar_fragment(scalars, literal)
    lowering.shared("string", lowering.free_string)
    lowering.any_fragment()
    prog = lowering.prog
    prog.edges, prog.eps, prog.calls = ([tuple(row) for row in rows] for rows in (prog.edges, prog.eps, prog.calls))
    prog.settle()  # its recursion and liveness, taken as they are by every program including it
    return prog, dict(lowering._shared)
