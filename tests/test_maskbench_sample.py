"""A sample of MaskBench's real-world schemas: no invalid instance accepted, no trap state; and the
benchmark scripts beside it run, each in its own process as its users run it."""

import json
import os
import pickle
import re
from pathlib import Path

import pytest

import benchmark_scripts

MASKBENCH = os.environ.get("MASKBENCH_DIR")
SAMPLE_SIZE = 100


def _sample():
    if not MASKBENCH:
        pytest.skip("set MASKBENCH_DIR to a MaskBench folder holding dev/ and dev-sample.txt to run it")
    root = Path(MASKBENCH)
    if not (root / "dev").is_dir() or not (root / "dev-sample.txt").is_file():
        pytest.skip(f"MASKBENCH_DIR={MASKBENCH} lacks dev/ or dev-sample.txt")
    return root


def _write_cases(folder: Path, cases: dict) -> Path:
    """MaskBench files NAME -> case in ``folder``, and the list of their names, whose path is returned."""
    for name, case in cases.items():
        (folder / name).write_text(json.dumps(case))
    (folder / "list.txt").write_text("\n".join(cases))
    return folder / "list.txt"


@pytest.fixture
def llama3_tokenizer(gguf_path_by_name):
    """MaskBench's token protocol needs transformers and llama.cpp's llama-bpe vocabulary (fetched, else skipped)."""
    pytest.importorskip("transformers", reason="the token protocol's Llama 3 tokenizer is rebuilt by transformers")
    gguf_path_by_name("llama-bpe")


def test_sample_has_no_invalidation_errors_and_no_traps(tmp_path):
    """The first 100 schemas of dev-sample.txt: every invalid instance refused, find_trap finds nothing."""
    root = _sample()
    out = tmp_path / "results.json"
    done = benchmark_scripts.run("maskbench", "--text", root / "dev", "--files", root / "dev-sample.txt",
                                 "--limit", SAMPLE_SIZE, "--timeout", 20, "--json", out, "--quiet")
    assert out.is_file(), done.stderr[-3000:]
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert len(results) == SAMPLE_SIZE
    inval = [f"{r['file']} #{f['index']}: {f['text']}" for r in results for f in r["failures"] if not f["valid"]]
    traps = [f"{r['file']}: state {r['trap']['state']} after {r['trap']['path']!r}" for r in results if r["trap"]]
    assert not inval, f"{len(inval)} invalid instances accepted:\n" + "\n".join(inval)
    assert not traps, f"{len(traps)} schemas with a trap state:\n" + "\n".join(traps)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_compile_times_script_times_what_compiles_and_skips_the_rest(tmp_path):
    """``benchmarks/compile_times.py`` (runs without MaskBench: a folder of two schema files)."""
    (tmp_path / "a.json").write_text(json.dumps({"schema": {"type": "string", "maxLength": 300}}))
    (tmp_path / "b.json").write_text(json.dumps({"schema": {"type": "object", "$recursiveRef": "#"}}))
    done = benchmark_scripts.run("compile_times", tmp_path, "--property-order", "any")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1 schemas compiled (of 2)" in done.stdout
    assert "a.json" in done.stdout and "b.json" not in done.stdout


def test_instructions_script_runs_the_median_band(tmp_path):
    """``benchmarks/instructions.py`` without valgrind: the workload it counts, on a folder."""
    for i in range(10):
        (tmp_path / f"s{i}.json").write_text(json.dumps({"schema": {"type": "string", "maxLength": i + 1}}))
    done = benchmark_scripts.run("instructions", tmp_path, "--band")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "4 schemas in the median band, 4 compiled after 3 warming up" in done.stdout


def test_compile_times_splits_compiles_by_the_fragments_generation_enters(tmp_path):
    """``compile_times.py --reach``: the lowering's share spent on fragments that the first mask and
    the valid instances enter; an object's value fragments are entered only by the instances."""
    schema = {"type": "object", "properties": {k: {"type": "string", "pattern": "^[a-z]+$"} for k in "abcdef"}}
    (tmp_path / "a.json").write_text(json.dumps({"schema": schema, "tests": [{"data": {"a": "x"}, "valid": True}]}))
    done = benchmark_scripts.run("compile_times", tmp_path, "--reach")
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("all (1 schemas"))
    first, later = (int(x) for x in re.findall(r"enters? (\d+)%", line))
    assert first < later <= 100, line


