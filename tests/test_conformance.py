"""The official JSON-Schema-Test-Suite through the compiler: no invalid instance is ever accepted."""

import json
import os

import pytest

import benchmark_scripts

SUITE = os.environ.get("JSON_SCHEMA_TEST_SUITE")


@pytest.mark.skipif(not SUITE, reason="set JSON_SCHEMA_TEST_SUITE to a JSON-Schema-Test-Suite checkout to run it")
@pytest.mark.parametrize("draft", ["draft2020-12", "draft7"])
def test_suite_has_no_false_accepts(draft, tmp_path):
    """Every invalid instance of the suite's required tests is refused, and no compiled schema has a dead end."""
    cases = tmp_path / "cases.json"
    done = benchmark_scripts.run("conformance", SUITE, "--draft", draft, "--json", cases)
    assert cases.is_file(), done.stderr[-3000:]
    (report,) = json.loads(cases.read_text(encoding="utf-8"))
    assert report["cases"], f"no tests found under {SUITE}/tests/{draft}"
    bad = [c for c in report["cases"] if c["outcome"] == "false_accept"]
    listing = "\n".join(f"{c['file']} | {c['group']} | {c['test']}: {c['text']}" + (f" [{c['detail']}]" if c["detail"] else "")
                        for c in bad)
    assert not bad, f"{len(bad)} invalid instances accepted ({done.stdout.splitlines()[-1]}):\n{listing}"
    traps = [line.strip() for line in done.stdout.splitlines() if "DEAD END" in line]
    assert not traps, "dead ends found by find_trap:\n" + "\n".join(traps)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
