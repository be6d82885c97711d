"""`make test` needs nothing but what `make deps` installs: a test module that needs more (Debian's
faketime, from `make system-deps`) is marked slow as a whole, so only `make test-slow` runs it.
The README's second command once failed on a fresh machine for exactly this (issue 11)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
# Names whose use means the module needs a system package that `make deps` does not install.
NEEDS_SYSTEM_DEPS = {"faketime_prefix"}


def _module_is_slow(tree: ast.Module) -> bool:
    """`pytestmark = pytest.mark.slow` (or a list containing it) at module level."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            return "pytest.mark.slow" in ast.unparse(node.value)
    return False


def _users() -> list[Path]:
    users = []
    for path in sorted(TESTS.rglob("test_*.py")):
        if "node_modules" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        if names & NEEDS_SYSTEM_DEPS:
            users.append(path)
    return users


def test_the_walk_finds_the_clock_skew_tests() -> None:
    assert TESTS / "faults" / "test_clock_skew.py" in _users()


@pytest.mark.parametrize("path", _users(), ids=lambda p: str(p.relative_to(TESTS)))
def test_modules_needing_system_packages_are_slow(path: Path) -> None:
    assert _module_is_slow(ast.parse(path.read_text(encoding="utf-8"))), (
        f"tests/{path.relative_to(TESTS)} uses {sorted(NEEDS_SYSTEM_DEPS)} (needs `make system-deps`) "
        "but is not marked `pytestmark = pytest.mark.slow`: `make test` must pass on a fresh machine"
    )
