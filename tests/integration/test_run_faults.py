"""`orion-action run` under signals, lost locks, partitions and a misbehaving GitHub.

Fast configuration: beat every 1 s, stale after 4 s (so the renew deadline is 2.7 s),
kill grace 1 s. Every wait is on a condition with a timeout, never a fixed sleep.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest
from rig import ROOT, Emulator, wait_until
from rig.harness import (
    FAILED,
    FAST,
    LOST,
    QUEUE,
    READY,
    WORKING,
    Child,
    Run,
    claim_comments,
    fast_config,
    only_record,
    pid_alive,
    product,
    queue_as_a_person,
    records,
    running_record,
)

from orion_action.core.record import State

STALE_AFTER = 4.0


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return fast_config(tmp_path)


def run(orion_env, tmp_path, config, *args, cmd, name="run", **kw) -> Run:
    return Run(orion_env, tmp_path, *args, cmd=cmd, config=config, name=name, **kw)


def started_run(repo, orion_env, tmp_path, config, *args, child: Child, name="run") -> tuple[int, Run]:
    """A queued issue, a wrapper on it, and its child running (record says running)."""
    n = repo.create_issue("work", [QUEUE])
    r = run(orion_env, tmp_path, config, "--issue", str(n), *args, cmd=child.cmd, name=name)
    child.wait_started()
    wait_until(lambda: running_record(repo, n), message="record never said running")
    return n, r


# -- the wrapper killed or interrupted -----------------------------------------------------


def test_sigkill_to_the_wrapper_takes_the_child_with_it(repo, orion_env, tmp_path, config):
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, config, child=child)
    pid = child.pid
    r.send_signal(signal.SIGKILL)
    r.wait()
    # The short bound is the claim: the kernel kills the child with its wrapper
    # (PR_SET_PDEATHSIG), at once; without it the guardian's lease would, seconds later.
    wait_until(lambda: not pid_alive(pid), timeout=2, message=f"child {pid} outlived the wrapper")
    # The record still says running: it is the reconciler's job now (same machine: dead at once).
    assert only_record(repo, n).state is State.RUNNING


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_the_child_and_cancels_the_run(repo, orion_env, tmp_path, config, sig):
    """run.on_signal: cancel (the default, ADR 0043): a cancelled job ends the run as the
    cancel label does: no queue, lock, stage or cancel label left; no attempt spent."""
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, config, "--stage", "s1", child=child)
    pid = child.pid
    r.send_signal(sig)
    assert r.wait() == 128 + sig, r.stderr
    assert not pid_alive(pid)
    assert set(repo.labels(n)) == set()
    rec = only_record(repo, n)
    assert rec.state is State.CANCELLED and not rec.counts_attempt
    note = rec.note or ""
    assert signal.Signals(sig).name in note and "the Actions job was cancelled" in note
    assert "orion run cancelled" in claim_comments(repo, n)[0]["body"]


@pytest.mark.parametrize("who", ["orion", "a person"])
def test_a_cancelled_jobs_ending_takes_off_only_orions_queue_label(repo, orion_env, tmp_path, config, who):
    """A queue label put on while the run held the issue: a person's is a newer wish, and the
    cancel ending leaves it; orion's can only be a stale requeue (a pass planned before this
    claim), and GitHub's record says so: it comes off with the lock (ADR 0104)."""
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, config, child=child)
    wait_until(lambda: QUEUE not in repo.labels(n), message="the claim never took the queue label")
    if who == "orion":
        repo.add_label(n, QUEUE)  # a pass's stale requeue, as orion's login
    else:
        repo.api("POST", f"/issues/{n}/labels", token=Emulator.OUTSIDER_TOKEN, json={"labels": [QUEUE]})
    r.send_signal(signal.SIGTERM)
    assert r.wait() == 128 + signal.SIGTERM, r.stderr
    assert set(repo.labels(n)) == (set() if who == "orion" else {QUEUE})
    assert only_record(repo, n).state is State.CANCELLED