def test_compile_times_lists_the_slowest_schemas_with_what_they_contain(tmp_path):
    """``compile_times.py --slowest N``: each listed schema with its size and the features that
    drive its cost (here a long counted length, a format, a pattern with a bounded repetition)."""
    files = _write_cases(tmp_path, {
        "long.json": {"schema": {"type": "object", "properties": {"text": {"type": "string", "maxLength": 5000},
                                                                  "host": {"type": "string", "format": "hostname"}}}},
        "pattern.json": {"schema": {"type": "string", "pattern": "^[a-z]{1,20}$"}},
        "plain.json": {"schema": {"type": "integer"}}})
    done = benchmark_scripts.run("compile_times", tmp_path, "--files", files, "--slowest", 2)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = done.stdout.split("the 2 slowest", 1)[1].splitlines()[1:]
    assert len(listed) == 2
    done = benchmark_scripts.run("compile_times", tmp_path, "--files", files)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {line.split()[2]: line for line in done.stdout.splitlines() if line.startswith("  ")}
    assert sorted(rows) == ["long.json", "pattern.json", "plain.json"]
    assert "maxLength 5000: 1" in rows["long.json"] and "format hostname: 1" in rows["long.json"]
    assert "properties: 2" in rows["long.json"] and " KB; " in rows["long.json"]
    assert "patterns: 1" in rows["pattern.json"] and "patterns with {m,n}: 1" in rows["pattern.json"]
    assert "maxLength" not in rows["plain.json"] and "format" not in rows["plain.json"]


def test_compile_times_beside_llguidance(tmp_path, llama3_tokenizer):
    """``compile_times.py --llguidance``: TTFM percentiles for both engines from the same run, and
    llguidance's time beside ours on each of the slowest schemas."""
    pytest.importorskip("llguidance", reason="--llguidance times llguidance")
    files = _write_cases(tmp_path, {"a.json": {"schema": {"type": "string", "maxLength": 5000}},
                                    "b.json": {"schema": {"type": "object", "$recursiveRef": "#"}}})
    done = benchmark_scripts.run("compile_times", tmp_path, "--files", files, "--llguidance")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("1 schemas compiled (of 2); TTFM ms p50 ")
    assert lines[1].startswith("llguidance: 1 schemas compiled; TTFM ms p50 ")
    assert lines[2].startswith("the 1 both compile: constrain p50 ")
    ratio = float(lines[2].rsplit("constrain/llguidance per schema: median ", 1)[1])
    assert ratio > 0
    assert lines[3].startswith("cyclic collector during the run: ")
    assert "a.json" in lines[5] and "maxLength 5000: 1" in lines[5] and " / " in lines[5]


def test_tbm_best_of_keeps_each_schemas_fastest_run(tmp_path, llama3_tokenizer):
    """``benchmarks/tbm_best_of.py`` (runs without MaskBench: two schemas and a refused one)."""
    cases = {"a.json": {"schema": {"type": "array", "items": {"type": "integer"}},
                        "tests": [{"data": [1, 22, 333], "valid": True}, {"data": ["x"], "valid": False}]},
             "b.json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}},
                        "tests": [{"data": {"name": "Lençóis"}, "valid": True}]},
             "c.json": {"schema": {"type": "object", "$recursiveRef": "#"}, "tests": [{"data": {}, "valid": True}]}}
    files = _write_cases(tmp_path, cases)
    one = tmp_path / "one.pkl"
    done = benchmark_scripts.run("tbm_best_of", tmp_path, "--files", files, "--one", one)  # a single run's steps
    assert done.returncode == 0, done.stderr[-3000:]
    steps = pickle.loads(one.read_bytes())
    assert sorted(steps) == ["a.json", "b.json"] and all(t > 0 for ts in steps.values() for t in ts)
    assert len(steps["b.json"]) >= 5  # every token of the valid instance was walked
    done = benchmark_scripts.run("tbm_best_of", tmp_path, "--files", files, "--runs", 2)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 schemas" in done.stdout and "steps over 2 ms" in done.stdout


def test_tbm_interleaved_runs_both_checkouts_on_every_schema(tmp_path, llama3_tokenizer):
    """``benchmarks/tbm_interleaved.py`` with this checkout on both sides: the same schemas and
    token steps counted for each (a schema that does not compile is left out of both), and each
    side's time to first mask."""
    cases = {"a.json": {"schema": {"type": "array", "items": {"type": "integer"}},
                        "tests": [{"data": [1, 22, 333], "valid": True}]},
             "c.json": {"schema": {"type": "object", "$recursiveRef": "#"}, "tests": [{"data": {}, "valid": True}]}}
    files = _write_cases(tmp_path, cases)
    root = Path(__file__).resolve().parent.parent
    done = benchmark_scripts.run("tbm_interleaved", root, root, tmp_path, "--files", files)
    assert done.returncode == 0, done.stderr[-3000:]
    old, new, old_ttfm, new_ttfm, ratio = done.stdout.splitlines()
    assert old.startswith("old: 1 schemas, ") and new.startswith("new: 1 schemas, ")
    assert old.split(",")[1] == new.split(",")[1] != " 0 steps"
    assert old_ttfm.startswith("old TTFM") and new_ttfm.startswith("new TTFM")
    assert ratio.startswith("TTFM new/old per schema: median ")


