"""The house rules of services/ (docs/adr/0051-ports-only.md, 0058), read from the source with
`ast`: services reach the world only through ports, never import adapters, import each other
without a cycle and only at module level, neither print nor read the environment (the
report layer and cli.py do that), never configure or swap a GitHub client (a call's bounds
are a Policy) and leave the cost arithmetic to core/; Markdown is escaped and tabled in one
place (core/markdown.py), and no function of the package repeats another's body."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "orion_action"
SERVICES = sorted((PACKAGE / "services").glob("*.py"))
MODULES = sorted(PACKAGE.rglob("*.py"))
MARKDOWN = PACKAGE / "core" / "markdown.py"


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


def _names(node: ast.expr) -> list[str]:
    """The names along an attribute chain: `a.b.c` -> ["a", "b", "c"]."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


def client_writes(tree: ast.AST) -> list[str]:
    """Writes that configure or swap a GitHub client (`gh`, by the project's naming): an
    attribute of one (`gh.deadline = ...`, `self.gh.abort = ...`), another object's client
    (`holding.gh = ...`), or `setattr`. An object setting its own (`self.gh = gh`) is no swap.
    A call's bounds are a Policy (`with gh.bounded(policy):`), never the client's state."""
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            found.append(f"setattr at line {node.lineno}")
        for target in targets:
            chain = _names(target)
            if "gh" in chain[:-1] or (chain[-1:] == ["gh"] and chain[:-1] not in ([], ["self"])):
                found.append(f"{'.'.join(chain)} = at line {node.lineno}")
    return found


def clones_with_budgets(tree: ast.AST) -> list[int]:
    """`.clone(...)` with arguments: a clone is a thread's own connection; its calls' timeout
    and retry budget are a Policy, as every client's."""
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "clone" and (node.args or node.keywords)]


# The cost arithmetic's own names (core/cost.py, core/beat.py): a service that needs them
# computes what core/ computes.
COST_NAMES = {"REQUESTS_PER_BEAT", "WRITES_PER_HOUR", "SHARE", "DEFAULT_BUDGET", "HOUR",
              "heartbeat_cost", "HeartbeatCost"}


def cost_arithmetic(tree: ast.AST) -> list[str]:
    """Names of the cost arithmetic a module imports or defines."""
    found = [a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             for a in node.names if a.name in COST_NAMES and node.module != "orion_action.core.cost"]
    found += [t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name) and t.id in COST_NAMES]
    return found


def markdown_making(tree: ast.AST) -> list[str]:
    """Markdown escaping or table rules outside core/markdown.py: a table's rule line (`---|`)
    or an escaped pipe (`\\|`) in a string."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings and (
                "---|" in node.value or "\\|" in node.value):
            found.append(f"{node.value[:30]!r} at line {node.lineno}")
    return found


def _body_key(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if all(isinstance(b, ast.Pass) or (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))
           for b in body):
        return None  # a Protocol's `...`
    return ast.dump(ast.Module(body=body, type_ignores=[]), annotate_fields=False)


def duplicated_functions(trees: dict[str, ast.AST]) -> list[list[str]]:
    """Functions (anywhere in the package) whose bodies are the same code."""
    bodies: dict[str, list[str]] = {}
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (key := _body_key(node)):
                bodies.setdefault(key, []).append(f"{name}:{node.lineno} {node.name}")
    return [where for where in bodies.values() if len(where) > 1]


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.stem)
def test_a_service_never_configures_or_swaps_a_client(path: Path) -> None:
    tree = _tree(path)
    assert client_writes(tree) == []
    assert clones_with_budgets(tree) == []


@pytest.mark.parametrize("path", [*SERVICES, PACKAGE / "report.py"], ids=lambda p: p.stem)
def test_the_cost_arithmetic_is_core_s(path: Path) -> None:
    assert cost_arithmetic(_tree(path)) == []


@pytest.mark.parametrize("path", [p for p in MODULES if p != MARKDOWN], ids=lambda p: p.stem)
def test_markdown_is_escaped_and_tabled_in_one_place(path: Path) -> None:
    assert markdown_making(_tree(path)) == []


def test_no_function_repeats_another() -> None:
    assert duplicated_functions({str(p.relative_to(PACKAGE)): _tree(p) for p in MODULES}) == []


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
    swaps = ast.parse(
        "gh.deadline = 5\n"
        "self.gh.abort = stop\n"
        "holding.gh = holding.gh.clone(timeout=2)\n"
        "self.gh = gh\n"
        "setattr(gh, 'x', 1)\n"
    )
    assert client_writes(swaps) == ["gh.deadline = at line 1", "self.gh.abort = at line 2",
                                    "holding.gh = at line 3", "setattr at line 5"]
    assert clones_with_budgets(swaps) == [3]
    assert clones_with_budgets(ast.parse("beat = gh.clone()")) == []
    cost = ast.parse("from orion_action.core.beat import SHARE\nREQUESTS_PER_BEAT = 2\n"
                     "from orion_action.core.cost import heartbeat_cost\n")
    assert cost_arithmetic(cost) == ["SHARE", "REQUESTS_PER_BEAT"]
    md = ast.parse("'''A |---|---| table in prose.'''\n"
                   "rows = '|---|---|'\ncell = text.replace('|', '\\\\|')\n")
    assert markdown_making(md) == ["'|---|---|' at line 2", "'\\\\|' at line 3"]
    twins = {"a.py": ast.parse("def f(x):\n    'why'\n    return x + 1\n"),
             "b.py": ast.parse("def g(y):\n    return y + 1\ndef h(x):\n    return x + 1\n"),
             "p.py": ast.parse("class P:\n    def f(self): ...\n    def g(self): ...\n")}
    assert duplicated_functions(twins) == [["a.py:1 f", "b.py:3 h"]]
