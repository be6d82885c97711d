"""Contention: many workers over one queue, and two reconcilers over the same dead claims.

Exactly-once is judged from the children's own log (each child appends its issue number and pid
with one O_APPEND write), not from what the product says about itself.
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter

import pytest
from rig import PATIENCE, Proxy, RepoHandle, wait_until
from rig.harness import Orion, assert_clean_stderr

from faults import (
    WORKERS,
    actions_of,
    assert_consistent,
    child_events,
    requeue_all,
    start_workers,
    view,
    wait_child_started,
    wait_children_gone,
)

ISSUES = 20

def run_round(orion: Orion, proxy: Proxy, numbers: list[int], tag: str,
              timeout: float = 150.0) -> list[dict]:
    workers, results, go, log = start_workers(orion, WORKERS, tag, child_seconds=0.3)
    try:
        go.touch()  # all eight at the same moment
        deadline = time.monotonic() + timeout
        for w in workers:
            w.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()
    wait_children_gone(log)
    runs = [json.loads(line) for line in results.read_text().splitlines()]
    for r in runs:
        assert r["rc"] in (0, 75), f"a wrapper exited {r['rc']}:\n{r['stderr']}"
        assert "Traceback" not in r["stderr"], r["stderr"]
    assert sum(1 for r in runs if r["rc"] == 75 and "queue is empty" in r["stderr"]) == WORKERS
    # Exactly once, by the children's own account: one start and one end per issue.
    events = child_events(log)
    starts = Counter(int(e["issue"]) for e in events if e["event"] == "start")
    ends = Counter(int(e["issue"]) for e in events if e["event"] == "end")
    twice = {n: c for n, c in starts.items() if c > 1}
    assert not twice, f"issues worked more than once in round {tag}: {twice}"
    assert sorted(starts) == sorted(numbers), f"issues never worked: {set(numbers) - set(starts)}"
    assert ends == starts
    assert sum(1 for r in runs if r["rc"] == 0) == len(numbers)
    limited = proxy.count(status=403)
    assert limited == 0, f"{limited} requests were refused: the round outran the rate limit"
    return runs


def check_round(repo: RepoHandle, numbers: list[int], rounds: int) -> None:
    for n in numbers:
        v = assert_consistent(repo, n, "ready")
        finished = [c for c in v.log.claims if c.record.state.value == "finished"]
        assert len(finished) == rounds, f"#{n}: {len(finished)} finished records after {rounds} rounds"
        tokens = v.claim_tokens()
        assert len(tokens) == len(set(tokens)), f"#{n}: a claim comment was posted twice"


def contention(orion: Orion, proxy: Proxy, repo: RepoHandle, rounds: int) -> None:
    numbers = [repo.create_issue(f"work item {i}", ["orion"]) for i in range(ISSUES)]
    for r in range(1, rounds + 1):
        if r > 1:
            requeue_all(repo, numbers)
        run_round(orion, proxy, numbers, f"round{r}")
        check_round(repo, numbers, r)


# Slow: tests/integration/test_run.py's six wrappers on one issue keep exactly-once in `make test`.
@pytest.mark.slow
def test_eight_workers_twenty_issues_each_worked_exactly_once(orion, proxy, repo):
    contention(orion, proxy, repo, rounds=1)


@pytest.mark.slow
def test_eight_workers_several_rounds_each_issue_exactly_once_per_round(orion, proxy, repo):
    contention(orion, proxy, repo, rounds=3)
    assert proxy.count() < 4500, f"{proxy.count()} requests: close to the 5000/h token budget"


# Slow: tests/integration/test_reconcile.py races two reconcilers over one dead claim in `make test`.
@pytest.mark.slow
def test_two_reconcilers_at_once_requeue_each_dead_claim_once(orion: Orion, proxy: Proxy, repo):
    """Both reconcilers judge the same dead claims; the proxy holds the first tombstone POST
    until both have sent theirs, so they really race (the rest race as they come)."""
    numbers = [repo.create_issue(f"dead {i}", ["orion"]) for i in range(5)]
    log = orion.workdir / "children.log"
    runs = [orion.run(n, stage="build", child=orion.child_argv(log)) for n in numbers]
    wait_child_started(log, n=len(numbers))

    def every_record_names_its_child() -> bool:
        """A run counts an attempt once its record names its child: from its first beat, up
        to half a second after the child started (ADR 0059), not at the start itself."""
        return all(any(c.record.child_pid is not None for c in view(repo, n).log.claims) for n in numbers)

    wait_until(every_record_names_its_child, message="every record naming its child's pid")
    for run in runs:
        run.kill(signal.SIGKILL)
        run.wait()
    wait_children_gone(log)

    hold = proxy.hold("POST", r"/issues/\d+/comments$")
    first, second = (orion.spawn(["reconcile", "--config", str(orion.config), "--json"])
                     for _ in range(2))
    hold.wait_arrived(n=2)
    hold.release()
    plans = []
    for proc in (first, second):
        assert proc.wait() == 0, proc.stderr
        assert_clean_stderr(proc)
        plans.append(proc.json())
    for n in numbers:
        acts = actions_of(plans[0], n) + actions_of(plans[1], n)
        assert acts.count("requeue") == 1, f"#{n}: {acts}"
        v = assert_consistent(repo, n, "queued")
        assert len(v.log.tombstones) == 1, f"#{n}: {len(v.log.tombstones)} tombstones"
        assert v.log.tombstones[0].tombstone.counts_attempt
    # The loser of each race took its own tombstone back: nothing of it is left to read.
    wait_until(lambda: all(len(view(repo, n).log.tombstones) == 1 for n in numbers), 5)




def roomy(orion: Orion) -> Orion:
    """The same runner with stale_after 60 s: a late claimer's lease (counted from before its
    held POST) must outlast the hold and the settle counted from the POST's answer (ADR 0023),
    and a loaded machine stretches a parked claim; parked requests, not time, order these
    scenarios (no test below waits for a claim to go stale)."""
    config = orion.workdir / "roomy.yml"
    config.write_text("heartbeat: {interval: 1, stale_after: 60}\nrun: {kill_grace: 1}\n")
    twin = Orion(orion.env, config, orion.workdir)
    twin.procs = orion.procs  # one list: the fixture cleans up after both
    return twin


def test_a_late_claimer_meeting_a_finishing_run_leaves_the_issue_ready(orion: Orion, proxy: Proxy,
                                                                         repo: RepoHandle):
    """Exact interleaving (found by the flaky contention test): claimer L read the issue as
    queued, then the winner W claimed, ran and wrote its finish; L's claim lands, L sees that W
    ran meanwhile, gives up and takes its stale lock off -- just before W, about to move the
    labels, re-reads the issue. W finds the lock gone and leaves the labels; the issue was
    left with no label at all (neither queued nor ready), where no reconcile pass looks."""
    orion = roomy(orion)
    n = repo.create_issue("late claimer", ["orion"])
    log, go = orion.workdir / "children.log", orion.workdir / "go"
    late_post = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)
    late = orion.run(n, child=orion.child_argv(log, seconds=0))
    late_post.wait_arrived(timeout=PATIENCE)  # L read the issue as queued; its claim is parked
    winner = orion.run(n, child=orion.child_argv(log, until=go))
    wait_child_started(log)
    proxy.wait_for("PATCH", r"/issues/comments/\d+$", n=1, status=200, timeout=PATIENCE)
    finish_read = proxy.hold("GET", rf"/issues/{n}$", count=1)  # W's next read: a beat's or its finish's
    go.touch()
    finish_read.wait_arrived(timeout=PATIENCE)
    late_post.release()
    assert late.wait(PATIENCE) == 75, late.stderr
    assert "lost the race" in late.stderr  # W ran meanwhile, or still held it
    finish_read.release()
    assert winner.wait(PATIENCE) == 0, winner.stderr
    for proc in (late, winner):
        assert_clean_stderr(proc)
    assert len([e for e in child_events(log) if e["event"] == "start"]) == 1
    assert orion.reconcile()["actions"] == []  # nothing left for a pass to repair
    assert_consistent(repo, n, "ready")


def test_two_late_claimers_after_a_finished_run_take_their_lock_off(orion: Orion, proxy: Proxy,
                                                                     repo: RepoHandle):
    """Two claimers read the issue as queued; the winner claims, runs and finishes; then both
    late claims land and both arbitrate seeing each other. The lower one wins, sees the run
    happened meanwhile and gives up; the other lost to it and, as a loser, touches no label.
    So the lower one must take the lock off although the other is still open (it once left the
    lock to the other, and nobody took it off until a reconcile pass)."""
    orion = roomy(orion)
    n = repo.create_issue("two late claimers", ["orion"])
    log = orion.workdir / "children.log"
    posts = proxy.hold("POST", rf"/issues/{n}/comments$", count=2)
    late = [orion.run(n, child=orion.child_argv(log, seconds=0)) for _ in range(2)]
    posts.wait_arrived(n=2, timeout=PATIENCE)
    winner = orion.run(n, child=orion.child_argv(log, seconds=0))
    assert winner.wait(PATIENCE) == 0, winner.stderr
    assert_consistent(repo, n, "ready")
    lists = proxy.hold("GET", rf"/issues/{n}/comments$", count=2)  # both arbitrate seeing both
    posts.release()
    lists.wait_arrived(n=2, timeout=PATIENCE)
    lists.release()
    for proc in late:
        assert proc.wait(PATIENCE) == 75, proc.stderr
        assert_clean_stderr(proc)
    assert len([e for e in child_events(log) if e["event"] == "start"]) == 1  # safe, always
    assert not view(repo, n).has_lock, "both late claimers left the lock on"


def test_a_late_claimer_losing_to_another_loser_takes_its_lock_off(orion: Orion, proxy: Proxy,
                                                                   repo: RepoHandle):
    """L1 and L2 read the issue as queued; W claims it and runs. L1's claim lands while W runs:
    L1 loses to W and is slow to mark itself lost. W finishes and moves the labels. L2's claim
    lands now: it re-adds the lock and loses to L1 (still open). Neither learnt from arbitration
    that the run is over; the one that marks itself lost last must see it and take the lock
    off (it once stayed on until a reconcile pass)."""
    orion = roomy(orion)
    n = repo.create_issue("late losers", ["orion"])
    log, go = orion.workdir / "children.log", orion.workdir / "go"
    first = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)
    l1 = orion.run(n, child=orion.child_argv(log, seconds=0))
    first.wait_arrived(timeout=PATIENCE)
    second = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)
    l2 = orion.run(n, child=orion.child_argv(log, seconds=0))
    second.wait_arrived(timeout=PATIENCE)
    w = orion.run(n, child=orion.child_argv(log, until=go))
    wait_child_started(log)

    l1_lock = proxy.hold("POST", rf"/issues/{n}/labels$", count=1)
    first.release()  # L1's claim lands while W runs
    l1_lock.wait_arrived(timeout=PATIENCE)
    l1_id = max(c.comment_id for c in view(repo, n).log.claims)
    l1_lost = proxy.hold("PATCH", rf"/issues/comments/{l1_id}$")  # L1 is slow to say "lost"
    l1_lock.release()
    l1_lost.wait_arrived(timeout=PATIENCE)

    go.touch()
    assert w.wait(PATIENCE) == 0, w.stderr  # W finished and moved the labels
    second.release()  # L2's claim lands now
    # L2 may wait on L1's undecided claim up to its renew deadline (40 s here): a hang guard.
    assert l2.wait(PATIENCE) == 75, l2.stderr
    l1_lost.release()
    assert l1.wait(PATIENCE) == 75, l1.stderr
    for proc in (l1, l2, w):
        assert_clean_stderr(proc)
    assert len([e for e in child_events(log) if e["event"] == "start"]) == 1  # safe, always
    assert not view(repo, n).has_lock, "the lock a late loser added is left on a finished issue"
