"""The house rules of services/ (docs/adr/0051-ports-only.md), read from the source with
`ast`: services reach the world only through ports, never import adapters, import each other
without a cycle and only at module level, and neither print nor read the environment (the
report layer and cli.py do that)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "orion_action"
SERVICES = sorted((PACKAGE / "services").glob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imports(tree: ast.AST) -> list[tuple[ast.ImportFrom | ast.Import, list[str]]]:
    """Every import and the modules it names (`from a import b` names a and a.b)."""
    found: list[tuple[ast.ImportFrom | ast.Import, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.append((node, [a.name for a in node.names]))
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node, [node.module, *(f"{node.module}.{a.name}" for a in node.names)]))
    return found


def _module(path: Path) -> str:
    return "orion_action.services." + path.stem


def _service_edges() -> dict[str, set[str]]:
    names = {_module(p) for p in SERVICES}
    return {_module(p): {m for _, ms in _imports(_tree(p)) for m in ms if m in names and m != _module(p)}
            for p in SERVICES}


def adapter_imports(tree: ast.AST) -> list[str]:
    return [m for _, ms in _imports(tree) for m in ms[:1] if m.startswith("orion_action.adapters")]


def nested_imports(tree: ast.Module) -> list[int]:
    """Lines of imports below module level (inside a function, class or `if`)."""
    top = {id(n) for n in tree.body}
    return [node.lineno for node, _ in _imports(tree) if id(node) not in top]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def output_or_environment(tree: ast.AST) -> list[str]:
    """`print(`, `os.environ`, `os.getenv`, `sys.stdout`/`sys.stderr`: the report layer's and
    cli.py's business, never a service's."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"print( at line {node.lineno}")
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and (node.value.id, node.attr) in {("os", "environ"), ("os", "getenv"), ("os", "environb"),
                                                   ("sys", "stdout"), ("sys", "stderr")}):
            found.append(f"{node.value.id}.{node.attr} at line {node.lineno}")
    return found


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.stem)
def test_a_service_imports_no_adapter(path: Path) -> None:
    assert adapter_imports(_tree(path)) == []


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.stem)
def test_a_service_imports_only_at_module_level(path: Path) -> None:
    assert nested_imports(_tree(path)) == []


def test_the_services_import_each_other_without_a_cycle() -> None:
    assert cycles(_service_edges()) == []


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.stem)
def test_a_service_neither_prints_nor_reads_the_environment(path: Path) -> None:
    assert output_or_environment(_tree(path)) == []


# The checks themselves catch what they are for.


def test_the_checks_catch_each_breach() -> None:
    breach = ast.parse(
        "import os\n"
        "from orion_action.adapters import machine\n"
        "def f():\n"
        "    from orion_action.services import reconcile\n"
        "    print(os.environ['X'])\n"
    )
    assert adapter_imports(breach) == ["orion_action.adapters"]
    assert nested_imports(breach) == [4]
    assert output_or_environment(breach) == ["print( at line 5", "os.environ at line 5"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
