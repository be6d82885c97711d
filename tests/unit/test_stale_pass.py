"""A reconcile pass does not take the lock off a queued issue whose claim it cannot list yet
(ADR 0049): the lock beside the queue label with no claim listed is a claim in flight whose
comment GitHub's listing still lags, not a leftover. The model found it as `stale-pass-unlock`
(seed 3, episode 24): the pass planned on a list without the claim, the claimer won, and the
pass's late lock removal stranded the issue. Directed on the in-memory GitHub."""

from __future__ import annotations

import threading

import pytest
from fakes.memory_github import BOT, MemoryServer, ServerTime

from orion_action.config import Config
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Liveness, Machine, ProcessSighting, Verdict
from orion_action.core.plan import Action, Plan, plan_issue
from orion_action.core.record import (
    ClaimRecord,
    Holder,
    ReleaseAction,
    State,
    Tombstone,
    render_record,
    render_tombstone,
)
from orion_action.core.survey import Survey
from orion_action.errors import GitHubError
from orion_action.services.claiming import Claimer
from orion_action.services.reconcile import Reconciler, reconcile_pass

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, source="test")
LAB = CONFIG.labels


def machine(name: str) -> Machine:
    return Machine(host=name, boot_id=f"{name}-boot", machine_id=f"{name}-id", pid_ns=f"{name}-ns")


def test_the_lock_beside_the_queue_label_with_no_claim_listed_is_left_alone() -> None:
    empty = read_log([], trusted_set(BOT, ()))
    plan = plan_issue(1, True, frozenset({LAB.queue, LAB.working}), empty, {}, LAB, 3)
    assert plan.action is Action.REPORT and not plan.writes
    assert "no claim is listed yet" in plan.reason


def test_a_pass_during_a_claim_whose_comment_lags_does_not_strand_it() -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    claimer = Claimer(s.client(), CONFIG, lambda _line: None, ServerTime(s), machine("a"),
                      Holder("a", "a-boot", "a-id", "a-ns", 10, 10.0), sight=lambda _pid, _child: None)
    done: list[str] = []

    def pass_meanwhile(name: str, args: tuple[object, ...]) -> None:
        if name != "add_labels" or done:
            return
        s.hide(max(c.id for c in s.comments(n)), 5.0)  # our claim, posted just now, is not listed
        s.on_call = None
        r = Reconciler(s.client(), CONFIG, lambda _line: None, here=machine("hosted"),
                       sight=lambda _pid, _child: None)
        s.add_label(n, LAB.working)  # the lock this claim is adding, as the pass sees it
        done.extend(r.execute(sv).action.value for sv in r.survey())

    s.on_call = pass_meanwhile
    claim = claimer.claim_number(n, None)
    assert done == ["report"]
    assert s.issue(n).labels == frozenset({LAB.working})  # held by the winner, not stranded
    assert claim.number == n


