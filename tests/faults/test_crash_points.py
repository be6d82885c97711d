"""Crash points: SIGKILL the wrapper at every step of its life, then reconcile once.

The proxy holds the wrapper's NEXT request after the step, so the kill lands exactly between
two writes: "after the claim comment is posted" holds the POST .../labels that follows it, and
so on. The held request is then dropped (the emulator never sees it). After one reconcile pass
every issue must be consistent (faults.assert_consistent): queued again, or ready/failed when
its record says finished; no live claim, no lock with a dead holder, nothing left running.

Who judges matters (docs/design.md section 5): on the holder's own machine the process table is
decisive and the requeue is immediate; after a reboot (same machine id, new boot id) too;
from another machine only the heartbeat can tell, so it must wait for stale_after.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

import pytest
from rig import Proxy, RepoHandle, wait_until
from rig.harness import STALE_AFTER, Orion, assert_clean_stderr

from faults import (
    Machines,
    actions_of,
    assert_consistent,
    until_action,
    view,
    wait_child_started,
    wait_children_gone,
)

COMMENT = r"/issues/comments/\d+$"


@dataclass(frozen=True)
class Point:
    """Kill after a step: hold `method path` (the next request), installed before the run
    starts, or once the child runs and `patches` record writes were answered."""

    method: str
    path: str  # formatted with the issue number
    after_start: bool = False
    patches: int = 1
    exit_code: int | None = None  # the child exits with this (a point after the child ended)
    action: str | None = "requeue"  # what the reconcile pass must do
    outcome: str = "queued"
    # Won (`running`, no child) with its unqueue sent (here dropped): a pass holds it in doubt
    # (`report`) until its lease's writes can no longer land, IN_DOUBT_S after its claim (ADR 0072).
    in_doubt: bool = False
    # The ending writes by REST (ADR 0076): the repository has no `orion-ready` label, so the
    # trigger check's query told no node id for it (REST creates it on the issue).
    rest: bool = False


POINTS = {
    "after_claim_comment": Point("POST", r"/issues/{n}/labels$", action=None),
    "after_lock_label": Point("DELETE", r"/issues/{n}/labels/orion$", in_doubt=True),
    "after_queue_label_removed": Point("GET", r"/issues/{n}/comments$"),
    "after_arbitration": Point("PATCH", COMMENT),  # the child has started; "running" is held
    "mid_run": Point("PATCH", COMMENT, after_start=True, patches=3),
    # After the ending's one request (ADR 0076: the final record and the outcome label), the
    # stage label's removal held and dropped: the lock is still on.
    "after_finish_record_ok": Point("DELETE", r"/issues/{n}/labels/orion-stage-build$", after_start=True,
                                    exit_code=0, action="complete", outcome="ready"),
    "after_finish_record_failed": Point("DELETE", r"/issues/{n}/labels/orion-stage-build$", after_start=True,
                                        exit_code=3, action="complete", outcome="failed"),
    # The REST sequence, where no node id is known.
    "after_ready_label": Point("DELETE", r"/issues/{n}/labels/orion-stage-build$",
                               after_start=True, exit_code=0, action="complete", outcome="ready", rest=True),
    # The stage label goes before the lock: a crash in between once left the stage label on a
    # finished issue, where no reconcile pass looks (it only visits issues carrying the lock).
    "after_stage_label_removed": Point("DELETE", r"/issues/{n}/labels/orion-working$",
                                       after_start=True, exit_code=0, action="complete",
                                       outcome="ready", rest=True),
}
# The lease (2/3 of stale_after) plus GitHub's request limit and its whole-second slack.
IN_DOUBT_S = STALE_AFTER * 2 / 3 + 11.0
# Points that leave an open claim of a dead holder under the lock: the judge decides.
HELD = ["after_lock_label", "after_queue_label_removed", "after_arbitration", "mid_run"]


def fast_only(names: list[str], fast: set[str]) -> list:
    """`make test` kills at the points in `fast`; the others repeat a repair it already covers
    (a dead holder under the lock: tests/integration/test_reconcile.py's SIGKILLed wrapper;
    `complete`: the failed finish here) and run in `make test-slow`."""
    return [n if n in fast else pytest.param(n, marks=pytest.mark.slow) for n in names]


def crash(point: Point, orion: Orion, proxy: Proxy, repo: RepoHandle) -> int:
    """Create a queued issue, run the wrapper on it, SIGKILL it at `point`; nothing is left
    running afterwards (the child dies with the wrapper: PR_SET_PDEATHSIG)."""
    n = repo.create_issue("crash point", ["orion"])
    if point.rest:
        repo.api("DELETE", "/labels/orion-ready")
    log, go = orion.workdir / "child.log", orion.workdir / "go"
    path = point.path.format(n=n)
    hold = None if point.after_start else proxy.hold(point.method, path)
    code = 0 if point.exit_code is None else point.exit_code
    run = orion.run(n, stage="build", child=orion.child_argv(log, until=go, exit_code=code))
    if point.after_start:
        wait_child_started(log)
        proxy.wait_for("PATCH", COMMENT, n=point.patches, status=200)
        hold = proxy.hold(point.method, path)
        if point.exit_code is not None:
            go.touch()
    assert hold is not None
    hold.wait_arrived()
    run.kill(signal.SIGKILL)
    assert run.wait() == -signal.SIGKILL
    hold.release(drop=True)
    wait_children_gone(log)
    assert_clean_stderr(run)
    return n


def last_claim_write(proxy: Proxy, repo: RepoHandle, n: int) -> float:
    """When a claim comment of issue n was last written (posted or edited), by the proxy's
    clock: the heartbeat age on GitHub's clock starts there."""
    ids = {c.comment_id for c in view(repo, n).log.claims}
    writes = [e.time for e in proxy.log if e.status is not None and e.status < 300 and (
        (e.method == "PATCH" and e.path.rsplit("/", 1)[-1] in {str(i) for i in ids}
         and "/issues/comments/" in e.path)
        or (e.method == "POST" and e.path.endswith(f"/issues/{n}/comments")))]
    assert writes, "the claim comment was never written"
    return max(writes)


