"""``compile``: a schema in, a ``Grammar`` out (the byte automaton plus what compiling noticed)."""

from __future__ import annotations

import json
import os
import queue
import threading
from collections import OrderedDict, deque

from automaton.collector import collector_paused
from automaton import keys
from automaton.dfa import DEAD, LazyDFA
from automaton.program import STAND_IN, Program

from .errors import InvalidSchema
from .load import load_schema
from .lower import Lowering, Options
from .refs import SchemaDocument


class Grammar:
    """A compiled schema: a deterministic byte automaton, built lazily, shared by every matcher."""

    def __init__(self, program: Program, options: Options, warnings: list[str], schema):
        self.program = program
        self.options = options
        self.warnings = list(warnings)
        self.schema = schema
        self.automaton = LazyDFA(program)

    # byte-step API --------------------------------------------------------------------------------
    @property
    def start(self) -> int:
        return self.automaton.start

    def step(self, state: int, byte: int) -> int:
        return self.automaton.step(state, byte)

    def is_accepting(self, state: int) -> bool:
        return state != DEAD and self.automaton.is_accepting(state)

    def accepts(self, text: str | bytes) -> bool:
        """Whether ``text`` is a complete document valid against the schema (in canonical shape)."""
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        return self.is_accepting(self.automaton.walk(data)) and not self._repeats(data)

    def accepts_prefix(self, text: str | bytes) -> bool:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        return self.automaton.walk(data) != DEAD and not self._repeats(data)

    def _repeats(self, data: bytes) -> bool:
        """Whether ``data`` writes a key twice where the grammar counts members or asks for a
        witness among free keys, or a string twice in a uniqueItems array (what a matcher never
        writes, ``automaton/keys.py``); ``data`` is walked by the automaton already."""
        return self.program.distinct_strings and keys.walk(
            keys.START, data, unique_at=keys.unique_opener(self.automaton, self.start, data)) is keys.REPEATED

    def find_trap(self, budget: int = 10_000) -> tuple[int, bytes] | None:
        """A reachable state from which no accepting state can be reached, with a path to it.

        Explores up to ``budget`` states breadth first; states left unexplored at the frontier are
        not judged. ``None`` means no trap among the explored states.
        """
        dfa = self.automaton
        paths: dict[int, bytes] = {dfa.start: b""}
        order = deque([dfa.start])
        succ: dict[int, set[int]] = {}
        while order and len(succ) < budget:
            s = order.popleft()
            nexts = set()
            for b, t in enumerate(dfa.row(s)):
                if t == DEAD:
                    continue
                nexts.add(t)
                if t not in paths:
                    paths[t] = paths[s] + bytes([b])
                    order.append(t)
            succ[s] = nexts
        good = {s for s in paths if dfa.is_accepting(s)} | set(order)  # the frontier: not judged
        preds: dict[int, list[int]] = {}
        for s, ts in succ.items():
            for t in ts:
                preds.setdefault(t, []).append(s)
        todo = list(good)
        while todo:
            for p in preds.get(todo.pop(), ()):
                if p not in good:
                    good.add(p)
                    todo.append(p)
        for s in succ:
            if s not in good:
                return s, paths[s]
        return None

    def worn(self) -> bool:
        """Whether the automaton built so far holds over ``1 / RENEW_SHARE`` of its bound: a
        cached grammar that is compiled anew for the next caller, before sequences start ending at
        the bound (sets of names written in any order, made as generations reach them, can grow
        without end over thousands of requests)."""
        return self.automaton.num_states * RENEW_SHARE > self.automaton.max_states

    def __getstate__(self):
        with self.automaton._lock:
            if STAND_IN in self.program.waiting.values():  # sets of names written: 2**n may wait
                return {"program": None, "options": self.options, "schema": self.schema}
            self.program.expand_all()  # a pickled grammar is whole: nothing left to lower later
        return {"program": self.program, "options": self.options, "warnings": self.warnings, "schema": self.schema}

    def __setstate__(self, state):
        if state["program"] is None:  # lowered again where it lands
            state = {**state, **dict(zip(("program", "warnings"), lowered(state["schema"], state["options"])))}
        self.__init__(state["program"], state["options"], state["warnings"], state["schema"])

    def __repr__(self) -> str:
        return f"<Grammar: {self.program.size} program states, {self.automaton.num_states} automaton states built>"


