"""action.yml, executed the way the Actions runner executes a composite action.

A small runner stand-in (:class:`CompositeRunner`) parses action.yml with PyYAML, evaluates
the few expressions the action uses (`inputs.*`, `github.*`, `steps.*`) in `env:`, `with:`,
`continue-on-error:` and `outputs:` (and refuses any expression inside a `run:` script), gives
every step its own GITHUB_OUTPUT file and parses it back, and runs each script as the runner
does for `shell: bash`: `bash --noprofile --norc -eo pipefail {0}`. The product talks to the
emulator through the rig's proxy.

Most tests set ORION_ACTION_PYTHON to this interpreter (which has requirements.txt) so they
do not build a virtual environment; one test builds it for real.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml
from rig import ROOT, Emulator, RepoHandle, parse_github_output, wait_until
from rig.harness import running_record

ACTION = ROOT / "action.yml"
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


@dataclass
class StepResult:
    id: str | None
    name: str
    returncode: int
    outcome: str  # success | failure
    conclusion: str  # success | failure (continue-on-error turns failure into success)
    outputs: dict[str, str]
    stdout: str
    stderr: str


@dataclass
class ActionResult:
    ok: bool
    outputs: dict[str, str]
    steps: list[StepResult] = field(default_factory=list)
    summary: str = ""

    @property
    def log(self) -> str:
        return "\n".join(f"--- {s.name} (rc {s.returncode})\n{s.stdout}{s.stderr}" for s in self.steps)

    def step(self, step_id: str) -> StepResult:
        return next(s for s in self.steps if s.id == step_id)


class CompositeRunner:
    """Runs action.yml's steps in order, like the runner's composite action handler."""

    def __init__(self, env: dict[str, str], workspace: Path, temp: Path,
                 action_path: Path = ROOT, event: dict[str, str] | None = None) -> None:
        self.manifest = yaml.safe_load(ACTION.read_text())
        self.env = env
        self.workspace = workspace
        self.temp = temp
        self.action_path = action_path
        self.github = {"token": env["ORION_TEST_TOKEN"], "action_path": str(action_path),
                       "workspace": str(workspace), "repository": env["GITHUB_REPOSITORY"],
                       "event_name": "workflow_dispatch", "event.sender.login": "orion-bot"}
        self.github.update(event or {})  # e.g. {"event_name": "issues", "event.sender.login": ...}

    # -- expressions -------------------------------------------------------------------

    def _value(self, expr: str, inputs: dict[str, str], steps: dict[str, dict[str, Any]]) -> str:
        parts = expr.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            if parts[1] not in inputs:
                raise AssertionError(f"action.yml uses undeclared input {parts[1]!r}")
            return inputs[parts[1]]
        if parts[0] == "github" and ".".join(parts[1:]) in self.github:
            return self.github[".".join(parts[1:])]
        if parts[0] == "steps" and len(parts) in (3, 4):
            step = steps.get(parts[1])
            if step is None:
                return ""
            if len(parts) == 3 and parts[2] in ("outcome", "conclusion"):
                return str(step[parts[2]])
            if len(parts) == 4 and parts[2] == "outputs":
                return str(step["outputs"].get(parts[3], ""))
        raise AssertionError(f"the test runner does not know the expression {expr!r}")

    def evaluate(self, text: Any, inputs: dict[str, str], steps: dict[str, dict[str, Any]]) -> str:
        if isinstance(text, bool):
            return "true" if text else "false"
        return EXPR.sub(lambda m: self._value(m.group(1), inputs, steps), str(text))

    # -- running -----------------------------------------------------------------------

    def run(self, with_: dict[str, str],
            on_start: Callable[[str | None, subprocess.Popen[str]], None] | None = None,
            timeout: float = 120) -> ActionResult:
        declared = self.manifest["inputs"]
        unknown = set(with_) - set(declared)
        assert not unknown, f"inputs not declared in action.yml: {unknown}"
        inputs: dict[str, str] = {}
        for name, spec in declared.items():
            inputs[name] = with_[name] if name in with_ else str(spec.get("default", ""))
        inputs = {k: self.evaluate(v, inputs, {}) for k, v in inputs.items()}
        assert self.manifest["runs"]["using"] == "composite"
        steps: dict[str, dict[str, Any]] = {}
        result = ActionResult(ok=True, outputs={})
        summary_parts: list[str] = []
        for n, step in enumerate(self.manifest["runs"]["steps"]):
            assert "if" not in step, "the test runner does not evaluate step conditions"
            assert step.get("shell") == "bash", step
            script = step["run"]
            assert "${{" not in script, f"step {step.get('name')!r} has an expression in run:"
            env = dict(self.env)
            env.update({k: self.evaluate(v, inputs, steps) for k, v in (step.get("env") or {}).items()})
            out_file = self.temp / f"output-{n}"
            summary_file = self.temp / f"summary-{n}"
            out_file.write_text("")
            summary_file.write_text("")
            env.update(GITHUB_OUTPUT=str(out_file), GITHUB_STEP_SUMMARY=str(summary_file),
                       GITHUB_ACTION_PATH=str(self.action_path))
            script_file = self.temp / f"step-{n}.sh"
            script_file.write_text(script)
            proc = subprocess.Popen([*BASH, str(script_file)], env=env, cwd=self.workspace,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            try:
                if on_start is not None:
                    on_start(step.get("id"), proc)
                stdout, stderr = proc.communicate(timeout=timeout)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
            outputs = parse_github_output(out_file.read_text())
            outcome = "success" if proc.returncode == 0 else "failure"
            keep_going = self.evaluate(step.get("continue-on-error", False), inputs, steps) == "true"
            conclusion = "success" if outcome == "success" or keep_going else "failure"
            summary_parts.append(summary_file.read_text())
            record = StepResult(step.get("id"), self.evaluate(step.get("name", ""), inputs, steps),
                                proc.returncode, outcome, conclusion, outputs, stdout, stderr)
            result.steps.append(record)
            if step.get("id"):
                steps[step["id"]] = {"outcome": outcome, "conclusion": conclusion, "outputs": outputs}
            if conclusion == "failure":
                result.ok = False
                break
        result.summary = "".join(summary_parts)
        result.outputs = {name: self.evaluate(spec["value"], inputs, steps)
                          for name, spec in self.manifest["outputs"].items()}
        return result


# -- fixtures ----------------------------------------------------------------------------


@pytest.fixture
def action_env(orion_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The environment of a job step on a runner: no PYTHONPATH (the action must find its own
    package) and no GITHUB_TOKEN (it must come from the github-token input)."""
    env = dict(orion_env)
    env.pop("PYTHONPATH", None)
    env.pop("RUNNER_TOOL_CACHE", None)
    env["ORION_TEST_TOKEN"] = env.pop("GITHUB_TOKEN")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    env.update(GITHUB_ACTIONS="true", RUNNER_TEMP=str(runner_temp),
               ORION_ACTION_PYTHON=sys.executable, GITHUB_WORKSPACE=str(tmp_path / "workspace"))
    return env


