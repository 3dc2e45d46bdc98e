"""The compiler's errors: "your schema is wrong" vs "we do not do that" vs "nothing can match".

Every error names the JSON pointer of the schema location it is about, worded for people:
``at the schema root`` for the root, each path segment JSON-pointer escaped, an empty property
name written ``""``, and, when the problem sits inside a ``$ref`` target, the reference that led there.
"""

from __future__ import annotations


def describe_pointer(pointer: str, via: tuple[str, ...] = ()) -> str:
    """Word a JSON pointer for an error message."""
    if pointer in ("", "#"):
        where = "at the schema root"
    else:
        parts = pointer.lstrip("#").split("/")[1:]
        shown = "/".join('""' if p == "" else p for p in parts)
        if len(shown) > SHOWN_MAX:  # a recursion that went deep: its two ends say where
            shown = f"{shown[:SHOWN_MAX // 2].rstrip('/')}/... {len(parts)} segments .../{shown[-SHOWN_MAX // 2:].lstrip('/')}"
        where = f"at /{shown}"
    refs = list(dict.fromkeys(via))  # each reference once, in the order first taken
    for ref in refs[:VIA_MAX]:
        where += f" (reached through $ref {ref!r})"
    if len(refs) > VIA_MAX:
        where += f" (and {len(refs) - VIA_MAX} more $refs)"
    return where


SHOWN_MAX = 240  # characters of a pointer shown in a message
VIA_MAX = 4  # references named in a message


class SchemaError(Exception):
    """Base of every compile error; carries the pointer and a reason."""

    def __init__(self, pointer: str, reason: str, via: tuple[str, ...] = ()):
        self.pointer = pointer
        self.reason = reason
        self.via = via
        super().__init__(f"{reason} {describe_pointer(pointer, via)}")


class InvalidSchema(SchemaError):
    """The schema is not valid JSON Schema (or not JSON at all)."""


class UnsupportedKeyword(SchemaError):
    """A keyword we cannot enforce exactly: refused rather than silently widened."""

    def __init__(self, pointer: str, keyword: str, detail: str = "", via: tuple[str, ...] = ()):
        self.keyword = keyword
        reason = f"unsupported keyword {keyword!r}" + (f" ({detail})" if detail else "")
        super().__init__(pointer, reason, via)


class Unsatisfiable(SchemaError):
    """No instance can validate against the schema (or the part that is required)."""


class SchemaTooComplex(SchemaError):
    """A limit on compile time, automaton size or depth was exceeded."""

    def __init__(self, pointer: str, what: str, via: tuple[str, ...] = ()):
        self.what = what
        super().__init__(pointer, f"schema too complex: {what}", via)
