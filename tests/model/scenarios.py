"""Directed scenarios: named, deterministic interleavings of the model's world for situations
random search reaches too rarely to count on (ADR 0047). Each drives a `World` step by step,
checks every invariant after every step, then quiesces and checks the settled state; on the
code as it is none breaks (test_scenarios.py), and bench/model_mutations.py runs them all
against each mutation after the explorer's search.
"""

from __future__ import annotations

from collections.abc import Callable

from model.world import CLONE, CONFIG, HOSTED, ISSUE, LAB, Worker, World


def _run(world: World, actor: str, stop: Callable[[], bool] = lambda: False) -> None:
    """Step `actor` (checking the invariants after each step) until it is done or `stop()`."""
    while actor in world.runnable() and not stop():
        world.step(actor)
        world.check()


def _at(world: World, actor: str, op: str) -> Callable[[], bool]:
    return lambda: (world.sched.pending_op(actor) or ("",))[0] == op


def _settle(world: World) -> None:
    world.quiesce()
    world.check_settled()


def _pass(world: World, machine: str = HOSTED) -> None:
    _run(world, world.spawn_reconciler(machine))


def _running(world: World, machine: str) -> Worker:
    """A worker that claims issue 1 and starts its child (its first beat sent)."""
    w = world.spawn_worker(machine)
    _run(world, f"{w.name}.claim")
    assert w.child_started, f"{w.name} did not win the claim"
    _run(world, f"{w.name}.beat", _at(world, f"{w.name}.beat", "sleep"))
    return w


def _beat_again(world: World, w: Worker) -> None:
    """The worker's beat thread wakes from its sleep and beats once more."""
    beat = f"{w.name}.beat"
    world.step(beat)
    world.check()
    _run(world, beat, _at(world, beat, "sleep"))


def budget_spent_by_time_limits() -> None:
    """Every attempt hits run.timeout and its holder dies after writing its "interrupted"
    record, before it moved the labels. After the last, the budget is spent: the pass gives
    the issue up (failed); it does not keep a dead holder for ever (the review's hand-back at
    the end of the budget)."""
    world = World()
    try:
        for _ in range(CONFIG.max_attempts):
            w = _running(world, "m1")
            world.time_limit(w)
            end = f"{w.name}.end"
            _run(world, end, lambda end=end: (world.sched.pending_op(end) or ("",))[0]
                 in ("add_labels", "remove_label"))
            world.crash(w)
            world.advance(CONFIG.stale_after + 5)
            _pass(world)
        _settle(world)
    finally:
        world.close()


def released_before_arbitration() -> None:
    """A person force-releases a claim between its post and its arbitration list: the claimer
    must see its own release and not run (the review's `blocker` own-release check)."""
    world = World()
    try:
        w = world.spawn_worker("m1")
        actor = f"{w.name}.claim"
        _run(world, actor, _at(world, actor, "list_comments"))
        _run(world, world.spawn_forced_release(ISSUE))
        world.advance(3.0)
        _run(world, actor)
        _settle(world)
    finally:
        world.close()


def claimer_paused_past_stale() -> None:
    """m1's VM pauses right after its claimer posted, before it took the lock (its boot clock
    frozen, so its deadline never comes); m2 finds the issue queued beside a stale claim,
    claims it and runs. On resume the claimer must judge
    its own claim's age on GitHub's clock and give up, not win as the lower claim."""
    world = World()
    try:
        w0 = world.spawn_worker("m1")
        a0 = f"{w0.name}.claim"
        _run(world, a0, _at(world, a0, "add_labels"))
        world.pause_vm("m1")
        world.advance(CONFIG.stale_after + 10)
        _running(world, "m2")
        world.resume_vm("m1")
        _run(world, a0)
        world.react()
        world.check()
        _settle(world)
    finally:
        world.close()


def clone_beside_rebooted_origin() -> None:
    """A snapshot clone of m1 runs (its records carry m1's ids); m1 reboots; a pass on m1 sees
    "m1 rebooted" but the clone's beat is fresh: a reboot alone proves no death."""
    world = World(clones=True)
    try:
        w = _running(world, CLONE)
        world.reboot("m1")
        world.advance(2.0)
        _run(world, f"{w.name}.beat", _at(world, f"{w.name}.beat", "sleep"))
        _pass(world, "m1")
        _settle(world)
    finally:
        world.close()


