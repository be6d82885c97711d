"""The claim/fence/outage holes of the round-3 protocol audit (issue 15), each as a directed
interleaving of the real Claimer and Holding on the in-memory GitHub under a virtual clock
(every clock is the server's; a sleep moves it).

- the fence counts only what it listed, and the settle counts from the POST's answer (finding 1,
  ADR 0023);
- the fence sees tombstones and earlier claims whatever is deleted (finding 9, security 6);
- an outage retry never hands back after its record may be final, nor over a later claim, and
  never rewrites an unchanged record (findings 2 and 11, ADR 0024);
- an outage label write starts only while it can land before a judge may presume the holder
  dead (finding 8, ADR 0024);
- a winner whose unqueue landed after a requeue puts the queue label back (finding 3, ADR 0025).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from fakes.memory_github import BOT, PERSON, MemoryServer, ServerTime

from orion_action.config import Config
from orion_action.core.ending import finished
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Liveness, Machine, Verdict
from orion_action.core.plan import Fate, fate
from orion_action.core.record import (
    HOLDER_END,
    ClaimRecord,
    Holder,
    ReleaseAction,
    State,
    Tombstone,
    parse_block,
    render_record,
    render_tombstone,
)
from orion_action.errors import GitHubError, NotClaimed
from orion_action.services.claiming import Claim, Claimer
from orion_action.services.holding import Holding

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, source="test")
LAB = CONFIG.labels
ME = threading.current_thread().name  # the actor whose requests fail_next fails
TRUSTED = trusted_set(BOT, ())


def machine(name: str) -> Machine:
    return Machine(host=name, boot_id=f"{name}-boot", machine_id=f"{name}-id", pid_ns=f"{name}-ns")


def holder(name: str, pid: int) -> Holder:
    return Holder(name, f"{name}-boot", f"{name}-id", f"{name}-ns", pid, float(pid))


def claimer(s: MemoryServer, name: str, pid: int) -> Claimer:
    """A claimer on its own machine (which sees no other machine's processes)."""
    return Claimer(s.client(), CONFIG, lambda _line: None, ServerTime(s), machine(name), holder(name, pid),
                   sight=lambda _pid, _child: None)


def hold(s: MemoryServer, claim: Claim, logs: list[str] | None = None) -> Holding:
    h = Holding(s.client(), claim, CONFIG, (logs if logs is not None else []).append, ServerTime(s),
                machine(claim.record.holder.host), sight=lambda _pid, _child: None)
    h.child_pid = 4242
    return h


def rival_claim(s: MemoryServer, n: int, name: str = "elsewhere") -> int:
    """Another machine's live claim, posted now (as the same bot login)."""
    now = s.clock.now.isoformat(timespec="seconds")
    record = ClaimRecord(token=f"{name}-token", state=State.CLAIMING, holder=holder(name, 77), started_at=now,
                         heartbeat_at=now, interval=CONFIG.heartbeat_interval, stale_after=CONFIG.stale_after)
    return s.comment(n, render_record(record), BOT)


def tombstone(s: MemoryServer, claim: Claim, action: ReleaseAction, by: str) -> int:
    tomb = Tombstone(claim.record.token, action, f"{action.value} by hand", False, by)
    return s.comment(claim.number, render_tombstone(tomb), BOT)


def on_request(s: MemoryServer, op: str, act: Callable[[tuple[object, ...]], bool]) -> None:
    """Run `act(args)` just before the first request `op` for which it returns True."""
    done = {"yet": False}

    def hook(name: str, args: tuple[object, ...]) -> None:
        if name == op and not done["yet"]:
            done["yet"] = act(args)

    s.on_call = hook


def record_of(s: MemoryServer, comment_id: int) -> ClaimRecord:
    body = next(c.body for c in s.comments(1) if c.id == comment_id)
    parsed = parse_block(body)
    assert isinstance(parsed, ClaimRecord)
    return parsed


# -- finding 1: the fence counts only what it listed; the settle counts from the POST's answer --


def test_a_beat_lists_again_while_the_count_is_ahead_of_the_listing() -> None:
    """A's claim (the lower one) stays out of listings longer than the settle: B wins on a list
    without it and beats while it is still not listed. B must keep listing until it sees A's
    claim, and then stop (audit finding 1: B counted the unlisted claim as seen and ran on)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    a = rival_claim(s, n)
    s.hide(a, 15)  # listed only 15 s after it was posted
    claim = claimer(s, "b", 20).claim_number(n, None)
    assert claim.comment_id > a
    h = hold(s, claim)
    h.beat()  # at once: the count says 2, the listing shows 1
    assert h.lost is None
    s.clock.advance(CONFIG.heartbeat_interval)
    h.beat()
    assert h.lost is None  # still hidden
    s.clock.advance(CONFIG.heartbeat_interval)
    h.beat()
    assert h.lost == f"an earlier live claim (comment {a}) holds the issue"


def test_the_settle_counts_from_the_posts_answer() -> None:
    """B's claim POST takes 1.5 s to land; A's claim lands just before it and is listed one
    second later (the lag the settle is for). Counting the settle from before the POST, B
    listed at once and won beside A; counted from the answer, B sees A and loses."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    rival: list[int] = []

    def slow_post(_args: tuple[object, ...]) -> bool:
        s.clock.advance(1.4)
        rival.append(rival_claim(s, n))
        s.hide(rival[0], 1.0)
        s.clock.advance(0.1)
        return True

    on_request(s, "post_comment", slow_post)
    with pytest.raises(NotClaimed, match=r"lost the race: an earlier live claim"):
        claimer(s, "b", 20).claim_number(n, None)


# -- finding 9 (and security finding 6): the fence after deletions ----------------------------


def spammed_holding(spam: int) -> tuple[MemoryServer, Holding, list[int]]:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    ids = [s.comment(n, f"spam {i}", PERSON) for i in range(spam)]
    h = hold(s, claimer(s, "h", 20).claim_number(n, None))
    s.clock.advance(CONFIG.heartbeat_interval)
    h.beat()
    assert h.lost is None
    return s, h, ids


def test_the_fence_sees_a_tombstone_after_many_deletions() -> None:
    """Audit finding 9: 120 of 250 comments deleted, then a tombstone (its pass died before its
    label move, so the lock stays on). The fence started at a page that no longer existed."""
    s, h, spam = spammed_holding(249)
    for cid in spam[:120]:
        s.delete(cid)
    tombstone(s, h.claim, ReleaseAction.RELEASE, "release")
    s.clock.advance(CONFIG.heartbeat_interval)
    h.beat()
    assert h.lost == "the claim was released by release: release by hand" and h.released


def test_an_outsider_deleting_her_comments_does_not_blind_the_fence_to_the_next_run() -> None:
    """Security finding 6: mallory deletes 200 of her 250 comments, a maintainer's `release
    --force` moves the lock to the queue and W claims; H's next beat must see the tombstone."""
    s, h, spam = spammed_holding(250)
    for cid in spam[:200]:
        s.delete(cid)
    tombstone(s, h.claim, ReleaseAction.RELEASE, "release")
    s.add_label(1, LAB.queue)
    s.remove_label(1, LAB.working)
    claimer(s, "w", 30).claim_number(1, None)
    assert LAB.working in s.issue(1).labels
    s.clock.advance(CONFIG.heartbeat_interval)
    h.beat()
    assert h.released and h.lost == "the claim was released by release: release by hand"


def test_a_deletion_and_a_tombstone_between_two_beats_are_seen_at_the_next_beat() -> None:
    """Issue 16's count-neutral deletion (ADR 0044): an outsider deletes her old comment while a
    pass posts a tombstone (and dies before its label move): the issue's comment count is what
    the fence last listed, so a fence that lists only when the count moved never sees it."""
    s, h, spam = spammed_holding(1)
    s.delete(spam[0])
    tombstone(s, h.claim, ReleaseAction.RELEASE, "release")
    assert s.issue(1).comments == len(h.claim.listed) and LAB.working in s.issue(1).labels
    s.clock.advance(CONFIG.heartbeat_interval)
    h.beat()
    assert h.released and h.lost == "the claim was released by release: release by hand"


def test_a_steady_beat_is_charged_two_requests() -> None:
    """ADR 0044: the record's edit, the conditional issue read (304: free) and the conditional
    listing of the record's page (changed by the edit: charged)."""
    s, h, _ = spammed_holding(3)
    gh = h.gh
    requests, free, spent = gh.requests, gh.not_modified, s.spent[BOT]
    s.clock.advance(CONFIG.heartbeat_interval)
    h.beat()
    assert h.lost is None
    assert (gh.requests - requests, gh.not_modified - free, s.spent[BOT] - spent) == (3, 1, 2)


# -- findings 2 and 11: the outage retry -------------------------------------------------------


def outage_holding(logs: list[str]) -> tuple[MemoryServer, Holding]:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    h = hold(s, claimer(s, "h", 20).claim_number(n, None), logs)
    h.beat()
    return s, h


def first_record_write_lands_unanswered(s: MemoryServer) -> None:
    def ambiguous(args: tuple[object, ...]) -> bool:
        s.fail_next(ME, "ambiguous")
        return True

    on_request(s, "edit_comment", ambiguous)


def test_an_outage_retry_never_hands_back_an_issue_a_next_run_holds() -> None:
    """Audit finding 2: the first try's record write landed but its answer was lost. A pass
    hands the issue back on that record at once (no staleness needed) and C claims. The next
    try must leave C's lock. Its outage marker may follow C's claim (ADR 0092): it excuses the
    attempt and is not the issue's newest event, so C's death would be C's fate."""
    logs: list[str] = []
    s, h = outage_holding(logs)
    first_record_write_lands_unanswered(s)
    taken: list[Claim] = []

    def meanwhile(seconds: float) -> bool:
        s.clock.advance(seconds)
        if not taken:
            assert record_of(s, h.claim.comment_id).state is State.INTERRUPTED  # it landed
            s.add_label(1, LAB.queue)  # the pass: "interrupted and its hand-back did not finish"
            s.remove_label(1, LAB.working)
            taken.append(claimer(s, "c", 30).claim_number(1, None))
        return False

    assert h.record_outage("the lease ran out", 600, meanwhile)
    [c] = taken
    assert LAB.working in s.issue(1).labels and LAB.queue not in s.issue(1).labels
    assert record_of(s, c.comment_id).state is State.RUNNING
    log = read_log(s.comments(1), TRUSTED)
    [marker] = [t for t in log.tombstones if t.tombstone.by == HOLDER_END]
    assert marker.tombstone.token == h.claim.record.token and marker.comment_id > c.comment_id
    assert log.attempts_used() == 0
    dead = {c.record.token: Verdict(Liveness.DEAD, "silent")}
    decided = fate(frozenset({LAB.working}), log, dead, LAB, 3)
    assert (decided.fate, decided.holder) == (Fate.DIED_UNSTARTED, log.find(c.record.token))  # no pid here
    assert not h.requeued
    assert "the next reconcile pass hands the issue back" in logs[-1]


def test_no_outage_try_moves_labels_after_one_that_sent_the_record() -> None:
    """Once a try sent the record, it may be final on GitHub and a pass may act on it at any
    moment, also between a later try's read and its label writes: later tries leave the labels
    to the pass, even when their read still shows the claim as ours."""
    logs: list[str] = []
    s, h = outage_holding(logs)
    first_record_write_lands_unanswered(s)
    assert h.record_outage("the lease ran out", 600, lambda seconds: s.clock.advance(seconds) or False)
    assert s.issue(1).labels == frozenset({LAB.working}) and not h.requeued
    assert record_of(s, h.claim.comment_id).state is State.INTERRUPTED
    assert "the next reconcile pass hands the issue back" in logs[-1]


def test_an_outage_retry_does_not_hand_back_when_a_later_claim_exists() -> None:
    """Even a try that sent nothing before does not move labels over a claim after ours."""
    s, h = outage_holding([])
    s.fail_next(ME, "unavailable")  # the first try fails at its first read: nothing sent

    def meanwhile(seconds: float) -> bool:
        s.clock.advance(seconds)
        rival_claim(s, 1)  # a claim after ours (it will lose to us, but it is not for us to judge)
        return False

    assert h.record_outage("the lease ran out", 600, meanwhile)
    assert LAB.working in s.issue(1).labels and not h.requeued


def test_an_outage_retry_does_not_rewrite_a_record_that_landed() -> None:
    """Audit finding 11: every try rewrote the final record with a new finished_at, moving its
    updated_at past every claimer's read ("ran meanwhile") for as long as the loop lasted."""
    s, h = outage_holding([])
    writes = {"n": 0}

    def hook(op: str, _args: tuple[object, ...]) -> None:
        if op == "edit_comment" and writes["n"] < 3:  # three writes land, unanswered
            writes["n"] += 1
            s.fail_next(ME, "ambiguous")

    s.on_call = hook
    stamps: list[object] = []

    def pause(seconds: float) -> bool:
        stamps.append(next(c.updated_at for c in s.comments(1) if c.id == h.claim.comment_id))
        s.clock.advance(seconds)
        return False

    assert h.record_outage("the lease ran out", 600, pause)
    final = next(c.updated_at for c in s.comments(1) if c.id == h.claim.comment_id)
    assert writes["n"] == 1 and stamps == [final]


# -- finding 8: outage label writes start only while they can land in time ---------------------


def test_an_outage_label_move_starts_only_while_it_can_land_before_presumption() -> None:
    """The last completed beat was sent at t0; a judge may presume the holder dead at
    t0 + stale_after. A try at t0 + stale_after - 8 s (a request may take GitHub 10 s to apply)
    records only; the pass hands the issue back."""
    logs: list[str] = []
    s, h = outage_holding(logs)
    last_sent = h.lease_until - CONFIG.renew_deadline
    s.clock.advance(last_sent + CONFIG.stale_after - 8 - s.clock.monotonic())
    assert h.record_outage("the lease ran out", 600, lambda _s: False)
    assert LAB.working in s.issue(1).labels and not h.requeued
    assert record_of(s, h.claim.comment_id).state is State.INTERRUPTED


def test_an_ending_past_its_lease_moves_no_label_that_could_land_after_presumption() -> None:
    """A holder stalled past its lease whose child then exits (the guardian was late): it
    writes its final record, but a label write starting 8 s before a judge may presume it dead
    could land after a pass and a next claim; the pass completes the move from the record."""
    s, h = outage_holding([])
    last_sent = h.lease_until - CONFIG.renew_deadline
    s.clock.advance(last_sent + CONFIG.stale_after - 8 - s.clock.monotonic())
    with pytest.raises(GitHubError, match="too late for a label write"):
        h.conclude(finished(CONFIG, 0))
    assert s.issue(1).labels == frozenset({LAB.working})
    assert record_of(s, h.claim.comment_id).state is State.FINISHED


# -- finding 3: a late unqueue strands the issue ----------------------------------------------


def test_a_release_landing_before_the_winners_unqueue_is_repaired() -> None:
    """Audit finding 3, case B: `release --force` lands between the winner's `running` edit and
    its queue label removal, which then takes the queue label the release left. The winner's
    first beat finds its claim released, and giving up puts the queue label back."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    w = claimer(s, "w", 20)
    released: list[int] = []

    def release(args: tuple[object, ...]) -> bool:
        if args[1] != LAB.queue:
            return False
        claim = next(c for c in read_log(s.comments(n), TRUSTED).claims)
        tomb = Tombstone(claim.record.token, ReleaseAction.RELEASE, "released by hand with --force", False,
                         "release")
        released.append(s.comment(n, render_tombstone(tomb), BOT))
        s.add_label(n, LAB.queue)
        s.remove_label(n, LAB.working)
        return True

    on_request(s, "remove_label", release)
    h = hold(s, w.claim_number(n, None))
    assert released and s.issue(n).labels == frozenset()  # stranded, for now
    h.beat()
    assert h.released
    h.give_up(h.lost or "", h.released)
    assert s.issue(n).labels == frozenset({LAB.queue})


def test_a_released_holder_does_not_requeue_an_issue_cancelled_since() -> None:
    """repair-undoes-cancel (ADR 0073): a person force-releases a run (the queue label goes
    back on) and then cancels the issue, and a pass's cancel sweep takes both labels off (by
    orion's login, as our own late unqueue would). The holder gives up at its next beat; GitHub's
    record shows the cancel standing against the release's queueing, so its repair leaves the
    issue out of the queue."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    h = hold(s, claimer(s, "w", 20).claim_number(n, None))
    claim = next(c for c in read_log(s.comments(n), TRUSTED).claims)
    tomb = Tombstone(claim.record.token, ReleaseAction.RELEASE, "released by hand", False, "release")
    s.comment(n, render_tombstone(tomb), BOT)
    s.add_label(n, LAB.queue, BOT)
    s.remove_label(n, LAB.working, BOT)
    s.add_label(n, LAB.cancel)  # a person cancels
    s.remove_label(n, LAB.queue, BOT)  # the sweep carries the cancel out
    s.remove_label(n, LAB.cancel, BOT)
    h.beat()
    assert h.released
    h.give_up(h.lost or "", h.released)
    assert s.issue(n).labels == frozenset()


def test_a_requeue_landing_before_a_stalled_winners_unqueue_is_repaired() -> None:
    """Case A: the winner stalls in its unqueue, a pass requeues its stale claim, then the
    removal lands and its answer is lost. The winner gives up and puts the queue label back."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])

    def requeue(args: tuple[object, ...]) -> bool:
        if args[1] != LAB.queue:
            return False
        claim = next(c for c in read_log(s.comments(n), TRUSTED).claims)
        tomb = Tombstone(claim.record.token, ReleaseAction.REQUEUE, "died before its command started", False,
                         "reconcile")
        s.comment(n, render_tombstone(tomb), BOT)
        s.remove_label(n, LAB.working)
        s.fail_next(ME, "ambiguous")  # the removal lands; its answer never comes
        return True

    on_request(s, "remove_label", requeue)
    with pytest.raises(GitHubError):
        claimer(s, "w", 20).claim_number(n, None)
    assert s.issue(n).labels == frozenset({LAB.queue})


def test_a_winner_restores_no_queue_label_a_person_took_away() -> None:
    """The repair is only for our own late removal: the lock removed by a person (no tombstone
    releasing the claim) leaves the issue as the person left it."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    h = hold(s, claimer(s, "w", 20).claim_number(n, None))
    s.remove_label(n, LAB.working)
    h.beat()
    assert h.lost == "the lock label was removed by a-person"  # a person: the run stops (ADR 0065)
    h.give_up(h.lost, h.released)
    assert s.issue(n).labels == frozenset()
