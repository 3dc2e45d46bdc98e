"""Instructions a median compile executes, counted by valgrind: a figure this machine's drifting
clock cannot blur (sequential timings of the same code differ by 20% at p50; instruction counts by
about 1%).

    python benchmarks/instructions.py DATA_DIR [--files LIST] --valgrind
    python benchmarks/instructions.py DATA_DIR [--files LIST] --passes N   (the workload alone)

The workload: the schemas whose text length lies between the 30th and 70th percentile of the
list (the median band, chosen by size so that the choice itself is deterministic), each compiled
as ``maskbench.py --text`` does (flexible whitespace, no grammar cache) and its first byte row
built; ``N`` passes over them, ``gc.freeze()`` after the first (the harness's workers freeze once
set up). ``--valgrind`` runs the workload under ``valgrind --tool=callgrind`` with one pass and
with two and prints the difference: the instructions of one warm pass, imports and first-use
caches left out. Run with ``PYTHONHASHSEED=0`` to compare two checkouts (the hash seed moves the
count by about 1%).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def median_band(data_dir: Path, files: Path | None) -> list[Path]:
    names = files.read_text().split() if files else sorted(p.name for p in data_dir.glob("*.json"))
    sized = sorted((len((data_dir / name).read_text(encoding="utf-8")), name) for name in names)
    return [data_dir / name for _, name in sized[int(len(sized) * 0.3):int(len(sized) * 0.7)]]


def workload(paths: list[Path], passes: int) -> int:
    import constrain

    warnings.simplefilter("ignore")
    schemas = [json.loads(p.read_text(encoding="utf-8"))["schema"] for p in paths]
    compiled = 0
    for n in range(passes):
        for schema in schemas:
            try:
                grammar = constrain.compile(schema, whitespace="flexible", cache=False)
            except constrain.SchemaError:
                continue
            grammar.step(grammar.start, ord("{"))
            compiled += n == 0
        if n == 0:
            gc.collect()
            gc.freeze()
    return compiled


def counted(argv: list[str], passes: int) -> int:
    """Instructions of this script's workload with ``passes`` passes, under callgrind."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           __file__, *argv, "--passes", str(passes)], capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"valgrind failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--files", type=Path, help="a list of schema file names (MaskBench's dev-sample.txt)")
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--valgrind", action="store_true", help="count one warm pass under callgrind")
    args = parser.parse_args()
    paths = median_band(args.data_dir, args.files)
    if not args.valgrind:
        compiled = workload(paths, args.passes)
        print(f"{len(paths)} schemas in the median band, {compiled} compiled, {args.passes} passes")
        return 0
    if shutil.which("valgrind") is None:
        raise SystemExit("--valgrind needs valgrind on the PATH")
    argv = [str(args.data_dir)] + (["--files", str(args.files)] if args.files else [])
    one, two = counted(argv, 1), counted(argv, 2)
    seed = os.environ.get("PYTHONHASHSEED", "random")
    print(f"{len(paths)} schemas in the median band: one warm pass {(two - one) / 1e9:.4f} G instructions "
          f"(first pass with imports {one / 1e9:.4f} G; PYTHONHASHSEED={seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