def _ops(world: World, actor: str, *ops: str) -> Callable[[], bool]:
    return lambda: (world.sched.pending_op(actor) or ("",))[0] in ops


def outage_retry_after_landed_record() -> None:
    """GitHub stops answering m1's holder; its lease runs out and its outage path writes the
    "interrupted, no attempt" record, which lands although the answer is an error. Before its
    retry moves any label, a pass hands the issue back on that record and m2's run claims it:
    the retry must leave the labels alone (they are that run's now), not take its lock off
    (ADR 0024)."""
    world = World()
    try:
        end = _outage(world, _running(world, "m1"))  # just past the lease: labels are still in time
        _run(world, end, _ops(world, end, "edit_comment"))
        world.fail(end, "ambiguous")  # the record lands; its answer is lost
        _run(world, end, _ops(world, end, "sleep"))
        world.step(end)  # the retry's wait is over
        _run(world, end, _ops(world, end, "add_labels", "remove_label", "sleep"))
        _pass(world)
        w1 = _running(world, "m2")
        _run(world, end)
        _beat_again(world, w1)
        _settle(world)
    finally:
        world.close()


def _outage(world: World, w: Worker) -> str:
    """GitHub stops answering the worker's beats; just past its lease, its outage path starts.
    Returns its ending's actor."""
    assert w.holding is not None
    beat = f"{w.name}.beat"
    world.fail(beat, "unavailable", 50)
    world.step(beat)  # the next beat, and every retry of it, gets no answer
    world.advance(w.holding.lease_left() + 0.1)
    world.react()
    assert w.ending == "lease", w.ending
    return f"{w.name}.end"


def outage_record_put_back_unchanged() -> None:
    """m1's outage record lands although its answer is an error; a pass hands the issue back on
    it, and m2's claimer reads the issue as queued. m1's retry finds its record on GitHub and
    must not write it again: a rewrite would move its `updated_at` past m2's read, and m2 would
    lose to it as a run that ran meanwhile, leaving the queued issue unclaimed (ADR 0024)."""
    world = World()
    try:
        end = _outage(world, _running(world, "m1"))
        _run(world, end, _ops(world, end, "edit_comment"))
        world.fail(end, "ambiguous")  # the record lands; its answer is lost
        _run(world, end, _ops(world, end, "sleep"))
        world.step(end)  # the retry's wait is over
        _run(world, end, _ops(world, end, "get_comment"))
        _pass(world)
        w1 = world.spawn_worker("m2")
        claim = f"{w1.name}.claim"
        _run(world, claim, _ops(world, claim, "post_comment"))
        world.advance(2.0)
        _run(world, end)
        _run(world, claim)
        assert w1.child_started, f"{w1.name} lost the queued issue to a finished run's rewritten record"
        _settle(world)
    finally:
        world.close()


def late_label_write_near_presumption() -> None:
    """m1's outage path gets its first answers 51 s after its last beat was sent: a label write
    started now may land (GitHub accepts it and answers late) after a pass presumed m1 dead at
    60 s and m2's run took the lock; it must not be started (ADR 0024's landing margin)."""
    world = World()
    try:
        w0 = _running(world, "m1")
        end = _outage(world, w0)
        _run(world, end, _ops(world, end, "get_issue"))
        world.fail(end, "unavailable")  # the first try gets no answer either
        _run(world, end, _ops(world, end, "sleep"))
        world.advance(10.0)
        world.step(end)  # the retry's wait is over
        _run(world, end, _ops(world, end, "remove_label", "sleep"))
        if (world.sched.pending_op(end) or ("",))[0] == "remove_label":
            world.fail(end, "late")  # taken, answered late, lands within the request timeout
            world.step(end)
        _pass(world)
        w1 = _running(world, "m2")
        while world.server.delayed:
            world.land(0)
        _run(world, end)
        _beat_again(world, w1)
        _settle(world)
    finally:
        world.close()


def _released_by_hand(world: World) -> str:
    """A person's forced release of issue 1 posts its tombstone, and is held there: the lock
    is still on, so only the comment tells the holder. Returns the release's actor."""
    release = world.spawn_forced_release(ISSUE)
    posted = len(world.issue_log(ISSUE).tombstones)
    _run(world, release, lambda: len(world.issue_log(ISSUE).tombstones) > posted)
    return release


