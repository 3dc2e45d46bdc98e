"""MaskBench runner: compile each schema of the benchmark and check its test instances.

    python benchmarks/maskbench.py --text DATA_DIR [--files LIST] [--limit N] [--timeout S] [--json OUT]

DATA_DIR holds MaskBench files (``{"schema": ..., "tests": [{"valid": ..., "data": ...}]}``, see
``../shared/maskbench/README.md``); LIST names the files to run, one per line (default: every
``*.json`` of DATA_DIR, sorted); ``--limit`` keeps the first N.

Modes. ``--text`` (the only mode so far) checks bytes: each schema is compiled with whitespace
"flexible", and each instance's ``json.dumps(data, ensure_ascii=False)`` (MaskBench's text, with
its ", " and ": " separators) is walked through the automaton. We require the *complete* text to be
accepted, which is stricter than MaskBench (which never checks the end state); an invalid instance
whose whole text is a live prefix is rejected by us but would count as accepted by MaskBench, so
such cases are counted apart ("MaskBench-protocol invalidation errors"). A ``--tokens`` mode (the
token protocol with the Llama 3 tokenizer, issue 3) is meant to plug in as another check function
beside ``check_text``.

Each schema runs in a worker process (reused across schemas; killed and restarted when a compile
runs past ``--timeout`` seconds, or the checks past the same limit again). Per schema we also run
``Grammar.find_trap(500)``: a reachable state that cannot reach acceptance is a trap.

Outcome per schema, first that applies: time-out (the worker killed, or the compiler's own
deadline hit), crash (an exception that is not a ``SchemaError``, or the worker died), compile
error (a ``SchemaError``), invalidation error (an invalid instance accepted), validation error (a
valid instance refused), passing. A refused valid instance that is accepted with its object keys
reordered (the schema's order at each place, or a few permutations) is marked "key order only":
our canonical shape fixes the key order (DESIGN §3), MaskBench's instances do not always follow it.
Compile time is ``constrain.compile`` plus the first byte row of the lazy automaton.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
import traceback
import warnings
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

try:
    import constrain
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import constrain

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance import key_order_variants  # noqa: E402  (the sibling script's key-order check)

OUTCOMES = ("passing", "compile_error", "validation_error", "invalidation_error", "timeout", "crash")
TRAP_BUDGET = 500
TEXT_LIMIT = 200
SHAPE_TRIES = 50  # other key orders tried on a refused valid instance


def instance_text(data) -> str:
    return json.dumps(data, ensure_ascii=False)


def _short(text: str, n: int = TEXT_LIMIT) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


# -- the worker side ----------------------------------------------------------------------------
def _dies_at(grammar, data: bytes) -> int | None:
    """Offset of the first byte the automaton refuses, or None when the whole text is a live prefix."""
    state = grammar.start
    for i, b in enumerate(data):
        state = grammar.step(state, b)
        if state < 0:
            return i
    return None


def check_text(grammar, schema, tests: list) -> dict:
    """Walk every test instance's text; list the instances the grammar judges wrongly (a refused
    valid instance that is accepted with its keys in another order is marked ``shape``)."""
    failures = []
    prefix_accepts = []  # invalid, refused only because the text is incomplete
    for index, test in enumerate(tests):
        valid = bool(test.get("valid"))
        text = instance_text(test.get("data"))
        data = text.encode("utf-8", "surrogatepass")
        accepted = grammar.accepts(data)
        if accepted == valid:
            if not valid and _dies_at(grammar, data) is None:
                prefix_accepts.append({"index": index, "text": _short(text)})
            continue
        at = _dies_at(grammar, data) if valid else None
        # the variants are compact texts: whitespace is flexible, so only their key order differs
        shape = valid and any(grammar.accepts(v) for v in key_order_variants(test.get("data"), schema, SHAPE_TRIES))
        failures.append({"index": index, "valid": valid, "text": _short(text), "dies_at": at, "shape": shape,
                         "context": None if at is None else (data[max(0, at - 40): at] + b"\xe2\x96\xae"  # ▮ marks the byte
                                                             + data[at: at + 20]).decode("utf-8", "replace")})
    return {"tests": len(tests), "failures": failures, "prefix_accepts": prefix_accepts}


CHECKS = {"text": check_text}


def _compile_failure(exc: BaseException) -> dict:
    if isinstance(exc, constrain.SchemaTooComplex) and str(getattr(exc, "what", "")).startswith("compiling took over"):
        kind = "timeout"
    elif isinstance(exc, constrain.SchemaError):
        kind = "compile_error"
    else:
        kind = "crash"
    info = {"kind": kind, "error": type(exc).__name__, "message": str(exc)[:500]}
    if isinstance(exc, constrain.UnsupportedKeyword):
        info["keyword"] = exc.keyword
    if kind == "crash":
        info["where"] = _innermost(exc)
    return info


def _innermost(exc: BaseException) -> str:
    """Where an unexpected exception was raised: the innermost frame, as ``file:line in function``."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f"{Path(f.filename).name}:{f.lineno} in {f.name}"


