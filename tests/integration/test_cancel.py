"""The cancel label against the emulator, with real processes (docs/design.md section 12,
"Cancel"): on a held issue the holder stops its child within one heartbeat plus kill_grace and
exits 76. On a queued issue it prevents the claim and the next pass unqueues the issue: decided
in-process on the in-memory GitHub (unit/test_cancel_sweep.py, issue 17)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from rig import wait_until
from rig.harness import (
    FAILED,
    LOST,
    QUEUE,
    READY,
    WORKING,
    Child,
    Run,
    claim_comments,
    fast_config,
    only_record,
)

from orion_action.core.record import State

CANCEL = "orion-cancel"
KILL_GRACE = 1.0  # run.kill_grace in rig.harness.FAST


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return fast_config(tmp_path)


def test_the_cancel_label_stops_a_running_child_within_a_beat_and_the_grace(
        repo, orion_env, tmp_path, config):
    n = repo.create_issue("long work", [QUEUE])
    child = Child(tmp_path, ignore=("term", "int"))  # only the SIGKILL after kill_grace stops it
    r = Run(orion_env, tmp_path, "--issue", str(n), "--stage", "build", cmd=child.cmd, config=config)
    pid = child.wait_started()
    wait_until(lambda: only_record(repo, n).state is State.RUNNING, message="never running")

    repo.add_label(n, CANCEL)
    asked = time.monotonic()
    # No clock upper bound (load can break one; the beat that reads the label follows the next
    # heartbeat write by construction). The child ignores SIGTERM, so only the wrapper's SIGKILL
    # after the grace ends it: the grace was given in full, and the stop was the cancel's.
    wait_until(child.gone, interval=0.02, message=f"child {pid} outlived the cancel")
    assert time.monotonic() - asked >= KILL_GRACE
    assert r.wait() == LOST, r.stderr
    assert f"the {CANCEL} label was added; stopping the child" in r.stderr

    labels = set(repo.labels(n))
    assert not labels & {QUEUE, WORKING, CANCEL, "orion-stage-build", READY, FAILED}, labels
    rec = only_record(repo, n)
    assert rec.state is State.CANCELLED and "cancelled" in (rec.note or "")
    (comment,) = claim_comments(repo, n)
    visible = comment["body"].split("-->", 1)[1]
    assert "cancelled" in visible and "working on" not in visible


def test_a_cancel_taken_off_by_orion_still_stops_the_run(repo, orion_env, tmp_path, config):
    """A cancel sweep's removal planned before a person's cancel lands after it (ADR 0093): the
    label is gone before a beat reads it, and orion's own removal withdraws no cancel. The beat
    finds the issue changed, reads GitHub's record and stops the run as cancelled."""
    n = repo.create_issue("long work", [QUEUE])
    child = Child(tmp_path)
    r = Run(orion_env, tmp_path, "--issue", str(n), cmd=child.cmd, config=config)
    child.wait_started()
    wait_until(lambda: only_record(repo, n).state is State.RUNNING, message="never running")

    repo.add_label(n, CANCEL)
    repo.remove_label(n, CANCEL)  # under the bot's token: orion's removal
    wait_until(child.gone, interval=0.02, message="the child outlived the cancel")
    assert r.wait() == LOST, r.stderr
    assert only_record(repo, n).state is State.CANCELLED
    assert not set(repo.labels(n)) & {QUEUE, WORKING, CANCEL}
