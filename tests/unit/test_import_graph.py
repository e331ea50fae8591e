"""Dependencies point one way: ``deploy`` may import ``services``, never the reverse;
``services`` imports neither ``deploy`` nor ``training`` (it never needs torch), and
``training`` never imports ``deploy``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from services.settings import REPO_ROOT

FORBIDDEN = {"services": {"deploy", "training", "bench"}, "training": {"deploy", "bench"}}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_against_the_dependency_direction(package: str) -> None:
    arrows = {
        f"{path.relative_to(REPO_ROOT)} -> {target}"
        for path in (REPO_ROOT / package).rglob("*.py")
        for target in imported_packages(path) & FORBIDDEN[package]
    }
    assert not arrows, sorted(arrows)
