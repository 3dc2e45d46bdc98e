"""Run the official JSON-Schema-Test-Suite against the compiler and print a conformance table.

    python benchmarks/conformance.py SUITE_DIR [--draft draft2020-12|draft7] [--optional] [--json OUT]

For each test group of ``SUITE_DIR/tests/<draft>/*.json`` the schema is compiled (whitespace
"compact") and every test instance, serialised compactly, is walked through ``Grammar.accepts``
and compared with the suite's ``valid``. A remote ``$ref`` reaches the suite's ``remotes/`` documents,
handed to ``compile`` as ``resources`` (nothing is fetched). Outcomes per test:

- pass: the grammar agrees with the suite;
- false accept: an invalid instance accepted. This breaks the promise (DESIGN §1) and must be 0.
  Invalid instances are tried as serialised, with their keys in schema order and in other key
  orders (every order of small objects), so a false accept cannot hide behind key order;
- false reject: a valid instance refused;
- shape: a valid instance refused only because its object keys are not in the canonical order
  (``properties`` order, then ``required`` names): with its keys reordered (in the order the
  schema gives at each place, then permutations) it is accepted;
- unsupported: compiling raised ``UnsupportedKeyword``;
- error: compiling raised another error (or crashed), or walking the text crashed;
- timeout: the group (compile and walks) took longer than the guard (10 s by default).

``Unsatisfiable`` is read as what it says, the empty language: the group's invalid instances
pass and any valid instance is a false reject (the compiler wrongly proved it unsatisfiable).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import re
import signal
import sys
import threading
import time
import warnings
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote

try:
    import constrain
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import constrain

OUTCOMES = ("pass", "false_accept", "false_reject", "shape", "unsupported", "error", "timeout")
DRAFTS = ("draft2020-12", "draft7")


@dataclass
class Case:
    """One test of the suite with the outcome it got."""

    file: str
    group: str
    test: str
    valid: bool
    outcome: str
    text: str
    detail: str = ""


@dataclass
class Report:
    draft: str
    cases: list[Case] = field(default_factory=list)
    unsupported_keywords: Counter = field(default_factory=Counter)  # keyword -> tests
    compile_seconds: list[tuple[float, str, str]] = field(default_factory=list)  # (s, file, group)
    traps: list[tuple[str, str, bytes]] = field(default_factory=list)  # (file, group, path to the dead end)

    def of(self, outcome: str) -> list[Case]:
        return [c for c in self.cases if c.outcome == outcome]

    @property
    def false_accepts(self) -> list[Case]:
        return self.of("false_accept")

    def totals(self) -> Counter:
        return Counter(c.outcome for c in self.cases)

    def by_file(self) -> dict[str, Counter]:
        table: dict[str, Counter] = defaultdict(Counter)
        for c in self.cases:
            table[c.file][c.outcome] += 1
        return dict(table)


class GroupTimeout(BaseException):
    """The guard's alarm: a test group ran past its time limit (a BaseException, so that no
    ``except Exception`` inside the compiler swallows it)."""


@contextmanager
def time_guard(seconds: float):
    """Raise ``GroupTimeout`` in the block after ``seconds`` (SIGALRM; main thread on Unix only,
    elsewhere the compiler's own ``max_seconds`` deadline is the only guard)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def ring(signum, frame):
        raise GroupTimeout()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def dumps(data) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


# -- canonical key order ------------------------------------------------------------------------
def _follow(root, ref: str):
    """The target of a local ``$ref`` (``#`` or ``#/json/pointer``); None when it cannot be followed."""
    if not ref.startswith("#"):
        return None
    target = root
    for part in ref[1:].split("/")[1:]:
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def _views(root, node, data, own_first: bool, depth: int = 0) -> list[dict]:
    """The schema objects that apply to ``data`` at one place, in merge order: the node, what its
    local ``$ref`` points to, its ``allOf`` branches (before the node when not ``own_first``) and, of
    an ``anyOf``/``oneOf``, the branch naming most of ``data``'s keys."""
    if not isinstance(node, dict) or depth > 32:
        return []
    own, rest = [node], []
    if isinstance(node.get("$ref"), str):
        rest += _views(root, _follow(root, node["$ref"]), data, own_first, depth + 1)
    for branch in node.get("allOf") if isinstance(node.get("allOf"), list) else ():
        rest += _views(root, branch, data, own_first, depth + 1)
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword)
        if isinstance(branches, list) and branches:
            scored = [(_fit(_views(root, b, data, own_first, depth + 1), data), -i) for i, b in enumerate(branches)]
            rest += _views(root, branches[-max(scored)[1]], data, own_first, depth + 1)
    return own + rest if own_first else rest + own