def _worker(conn, memory_mb: int) -> None:
    """Serve jobs ``(mode, path)``: send ("compiled", info), then ("checked", info) if it compiled."""
    warnings.simplefilter("ignore")  # unknown formats warn; the grammar's warnings are counted instead
    if memory_mb:
        try:
            import resource

            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):
            pass
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        mode, path = job
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            schema, tests = doc["schema"], doc.get("tests") or []
        except Exception as exc:
            conn.send(("compiled", {"kind": "crash", "error": type(exc).__name__, "message": f"unreadable file: {exc}"}))
            continue
        started = time.perf_counter()
        try:
            grammar = constrain.compile(schema, whitespace="flexible")
            grammar.step(grammar.start, ord("{"))  # the first byte row: the lazy automaton's first real work
        except BaseException as exc:  # noqa: BLE001 - reported, never hidden
            info = _compile_failure(exc)
            info["compile_ms"] = (time.perf_counter() - started) * 1000
            conn.send(("compiled", info))
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            continue
        conn.send(("compiled", {"kind": "ok", "compile_ms": (time.perf_counter() - started) * 1000,
                                "warnings": len(grammar.warnings)}))
        started = time.perf_counter()
        try:
            result = CHECKS[mode](grammar, schema, tests)
            trap = grammar.find_trap(TRAP_BUDGET)
            result["trap"] = None if trap is None else {"state": trap[0], "path": _short(trap[1].decode("utf-8", "replace"))}
            result["kind"] = "ok"
        except BaseException as exc:  # noqa: BLE001
            result = {"kind": "crash", "error": type(exc).__name__, "message": f"while checking: {exc}"[:500],
                      "where": _innermost(exc)}
        result["check_ms"] = (time.perf_counter() - started) * 1000
        conn.send(("checked", result))


class Worker:
    """A reusable worker process; restarted after a time-out or a death."""

    def __init__(self, memory_mb: int):
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.memory_mb = memory_mb
        self.process = None
        self.conn = None

    def _start(self):
        parent, child = self.ctx.Pipe()
        self.process = self.ctx.Process(target=_worker, args=(child, self.memory_mb), daemon=True)
        self.process.start()
        child.close()
        self.conn = parent

    def stop(self):
        if self.process is None:
            return
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()
        self.process = self.conn = None

    def close(self):
        if self.process is not None and self.process.is_alive():
            try:
                self.conn.send(None)
                self.process.join(5)
            except (OSError, BrokenPipeError):
                pass
        self.stop()

    def send(self, job):
        if self.process is None or not self.process.is_alive():
            self.stop()
            self._start()
        self.conn.send(job)

    def receive(self, timeout: float):
        """The next message, or "timeout" / "died" (the worker is then stopped)."""
        try:
            if self.conn.poll(timeout):
                return self.conn.recv()
            self.stop()
            return ("timeout", None)
        except (EOFError, OSError):
            code = self.process.exitcode if self.process is not None else None
            self.stop()
            return ("died", code)


# -- the parent side ----------------------------------------------------------------------------
@dataclass
class SchemaResult:
    file: str
    outcome: str
    tests: int = 0
    compile_ms: float | None = None
    check_ms: float | None = None
    error: str | None = None
    keyword: str | None = None
    message: str | None = None
    where: str | None = None  # innermost frame of a crash
    failures: list = field(default_factory=list)
    prefix_accepts: list = field(default_factory=list)
    trap: dict | None = None


def run_schema(worker: Worker, path: Path, mode: str, timeout: float) -> SchemaResult:
    res = SchemaResult(path.name, "crash")
    worker.send((mode, str(path)))
    tag, info = worker.receive(timeout)
    if tag == "timeout":
        res.outcome, res.message = "timeout", f"compile over {timeout} s (worker killed)"
        return res
    if tag == "died":
        res.message = f"worker died while compiling (exit code {info})"
        return res
    res.compile_ms = info.get("compile_ms")
    if info["kind"] != "ok":
        res.outcome = info["kind"]
        res.error, res.keyword, res.message = info.get("error"), info.get("keyword"), info.get("message")
        res.where = info.get("where")
        return res
    tag, info = worker.receive(timeout)
    if tag == "timeout":
        res.outcome, res.message = "timeout", f"checks over {timeout} s (worker killed)"
        return res
    if tag == "died":
        res.message = f"worker died while checking (exit code {info})"
        return res
    res.check_ms = info.get("check_ms")
    if info["kind"] != "ok":
        res.error, res.message, res.where = info.get("error"), info.get("message"), info.get("where")
        return res
    res.tests, res.failures, res.prefix_accepts, res.trap = (info["tests"], info["failures"], info["prefix_accepts"],
                                                             info["trap"])
    if any(not f["valid"] for f in res.failures):
        res.outcome = "invalidation_error"
    elif res.failures:
        res.outcome = "validation_error"
    else:
        res.outcome = "passing"
    return res