def test_maskbench_tokens_beside_llguidance_on_the_schemas_both_compile(tmp_path, llama3_tokenizer):
    """``maskbench.py --tokens --engines constrain,llguidance``: the engines take turns on each
    schema; a schema one of them refuses is left out of the TTFM set beside each other."""
    pytest.importorskip("llguidance", reason="the run compares llguidance")
    files = _write_cases(tmp_path, {
        "a.json": {"schema": {"type": "array", "items": {"type": "integer"}}, "tests": [{"data": [1, 22], "valid": True}]},
        "b.json": {"schema": {"type": "object", "properties": {"n": {"type": "integer"}},
                              "dependentRequired": {"n": ["m"]}}, "tests": [{"data": {}, "valid": True}]}})
    done = benchmark_scripts.run("maskbench", "--tokens", tmp_path, "--files", files, "--engines",
                                 "constrain,llguidance", "--quiet")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    beside = [line for line in done.stdout.splitlines() if line.startswith("TTFM ms on the ")]
    assert len(beside) == 1 and beside[0].startswith("TTFM ms on the 1 schemas constrain and llguidance both compiled")
    assert float(beside[0].rsplit("per schema: median ", 1)[1]) > 0


def test_maskbench_plot_writes_each_measures_cdf(tmp_path, llama3_tokenizer):
    """``maskbench.py --tokens --plot``'s figures: a TTFM and a TBM PNG."""
    pytest.importorskip("matplotlib", reason="--plot draws with matplotlib")
    files = _write_cases(tmp_path, {"a.json": {"schema": {"type": "array", "items": {"type": "integer"}},
                                               "tests": [{"data": [1, 22, 333], "valid": True}]}})
    done = benchmark_scripts.run("maskbench", "--tokens", tmp_path, "--files", files, "--plot", tmp_path / "plots",
                                 "--quiet")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    paths = sorted((tmp_path / "plots").iterdir())
    assert [p.name for p in paths] == ["tbm.png", "ttfm.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in paths)


def test_collector_script_times_the_collections_beside_each_schemas_slowest_token(tmp_path, llama3_tokenizer):
    """``benchmarks/collector.py``: one line per schema walked (a refused one is left out), then
    what the collector still tracks and one full pass."""
    files = _write_cases(tmp_path, {
        "a.json": {"schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
                   "tests": [{"data": {"n": 12}, "valid": True}]},
        "b.json": {"schema": {"type": "object", "$recursiveRef": "#"}, "tests": [{"data": {}, "valid": True}]}})
    done = benchmark_scripts.run("collector", tmp_path, "--files", files)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("1 schemas walked"), done.stdout
    assert "a.json:" in done.stdout and "b.json" not in done.stdout
    assert re.search(r"afterwards: \d+ objects tracked, a full pass [\d.]+ ms", done.stdout), done.stdout


def test_compare_runs_counts_like_for_like_and_lists_what_got_worse_first(tmp_path):
    """``benchmarks/compare_runs.py``: outcomes of one run against another, validation errors on the
    schemas both compiled (a schema compiled only by the new run does not count), what passed only
    in the old run listed first; a token run is read per engine."""
    def result(file, outcome, failing=0, message=None):
        return {"file": file, "outcome": outcome, "failures": [{}] * failing, "message": message, "compile_ms": 1.0}

    old = [result("a", "passing"), result("b", "compile_error", message="refused"), result("c", "validation_error", 1),
           result("d", "passing")]
    new = [result("a", "passing"), result("b", "validation_error", 2), result("c", "validation_error", 1),
           result("d", "validation_error", 1)]
    (tmp_path / "old.json").write_text(json.dumps({"mode": "text", "results": old}))
    (tmp_path / "new.json").write_text(json.dumps({"mode": "tokens", "engines": {"constrain": {"results": new}}}))
    done = benchmark_scripts.run("compare_runs", tmp_path / "old.json", tmp_path / "new.json")
    assert done.returncode == 0, done.stderr
    assert "on the 3 schemas both compiled: validation errors 1 -> 2" in done.stdout
    assert re.search(r"compile_error\s+0\s+0\s+1\n", done.stdout)  # b: refused, then validation errors
    listed = done.stdout.split("schemas changed")[1]
    assert listed.index("d: passing") < listed.index("b: compile_error")
    assert "was: refused" in listed and "c:" not in listed
    other = benchmark_scripts.run("compare_runs", tmp_path / "old.json", tmp_path / "new.json", "--engine", "llguidance")
    assert other.returncode != 0 and "no engine 'llguidance'" in other.stderr