def _fit(views: list[dict], data) -> int:
    """How well an ``anyOf``/``oneOf`` branch describes an object: the keys it names, and far more,
    the ``const``/``enum`` discriminators its values match (minus those they miss)."""
    if not isinstance(data, dict):
        return 0
    score = len(set(data) & set(_property_names(views)))
    for v in views:
        props = v.get("properties") if isinstance(v.get("properties"), dict) else {}
        for key, sub in props.items():
            if key in data and isinstance(sub, dict) and ("const" in sub or isinstance(sub.get("enum"), list)):
                allowed = [sub["const"]] if "const" in sub else sub["enum"]
                score += 100 if data[key] in allowed else -100
    return score


def _property_names(views: list[dict]) -> list[str]:
    names: list[str] = []
    for v in views:
        props = v.get("properties")
        names += [k for k in (props if isinstance(props, dict) else ()) if k not in names]
    for v in views:
        required = v.get("required")
        names += [k for k in (required if isinstance(required, list) else ()) if isinstance(k, str) and k not in names]
    return names


def _value_schema(views: list[dict], key: str):
    """The schemas that apply to the value of ``key`` (an ``allOf`` of them)."""
    subs = [v["properties"][key] for v in views if isinstance(v.get("properties"), dict) and key in v["properties"]]
    for v in views:
        patterns = v.get("patternProperties")
        for pattern, sub in (patterns.items() if isinstance(patterns, dict) else ()):
            try:
                if re.search(pattern, key):
                    subs.append(sub)
            except re.error:
                pass
    if not subs:
        subs = [v["additionalProperties"] for v in views if isinstance(v.get("additionalProperties"), dict)]
    return {"allOf": subs}


def _item_schema(views: list[dict], index: int):
    subs = []
    for v in views:
        prefix = v.get("prefixItems") if isinstance(v.get("prefixItems"), list) else None
        items = v.get("items")
        if isinstance(items, list):  # draft 7 tuple form
            prefix, items = items, v.get("additionalItems")
        if prefix is not None and index < len(prefix):
            subs.append(prefix[index])
        elif isinstance(items, dict):
            subs.append(items)
    return {"allOf": subs}


def canonical(data, schema, own_first: bool = True, root=None):
    """``data`` with each object's keys in the order the schema gives at that place (``properties``
    then ``required`` names, merged over ``$ref``/``allOf``/the best ``anyOf`` branch), other keys
    after them as they came."""
    root = schema if root is None else root
    views = _views(root, schema, data, own_first)
    if isinstance(data, list):
        return [canonical(x, _item_schema(views, i), own_first, root) for i, x in enumerate(data)]
    if not isinstance(data, dict):
        return data
    names = _property_names(views)
    ordered = [k for k in names if k in data] + [k for k in data if k not in names]
    return {k: canonical(data[k], _value_schema(views, k), own_first, root) for k in ordered}


def key_permutations(data, cap: int) -> list:
    """Up to ``cap`` copies of ``data`` with the keys of its objects permuted (every order, for
    small instances): what no heuristic can miss."""
    if isinstance(data, list):
        out = []
        for combo in itertools.product(*(key_permutations(x, cap) for x in data)):
            out.append(list(combo))
            if len(out) >= cap:
                break
        return out
    if not isinstance(data, dict):
        return [data]
    children = {k: key_permutations(v, cap) for k, v in data.items()}
    out = []
    for perm in itertools.permutations(data):
        for combo in itertools.product(*(children[k] for k in perm)):
            out.append(dict(zip(perm, combo)))
            if len(out) >= cap:
                return out
    return out


