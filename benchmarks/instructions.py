"""Instructions a median compile executes, counted by valgrind: a figure this machine's drifting
clock cannot blur (sequential timings of the same code differ by 20% at p50; instruction counts by
about 1%).

    python benchmarks/instructions.py DATA_DIR [--files LIST] [--tokens] --valgrind
    python benchmarks/instructions.py DATA_DIR [--files LIST] [--tokens] [--band]   (the workload alone)
    python benchmarks/instructions.py DATA_DIR [--files LIST] --calls OUT.json [--against OLD.json]

The workload: the schemas whose text length lies between the 30th and 70th percentile of the
list (the median band, chosen by size so that the choice itself is deterministic), each compiled
once as ``maskbench.py --text`` does (flexible whitespace, no grammar cache) and its first byte row
built, or (``--tokens``) on to its first mask as ``maskbench.py --tokens`` does (the Llama 3
vocabulary, from llama.cpp's file; ``Matcher`` and first mask). Before them the process compiles the schemas below the 30th
percentile, then ``gc.freeze()`` (the harness's workers freeze once set up): what a process caches
for any schema (the prelude, formats) is warm, what it caches per schema (an object's other keys,
a literal's spellings) is not, as in the harness, where every schema is new. ``--valgrind`` runs the
workload under ``valgrind --tool=callgrind`` without the band and with it and prints the difference.
Run with ``PYTHONHASHSEED=0`` to compare two checkouts (the hash seed moves the count by about 1%).
``--calls`` counts each band schema's Python function calls instead (cProfile, exact and quick): run
it in each checkout and hand the first one's file to the second with ``--against`` to see which
schemas a change made costlier.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def bands(data_dir: Path, files: Path | None) -> tuple[list[Path], list[Path]]:
    """The schemas below the 30th percentile of text length (the warm-up) and the median band."""
    names = files.read_text().split() if files else sorted(p.name for p in data_dir.glob("*.json"))
    sized = [data_dir / name for _, name in sorted((len((data_dir / name).read_text(encoding="utf-8")), name)
                                                   for name in names)]
    return sized[:int(len(sized) * 0.3)], sized[int(len(sized) * 0.3):int(len(sized) * 0.7)]


def workload(warm: list[Path], band: list[Path], tokens: bool, calls: dict | None = None) -> int:
    """Compile ``warm``, freeze, then each of ``band`` once; the band's schemas compiled. ``calls``:
    filled with each band schema's Python function calls (cProfile), by file name."""
    import constrain

    warnings.simplefilter("ignore")
    vocab = None
    if tokens:  # Llama 3's tokens read from llama.cpp's file (transformers' import is minutes under valgrind)
        from automaton.matcher import Matcher
        from automaton.vocab import Vocabulary
        from constrain import vocab_files

        vocab = Vocabulary.from_gguf(vocab_files.llama_cpp_vocab("llama-bpe"))

    def first(schema):
        grammar = constrain.compile(schema, whitespace="flexible", cache=False)
        if vocab is None:
            grammar.step(grammar.start, ord("{"))
        else:
            Matcher(grammar, vocab).mask()
    compiled = 0
    for n, paths in enumerate((warm, band)):
        for path in paths:
            schema = json.loads(path.read_text(encoding="utf-8"))["schema"]
            profile = cProfile.Profile() if n and calls is not None else None
            if profile is not None:
                profile.enable()
            try:
                first(schema)
                compiled += n
            except constrain.SchemaError:
                pass
            if profile is not None:
                profile.disable()
                calls[path.name] = pstats.Stats(profile).total_calls
        if n == 0:
            gc.collect()
            gc.freeze()
    return compiled


def counted(argv: list[str]) -> int:
    """Instructions of this script's workload, under callgrind."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           __file__, *argv], capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"valgrind failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--files", type=Path, help="a list of schema file names (MaskBench's dev-sample.txt)")
    parser.add_argument("--tokens", action="store_true", help="time to first mask (Llama 3), not the first byte row")
    parser.add_argument("--band", action="store_true", help="the workload with the band (without: the warm-up alone)")
    parser.add_argument("--valgrind", action="store_true", help="count the band's instructions under callgrind")
    parser.add_argument("--calls", type=Path, metavar="OUT",
                        help="count each band schema's Python calls (cProfile) and write them to OUT as JSON")
    parser.add_argument("--against", type=Path, metavar="OLD",
                        help="with --calls: compare with another checkout's OUT (total, median ratio, largest rises)")
    args = parser.parse_args()
    warm, band = bands(args.data_dir, args.files)
    if args.calls:
        calls: dict[str, int] = {}
        workload(warm, band, args.tokens, calls)
        args.calls.write_text(json.dumps(calls, indent=0, sort_keys=True))
        print(f"{len(band)} schemas in the median band: {sum(calls.values()):,} Python calls")
        if args.against:
            old = json.loads(args.against.read_text())
            both = sorted(set(old) & set(calls))
            ratios = sorted(calls[k] / old[k] for k in both)
            print(f"against {args.against}: total {sum(old[k] for k in both):,} -> {sum(calls[k] for k in both):,}, "
                  f"per schema median ratio {ratios[len(ratios) // 2]:.3f}; largest rises:")
            for k in sorted(both, key=lambda k: calls[k] - old[k])[-5:]:
                print(f"  {k}: {old[k]:,} -> {calls[k]:,}")
        return 0
    if not args.valgrind:
        compiled = workload(warm, band if args.band else [], args.tokens)
        print(f"{len(band)} schemas in the median band, {compiled} compiled after {len(warm)} warming up")
        return 0
    if shutil.which("valgrind") is None:
        raise SystemExit("--valgrind needs valgrind on the PATH")
    argv = [str(args.data_dir)] + (["--files", str(args.files)] if args.files else []) + (
        ["--tokens"] if args.tokens else [])
    without, with_band = counted(argv), counted(argv + ["--band"])
    seed = os.environ.get("PYTHONHASHSEED", "random")
    print(f"{len(band)} schemas in the median band, each new to the process: {(with_band - without) / 1e9:.4f} G "
          f"instructions{' to the first mask' if args.tokens else ''} (the warm-up of {len(warm)} before them "
          f"{without / 1e9:.4f} G; PYTHONHASHSEED={seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
