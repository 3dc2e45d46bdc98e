"""Two ``maskbench.py --json`` runs compared schema by schema (two versions of the code, two options).

    python benchmarks/compare_runs.py OLD.json NEW.json [--engine NAME] [--list N]

A version that compiles more schemas meets more of their instances, so totals alone cannot say
whether it got worse where both worked. This prints each outcome of OLD against NEW (how many
schemas went from one to the other), the validation errors and the compile-time percentiles on the
schemas both runs compiled (the like-for-like figures), and the first ``--list`` schemas whose
outcome, count of failing instances or message changed. ``--engine`` picks one engine of a token
run (default: constrain); a text run has one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

OUTCOMES = ("passing", "compile_error", "validation_error", "invalidation_error", "timeout", "crash")


def load(path: str, engine: str) -> dict[str, dict]:
    """File name -> that schema's result, from a text run or one engine of a token run."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: not a maskbench.py --json file ({exc})") from None
    if isinstance(data, dict) and data.get("mode") == "tokens":
        if engine not in data["engines"]:
            raise SystemExit(f"{path}: no engine {engine!r} (it has {', '.join(data['engines'])})")
        results = data["engines"][engine]["results"]
    elif isinstance(data, dict) and "results" in data:
        results = data["results"]
    else:
        raise SystemExit(f"{path}: not a maskbench.py --json file (no results)")
    return {r["file"]: r for r in results}


def percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return " / ".join(f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.2f}" for q in (0.5, 0.9, 0.99))


def changed(old: dict, new: dict) -> bool:
    return (old["outcome"] != new["outcome"] or len(old["failures"]) != len(new["failures"])
            or old.get("message") != new.get("message"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", help="the --json of the run to compare against")
    ap.add_argument("new", help="the --json of the run to compare")
    ap.add_argument("--engine", default="constrain", help="the engine of a token run to compare (default constrain)")
    ap.add_argument("--list", type=int, default=30, metavar="N", help="schemas that changed to list (default 30)")
    args = ap.parse_args(argv)
    old, new = load(args.old, args.engine), load(args.new, args.engine)
    shared = [f for f in old if f in new]
    if not shared:
        raise SystemExit("the two runs have no schema in common")
    print(f"{len(shared)} schemas in both runs ({len(old) - len(shared)} only in OLD, {len(new) - len(shared)} only in NEW)")

    moves = Counter((old[f]["outcome"], new[f]["outcome"]) for f in shared)
    seen = [o for o in OUTCOMES if any(o in move for move in moves)] + sorted(
        {o for move in moves for o in move} - set(OUTCOMES))
    width = max(len(o) for o in seen) + 2
    print("\nOLD outcome (rows) against NEW (columns)")
    print(" " * width + "".join(f"{o:>{width}}" for o in seen))
    for a in seen:
        print(f"{a:<{width}}" + "".join(f"{moves[a, b]:>{width}}" for b in seen))

    both = [f for f in shared if old[f]["outcome"] != "compile_error" and new[f]["outcome"] != "compile_error"]
    errors = [sum(run[f]["outcome"] == "validation_error" for f in both) for run in (old, new)]
    print(f"\non the {len(both)} schemas both compiled: validation errors {errors[0]} -> {errors[1]}")
    for name, run in (("OLD", old), ("NEW", new)):
        times = [run[f]["compile_ms"] for f in both if run[f].get("compile_ms") is not None]
        print(f"  {name} compile p50 / p90 / p99: {percentiles(times)} ms")

    # what got worse first: passing before and not now, then other changes, then newly passing
    moved = sorted((f for f in shared if changed(old[f], new[f])), key=lambda f: (
        0 if old[f]["outcome"] == "passing" else 2 if new[f]["outcome"] == "passing" else 1))
    print(f"\n{len(moved)} schemas changed, those passing only in OLD first"
          + (f" (the first {args.list}):" if len(moved) > args.list else ":"))
    for f in moved[:args.list]:
        a, b = old[f], new[f]
        print(f"  {f}: {a['outcome']} ({len(a['failures'])} failing) -> {b['outcome']} ({len(b['failures'])} failing)")
        for label, r in (("was", a), ("now", b)):
            if r.get("message") and a.get("message") != b.get("message"):
                print(f"      {label}: {r['message'][:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
