"""The cyclic collector under MaskBench's token protocol: which token times are its full passes.

    python benchmarks/collector.py DATA_DIR [--files LIST] [--slowest N]

Every schema's instances are walked token by token in this one process, as ``maskbench.py --tokens``
walks constrain's (its engine and tokenizer, ``gc.freeze()`` after their set-up). ``gc.callbacks``
times each collection; per schema it prints the slowest token (mask and advance) beside the
collections during the walk, then how many objects the collector still tracks and what one full
pass costs. A full pass walks every tracked object, so whatever the process keeps (automata cached
per process, the grammar cache's token masks) is paid inside some token's time.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from array import array
from pathlib import Path

import maskbench


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--files", type=Path, help="file of schema file names to run, one per line")
    ap.add_argument("--slowest", type=int, default=10, help="schemas listed, by their slowest token")
    args = ap.parse_args()
    tokens = maskbench.Tokens()
    engine = maskbench.ConstrainEngine(tokens)
    gc.collect()
    gc.freeze()
    passes: list[tuple[int, int]] = []  # (generation, ns) of each collection during a walk
    started = [0]

    def timed(phase, info):
        if phase == "start":
            started[0] = time.perf_counter_ns()
        else:
            passes.append((info["generation"], time.perf_counter_ns() - started[0]))

    gc.callbacks.append(timed)
    rows = []
    for path in maskbench.schema_files(args.data_dir, args.files):
        doc = json.loads(path.read_text(encoding="utf-8"))
        try:
            session, _ = engine.compile(doc["schema"])
        except Exception:  # noqa: BLE001 - refused schemas have no walk
            continue
        passes.clear()
        result = maskbench.check_tokens(session, doc["schema"], doc.get("tests") or [])
        ns = array("q", result["tbm_ns"])
        if ns:
            full = [p for g, p in passes if g == 2]
            rows.append((max(ns), path.name, len(passes), sum(p for _, p in passes), len(full), max(full, default=0)))
    gc.callbacks.remove(timed)
    rows.sort(reverse=True)
    print(f"{len(rows)} schemas walked; slowest token per schema, with the collections during its walk:")
    for worst, name, n, total, n_full, max_full in rows[:args.slowest]:
        print(f"  {worst / 1e6:7.1f} ms  {name}: {n} passes, {total / 1e6:.1f} ms; "
              f"{n_full} full, the longest {max_full / 1e6:.1f} ms")
    t0 = time.perf_counter_ns()
    gc.collect()
    print(f"afterwards: {len(gc.get_objects())} objects tracked, a full pass {(time.perf_counter_ns() - t0) / 1e6:.1f} ms")


if __name__ == "__main__":
    main()
