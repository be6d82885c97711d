"""Adaptive beats in the real Holding on the in-memory GitHub (ADR 0045): the holder counts the
live claims, writes the promise it chose into its record with the beat, and its lease and
label-write bound follow that promise; a judge from another machine keeps it alive for as
long as the record promises, not the judge's own stale_after."""

from __future__ import annotations

import threading

import pytest
from fakes.memory_github import BOT, MemoryServer, ServerTime

from orion_action.config import Config
from orion_action.core.beat import renew_deadline
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Liveness, Machine
from orion_action.core.record import Holder
from orion_action.errors import NotClaimed
from orion_action.services.claiming import Claimer
from orion_action.services.holding import COUNT_EVERY_BEATS, Holding
from orion_action.services.observe import judge_entry

DEFAULTS = Config()  # heartbeat 2 min, stale_after 10 min, stretching up to 30 min
LAB = DEFAULTS.labels


def machine(name: str) -> Machine:
    return Machine(host=name, boot_id=f"{name}-boot", machine_id=f"{name}-id", pid_ns=f"{name}-ns")


def holding(s: MemoryServer, config: Config = DEFAULTS, others: int = 0) -> Holding:
    """A holder of a new claim, `others` live claims elsewhere when it claimed (the claimer
    counts them: ADR 0060)."""
    others_hold(s, others)
    n = s.create_issue("work", [LAB.queue])
    holder = Holder("h", "h-boot", "h-id", "h-ns", 20, 20.0)
    claim = Claimer(s.client(), config, lambda _: None, ServerTime(s), machine("h"), holder,
                    sight=lambda *_: None).claim_number(n, None)
    h = Holding(s.client(), claim, config, lambda _: None, ServerTime(s), machine("h"), sight=lambda *_: None)
    h.child_pid = 21
    return h


def others_hold(s: MemoryServer, count: int) -> None:
    """`count` other issues carrying the lock (live claims elsewhere, as the count sees them)."""
    for i in range(count):
        s.create_issue(f"held {i}", [LAB.working])


def test_a_lone_holder_beats_at_the_configured_interval_on_the_count_its_claim_made() -> None:
    s = MemoryServer()
    h = holding(s)
    assert h.live == 1  # the claimer counted the live claims before posting (ADR 0060)
    for beat in range(COUNT_EVERY_BEATS):
        h.beat()
        # the edit, the issue, the listing: no count; and at the first beat GitHub's record of
        # the cancel label, since the claim's own label writes changed the issue (ADR 0093)
        assert h.gh.requests == 3 * (beat + 1) + 1
    h.beat()
    assert h.gh.requests == 3 * COUNT_EVERY_BEATS + 5  # ...then one listing of the lock label
    assert (h.claim.record.interval, h.claim.record.stale_after, h.live) == (120.0, 600.0, 1)


def test_fifty_live_claims_stretch_the_beat_and_the_record_carries_the_promise() -> None:
    s = MemoryServer()
    h = holding(s, others=49)
    h.beat()
    s.clock.advance(h.beat_interval())
    sent = h.clock.monotonic()
    h.beat()
    record = h.claim.record
    assert h.live == 50
    assert (record.interval, record.stale_after) == (1200.0, 6000.0)
    assert h.beat_interval() == 1200.0
    assert h.lease_until == sent + renew_deadline(6000.0)
    # the label-write bound counts from the promise too (ADR 0024): well past the configured 10 min
    assert h._last_label_write() > sent + 5000.0


def test_a_judge_elsewhere_keeps_a_stretched_holder_alive_until_its_promise_runs_out() -> None:
    s = MemoryServer()
    h = holding(s, others=49)
    h.beat()
    s.clock.advance(h.beat_interval())
    h.beat()
    gh = s.client()
    for age, alive in ((1199.0, True), (5990.0, True), (6010.0, False)):
        comments, now = gh.list_comments(h.number)
        entry = read_log(comments, trusted_set(BOT, ())).find(h.claim.record.token)
        assert entry is not None
        later = now.timestamp() + age - (now - entry.updated_at).total_seconds()
        when = type(now).fromtimestamp(later, now.tzinfo)
        verdict = judge_entry(entry, when, DEFAULTS.stale_after, machine("judge"), sight=lambda *_: None)
        assert (verdict.liveness is Liveness.ALIVE) is alive, (age, verdict.reason)


