"""This repository's workflows, the examples/ workflows, action.yml and the example
configuration, read as data.

Every workflow passes actionlint and the published workflow schema (SchemaStore's, vendored
in check-jsonschema), as scripts/lint.sh checks too; these tests also hold the project's own
rules: least privilege, no `${{ }}` inside a `run:` script (nor in the orion-action `run`
input, which bash runs), passes that never overlap, a worker per issue, runners that are
Linux, and `with:` keys that the action really declares (actionlint cannot open the action
to check them).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from workflow_expressions import evaluate

from orion_action.config import Config, load_config

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
EXAMPLES = ROOT / "examples"
ACTIONLINT_CONFIG = yaml.safe_load((ROOT / ".github" / "actionlint.yaml").read_text())
CUSTOM_LABELS = set(ACTIONLINT_CONFIG["self-hosted-runner"]["labels"])


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if True in data:  # YAML 1.1 reads the key `on` as a boolean
        data["on"] = data.pop(True)
    return data


def _steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    if "runs" in data:
        return list(data["runs"]["steps"])
    return [s for job in data["jobs"].values() for s in job.get("steps", [])]


def _is_orion(step: dict[str, Any]) -> bool:
    uses = str(step.get("uses", ""))
    return uses == "./" or uses.split("@")[0].endswith("/orion-action")


def _orion(data: dict[str, Any]) -> dict[str, Any]:
    (step,) = [s for s in _steps(data) if _is_orion(s)]
    return step


ACTION = _load(ROOT / "action.yml")
OWN = sorted(WORKFLOWS.glob("*.yml"))
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yml"))
FILES = OWN + EXAMPLE_FILES
AGENTS = {  # example -> (the agent's command line, the secret it needs)
    "orion-agent-claude-code.yml": ("claude -p ", "ANTHROPIC_API_KEY"),
    "orion-agent-codex.yml": ("codex exec ", "OPENAI_API_KEY"),
    "orion-agent-aider.yml": ("aider --message ", "ANTHROPIC_API_KEY"),
}
KEEPALIVE_CRON = "41 5 1 * *"


def test_this_repository_runs_only_ci_and_release() -> None:
    """The examples must not run here: this repository would queue self-hosted jobs."""
    assert {p.name for p in OWN} == {"ci.yml", "release.yml"}
    assert {p.name for p in EXAMPLE_FILES} == {
        "orion-worker.yml", "orion-reconcile.yml", "orion-reconcile-self-hosted.yml", *AGENTS}


def test_every_workflow_passes_the_published_schema() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         *map(str, FILES)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_workflow_passes_actionlint() -> None:
    node = shutil.which("node")
    assert node, "node is needed (the CI and `make deps` have it)"
    env = {**os.environ, "RUNNER_LABELS": " ".join(sorted(CUSTOM_LABELS))}
    result = subprocess.run([node, str(ROOT / "scripts" / "actionlint.cjs"), *map(str, FILES)],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", [*FILES, ROOT / "action.yml"], ids=lambda p: p.name)
def test_no_expression_inside_a_run_script(path: Path) -> None:
    for step in _steps(_load(path)):
        assert "${{" not in step.get("run", ""), f"{path.name}: {step.get('name', step)}"
        if _is_orion(step):
            assert "${{" not in step.get("with", {}).get("run", ""), f"{path.name}: the run input"


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_examples_use_the_action_with_declared_inputs(path: Path) -> None:
    step = _orion(_load(path))
    assert step["uses"] == "OWNER/orion-action@v1"
    unknown = set(step.get("with", {})) - set(ACTION["inputs"])
    assert not unknown, f"{path.name}: inputs action.yml does not declare: {unknown}"


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_examples_run_on_linux_and_time_out(path: Path) -> None:
    for name, job in _load(path)["jobs"].items():
        runs_on = job["runs-on"]
        if runs_on != "ubuntu-latest":
            assert runs_on[:2] == ["self-hosted", "linux"], f"{path.name}: {name}: {runs_on}"
            assert set(runs_on[2:]) <= CUSTOM_LABELS, "declare custom labels in .github/actionlint.yaml"
        assert isinstance(job["timeout-minutes"], int) and job["timeout-minutes"] > 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_permissions_are_granted_per_job(path: Path) -> None:
    """Least privilege: the workflow grants nothing (ci.yml: contents: read), each job what it
    needs; the job running orion-action can read the code (actions/checkout fails in a private
    repository without it) and write issues."""
    wf = _load(path)
    assert wf["permissions"] == ({"contents": "read"} if path.name == "ci.yml" else {})
    for name, job in wf["jobs"].items():
        if path.name != "ci.yml":
            assert isinstance(job["permissions"], dict), f"{path.name}: {name}"
        if any(_is_orion(s) for s in job.get("steps", [])):
            assert job["permissions"]["contents"] == "read" and job["permissions"]["issues"] == "write"


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_no_checkout_keeps_a_credential(path: Path) -> None:
    for step in _steps(_load(path)):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


@pytest.mark.parametrize("name", ["orion-reconcile.yml", "orion-reconcile-self-hosted.yml"])
def test_reconcile_examples(name: str) -> None:
    wf = _load(EXAMPLES / name)
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    crons = [s["cron"] for s in wf["on"]["schedule"]]
    assert KEEPALIVE_CRON in crons
    (cadence,) = [c for c in crons if c != KEEPALIVE_CRON]
    step = 15 if name == "orion-reconcile.yml" else 5  # hosted minutes are billed
    assert re.fullmatch(rf"[1-9]-59/{step} \* \* \* \*", cadence), cadence
    dispatch = wf["on"]["workflow_dispatch"]["inputs"]["dry-run"]
    assert dispatch["type"] == "boolean" and dispatch["default"] is False
    assert wf["concurrency"] == {"group": "orion-reconcile", "cancel-in-progress": False}
    assert "dispatch: {workflow: orion-worker.yml}" in text
    # The cost formula of docs/operations.md (ADR 0018), not v0.1's N + 1 reads.
    assert "2 x ceil(N/100) + 2" in text and "N + 1" not in text
    reconcile, keepalive = wf["jobs"]["reconcile"], wf["jobs"]["keepalive"]
    # actions: write for immediate pickup (dispatch.workflow starts the worker workflow).
    assert reconcile["permissions"] == {"contents": "read", "issues": "write", "actions": "write"}
    assert reconcile["if"] == f"github.event.schedule != '{KEEPALIVE_CRON}'"
    orion = _orion({"jobs": {"reconcile": reconcile}})
    assert orion["with"]["command"] == "reconcile" and "inputs.dry-run" in orion["with"]["dry-run"]
    assert keepalive["if"] == f"github.event.schedule == '{KEEPALIVE_CRON}'"
    assert keepalive["permissions"] == {"actions": "write"}
    assert "/enable" in keepalive["steps"][0]["run"]
    if name == "orion-reconcile-self-hosted.yml":
        assert "orion-reconcile" in reconcile["runs-on"]
        assert "never on a machine where coding agents" in text


def test_worker_example() -> None:
    wf = _load(EXAMPLES / "orion-worker.yml")
    assert wf["on"]["issues"]["types"] == ["labeled"]
    assert "issue" in wf["on"]["workflow_dispatch"]["inputs"]
    assert wf["on"]["schedule"], "a schedule drains the queue (requeues trigger no event)"
    assert "concurrency" not in wf, "at job level: a skipped job must not join the group"
    (job,) = wf["jobs"].values()
    group = job["concurrency"]["group"]
    assert "github.event.issue.number" in group and "inputs.issue" in group
    assert job["concurrency"]["cancel-in-progress"] is False
    assert job["permissions"] == {"contents": "read", "issues": "write", "actions": "write"}
    # Immediate pickup: the run name carries the issue, so no second run is dispatched for it.
    assert "inputs.issue" in wf["run-name"] and "#" in wf["run-name"]
    assert "github.event.label.name == 'orion'" in job["if"]
    orion = _orion(wf)
    assert orion["with"]["command"] == "run"
    assert "$ORION_ISSUE_FILE" in orion["with"]["run"]
    assert "github.event.issue.number" in orion["with"]["issue"]
    assert "github.event.issue" in orion["with"]["next"]
    assert orion["with"]["drain"] == orion["with"]["next"], "the schedule drains the queue"


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_agent_examples(name: str) -> None:
    """The agent holds no GitHub token: its job can only read code and write issues, the
    checkout keeps no credential, its step is given none; the commits leave as a bundle and a
    second job, on a hosted runner, pushes them and opens the pull request without running
    anything of the agent's. Its spend is bounded and the header says retries multiply it."""
    command, secret = AGENTS[name]
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    wf = _load(EXAMPLES / name)
    assert wf["on"]["issues"]["types"] == ["labeled"]
    assert wf["on"]["workflow_dispatch"]["inputs"]["issue"]["required"] is True
    assert "#${{ github.event.issue.number || inputs.issue }}" in wf["run-name"]
    assert "schedule" not in wf["on"], "a schedule would take issues whoever queued them"
    assert "concurrency" not in wf, "at job level: a skipped job must not join the group"
    agent, pull_request = wf["jobs"]["agent"], wf["jobs"]["pull-request"]
    assert agent["permissions"] == {"contents": "read", "issues": "write"}
    assert agent["concurrency"] == {
        "group": "orion-agent-${{ github.event.issue.number || inputs.issue }}", "cancel-in-progress": False}
    orion = _orion({"jobs": {"agent": agent}})
    assert orion["env"] == {secret: f"${{{{ secrets.{secret} }}}}"}, "the secret goes in by env:"
    assert "github-token" not in orion["with"] and "app-private-key" not in orion["with"]
    script = orion["with"]["run"]
    assert command in script
    assert "secrets." not in script and "GITHUB_TOKEN" not in script and "GH_TOKEN" not in script
    assert "git push" not in script and "gh " not in script, "pushing is the next job's"
    assert 'jq -r .title "$ORION_ISSUE_FILE"' in script and ".body" in script
    assert "::stop-commands::" in script, "agent output must not issue workflow commands"
    assert 'git bundle create "$RUNNER_TEMP/orion-agent.bundle"' in script
    assert orion["with"]["command"] == "run" and "next" not in orion["with"]
    assert "--max-budget-usd" in script if "claude" in command else "timeout 60m " + command in script
    assert "retry.max_attempts" in text and "max_attempts x" in text
    assert "--ephemeral" in text and "Keep the reconciler off agent machines" in text
    upload = next(s for s in agent["steps"] if "upload-artifact" in str(s.get("uses", "")))
    assert upload["if"] == "steps.orion.outputs.exit-code == '0' && steps.orion.outputs.issue != ''"
    assert pull_request["needs"] == "agent" and pull_request["runs-on"] == "ubuntu-latest"
    assert pull_request["permissions"] == {"contents": "write", "pull-requests": "write", "issues": "read"}
    assert pull_request["if"] == "needs.agent.outputs.exit-code == '0' && needs.agent.outputs.issue != ''"
    runs = "\n".join(s.get("run", "") for s in pull_request["steps"])
    assert "git fetch --quiet" in runs and "git push --force origin" in runs and "gh pr create" in runs
    assert "make" not in runs and "bash " not in runs and "./" not in runs, "nothing of the agent's runs"