def accepted_in_any_order(grammar, text: str) -> bool:
    """Whether ``grammar``'s schema, compiled again with ``property_order="any"``, accepts ``text``:
    a refused valid instance whose keys are only out of the schema's order (nested ones too,
    in objects of up to ``LAZY_ORDER_MAX`` names)."""
    if grammar.options.property_order == "any":
        return False
    try:
        return _any_order(grammar).accepts(text)
    except constrain.SchemaError:
        return False


@functools.lru_cache(maxsize=4)
def _any_order(grammar):
    return constrain.compile(grammar.schema, **{**asdict(grammar.options), "property_order": "any", "cache": False})


def key_order_variants(data, schema, cap: int):
    """Serialisations of ``data`` in other key orders: the schema's orders first (``allOf`` branches
    after the schema's own properties, then before them), then permutations."""
    text = dumps(data)
    seen = {text}
    for own_first in (True, False):
        guess = dumps(canonical(data, schema, own_first))
        if guess not in seen:
            seen.add(guess)
            yield guess
    for variant in key_permutations(data, cap):
        variant = dumps(variant)
        if variant not in seen:
            seen.add(variant)
            yield variant


# -- running ------------------------------------------------------------------------------------
def _compile_error_outcome(exc: Exception) -> tuple[str, str]:
    if isinstance(exc, constrain.UnsupportedKeyword):
        return "unsupported", exc.keyword
    if isinstance(exc, constrain.SchemaTooComplex) and str(getattr(exc, "what", "")).startswith("compiling took over"):
        return "timeout", str(exc)
    return "error", f"{type(exc).__name__}: {exc}"


REMOTE_BASE = "http://localhost:1234/"  # where the suite's remotes/ folder is served in its own runs


def load_remotes(suite_dir: Path, draft: str) -> dict:
    """The suite's remote documents by the URI its tests refer to them by: those of no draft's folder
    and those of this draft's (the others are the same files written for another draft)."""
    folder = Path(suite_dir) / "remotes"
    mine = {"draft2020-12": "draft2020-12", "draft7": "draft7"}[draft]
    paths = [p for p in sorted(folder.rglob("*.json")) if p.relative_to(folder).parts[0] in (mine,)
             or not re.match(r"draft|v1$", p.relative_to(folder).parts[0])] if folder.is_dir() else []
    return {REMOTE_BASE + path.relative_to(folder).as_posix(): json.loads(path.read_text(encoding="utf-8"))
            for path in paths}


def referenced(schema, remotes: dict) -> dict:
    """The remotes whose file a schema (or a remote it takes) names: handed to ``compile`` as resources."""
    chosen: dict = {}
    text = json.dumps(schema)
    while True:
        more = {uri: doc for uri, doc in remotes.items() if uri not in chosen and uri.rsplit("/", 1)[-1] in text}
        if not more:
            return chosen
        chosen.update(more)
        text = json.dumps(list(more.values()))


def run_group(report: Report, file: str, group: dict, timeout: float, remotes: dict | None = None) -> None:
    schema = group.get("schema")
    description = str(group.get("description", ""))
    tests = group.get("tests", [])

    def record(test, outcome, text="", detail=""):
        report.cases.append(Case(file, description, str(test.get("description", "")), bool(test.get("valid")),
                                 outcome, text, detail))

    started = time.perf_counter()
    try:
        with time_guard(timeout):
            try:
                grammar = constrain.compile(schema, whitespace="compact", max_seconds=timeout,
                                            resources=referenced(schema, remotes or {}))
            except constrain.Unsatisfiable:
                grammar = None  # the empty language
            report.compile_seconds.append((time.perf_counter() - started, file, description))
            trap = grammar.find_trap(TRAP_BUDGET) if grammar is not None else None
            if trap is not None:
                report.traps.append((file, description, trap[1]))
            results = []
            for test in tests:
                results.append(_judge(grammar, test, schema))
    except GroupTimeout:
        for test in tests:
            record(test, "timeout", dumps(test.get("data")), f"group over {timeout} s")
        return
    except Exception as exc:  # compile refused or crashed: every test of the group shares it
        outcome, detail = _compile_error_outcome(exc)
        if outcome == "unsupported":
            report.unsupported_keywords[detail] += len(tests)
        for test in tests:
            record(test, outcome, dumps(test.get("data")), detail)
        return
    for test, (outcome, text, detail) in zip(tests, results):
        record(test, outcome, text, detail)


