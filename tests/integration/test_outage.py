"""GitHub's failures spend no retry budget (ADR 0019), against the real emulator.

A holder whose GitHub goes down past the renew deadline stops its child, keeps trying to say
why, and once GitHub answers again records "interrupted, no attempt spent" and hands the
issue back: the next claim gets the same attempt number. When a pass (on another machine,
which still reaches GitHub) released the claim as dead first, the holder's account still
wins. A kill -9 still spends an attempt.

Fast configuration: beat every 1 s, stale after 4 s (renew deadline 2.7 s), kill grace 1 s.
"""

from __future__ import annotations

import signal
from datetime import datetime
from pathlib import Path

import pytest
from namespaces import available, other_machine_cmd
from rig import ROOT, Emulator, wait_until
from rig import orion_env as make_env
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
    pid_alive,
    product,
    running_record,
    tombstones,
)

from orion_action.core.issue import Comment, read_log, trusted_set
from orion_action.core.record import ReleaseAction, State
from orion_action.services.holding import OUTAGE_RETRY_MAX_S

_why_not = available()
if _why_not:  # a clear failure, never a silent skip
    raise RuntimeError(f"tests/namespaces.py cannot work here: {_why_not}")

T = datetime(2026, 1, 1)


def attempts_used(repo, n: int) -> int:
    comments = [Comment(c["id"], c["user"], c["body"], T, T) for c in repo.comments(n)]
    return read_log(comments, trusted_set(Emulator.OWNER, [])).attempts_used()


def started(repo, orion_env, tmp_path, config) -> tuple[int, Run, Child]:
    n = repo.create_issue("work", [QUEUE])
    child = Child(tmp_path)
    r = Run(orion_env, tmp_path, "--issue", str(n), cmd=child.cmd, config=config)
    child.wait_started()
    wait_until(lambda: running_record(repo, n), message="record never said running")
    return n, r, child


def next_attempt(repo, orion_env, tmp_path, config, n: int) -> str:
    """Claim and run the issue again: the attempt number the next run is given."""
    child = Child(tmp_path, name="next", hold=False)
    r = Run(orion_env, tmp_path, "--issue", str(n), cmd=child.cmd, config=config, name="next")
    assert r.wait() == 0, r.stderr
    assert READY in repo.labels(n)
    return child.info()["env"]["ORION_ATTEMPT"]


def reconcile(env: dict[str, str], config: Path, *, elsewhere: bool = False, direct: bool = False) -> str:
    """A pass; `direct`: one that talks to the emulator itself, which lacks the repository-wide
    comment listing the proxy adds: it reads every locked issue in full, and exits 69 since it
    could not look for what a dead writer left (ADR 0091)."""
    done = product(["reconcile", "--config", str(config)], env=env, workdir=config.parent, cwd=ROOT,
                   wrap=other_machine_cmd if elsewhere else None)
    if direct:
        assert done.returncode == 69 and "the pass is incomplete" in done.stderr, done.stderr
    else:
        assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return fast_config(tmp_path)


def test_an_outage_past_the_renew_deadline_spends_no_attempt(repo, proxy, orion_env, tmp_path, config):
    n, r, child = started(repo, orion_env, tmp_path, config)
    proxy.fail(None, r"/repos/", 503)
    wait_until(lambda: not pid_alive(child.pid), message="the child outlived the lease")
    # Still down: the holder keeps trying (and says so) instead of exiting.
    wait_until(lambda: "cannot record the outage yet" in r.stderr, message=r.stderr)
    assert r.poll() is None
    proxy.clear()
    # Its next try comes within its longest back-off, however long the outage lasted under load.
    assert r.wait(OUTAGE_RETRY_MAX_S + 30) == LOST, r.stderr
    rec = only_record(repo, n)
    assert rec.state is State.INTERRUPTED and rec.counts_attempt is False
    assert "GitHub was unreachable" in (rec.note or "") and rec.child_pid == child.pid
    # GitHub answered only after a judge could presume the holder dead (stale_after 4 s): it
    # leaves the labels (a move now could take a next run's lock off), and a pass hands the
    # issue back on its record, without spending an attempt.
    assert "the next reconcile pass hands the issue back" in r.stderr, r.stderr
    assert WORKING in repo.labels(n)
    assert "requeue" in reconcile(orion_env, config)
    assert set(repo.labels(n)) == {QUEUE}
    assert attempts_used(repo, n) == 0
    assert next_attempt(repo, orion_env, tmp_path, config, n) == "1"


