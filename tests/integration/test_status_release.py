"""`status` (reads only) and `release` (by hand) against the emulator (docs/design.md section 9).
The release decisions that need no live process (a dead holder, a finished claim, no lock, a
hand lock, a closed issue, an orphaned child) run in-process in unit/test_reconcile_in_process.py."""

from __future__ import annotations

import json
import re
import signal
import time

from rig.harness import (
    QUEUE,
    WORKING,
    Orion,
    exited_pid,
    local_holder,
    post_claim,
    queued_issue,
    record_blocks,
    remote_holder,
    snapshots,
    tombstone_blocks,
)

from orion_action.adapters import machine
from orion_action.core.record import ReleaseAction, State, Tombstone, render_tombstone

CLAIM_KEYS = ["issue", "verdict", "reason", "host", "pid", "heartbeat_age_s", "stage", "attempt", "progress"]


def labels(repo, n: int) -> set[str]:
    return set(repo.labels(n))


# -- status --------------------------------------------------------------------------------------


def test_status_json_has_the_documented_shape_and_writes_nothing(orion: Orion, repo):
    began = time.time()
    live = queued_issue(repo, "live")
    w = orion.running(live, stage="build")
    dead = queued_issue(repo, "dead")
    dead_holder = local_holder()
    post_claim(repo, dead, dead_holder, child_pid=exited_pid())  # a started run (ADR 0072)
    hand = repo.create_issue("hand", labels=["orion-working"])
    far = queued_issue(repo, "far")
    post_claim(repo, far, remote_holder("far-away"), stale_after=600, stage="qa")
    idle = queued_issue(repo, "idle")
    numbers = [live, dead, hand, far]
    quiet = [dead, hand, far]  # the live holder edits its own record every beat
    before = snapshots(repo, quiet)
    live_before = (labels(repo, live), [c["id"] for c in repo.comments(live)])

    result = orion.command("status", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert list(doc) == ["repo", "claims", "queue", "paused"] and doc["repo"] == repo.full_name
    assert doc["queue"] == [{"issue": idle, "priority": None}] and doc["paused"] is False
    assert [list(c) for c in doc["claims"]] == [CLAIM_KEYS] * 4
    by = {c["issue"]: c for c in doc["claims"]}
    assert sorted(by) == sorted(numbers)

    c = by[live]
    assert (c["verdict"], c["host"], c["pid"], c["stage"], c["attempt"]) == (
        "alive", machine.this_machine().host, w.pid, "build", 1)
    assert f"wrapper pid {w.pid} is running on this machine" == c["reason"]
    # Bounded by the claim's own age (GitHub's times have whole seconds), not by a figure load can break.
    age = c["heartbeat_age_s"]
    assert isinstance(age, (int, float)) and 0 <= age <= time.time() - began + 1

    c = by[dead]
    assert (c["verdict"], c["pid"], c["stage"], c["attempt"]) == ("dead", dead_holder.pid, None, 1)
    assert "not running on this machine" in c["reason"]

    c = by[hand]
    assert c == {"issue": hand, "verdict": "unknown",
                 "reason": "the lock label is on but there is no trusted claim record",
                 "host": None, "pid": None, "heartbeat_age_s": None, "stage": None, "attempt": None,
                 "progress": None}

    c = by[far]
    assert (c["verdict"], c["host"], c["pid"], c["stage"]) == ("alive", "far-away", 4242, "qa")
    assert "on GitHub's clock" in c["reason"]

    assert snapshots(repo, quiet) == before  # status writes nothing, even for a dead holder
    assert (labels(repo, live), [c["id"] for c in repo.comments(live)]) == live_before


def test_status_text_table(orion: Orion, repo):
    result = orion.command("status")
    assert result.returncode == 0, result.stderr
    assert "no issue carries 'orion-working'" in result.stdout

    n = queued_issue(repo)
    w = orion.running(n, stage="build")
    hand = repo.create_issue("hand", labels=["orion-working"])
    result = orion.command("status")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["ISSUE", "VERDICT", "AGE", "HOST", "PID", "STAGE",
                                               "ATTEMPT", "REASON", "PROGRESS"]
    row = re.split(r"\s{2,}", next(line for line in lines if line.startswith(f"#{n} ")))
    assert row[:3] == [f"#{n}", "alive", row[2]] and re.fullmatch(r"\d+s", row[2])
    assert row[3:7] == [machine.this_machine().host, str(w.pid), "build", "1"]
    assert row[7:] == [f"wrapper pid {w.pid} is running on this machine", "-"]
    row = re.split(r"\s{2,}", next(line for line in lines if line.startswith(f"#{hand} ")))
    assert row == [f"#{hand}", "unknown", "-", "-", "-", "-", "-",
                   "the lock label is on but there is no trusted claim record", "-"]
    # The columns line up: every value starts where its header does.
    for line in lines[1:3]:
        assert line.index(row[1] if line.startswith(f"#{hand}") else "alive") == lines[0].index("VERDICT")
    assert "1 live claim(s) heartbeat every 1s" in result.stderr


# -- release -------------------------------------------------------------------------------------


def test_release_refuses_a_live_holder_then_force_stops_it(orion: Orion, repo):
    n = queued_issue(repo)
    w = orion.running(n, stage="build")
    before = snapshots(repo, [n])

    refused = orion.command("release", "--issue", str(n))
    assert refused.returncode == 75, refused
    assert f"refusing to release #{n}: its holder is alive" in refused.stderr
    assert f"wrapper pid {w.pid} is running on this machine" in refused.stderr
    assert "--force" in refused.stderr
    assert snapshots(repo, [n])[n][:2] == before[n][:2]  # labels untouched
    assert tombstone_blocks(repo, n) == []

    forced = orion.command("release", "--issue", str(n), "--force")
    assert forced.returncode == 0, forced.stderr
    assert f"#{n}: released (released by hand with --force)" in forced.stdout
    assert w.wait() == 76, w.output()  # the holder sees the tombstone and stops its child
    assert "the claim is lost" in w.output()
    assert labels(repo, n) == {"orion"}
    (tomb,) = tombstone_blocks(repo, n)
    assert (tomb.block.token, tomb.block.action, tomb.block.by, tomb.block.counts_attempt) == (
        w.record.token, ReleaseAction.RELEASE, "release", False)
    # No comment still reads as working: the holder's last beat wrote "working" over the
    # release's rewrite, and the holder, giving up, showed the release again (issue 18).
    (claim,) = [c["body"] for c in repo.comments(n) if c["body"].startswith("<!-- orion-claim")]
    visible = claim.split("-->", 1)[1]
    assert "no longer holds this issue" in visible and "working" not in visible, visible


def test_a_forced_release_leaves_the_ending_its_holder_wrote_meanwhile(orion: Orion, repo, proxy):
    """A person's `release --force` lists a live run's claim, and its tombstone is held at the
    proxy. Meanwhile the Actions job is cancelled (SIGTERM): the holder records `cancelled`
    and takes its lock off. Then the tombstone lands, and the release reads the claim again
    before rewriting it: it leaves the holder's ending, which a rewrite from its listing would
    have turned back into a working record (ADR 0080). The lock is gone: the labels stay."""
    n = queued_issue(repo)
    w = orion.running(n)
    held = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)
    forced = orion.spawn(["release", "--config", str(orion.config), "--issue", str(n), "--force"],
                         name="release")
    held.wait_arrived()
    w.proc.send_signal(signal.SIGTERM)
    assert w.wait() == 128 + signal.SIGTERM, w.output()
    assert labels(repo, n) == set()
    held.release()
    assert forced.wait() == 0, forced.stderr
    (claim,) = record_blocks(repo, n)
    assert claim.block.state is State.CANCELLED and claim.block.released is None
    assert "changed since it was read; left as it is" in forced.stderr
    assert [t.block.by for t in tombstone_blocks(repo, n)] == ["release"]
    assert labels(repo, n) == set()