def assert_claimable(orion: Orion, repo: RepoHandle, n: int) -> None:
    """Queued again means claimable again: a fresh run on this machine claims it and runs."""
    log = orion.workdir / "again.log"
    run = orion.run(n, child=orion.child_argv(log, seconds=0))
    assert run.wait() == 0, run.stderr
    assert_clean_stderr(run)
    assert len(wait_child_started(log)) == 1
    assert_consistent(repo, n, "ready")


@pytest.mark.parametrize("name", fast_only(list(POINTS), {
    "after_claim_comment", "after_finish_record_failed", "after_stage_label_removed"}))
def test_crash_then_reconcile_on_the_same_machine(name, orion, proxy, repo):
    point = POINTS[name]
    n = crash(point, orion, proxy, repo)
    plan = orion.reconcile()
    if point.in_doubt:
        assert actions_of(plan, n) == ["report"], plan
        plan, _ = until_action(orion, n, "requeue", timeout=IN_DOUBT_S + 20)
    assert actions_of(plan, n) == ([point.action] if point.action else []), plan
    assert_consistent(repo, n, point.outcome)
    if point.outcome == "queued":
        assert_claimable(orion, repo, n)


def test_killed_after_a_refused_addition_a_pass_completes(orion, proxy, repo):
    """ADR 0076 (a): the ending's one request lands its record edit and not its addition, and
    the holder is killed before its REST addition: the lock is still on beside the finished
    record, and the next pass completes the run (`ready`), as after any ending cut short."""
    proxy.refuse_finish_add(1)
    n = crash(Point("POST", r"/issues/{n}/labels$", after_start=True, exit_code=0), orion, proxy, repo)
    assert "orion-working" in view(repo, n).labels and "orion-ready" not in view(repo, n).labels
    plan = orion.reconcile()
    assert actions_of(plan, n) == ["complete"], plan
    assert_consistent(repo, n, "ready")


# Slow: tests/integration/test_machines.py's reboot test keeps this rule in `make test`.
@pytest.mark.slow
@pytest.mark.parametrize("name", HELD)
def test_crash_then_reconcile_after_a_reboot(name, orion, proxy, repo, machines: Machines):
    """Same machine id and host name, new boot id, and a missed beat: every process of the claim
    is gone, so a pass requeues long before the heartbeat goes stale (a reboot verdict needs the
    missed beat too: clones share machine id and host name)."""
    n = crash(POINTS[name], orion, proxy, repo)
    plans: list[dict] = []

    def requeued() -> bool:
        plans.append(orion.reconcile(prefix=machines.rebooted()))
        return actions_of(plans[-1], n) not in (["keep"], ["report"])  # report: in doubt (ADR 0072)

    # A claim in doubt waits out its unqueue (ADR 0072); the others go before their heartbeat
    # could be stale.
    bound = IN_DOUBT_S + STALE_AFTER if POINTS[name].in_doubt else STALE_AFTER
    wait_until(requeued, bound, 0.2, lambda: f"never requeued: {plans}")
    plan = plans[-1]
    assert actions_of(plan, n) == ["requeue"], plan
    assert "rebooted" in plan["actions"][0]["reason"], plan
    assert_consistent(repo, n, "queued")
    assert_claimable(orion, repo, n)