def schema_files(data_dir: Path, files: Path | None = None, limit: int | None = None) -> list[Path]:
    data_dir = Path(data_dir)
    if files is not None:
        names = [line.strip() for line in Path(files).read_text(encoding="utf-8").splitlines()]
        paths = [data_dir / n for n in names if n and not n.startswith("#")]
    else:
        paths = sorted(data_dir.glob("*.json"))
    return paths[:limit] if limit is not None else paths


def run(data_dir, files=None, *, limit=None, timeout: float = 20.0, mode: str = "text", memory_mb: int = 4096,
        progress=None) -> list[SchemaResult]:
    """Run every selected schema in a worker process; ``progress(i, n, result)`` after each."""
    paths = schema_files(data_dir, files, limit)
    worker = Worker(memory_mb)
    results = []
    try:
        for i, path in enumerate(paths):
            result = run_schema(worker, path, mode, timeout)
            results.append(result)
            if progress:
                progress(i + 1, len(paths), result)
    finally:
        worker.close()
    return results


# -- reporting ----------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def source_of(name: str) -> str:
    return name.split("---")[0] if "---" in name else name.rsplit("_", 1)[0]


def summarise(results: list[SchemaResult]) -> dict:
    counts = Counter(r.outcome for r in results)
    times = [r.compile_ms for r in results if r.outcome not in ("timeout", "crash", "compile_error") and r.compile_ms is not None]
    return {
        "schemas": len(results),
        "outcomes": {o: counts[o] for o in OUTCOMES},
        "traps": sum(1 for r in results if r.trap),
        "invalid_accepted": sum(1 for r in results for f in r.failures if not f["valid"]),
        "valid_refused": sum(1 for r in results for f in r.failures if f["valid"]),
        "valid_refused_shape": sum(1 for r in results for f in r.failures if f["valid"] and f.get("shape")),
        "validation_errors_shape_only": sum(1 for r in results if r.outcome == "validation_error"
                                            and all(f.get("shape") for f in r.failures)),
        "maskbench_prefix_invalidations": sum(len(r.prefix_accepts) for r in results),
        "tests": sum(r.tests for r in results),
        "compile_ms": {f"p{q}": percentile(times, q) for q in (50, 90, 99)} | {"max": max(times, default=math.nan)},
    }