def test_a_forced_release_leaves_the_lock_of_a_run_that_claimed_after_it_read(orion: Orion, repo, proxy):
    """A person's `release --force` lists a dead run's claim, and its tombstone is held at the
    proxy. Meanwhile the issue is released back to the queue and a new run claims it (its claim
    comment and lock). The tombstone lands; the release lists the comments again, finds the new
    claim open, and leaves the labels: the lock is the new run's (ADR 0107)."""
    n = queued_issue(repo)
    _, dead = post_claim(repo, n, local_holder(), child_pid=exited_pid())
    held = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)
    forced = orion.spawn(["release", "--config", str(orion.config), "--issue", str(n), "--force"],
                         name="release")
    held.wait_arrived()
    repo.comment(n, render_tombstone(Tombstone(dead.token, ReleaseAction.REQUEUE, "no heartbeat",
                                               counts_attempt=True)))  # a pass released it...
    repo.add_label(n, QUEUE)
    repo.remove_label(n, WORKING)
    post_claim(repo, n, remote_holder())  # ...and a new run on another machine claimed it
    held.release()
    assert forced.wait() == 0, forced.stderr
    assert "claimed the issue after this release read it" in forced.output, forced.output
    assert labels(repo, n) == {WORKING}


def test_release_of_a_missing_issue_exits_64(orion: Orion, repo):
    result = orion.command("release", "--issue", "999")
    assert result.returncode == 64, result
    assert "issue #999 does not exist" in result.stderr
    assert result.stderr.count("\n") == 1  # one line, no traceback