@pytest.mark.parametrize("who", ["orion", "a person"])
def test_a_claim_after_a_cancelled_job_runs_only_a_persons_queueing(repo, orion_env, tmp_path, config, who):
    """A stale requeue of orion's that lands after the cancel ending read the labels stays on
    the issue (ADR 0104's read saw nothing). The next `orion-action run` reads the run's record
    and GitHub's record of the queue label: the last run was cancelled, and only orion queued the
    issue since. It starts nothing, says why, and takes the label off. A person's queueing (one
    with write access) runs (ADR 0105)."""
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, config, child=child)
    r.send_signal(signal.SIGTERM)
    assert r.wait() == 128 + signal.SIGTERM, r.stderr
    assert set(repo.labels(n)) == set()
    if who == "orion":
        repo.add_label(n, QUEUE)  # the stale requeue, as orion's login
    else:
        queue_as_a_person(repo, n)
    again = Child(tmp_path, name="again", hold=False)
    r2 = run(orion_env, tmp_path, config, "--issue", str(n), cmd=again.cmd, name="again")
    if who == "a person":
        assert r2.wait() == 0, r2.stderr
        assert again.started and set(repo.labels(n)) == {READY}
        return
    assert r2.wait() == 75, r2.stderr
    assert "the last run was cancelled, and only orion added" in r2.stderr
    assert not again.started
    assert set(repo.labels(n)) == set()
    assert len(claim_comments(repo, n)) == 2  # the run's, and the refused claim's (`lost`, saying why)


def test_with_on_signal_requeue_a_signal_hands_the_issue_back(repo, orion_env, tmp_path):
    """run.on_signal: requeue (pre-emptible runners): the issue goes back to the queue and the
    run spends an attempt."""
    cfg = fast_config(tmp_path, FAST.replace("run: {", "run: {on_signal: requeue, "))
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, cfg, "--stage", "s1", child=child)
    pid = child.pid
    r.send_signal(signal.SIGTERM)
    assert r.wait() == 128 + signal.SIGTERM, r.stderr
    assert not pid_alive(pid)
    assert set(repo.labels(n)) == {QUEUE}
    rec = only_record(repo, n)
    assert rec.state is State.INTERRUPTED and rec.counts_attempt and "SIGTERM" in (rec.note or "")
    assert "interrupted" in claim_comments(repo, n)[0]["body"]


# Slow: `make test` kills a child that ignores the signal after the grace in
# test_removing_the_lock_label_stops_the_child, and on SIGINT then SIGTERM in the cancel sequence.
@pytest.mark.slow
def test_sigint_to_a_wrapper_whose_child_ignores_it(repo, orion_env, tmp_path, config):
    child = Child(tmp_path, ignore=("int",))
    n, r = started_run(repo, orion_env, tmp_path, config, child=child)
    pid = child.pid
    r.send_signal(signal.SIGINT)
    assert r.wait() == 130, r.stderr  # the child ignored it: killed after the grace
    assert not pid_alive(pid)
    assert set(repo.labels(n)) == set()
    assert only_record(repo, n).state is State.CANCELLED


def test_actions_cancel_sequence_with_the_default_grace(repo, orion_env, tmp_path):
    """A cancelled job: SIGINT, then SIGTERM. The second signal cuts the grace short; the
    child ignores both and is killed. (How long the whole sequence takes against the ~9 s the
    runner allows is measured in bench/test-times.md, not asserted: load would break a bound.)"""
    cfg = fast_config(tmp_path, "heartbeat: {interval: 1, stale_after: 16}\n")  # kill_grace 5s
    child = Child(tmp_path, ignore=("int", "term"))
    n, r = started_run(repo, orion_env, tmp_path, cfg, child=child)
    pid = child.pid
    t0 = time.monotonic()
    r.send_signal(signal.SIGINT)
    wait_until(lambda: "forwarding it to the child" in r.stderr)
    r.send_signal(signal.SIGTERM)
    wait_until(lambda: not pid_alive(pid), interval=0.02, message="the child outlived both signals")
    # The grace's own SIGKILL comes 5 s after the first signal at the earliest: a child gone
    # sooner was cut by the second signal. The bound is the failure's own time, not a budget.
    assert time.monotonic() - t0 < 5
    assert r.wait() == 130, r.stderr
    assert set(repo.labels(n)) == set()  # cancelled: the Cancel button stops the work
    assert only_record(repo, n).state is State.CANCELLED


def test_a_signal_while_claiming_cancels_without_running(repo, proxy, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    held = proxy.hold("DELETE", rf"/issues/{n}/labels/{QUEUE}$", count=1)
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd)
    held.wait_arrived()  # the claim is posted and the lock is on
    r.send_signal(signal.SIGTERM)
    held.release()
    assert r.wait() == 128 + signal.SIGTERM, r.stderr
    assert not child.marker.exists()
    assert set(repo.labels(n)) == set()  # the claim was won: the job's cancel ends it
    rec = only_record(repo, n)
    assert rec.state is State.CANCELLED and not rec.counts_attempt


