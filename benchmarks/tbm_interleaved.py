"""Two checkouts of constrain compared on MaskBench's token protocol, schema by schema, interleaved.

One worker process per checkout; each schema is run by one worker and then by the other (the order
alternating), one at a time, so both meet the same phase of a machine whose speed drifts by about
1.5x over seconds to minutes. Two such passes, with the workers started in one order and then the
other. Prints each side's steps' total, steps over 1 and 2 ms and p99; then time to first mask
(TTFM): each schema's fastest of the passes per side, their percentiles, and the median over schemas
of new/old. That median is the figure to read: run against itself (two checkouts of one commit) it
reads 0.99-1.00 while single schemas still scatter by +-25% and sequential runs' p50 by 20%.

    python benchmarks/tbm_interleaved.py OLD_CHECKOUT NEW_CHECKOUT DATA_DIR --files LIST [--every 2 --start 0]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
from array import array

import numpy as np


def serve(root: str, data_dir: str) -> None:
    """Worker: read schema file names on stdin, answer each with its token steps (ns) pickled."""
    sys.path[:0] = [root, os.path.join(root, "benchmarks")]
    import gc
    import warnings

    import maskbench

    warnings.simplefilter("ignore")
    engine = maskbench.ConstrainEngine(maskbench.Tokens())
    gc.collect()
    gc.freeze()  # as the harness's workers do once set up
    out = sys.stdout.buffer
    for line in sys.stdin:
        with open(os.path.join(data_dir, line.strip())) as f:
            case = json.load(f)
        try:
            session, phases = maskbench.compile_tokens(engine, case["schema"])
            ttfm = sum(phases.values())
            steps = array("q", maskbench.check_tokens(session, case["schema"], case["tests"])["tbm_ns"]).tolist()
            steps.append(ttfm)  # the last entry: time to first mask
        except Exception:  # noqa: BLE001 - a compile error or a crash: no steps to compare
            steps = None
        session = None
        data = pickle.dumps(steps)
        out.write(len(data).to_bytes(8, "little") + data)
        out.flush()


def _one_pass(roots, files, args) -> list[dict[str, list[int]]]:
    """One worker per checkout of ``roots``, started in that order; each schema run by one and
    then the other (the order alternating): per worker, each schema's token steps (ns)."""
    workers = [subprocess.Popen([sys.executable, os.path.abspath(__file__), root, "-", args.data_dir, "--files",
                                 args.files, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
               for root in roots]
    steps: list[dict[str, list[int]]] = [{}, {}]
    for i, name in enumerate(files):
        for side in ((0, 1) if i % 2 == 0 else (1, 0)):
            worker = workers[side]
            worker.stdin.write((name + "\n").encode())
            worker.stdin.flush()
            size = worker.stdout.read(8)
            if len(size) < 8:  # the worker died (its error is above): a checkout that does not run
                raise SystemExit(f"the worker for {roots[side]} stopped at {name}")
            found = pickle.loads(worker.stdout.read(int.from_bytes(size, "little")))
            if found is not None:
                steps[side][name] = found
    for worker in workers:
        worker.stdin.close()
        worker.wait()
    return steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("data_dir")
    ap.add_argument("--files", required=True, help="file of schema file names, one per line")
    ap.add_argument("--every", type=int, default=1, help="take every N-th file (default all)")
    ap.add_argument("--start", type=int, default=0, help="the first file taken (with --every)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # worker: OLD is its checkout
    args = ap.parse_args(argv)
    if args.serve:
        serve(os.path.abspath(args.old), args.data_dir)
        return 0
    if args.every < 1:
        ap.error("--every must be at least 1")
    for root in (args.old, args.new):  # else the worker would import this checkout's modules instead
        if not os.path.isfile(os.path.join(root, "benchmarks", "maskbench.py")):
            ap.error(f"{root} is not a checkout of constrain (no benchmarks/maskbench.py)")
    with open(args.files) as f:
        files = [line.strip() for line in f if line.strip()][args.start::args.every]
    roots = (args.old, args.new)
    steps: list[dict[str, list[int]]] = [{}, {}]
    ttfm: list[dict[str, int]] = [{}, {}]  # each schema's fastest TTFM over the passes
    # two passes, each checkout once in each worker's place: the worker started second has run
    # 5-7% slower than the first (15% more steps over 1 ms) with the same code on both sides
    for sides in ((0, 1), (1, 0)):
        found = _one_pass([roots[side] for side in sides], files, args)
        for side, got in zip(sides, found):
            for name, ns in got.items():
                steps[side].setdefault(name, []).extend(ns[:-1])
                ttfm[side][name] = min(ttfm[side].get(name, ns[-1]), ns[-1])
    both = sorted(set(steps[0]) & set(steps[1]))
    for label, side in (("old", steps[0]), ("new", steps[1])):
        ms = np.concatenate([np.array(side[name], dtype=np.float64) for name in both]) / 1e6
        print(f"{label}: {len(both)} schemas, {len(ms)} steps, total {ms.sum() / 1e3:.2f} s, "
              f"over 1 ms {int((ms > 1).sum())}, over 2 ms {int((ms > 2).sum())}, p99 {np.percentile(ms, 99):.2f} ms")
    for label, side in (("old", ttfm[0]), ("new", ttfm[1])):
        ms = np.array([side[name] for name in both], dtype=np.float64) / 1e6
        print(f"{label} TTFM, fastest of the passes: p50 {np.percentile(ms, 50):.2f}, p90 {np.percentile(ms, 90):.1f}, "
              f"p99 {np.percentile(ms, 99):.1f} ms, total {ms.sum() / 1e3:.2f} s")
    ratios = np.array([ttfm[1][name] / ttfm[0][name] for name in both])
    print(f"TTFM new/old per schema: median {np.median(ratios):.3f} (p10 {np.percentile(ratios, 10):.2f}, "
          f"p90 {np.percentile(ratios, 90):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
