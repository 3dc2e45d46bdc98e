"""The format automata, shipped built: a process loads them instead of building them on first use.

A format is an automaton that depends on nothing but the code that builds it, yet its first build
in a process cost that process's first schema using it up to 140 ms (``uri-reference``; ``ipv6``
75, ``uri`` 55, ``email`` under the portable dialect 25) in every server worker. The table
(``prebuilt_formats.json.gz``, written by ``python -m compiler.prebuilt``) holds each known
format's terms under both dialects, with a fingerprint of the modules that build them: a table
whose fingerprint is not the code's is never read (the format is built as before), and a test
fails until the table is written again.

It holds Python's ``\\s``, ``\\d`` and ``\\w`` classes too (``regex._python_class``: what the
portable dialect must keep out; 30-40 ms each to ask of ``re``, once per process), read only under
the Unicode version they were computed with.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import sys
import unicodedata
from array import array
from functools import lru_cache
from pathlib import Path

from .chardfa import CharDFA

TABLE = Path(__file__).with_name("prebuilt_formats.json.gz")
SOURCES = ("chardfa.py", "regex.py", "formats.py", "validator_formats.py", "prebuilt.py")


def fingerprint() -> str:
    """A digest of the modules whose code decides the automata (their text)."""
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(Path(__file__).with_name(name).read_bytes())
    return digest.hexdigest()


PYTHON_CLASSES = "sdw"


@lru_cache(maxsize=1)
def _table() -> dict:
    """The table (its ``terms`` by ``dialect:name`` and Python's ``classes``); empty when it is missing
    or of other code (or the code's text cannot be read to tell)."""
    try:
        with gzip.open(TABLE, "rt", encoding="utf-8") as f:
            table = json.load(f)
        return table if table.get("fingerprint") == fingerprint() else {}
    except (OSError, ValueError):
        return {}


def python_class(name: str) -> tuple[tuple[int, int], ...] | None:
    """Python's ``\\name`` as scalar ranges from the table, None when it holds another Unicode version's."""
    classes = _table().get("classes", {})
    if classes.get("unicode") != unicodedata.unidata_version or name not in classes:
        return None
    flat = _ints(classes[name])
    return tuple(zip(flat[::2], flat[1::2]))


def load(dialect: str, name: str):
    """The terms of format ``name`` under ``dialect`` ("spec", "portable" or "ajv") from the table, or None."""
    entry = _table().get("terms", {}).get(f"{dialect}:{name}")
    if entry is None:
        return None
    return tuple((_dfa(term), term["lo"], term["hi"]) for term in entry)


def _dfa(term: dict) -> CharDFA:
    lengths, flat = _ints(term["rows"]), _ints(term["edges"])
    edges, at = [], 0
    for n in lengths:
        edges.append(tuple((flat[i], flat[i + 1], flat[i + 2]) for i in range(at, at + 3 * n, 3)))
        at += 3 * n
    return CharDFA(term["start"], tuple(edges), set(term["accepting"]), total=term["total"])  # as ``frozen``


def _ints(text: str) -> array:
    out = array("i")
    out.frombytes(base64.b64decode(text))
    if sys.byteorder != "little":
        out.byteswap()
    return out


def _text(values) -> str:
    out = array("i", values)
    if sys.byteorder != "little":
        out.byteswap()
    return base64.b64encode(out.tobytes()).decode("ascii")


def _entry(terms) -> list[dict]:
    """Each term's automaton as a few numbers and two arrays of 32-bit ints (read without parsing)."""
    return [{"start": dfa.start, "accepting": sorted(dfa.accepting), "total": dfa.total, "lo": lo, "hi": hi,
             "rows": _text(len(row) for row in dfa.edges), "edges": _text(x for row in dfa.edges for edge in row for x in edge)}
            for dfa, lo, hi in terms]


def built() -> dict[str, tuple]:
    """Every known format's terms under both dialects, and Ajv's own readings (what a ``not`` of a
    format keeps out beside python-jsonschema's), built from the code (not the table)."""
    from .formats import KNOWN_FORMATS, build_terms
    from .validator_formats import ajv_names, build_ajv, build_portable, portable_names

    out = {f"spec:{name}": build_terms(name) for name in sorted(KNOWN_FORMATS)}
    out.update({f"portable:{name}": build_portable(name) for name in portable_names()})
    out.update({f"ajv:{name}": ((build_ajv(name), 0, None),) for name in ajv_names()})
    return out


def built_classes() -> dict[str, tuple]:
    """Python's classes, asked of ``re`` (not the table)."""
    from .regex import scan_python_class

    return {name: scan_python_class(name) for name in PYTHON_CLASSES}


def write() -> None:
    terms = {key: _entry(value) for key, value in built().items()}
    classes = {name: _text(x for r in ranges for x in r) for name, ranges in built_classes().items()}
    text = json.dumps({"fingerprint": fingerprint(), "terms": terms,
                       "classes": {"unicode": unicodedata.unidata_version, **classes}},
                      separators=(",", ":"), sort_keys=True)
    with gzip.GzipFile(TABLE, "wb", mtime=0) as f:  # no time stamp: the same code writes the same bytes
        f.write(text.encode("utf-8"))


if __name__ == "__main__":
    write()
    print(f"wrote {TABLE.name}")
