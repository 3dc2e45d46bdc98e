"""Behaviour of ``compile``'s grammar cache: equal schemas share a grammar; evicted ones are freed off the compile."""

import gc
import json
import threading
import weakref
from collections import OrderedDict

import pytest

import constrain
from automaton.index import MASKS
from automaton.matcher import Matcher
from automaton.vocab import Vocabulary
from compiler import grammar as grammar_module

BYTES = Vocabulary([bytes([b]) for b in range(256)] + [None], {256})  # one token per byte, then EOS


def _schema(name: str) -> dict:
    return {"type": "object", "properties": {name: {"type": "array", "items": {"type": "integer"}}}}


@pytest.fixture
def small_cache(monkeypatch):
    """An empty cache of two grammars, nothing left to free from earlier tests, and the collector
    off: only a refcount can free a grammar."""
    grammar_module.wait_freed()
    monkeypatch.setattr(grammar_module, "_CACHE", OrderedDict())
    monkeypatch.setattr(grammar_module, "CACHE_SIZE", 2)
    enabled = gc.isenabled()
    gc.disable()
    yield
    if enabled:
        gc.enable()


def test_equal_schemas_and_options_share_one_grammar(small_cache):
    """Equal schemas with equal options get the same grammar; other options or ``cache=False`` a new one."""
    schema = _schema("shared")
    grammar = constrain.compile(schema)
    assert constrain.compile(json.loads(json.dumps(schema))) is grammar
    assert constrain.compile(schema, whitespace="compact") is not grammar
    assert constrain.compile(schema, cache=False) is not grammar
    constrain.compile(_schema("other"))  # a third grammar in a cache of two: the first is evicted
    assert constrain.compile(schema) is not grammar


def test_an_evicted_grammar_is_freed_on_the_freeing_thread_with_its_masks(small_cache):
    """A used grammar (automaton built, masks computed) pushed out of the cache is dropped by the
    freeing thread, not by the compile that evicted it, and its masks leave ``MASKS``'s account."""
    grammar = constrain.compile(_schema("evicted"))
    matcher = Matcher(grammar, BYTES)
    for token in b'{"evicted": [12, 3':
        matcher.mask()
        assert matcher.advance(token)
    serial = matcher.index.serial
    held = sum(mask.nbytes for mask in matcher.index._cache.values())
    assert held > 0
    used = MASKS.used
    freed_on = []
    weakref.finalize(grammar, lambda: freed_on.append(threading.current_thread().name))
    gone = weakref.ref(grammar)
    del grammar, matcher
    constrain.compile(_schema("second"))
    constrain.compile(_schema("third"))  # the first one is evicted here
    grammar_module.wait_freed()
    assert gone() is None and freed_on == ["constrain-grammar-freer"]
    assert MASKS.used == used - held
    assert not any(key[0] == serial for key in MASKS._order)


def test_a_compile_frees_what_it_evicts_when_the_freeing_thread_is_behind(small_cache, monkeypatch):
    """With no room left in the freeing queue, the evicting compile drops the grammar itself: memory stays bounded."""
    monkeypatch.setattr(grammar_module, "FREEING_MAX", 0)
    gone = weakref.ref(constrain.compile(_schema("inline")))
    constrain.compile(_schema("second"))
    assert gone() is not None
    constrain.compile(_schema("third"))
    assert gone() is None


def test_automata_cached_per_process_leave_the_collectors_view():
    """The scalar automata kept per process (formats, numbers, patterns, an object's other keys) hold
    their rows as tuples of numbers, which the cyclic collector stops tracking: its full passes, in
    the middle of some token's mask, had walked every cached row (75 ms a pass after MaskBench's sample)."""
    from compiler import chardfa, formats, numbers, regex

    cached = [formats.format_terms("date-time")[0][0], numbers.number_dfa(True, minimum=3, maximum=700),
              regex.pattern_dfa("^[a-z]+-[0-9]{2}$"), chardfa.other_strings(frozenset({"alpha", "beta"}))]
    for _ in range(3):  # a tuple leaves once its items have: a pass may meet the table before its rows
        gc.collect()
    for dfa in cached:
        assert not gc.is_tracked(dfa.edges) and not any(gc.is_tracked(row) for row in dfa.edges)
