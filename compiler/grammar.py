"""``compile``: a schema in, a ``Grammar`` out (the byte automaton plus what compiling noticed)."""

from __future__ import annotations

import gc
import json
import threading
from collections import OrderedDict, deque
from contextlib import contextmanager

from automaton.dfa import DEAD, LazyDFA
from automaton.program import Program

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
        return self.is_accepting(self.automaton.walk(data))

    def accepts_prefix(self, text: str | bytes) -> bool:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
        return self.automaton.walk(data) != DEAD

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

    def __getstate__(self):
        return {"program": self.program, "options": self.options, "warnings": self.warnings, "schema": self.schema}

    def __setstate__(self, state):
        self.__init__(state["program"], state["options"], state["warnings"], state["schema"])

    def __repr__(self) -> str:
        return f"<Grammar: {self.program.size} program states, {self.automaton.num_states} automaton states built>"


_CACHE: OrderedDict[str, Grammar] = OrderedDict()
_CACHE_LOCK = threading.Lock()
CACHE_SIZE = 64


_PAUSES = 0
_PAUSES_LOCK = threading.Lock()
_PAUSED_BY_US = False


@contextmanager
def _collector_paused():
    """Pause the cyclic garbage collector while compiling (process-wide, nested across threads).

    A large schema builds hundreds of thousands of small lists and tuples that all live until the
    program is finished; the collector would rescan them again and again, which was 30 to 55% of
    the compile time of MaskBench's slowest schemas. A collector the caller switched off stays off.
    """
    global _PAUSES, _PAUSED_BY_US
    with _PAUSES_LOCK:
        if _PAUSES == 0:
            _PAUSED_BY_US = gc.isenabled()
            gc.disable()
        _PAUSES += 1
    try:
        yield
    finally:
        with _PAUSES_LOCK:
            _PAUSES -= 1
            if _PAUSES == 0 and _PAUSED_BY_US:
                gc.enable()


def compile(schema, *, whitespace: str = "bounded", strict: bool = False, property_order: str = "schema",
            cache: bool = True, **limits) -> Grammar:
    """Compile a JSON Schema (dict, bool, JSON text or pydantic model class) into a ``Grammar``.

    Compiling the same schema with the same options twice returns the same grammar, whose lazily
    built automaton (and the token masks hung on it) is then shared; ``cache=False`` compiles anew.
    ``property_order="any"`` accepts the named properties of an object in any order (each once),
    for objects of at most ``ANY_ORDER_MAX`` of them; larger ones keep the schema's order.
    """
    options = Options(whitespace=whitespace, strict=strict, property_order=property_order, **limits)
    root = load_schema(schema)
    key = None
    if cache:
        try:
            key = json.dumps([root, repr(options)], sort_keys=False)
        except (TypeError, ValueError, RecursionError):
            key = None
    if key is not None:
        with _CACHE_LOCK:
            hit = _CACHE.get(key)
            if hit is not None:
                _CACHE.move_to_end(key)
                return hit
    with _collector_paused():
        lowering = Lowering(SchemaDocument(root), options)
        program = lowering.compile()
        grammar = Grammar(program, options, lowering.warnings, root)
    if key is not None:
        with _CACHE_LOCK:
            _CACHE[key] = grammar
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
    return grammar


__all__ = ["Grammar", "compile", "InvalidSchema"]