@pytest.mark.slow
@pytest.mark.parametrize("name", [*HELD, "after_finish_record_ok", "after_ready_label"])
def test_crash_then_reconcile_from_another_machine(name, orion, proxy, repo, machines: Machines):
    """Another machine cannot see the holder's processes: it keeps the claim while the heartbeat
    is fresh and requeues only once it is older than stale_after (on GitHub's clock). A record
    that says finished needs no waiting."""
    point = POINTS[name]
    n = crash(point, orion, proxy, repo)
    elsewhere = machines.other()
    if point.action == "complete":
        plan = orion.reconcile(prefix=elsewhere)
        assert actions_of(plan, n) == ["complete"], plan
        assert_consistent(repo, n, point.outcome)
        return
    last = last_claim_write(proxy, repo, n)

    def kept_while_fresh(plan: dict, ended: float) -> None:
        if ended < last + STALE_AFTER:  # the whole pass ran before the claim could be stale
            assert actions_of(plan, n) == ["keep"], plan
            assert view(repo, n).has_lock

    first = orion.reconcile(prefix=elsewhere)
    assert actions_of(first, n) == ["keep"], first  # right after the kill: still alive
    _, requeued_at = until_action(orion, n, "requeue", elsewhere, timeout=STALE_AFTER + 20,
                                  every=kept_while_fresh)
    assert requeued_at >= last + STALE_AFTER
    assert_consistent(repo, n, "queued")
    assert_claimable(orion, repo, n)


# -- the reconciler crashes too -------------------------------------------------------------------

RECONCILER_POINTS = {
    # (method, path) held after the tombstone POST has gone through, then the reconciler dies.
    "after_tombstone": ("GET", r"/issues/{n}/comments$"),  # its duplicate check
    "after_tombstone_checked": ("POST", r"/issues/{n}/labels$"),
    "after_queue_label": ("DELETE", r"/issues/{n}/labels/orion-working$"),
}


def dead_claim(orion: Orion, proxy: Proxy, repo: RepoHandle) -> int:
    """An issue under the lock whose holder was SIGKILLed mid-run (nothing left running)."""
    n = repo.create_issue("dead holder", ["orion"])
    log = orion.workdir / "dead.log"
    run = orion.run(n, stage="build", child=orion.child_argv(log))
    wait_child_started(log)
    proxy.wait_for("PATCH", COMMENT, n=2, status=200)
    run.kill(signal.SIGKILL)
    run.wait()
    wait_children_gone(log)
    return n


# Slow: `make test` kills a reconcile pass between tombstone and labels in tests/integration/
# test_reconcile.py (the point after_tombstone_checked).
@pytest.mark.slow
@pytest.mark.parametrize("name", list(RECONCILER_POINTS))
def test_reconciler_killed_mid_repair_then_the_next_pass_finishes_it(name, orion, proxy, repo):
    n = dead_claim(orion, proxy, repo)
    tomb = proxy.hold("POST", rf"/issues/{n}/comments$")
    reconciler = orion.spawn(["reconcile", "--config", str(orion.config), "--json"])
    tomb.wait_arrived()
    method, path = RECONCILER_POINTS[name]
    hold = proxy.hold(method, path.format(n=n))  # in place before the tombstone goes on
    tomb.release()
    hold.wait_arrived()
    reconciler.kill(signal.SIGKILL)
    reconciler.wait()
    hold.release(drop=True)

    plan = orion.reconcile()
    assert actions_of(plan, n) in (["requeue"], []), plan  # [] once the lock was already off
    v = assert_consistent(repo, n, "queued")
    assert len(v.log.tombstones) == 1
    assert_claimable(orion, repo, n)


# Found by this test: IssueLog.attempts_used counted tombstones, not released claims, so one
# death spent two attempts of the retry budget. Slow: `make test` keeps the rule in
# tests/unit/test_issue_log.py ("two tombstones of one death count once").
@pytest.mark.slow
def test_a_duplicate_tombstone_left_by_a_killed_reconciler_costs_one_attempt(orion, proxy, repo):
    """Two reconcilers race over one dead claim; the one that lost the race is killed before it
    can delete its duplicate tombstone. The issue must still be queued, and the death counted
    once: the next run is attempt 2, not 3."""
    n = dead_claim(orion, proxy, repo)
    tombs = proxy.hold("POST", rf"/issues/{n}/comments$")
    racers = [orion.spawn(["reconcile", "--config", str(orion.config), "--json"]) for _ in range(2)]
    tombs.wait_arrived(n=2)
    undo = proxy.hold("DELETE", COMMENT)  # the loser taking its tombstone back
    tombs.release()
    undo.wait_arrived()
    for r in racers:  # the winner may be done; the loser is parked on its DELETE
        if r.poll() is None:
            r.kill(signal.SIGKILL)
        r.wait()
    undo.release(drop=True)
    orion.reconcile()
    v = view(repo, n)
    assert not v.has_lock and "orion" in v.labels, sorted(v.labels)
    assert len(v.log.tombstones) == 2  # the crash left the duplicate behind
    assert v.log.attempts_used() == 1, f"one death counted {v.log.attempts_used()} times"
    log = orion.workdir / "again.log"
    run = orion.run(n, child=orion.child_argv(log, seconds=0))
    assert run.wait() == 0, run.stderr
    (start,) = wait_child_started(log)
    assert start["attempt"] == "2"