def test_a_claim_posted_twice_by_a_retry_is_one_claim_and_a_pass_finishes_it() -> None:
    """duplicate-claim (the model's seeds 14/19 and 11/145): the claim POST lands but its
    answer is lost, and the retry's look for it misses it in a lagging listing, so one token
    sits in two comments; the claimer edits only the second. After the claimer died and a pass
    was killed between its tombstone and its label move, every later pass crashed on the
    orphan copy (a KeyError in the plan) and the lock stayed for ever. The last copy is the
    claim (ADR 0049)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue, LAB.working])
    now = s.clock.now.isoformat(timespec="seconds")
    holder = Holder("a", "a-boot", "a-id", "a-ns", 10, 10.0)
    record = ClaimRecord(token="t1", state=State.CLAIMING, holder=holder, started_at=now, heartbeat_at=now,
                         interval=CONFIG.heartbeat_interval, stale_after=CONFIG.stale_after)
    s.comment(n, render_record(record), BOT)  # the copy whose answer was lost
    second = s.comment(n, render_record(record.with_changes(state=State.RUNNING)), BOT)  # won, then died
    log = read_log(s.comments(n), trusted_set(BOT, ()))
    assert [c.comment_id for c in log.claims] == [second]
    s.clock.advance(CONFIG.stale_after + 10)
    tomb = Tombstone("t1", ReleaseAction.REQUEUE, "a pass killed before its label move", False, "reconcile")
    s.comment(n, render_tombstone(tomb), BOT)
    r = Reconciler(s.client(), CONFIG, lambda _line: None, here=machine("hosted"),
                   sight=lambda _pid, _child: None)
    assert [r.execute(sv).action for sv in r.survey()] == [Action.REQUEUE]
    assert s.issue(n).labels == frozenset({LAB.queue})


def test_a_dead_run_on_a_cancelled_issue_is_not_requeued() -> None:
    """The model's seed 7, episode 203: two passes plan to requeue the same dead run while a
    person's cancel label is on; one does it and its cancel sweep takes the labels off, then
    the other's stale plan lands and puts the queue label back: the issue runs again. A dead
    run on an issue carrying the cancel label is unlocked, not requeued (ADR 0049), so a stale
    plan has nothing to undo."""
    now = "2026-01-01T12:00:00+00:00"
    holder = Holder("a", "a-boot", "a-id", "a-ns", 10, 10.0)
    record = ClaimRecord(token="t1", state=State.RUNNING, holder=holder, started_at=now, heartbeat_at=now,
                         interval=CONFIG.heartbeat_interval, stale_after=CONFIG.stale_after, child_pid=None)
    s = MemoryServer()
    n = s.create_issue("work", [LAB.working, LAB.cancel])
    s.comment(n, render_record(record), BOT)
    log = read_log(s.comments(n), trusted_set(BOT, ()))
    dead = {"t1": Verdict(Liveness.DEAD, "no heartbeat for 70s")}
    plan = plan_issue(n, True, frozenset({LAB.working, LAB.cancel}), log, dead, LAB, 3)
    assert plan.action is Action.REQUEUE and plan.add_labels == ()
    assert plan.remove_labels == (LAB.working,)
    assert "not requeued" in plan.reason
    assert plan.tombstone_action is ReleaseAction.UNLOCK  # no repair reads it as a requeue
    queued = plan_issue(n, True, frozenset({LAB.working, LAB.cancel, LAB.queue}), log, dead, LAB, 3)
    assert queued.add_labels == () and LAB.queue in queued.remove_labels
    without = plan_issue(n, True, frozenset({LAB.working}), log, dead, LAB, 3)
    assert without.add_labels == (LAB.queue,) and without.tombstone_action is ReleaseAction.REQUEUE


def test_a_loser_leaves_the_lock_when_a_comment_is_not_listed_yet() -> None:
    """The model's unattributed replay (8, 235): a claimer whose lock write failed gives up and
    tidies: the issue shows the lock and the queue label, its listing shows no claim after
    ours, so it took the lock off. But the lock was a later claimer's, whose claim the listing
    still lagged: that claimer won and ran without a lock. The issue's comment count runs ahead
    of a lagging listing: while it does, the loser leaves the lock to a pass (ADR 0049)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    a = Claimer(s.client(), CONFIG, lambda _line: None, ServerTime(s), machine("a"),
                Holder("a", "a-boot", "a-id", "a-ns", 10, 10.0), sight=lambda _pid, _child: None)
    reads: list[str] = []

    def later_claim(name: str, args: tuple[object, ...]) -> None:
        if name == "add_labels" and not reads:
            reads.append("failing")
            s.fail_next(threading.current_thread().name, "unavailable")  # our lock never lands
        elif name == "get_issue" and reads == ["failing"]:  # our tidy's read
            reads.append("tidy")
            now = s.clock.now.isoformat(timespec="seconds")
            record = ClaimRecord(token="b", state=State.RUNNING, holder=Holder("b", "b", "b", "b", 20, 20.0),
                                 started_at=now, heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                                 stale_after=CONFIG.stale_after)
            s.hide(s.comment(n, render_record(record), BOT), 5.0)  # B's claim: not listed yet
            s.add_label(n, LAB.working)  # B's lock

    s.on_call = later_claim
    with pytest.raises(GitHubError):
        a.claim_number(n, None)
    assert reads == ["failing", "tidy"]
    assert LAB.working in s.issue(n).labels  # B's lock stays


def dead_claim(s: MemoryServer, n: int, token: str = "dead") -> None:
    """A claim that won and died before its command started, long ago."""
    now = s.clock.now.isoformat(timespec="seconds")
    record = ClaimRecord(token=token, state=State.RUNNING, holder=Holder("d", "d", "d", "d", 30, 30.0),
                         started_at=now, heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                         stale_after=CONFIG.stale_after)
    s.comment(n, render_record(record), BOT)
    s.clock.advance(CONFIG.stale_after + 10)


def reconciler(s: MemoryServer) -> Reconciler:
    return Reconciler(s.client(), CONFIG, lambda _line: None, here=machine("hosted"),
                      sight=lambda _pid, _child: None)