def _label_event(added: str, labels: list[str], number: int = 7) -> dict[str, Any]:
    return {"github": {"event_name": "issues", "event": {
        "label": {"name": added}, "issue": {"number": number, "labels": [{"name": n} for n in labels]}}}}


def _started(event: dict[str, Any]) -> list[str]:
    """The agent examples whose agent job this event starts."""
    return [name for name in sorted(AGENTS)
            if evaluate(_load(EXAMPLES / name)["jobs"]["agent"]["if"], event)]


def test_the_expression_reader_reads_what_it_is_given() -> None:
    event = _label_event("bug", ["bug", "orion"])
    assert evaluate("github.event.label.name == 'bug' && !contains(github.event.issue.labels.*.name, 'x')",
                     event) is True
    assert evaluate("(github.event_name == 'push' || github.event.label.name == 'orion')", event) is False


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_installing_every_agent_starts_exactly_one_per_issue(name: str) -> None:
    """One label per agent: whichever order a person adds the queue label and the agent's
    label, one event starts this agent and no other; adding both at once starts this agent's
    workflow twice at most, and the two runs share one concurrency group (the second waits,
    then finds the issue taken). Any other label starts nothing."""
    agent_label = f"agent:{name.removeprefix('orion-agent-').removesuffix('.yml')}"
    for order in (["orion", agent_label], [agent_label, "orion"]):
        runs = [_started(_label_event(added, order[: i + 1])) for i, added in enumerate(order)]
        assert sorted(sum(runs, [])) == [name], (order, runs)
    both = [_started(_label_event(added, ["orion", agent_label])) for added in ("orion", agent_label)]
    assert {n for started in both for n in started} == {name}
    assert _started(_label_event("bug", ["orion", agent_label, "bug"])) == []
    assert _started(_label_event("orion", ["orion"])) == [], "no agent label: no agent"


