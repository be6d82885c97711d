"""Mutation testing of the pure rules (`make mutate`; docs/adr/0050-decision-tables-and-mutation-floor.md).

Why: line coverage says a branch ran, not that a test would notice it being wrong. The review of
0a77c48 found the whole "cancelled run" repair branch of plan_issue could be deleted with every
test passing. This runner changes one small thing at a time in orion_action/core/ and
config.py (a flipped comparison, `and` for `or`, a constant off by one, a deleted statement...)
and runs the fast unit tests that import the module; a mutant the tests do not notice survives.

Each mutant runs in a forked child that imports the mutated module fresh (the parent has
imported only third-party packages), so nothing leaks between mutants; the child is killed
after a timeout (an endless loop counts as killed). A mutant's id is stable under edits
elsewhere in the file: module, function, operator, the text of the changed expression and its
ordinal among identical changes in that function. Mutants that cannot change behaviour are
listed with a reason in bench/mutation-equivalent.txt; the score is killed / (all - equivalent),
and the run exits 1 below FLOOR. Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import importlib.abc
import importlib.util
import json
import os
import random
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this tree's orion_action, whatever is installed
TARGETS = sorted(p for p in (ROOT / "orion_action/core").glob("*.py") if p.name != "__init__.py") + [
    ROOT / "orion_action/config.py"
]
EQUIVALENT = ROOT / "bench/mutation-equivalent.txt"
SCORE = ROOT / "bench/mutation-score.json"
FLOOR = 0.95
# The fast unit files that pin each module, chosen by hand: the module's own file and the ones
# that drive it through its callers. Every unit file that imports a module would do too, at
# several times the cost (a survivor runs all of its tests).
TESTS: dict[str, tuple[str, ...]] = {
    "orion_action/core/arbitration.py": ("test_arbitration.py", "test_claim_holes.py", "test_outage_attempts.py",
                                         "test_late_unqueue.py"),
    "orion_action/core/beat.py": ("test_beat.py", "test_adaptive_holding.py"),
    "orion_action/core/cancelled.py": ("test_standing_cancel.py", "test_lock_gone.py"),
    "orion_action/core/cost.py": ("test_cost.py", "test_dashboard_render.py"),
    "orion_action/core/dashboard.py": ("test_dashboard_render.py", "test_dashboard_edges.py",
                                       "test_dashboard_rows.py"),
    "orion_action/core/ending.py": ("test_ending.py", "test_outage_holding.py"),
    "orion_action/core/issue.py": ("test_attempts.py", "test_issue_log.py", "test_trusted_records.py",
                                   "test_outage_attempts.py", "test_plan.py"),
    "orion_action/core/liveness.py": ("test_liveness.py", "test_observe.py", "test_plan.py"),
    "orion_action/core/lock_gone.py": ("test_lock_gone.py",),
    "orion_action/core/markdown.py": ("test_record.py", "test_result.py", "test_dashboard_render.py",
                                      "test_dashboard_edges.py", "test_report.py"),
    "orion_action/core/pause.py": ("test_pause_reason.py",),
    "orion_action/core/plan.py": ("test_plan_fates.py", "test_plan.py", "test_plan_cancel.py",
                                  "test_plan_release.py", "test_fresh_beat.py",
                                  "test_cancel_means_cancel.py", "test_outage_attempts.py",
                                  "test_drain_identity.py", "test_plan_strand.py", "test_strand_lookback.py",
                                  "test_queue_repair_routing.py"),
    "orion_action/core/queue.py": ("test_queue_order.py",),
    "orion_action/core/record.py": ("test_record.py", "test_visible_line.py", "test_issue_log.py",
                                    "test_trusted_records.py"),
    "orion_action/core/requeue.py": ("test_late_unqueue.py", "test_stale_removal.py", "test_taken_queueing.py"),
    "orion_action/core/result.py": ("test_result.py",),
    "orion_action/core/stale_add.py": ("test_stale_add.py", "test_stale_fate.py"),
    "orion_action/core/survey.py": ("test_core_survey.py", "test_report.py", "test_dashboard_render.py"),
    "orion_action/config.py": ("test_config.py", "test_config_loader.py", "test_schema.py"),
}

_FLIP = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
Build = Callable[[], ast.Module]
_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult}


@dataclass(frozen=True)
class Mutant:
    id: str
    module: str  # path relative to the repository
    scope: str  # the enclosing definitions, dotted (".Holding.beat"); "" at module level
    fresh: bool  # needs a fresh import: outside a function, nested deeper, or run at import time
    line: int
    op: str
    before: str
    after: str


def _enums(trees: list[ast.Module]) -> dict[str, list[str]]:
    """Enum classes of the target modules and their member names, for member swaps."""
    found: dict[str, list[str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(b, (ast.Name, ast.Attribute)) and "Enum" in ast.unparse(b) for b in node.bases
            ):
                members = [t.id for s in node.body if isinstance(s, ast.Assign)
                           for t in s.targets if isinstance(t, ast.Name) and t.id.isupper()]
                if len(members) > 1:
                    found[node.name] = members
    return found


def _skipped(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: docstrings, annotations, asserts, f-strings and decorators
    (messages and types are not behaviour the unit suite is asked to pin)."""
    skip: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
            getattr(body[0], "value", None), ast.Constant
        ) and isinstance(body[0].value.value, str):
            mark(body[0])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mark(node.returns)
            for d in node.decorator_list:
                mark(d)
            for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
                mark(a.annotation)
        if isinstance(node, ast.ClassDef):
            for d in node.decorator_list:
                mark(d)
        if isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        if isinstance(node, (ast.Assert, ast.JoinedStr, ast.Import, ast.ImportFrom)):
            mark(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            mark(node)
    return skip


def _variants(node: ast.AST, enums: dict[str, list[str]]) -> Iterator[tuple[str, ast.AST]]:
    """(operator, replacement node) for one node; the replacement stands in the node's place."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _FLIP:
                new = copy.deepcopy(node)
                new.ops[i] = _FLIP[type(op)]()
                yield "compare", new
    elif isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "and/or", new
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        yield "drop-unary", copy.deepcopy(node.operand)
    elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        new = copy.deepcopy(node)
        new.op = _ARITH[type(node.op)]()
        yield "arith", new
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield "bool", ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        yield "const+1", ast.Constant(node.value + 1)
        yield "const-1", ast.Constant(node.value - 1)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in enums:
        members = enums[node.value.id]
        if node.attr in members:
            other = members[(members.index(node.attr) + 1) % len(members)]
            yield "enum", ast.Attribute(ast.Name(node.value.id, ast.Load()), other, ast.Load())
    elif isinstance(node, ast.Name) and node.id in ("min", "max") and isinstance(node.ctx, ast.Load):
        yield "min/max", ast.Name("max" if node.id == "min" else "min", ast.Load())
    elif isinstance(node, (ast.If, ast.IfExp)):
        new = copy.deepcopy(node)
        new.test = ast.UnaryOp(ast.Not(), new.test)
        yield "negate-if", new
    elif isinstance(node, ast.Return) and node.value is not None and not (
        isinstance(node.value, ast.Constant) and node.value.value is None
    ) and not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, bool)):
        yield "return-none", ast.Return(ast.Constant(None))
    if isinstance(node, (ast.Expr, ast.Raise, ast.AugAssign, ast.If, ast.Continue, ast.Break)) or (
        isinstance(node, ast.Assign) and not all(isinstance(t, ast.Name) for t in node.targets)
    ):
        yield "delete", ast.Pass()


def _sites(tree: ast.Module) -> Iterator[tuple[ast.AST, str, int | None, str]]:
    """(parent, field, index, enclosing function) for every node, in a fixed order."""
    def walk(node: ast.AST, scope: str) -> Iterator[tuple[ast.AST, str, int | None, str]]:
        for name, value in ast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for i, child in enumerate(items):
                if isinstance(child, ast.AST):
                    inner = f"{scope}.{child.name}" if isinstance(
                        child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else scope
                    yield node, name, i if isinstance(value, list) else None, inner
                    yield from walk(child, inner)
    yield from walk(tree, "")


def mutants(path: Path, enums: dict[str, list[str]]) -> list[tuple[Mutant, Build]]:
    """Every mutant of one module, with how to build its mutated tree (built in the child:
    a thousand copies of a module's tree would not fit in memory comfortably)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _skipped(tree)
    rel = str(path.relative_to(ROOT))
    seen: Counter[str] = Counter()
    # Functions the module calls while it is imported (to build a table, or a closure kept in
    # one): swapping their code afterwards would change nothing.
    body_calls = [n for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    at_import = {n.func.id for n in body_calls if isinstance(n.func, ast.Name)}
    kinds = {n.name: "class" if isinstance(n, ast.ClassDef) else "def" for n in tree.body
             if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    out: list[tuple[Mutant, Build]] = []
    for parent, name, index, scope in list(_sites(tree)):
        node = getattr(parent, name) if index is None else getattr(parent, name)[index]
        if id(node) in skip:
            continue
        for op, new in _variants(node, enums):
            if op == "delete" and isinstance(parent, ast.Module):
                continue
            before = ast.unparse(node).splitlines()[0][:80]
            after = ast.unparse(new).splitlines()[0][:80]
            key = f"{rel}:{scope}:{op}:{before}->{after}"
            seen[key] += 1
            digest = hashlib.sha1(f"{key}#{seen[key]}".encode()).hexdigest()[:10]
            line = getattr(node, "lineno", 0)
            parts = scope.strip(".").split(".")
            depth = 1 if kinds.get(parts[0]) == "def" else 2
            fresh = len(parts) != depth or parts[0] in at_import or kinds.get(parts[0]) is None
            mutant = Mutant(f"{Path(rel).stem}-{digest}", rel, scope, fresh, line, op, before, after)
            out.append((mutant, partial(_replace, tree, parent, name, index, new)))
    return out


def _replace(original: ast.Module, parent: ast.AST, name: str, index: int | None, new: ast.AST) -> ast.Module:
    """A copy of `original` with `new` where `parent.name[index]` is."""
    mutated = copy.deepcopy(original)
    twin = dict(zip(map(id, ast.walk(original)), ast.walk(mutated), strict=True))[id(parent)]
    if index is None:
        setattr(twin, name, new)
    else:
        getattr(twin, name)[index] = new
    return ast.fix_missing_locations(mutated)


def tests_for(rel: str) -> list[str]:
    """The unit files run against a module's mutants (TESTS; a new module must be added)."""
    if rel not in TESTS:
        raise SystemExit(f"mutate: {rel} has no tests chosen in scripts/mutate.py TESTS")
    return [f"tests/unit/{name}" for name in TESTS[rel]]


def _function(module: object, scope: str, kinds: dict[str, str]) -> object | None:
    """The function object whose code holds a mutant at `scope`: a module-level function or a
    method (an inner function is part of its outer function's code), or None."""
    parts = scope.strip(".").split(".")
    if not parts[0] or kinds.get(parts[0]) is None:
        return None
    obj = getattr(module, parts[0], None)
    if kinds[parts[0]] == "class":
        if len(parts) < 2:
            return None
        obj = vars(obj).get(parts[1]) if isinstance(obj, type) else None
    obj = getattr(obj, "fget", obj)  # property
    obj = getattr(obj, "__func__", obj)  # staticmethod, classmethod
    return obj if hasattr(obj, "__code__") else None


def _swap(mutant: Mutant, build: Build) -> bool:
    """In this (forked) process, give the already imported function the mutant's code, so every
    reference to it (`from ... import f` in a test too) runs the mutant. False if the mutant is
    not inside a function (a table, a default of a dataclass field): that one needs a fresh import."""
    if mutant.fresh:
        return False
    name = mutant.module[:-3].replace("/", ".")
    module = sys.modules[name]
    tree = build()
    kinds = {n.name: "class" if isinstance(n, ast.ClassDef) else "def" for n in tree.body
             if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    old = _function(module, mutant.scope, kinds)
    if old is None:
        return False
    scratch: dict[str, object] = {"__name__": name, "__file__": str(ROOT / mutant.module)}
    exec(compile(tree, str(ROOT / mutant.module), "exec"), scratch)
    new = _function(_Namespace(scratch), mutant.scope, kinds)
    try:
        old.__code__ = new.__code__  # type: ignore[attr-defined]
        old.__defaults__ = new.__defaults__  # type: ignore[attr-defined]
        old.__kwdefaults__ = new.__kwdefaults__  # type: ignore[attr-defined]
    except (ValueError, TypeError):  # a different closure: import it afresh instead
        return False
    return True


class _Namespace:
    def __init__(self, values: dict[str, object]):
        self.__dict__.update(values)


class _Source(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module from a mutated code object instead of its file (for a fresh import)."""

    def __init__(self, name: str, code: object, origin: str):
        self.name, self.code, self.origin = name, code, origin

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        if fullname == self.name:
            return importlib.util.spec_from_loader(fullname, self, origin=self.origin)
        return None

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        return None

    def exec_module(self, module):  # type: ignore[no-untyped-def]
        module.__file__ = self.origin
        exec(self.code, module.__dict__)


def _quiet() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def _profile() -> None:
    from hypothesis import settings

    settings.register_profile("mutate", database=None, derandomize=True, deadline=None)
    settings.load_profile("mutate")


def _fresh(mutant: Mutant, build: Build) -> int:
    """The slow path (`--one ID`, in a new interpreter): import the mutated module afresh and run
    its tests under pytest; pytest's exit code."""
    import pytest

    _quiet()
    name = mutant.module[:-3].replace("/", ".")
    sys.meta_path.insert(0, _Source(name, compile(build(), str(ROOT / mutant.module), "exec"),
                                    str(ROOT / mutant.module)))
    _profile()
    return int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests_for(mutant.module)],
                           plugins=[_ExamplesFirst()]))


class _ExamplesFirst:
    """Runs the example tests before the property tests: a killed mutant usually dies in the
    first cheap example, and only survivors pay for every Hypothesis run."""

    def pytest_collection_modifyitems(self, items: list) -> None:  # type: ignore[type-arg]
        items.sort(key=lambda i: bool(getattr(getattr(i, "obj", None), "is_hypothesis_test", False)))


class _Runner(_ExamplesFirst):
    """A pytest plugin: the tests are collected once, in this process; then each mutant runs in
    a forked child that swaps one function's code and runs its module's tests, stopping at the
    first failure (a mutant outside any function runs in a fresh interpreter instead)."""

    def __init__(self, chosen: list[tuple[Mutant, Build]], workers: int, timeout: float):
        self.chosen, self.workers, self.timeout = chosen, workers, timeout
        self.results: list[tuple[str, float]] = []
        self.clean_failed: list[str] = []

    def pytest_runtestloop(self, session) -> bool:  # type: ignore[no-untyped-def]
        by_file: dict[str, list] = {}  # type: ignore[type-arg]
        for item in session.items:
            by_file.setdefault(str(Path(item.path).relative_to(ROOT)), []).append(item)
        rels = sorted({m.module for m, _ in self.chosen})
        items = {rel: [i for f in tests_for(rel) for i in by_file.get(f, [])] for rel in rels}
        clean = self._run([(None, None, items[rel]) for rel in rels], 600)
        self.clean_failed = [r for r, (verdict, _) in zip(rels, clean, strict=True) if verdict != "survived"]
        if self.clean_failed:
            return True
        slowest = max((s for _, s in clean), default=1.0)
        self.timeout = self.timeout or max(30.0, 3 * slowest)
        print(f"mutate: {len(self.chosen)} mutants, {self.workers} at a time, "
              f"{self.timeout:.0f}s each at most", file=sys.stderr, flush=True)
        self.results = self._run([(m, b, items[m.module]) for m, b in self.chosen], self.timeout)
        return True

    def _spawn(self, mutant: Mutant | None, build: Build | None, items: list) -> int:  # type: ignore[type-arg]
        pid = os.fork()
        if pid:
            return pid
        code = 3
        try:
            os.setpgid(0, 0)
            if mutant is not None and build is not None and not _swap(mutant, build):
                os.execv(sys.executable, [sys.executable, __file__, "--one", mutant.id])
            _quiet()
            from _pytest.runner import runtestprotocol

            code = 0
            for item in items:
                if any(r.failed for r in runtestprotocol(item, log=False, nextitem=None)):
                    code = 1
                    break
        finally:
            os._exit(code)

    def _run(self, jobs: list, timeout: float) -> list[tuple[str, float]]:  # type: ignore[type-arg]
        """Run jobs `workers` at a time; one (killed|survived|timeout, seconds) per job, in order."""
        pending = list(reversed(list(enumerate(jobs))))
        results: list[tuple[str, float]] = [("", 0.0)] * len(jobs)
        running: dict[int, tuple[int, float]] = {}
        done = 0
        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    k, job = pending.pop()
                    running[self._spawn(*job)] = (k, time.monotonic())
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    now = time.monotonic()
                    for p, (k, started) in list(running.items()):
                        if now - started > timeout:
                            os.killpg(p, signal.SIGKILL)
                            os.waitpid(p, 0)
                            del running[p]
                            results[k] = ("timeout", now - started)
                    time.sleep(0.01)
                    continue
                if pid not in running:
                    continue
                k, started = running.pop(pid)
                code = os.waitstatus_to_exitcode(status)
                results[k] = ("survived" if code == 0 else "killed", time.monotonic() - started)
                mutant = jobs[k][0]
                if code == 0 and mutant is not None:  # at once: a long run shows its survivors early
                    print(f"  survived {mutant.id}  {mutant.module}:{mutant.line}", file=sys.stderr,
                          flush=True)
                done += 1
                if done % 50 == 0:
                    print(f"  {done}/{len(jobs)} run", file=sys.stderr, flush=True)
        finally:
            for p in running:  # interrupted: no child outlives the run
                os.killpg(p, signal.SIGKILL)
                os.waitpid(p, 0)
        return results


def read_equivalent() -> dict[str, str]:
    """id -> reason, from bench/mutation-equivalent.txt (`id  reason`; # starts a comment)."""
    out: dict[str, str] = {}
    if EQUIVALENT.exists():
        for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                ident, _, reason = line.partition(" ")
                out[ident] = reason.strip()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", help="paths of modules to mutate (default: core/ and config.py)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutants run at once")
    ap.add_argument("--timeout", type=float, default=0.0,
                    help="seconds per mutant (default: 3 x the slowest clean run, at least 30)")
    ap.add_argument("--sample", type=int, default=0, help="run only this many mutants, drawn at random")
    ap.add_argument("--seed", type=int, default=0, help="the sample's seed")
    ap.add_argument("--list", action="store_true", help="print the mutants and exit")
    ap.add_argument("--one", metavar="ID", help=argparse.SUPPRESS)  # the fresh-import path of one mutant
    ap.add_argument("--no-write", action="store_true", help="do not write bench/mutation-score.json")
    args = ap.parse_args(argv)

    os.chdir(ROOT)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # kill the children on the way out
    paths = [Path(m).resolve() for m in args.modules] or TARGETS
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in TARGETS]
    enums = _enums(trees)
    every = [(m, b) for p in paths for m, b in mutants(p, enums)]
    if args.one:
        return _fresh(*next((m, b) for m, b in every if m.id == args.one))
    if args.list:
        for m, _ in every:
            print(f"{m.id}  {m.module}:{m.line}  {m.op}  {m.before}  ->  {m.after}")
        return 0
    chosen = every
    if args.sample and args.sample < len(every):
        chosen = random.Random(args.seed).sample(every, args.sample)
    import pytest

    started = time.monotonic()
    _profile()
    runner = _Runner(chosen, args.jobs, args.timeout)
    files = sorted({f for m, _ in chosen for f in tests_for(m.module)})
    pytest.main(["-q", "-s", "-p", "no:cacheprovider", "-p", "no:randomly", *files], plugins=[runner])
    if runner.clean_failed or len(runner.results) != len(chosen):
        print(f"mutate: the unmutated tests fail for {', '.join(runner.clean_failed) or 'some module'}: "
              f"fix them first", file=sys.stderr)
        return 2
    return report(every, chosen, runner.results, time.monotonic() - started, args)


def report(every: list[tuple[Mutant, Build]], chosen: list[tuple[Mutant, Build]],
           results: list[tuple[str, float]], seconds: float, args: argparse.Namespace) -> int:
    """Print the survivors and the score, write bench/mutation-score.json; 0 at or above FLOOR."""
    equivalent = read_equivalent()
    known = {m.id for m, _ in every}
    per: dict[str, Counter[str]] = {}
    survivors, killed_equivalent = [], []
    for (mutant, _), (verdict, _) in zip(chosen, results, strict=True):
        c = per.setdefault(mutant.module, Counter())
        c["mutants"] += 1
        if mutant.id in equivalent:
            c["equivalent"] += 1
            if verdict != "survived":
                killed_equivalent.append(mutant.id)
        elif verdict == "survived":
            c["survived"] += 1
            survivors.append(mutant)
        else:
            c["killed"] += 1
    stale = sorted(set(equivalent) - known) if not args.modules else []
    total = sum(c["mutants"] - c["equivalent"] for c in per.values())
    killed = sum(c["killed"] for c in per.values())
    score = killed / total if total else 1.0
    for m in sorted(survivors, key=lambda m: (m.module, m.line)):
        print(f"survived {m.id}  {m.module}:{m.line}  {m.op}  {m.before}  ->  {m.after}")
    for ident in killed_equivalent:
        print(f"mutate: {ident} is listed as equivalent but the tests kill it: take it off the list")
    for ident in stale:
        print(f"mutate: {ident} is listed as equivalent but no longer exists: take it off the list")
    sample = f" (a sample of {len(chosen)} of {len(every)})" if len(chosen) < len(every) else ""
    print(f"mutate: {killed} of {total} non-equivalent mutants killed ({100 * score:.1f} %), "
          f"{sum(c['equivalent'] for c in per.values())} equivalent, {len(survivors)} survived, "
          f"in {seconds:.0f}s{sample}")
    if not args.no_write:
        SCORE.write_text(json.dumps({
            "floor": FLOOR,
            "score": round(score, 4),
            "mutants": len(chosen),
            "of": len(every),
            "non_equivalent": total,
            "killed": killed,
            "equivalent": sum(c["equivalent"] for c in per.values()),
            "survived": len(survivors),
            "seconds": round(seconds),
            "jobs": args.jobs,
            "modules": {k: dict(v) for k, v in sorted(per.items())},
            "survivors": [asdict(m) for m in survivors],
        }, indent=2) + "\n", encoding="utf-8")
    return 0 if score >= FLOOR and not killed_equivalent and not stale else 1


if __name__ == "__main__":
    sys.exit(main())