def print_report(results: list[SchemaResult], out=sys.stdout) -> dict:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    s = summarise(results)
    n = max(1, s["schemas"])
    p(f"\n== MaskBench text mode: {s['schemas']} schemas, {s['tests']} test instances "
      f"(whitespace flexible; a text must be accepted complete) ==")
    for o in OUTCOMES:
        p(f"  {o.replace('_', ' '):<20} {s['outcomes'][o]:>6}  {100 * s['outcomes'][o] / n:6.2f}%")
    p(f"  traps (find_trap({TRAP_BUDGET}))  {s['traps']:>6}")
    p(f"  validation errors from key order only (accepted with keys reordered): {s['validation_errors_shape_only']}")
    p(f"  instances: {s['valid_refused']} valid refused ({s['valid_refused_shape']} key order only), "
      f"{s['invalid_accepted']} invalid accepted; "
      f"{s['maskbench_prefix_invalidations']} invalid refused only at the end (would be invalidation errors "
      f"under MaskBench's no-EOS-check protocol)")
    c = s["compile_ms"]
    p(f"  compile ms (compile + first byte row, compiled schemas): p50 {c['p50']:.1f}  p90 {c['p90']:.1f}  "
      f"p99 {c['p99']:.1f}  max {c['max']:.1f}")

    errors = [r for r in results if r.outcome == "compile_error"]
    if errors:
        p("\n-- compile errors by class: " + ", ".join(f"{k} {v}" for k, v in Counter(r.error for r in errors).most_common()))
        kw = Counter(r.keyword for r in errors if r.error == "UnsupportedKeyword")
        if kw:
            p("-- UnsupportedKeyword by keyword: " + ", ".join(f"{k} {v}" for k, v in kw.most_common()))
        p("-- top 15 compile-error messages (pointers stripped):")
        for msg, k in Counter(_message_key(r.message) for r in errors).most_common(15):
            p(f"  {k:>5}  {_short(msg, 150)}")
    crashes: dict[tuple, list[str]] = defaultdict(list)
    for r in results:
        if r.outcome == "crash":
            crashes[(r.error, _message_key(r.message), r.where)].append(r.file)
    if crashes:
        p(f"\n-- crashes: {s['outcomes']['crash']}")
        for (error, message, where), files in sorted(crashes.items(), key=lambda kv: -len(kv[1])):
            p(f"  {len(files):>5}  {error}: {_short(message, 200)} [{where}] e.g. {', '.join(files[:3])}")
    timeouts = [r for r in results if r.outcome == "timeout"]
    if timeouts:
        p(f"\n-- time-outs: {len(timeouts)}")
        for r in timeouts:
            p(f"  {r.file}: {r.message}")
    inval = [(r, f) for r in results for f in r.failures if not f["valid"]]
    if inval:
        p(f"\n-- INVALIDATION ERRORS (invalid instance accepted): {len(inval)}")
        for r, f in inval:
            p(f"  {r.file} #{f['index']}: {f['text']}")
    valid = [(r, f) for r in results for f in r.failures if f["valid"]]
    if valid:
        p(f"\n-- validation errors (valid instance refused): {len(valid)} in {s['outcomes']['validation_error']} schemas")
        for r, f in valid:
            p(f"  {r.file} #{f['index']} refused at byte {f['dies_at']} (at ▮): ...{f['context']!r}"
              + ("  [key order only]" if f.get("shape") else ""))
    traps = [r for r in results if r.trap]
    if traps:
        p(f"\n-- traps: {len(traps)}")
        for r in traps:
            p(f"  {r.file}: state {r.trap['state']} after {r.trap['path']!r}")
    slow = sorted((r for r in results if r.compile_ms is not None), key=lambda r: -r.compile_ms)[:10]
    if slow:
        p("\n-- slowest compiles: ")
        for r in slow:
            p(f"  {r.compile_ms:9.1f} ms  {r.file} ({r.outcome}{', ' + r.error if r.error else ''})")
    slow = sorted((r for r in results if r.check_ms is not None), key=lambda r: -r.check_ms)[:5]
    if slow and slow[0].check_ms > 1000:
        p("-- slowest checks (instance walks + find_trap): "
          + "; ".join(f"{r.check_ms:.0f} ms {r.file}" for r in slow))
    by_source: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        by_source[source_of(r.file)][r.outcome] += 1
    p("\n-- outcomes by source:")
    p(f"  {'source':<22}" + "".join(f"{o[:10]:>11}" for o in OUTCOMES))
    for src in sorted(by_source):
        p(f"  {src:<22}" + "".join(f"{by_source[src][o]:>11}" for o in OUTCOMES))
    o = s["outcomes"]
    p(f"\nmaskbench: {s['schemas']} schemas: {o['passing']} passing ({100 * o['passing'] / n:.1f}%), "
      f"{o['compile_error']} compile errors ({100 * o['compile_error'] / n:.1f}%), "
      f"{o['validation_error']} validation errors ({100 * o['validation_error'] / n:.1f}%; "
      f"{s['validation_errors_shape_only']} key order only), "
      f"{o['invalidation_error']} invalidation errors ({100 * o['invalidation_error'] / n:.1f}%), "
      f"{o['timeout']} time-outs, {o['crash']} crashes, {s['traps']} traps; "
      f"compile p50 {c['p50']:.1f} ms, p99 {c['p99']:.1f} ms")
    return s


def _message_key(message: str | None) -> str:
    """A compile-error message with its location cut off, so that equal reasons group together."""
    text = (message or "").split("\n")[0]
    for cut in (" at the schema root", " at /"):
        if cut in text:
            text = text.split(cut)[0]
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--text", metavar="DATA_DIR", help="byte mode: walk each instance's text through the automaton")
    ap.add_argument("--files", metavar="LIST", help="file of schema file names to run, one per line")
    ap.add_argument("--limit", type=int, help="run only the first N files")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds allowed for a compile (default 20)")
    ap.add_argument("--memory-mb", type=int, default=4096, help="address-space limit of the worker (0: none)")
    ap.add_argument("--json", metavar="OUT", help="write the summary and every schema's result as JSON")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)

    started = time.perf_counter()

    def progress(i, n, r):
        if r.outcome in ("timeout", "crash"):
            print(f"[{i}/{n}] {r.file}: {r.outcome}", file=sys.stderr, flush=True)
        elif not args.quiet and (i % 100 == 0 or i == n):
            print(f"[{i}/{n}] {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    results = run(args.text, args.files, limit=args.limit, timeout=args.timeout, mode="text",
                  memory_mb=args.memory_mb, progress=progress)
    summary = print_report(results)
    print(f"(wall {time.perf_counter() - started:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"mode": "text", "summary": summary,
                                               "results": [asdict(r) for r in results]},
                                              ensure_ascii=False, indent=1), encoding="utf-8")
    return 1 if summary["outcomes"]["invalidation_error"] or summary["traps"] else 0


if __name__ == "__main__":
    sys.exit(main())