def test_a_label_event_never_joins_a_concurrency_group_it_would_skip() -> None:
    """Concurrency sits on the jobs, whose `if` decides first: a label event for another label
    (or another agent) cannot cancel or replace a waiting run of this issue."""
    for path in EXAMPLE_FILES:
        wf = _load(path)
        assert "concurrency" not in wf or wf["concurrency"]["group"] == "orion-reconcile", path.name
        for job in wf["jobs"].values():
            if "concurrency" in job:
                assert "if" in job and job["concurrency"]["cancel-in-progress"] is False


def test_release_workflow() -> None:
    """From main only; each job its own permissions; a person approves (environment) before
    anything is tagged; PyPI by trusted publishing, of the files twine checked."""
    wf = _load(WORKFLOWS / "release.yml")
    assert wf["on"]["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+"]
    assert wf["on"]["workflow_dispatch"]["inputs"]["version"]["required"] is True
    assert wf["permissions"] == {}
    build, release, pypi = wf["jobs"]["build"], wf["jobs"]["release"], wf["jobs"]["pypi"]
    assert build["if"] == "github.event_name == 'push' || github.ref == 'refs/heads/main'"
    assert build["permissions"] == {"contents": "read"}
    runs = "\n".join(s.get("run", "") for s in build["steps"])
    assert 'git merge-base --is-ancestor "$sha" origin/main' in runs
    assert "scripts/release-check.py" in runs and "twine check --strict dist/*" in runs
    assert release["needs"] == "build" and release["environment"] == "release"
    assert release["permissions"] == {"contents": "write"}
    assert not any("actions/checkout" in s.get("uses", "") for s in release["steps"])
    runs = "\n".join(s.get("run", "") for s in release["steps"])
    assert 'gh release create "$tag" --target "$SHA"' in runs and "refs/tags/v$MAJOR" in runs
    assert pypi["needs"] == ["build", "release"] and pypi["environment"]["name"] == "pypi"
    assert pypi["permissions"] == {"id-token": "write"}
    assert pypi["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")
    assert "with" not in pypi["steps"][-1], "trusted publishing: no stored token"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_actions_are_pinned_by_commit_sha(path: Path) -> None:
    """Except the examples' own placeholder (OWNER/orion-action@vN, .github/zizmor.yml)."""
    for step in _steps(_load(path)):
        uses = step.get("uses")
        if uses and not uses.startswith("./") and not _is_orion(step):
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), f"{path.name}: {uses}"


