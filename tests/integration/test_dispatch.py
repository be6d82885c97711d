"""Immediate pickup (`dispatch.workflow`, `dispatch.max_runs`), against the emulator behind the
fault proxy (which serves the workflow's dispatches and runs: the emulator has no workflow
files), with real processes (docs/design.md section 12, "Immediate pickup"). What a pass dispatches, and
how many at once, is decided in-process in unit/test_reconcile_in_process.py (and the service in
unit/test_dispatch_service.py); here: the wrapper's own dispatches and a pass's trigger check."""

from __future__ import annotations

import signal
from pathlib import Path

from rig import Emulator, wait_until
from rig.harness import (
    Orion,
    labels,
    queued_issue,
)

WORKER = "orion-worker.yml"


def dispatch_config(tmp_path: Path, max_runs: int = 4, extra: str = "") -> Path:
    path = tmp_path / "orion-dispatch.yml"
    path.write_text(
        "heartbeat: {interval: 1, stale_after: 4}\n"
        f"run: {{kill_grace: 1{extra}}}\n"
        f"dispatch: {{workflow: {WORKER}, max_runs: {max_runs}}}\n", encoding="utf-8")
    return path


def sent(orion: Orion) -> list[tuple[str, str, dict[str, str]]]:
    """(workflow, ref, inputs) of every dispatch the product made for this test's repository."""
    repo = orion.repo
    mine = {rid for (o, r, rid) in orion.proxy._runs if (o, r) == (repo.owner.lower(), repo.name.lower())}
    return [(d["workflow"], d["ref"], d["inputs"]) for d in orion.proxy.dispatches if d["run_id"] in mine]


def test_a_wrapper_that_hands_back_dispatches_the_issue(orion: Orion, repo, tmp_path):
    config = dispatch_config(tmp_path, extra=", on_signal: requeue")
    orion.proxy.add_workflow(repo.owner, repo.name, WORKER)
    n = queued_issue(repo)
    w = orion.running(n, config=config)
    w.proc.send_signal(signal.SIGTERM)
    assert w.wait() == 128 + signal.SIGTERM, w.output
    assert labels(repo, n) == {"orion"}
    assert sent(orion) == [(WORKER, "main", {"issue": str(n)})]


def test_a_cancelled_job_dispatches_nothing(orion: Orion, repo, tmp_path):
    """run.on_signal: cancel (the default): the Cancel button does not start another run."""
    config = dispatch_config(tmp_path)
    orion.proxy.add_workflow(repo.owner, repo.name, WORKER)
    n = queued_issue(repo)
    w = orion.running(n, config=config)
    w.proc.send_signal(signal.SIGTERM)
    assert w.wait() == 128 + signal.SIGTERM, w.output
    assert labels(repo, n) == set()
    assert sent(orion) == []


def test_a_run_stopped_by_its_time_limit_dispatches_the_issue(orion: Orion, repo, tmp_path):
    config = dispatch_config(tmp_path, extra=", timeout: 1")
    orion.proxy.add_workflow(repo.owner, repo.name, WORKER)
    n = queued_issue(repo)
    w = orion.start(n, config=config)
    assert w.wait() == 124, w.output
    assert labels(repo, n) == {"orion"}
    wait_until(lambda: sent(orion), message="no dispatch")
    assert sent(orion) == [(WORKER, "main", {"issue": str(n)})]


def test_a_pass_dispatches_no_run_for_a_triagers_label(orion: Orion, repo, tmp_path):
    """A triager queues an issue and no labelled run refuses it (an `issue_comment` workflow, an
    issue form): the pass's dispatch checks who queued it, starts nothing, and takes the issue
    out of the queue with the refusal comment (finding 1 of the round-3 security audit)."""
    orion.config = dispatch_config(tmp_path)
    orion.proxy.add_workflow(repo.owner, repo.name, WORKER)
    mine = repo.create_issue("queued by a triager")
    repo.api("PUT", f"/collaborators/{Emulator.OUTSIDER}", json={"permission": "triage"})
    repo.api("POST", f"/issues/{mine}/labels", token=Emulator.OUTSIDER_TOKEN, json={"labels": ["orion"]})
    theirs = queued_issue(repo)  # queued by the owner
    plan = orion.reconcile()
    assert plan["dispatched"] == [theirs]
    assert sent(orion) == [(WORKER, "main", {"issue": str(theirs)})]
    assert labels(repo, mine) == set()
    assert [c for c in repo.comments(mine) if "has triage access" in c["body"]]
