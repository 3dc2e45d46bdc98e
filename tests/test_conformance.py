"""The official JSON-Schema-Test-Suite through the compiler: no invalid instance is ever accepted."""

import os

import pytest

import benchmark_scripts

SUITE = os.environ.get("JSON_SCHEMA_TEST_SUITE")


def _load_runner():
    return benchmark_scripts.load("conformance")


@pytest.mark.skipif(not SUITE, reason="set JSON_SCHEMA_TEST_SUITE to a JSON-Schema-Test-Suite checkout to run it")
@pytest.mark.parametrize("draft", ["draft2020-12", "draft7"])
def test_suite_has_no_false_accepts(draft):
    """Every invalid instance of the suite's required tests is refused, and no compiled schema has a dead end."""
    runner = _load_runner()
    report = runner.run_suite(SUITE, draft)
    assert report.cases, f"no tests found under {SUITE}/tests/{draft}"
    bad = report.false_accepts
    listing = "\n".join(f"{c.file} | {c.group} | {c.test}: {c.text}" + (f" [{c.detail}]" if c.detail else "")
                        for c in bad)
    assert not bad, f"{len(bad)} invalid instances accepted ({runner.summary_line(report.totals())}):\n{listing}"
    assert not report.traps, f"dead ends found by find_trap: {report.traps}"
