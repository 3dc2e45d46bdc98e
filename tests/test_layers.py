"""Imports point down only (DESIGN §2): automaton imports neither compiler nor constrain; compiler not constrain."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {"automaton": {"compiler", "constrain"}, "compiler": {"constrain"}}
MODULES = sorted(path.relative_to(ROOT) for package in FORBIDDEN for path in (ROOT / package).rglob("*.py"))


def imported_packages(path: Path) -> set[str]:
    """Top-level packages of every absolute import in the file, lazy ones inside functions too
    (a relative import stays inside its own top-level package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_both_packages_are_walked():
    """The file-system walk finds the modules (an empty walk would pass every check below)."""
    assert {module.parts[0] for module in MODULES} == set(FORBIDDEN)
    assert Path("automaton/vocab.py") in MODULES and Path("compiler/grammar.py") in MODULES


@pytest.mark.parametrize("module", MODULES, ids=str)
def test_module_imports_no_higher_layer(module):
    """No import of a higher layer, not even a lazy one inside a function."""
    assert not imported_packages(ROOT / module) & FORBIDDEN[module.parts[0]]