@pytest.fixture
def runner(action_env: dict[str, str], tmp_path: Path) -> CompositeRunner:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    temp = tmp_path / "steps"
    temp.mkdir()
    return CompositeRunner(action_env, workspace, temp)


def _queued_issue(repo: RepoHandle, title: str = "work item") -> int:
    return repo.create_issue(title, labels=["orion"])


def _kill_tree(pid: int) -> None:
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()


# -- the manifest ------------------------------------------------------------------------


def test_manifest_keeps_expressions_out_of_scripts() -> None:
    manifest = yaml.safe_load(ACTION.read_text())
    assert manifest["runs"]["using"] == "composite"
    ids = {s.get("id") for s in manifest["runs"]["steps"]}
    for step in manifest["runs"]["steps"]:
        assert "${{" not in step["run"], step.get("name")
        assert step["shell"] == "bash"
        for value in (step.get("env") or {}).values():
            for expr in EXPR.findall(str(value)):
                root, _, rest = expr.partition(".")
                assert root in ("inputs", "github", "steps"), expr
                if root == "inputs":
                    assert rest in manifest["inputs"], f"undeclared input {rest}"
    for name, spec in manifest["outputs"].items():
        step_id = EXPR.search(spec["value"]).group(1).split(".")[1]  # type: ignore[union-attr]
        assert step_id in ids, f"output {name} reads unknown step {step_id}"
    orion = next(s for s in manifest["runs"]["steps"] if s.get("id") == "orion")
    last_line = [line for line in orion["run"].strip().splitlines() if line.strip()][-1]
    assert last_line.strip().startswith('exec "$ORION_PYTHON"'), last_line
    for key in ("command", "github-token", "config", "issue", "next", "require", "reason", "stage",
                "run", "dry-run", "force"):
        assert key in manifest["inputs"], key
    for key in ("issue", "exit-code", "unlocked", "completed", "requeued", "gave-up", "kept",
                "reported", "cancel", "plan"):
        assert key in manifest["outputs"], key


