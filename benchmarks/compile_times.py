"""Compile times alone: every schema of a MaskBench folder compiled one after another in one process.

    python benchmarks/compile_times.py DATA_DIR [--files LIST] [--every N] [--property-order any]
    python benchmarks/compile_times.py DATA_DIR [--files LIST] --use [--cache] [--cpu]
    python benchmarks/compile_times.py DATA_DIR [--files LIST] --llguidance [--slowest N]
    python benchmarks/compile_times.py DATA_DIR [--files LIST] --reach
    python benchmarks/compile_times.py DATA_DIR [--files LIST] --every 6 --memory

Each sample is what ``maskbench.py --text`` times (``constrain.compile`` with flexible whitespace
and the first byte row), with nothing run between two compiles: set beside that harness's figure,
which checks every instance in between, it shows how much of a compile p50 is the compiler's own.
Schemas that do not compile are left out, as in the harness's percentiles.

``--use`` then uses each grammar as a server would, after its clock stops: its valid instances are
walked and its first states' rows built (``find_trap``, as the harness's checks do). ``--cache``
compiles with the default grammar cache instead of ``cache=False``: past its size each compile
evicts a used grammar, so ``--use`` with and without ``--cache`` shows what an eviction costs.
``--cpu`` times with the process's CPU clock (all its threads, so freeing on another thread during
a compile still counts) instead of the wall clock: on a machine that others load, it is steadier.

``--llguidance`` times time to first mask (TTFM) for both engines instead, each schema compiled by
constrain and then by llguidance in this one process, as ``maskbench.py --tokens`` does in its
workers (its engines, the Llama 3 tokenizer, ``gc.freeze()`` after their set-up, one thread):
constrain's compile, ``Matcher`` and first token mask; llguidance's grammar, ``LLMatcher`` and first
mask. Each engine's percentiles are over the schemas it compiles.

``--reach`` asks what lowering fragments lazily would save: each compile's time split into its
lowering (per fragment of the work queue, what it builds inside counted with it), ``Program.finish``
(liveness) and the rest, and the share of the lowering spent on fragments that the first mask enters
and that the schema's valid instances enter (by the program states the lazy automaton reached).

``--memory`` reports what a compiled grammar holds instead: each schema compiled once to warm the
process's caches (shared automata, formats), then again under ``tracemalloc``, the grammar kept
alive, the collector run: the bytes still allocated (a grammar whose parts wait to be lowered holds
its lowering too). Mean, p50 and max over the schemas that compile.

Every run also reports the cyclic collector's passes during it (count and time): a compile that
leaves reference cycles behind pays for them there, on some later allocation.

The ``--slowest N`` schemas (default 10) are listed with what drives their cost (``features``):
size, long counted lengths, formats, patterns, ``$ref``s, properties, subschemas, enums, branches.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import constrain  # noqa: E402
from constrain import SchemaError  # noqa: E402

USE_STATES = 500  # rows built per grammar with --use (maskbench.py's trap budget)


def compile_times(paths, property_order: str = "schema", use: bool = False, cache: bool = False,
                  clock=time.perf_counter, engines=None) -> list[tuple[float | None, str, float | None]]:
    """(milliseconds, file name, llguidance's milliseconds) for every schema that compiles, None
    for an engine that refuses it. With ``engines`` (maskbench.py's constrain and llguidance token
    engines) both times are TTFM; without, llguidance's is always None."""
    out = []
    for path in paths:
        case = json.loads(Path(path).read_text(encoding="utf-8"))
        started = clock()
        try:
            if engines:
                session = engines[0].compile(case["schema"])[0]  # kept to free it off the clock
                grammar = session.grammar
            else:
                grammar = constrain.compile(case["schema"], whitespace="flexible", property_order=property_order,
                                            cache=cache)
                grammar.step(grammar.start, ord("{"))
            ms = (clock() - started) * 1e3
        except SchemaError:
            ms = None
        if use and ms is not None:
            for test in case.get("tests", ()):
                if test.get("valid"):
                    grammar.accepts(json.dumps(test.get("data"), ensure_ascii=False))
            grammar.find_trap(USE_STATES)
        session = grammar = None  # without the cache, freed here, off the clock
        peer_ms = None
        if engines:
            started = clock()
            try:
                session = engines[1].compile(case["schema"])
                peer_ms = (clock() - started) * 1e3
            except Exception:  # noqa: BLE001 - llguidance refuses the schema (its compile errors)
                peer_ms = None
            session = None
        if ms is not None or peer_ms is not None:
            out.append((ms, Path(path).name, peer_ms))
    return out


def reach(paths, property_order: str = "schema") -> list[tuple[float, float, float, float, float]]:
    """Per schema that compiles: (compile s, lowering s, finish s, lowering of the fragments the first
    mask enters, lowering of those the valid instances enter). Times the lowering's work queue by
    wrapping ``Lowering.value`` and ``Program.finish`` (instrumentation, off the shipped code)."""
    from automaton.program import Program
    from compiler.lower import Lowering

    spent: dict[int, float] = {}
    finished = [0.0]
    value, finish = Lowering.value, Program.finish

    def timed_value(self, schema, slot, src, dst):
        top = not getattr(self, "_inside", False)
        self._inside, started = True, time.perf_counter()
        try:
            return value(self, schema, slot, src, dst)
        finally:
            if top:
                self._inside = False
                owner = self.prog.owner[src]
                spent[owner] = spent.get(owner, 0.0) + time.perf_counter() - started

    def timed_finish(self, root):
        started = time.perf_counter()
        finish(self, root)
        finished[0] = time.perf_counter() - started

    Lowering.value, Program.finish = timed_value, timed_finish
    out = []
    try:
        for path in paths:
            case = json.loads(Path(path).read_text(encoding="utf-8"))
            spent.clear()
            started = time.perf_counter()
            try:
                # lowered whole (``lazy=False``): the shares are of what an eager compile lowers
                grammar = constrain.compile(case["schema"], whitespace="flexible", property_order=property_order,
                                            cache=False, lazy=False)
            except SchemaError:
                continue
            total = time.perf_counter() - started
            dfa, owner = grammar.automaton, grammar.program.owner

            def entered() -> set[int]:
                return {owner[top] for s in range(dfa.num_states) for top, _ in dfa.tops(s) if top < len(owner)}

            dfa.tops(grammar.start)
            first = entered()
            for test in case.get("tests", ()):
                if test.get("valid"):
                    grammar.accepts(json.dumps(test.get("data"), ensure_ascii=False))
            later = entered()
            out.append((total, sum(spent.values()), finished[0], sum(t for f, t in spent.items() if f in first),
                        sum(t for f, t in spent.items() if f in later)))
    finally:
        Lowering.value, Program.finish = value, finish
    return out


def print_reach(rows: list) -> None:
    if not rows:
        print("no schema compiled")
        return
    rows = sorted(rows)
    n = len(rows)
    for label, part in (("middle half", rows[n // 4: 3 * n // 4]), ("slowest tenth", rows[n - n // 10:]), ("all", rows)):
        if not part:
            continue
        total, lowering, finish, first, later = (sum(r[i] for r in part) for i in range(5))
        print(f"{label} ({len(part)} schemas, compile mean {total / len(part) * 1e3:.1f} ms): lowering "
              f"{lowering / total:.0%}, finish {finish / total:.0%}; of the lowering, fragments the first mask "
              f"enters {first / lowering:.0%}, the valid instances enter {later / lowering:.0%}")


def token_engines(property_order: str):
    """maskbench.py's constrain and llguidance engines over the Llama 3 tokenizer, set up as its
    token-mode workers set them up (single-threaded; their set-up frozen out of the collector's view)."""
    for name in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ["MASKBENCH_PROPERTY_ORDER"] = property_order  # maskbench.compile_options() reads it
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import maskbench

    tokens = maskbench.Tokens()
    engines = maskbench.ConstrainEngine(tokens), maskbench.LLGuidanceEngine(tokens)
    gc.collect()
    gc.freeze()
    return engines


_BOUNDED = re.compile(r"\{\d+(,\d+)?\}")  # {n} or {m,n}
_UNBOUNDED = re.compile(r"(?<!\\)[*+]|\{\d+,\}")  # *, + or {m,}
_DATA = {"enum", "const", "default", "examples", "example"}  # instances, not subschemas
_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}  # name -> subschema


def features(schema) -> Counter:
    """What drives a schema's compile cost, in one walk: subschemas, properties, ``$ref``s,
    anyOf/oneOf/allOf branches, enums and the largest one's size, counted lengths of 1,000 or more
    (``"maxLength 65535"``), formats (``"format hostname"``), patterns (and patternProperties'
    keys) with a bounded ``{m,n}`` and with unbounded repetition."""
    found = Counter()

    def pattern(text: str) -> None:
        found["patterns"] += 1
        found["patterns with {m,n}"] += bool(_BOUNDED.search(text))
        found["patterns with * + {m,}"] += bool(_UNBOUNDED.search(text))

    def walk(node) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if not isinstance(node, dict):
            return
        found["subschemas"] += 1
        for key, value in node.items():
            if key in _DATA:
                if key == "enum" and isinstance(value, list):
                    found["enums"] += 1
                    found["largest enum"] = max(found["largest enum"], len(value))
                continue
            if key in _MAPS and isinstance(value, dict):
                found["properties"] += len(value) if key == "properties" else 0
                for name, sub in value.items():
                    if key == "patternProperties":
                        pattern(name)
                    walk(sub)
                continue
            if key in ("maxLength", "minLength") and isinstance(value, int) and value >= 1000:
                found[f"{key} {value}"] += 1
            elif key == "format" and isinstance(value, str):
                found[f"format {value}"] += 1
            elif key == "pattern" and isinstance(value, str):
                pattern(value)
            elif key == "$ref" and isinstance(value, str):
                found["$ref"] += 1
            elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
                found[f"{key} branches"] += len(value)
            walk(value)

    walk(schema)
    return +found  # without the zero counts


def describe(path: Path) -> str:
    """A schema file's size and ``features``, the counted lengths and formats first."""
    text = path.read_text(encoding="utf-8")
    found = features(json.loads(text)["schema"])
    first = sorted(k for k in found if k.startswith(("maxLength", "minLength", "format ")))
    rest = [k for k in found if k not in first]
    return f"{len(text.encode()) / 1024:.1f} KB; " + ", ".join(f"{k}: {found[k]}" for k in first + rest)


def grammar_memory(paths, property_order: str = "schema") -> list[int]:
    """Bytes each compiled grammar holds, its process's caches warmed first (``--memory``)."""
    import tracemalloc

    sizes = []
    for path in paths:
        schema = json.loads(path.read_text(encoding="utf-8"))["schema"]
        options = {"whitespace": "flexible", "property_order": property_order, "cache": False}
        try:
            constrain.compile(schema, **options)
        except SchemaError:
            continue
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        grammar = constrain.compile(schema, **options)
        gc.collect()
        sizes.append(tracemalloc.get_traced_memory()[0] - before)
        tracemalloc.stop()
        del grammar
    return sizes


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", metavar="DATA_DIR")
    ap.add_argument("--files", metavar="LIST", help="file of schema file names, one per line")
    ap.add_argument("--every", type=int, default=1, metavar="N", help="take every N-th file (default 1)")
    ap.add_argument("--property-order", choices=("schema", "any"), default="schema")
    ap.add_argument("--use", action="store_true", help="walk each grammar's valid instances after its compile")
    ap.add_argument("--cache", action="store_true", help="compile with the default grammar cache (not cache=False)")
    ap.add_argument("--cpu", action="store_true", help="time with the process's CPU clock, not the wall clock")
    ap.add_argument("--llguidance", action="store_true",
                    help="time TTFM (Llama 3 tokenizer) for constrain and llguidance, schema by schema")
    ap.add_argument("--slowest", type=int, default=10, metavar="N", help="list the N slowest schemas (default 10)")
    ap.add_argument("--reach", action="store_true", help="split each compile's time by the fragments a generation enters")
    ap.add_argument("--memory", action="store_true", help="bytes each compiled grammar holds (tracemalloc)")
    args = ap.parse_args(argv)
    if args.llguidance and args.cache:
        ap.error("--llguidance compiles as maskbench.py --tokens does, without the grammar cache")
    data = Path(args.data_dir)
    names = (Path(args.files).read_text().split() if args.files else sorted(p.name for p in data.glob("*.json")))
    warnings.simplefilter("ignore")  # unknown formats warn once per schema
    if args.reach:
        print_reach(reach([data / n for n in names[::args.every]], args.property_order))
        return 0
    if args.memory:
        kb = [b / 1024 for b in grammar_memory([data / n for n in names[::args.every]], args.property_order)]
        print(f"memory per grammar, {len(kb)} schemas compiled: mean {sum(kb) / max(len(kb), 1):.0f} KB  "
              f"p50 {percentile(kb, 50):.0f}  max {max(kb, default=0):.0f}")
        return 0
    engines = token_engines(args.property_order) if args.llguidance else None
    collector = CollectorClock()
    gc.callbacks.append(collector)
    times = compile_times([data / n for n in names[::args.every]], args.property_order, args.use, args.cache,
                          time.process_time if args.cpu else time.perf_counter, engines)
    gc.callbacks.remove(collector)
    ours = [t for t in times if t[0] is not None]
    if not ours:
        print("no schema compiled")
        return 1
    what = "TTFM" if engines else "compile"
    print(f"{len(ours)} schemas compiled (of {len(names[::args.every])}); {what} ms {_summary([t[0] for t in ours])}")
    if engines:
        peer = [t[2] for t in times if t[2] is not None]
        both = [t for t in ours if t[2] is not None]
        print(f"llguidance: {len(peer)} schemas compiled; TTFM ms {_summary(peer)}")
        print(f"the {len(both)} both compile: constrain {_summary([t[0] for t in both])}; "
              f"llguidance {_summary([t[2] for t in both])}; constrain/llguidance per schema: median "
              f"{percentile([t[0] / t[2] for t in both], 50):.3f}")
    print(f"cyclic collector during the run: {collector.runs} collections, {collector.seconds * 1e3:.0f} ms "
          f"({collector.full} of the oldest generation)")
    if args.slowest > 0:
        print(f"the {min(args.slowest, len(ours))} slowest ({what} ms"
              + (", llguidance's" if engines else "") + "; file; size and contents):")
    for t, name, peer_ms in sorted(ours, reverse=True)[:max(args.slowest, 0)]:
        beside = (f" / {peer_ms:6.1f}" if peer_ms is not None else " / refused") if engines else ""
        print(f"  {t:8.1f}{beside} ms  {name}  {describe(data / name)}")
    if engines:
        gc.unfreeze()  # else objects of the set-up outlive the interpreter (nanobind reports them as leaks)
    return 0


class CollectorClock:
    """A ``gc.callbacks`` entry adding up the cyclic collector's passes: what a compile leaves in
    reference cycles is paid there, on some later allocation, inside or outside the clocks."""

    def __init__(self):
        self.runs = self.full = 0
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._started
        self.runs += 1
        self.full += info.get("generation") == 2


def _summary(ms: list[float]) -> str:
    if not ms:
        return "-"
    return (f"p50 {percentile(ms, 50):.2f}  p90 {percentile(ms, 90):.1f}  p99 {percentile(ms, 99):.1f}  "
            f"max {max(ms):.1f}")


if __name__ == "__main__":
    sys.exit(main())