def surveyed_dead_lock() -> tuple[MemoryServer, int, Reconciler, Survey]:
    """An issue carrying the lock of a long dead claim, surveyed by a pass that plans to
    requeue it; the pass has moved nothing yet."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.working])
    dead_claim(s, n)
    r = reconciler(s)
    (survey,) = r.survey()
    assert survey.plan.action is Action.REQUEUE
    return s, n, r, survey


def test_a_pass_does_not_unlock_under_a_claim_posted_after_its_re_list() -> None:
    """stale-pass-unlock: the pass requeues a dead claim; after its re-list (which showed no new
    claim) a new claimer claims the issue (the pass's queue label on, the lock the same label).
    The issue now counts one comment more than the pass listed: the pass lists once more, sees
    the new claim and leaves the labels (ADR 0049); the new claim keeps its lock."""
    s, n, r, survey = surveyed_dead_lock()

    def new_claim(name: str, args: tuple[object, ...]) -> None:
        if name == "get_issue":  # the pass's read just before its label move
            s.on_call = None
            now = s.clock.now.isoformat(timespec="seconds")
            b = Holder("b", "b", "b", "b", 20, 20.0)
            record = ClaimRecord(token="new", state=State.CLAIMING, holder=b, started_at=now,
                                 heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                                 stale_after=CONFIG.stale_after)
            s.comment(n, render_record(record), BOT)

    s.on_call = new_claim
    done = r.execute(survey)
    assert done.action is Action.KEEP and "a new claim" in done.reason
    assert LAB.working in s.issue(n).labels


def test_a_pass_moves_no_label_once_the_lock_was_taken_off_meanwhile() -> None:
    """stale-pass-unlock through a person: the pass plans to requeue a dead claim, a person
    takes the lock off and the issue is claimed again before the pass's move lands. A pass
    finding the lock gone moves nothing (ADR 0049): whoever took it off decided the labels."""
    s, n, r, survey = surveyed_dead_lock()
    s.remove_label(n, LAB.working)  # by hand
    done = r.execute(survey)
    assert done.action is Action.KEEP and "taken off" in done.reason
    assert s.issue(n).labels == frozenset()


def test_a_forced_release_of_a_cancelled_issue_does_not_requeue_it() -> None:
    """repair-undoes-cancel (the model's seed 13, episode 215): a person cancels a running
    issue and releases it with --force; the release put the queue label on over the cancel,
    the sweep took queue and cancel off, and the released holder's repair (ADR 0025), finding
    a release of its claim back to the queue as the last event and no label, put the queue
    label back. The release of a cancelled issue unlocks (ADR 0049): nothing to repair."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.working, LAB.cancel])
    now = s.clock.now.isoformat(timespec="seconds")
    record = ClaimRecord(token="t1", state=State.RUNNING, holder=Holder("a", "a", "a", "a", 10, 10.0),
                         started_at=now, heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                         stale_after=CONFIG.stale_after, child_pid=11)
    s.comment(n, render_record(record), BOT)
    plan = reconciler(s).release(n, force=True)
    assert plan.add_labels == () and "not requeued" in plan.reason
    assert s.issue(n).labels == frozenset({LAB.cancel})
    (tomb,) = read_log(s.comments(n), trusted_set(BOT, ())).tombstones
    assert tomb.tombstone.action is ReleaseAction.UNLOCK


def claim_that_gave_up(s: MemoryServer, n: int) -> int:
    """A claim that gave up before its lock landed (its lock write is still on the way)."""
    now = s.clock.now.isoformat(timespec="seconds")
    record = ClaimRecord(token="late", state=State.LOST, holder=Holder("c", "c", "c", "c", 40, 40.0),
                         started_at=now, heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                         stale_after=CONFIG.stale_after, note="the claim could not be completed")
    return s.comment(n, render_record(record), BOT)


def test_the_cancel_sweep_waits_while_a_claim_may_still_add_its_lock() -> None:
    """requeue-over-cancel (ADR 0053): a claimer's lock write lands late, after the sweep took
    the queue and cancel labels off; the next pass then requeues the claim that gave up, and the
    cancel is undone. The sweep leaves both labels while the issue's newest claim was posted
    less than renew_deadline plus the landing margin ago, and finishes once it is older."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue, LAB.cancel])
    claim_that_gave_up(s, n)
    s.clock.advance(CONFIG.renew_deadline + 10)  # its lock may still land
    r = reconciler(s)
    (plan,) = r.survey_cancels()
    done = r.execute_cancel(plan)
    assert done.action is Action.KEEP and "may still add its lock" in done.reason
    assert s.issue(n).labels == frozenset({LAB.queue, LAB.cancel})
    s.clock.advance(2)  # past the window: no write of that claimer can land any more
    (plan,) = r.survey_cancels()
    assert r.execute_cancel(plan).action is Action.CANCEL
    assert s.issue(n).labels == frozenset()


def test_the_cancel_sweep_waits_while_a_comment_is_not_listed() -> None:
    """A comment the listing still lags may be a claim whose lock is on the way: the sweep
    leaves the labels to the next pass (ADR 0053)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue, LAB.cancel])
    s.clock.advance(CONFIG.stale_after)
    s.hide(claim_that_gave_up(s, n), 5.0)
    r = reconciler(s)
    (plan,) = r.survey_cancels()
    done = r.execute_cancel(plan)
    assert done.action is Action.KEEP and "not listed yet" in done.reason
    assert s.issue(n).labels == frozenset({LAB.queue, LAB.cancel})