# Key orders tried: for a refused valid instance, enough to call it "shape" with confidence; for an
# invalid one (refused as written), enough to catch a grammar that accepts it in some other order.
SHAPE_TRIES, FALSE_ACCEPT_TRIES = 2000, 24
TRAP_BUDGET = 300  # automaton states explored per schema by find_trap


def _judge(grammar, test: dict, schema) -> tuple[str, str, str]:
    data = test.get("data")
    valid = bool(test.get("valid"))
    text = dumps(data)
    if grammar is None:
        return ("pass" if not valid else "false_reject"), text, "compiled as Unsatisfiable"
    try:
        if valid:
            if grammar.accepts(text):
                return "pass", text, ""
            for variant in key_order_variants(data, schema, SHAPE_TRIES):
                if grammar.accepts(variant):
                    return "shape", text, f"accepted as {variant}"
            if accepted_in_any_order(grammar, text):
                return "shape", text, "accepted with property_order='any'"
            return "false_reject", text, ""
        if grammar.accepts(text):
            return "false_accept", text, ""
        for variant in key_order_variants(data, schema, FALSE_ACCEPT_TRIES):
            if grammar.accepts(variant):
                return "false_accept", variant, "accepted with its keys in another order"
        return "pass", text, ""
    except Exception as exc:
        return "error", text, f"walking crashed: {type(exc).__name__}: {exc}"


def suite_files(suite_dir: Path, draft: str, optional: bool = False) -> list[Path]:
    root = Path(suite_dir) / "tests" / draft
    if not root.is_dir():
        raise FileNotFoundError(f"no {root}: SUITE_DIR must hold the suite's tests/<draft>/ folders")
    files = sorted(root.glob("*.json"))
    if optional:
        files += sorted((root / "optional").rglob("*.json"))
    return files


DIALECTS = {"draft7": "http://json-schema.org/draft-07/schema#"}


def in_dialect(group: dict, draft: str) -> dict:
    """The group with its schema naming the draft of its folder: the draft 7 files leave `$schema`
    out (their folder says it), and a document naming no draft is read as 2020-12 plus `dependencies`."""
    schema = group.get("schema")
    if draft in DIALECTS and isinstance(schema, dict) and "$schema" not in schema:
        return {**group, "schema": {"$schema": DIALECTS[draft], **schema}}
    return group


def run_suite(suite_dir, draft: str = "draft2020-12", *, optional: bool = False, timeout: float = 10.0) -> Report:
    """Run every test group of one draft and return the report (no printing)."""
    suite_dir = Path(suite_dir)
    report = Report(draft)
    root = suite_dir / "tests" / draft
    remotes = load_remotes(suite_dir, draft)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown formats: the suite has many, the table is the point
        for path in suite_files(suite_dir, draft, optional):
            name = path.relative_to(root).with_suffix("").as_posix()
            for group in json.loads(path.read_text(encoding="utf-8")):
                run_group(report, name, in_dialect(group, draft), timeout, remotes)
    return report


# -- printing -----------------------------------------------------------------------------------
COLUMNS = [("pass", "pass"), ("false_accept", "false acc"), ("false_reject", "false rej"), ("shape", "shape"),
           ("unsupported", "unsupp"), ("error", "errors"), ("timeout", "timeout")]