def test_a_signal_before_claiming_writes_nothing(repo, proxy, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    held = proxy.hold("POST", r"^/graphql$", count=1)  # its first read (the issue and who queued it)
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd)
    held.wait_arrived()
    r.send_signal(signal.SIGINT)
    held.release()
    assert r.wait() == 130, r.stderr
    assert not child.marker.exists()
    assert set(repo.labels(n)) == {QUEUE}
    assert repo.comments(n) == []


def test_processes_the_child_leaves_behind_are_stopped(repo, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    pidfile = tmp_path / "bg.pid"
    script = f"sleep 300 & echo $! > {pidfile}; exit 0"
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=["sh", "-c", script])
    assert r.wait() == 0, r.stderr
    bg = int(pidfile.read_text())
    wait_until(lambda: not pid_alive(bg), message="a background process survived")
    assert set(repo.labels(n)) == {READY}


# -- the claim lost while running ----------------------------------------------------------
# The lock label removed and a tombstone naming the claim: unit/test_run_in_process.py (the
# wrapper in-process with a real child, issue 17); a release by hand stopping a real holder:
# test_status_release.py.


# Slow: tests/integration/test_reconcile.py closes a live holder's issue in `make test`.
@pytest.mark.slow
def test_closing_the_issue_stops_the_child(repo, orion_env, tmp_path, config):
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, config, child=child)
    pid = child.pid
    repo.close(n)
    assert r.wait() == LOST, r.stderr
    assert not pid_alive(pid)
    assert "closed" in r.stderr
    rec = only_record(repo, n)
    assert rec.state is State.LOST and "closed" in (rec.note or "")
    assert READY not in repo.labels(n) and FAILED not in repo.labels(n)


def test_a_stale_orion_label_write_does_not_stop_a_live_run(repo, proxy, orion_env, tmp_path, config):
    """Another claim's stale label move lands on a live run (an ending's hand-back, or a pass's
    requeue planned before this claim, retried or late: stolen-by-ending, stale-pass-unlock):
    the queue label goes on and the lock comes off, written with orion's own token. The run's
    next beat reads GitHub's label events, finds the removal orion's, puts the lock back, takes
    the stale queue label off and runs on to its end (ADR 0065)."""
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, config, child=child)
    before = len(proxy.log)
    repo.add_label(n, QUEUE)  # orion's identity (the bot's token), as the stale write is
    repo.remove_label(n, WORKING)
    wait_until(lambda: "put the lock back" in r.stderr, message=lambda: r.stderr)
    wait_until(lambda: set(repo.labels(n)) == {WORKING}, message=lambda: repo.labels(n))
    # What the put-back cost: one read of GitHub's label events, the lock, the stale queue label.
    # A beat that finds the issue changed also reads GitHub's record of the cancel label once
    # (ADR 0093): one landing between the two stale writes, and the one after the put-back,
    # whose own writes changed the issue, if it came before the labels were read here.
    sent = [(e.method, e.path) for e in proxy.log[before:]]
    assert 1 <= sent.count(("POST", "/graphql")) <= 3, sent
    assert [x for x in sent if "/labels" in x[1]] == [
        ("POST", f"/repos/{repo.full_name}/issues/{n}/labels"),
        ("DELETE", f"/repos/{repo.full_name}/issues/{n}/labels/{QUEUE}")], sent
    beats = running_record(repo, n).beats
    wait_until(lambda: (running_record(repo, n) or only_record(repo, n)).beats >= beats + 2,
               message="the heartbeat stopped")
    assert r.poll() is None and pid_alive(child.pid)
    child.release()
    assert r.wait() == 0, r.stderr
    assert only_record(repo, n).state is State.FINISHED
    assert set(repo.labels(n)) == {READY}


# Slow: untrusted look-alikes are ignored in `make test` by test_run.py's outsider's copy of a claim
# and tests/unit/test_issue_log.py.
@pytest.mark.slow
def test_a_forged_tombstone_does_not_stop_the_child(repo, orion_env, tmp_path, config):
    from orion_action.core.record import ReleaseAction, Tombstone, render_tombstone

    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, config, child=child)
    token = running_record(repo, n).token
    repo.outsider_comment(n, render_tombstone(Tombstone(token, ReleaseAction.RELEASE, "mine now")))
    beats = running_record(repo, n).beats
    wait_until(lambda: (running_record(repo, n) or only_record(repo, n)).beats >= beats + 3,
               message="the heartbeat stopped")
    assert r.poll() is None and pid_alive(child.pid)
    child.release()
    assert r.wait() == 0, r.stderr
    assert set(repo.labels(n)) == {READY}


