"""Compile times alone: every schema of a MaskBench folder compiled one after another in one process.

    python benchmarks/compile_times.py DATA_DIR [--files LIST] [--every N] [--property-order any]
    python benchmarks/compile_times.py DATA_DIR [--files LIST] --use [--cache] [--cpu]

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
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import constrain  # noqa: E402
from constrain import SchemaError  # noqa: E402

USE_STATES = 500  # rows built per grammar with --use (maskbench.py's trap budget)


def compile_times(paths, property_order: str = "schema", use: bool = False, cache: bool = False,
                  clock=time.perf_counter) -> list[tuple[float, str]]:
    """(milliseconds, file name) for every schema that compiles."""
    out = []
    for path in paths:
        case = json.loads(Path(path).read_text(encoding="utf-8"))
        started = clock()
        try:
            grammar = constrain.compile(case["schema"], whitespace="flexible", property_order=property_order,
                                        cache=cache)
            grammar.step(grammar.start, ord("{"))
        except SchemaError:
            continue
        out.append(((clock() - started) * 1e3, Path(path).name))
        if use:
            for test in case.get("tests", ()):
                if test.get("valid"):
                    grammar.accepts(json.dumps(test.get("data"), ensure_ascii=False))
            grammar.find_trap(USE_STATES)
        del grammar  # without the cache, freed here, off the clock
    return out


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
    args = ap.parse_args(argv)
    data = Path(args.data_dir)
    names = (Path(args.files).read_text().split() if args.files else sorted(p.name for p in data.glob("*.json")))
    warnings.simplefilter("ignore")  # unknown formats warn once per schema
    times = compile_times([data / n for n in names[::args.every]], args.property_order, args.use, args.cache,
                          time.process_time if args.cpu else time.perf_counter)
    if not times:
        print("no schema compiled")
        return 1
    ms = [t for t, _ in times]
    print(f"{len(times)} schemas compiled (of {len(names[::args.every])}); compile ms p50 {percentile(ms, 50):.1f}  "
          f"p90 {percentile(ms, 90):.1f}  p99 {percentile(ms, 99):.1f}  max {max(ms):.1f}")
    for t, name in sorted(times)[-5:]:
        print(f"  {t:8.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