def test_a_pass_leaves_the_labels_when_its_last_listing_shows_an_earlier_release() -> None:
    """stale-pass-unlock with two passes (ADR 0054): both release one dead run, and each
    re-list after its tombstone misses the other's (GitHub's listing lags it). The later pass's
    last read before its label move counts more comments than it listed and lists again: the
    earlier release is there now. That pass moves the labels; this one leaves them, or its move
    could land after the next claim's lock and take it off."""
    s, n, r, survey = surveyed_dead_lock()
    first: list[int] = []

    def earlier_release(name: str, args: tuple[object, ...]) -> None:
        if name == "post_comment" and not first:  # another pass's tombstone lands first, lagging
            tomb = Tombstone("dead", ReleaseAction.REQUEUE, "the other pass", True, "reconcile")
            first.append(s.comment(n, render_tombstone(tomb), BOT))
            s.hide(first[0], 1.0)
        elif name == "get_issue" and first:  # our last read: the lag is over by now
            s.on_call = None
            s.clock.advance(2.0)

    s.on_call = earlier_release
    done = r.execute(survey)
    assert done.action is Action.KEEP and "released the claim first" in done.reason
    assert s.issue(n).labels == frozenset({LAB.working})  # the other pass's move, not ours


@pytest.mark.parametrize("claimed", [True, False], ids=["a claim meanwhile", "none"])
def test_a_pass_looks_again_before_it_retries_its_lock_removal(claimed: bool) -> None:
    """stale-pass-unlock through a retry (the model's seed 20, episode 210): the pass's lock
    removal lands but its answer is lost; a new claimer takes the requeued issue (the same
    lock label), and the client's retry took that lock off. The pass sends its lock removal
    one try at a time and looks at the issue again in between (ADR 0054): a new claim there
    keeps its lock; with none, a removal that landed is done."""
    s, n, r, survey = surveyed_dead_lock()
    removals: list[str] = []

    def lose_the_answer(name: str, args: tuple[object, ...]) -> None:
        if name == "remove_label" and args[1] == LAB.working:
            removals.append(str(args[1]))
            if len(removals) == 1:
                s.fail_next(threading.current_thread().name, "lost")
        elif name == "get_issue" and removals and claimed:  # a claimer won meanwhile
            s.on_call = None
            now = s.clock.now.isoformat(timespec="seconds")
            b = Holder("b", "b", "b", "b", 20, 20.0)
            record = ClaimRecord(token="new", state=State.RUNNING, holder=b, started_at=now, heartbeat_at=now,
                                 interval=CONFIG.heartbeat_interval, stale_after=CONFIG.stale_after)
            s.comment(n, render_record(record), BOT)
            s.add_label(n, LAB.working)
            s.remove_label(n, LAB.queue)

    s.on_call = lose_the_answer
    done = r.execute(survey)
    assert removals == [LAB.working]  # never sent again
    if claimed:
        assert done.action is Action.KEEP and "a new claim" in done.reason
        assert s.issue(n).labels == frozenset({LAB.working})  # the new run keeps its lock
    else:
        assert done.action is Action.REQUEUE and s.issue(n).labels == frozenset({LAB.queue})


def test_a_pass_tries_its_lock_removal_again_when_nothing_changed() -> None:
    """A lock removal that failed and did not land is tried again after the pass looked (the
    lock still on, no new claim), up to LOCK_TRIES times; then the failure is the pass's."""
    s, n, r, survey = surveyed_dead_lock()
    removals: list[int] = []

    def fail_every_try(name: str, args: tuple[object, ...]) -> None:
        if name == "remove_label" and args[1] == LAB.working:
            removals.append(1)
            if len(removals) < 3:
                s.fail_next(threading.current_thread().name, "retried")  # a 502: nothing applied

    s.on_call = fail_every_try
    assert r.execute(survey).action is Action.REQUEUE
    assert len(removals) == 3 and s.issue(n).labels == frozenset({LAB.queue})
    s2 = MemoryServer()
    n2 = s2.create_issue("work", [LAB.working])
    dead_claim(s2, n2)
    r2 = reconciler(s2)
    (survey2,) = r2.survey()
    s2.on_call = lambda name, args: (s2.fail_next(threading.current_thread().name, "unavailable")
                                     if name == "remove_label" and args[1] == LAB.working else None)
    with pytest.raises(GitHubError):
        r2.execute(survey2)
    assert LAB.working in s2.issue(n2).labels