@pytest.mark.parametrize("cut", ["everything", pytest.param("heartbeat edits", marks=pytest.mark.slow)])
def test_a_holder_cut_off_from_github_stops_before_it_can_be_presumed_dead(
        repo, proxy, orion_env, tmp_path, config, cut):
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, config, child=child)
    pid = child.pid
    t0 = time.monotonic()
    if cut == "everything":
        proxy.cut_off()
    else:
        proxy.blackhole("PATCH", r"/issues/comments/\d+$")
    # The bound is the claim: a holder cut off stops its child before it can be presumed dead.
    wait_until(lambda: not pid_alive(pid), timeout=STALE_AFTER,
               message=f"the child still ran {STALE_AFTER}s after the cut")
    stopped_after = time.monotonic() - t0
    assert stopped_after < STALE_AFTER
    # GitHub's failure, not the run's: the holder keeps trying to say so (ADR 0019), and once
    # GitHub answers it hands the issue back without spending an attempt.
    wait_until(lambda: "cannot record the outage yet" in r.stderr, message=lambda: r.stderr)
    assert r.poll() is None
    proxy.clear()
    assert r.wait() == LOST, r.stderr
    assert "renew deadline" in r.stderr
    assert only_record(repo, n).counts_attempt is False
    # Past stale_after the holder leaves the labels to a pass, which requeues on its record.
    assert WORKING in repo.labels(n)
    done = product(["reconcile", "--config", str(config)], env=orion_env, workdir=tmp_path, cwd=ROOT)
    assert done.returncode == 0 and "requeue" in done.stdout, done.stderr
    assert set(repo.labels(n)) == {QUEUE}


def test_transient_heartbeat_errors_are_not_a_lost_lock(repo, proxy, orion_env, tmp_path):
    # Two failed beats and a rate-limited read must fit in the lease (2/3 of stale_after).
    roomy = fast_config(tmp_path, "heartbeat: {interval: 1, stale_after: 12}\nrun: {kill_grace: 1}\n")
    child = Child(tmp_path)
    n, r = started_run(repo, orion_env, tmp_path, roomy, child=child)
    edits = proxy.count("PATCH", r"/issues/comments/\d+$")
    rule = proxy.fail("PATCH", r"/issues/comments/\d+$", 502, count=2)
    proxy.secondary_rate_limit("GET", rf"/issues/{n}$", retry_after=1, count=1)
    wait_until(lambda: rule.hits == 2)
    wait_until(lambda: proxy.count("PATCH", r"/issues/comments/\d+$", status=200) > edits,
               message="no heartbeat edit got through after the errors")
    assert r.poll() is None and pid_alive(child.pid)
    child.release()
    assert r.wait() == 0, r.stderr
    assert set(repo.labels(n)) == {READY}


# -- a misbehaving GitHub on the claim path ------------------------------------------------


def test_a_retried_claim_post_leaves_one_claim_comment(repo, proxy, orion_env, tmp_path, config):
    """The first POST of the claim comment reaches GitHub but its answer is lost."""
    n = repo.create_issue("work", [QUEUE])
    rule = proxy.drop("POST", rf"/issues/{n}/comments$", after_forward=True, count=1)
    child = Child(tmp_path, hold=False)
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd)
    assert r.wait() == 0, r.stderr
    assert rule.hits == 1
    assert child.started
    assert len(claim_comments(repo, n)) == 1
    assert only_record(repo, n).state is State.FINISHED
    assert set(repo.labels(n)) == {READY}