def test_dependabot_keeps_the_pins_and_the_lock_fresh() -> None:
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    ecosystems = {(u["package-ecosystem"], u["directory"]) for u in config["updates"]}
    assert {("github-actions", "/"), ("pip", "/"), ("npm", "/tests")} <= ecosystems


def test_ci_workflow() -> None:
    wf = _load(WORKFLOWS / "ci.yml")
    assert {"push", "pull_request"} <= set(wf["on"])
    steps = _steps(wf)
    uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
    assert str(uses["actions/setup-python"]["with"]["python-version"]) == "3.11"
    assert str(uses["actions/setup-node"]["with"]["node-version"]) == "20"
    assert any(s.get("run") == "bash .ci/run" for s in steps)
    assert wf["permissions"] == {"contents": "read"}


def test_action_metadata() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["inputs"]["command"]["default"] == "reconcile"
    assert ACTION["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert ACTION["branding"]["icon"] and ACTION["branding"]["color"]
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description"), name


def test_action_finds_itself_through_github_action_path() -> None:
    """`${{ github.action_path }}` is a path on the host inside `container:` jobs
    (actions/runner#2185); the GITHUB_ACTION_PATH variable is right in both."""
    for step in ACTION["runs"]["steps"]:
        assert "github.action_path" not in yaml.safe_dump(step), step.get("name")
    scripts = "\n".join(step["run"] for step in ACTION["runs"]["steps"])
    assert '"$GITHUB_ACTION_PATH"' in scripts and "/requirements.lock" in scripts
    assert "--require-hashes" in scripts and "requirements.txt" not in scripts


def test_action_refuses_a_non_linux_runner_before_anything_else() -> None:
    setup = ACTION["runs"]["steps"][0]["run"]
    check = setup.index('if [ "$os" != Linux ]')
    assert check < setup.index("python3") and check < setup.index("pip install")


def test_example_config_is_the_defaults() -> None:
    loaded = load_config(str(ROOT / ".github" / "orion.yml"))
    assert {**vars(loaded), "source": ""} == {**vars(Config()), "source": ""}


def test_arc_example_keeps_the_agents_ephemeral_and_the_reconciler_outside() -> None:
    """examples/arc: the agents' scale set gives its pods no Kubernetes credential, runs them
    unprivileged and leaves a graceful delete time to hand the issue back (the longest
    run.kill_grace plus the hand-back); the reconciler is a CronJob in a namespace of its own
    whose passes never overlap."""
    from orion_action.config import MAX_KILL_GRACE

    arc = EXAMPLES / "arc"
    values = yaml.safe_load((arc / "values-claude-code.yaml").read_text())
    spec = values["template"]["spec"]
    assert values["minRunners"] == 0 and values["maxRunners"] >= 1
    assert spec["automountServiceAccountToken"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["terminationGracePeriodSeconds"] >= 2 * MAX_KILL_GRACE + 30
    (runner,) = spec["containers"]
    assert runner["securityContext"]["allowPrivilegeEscalation"] is False
    cron = yaml.safe_load((arc / "reconcile-cronjob.yaml").read_text())
    assert cron["kind"] == "CronJob" and cron["spec"]["concurrencyPolicy"] == "Forbid"
    assert cron["metadata"]["namespace"] != "orion-runners"
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    (container,) = pod["containers"]
    assert container["args"][0] == "reconcile"
    assert {e["name"] for e in container["env"]} == {"ORION_APP_ID", "ORION_APP_PRIVATE_KEY"}
    assert "orion-action" in (arc / "Dockerfile.reconcile").read_text()
    text = (arc / "README.md").read_text()
    assert "runs-on: orion-claude-code" in text and values["runnerScaleSetName"] == "orion-claude-code"