def summary_line(totals: Counter) -> str:
    line = (f"conformance: {totals['pass']} pass, {totals['false_accept']} false accepts, "
            f"{totals['false_reject']} false rejects, {totals['shape']} shape, "
            f"{totals['unsupported']} unsupported, {totals['error']} errors")
    return line + f", {totals['timeout']} timeouts"


def _short(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def print_report(report: Report, verbose: bool = False, out=sys.stdout) -> None:
    p = lambda *a: print(*a, file=out)  # noqa: E731
    table = report.by_file()
    width = max([len(f) for f in table] + [10])
    p(f"\n== {report.draft} ==")
    p(f"{'keyword':<{width}} " + " ".join(f"{h:>9}" for _, h in COLUMNS) + f" {'total':>6}")
    for name in sorted(table):
        row = table[name]
        p(f"{name:<{width}} " + " ".join(f"{row[k]:>9}" for k, _ in COLUMNS) + f" {sum(row.values()):>6}")
    totals = report.totals()
    p(f"{'TOTAL':<{width}} " + " ".join(f"{totals[k]:>9}" for k, _ in COLUMNS) + f" {sum(totals.values()):>6}")

    if report.unsupported_keywords:
        p("unsupported keywords (tests): " + ", ".join(f"{k} {n}" for k, n in report.unsupported_keywords.most_common()))
    for outcome, title, always in (("false_accept", "FALSE ACCEPTS (invalid instance accepted)", True),
                                   ("timeout", "timeouts", True),
                                   ("error", "errors", verbose),
                                   ("false_reject", "false rejects", verbose),
                                   ("shape", "shape (key order only)", verbose)):
        cases = report.of(outcome)
        if not cases or not always:
            continue
        p(f"-- {title}: {len(cases)}")
        for c in cases:
            p(f"  {c.file} | {c.group} | {c.test}: {_short(c.text)}" + (f"  [{_short(c.detail, 200)}]" if c.detail else ""))
    if not verbose:
        for outcome in ("error", "false_reject"):
            by = Counter(c.file for c in report.of(outcome))
            if by:
                p(f"-- {outcome.replace('_', ' ')}s by file (--verbose lists them): "
                  + ", ".join(f"{f} {n}" for f, n in by.most_common()))
        reasons = Counter(c.detail.split(" at ")[0] for c in report.of("error"))
        for reason, n in reasons.most_common(10):
            p(f"   {n:>4} tests: {_short(reason, 150)}")
    slow = sorted(report.compile_seconds, reverse=True)[:5]
    if slow:
        p("slowest compiles: " + "; ".join(f"{s * 1000:.0f} ms {f} | {g}" for s, f, g in slow))
    for file, group, path in report.traps:
        p(f"  DEAD END: {file} | {group} after {path!r}")
    p(f"{report.draft} " + summary_line(totals) + f", {len(report.traps)} dead ends")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite_dir", metavar="SUITE_DIR", help="JSON-Schema-Test-Suite checkout (holds tests/<draft>/)")
    ap.add_argument("--draft", choices=DRAFTS, action="append",
                    help="draft to run (repeatable; default: both)")
    ap.add_argument("--optional", action="store_true", help="also run tests/<draft>/optional/")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per test group (default 10)")
    ap.add_argument("--json", metavar="OUT", help="write every case as JSON")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every false reject, shape and error case")
    args = ap.parse_args(argv)

    reports = []
    for draft in args.draft or DRAFTS:
        report = run_suite(args.suite_dir, draft, optional=args.optional, timeout=args.timeout)
        print_report(report, verbose=args.verbose)
        reports.append(report)
    grand = sum((r.totals() for r in reports), Counter())
    print("\n" + summary_line(grand))
    if args.json:
        Path(args.json).write_text(json.dumps(
            [{"draft": r.draft, "totals": dict(r.totals()), "unsupported_keywords": dict(r.unsupported_keywords),
              "cases": [asdict(c) for c in r.cases]} for r in reports], ensure_ascii=False, indent=1), encoding="utf-8")
    return 1 if grand["false_accept"] else 0


if __name__ == "__main__":
    sys.exit(main())
