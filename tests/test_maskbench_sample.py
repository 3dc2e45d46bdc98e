"""A sample of MaskBench's real-world schemas: no invalid instance accepted, no trap state."""

import os
from pathlib import Path

import pytest

import benchmark_scripts

MASKBENCH = os.environ.get("MASKBENCH_DIR")
SAMPLE_SIZE = 100


def _load_runner():
    return benchmark_scripts.load("maskbench")


def _sample():
    if not MASKBENCH:
        pytest.skip("set MASKBENCH_DIR to a MaskBench folder holding dev/ and dev-sample.txt to run it")
    root = Path(MASKBENCH)
    if not (root / "dev").is_dir() or not (root / "dev-sample.txt").is_file():
        pytest.skip(f"MASKBENCH_DIR={MASKBENCH} lacks dev/ or dev-sample.txt")
    return root


def test_sample_has_no_invalidation_errors_and_no_traps():
    """The first 100 schemas of dev-sample.txt: every invalid instance refused, find_trap finds nothing."""
    root = _sample()
    runner = _load_runner()
    results = runner.run(root / "dev", root / "dev-sample.txt", limit=SAMPLE_SIZE, timeout=20.0)
    assert len(results) == SAMPLE_SIZE
    inval = [f"{r.file} #{f['index']}: {f['text']}" for r in results for f in r.failures if not f["valid"]]
    traps = [f"{r.file}: state {r.trap['state']} after {r.trap['path']!r}" for r in results if r.trap]
    assert not inval, f"{len(inval)} invalid instances accepted:\n" + "\n".join(inval)
    assert not traps, f"{len(traps)} schemas with a trap state:\n" + "\n".join(traps)


def test_compile_times_script_times_what_compiles_and_skips_the_rest(tmp_path, capsys):
    """``benchmarks/compile_times.py`` (runs without MaskBench: a folder of two schema files)."""
    import json

    (tmp_path / "a.json").write_text(json.dumps({"schema": {"type": "string", "maxLength": 300}}))
    (tmp_path / "b.json").write_text(json.dumps({"schema": {"type": "object", "uniqueItems": True, "if": {}}}))
    script = benchmark_scripts.load("compile_times")
    times = script.compile_times([tmp_path / "a.json", tmp_path / "b.json"])
    assert [name for _, name in times] == ["a.json"] and times[0][0] > 0
    assert script.main([str(tmp_path), "--property-order", "any"]) == 0
    assert "1 schemas compiled (of 2)" in capsys.readouterr().out


def test_tbm_best_of_keeps_each_schemas_fastest_run(tmp_path, capsys):
    """``benchmarks/tbm_best_of.py`` (runs without MaskBench: two schemas and a refused one)."""
    import json

    cases = {"a.json": {"schema": {"type": "array", "items": {"type": "integer"}},
                        "tests": [{"data": [1, 22, 333], "valid": True}, {"data": ["x"], "valid": False}]},
             "b.json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}},
                        "tests": [{"data": {"name": "Lençóis"}, "valid": True}]},
             "c.json": {"schema": {"type": "object", "uniqueItems": True}, "tests": [{"data": {}, "valid": True}]}}
    for name, case in cases.items():
        (tmp_path / name).write_text(json.dumps(case))
    (tmp_path / "list.txt").write_text("\n".join(cases))
    script = benchmark_scripts.load("tbm_best_of")
    steps = script.one_run(str(tmp_path), list(cases))
    assert sorted(steps) == ["a.json", "b.json"] and all(t > 0 for ts in steps.values() for t in ts)
    assert len(steps["b.json"]) >= 5  # every token of the valid instance was walked
    assert script.main([str(tmp_path), "--files", str(tmp_path / "list.txt"), "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 schemas" in out and "steps over 2 ms" in out


def test_tbm_interleaved_runs_both_checkouts_on_every_schema(tmp_path, capsys):
    """``benchmarks/tbm_interleaved.py`` with this checkout on both sides: the same schemas and
    token steps counted for each (a schema that does not compile is left out of both)."""
    import json

    cases = {"a.json": {"schema": {"type": "array", "items": {"type": "integer"}},
                        "tests": [{"data": [1, 22, 333], "valid": True}]},
             "c.json": {"schema": {"type": "object", "uniqueItems": True}, "tests": [{"data": {}, "valid": True}]}}
    for name, case in cases.items():
        (tmp_path / name).write_text(json.dumps(case))
    (tmp_path / "list.txt").write_text("\n".join(cases))
    root = str(Path(__file__).resolve().parent.parent)
    script = benchmark_scripts.load("tbm_interleaved")
    assert script.main([root, root, str(tmp_path), "--files", str(tmp_path / "list.txt")]) == 0
    old, new = capsys.readouterr().out.splitlines()
    assert old.startswith("old: 1 schemas, ") and new.startswith("new: 1 schemas, ")
    assert old.split(",")[1] == new.split(",")[1] != " 0 steps"
