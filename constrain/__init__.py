"""constrain: JSON Schema to a byte automaton to token masks, so a model's output always validates.

The public API is small: ``compile`` a schema into a ``Grammar``; for providers that cannot take
masks, ``validate``, ``generate_json`` and the schema helpers.
"""

from compiler.errors import (
    InvalidSchema,
    SchemaError,
    SchemaTooComplex,
    Unsatisfiable,
    UnsupportedKeyword,
)
from compiler.grammar import Grammar, compile

__all__ = [
    "compile",
    "Grammar",
    "SchemaError",
    "InvalidSchema",
    "UnsupportedKeyword",
    "Unsatisfiable",
    "SchemaTooComplex",
]