def test_the_holders_account_beats_a_pass_that_released_it_first(repo, proxy, emulator, orion_env, tmp_path):
    """GitHub rate-limits the holder only (secondary limits): a pass on another machine,
    talking to GitHub directly, sees the heartbeat go stale, releases the claim as dead and
    counts the attempt, which with max_attempts 1 fails the issue. When GitHub answers the
    holder again, its record says the outage interrupted the run: nothing is spent, and the
    issue is back in the queue. A write from before its record (a forced release's rewrite from
    an older read) that lands after the holder is done undoes the record, but not the outage
    marker appended after it (ADR 0092)."""
    config = fast_config(tmp_path, "heartbeat: {interval: 1, stale_after: 4}\nrun: {kill_grace: 1}\n"
                                   "retry: {max_attempts: 1}\n")
    direct = make_env(repo.full_name, emulator.url, Emulator.BOT_TOKEN)
    n, r, child = started(repo, orion_env, tmp_path, config)
    proxy.secondary_rate_limit(None, r"/repos/", retry_after=60)
    wait_until(lambda: not pid_alive(child.pid), message="the child outlived the lease")
    passes: list[str] = []

    def released() -> bool:
        passes.append(reconcile(direct, config, elsewhere=True, direct=True))
        return WORKING not in repo.labels(n)

    wait_until(released, interval=0.2, message=lambda: f"no pass released the claim: {passes}")
    [tomb] = tombstones(repo, n)
    assert tomb.counts_attempt and tomb.by == "reconcile"
    assert (tomb.action, set(repo.labels(n))) == (ReleaseAction.GIVE_UP, {FAILED})
    assert attempts_used(repo, n) == 1  # the pass's presumption, until the holder speaks
    assert r.poll() is None, r.stderr  # still trying to record the outage
    [claim] = claim_comments(repo, n)
    proxy.clear()
    # Its next try comes within its longest back-off, however long the outage lasted under load.
    assert r.wait(OUTAGE_RETRY_MAX_S + 30) == LOST, r.stderr
    rec = only_record(repo, n)
    assert rec.state is State.INTERRUPTED and rec.counts_attempt is False
    assert "released" in (rec.note or "")
    assert attempts_used(repo, n) == 0
    marker = tombstones(repo, n)[-1]
    assert (marker.by, marker.action, marker.counts_attempt) == ("holder", ReleaseAction.INTERRUPTED, False)
    repo.edit_comment(claim["id"], claim["body"])  # the stale rewrite lands last
    assert only_record(repo, n).state is State.RUNNING
    assert attempts_used(repo, n) == 0
    assert set(repo.labels(n)) == {QUEUE}
    assert next_attempt(repo, orion_env, tmp_path, config, n) == "1"


def test_a_kill_minus_9_still_spends_an_attempt(repo, orion_env, tmp_path, config):
    n, r, child = started(repo, orion_env, tmp_path, config)
    pid = child.pid
    r.send_signal(signal.SIGKILL)
    r.wait()
    # The short bound is the claim: the child dies with its wrapper (PR_SET_PDEATHSIG), at once.
    wait_until(lambda: not pid_alive(pid), timeout=3, message="the child outlived the wrapper")
    out = reconcile(orion_env, config)  # same machine: the wrapper's pid is gone, dead at once
    assert f"#{n}  requeue" in out, out
    [tomb] = tombstones(repo, n)
    assert tomb.counts_attempt
    assert only_record(repo, n).state is State.RUNNING
    assert attempts_used(repo, n) == 1  # the next claim runs attempt 2


def test_a_claim_cut_short_by_a_5xx_is_requeued_without_spending(repo, proxy, orion_env, tmp_path, config):
    """The claimer's last write (taking the queue label off) fails for good: it marks its
    claim lost and exits 69 without running; the pass requeues and nothing is spent."""
    n = repo.create_issue("work", [QUEUE])
    proxy.fail("DELETE", rf"/issues/{n}/labels/", status=503)
    child = Child(tmp_path)
    r = Run(orion_env, tmp_path, "--issue", str(n), cmd=child.cmd, config=config,
            extra_env={"ORION_API_RETRY_SECONDS": "1"})
    assert r.wait() == 69, r.stderr
    assert not child.started
    proxy.clear()
    out = reconcile(orion_env, config)
    assert f"#{n}  requeue" in out, out
    assert all(not t.counts_attempt for t in tombstones(repo, n))
    assert attempts_used(repo, n) == 0  # the next claim runs attempt 1
