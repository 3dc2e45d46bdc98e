"""Generated documents pass the validators users run: python-jsonschema, jsonschema-rs and, where
Node.js is installed (CI sets it up), Ajv. Schemas where they disagree at the edges: regex classes,
formats, numbers at the double range and at strict bounds."""

import json
import shutil
from pathlib import Path

import pytest

import benchmark_scripts

SCHEMAS = Path(__file__).with_name("validator_schemas.json")

pytest.importorskip("jsonschema_rs", reason="jsonschema-rs is in the test extra")


def test_generated_documents_pass_every_validator(tmp_path):
    """Random-logit documents for every schema of the set: none rejected by any validator."""
    out = tmp_path / "validators.json"
    args = [SCHEMAS, "--seeds", "6", "--max-tokens", "160", "--out", out]
    # Ajv where Node.js is installed and npm could fetch it (.ci/run installs it first)
    with_ajv = shutil.which("node") is not None and shutil.which("npm") is not None
    with_ajv = with_ajv and benchmark_scripts.run("validators", "--setup-ajv").returncode == 0
    if not with_ajv:
        args.append("--no-ajv")
    done = benchmark_scripts.run("validators", *args)
    assert out.is_file(), done.stderr[-2000:]
    totals = json.loads(out.read_text(encoding="utf-8"))["totals"]
    schemas = len(json.loads(SCHEMAS.read_text(encoding="utf-8")))
    assert totals["compiled"] == schemas and totals["documents"] >= 3 * schemas
    for validator in ("python-jsonschema", "jsonschema-rs") + (("ajv",) if with_ajv else ()):
        assert totals[validator]["documents"] == totals["documents"], validator
        assert totals[validator]["rejected"] == 0, done.stdout[-4000:]
