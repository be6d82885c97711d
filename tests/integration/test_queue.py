"""Queue order, `--require` and the pause switch against the emulator, with real processes
(docs/design.md section 12: "Queue order", "Pause"; docs/adr/0022-pause-in-the-queue-label.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers_run import FAST, NOT_CLAIMED, PY, QUEUE, READY, USAGE, WORKING, Child, Run, fast_config, snapshot
from rig import ROOT, wait_until

from orion_action.core.record import ClaimRecord, parse_block

P0, P1 = "orion-p0", "orion-p1"
USUAL = "Queued for an orion worker: add this label to have the issue worked"
CONFIG = FAST + f"labels: {{priority: [{P0}, {P1}]}}\n"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return fast_config(tmp_path, CONFIG)


def orion(env: dict[str, str], config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "orion_action", args[0], "--config", str(config), *args[1:]],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)


def status(env: dict[str, str], config: Path) -> dict:
    result = orion(env, config, "status", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def run_next(env, tmp_path, config, *args: str, name: str) -> tuple[int, Run, Path]:
    """One `run --next` whose child exits 0 at once and logs the issue it was given."""
    log = tmp_path / f"{name}.issues"
    child = Child(tmp_path, name=name, hold=False, log=log)
    r = Run(env, tmp_path, "--next", *args, cmd=child.cmd, config=config, name=name)
    return r.wait(30), r, log


def worked(log: Path) -> list[int]:
    return [int(json.loads(line)["issue"]) for line in log.read_text().splitlines()] if log.exists() else []


def label_on_repo(repo, name: str) -> dict | None:
    resp = repo.emulator.request("GET", f"/repos/{repo.full_name}/labels/{name}")
    assert resp.status_code in (200, 404), resp.text
    return resp.json() if resp.status_code == 200 else None


# -- queue order ---------------------------------------------------------------------------------


def test_next_takes_priority_labels_first_then_the_oldest(repo, orion_env, tmp_path, config):
    plain_old = repo.create_issue("plain, oldest", [QUEUE])
    low = repo.create_issue("p1", [QUEUE, P1])
    top = repo.create_issue("p0", [QUEUE, P0, "bug"])
    low_newer = repo.create_issue("p1, newer", [QUEUE, P1])
    both = repo.create_issue("p1 and p0: p0 counts", [QUEUE, P1, P0])
    repo.create_issue("held elsewhere: not queued", [QUEUE, P0, WORKING])
    plain_new = repo.create_issue("plain, newest", [QUEUE, "p9"])

    order = [top, both, low, low_newer, plain_old, plain_new]
    doc = status(orion_env, config)
    assert doc["queue"] == [
        {"issue": top, "priority": P0}, {"issue": both, "priority": P0}, {"issue": low, "priority": P1},
        {"issue": low_newer, "priority": P1}, {"issue": plain_old, "priority": None},
        {"issue": plain_new, "priority": None}]
    assert doc["paused"] is False

    taken = []  # the two P0 issues: the priority label first, the older of them first
    for i in range(2):
        code, r, log = run_next(orion_env, tmp_path, config, name=f"next{i}")
        assert code == 0, r.stderr
        taken += worked(log)
    assert taken == order[:2]
    assert [q["issue"] for q in status(orion_env, config)["queue"]] == order[2:]
    assert all(set(repo.labels(n)) >= {READY} for n in taken)


def test_require_considers_only_issues_carrying_every_label(repo, orion_env, tmp_path, config):
    repo.create_issue("oldest, top priority, no gpu", [QUEUE, P0])
    repo.create_issue("gpu only", [QUEUE, "gpu"])
    wanted = repo.create_issue("gpu and big", [QUEUE, "gpu", "big"])
    code, r, log = run_next(orion_env, tmp_path, config, "--require", "gpu", "--require", "big", name="gpu")
    assert code == 0, r.stderr
    assert worked(log) == [wanted]

    before = {n: snapshot(repo, n) for n in (1, 2)}
    code, r, log = run_next(orion_env, tmp_path, config, "--require", "gpu", "--require", "big", name="none")
    assert code == NOT_CLAIMED, r.stderr
    assert "the queue is empty: no open issue carrying gpu, big" in r.stderr
    assert worked(log) == [] and {n: snapshot(repo, n) for n in (1, 2)} == before

    child = Child(tmp_path, name="usage", hold=False)
    r = Run(orion_env, tmp_path, "--issue", "2", "--require", "gpu", cmd=child.cmd, config=config,
            name="usage")
    assert r.wait(30) == USAGE and "--require goes with --next" in r.stderr


# -- pause ---------------------------------------------------------------------------------------


def test_pause_refuses_new_claims_and_resume_lets_them_through(repo, orion_env, tmp_path, config):
    waiting = repo.create_issue("waits", [QUEUE])
    paused = orion(orion_env, config, "pause", "--reason", "deploy freeze")
    assert paused.returncode == 0, paused.stderr
    assert label_on_repo(repo, QUEUE)["description"] == "paused: deploy freeze"
    assert status(orion_env, config)["paused"] is True

    before = snapshot(repo, waiting)
    for how in (("--next",), ("--issue", str(waiting))):
        c = Child(tmp_path, name=f"refused{len(how)}", hold=False)
        r = Run(orion_env, tmp_path, *how, cmd=c.cmd, config=config, name=f"refused{len(how)}")
        assert r.wait(30) == NOT_CLAIMED, r.stderr
        errors = [line for line in r.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and "the queue is paused" in errors[0] and "deploy freeze" in errors[0]
        assert not c.started
    assert snapshot(repo, waiting) == before  # nothing written

    resumed = orion(orion_env, config, "resume")
    assert resumed.returncode == 0 and "resumed" in resumed.stdout, resumed.stderr
    assert label_on_repo(repo, QUEUE)["description"] == USUAL
    code, r, log = run_next(orion_env, tmp_path, config, name="after")
    assert code == 0, r.stderr
    assert worked(log) == [waiting]


def test_a_run_in_flight_goes_on_while_paused(repo, orion_env, tmp_path, config):
    held = repo.create_issue("in flight", [QUEUE])
    child = Child(tmp_path, name="flight")
    flight = Run(orion_env, tmp_path, "--issue", str(held), cmd=child.cmd, config=config, name="flight")
    child.wait_started()
    paused = orion(orion_env, config, "pause")
    assert paused.returncode == 0, paused.stderr
    assert label_on_repo(repo, QUEUE)["description"] == "paused: paused with orion-action pause"

    record = wait_until(lambda: _record(repo, held), 10)
    wait_until(lambda: _record(repo, held).beats > record.beats, 10, message="no beat while paused")
    assert flight.proc.poll() is None and not child.gone()
    child.release()
    assert flight.wait(20) == 0, flight.stderr
    assert set(repo.labels(held)) == {READY}


def test_a_person_pauses_from_the_web_interface_with_the_label(repo, orion_env, tmp_path, config, proxy):
    """Issues -> Labels -> edit the queue label, description "Paused - ..." (any case, the rest
    is the reason), as a person does it: straight through the API, not through orion-action.
    The claim sees it in the read it makes anyway: no request is spent on the switch."""
    n = repo.create_issue("waits", [QUEUE])
    init = orion(orion_env, config, "init")
    assert init.returncode == 0, init.stderr
    assert label_on_repo(repo, QUEUE)["description"] == USUAL  # init never pauses the queue

    repo.api("PATCH", f"/labels/{QUEUE}", json={"description": "Paused - release week"})
    assert orion(orion_env, config, "init").returncode == 0  # init does not resume it either
    before = proxy.count()
    c = Child(tmp_path, name="refused", hold=False)
    r = Run(orion_env, tmp_path, "--next", cmd=c.cmd, config=config, name="refused")
    assert r.wait(30) == NOT_CLAIMED, r.stderr
    assert "the queue is paused" in r.stderr and "release week" in r.stderr, r.stderr
    assert proxy.count() - before == 1  # the queue listing, nothing else
    text = orion(orion_env, config, "status")
    assert "paused: yes" in text.stdout and f"queue (1, in pick order): #{n}" in text.stdout

    repo.api("PATCH", f"/labels/{QUEUE}", json={"description": "release week is over"})
    assert "paused: no" in orion(orion_env, config, "status").stdout
    again = orion(orion_env, config, "resume")
    assert again.returncode == 0 and "not paused" in again.stdout
    code, r, log = run_next(orion_env, tmp_path, config, name="after")
    assert code == 0 and worked(log) == [n], r.stderr


def _record(repo, n: int) -> ClaimRecord:
    found = [b for c in repo.comments(n) if isinstance(b := parse_block(c["body"]), ClaimRecord)]
    assert len(found) == 1, found
    return found[0]
