"""constrain: JSON Schema to a byte automaton to token masks, so a model's output always validates.

The public API is small: ``compile`` a schema into a ``Grammar``; a ``Vocabulary`` and a ``Matcher``
for token masks (processors in ``constrain.hf`` and ``constrain.llama_cpp``); for providers that
cannot take masks, ``validate``, ``generate_json`` and the schema helpers.
"""

from compiler.errors import (
    InvalidSchema,
    SchemaError,
    SchemaTooComplex,
    Unsatisfiable,
    UnsupportedKeyword,
)
from automaton.matcher import Matcher
from automaton.vocab import Vocabulary
from compiler.grammar import Grammar, compile

from .repair import RepairFailed, describe_shape, generate_json
from .tool_calls import compile_tools
from .tools import normalize_tool_schema
from .validate import validate

__all__ = [
    "compile",
    "Grammar",
    "Vocabulary",
    "Matcher",
    "SchemaError",
    "InvalidSchema",
    "UnsupportedKeyword",
    "Unsatisfiable",
    "SchemaTooComplex",
    "validate",
    "generate_json",
    "RepairFailed",
    "describe_shape",
    "normalize_tool_schema",
    "compile_tools",
]