# -- run -----------------------------------------------------------------------------------


def test_run_works_a_queued_issue(runner: CompositeRunner, repo: RepoHandle,
                                  tmp_path: Path) -> None:
    n = _queued_issue(repo)
    seen = tmp_path / "seen.txt"
    result = runner.run({
        "command": "run", "issue": str(n), "stage": "build",
        "run": f'printf "%s %s %s\\n" "$ORION_ISSUE" "$ORION_REPO" "$ORION_STAGE" > {seen}',
    })
    assert result.ok, result.log
    assert seen.read_text().split() == [str(n), repo.full_name, "build"]
    assert set(repo.labels(n)) == {"orion-ready"}
    assert result.step("orion").returncode == 0


def test_run_sets_issue_and_exit_code_outputs(runner: CompositeRunner, repo: RepoHandle) -> None:
    """The wrapper replaces the step's shell (exec), so it writes these outputs itself."""
    n = _queued_issue(repo)
    result = runner.run({"command": "run", "next": "true", "run": "true"})
    assert result.ok, result.log
    assert result.outputs["issue"] == str(n), result.log
    assert result.outputs["exit-code"] == "0", result.log


def test_run_failure_fails_the_action_with_the_child_code(runner: CompositeRunner,
                                                         repo: RepoHandle) -> None:
    n = _queued_issue(repo)
    result = runner.run({"command": "run", "next": "true", "run": "exit 3"})
    assert not result.ok, result.log
    assert set(repo.labels(n)) == {"orion-failed"}
    assert result.step("orion").returncode == 3
    assert result.outputs["exit-code"] == "3", result.log
    assert result.steps[-1].returncode == 3, result.log


def test_run_drains_the_queue(runner: CompositeRunner, repo: RepoHandle, tmp_path: Path) -> None:
    issues = [_queued_issue(repo) for _ in range(3)]
    seen = tmp_path / "seen.txt"
    result = runner.run({"command": "run", "next": "true", "drain": "true", "max-runs": "2",
                         "run": f'echo "$ORION_ISSUE" >> {seen}'})
    assert result.ok, result.log
    assert seen.read_text().split() == [str(n) for n in issues[:2]]
    assert [set(repo.labels(n)) for n in issues] == [{"orion-ready"}, {"orion-ready"}, {"orion"}]


def test_run_on_an_empty_queue_is_not_a_failure(runner: CompositeRunner, repo: RepoHandle) -> None:
    result = runner.run({"command": "run", "next": "true", "run": "true"})
    assert result.step("orion").returncode == 75, result.log
    assert result.outputs["exit-code"] == "75", result.log
    assert result.ok, result.log
    assert result.outputs["issue"] == ""
    strict = runner.run({"command": "run", "next": "true", "run": "true", "fail-when-idle": "true"})
    assert not strict.ok and strict.steps[-1].returncode == 75, strict.log