def release_after_deletions_shift_pages() -> None:
    """The holder has listed more than a page of comments; a person deletes twenty of the
    early ones and force-releases the run. The holder's next beat starts at the page it read
    last, which deletions emptied: it must notice the pages shifted, read from page 1, see the
    tombstone and stop (ADR 0023)."""
    world = World()
    try:
        w = _running(world, "m1")
        for _ in range(110):
            world.person_comments(ISSUE)
        world.advance(CONFIG.heartbeat_interval)
        _beat_again(world, w)  # it lists them all: its next read starts at page 2
        for _ in range(20):
            world.person_deletes_comment(ISSUE, 1)  # the oldest but the claim
        _released_by_hand(world)
        world.advance(3.0)
        _beat_again(world, w)
        _settle(world)
    finally:
        world.close()


def release_beside_a_deletion() -> None:
    """A person deletes a comment and force-releases the run: the issue's comment count is what
    the holder listed last. Its next beat must list all the same, see the tombstone and stop
    (ADR 0044)."""
    world = World()
    try:
        w = _running(world, "m1")
        world.person_comments(ISSUE)
        world.advance(CONFIG.heartbeat_interval)
        _beat_again(world, w)
        world.person_deletes_comment(ISSUE, 1)
        _released_by_hand(world)
        world.advance(3.0)
        _beat_again(world, w)
        _settle(world)
    finally:
        world.close()


def _both_win(world: World) -> tuple[Worker, Worker]:
    """Two runs on one issue, the narrowest way left after ADR 0048: w0's claim stays out of
    listings for 3 s, so w1 wins without seeing it, takes the queue label and beats at once;
    w0 (the lower claim) wins too. Each runs only if its own unqueue took the queue label, but
    w0's first DELETE answers a 502, and its retry, answered 404 after a try that may have
    landed, reads "mine" (the adapter cannot tell). From here the fences must stop one of them
    (audit finding 1, ADR 0023)."""
    world.server.lag_of = None  # lags set by hand below
    w0, w1 = world.spawn_worker("m1"), world.spawn_worker("m2")
    a0, a1 = f"{w0.name}.claim", f"{w1.name}.claim"
    for a in (a0, a0, a1, a1):  # both read the issue as queued
        world.step(a)
    world.server.list_lag = 3.0
    world.step(a0)  # w0 posts: listings lag it 3 s
    world.server.list_lag = 0.0
    world.step(a1)  # w1 posts
    _run(world, a1)
    _run(world, f"{w1.name}.beat", _at(world, f"{w1.name}.beat", "sleep"))  # its first beat, at once
    _run(world, a0, _at(world, a0, "remove_label"))  # w0 wins as the lower claim, up to its unqueue
    world.fail(a0, "retried")
    _run(world, a0)
    assert f"{w0.name}.beat" in world.runnable(), "w0 did not win: the scenario lost its interleaving"
    return w0, w1


def ending_after_a_lower_claim_won() -> None:
    """Both win (audit finding 1's interleaving), and w1's child exits before w1 beats again:
    its ending must check the fence, see the lower claim that holds the issue and leave the
    labels alone, not finish the issue under w0's live run."""
    world = World(max_lag=3.0)
    try:
        w0, w1 = _both_win(world)
        world.child_exits(w1, 0)
        world.react()
        _run(world, f"{w1.name}.end")
        world.advance(CONFIG.heartbeat_interval)
        _beat_again(world, w0)
        _settle(world)
    finally:
        world.close()


def lower_claim_seen_late() -> None:
    """Audit finding 1 (ADR 0023): both win; w1's next beat must see w0 and stop (the overlap
    invariant); a fence that records counts it never listed does not."""
    world = World(max_lag=3.0)
    try:
        w0, w1 = _both_win(world)
        end = world.clock.monotonic() + 10 * CONFIG.heartbeat_interval
        while world.clock.monotonic() < end:
            for w in (w0, w1):
                if f"{w.name}.beat" in world.runnable():
                    world.step(f"{w.name}.beat")
                    world.check()
                _run(world, f"{w.name}.end")
            world.advance(1.0)
            world.react()
            world.check()
    finally:
        world.close()


