"""What the processors accept as a schema: a compiled ``Grammar``, or anything ``compile`` takes."""

from __future__ import annotations

from compiler.grammar import Grammar, compile


def as_grammar(schema_or_grammar, compile_options: dict) -> Grammar:
    if isinstance(schema_or_grammar, Grammar):
        if compile_options:
            raise TypeError("compile options were given with an already compiled Grammar")
        return schema_or_grammar
    return compile(schema_or_grammar, **compile_options)