def test_when_the_fleet_shrinks_the_beat_shortens_at_once_and_the_promise_gradually() -> None:
    s = MemoryServer()
    h = holding(s, others=49)
    h.beat()
    s.clock.advance(h.beat_interval())
    h.beat()
    assert h.claim.record.stale_after == 6000.0
    for issue in s.issues():
        if issue.number != h.number:
            s.remove_label(issue.number, LAB.working)
    stale = [6000.0]
    for _ in range(COUNT_EVERY_BEATS + 1):
        s.clock.advance(h.beat_interval())
        h.beat()
        stale.append(h.claim.record.stale_after)
    assert h.live == 1 and h.claim.record.interval == 120.0
    # a promise never ends before the one it replaces (the beats are 1200 s apart at most)
    assert all(b >= a - 1200.0 for a, b in zip(stale, stale[1:], strict=False))
    assert stale[-1] < 6000.0


def test_a_tuned_heartbeat_never_stretches_nor_counts() -> None:
    s = MemoryServer()
    tuned = Config(heartbeat_interval=60.0, stale_after=300.0)
    h = holding(s, tuned)
    others_hold(s, 99)
    for _ in range(COUNT_EVERY_BEATS + 2):
        h.beat()
        s.clock.advance(60.0)
    assert (h.claim.record.interval, h.claim.record.stale_after, h.live) == (60.0, 300.0, 1)


def test_a_beat_github_limits_with_retry_after_still_holds_the_claim() -> None:
    """A 403/429 with Retry-After is waited out (the client sleeps it on the server's clock)
    and the beat completes: no claim is lost, and the lease counts from the beat's send."""
    s = MemoryServer()
    h = holding(s)
    h.beat()
    s.sleep = s.clock.advance  # the client's wait for Retry-After moves virtual time
    s.retry_after = 60.0
    s.clock.advance(h.beat_interval())
    sent = h.clock.monotonic()
    s.fail_next(threading.current_thread().name, "limited", count=2)
    h.beat()
    assert h.lost is None and h.outage() is None
    assert h.clock.monotonic() == sent + 120.0  # two Retry-After waits
    assert h.lease_until == sent + renew_deadline(h.claim.record.stale_after)
    assert h.lease_left() > 0


def test_a_claim_that_one_identity_cannot_carry_waits_and_posts_nothing() -> None:
    """Issue 19: a limit never costs a run. At the longest beat (30 min) each claim needs about
    7 content writes an hour with its run's own: 57 fit 80 % of 500, a 58th waits in the queue
    (ADR 0060) instead of taking writes the holders' beats need."""
    s = MemoryServer()
    others_hold(s, 57)
    n = s.create_issue("work", [LAB.queue])
    claimer = Claimer(s.client(), DEFAULTS, lambda _: None, ServerTime(s), machine("h"),
                      Holder("h", "h-boot", "h-id", "h-ns", 20, 20.0), sight=lambda *_: None)
    with pytest.raises(NotClaimed, match="budget is short: 57 claims are live.*content writes"):
        claimer.claim_number(n, None)
    assert s.comments(n) == [] and s.issue(n).labels == {LAB.queue}
    s.remove_label(s.issues()[0].number, LAB.working)  # one run ended: 56 live, room for one
    h = holding(s)
    assert h.live == 57  # the 56 others, counted at the claim, and its own
    h.beat()
    assert h.claim.record.interval > 1000.0  # its first beat already stretches on that count


def test_a_holder_bound_by_the_writes_counts_the_fleet_every_beat() -> None:
    s = MemoryServer()
    h = holding(s, others=49)
    h.beat()
    assert h.promise.why == "writes"
    before = h.gh.requests
    s.clock.advance(h.beat_interval())
    h.beat()
    assert h.gh.requests - before == 4  # the edit, the issue, the listing and the count