def test_retried_label_writes_and_edits_are_harmless(repo, proxy, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    rules = [proxy.drop("POST", rf"/issues/{n}/labels$", after_forward=True, count=1),
             proxy.drop("DELETE", rf"/issues/{n}/labels/", after_forward=True, count=1),
             proxy.drop("PATCH", r"/issues/comments/\d+$", after_forward=True, count=1)]
    child = Child(tmp_path, hold=False)
    # Each lost answer costs a retry; the claim must finish within its lease (the renew deadline,
    # 2/3 of stale_after) however slowly a loaded machine retries, so the lease is roomy.
    roomy = fast_config(tmp_path, "heartbeat: {interval: 1, stale_after: 60}\nrun: {kill_grace: 1}\n")
    r = run(orion_env, tmp_path, roomy, "--issue", str(n), "--stage", "x", cmd=child.cmd)
    assert r.wait() == 0, r.stderr
    assert [rule.hits for rule in rules] == [1, 1, 1]
    assert len(claim_comments(repo, n)) == 1
    assert set(repo.labels(n)) == {READY}


# `make test` keeps 429 (Retry-After); test_transient_heartbeat_errors_are_not_a_lost_lock retries a 502.
@pytest.mark.parametrize("fault", [
    pytest.param("5xx", marks=pytest.mark.slow),
    pytest.param("secondary rate limit", marks=pytest.mark.slow),
    "429",
])
def test_transient_errors_on_the_claim_path_are_retried(repo, proxy, orion_env, tmp_path, config,
                                                        fault):
    n = repo.create_issue("work", [QUEUE])
    paths = [("POST", r"^/graphql$"), ("GET", rf"/issues/{n}$"), ("POST", rf"/issues/{n}/comments$"),
             ("POST", rf"/issues/{n}/labels$"), ("DELETE", rf"/issues/{n}/labels/{QUEUE}$"),
             ("GET", rf"/issues/{n}/comments$"), ("PATCH", r"/issues/comments/\d+$")]
    rules = []
    for method, path in paths:
        if fault == "5xx":
            rules.append(proxy.fail(method, path, 503, count=1))
        elif fault == "429":
            rules.append(proxy.fail(method, path, 429, headers={"Retry-After": "1"}, count=1))
        else:
            rules.append(proxy.secondary_rate_limit(method, path, retry_after=1, count=1))
    child = Child(tmp_path, hold=False)
    # Three waits of a second each must fit in the claim's lease (the renew deadline, 2/3 of
    # stale_after): a claim that cannot finish within it gives up instead of running late.
    roomy = fast_config(tmp_path, "heartbeat: {interval: 1, stale_after: 12}\nrun: {kill_grace: 2}\n")
    r = run(orion_env, tmp_path, roomy, "--issue", str(n), cmd=child.cmd)
    assert r.wait() == 0, r.stderr
    assert [rule.hits for rule in rules] == [1] * len(rules)
    assert child.started
    assert len(claim_comments(repo, n)) == 1
    assert set(repo.labels(n)) == {READY}
    assert only_record(repo, n).state is State.FINISHED


def test_no_orion_process_is_left_behind(repo, orion_env, tmp_path, config):
    """After a run, neither the wrapper nor anything it started is still around."""
    n = repo.create_issue("work", [QUEUE])
    child = Child(tmp_path, hold=False)
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd)
    assert r.wait() == 0, r.stderr
    me = psutil.Process(os.getpid())
    leftovers = [p for p in me.children(recursive=True)
                 if p.pid in (r.pid, child.pid) and p.status() != psutil.STATUS_ZOMBIE]
    assert leftovers == []
    assert records(repo, n)[0].child_pid == child.pid


# -- GitHub unreachable --------------------------------------------------------------------------


def test_github_unreachable_exits_69_and_changes_nothing(repo, proxy, orion_env, tmp_path, config):
    from rig.harness import snapshot

    n = repo.create_issue("work", [QUEUE])
    before = snapshot(repo, n)
    proxy.fail(None, r"/repos/", status=503)
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd,
            extra_env={"ORION_API_RETRY_SECONDS": "2"})
    assert r.wait() == 69, r.stderr
    lines = [line for line in r.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1 and "did not answer" in lines[0] and "within 2s" in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert proxy.count(method="GET") >= 2  # it did retry
    assert not child.marker.exists()
    assert snapshot(repo, n) == before


def test_a_claim_cut_short_after_posting_is_marked_lost_and_requeued_by_reconcile(
        repo, proxy, orion_env, tmp_path, config):
    """The lock label write fails for good after the claim comment landed: the record says
    lost, and the next reconcile puts the issue back in the queue at once."""

    n = repo.create_issue("work", [QUEUE])
    proxy.fail("DELETE", rf"/issues/{n}/labels/", status=503)
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd,
            extra_env={"ORION_API_RETRY_SECONDS": "2"})
    assert r.wait() == 69, r.stderr
    assert not child.marker.exists()
    rec = only_record(repo, n)
    assert rec.state is State.LOST and "could not be completed" in (rec.note or "")
    assert WORKING in repo.labels(n)
    proxy.clear()
    done = product(["reconcile", "--config", str(config)], env=orion_env, workdir=tmp_path, cwd=Path.cwd())
    assert done.returncode == 0, done.stderr
    # The claim never removed the queue label (only a winner does, last): the pass keeps it.
    assert f"#{n}  requeue" in done.stdout and "the issue is queued" in done.stdout, done.stdout
    assert set(repo.labels(n)) == {QUEUE}