def stopped_after_a_lost_beat() -> None:
    """A person force-releases the run; the holder's next beat finds the claim lost, and its
    wrapper is stopped (SIGSTOP) right after, before its main loop ends the run. The guardian
    must still kill the child when the lease of the last beat that found the claim its own
    runs out: a beat that finds the claim lost renews nothing."""
    world = World()
    try:
        w = _running(world, "m1")
        _released_by_hand(world)
        world.advance(CONFIG.heartbeat_interval)
        beat = f"{w.name}.beat"
        _run(world, beat, _ops(world, beat, "list_comments"))
        w.stalled = True  # SIGSTOP lands between the beat's last answer and the main loop
        world.step(beat)
        assert w.holding is not None and w.holding.lost, "the beat did not find the claim lost"
        for _ in range(int(CONFIG.renew_deadline)):
            world.advance(1.0)
            world.check()
        w.stalled = False
        world.react()
        _settle(world)
    finally:
        world.close()


def release_finished_by_the_next_pass() -> None:
    """A person's forced release posts its tombstone and dies before it moves a label; the
    holder's next beat sees the tombstone and its run ends. The next pass (on a hosted runner,
    which judges by beats alone) sees the released claim's beat still fresh in the repository
    listing, but the tombstone beside it: it must read the issue and finish the release (take
    the lock off), not keep the issue on the fresh beat (ADR 0018's shortcut)."""
    world = World()
    try:
        w = _running(world, "m1")
        world.sched.crash(_released_by_hand(world))
        world.advance(3.0)
        _beat_again(world, w)  # it writes "running", then sees the tombstone: its run ends
        _pass(world, HOSTED)
        assert LAB.working not in world.server.issue(ISSUE).labels, "the pass kept a released claim's lock"
        _run(world, f"{w.name}.end")
        _settle(world)
    finally:
        world.close()


def release_before_the_unqueue_lands() -> None:
    """A person force-releases a claim the moment it won, while its queue-label removal is on
    the way: the release puts the queue label on, then the unqueue lands and takes it off. The
    run starts, its first beat finds the claim released, and its ending must put the queue
    label back, or the issue is left with no label at all (ADR 0025)."""
    world = World()
    try:
        w = world.spawn_worker("m1")
        claim = f"{w.name}.claim"
        _run(world, claim, _ops(world, claim, "remove_label"))
        _run(world, world.spawn_forced_release(ISSUE))
        _run(world, claim)
        assert w.child_started, f"{w.name} did not start its run"
        _run(world, f"{w.name}.beat")
        _run(world, f"{w.name}.end")
        _settle(world)
    finally:
        world.close()


def cancel_swept_after_a_requeue_and_a_new_cancel() -> None:
    """A person cancels the queued issue; a pass's cancel sweep takes the queue label off and
    stops (its VM pauses) before its removal of the cancel label. The person requeues the issue
    and cancels it again; the sweep resumes and takes the new cancel label off, leaving the new
    queue label. A claim must not run what the person cancelled: GitHub's record still shows
    the cancel, taken off by orion, not by a person (the model's `stale-sweep-uncancel`, seed 6
    episode 174; ADR 0061)."""
    world = World()
    try:
        world.person_cancel(ISSUE)
        sweep = world.spawn_reconciler("m1")
        _run(world, sweep, _ops(world, sweep, "remove_label"))
        world.step(sweep)  # the queue label comes off
        world.check()
        assert LAB.queue not in world.server.issue(ISSUE).labels
        world.person_requeue(ISSUE)
        world.person_cancel(ISSUE)
        _run(world, sweep)  # takes the new cancel label off
        w = world.spawn_worker("m2")
        _run(world, f"{w.name}.claim")
        if w.child_started:
            world.advance(CONFIG.heartbeat_interval + 2)
            _beat_again(world, w)
        _settle(world)
    finally:
        world.close()


SCENARIOS: dict[str, Callable[[], None]] = {
    f.__name__: f
    for f in (
        budget_spent_by_time_limits, released_before_arbitration, claimer_paused_past_stale,
        clone_beside_rebooted_origin, outage_retry_after_landed_record, outage_record_put_back_unchanged,
        late_label_write_near_presumption, release_after_deletions_shift_pages, release_beside_a_deletion,
        lower_claim_seen_late, ending_after_a_lower_claim_won, stopped_after_a_lost_beat,
        release_finished_by_the_next_pass, release_before_the_unqueue_lands,
        cancel_swept_after_a_requeue_and_a_new_cancel,
    )
}
