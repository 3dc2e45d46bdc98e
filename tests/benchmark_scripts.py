"""Run a script of benchmarks/ in its own process, as its users do (benchmarks are scripts, not modules)."""

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def run(name: str, *args) -> subprocess.CompletedProcess:
    """``python benchmarks/NAME.py ARGS...``, its stdout and stderr captured as text."""
    return subprocess.run([sys.executable, str(BENCHMARKS / f"{name}.py"), *map(str, args)],
                          capture_output=True, text=True)