def test_a_pass_leaves_the_lock_beside_the_queue_label_while_a_recent_comment_lags() -> None:
    """pass-unlocks-unlisted-claim (ADR 0054): the lock and the queue label beside a dead
    claim that never ran, and a comment the listing does not show yet, posted just now: it may
    be the claim of a claimer that read the issue as queued, whose lock is the one on the issue.
    The pass leaves the labels to the next pass."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue, LAB.working])
    dead_claim(s, n)
    r = reconciler(s)
    (survey,) = r.survey()
    assert survey.plan.action is Action.REQUEUE

    def lagging_claim(name: str, args: tuple[object, ...]) -> None:
        if name == "get_issue":  # the pass's read before its label move
            s.on_call = None
            s.hide(claim_that_gave_up(s, n), 5.0)

    s.on_call = lagging_claim
    done = r.execute(survey)
    assert done.action is Action.KEEP and "not listed yet beside the queue label" in done.reason
    assert s.issue(n).labels == frozenset({LAB.queue, LAB.working})


def test_a_comment_that_never_lists_keeps_no_dead_holder_for_long() -> None:
    """The wait is bounded: once the issue has not changed for renew_deadline plus the landing
    margin (no claim that old can still run), a comment the listing never shows no longer
    keeps the lock (ADR 0054)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue, LAB.working])
    now = s.clock.now.isoformat(timespec="seconds")
    record = ClaimRecord(token="gone", state=State.LOST, holder=Holder("d", "d", "d", "d", 30, 30.0),
                         started_at=now, heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                         stale_after=CONFIG.stale_after)
    s.comment(n, render_record(record), BOT)  # gave up; no tombstone needed, none posted
    s.hide(s.comment(n, "spam", "someone"), 1000.0)
    s.clock.advance(CONFIG.stale_after)
    r = reconciler(s)
    (survey,) = r.survey()
    assert survey.plan.action is Action.REQUEUE and not survey.plan.release
    assert r.execute(survey).action is Action.REQUEUE
    assert s.issue(n).labels == frozenset({LAB.queue})