RENEW_SHARE = 2  # (``Grammar.worn``)
_CACHE: OrderedDict[str, Grammar] = OrderedDict()
_CACHE_LOCK = threading.Lock()
CACHE_SIZE = 64
FREEING_MAX = 8  # evicted grammars waiting to be freed, past which the evicting compile frees its own


_freeing: queue.SimpleQueue = queue.SimpleQueue()
_freer: threading.Thread | None = None
_freer_lock = threading.Lock()


def _free_later(evicted: list[Grammar]) -> None:
    """Hand evicted grammars to a daemon thread that drops them, off the compile's path.

    A used grammar is its automaton, rows and token masks: up to hundreds of thousands of objects,
    long untouched when the cache evicts it, so freeing them in the compile that evicts made
    MaskBench's compile p50 a third higher. Their refcounts reach zero on that thread (the token
    indexes' finalizers, which settle ``MASKS``, run there too). When it is ``FREEING_MAX``
    grammars behind, those left in ``evicted`` are freed by the caller: memory stays bounded.
    """
    _start_freer()
    while evicted and _freeing.qsize() < FREEING_MAX:
        _freeing.put(evicted.pop())  # straight from the list into the queue: no reference left here


def wait_freed() -> None:
    """Return once every grammar handed to the freeing thread so far is dropped (for tests)."""
    done = threading.Event()
    _start_freer()
    _freeing.put(done)  # first in, first out: set once everything before it is dropped
    done.wait()


def _start_freer() -> None:
    global _freer
    with _freer_lock:
        if _freer is None or not _freer.is_alive():  # not started yet, or this is a forked child
            _freer = threading.Thread(target=_free_forever, name="constrain-grammar-freer", daemon=True)
            _freer.start()


def _free_forever() -> None:
    while True:
        item = _freeing.get()
        if isinstance(item, threading.Event):  # ``wait_freed``'s marker
            item.set()
        del item  # the last reference to an evicted grammar, in the usual case: it is freed here


def _reset_freer_lock() -> None:
    """A forked child gets a fresh lock: another thread may have held it at the fork."""
    global _freer_lock
    _freer_lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_freer_lock)


def compile(schema, *, whitespace: str = "bounded", strict: bool = False, property_order: str = "schema",
            cache: bool = True, resources=None, **limits) -> Grammar:
    """Compile a JSON Schema (dict, bool, JSON text or pydantic model class) into a ``Grammar``.

    ``resources`` maps absolute URIs to the schemas a ``$ref`` may reach outside this one (other
    files of a multi-file schema); nothing is ever fetched.

    Compiling the same schema with the same options twice returns the same grammar, whose lazily
    built automaton (and the token masks hung on it) is then shared, until it has grown past half
    its bound (``Grammar.worn``); ``cache=False`` compiles anew.
    ``property_order="any"`` accepts the named properties of an object in any order (each once),
    for objects of at most ``LAZY_ORDER_MAX`` of them (``any_order.py`` says which keep the schema's order).
    """
    options = Options(whitespace=whitespace, strict=strict, property_order=property_order, **limits)
    root = load_schema(schema, resources)
    key = None
    if cache:
        try:
            key = json.dumps([root, repr(options)], sort_keys=False)
        except (TypeError, ValueError, RecursionError):
            key = None
    if key is not None:
        with _CACHE_LOCK:
            hit = _CACHE.get(key)
            if hit is not None and hit.worn():  # compiled anew; whoever holds it keeps it
                del _CACHE[key]
            elif hit is not None:
                _CACHE.move_to_end(key)
                return hit
    with collector_paused():
        program, warnings = lowered(root, options)
        grammar = Grammar(program, options, warnings, root)
    if key is not None:
        with _CACHE_LOCK:
            _CACHE[key] = grammar
            evicted = [_CACHE.popitem(last=False)[1] for _ in range(len(_CACHE) - CACHE_SIZE)]
        if evicted:
            _free_later(evicted)
    return grammar


def lowered(root, options: Options) -> tuple[Program, list[str]]:
    """The program of a loaded schema and the warnings lowering it gave."""
    lowering = Lowering(SchemaDocument(root), options)  # (which reads the document first: ``build``)
    return lowering.compile(), lowering.warnings


__all__ = ["Grammar", "compile", "InvalidSchema"]
