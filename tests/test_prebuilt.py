"""The format automata shipped built (``compiler.prebuilt``) are the ones the code builds."""

import pytest

import constrain
from compiler import prebuilt
from compiler.formats import KNOWN_FORMATS


def _same(a, b) -> bool:
    return len(a) == len(b) and all(
        x.start == y.start and x.edges == y.edges and x.accepting == y.accepting and x.total == y.total
        and (lo, hi) == (lo2, hi2) for (x, lo, hi), (y, lo2, hi2) in zip(a, b))


def test_the_shipped_format_automata_are_the_built_ones():
    """The table's fingerprint is the code's (else: ``python -m compiler.prebuilt``), and every term loads as built."""
    assert prebuilt._table(), "compiler/prebuilt_formats.json.gz is stale: run python -m compiler.prebuilt"
    terms = prebuilt.built()
    assert {key for key in terms if key.startswith("spec:")} == {f"spec:{name}" for name in KNOWN_FORMATS}
    assert "portable:uri" in terms and "portable:byte" in terms
    for key, built in terms.items():
        assert _same(prebuilt.load(*key.split(":", 1)), built), key


def test_a_table_of_other_code_is_never_read(monkeypatch):
    """A table whose fingerprint is not the code's loads nothing; formats are then built and still enforced."""
    monkeypatch.setattr(prebuilt, "fingerprint", lambda: "other code")
    prebuilt._table.cache_clear()
    try:
        assert prebuilt.load("spec", "uri") is None
    finally:
        monkeypatch.undo()
        prebuilt._table.cache_clear()
    assert prebuilt.load("spec", "uri") is not None


@pytest.mark.parametrize("dialect", ["portable", "spec"])
def test_formats_from_the_table_enforce_as_built(dialect):
    """A grammar over loaded automata accepts and refuses as the format says."""
    grammar = constrain.compile({"type": "string", "format": "ipv6"}, dialect=dialect, cache=False)
    assert grammar.accepts('"::1"') and grammar.accepts('"2001:db8::8a2e:370:7334"')
    assert not grammar.accepts('"::g"') and not grammar.accepts('"1::2::3"')


def test_the_shipped_python_classes_are_what_re_matches():
    """Python's \\s, \\d and \\w (the portable dialect's other reading) ship in the table for one
    Unicode version: under it they are what ``re`` matches, under another they are not read."""
    import unicodedata

    from compiler.regex import scan_python_class

    classes = prebuilt._table()["classes"]
    for name in prebuilt.PYTHON_CLASSES:
        if classes["unicode"] == unicodedata.unidata_version:
            assert prebuilt.python_class(name) == scan_python_class(name), name
        else:
            assert prebuilt.python_class(name) is None