def test_the_cancel_sweep_plans_from_the_issue_as_it_reads_it_before_writing() -> None:
    """stale-pass-repair in the sweep (the model's seed 4, episode 5): the sweep listed a
    finished issue carrying the cancel label and planned to take only that label off; a person
    then requeued it and cancelled it again. The sweep plans again from its read just before
    its writes, and takes the queue label off too (ADR 0053); with no cancel label left it
    writes nothing."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.ready, LAB.cancel])
    r = reconciler(s)
    (plan,) = r.survey_cancels()
    assert plan.remove_labels == (LAB.cancel,)
    s.remove_label(n, LAB.ready)
    s.add_label(n, LAB.queue)  # requeued by a person, the cancel label still on
    done = r.execute_cancel(plan)
    assert done.action is Action.CANCEL and done.remove_labels == (LAB.queue, LAB.cancel)
    assert s.issue(n).labels == frozenset()
    s.add_label(n, LAB.cancel)
    (plan,) = r.survey_cancels()
    s.remove_label(n, LAB.cancel)  # taken off by hand meanwhile
    s.add_label(n, LAB.queue)
    assert r.execute_cancel(plan).action is Action.KEEP
    assert s.issue(n).labels == frozenset({LAB.queue})


def test_the_cancel_sweep_puts_back_a_cancel_its_removal_took_after_its_read() -> None:
    """stale-sweep-uncancel (the model's trace (31, 110); ADR 0073): the sweep took the queue
    label off and read the issue; before its removal of the cancel label landed, a person
    requeued the issue and cancelled it again. The removal took that new cancel off; GitHub's
    record shows it standing (orion's removal withdraws none), so the sweep puts the label back
    and the next pass finishes the cancel. A requeue alone, or a cancel the person withdrew, is
    left as it is."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue, LAB.cancel])
    r = reconciler(s)
    (plan,) = r.survey_cancels()

    def requeue_and_cancel_again(name: str, args: tuple[object, ...]) -> None:
        if name == "remove_label" and args[1] == LAB.cancel:
            s.on_call = None
            s.remove_label(n, LAB.cancel)  # a person's requeue: the cancel off, the queue label on
            s.add_label(n, LAB.queue)
            s.add_label(n, LAB.cancel)  # and a new cancel

    s.on_call = requeue_and_cancel_again
    done = r.execute_cancel(plan)
    assert done.action is Action.KEEP and "cancelled the issue again" in done.reason
    assert s.issue(n).labels == frozenset({LAB.queue, LAB.cancel})
    (plan,) = r.survey_cancels()  # the next pass
    assert r.execute_cancel(plan).action is Action.CANCEL
    assert s.issue(n).labels == frozenset()

    s.add_label(n, LAB.queue)
    s.add_label(n, LAB.cancel)
    (plan,) = r.survey_cancels()

    def requeue_only(name: str, args: tuple[object, ...]) -> None:
        if name == "remove_label" and args[1] == LAB.cancel:
            s.on_call = None
            s.remove_label(n, LAB.cancel)
            s.add_label(n, LAB.queue)

    s.on_call = requeue_only
    assert r.execute_cancel(plan).action is Action.CANCEL
    assert s.issue(n).labels == frozenset({LAB.queue})  # the person's requeue stands


def test_a_pass_leaves_an_outage_record_its_holder_wrote_after_the_tombstone() -> None:
    """outage-record-overwritten (the model's trace (13, 197); ADR 0073): a pass presumes a
    holder dead and posts its tombstone; the holder, back from an outage, writes its record
    (interrupted, no attempt spent) before the pass rewrites the released claim's visible line
    from the `running` record it read. The pass reads the comment again first and leaves the
    holder's account: the attempt stays unspent (and since ADR 0090 a pass rewrites no silent
    holder's record at all)."""
    s, n, r, survey = surveyed_dead_lock()
    (entry,) = survey.plan.release
    outage = render_record(entry.record.with_changes(state=State.INTERRUPTED, counts_attempt=False,
                                                     note="GitHub was unreachable, so no attempt is spent"))

    def holder_writes_its_outage_record(name: str, args: tuple[object, ...]) -> None:
        if name == "list_comments":  # the pass's re-list after its tombstone
            s.on_call = None
            s.clock.advance(1.0)
            s.edit(entry.comment_id, outage)

    s.on_call = holder_writes_its_outage_record
    r.execute(survey)
    log = read_log(s.comments(n), trusted_set(BOT, ()))
    (claim,) = log.claims
    assert claim.record.state is State.INTERRUPTED and not claim.record.counts_attempt
    assert log.attempts_used() == 0



def test_a_pass_rewrites_only_the_record_of_a_holder_it_saw_gone() -> None:
    """ADR 0090: a holder judged dead by its silence may be cut off and write its outage record
    once back; a rewrite planned before that could land after it and after the holder's looks
    back (the residue of trace (13, 197)). The pass leaves such a record as it is (the tombstone
    says it is released) and rewrites the visible line only of a holder its own machine's process
    table shows gone."""
    s, n, r, survey = surveyed_dead_lock()
    assert survey.verdicts["dead"].is_dead and not survey.verdicts["dead"].holder_gone
    r.execute(survey)
    log = read_log(s.comments(n), trusted_set(BOT, ()))
    (claim,) = log.claims
    assert claim.record.released is None and log.released_tokens() == {"dead"}

    s = MemoryServer()
    n = s.create_issue("work", [LAB.working])
    here = Machine("hosted", "hosted-boot", "hosted-id", "4026531836:table-x")  # a proven own table
    now = s.clock.now.isoformat(timespec="seconds")
    record = ClaimRecord(token="gone", state=State.RUNNING,
                         holder=Holder(here.host, here.boot_id, here.machine_id, here.pid_ns, 30, 30.0),
                         started_at=now, heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                         stale_after=CONFIG.stale_after)
    s.comment(n, render_record(record), BOT)
    s.clock.advance(CONFIG.stale_after + 10)
    r = Reconciler(s.client(), CONFIG, lambda _line: None, here=here,
                   sight=lambda _pid, _child: ProcessSighting(wrapper_start=None))
    (survey,) = r.survey()
    assert survey.verdicts["gone"].holder_gone
    r.execute(survey)
    (claim,) = read_log(s.comments(n), trusted_set(BOT, ())).claims
    assert claim.record.released is not None and claim.record.state is State.RUNNING


def test_the_cancel_sweep_puts_back_a_queueing_its_removal_took_after_its_read() -> None:
    """stale-pass-repair in the sweep (the model's seed 13, episode 64; ADR 0073): two passes'
    sweeps read the cancelled issue; one carries the cancel out, the person requeues the issue,
    and the other's queue-label removal, planned before, takes that queueing. GitHub's record
    shows orion's removal of a queueing made with no cancel label on and none since: the label
    goes back and the sweep stops there."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    s.add_label(n, LAB.cancel)
    late, other = reconciler(s), reconciler(s)
    (plan,) = late.survey_cancels()

    def other_sweep_then_requeue(name: str, args: tuple[object, ...]) -> None:
        if name == "remove_label" and args[1] == LAB.queue:
            s.on_call = None
            (first,) = other.survey_cancels()
            assert other.execute_cancel(first).action is Action.CANCEL
            s.add_label(n, LAB.queue)  # the person's requeue, the cancel carried out

    s.on_call = other_sweep_then_requeue
    done = late.execute_cancel(plan)
    assert done.action is Action.KEEP and "queued the issue again" in done.reason
    assert s.issue(n).labels == frozenset({LAB.queue})
    assert late.survey_cancels() == []


def test_a_pass_takes_off_a_fate_it_added_after_someone_else_moved_the_labels() -> None:
    """stale-pass-repair (scenario pass_completes_beside_the_holders_label_move; ADR 0073): the
    pass's last read found the lock on; before its addition landed someone else moved the
    labels (here a person: the lock off, ready on). GitHub's answer to the addition shows the
    lock gone and another fate: the pass takes its own addition off and moves nothing more.
    With only its own fate on, the addition stays."""
    s, n, r, survey = surveyed_dead_lock()

    def moved_meanwhile(name: str, args: tuple[object, ...]) -> None:
        if name == "add_labels":
            s.on_call = None
            s.remove_label(n, LAB.working)
            s.add_label(n, LAB.ready)

    s.on_call = moved_meanwhile
    done = r.execute(survey)
    assert done.action is Action.KEEP and "taken off again" in done.reason
    assert s.issue(n).labels == frozenset({LAB.ready})

    s, n, r, survey = surveyed_dead_lock()

    def unlocked_meanwhile(name: str, args: tuple[object, ...]) -> None:
        if name == "add_labels":
            s.on_call = None
            s.remove_label(n, LAB.working)

    s.on_call = unlocked_meanwhile
    assert r.execute(survey).action is Action.REQUEUE
    assert s.issue(n).labels == frozenset({LAB.queue})


def _ended_failed_then_requeued_by_orion(s: MemoryServer) -> int:
    """An issue a run ended failed (the lock off last), then orion's queue label landed after the
    lock came off: a pass's stale requeue (default seed 15 episode 9), or a holder's hand-back
    after an outage, which takes failed off next (ADR 0019)."""
    n = s.create_issue("work", [LAB.queue])
    s.remove_label(n, LAB.queue, login=BOT)
    for name in (LAB.working, LAB.failed):
        s.add_label(n, name, login=BOT)
    s.remove_label(n, LAB.working, login=BOT)
    s.add_label(n, LAB.queue, login=BOT)
    return n


def _one_pass(s: MemoryServer) -> list[tuple[int, Action, str]]:
    result = reconcile_pass(s.client(), CONFIG, lambda _line: None, machine("hosted"),
                            lambda _pid, _child: None, dry_run=False)
    return [(p.issue, p.action, p.reason) for p in result.done]


def test_a_stale_requeue_beside_a_runs_fate_comes_off() -> None:
    """The next pass's look at the queue takes orion's queue label off when it came after the
    lock's last removal, beside a fate added before it: the run's end stands (ADR 0099)."""
    s = MemoryServer()
    n = _ended_failed_then_requeued_by_orion(s)
    [(issue, action, reason)] = _one_pass(s)
    assert (issue, action) == (n, Action.COMPLETE), reason
    assert s.issue(n).labels == frozenset({LAB.failed})
    assert _one_pass(s) == []


def test_a_hand_back_that_takes_the_fate_off_meanwhile_keeps_its_queue_label() -> None:
    """The pass reads queue and failed, then the holder's outage hand-back takes failed off just
    before the pass's removal of the queue label lands: no label would be left. The pass looks
    again and puts the queue label back (ADR 0099)."""
    s = MemoryServer()
    n = _ended_failed_then_requeued_by_orion(s)

    def hand_back_lands_first(name: str, args: tuple[object, ...]) -> None:
        if name == "remove_label" and args == (n, LAB.queue):
            s.on_call = None
            s.remove_label(n, LAB.failed, login=BOT)

    s.on_call = hand_back_lands_first
    [(issue, action, reason)] = _one_pass(s)
    assert (issue, action) == (n, Action.KEEP) and "is back" in reason, reason
    assert s.issue(n).labels == frozenset({LAB.queue})


def _stale_requeue_under_run_b(s: MemoryServer, ended: State = State.FINISHED) -> tuple[int, int]:
    """Run A died and a pass released it back to the queue; run B claimed the issue and
    finished 0 (or was cancelled by a signal). Under B's lock a stale pass's second release of A
    (its tombstone and the queue label) landed, then B's ending added ready (a cancel ending adds
    nothing, and leaves a queue label it finds) and took the lock off (ADRs 0102, 0103). Returns
    the issue and B's claim comment."""
    holder = Holder("h", "b", "m", "ns", 10, 1.0)
    now = s.clock.now.isoformat(timespec="milliseconds")

    def claim(token: str, state: State, code: int | None = None) -> int:
        record = ClaimRecord(token=token, state=state, holder=holder, started_at=now, heartbeat_at=now,
                             interval=CONFIG.heartbeat_interval, stale_after=CONFIG.stale_after, child_pid=77,
                             exit_code=code)
        cid = s.comment(n, render_record(record), BOT)
        s.add_label(n, LAB.working, login=BOT)
        s.remove_label(n, LAB.queue, login=BOT)
        return cid

    n = s.create_issue("work", [LAB.queue])
    claim("a", State.RUNNING)
    release_a = render_tombstone(Tombstone("a", ReleaseAction.REQUEUE, "no heartbeat", counts_attempt=True))
    s.comment(n, release_a, BOT)
    s.add_label(n, LAB.queue, login=BOT)
    s.remove_label(n, LAB.working, login=BOT)
    b = claim("b", ended, 0 if ended is State.FINISHED else None)
    s.comment(n, release_a, BOT)
    for name in (LAB.queue, LAB.ready) if ended is State.FINISHED else (LAB.queue,):
        s.add_label(n, name, login=BOT)
    s.remove_label(n, LAB.working, login=BOT)
    return n, b


def test_a_stale_requeue_under_a_run_waits_for_a_listing_that_shows_the_run() -> None:
    """The listing leaves B's claim out: the record has no word yet, and nothing is touched. A
    pass whose listing shows it takes the stale queue label off (ADR 0102)."""
    s = MemoryServer()
    n, b = _stale_requeue_under_run_b(s)
    s.hide(b, 30.0)
    assert _one_pass(s) == []
    assert s.issue(n).labels == frozenset({LAB.queue, LAB.ready})
    s.settle()
    [(issue, action, reason)] = _one_pass(s)
    assert (issue, action) == (n, Action.COMPLETE) and "ends it orion-ready" in reason, reason
    assert s.issue(n).labels == frozenset({LAB.ready})


def test_a_stale_requeue_under_a_run_is_left_when_the_listing_fails() -> None:
    """The comment listing fails: the pass logs it, is incomplete, and touches nothing."""
    s = MemoryServer()
    n, _ = _stale_requeue_under_run_b(s)

    def listing_fails(name: str, args: tuple[object, ...]) -> None:
        if name == "list_comments" and args[0] == n:
            raise GitHubError("HTTP 502")

    s.on_call = listing_fails
    logged: list[str] = []
    result = reconcile_pass(s.client(), CONFIG, logged.append, machine("hosted"), lambda _pid, _child: None,
                            dry_run=False)
    assert result.done == [] and s.issue(n).labels == frozenset({LAB.queue, LAB.ready})
    says = "could not read whether the run left its orion label (HTTP 502)"
    assert any(says in line for line in logged), logged


def test_a_cancelled_runs_stale_queue_label_waits_while_a_claim_may_be_in_flight() -> None:
    """The issue looks queued, and a claimer may have read it so: while the newest claim is within
    its lease the pass leaves the label; once it is past, the label comes off (ADRs 0053, 0103)."""
    s = MemoryServer()
    n, _ = _stale_requeue_under_run_b(s, State.CANCELLED)
    [(issue, action, reason)] = _one_pass(s)
    assert (issue, action) == (n, Action.KEEP) and "may still add its lock" in reason, reason
    assert s.issue(n).labels == frozenset({LAB.queue})
    s.clock.advance(CONFIG.renew_deadline + 30)
    [(issue, action, reason)] = _one_pass(s)
    assert (issue, action) == (n, Action.CANCEL) and "the run was cancelled" in reason, reason
    assert s.issue(n).labels == frozenset()
    assert _one_pass(s) == []


def test_a_cancelled_runs_stale_queue_label_stays_when_the_labels_changed_meanwhile() -> None:
    """A run took the issue between the pass's look and its removal: the labels are left."""
    s = MemoryServer()
    n, _ = _stale_requeue_under_run_b(s, State.CANCELLED)
    s.clock.advance(CONFIG.renew_deadline + 30)

    def claimed_meanwhile(name: str, args: tuple[object, ...]) -> None:
        if name == "get_issue" and args == (n,):
            s.on_call = None
            s.add_label(n, LAB.working, login=BOT)

    s.on_call = claimed_meanwhile
    [(issue, action, reason)] = _one_pass(s)
    assert (issue, action) == (n, Action.KEEP) and "changed meanwhile" in reason, reason
    assert LAB.queue in s.issue(n).labels


def _released_while_a_new_run_claims(hidden: bool) -> tuple[MemoryServer, int, Plan]:
    """A person's `release --force` of issue 1's dead run, which stalls after its survey: a pass
    requeued the run and a new one claimed (its claim comment and lock) before the release's
    tombstone (ADR 0107; the adaptive GraphQL world's seed 26 episode 37). `hidden`: the new
    claim lags in listings."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.working])
    dead_claim(s, n)

    def claimed_meanwhile(name: str, args: tuple[object, ...]) -> None:
        if name == "post_comment":
            s.on_call = None
            now = s.clock.now.isoformat(timespec="seconds")
            record = ClaimRecord(token="new", state=State.RUNNING,
                                 holder=Holder("b", "b", "b", "b", 50, 50.0),
                                 started_at=now, heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                                 stale_after=CONFIG.stale_after, child_pid=51)
            cid = s.comment(n, render_record(record), BOT)
            if hidden:
                s.hide(cid, 30.0)

    s.on_call = claimed_meanwhile
    return s, n, reconciler(s).release(n, force=True)


@pytest.mark.parametrize(("hidden", "says"), [(False, "claimed the issue after this release read it"),
                                              (True, "the comment listing lags the issue")])
def test_a_forced_release_leaves_the_lock_of_a_claim_made_after_its_survey(hidden: bool, says: str) -> None:
    s, n, plan = _released_while_a_new_run_claims(hidden)
    assert says in plan.reason, plan.reason
    assert s.issue(n).labels == frozenset({LAB.working})
    log = read_log(s.comments(n), trusted_set(BOT, ()))
    assert [t.tombstone.token for t in log.tombstones] == ["dead"]  # the person's release stands
    assert [c.record.token for c in log.open_claims()] == ["new"]