def test_issue_text_never_reaches_a_shell(runner: CompositeRunner, repo: RepoHandle,
                                          tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    n = repo.create_issue(f"$(touch {pwned}) `touch {pwned}`", labels=["orion"],
                          body=f"'; touch {pwned}; echo '")
    result = runner.run({"command": "run", "issue": str(n), "run": 'test "$ORION_ISSUE" -gt 0'})
    assert result.ok, result.log
    assert not pwned.exists()
    assert set(repo.labels(n)) == {"orion-ready"}


@pytest.mark.parametrize(("with_", "message"), [
    ({"command": "run", "run": "true"}, "needs 'issue: N' or 'next: true'"),
    ({"command": "run", "issue": "1", "next": "true", "run": "true"}, "not both"),
    ({"command": "run", "next": "true"}, "needs the 'run' input"),
    ({"command": "run", "next": "maybe", "run": "true"}, "input 'next' must be true or false"),
    ({"command": "reconcile", "dry-run": "yes please"}, "input 'dry-run' must be true or false"),
    ({"command": "release"}, "command 'release' needs 'issue: N'"),
    ({"command": "frobnicate"}, "unknown command 'frobnicate'"),
    # A typo in `run:` (the r3 review): bash would exit 127 after the claim and burn the issue.
    ({"command": "run", "next": "true", "run": "./no-such-script.sh --fast"},
     "'./no-such-script.sh', the script's first command, does not exist; nothing was claimed"),
])
def test_bad_inputs_are_usage_errors(runner: CompositeRunner, repo: RepoHandle,
                                     with_: dict[str, str], message: str) -> None:
    n = _queued_issue(repo)
    result = runner.run(with_)
    assert not result.ok
    step = result.step("orion")
    assert step.returncode == 64
    assert message in step.stdout, result.log
    assert result.outputs["exit-code"] == "64"
    assert result.steps[-1].returncode == 64
    assert set(repo.labels(n)) == {"orion"}, "a usage error must write nothing"


def test_require_routes_work_to_the_runners_that_ask_for_it(runner: CompositeRunner,
                                                            repo: RepoHandle) -> None:
    """`require` (blank- or newline-separated, as --require): a GPU worker takes only the issue
    carrying every required label, older plain issues stay for the others; with none left it
    claims nothing, and stays green."""
    plain = _queued_issue(repo, "plain")
    gpu = repo.create_issue("needs a GPU", labels=["orion", "gpu", "big"])
    result = runner.run({"command": "run", "next": "true", "require": "gpu\n big", "run": "true"})
    assert result.ok and result.outputs["issue"] == str(gpu), result.log
    assert set(repo.labels(gpu)) == {"orion-ready", "gpu", "big"}
    assert set(repo.labels(plain)) == {"orion"}
    idle = runner.run({"command": "run", "next": "true", "require": "gpu", "run": "true"})
    assert idle.ok and idle.step("orion").returncode == 75 and idle.outputs["issue"] == "", idle.log
    assert set(repo.labels(plain)) == {"orion"}


def _agent_examples() -> dict[str, dict[str, Any]]:
    """The agent examples as a repository installs them: name -> (workflow, its agent label,
    the orion-action step's `with:`)."""
    found = {}
    for path in sorted((ROOT / "examples").glob("orion-agent-*.yml")):
        wf = yaml.safe_load(path.read_text())
        agent = wf["jobs"]["agent"]
        label = next(s["env"]["AGENT_LABEL"] for s in agent["steps"] if "AGENT_LABEL" in (s.get("env") or {}))
        orion = next(s for s in agent["steps"] if "orion-action@" in str(s.get("uses", "")))
        found[path.name] = {"if": agent["if"], "label": label, "with": orion["with"]}
    return found


# A hang guard, not a time budget: nine action runs of four steps each, one after another,
# took 122 s on the shared machine at load 15 (35 s at load 5), past the suite's 120 s default.
@pytest.mark.timeout(600)
def test_installing_every_agent_example_starts_one_agent_per_issue_on_the_rig(
        action_env: dict[str, str], repo: RepoHandle, tmp_path: Path) -> None:
    """Issue 18's routing, on the rig: the three agent examples installed side by side. Every
    label event goes to every workflow; each example's own `if:` decides whether its agent job
    starts, and the started job runs the action with the example's own inputs (only `run` is a
    stand-in that records which agent ran). Each issue labelled for an agent is claimed by that
    agent's run alone; an issue labelled for no agent starts none. Then the same routing as
    `require` (dispatched or draining workers, `run --next`): each agent claims only issues
    carrying its label and leaves the others queued."""
    from workflow_expressions import evaluate

    agents = _agent_examples()
    assert len(agents) == 3 and len({a["label"] for a in agents.values()}) == 3
    (tmp_path / "workspace").mkdir()
    ran = tmp_path / "ran.txt"
    ran.touch()
    count = 0

    def start(name: str, with_: dict[str, str]) -> ActionResult:
        nonlocal count
        count += 1
        temp = tmp_path / f"steps-{count}"
        temp.mkdir()
        runner = CompositeRunner(action_env, tmp_path / "workspace", temp,
                                 event={"event_name": "issues", "event.sender.login": "orion-bot"})
        return runner.run({**with_, "run": f'echo "{name} $ORION_ISSUE" >> {ran}'})

    # Labelled by a person, one label after the other: each `labeled` event reaches every workflow.
    issues = {name: repo.create_issue(f"for {a['label']}") for name, a in agents.items()}
    plain = repo.create_issue("for no agent")
    labelling = [(issues[name], ["orion", a["label"]]) for name, a in agents.items()] + [(plain, ["orion"])]
    for n, labels in labelling:
        for i, added in enumerate(labels):
            repo.add_label(n, added)
            now_on = [{"name": x} for x in labels[: i + 1]]
            event = {"github": {"event_name": "issues", "event": {
                "label": {"name": added}, "issue": {"number": n, "labels": now_on}}}}
            for name, a in agents.items():
                if not evaluate(a["if"], event):
                    continue
                with_ = {k: str(v) for k, v in a["with"].items() if k != "run"}
                assert with_["issue"] == "${{ github.event.issue.number || inputs.issue }}"
                with_["issue"] = str(n)
                assert "${{" not in "".join(with_.values()), with_
                result = start(name, with_)
                assert result.ok and result.outputs["exit-code"] == "0", result.log
    assert sorted(ran.read_text().splitlines()) == sorted(f"{name} {issues[name]}" for name in agents)
    for name, a in agents.items():
        assert set(repo.labels(issues[name])) == {"orion-ready", a["label"]}
    assert set(repo.labels(plain)) == {"orion"}, "no agent's label: no agent touched it"

    # `require`: every agent's worker asks the queue for its own label, twice (the second is idle).
    ran.write_text("")
    issues = {name: repo.create_issue(f"next for {a['label']}", labels=["orion", a["label"]])
              for name, a in agents.items()}
    for _ in range(2):
        for name, a in agents.items():
            result = start(name, {"command": "run", "next": "true", "require": a["label"]})
            assert result.ok and result.outputs["exit-code"] in ("0", "75"), result.log
    assert sorted(ran.read_text().splitlines()) == sorted(f"{name} {issues[name]}" for name in agents)
    assert set(repo.labels(plain)) == {"orion"}


def test_pause_and_resume_from_the_action(runner: CompositeRunner, repo: RepoHandle) -> None:
    """`command: pause` with a `reason`, then `resume`: while paused a run claims nothing."""
    n = _queued_issue(repo)
    paused = runner.run({"command": "pause", "reason": "deploy freeze"})
    assert paused.ok, paused.log
    description = repo.api("GET", "/labels/orion")["description"]
    assert description.startswith("paused") and "deploy freeze" in description
    held = runner.run({"command": "run", "next": "true", "run": "true"})
    assert held.step("orion").returncode == 75 and "deploy freeze" in held.log, held.log
    assert set(repo.labels(n)) == {"orion"}
    resumed = runner.run({"command": "resume"})
    assert resumed.ok, resumed.log
    assert not repo.api("GET", "/labels/orion")["description"].startswith("paused")
    worked = runner.run({"command": "run", "next": "true", "run": "true"})
    assert worked.ok and worked.outputs["issue"] == str(n), worked.log


def test_run_is_the_step_process_and_gets_the_cancel_signal(
        runner: CompositeRunner, repo: RepoHandle, tmp_path: Path) -> None:
    """A cancelled job sends SIGINT to the step's process: because the script ends in exec,
    that process is the wrapper, which stops the child and ends the run as cancelled."""
    n = _queued_issue(repo)
    started = tmp_path / "started"
    seen: dict[str, int] = {}

    def cancel(step_id: str | None, proc: subprocess.Popen[str]) -> None:
        if step_id != "orion":
            return
        try:
            wait_until(started.exists, message="the child never started")
            step = psutil.Process(proc.pid)
            seen["cmdline_is_python"] = int("orion_action" in " ".join(step.cmdline()))
            seen["child"] = int(started.read_text())
            os.kill(proc.pid, signal.SIGINT)
        except BaseException:
            _kill_tree(proc.pid)
            raise

    result = runner.run({"command": "run", "issue": str(n),
                         "run": f'echo $$ > {started}.tmp; mv {started}.tmp {started}; exec sleep 300'},
                        on_start=cancel)
    assert seen["cmdline_is_python"] == 1, "the step's process is not the wrapper (no exec?)"
    assert result.step("orion").returncode == 128 + signal.SIGINT, result.log
    assert not psutil.pid_exists(seen["child"]) or \
        psutil.Process(seen["child"]).status() == psutil.STATUS_ZOMBIE
    assert set(repo.labels(n)) == set(), "the Cancel button cancels the run (run.on_signal: cancel)"


def test_an_issues_event_checks_who_added_the_label(action_env: dict[str, str], repo: RepoHandle,
                                                    tmp_path: Path) -> None:
    """On an `issues` event the action passes the sender as --actor; the run asks GitHub who
    added the label (docs/adr/0033): a triager's label starts nothing (a green step, like an
    empty queue) and leaves the queue with a comment; the owner's label starts the run."""
    n = repo.create_issue("work")
    repo.api("PUT", "/collaborators/mallory", json={"permission": "triage"})
    repo.api("POST", f"/issues/{n}/labels", token=Emulator.OUTSIDER_TOKEN, json={"labels": ["orion"]})
    ran = tmp_path / "ran"
    (tmp_path / "workspace").mkdir()
    results = {}
    for sender in ("mallory", "orion-bot"):
        temp = tmp_path / f"steps-{sender}"
        temp.mkdir()
        runner = CompositeRunner(action_env, tmp_path / "workspace", temp,
                                 event={"event_name": "issues", "event.sender.login": sender})
        results[sender] = runner.run({"command": "run", "issue": str(n), "run": f"touch {ran}"})
        if sender == "mallory":
            assert set(repo.labels(n)) == set(), "the refused issue is still queued"
            repo.add_label(n, "orion")  # the owner reads it and queues it
    denied = results["mallory"]
    assert denied.ok and denied.outputs["exit-code"] == "75", denied.log
    assert "`mallory` queued this issue and has triage access" in denied.step("orion").stderr, denied.log
    allowed = results["orion-bot"]
    assert allowed.ok and allowed.outputs["exit-code"] == "0", allowed.log
    assert ran.exists() and set(repo.labels(n)) == {"orion-ready"}


@pytest.mark.parametrize("runner_os", ["Windows", "macOS"])
def test_a_non_linux_runner_fails_early_with_one_line(action_env: dict[str, str], repo: RepoHandle,
                                                       tmp_path: Path, runner_os: str) -> None:
    env = {**action_env, "RUNNER_OS": runner_os, "RUNNER_TOOL_CACHE": str(tmp_path / "tool-cache")}
    env.pop("ORION_ACTION_PYTHON")
    (tmp_path / "workspace").mkdir()
    (tmp_path / "steps").mkdir()
    result = CompositeRunner(env, tmp_path / "workspace", tmp_path / "steps").run({"command": "status"})
    assert not result.ok
    assert [s.id for s in result.steps] == ["setup"], "it went past the first step"
    setup = result.step("setup")
    errors = [line for line in setup.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and f"Linux runners only, not {runner_os}" in errors[0], result.log
    assert not (tmp_path / "tool-cache").exists(), "a virtual environment was started"


# -- reconcile -----------------------------------------------------------------------------


def test_reconcile_empty_pass(runner: CompositeRunner, repo: RepoHandle) -> None:
    result = runner.run({"command": "reconcile"})
    assert result.ok, result.log
    for name in ("unlocked", "completed", "requeued", "gave-up", "kept", "reported"):
        assert result.outputs[name] == "0", (name, result.outputs, result.log)
    empty = {"dry_run": False, "actions": [], "dispatched": [], "read_in_full": 0}
    assert json.loads(result.outputs["plan"]) == empty
    assert "orion-action reconcile" in result.summary


# Slow: the requeue itself is tests/integration/test_reconcile.py's; `make test` runs reconcile
# through the action in test_reconcile_empty_pass.
@pytest.mark.slow
def test_reconcile_requeues_a_killed_worker(runner: CompositeRunner, repo: RepoHandle,
                                            tmp_path: Path) -> None:
    """A worker started through the action is SIGKILLed (its child dies with it); the next
    reconcile pass through the action finds it dead on this machine and requeues the issue."""
    n = _queued_issue(repo)
    started = tmp_path / "started"

    def kill(step_id: str | None, proc: subprocess.Popen[str]) -> None:
        if step_id != "orion":
            return
        try:
            wait_until(started.exists, message="the child never started")
            wait_until(lambda: "orion-working" in repo.labels(n))
            # ... and its record names the child: a won claim that never started is in doubt
            # while its unqueue may land (ADR 0072), and would be reported, not requeued
            wait_until(lambda: running_record(repo, n) is not None, message="no record named the child")
        finally:
            os.kill(proc.pid, signal.SIGKILL)

    worker = runner.run({"command": "run", "issue": str(n),
                         "run": f'touch {started}; exec sleep 300'}, on_start=kill)
    assert worker.step("orion").returncode == -signal.SIGKILL
    assert not worker.ok, "a killed worker reports no exit code, so the action fails"
    assert "orion-working" in repo.labels(n)

    dry = runner.run({"command": "reconcile", "dry-run": "true"})
    assert dry.ok, dry.log
    assert json.loads(dry.outputs["plan"])["dry_run"] is True
    assert dry.outputs["requeued"] == "1", dry.log
    assert "orion-working" in repo.labels(n), "a dry run writes nothing"

    result = runner.run({"command": "reconcile"})
    assert result.ok, result.log
    assert result.outputs["requeued"] == "1", result.log
    plan = json.loads(result.outputs["plan"])
    assert [(a["issue"], a["action"]) for a in plan["actions"]] == [(n, "requeue")]
    assert set(repo.labels(n)) == {"orion"}
    assert f"#{n}" in result.summary and "requeue" in result.summary


# -- the real virtual environment ---------------------------------------------------------


# Slow: it installs requirements.lock from the package index, twice (more than `make deps` does).
@pytest.mark.slow
def test_action_builds_a_fresh_virtualenv_for_every_use(action_env: dict[str, str], repo: RepoHandle,
                                                       tmp_path: Path) -> None:
    """No ORION_ACTION_PYTHON: the action makes a venv with python3 -m venv and pip under
    $RUNNER_TEMP and runs from it; the next use builds another and never runs what a command
    left in the first (a .pth file, as a job on a persistent runner could plant: audit
    finding 5); the runner's tool cache and the caller's Python are never touched."""
    env = dict(action_env)
    env.pop("ORION_ACTION_PYTHON")
    tool_cache = tmp_path / "tool-cache"
    env["RUNNER_TOOL_CACHE"] = str(tool_cache)
    host = subprocess.run(["python3", "-c", "import sys; print(sys.prefix)"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()
    workspace = tmp_path / "workspace"
    workspace.mkdir()

    def run(with_: dict[str, str]) -> ActionResult:
        temp = tmp_path / f"steps-{uuid.uuid4().hex[:6]}"
        temp.mkdir()
        result = CompositeRunner(env, workspace, temp).run(with_, timeout=300)
        assert result.ok, result.log
        return result

    first = run({"command": "init"})
    python = first.step("setup").outputs["python"]
    venv = Path(python).parent.parent
    assert venv.parent == Path(env["RUNNER_TEMP"]) / "orion-action"
    assert "Created" in first.step("setup").stdout
    labels = {label["name"] for label in repo.api("GET", "/labels", params={"per_page": 100})}
    assert labels >= {"orion", "orion-working", "orion-ready", "orion-failed"}
    planted = tmp_path / "planted-code-ran"
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "zz_planted.pth").write_text(f"import pathlib; pathlib.Path({str(planted)!r}).touch()\n")
    subprocess.run([python, "-c", "pass"], check=True)
    assert planted.exists(), "the planted .pth file does not run: the test would prove nothing"
    planted.unlink()

    second = run({"command": "status"})
    assert "Created" in second.step("setup").stdout
    assert second.step("setup").outputs["python"] != python
    assert not venv.exists(), "the first environment was left for reuse"
    assert not planted.exists(), "code left in the first environment ran in the second use"
    assert not tool_cache.exists()

    after = subprocess.run(["python3", "-c", "import sys; print(sys.prefix)"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert after == host and host != str(venv)
