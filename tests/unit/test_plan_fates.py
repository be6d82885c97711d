"""core.plan: the fate classifier and the table from fate to action (docs/adr/0050).

One named row per Fate: the history that leads to it, and the plan its row of RULES makes. The
rows for the repair branches the round-3 review found untested (a cancelled run whose label
move did not finish, a hand-back at the end of its budget, releases that decide nothing, an end
marker for a deleted claim, the verdicts shown for each) each carry the property a mutant broke.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest
from test_plan import ALIVE, DEAD, T0, UNKNOWN, claim, log, tomb

from orion_action.config import Labels
from orion_action.core.issue import ClaimEntry, IssueLog, TombstoneEntry
from orion_action.core.liveness import MISSED_BEAT_FACTOR, Liveness, Verdict
from orion_action.core.plan import (
    RULES,
    Action,
    Fate,
    fate,
    keep_on_fresh_beat,
    plan_cancel,
    plan_issue,
    plan_release,
)
from orion_action.core.record import ReleaseAction, State, Tombstone

LABELS = Labels()
W, Q, C, STAGE = "orion-working", "orion", "orion-cancel", "orion-stage-build"


def owed(cid: int, token: str) -> ClaimEntry:
    """A claim that sent its unqueue, then gave up before it ran (ADR 0067)."""
    entry = claim(cid, token, State.LOST)
    return replace(entry, record=entry.record.with_changes(unqueued=True, note="GitHub did not answer"))


def took_none(cid: int, token: str) -> ClaimEntry:
    """A claimer's own `lost` record that says it took no queue label (ADR 0067)."""
    entry = claim(cid, token, State.LOST)
    return replace(entry, record=entry.record.with_changes(unqueued=False, note="the queueing was taken"))


def marker(cid: int, token: str, action: ReleaseAction) -> TombstoneEntry:
    """A holder's own end marker (by "holder")."""
    return TombstoneEntry(cid, Tombstone(token, action, "ended", True, "holder", {}), T0)


def by_hand(cid: int, token: str) -> TombstoneEntry:
    """A person's forced release (`release --force`, by "release")."""
    return TombstoneEntry(cid, Tombstone(token, ReleaseAction.RELEASE, "released by hand with --force", False,
                                         "release", {}), T0 + timedelta(seconds=cid))


@dataclass(frozen=True)
class Row:
    fate: Fate
    log: IssueLog
    action: Action
    add: tuple[str, ...]
    shown: Liveness | None  # the verdict displayed for the run
    holder: str | None
    on_issue: frozenset[str] = frozenset({W, STAGE})
    verdicts: tuple[tuple[str, Verdict], ...] = ()
    max_attempts: int = 3
    counts: bool = False
    removed: frozenset[str] = frozenset({W, STAGE})


ROWS = {
    "queued again beside a dead claim that never ran": Row(
        Fate.QUEUED_AGAIN, log(claim(1, "a", State.CLAIMING)), Action.REQUEUE, (), Liveness.DEAD, "a",
        on_issue=frozenset({W, Q}), verdicts=(("a", DEAD),), removed=frozenset({W})),
    "queued again, no claim left open": Row(
        Fate.QUEUED_AGAIN, log(claim(1, "a", State.FINISHED, 0)), Action.REQUEUE, (), None, None,
        on_issue=frozenset({W, Q}), removed=frozenset({W})),
    # ADR 0049: a claim in flight shows its lock before its comment is listed; a pass that
    # took the lock off here would strand it.
    "the lock beside the queue label, no claim listed yet": Row(
        Fate.CLAIM_IN_FLIGHT, log(), Action.REPORT, (), Liveness.UNKNOWN, None,
        on_issue=frozenset({W, Q}), removed=frozenset()),
    "died before its command started": Row(
        Fate.DIED_UNSTARTED, log(claim(1, "a", child_pid=None)), Action.REQUEUE, (Q,), Liveness.DEAD, "a",
        verdicts=(("a", DEAD),)),
    "died running, budget left": Row(
        Fate.DIED_RUNNING, log(claim(1, "a")), Action.REQUEUE, (Q,), Liveness.DEAD, "a",
        verdicts=(("a", DEAD),), max_attempts=2, counts=True),
    "died running on its last attempt": Row(
        Fate.DIED_RUNNING_SPENT, log(claim(1, "a")), Action.GIVE_UP, ("orion-failed",), Liveness.DEAD, "a",
        verdicts=(("a", DEAD),), max_attempts=1, counts=True),
    "finished 0": Row(
        Fate.FINISHED_OK, log(claim(1, "a", State.FINISHED, 0)), Action.COMPLETE, ("orion-ready",),
        Liveness.FINISHED, "a"),
    "finished 1": Row(
        Fate.FINISHED_FAILED, log(claim(1, "a", State.FINISHED, 1)), Action.COMPLETE, ("orion-failed",),
        Liveness.FINISHED, "a"),
    # Group 1 of the review: without this row a pass handed a cancelled issue back to the queue.
    "cancelled, label move unfinished": Row(
        Fate.CANCELLED, log(claim(1, "a", State.CANCELLED)), Action.COMPLETE, (), Liveness.FINISHED, "a",
        on_issue=frozenset({W, STAGE, C, "bug"}), removed=frozenset({W, STAGE, C})),
    "cancelled, the cancel label already gone": Row(
        Fate.CANCELLED, log(claim(1, "a", State.CANCELLED)), Action.COMPLETE, (), Liveness.FINISHED, "a"),
    # ADR 0053: the holder died after its "cancelled" record, before its label move took the
    # queue label off (a person's, put on while it ran): the cancel overrules it, as the holder's
    # own ending does; no requeue, no dispatch of a worker for a cancelled issue.
    "cancelled, a queue label beside the cancel label": Row(
        Fate.CANCELLED, log(claim(1, "a", State.CANCELLED)), Action.COMPLETE, (), Liveness.FINISHED, "a",
        on_issue=frozenset({W, STAGE, Q, C}), removed=frozenset({W, STAGE, Q, C})),
    # ...and a dead claim beside both labels: its own row, not requeued under the cancel (ADR 0049).
    "never started, dead, beside the queue and cancel labels": Row(
        Fate.NEVER_STARTED, log(claim(1, "a", State.CLAIMING)), Action.REQUEUE, (), Liveness.DEAD, "a",
        on_issue=frozenset({W, Q, C}), verdicts=(("a", DEAD),), removed=frozenset({W, Q})),
    "cancelled by the holder's end marker": Row(
        Fate.CANCELLED, log(claim(1, "a"), marker(2, "a", ReleaseAction.CANCELLED)), Action.COMPLETE, (),
        Liveness.FINISHED, "a", on_issue=frozenset({W, C}), removed=frozenset({W, C})),
    # Group 2: an interrupted run's hand-back, one attempt short of and at the end of its budget.
    "interrupted, one attempt left": Row(
        Fate.STOPPED, log(claim(1, "a", State.INTERRUPTED)), Action.REQUEUE, (Q,), Liveness.FINISHED, "a",
        max_attempts=2),
    "interrupted on its last attempt": Row(
        Fate.STOPPED_SPENT, log(claim(1, "a", State.INTERRUPTED)), Action.GIVE_UP, ("orion-failed",),
        Liveness.FINISHED, "a", max_attempts=1),
    "an earlier requeue": Row(
        Fate.RELEASED, log(claim(1, "a"), tomb(2, "a")), Action.REQUEUE, (Q,), None, "a"),
    "an earlier give-up": Row(
        Fate.RELEASED_GIVEN_UP, log(claim(1, "a"), tomb(2, "a", ReleaseAction.GIVE_UP)), Action.GIVE_UP,
        ("orion-failed",), None, "a"),
    # Group 3: a release of a claim nobody can find still decides (the claim may be deleted)...
    "a release of a claim the log does not hold": Row(
        Fate.RELEASED, log(claim(1, "a", State.FINISHED, 0), tomb(2, "gone")), Action.REQUEUE, (Q,), None,
        None),
    # ...and one of a claim that never ran decides nothing (ADR 0012): the finished run does.
    "a release of a claim that never ran": Row(
        Fate.FINISHED_OK, log(claim(1, "a", State.FINISHED, 0), claim(2, "b", State.CLAIMING), tomb(3, "b")),
        Action.COMPLETE, ("orion-ready",), Liveness.FINISHED, "a"),
    # ADR 0064 (the model's seed 43 episode 117): a person's forced release lists a winner's
    # record before its `running` edit (list lag), tombstones it, rewrites the visible line from
    # what it listed (`claiming` again) and dies before its label move; the loser after it says
    # it took no queueing. The person's release decides: without this row the loser's record
    # did (QUEUEING_TAKEN: the lock off, nothing on) and the issue was stranded.
    "a person's release of a claim whose record reads as never run": Row(
        Fate.RELEASED, log(claim(1, "a", State.CLAIMING), took_none(2, "b"), by_hand(3, "a")),
        Action.REQUEUE, (Q,), None, "a"),
    # Group 6: an end marker for a deleted claim is a release like any other, never a crash.
    "a holder's end marker for a claim the log does not hold": Row(
        Fate.RELEASED, log(claim(1, "a", State.FINISHED, 1), marker(2, "gone", ReleaseAction.FINISHED)),
        Action.REQUEUE, (Q,), None, None),
    "never started, dead": Row(
        Fate.NEVER_STARTED, log(claim(1, "a", State.CLAIMING)), Action.REQUEUE, (Q,), Liveness.DEAD, "a",
        verdicts=(("a", DEAD),)),
    "gave up before it ran": Row(
        Fate.GAVE_UP_UNSTARTED, log(claim(1, "a", State.LOST)), Action.REQUEUE, (Q,), Liveness.FINISHED, "a"),
    # ADR 0067 closes `requeue-over-cancel`: the claimer's own record says it took no queueing
    # (its unqueue found the label gone: the cancel sweep took it before the claim was posted).
    # Requeueing would undo the person's cancel; the lock comes off and nothing goes on.
    "gave up before it ran, its record saying it took no queueing": Row(
        Fate.QUEUEING_TAKEN, log(took_none(1, "a")), Action.UNLOCK, (), Liveness.FINISHED, "a"),
    "no record": Row(
        Fate.NO_RECORD, log(), Action.REPORT, (), Liveness.UNKNOWN, None, removed=frozenset()),
    # ADR 0067: the last claim's unqueue took a person's requeue (it landed late) and the claim
    # gave up before it ran. Without this row the finished run before it decided (`ready`), and
    # the requeue was lost (the model's replay (18, 58)).
    "a claim that took the queueing gave up before it ran, after a finished run": Row(
        Fate.QUEUEING_OWED, log(claim(1, "a", State.FINISHED, 0), owed(5, "b")), Action.REQUEUE, (Q,),
        Liveness.FINISHED, "b"),
    # ...and under the cancel label it is not requeued: the person's cancel overrules (ADR 0049).
    "a claim that took the queueing gave up before it ran, under a cancel": Row(
        Fate.QUEUEING_OWED, log(owed(5, "b")), Action.REQUEUE, (), Liveness.FINISHED, "b",
        on_issue=frozenset({W, C}), removed=frozenset({W})),
}


def test_a_queueing_is_owed_only_by_the_newest_event_with_every_run_over() -> None:
    """QUEUEING_OWED (ADR 0067) decides only where nothing else can have run the queueing: a
    release or a run after the claim decides instead, and so does a run not over when the claim
    was posted (a lower claim that won on a lagging list took that queueing itself, ADR 0048);
    a claim that lost before its unqueue owes nothing; a queue label on the issue is QUEUED_AGAIN."""
    def fated(*entries: ClaimEntry | TombstoneEntry, on: frozenset[str] = frozenset({W})) -> Fate:
        return fate(on, log(*entries), {}, LABELS, 3).fate

    assert fated(claim(1, "a", State.FINISHED, 0), owed(5, "b")) is Fate.QUEUEING_OWED
    # a loser after it (lost before its unqueue) changes nothing
    loser = claim(6, "c", State.LOST)
    assert fated(claim(1, "a", State.FINISHED, 0), owed(5, "b"), loser) is Fate.QUEUEING_OWED
    assert fated(claim(1, "a", State.FINISHED, 0), claim(5, "b", State.LOST)) is Fate.FINISHED_OK
    assert fated(claim(1, "a", State.FINISHED, 0, updated=9), owed(5, "b")) is Fate.FINISHED_OK
    assert fated(owed(5, "b"), claim(6, "c", State.FINISHED, 0)) is Fate.FINISHED_OK
    assert fated(claim(1, "a", State.FINISHED, 0), owed(5, "b"), tomb(6, "a")) is Fate.RELEASED
    assert fated(claim(1, "a", State.FINISHED, 0), owed(5, "b"), on=frozenset({W, Q})) is Fate.QUEUED_AGAIN
    # a run that gave up after it started owes nothing: its run is the event
    ran_then_lost = replace(owed(5, "b"), record=owed(5, "b").record.with_changes(child_pid=4243))
    assert fated(claim(1, "a", State.FINISHED, 0), ran_then_lost) is not Fate.QUEUEING_OWED
    # QUEUEING_TAKEN only from the newest claim's own word; not known (None) is GAVE_UP_UNSTARTED
    assert fated(claim(1, "b", State.LOST), took_none(2, "c")) is Fate.QUEUEING_TAKEN
    assert fated(took_none(1, "b"), claim(2, "c", State.LOST)) is Fate.GAVE_UP_UNSTARTED
    assert fated(took_none(1, "b"), on=frozenset({W, Q})) is Fate.QUEUED_AGAIN


def test_every_fate_has_a_row_and_a_test() -> None:
    assert set(RULES) == set(Fate)
    assert {r.fate for r in ROWS.values()} == set(Fate)


@pytest.mark.parametrize("name", list(ROWS))
def test_fate_row(name: str) -> None:
    row = ROWS[name]
    verdicts = dict(row.verdicts)
    assert fate(row.on_issue, row.log, verdicts, LABELS, row.max_attempts).fate is row.fate
    plan = plan_issue(7, True, row.on_issue, row.log, verdicts, LABELS, row.max_attempts)
    assert plan.action is row.action, plan.reason
    assert plan.add_labels == row.add
    assert set(plan.remove_labels) == row.removed
    assert (plan.verdict.liveness if plan.verdict else None) is row.shown
    assert (plan.holder.record.token if plan.holder else None) == row.holder
    assert plan.counts_attempt is row.counts
    assert plan.attempts_used == (row.log.attempts_used() if plan.writes else 0)
    assert RULES[row.fate].action is row.action


def test_a_cancelled_run_is_never_requeued() -> None:
    """A person's cancel stands: whatever the budget, no queue label goes on."""
    for max_attempts in (1, 3):
        history = log(claim(1, "a", State.CANCELLED))
        plan = plan_issue(7, True, frozenset({W, C}), history, {}, LABELS, max_attempts)
        assert plan.action is Action.COMPLETE and Q not in plan.add_labels
        assert plan.reason == "the run was cancelled and its label move did not finish"


@pytest.mark.parametrize(
    ("history", "max_attempts", "says"),
    [
        (log(claim(1, "a", State.INTERRUPTED)), 1,
         "the run was interrupted and its hand-back did not finish; 1 of 1 attempts spent"),
        (log(claim(1, "a", State.LOST, child_pid=4243)), 2,
         "the run was stopped and its hand-back did not finish"),
        (log(claim(1, "a")), 2, "wrapper pid 4242 is not running on this machine; attempt 1 of 2"),
        (log(claim(1, "a"), tomb(2, "a"), claim(3, "b")), 2,
         "wrapper pid 4242 is not running on this machine; attempt 2 of 2 failed, retry budget spent"),
        (log(claim(1, "a", State.FINISHED, 3)), 3,
         "the run finished with exit code 3 but the lock never moved"),
        (log(claim(1, "a", State.LOST)), 3, "the last claim gave up before it ran (no reason given)"),
        (log(claim(1, "a", State.CLAIMING)), 3,
         "wrapper pid 4242 is not running on this machine; "
         "the claim never started its command (no attempt spent)"),
    ],
)
def test_reasons_name_the_budget(history: IssueLog, max_attempts: int, says: str) -> None:
    verdicts = {c.record.token: DEAD for c in history.open_claims()}
    plan = plan_issue(7, True, frozenset({W}), history, verdicts, LABELS, max_attempts)
    assert plan.reason == says


def test_the_claim_a_fate_is_about_is_released_first() -> None:
    """Only the first tombstone may count an attempt: the newest dead run's, not a loser's."""
    history = log(claim(1, "a"), claim(2, "b", State.CLAIMING))
    plan = plan_issue(7, True, frozenset({W}), history, {"a": DEAD, "b": DEAD}, LABELS, 3)
    assert [c.record.token for c in plan.release] == ["a", "b"] and plan.counts_attempt


# -- which of several claims a plan is about, and the verdict it shows -------------------------


def _noted(entry: ClaimEntry, note: str) -> ClaimEntry:
    return replace(entry, record=entry.record.with_changes(note=note))


@pytest.mark.parametrize(
    ("why", "is_open", "on_issue", "history", "verdicts", "holder"),
    [
        ("queued again: the newest dead claim", True, frozenset({W, Q}),
         log(claim(1, "a", State.CLAIMING), claim(2, "b", State.CLAIMING)), {"a": DEAD, "b": DEAD}, "b"),
        ("never started: the newest dead claim", True, frozenset({W}),
         log(claim(1, "a", State.CLAIMING), claim(2, "b", State.CLAIMING)), {"a": DEAD, "b": DEAD}, "b"),
        ("gave up unstarted: the last claim", True, frozenset({W}),
         log(_noted(claim(1, "a", State.LOST), "first"), _noted(claim(2, "b", State.LOST), "second")), {},
         "b"),
        ("closed: the newest open claim", False, frozenset({W}),
         log(claim(1, "a"), claim(2, "b")), {"a": DEAD, "b": ALIVE}, "b"),
        ("closed, none open: the last claim", False, frozenset({W}),
         log(claim(1, "a", State.FINISHED, 0), claim(2, "b", State.LOST)), {}, "b"),
    ],
)
def test_the_plan_is_about_the_newest_claim(
    why: str, is_open: bool, on_issue: frozenset[str], history: IssueLog, verdicts: dict[str, Verdict],
    holder: str,
) -> None:
    plan = plan_issue(7, is_open, on_issue, history, verdicts, LABELS, 3)
    assert plan.holder is not None and plan.holder.record.token == holder, why
    if is_open:  # the claim the fate is about is tombstoned first: only it may count an attempt
        assert plan.release[:1] == tuple(c for c in history.open_claims() if c.record.token == holder)
    if "gave up" in why:
        assert plan.reason == "the last claim gave up before it ran (second)"


def test_keep_and_report_show_the_holders_own_verdict() -> None:
    for verdict, action in ((ALIVE, Action.KEEP), (UNKNOWN, Action.REPORT)):
        history = log(claim(1, "a"), claim(2, "b"))
        plan = plan_issue(7, True, frozenset({W}), history, {"a": DEAD, "b": verdict}, LABELS, 3)
        assert (plan.action, plan.verdict, plan.reason) == (action, verdict, verdict.reason)
        assert plan.holder is not None and plan.holder.record.token == "b"


def test_an_unreadable_claim_shows_as_in_doubt_never_alive() -> None:
    history = log(claim(1, "a", State.FINISHED, 0), unreadable=((3, "version 2"),))
    plan = plan_issue(7, True, frozenset({W}), history, {}, LABELS, 3)
    assert plan.action is Action.REPORT and plan.verdict is not None
    assert plan.verdict.liveness is Liveness.UNKNOWN and plan.verdict.reason == plan.reason


def test_the_verdict_shown_for_an_ended_run_says_why() -> None:
    done = plan_issue(7, True, frozenset({W}), log(claim(1, "a", State.FINISHED, 0)), {}, LABELS, 3)
    assert done.verdict == Verdict(Liveness.FINISHED, "the run finished")
    stopped = plan_issue(7, True, frozenset({W, C}), log(claim(1, "a", State.CANCELLED)), {}, LABELS, 3)
    assert stopped.verdict == Verdict(Liveness.FINISHED, stopped.reason)
    none = plan_issue(7, True, frozenset({W}), log(), {}, LABELS, 3)
    assert none.verdict == Verdict(Liveness.UNKNOWN, none.reason)


def test_a_refused_release_names_the_first_live_holder() -> None:
    both = (claim(1, "a"), claim(2, "b"))
    plan = plan_release(7, True, frozenset({W}), both, {"a": ALIVE, "b": UNKNOWN}, LABELS, force=False)
    assert plan.holder == both[0] and plan.verdict is ALIVE and "its holder is alive" in plan.reason
    forced = plan_release(7, True, frozenset({W}), both, {"a": ALIVE, "b": UNKNOWN}, LABELS, force=True)
    assert forced.holder == both[0]


def test_a_beat_exactly_at_the_missed_beat_bound_is_still_on_time() -> None:
    entry = claim(1, "a", updated=0)
    at_bound = T0 + timedelta(seconds=MISSED_BEAT_FACTOR * entry.record.interval)
    plan = keep_on_fresh_beat(7, True, frozenset({W}), log(entry), at_bound, LABELS, lambda _e: ALIVE)
    assert plan is not None and plan.action is Action.KEEP
    late = at_bound + timedelta(seconds=1)
    assert keep_on_fresh_beat(7, True, frozenset({W}), log(entry), late, LABELS, lambda _e: ALIVE) is None


@pytest.mark.parametrize("queued", [True, False])
def test_the_cancel_sweep_says_which_case_it_met(queued: bool) -> None:
    plan = plan_cancel(7, True, frozenset({C, Q}) if queued else frozenset({C}), LABELS)
    assert plan is not None
    if queued:
        assert plan.reason == (
            "cancelled before it ran: the orion-cancel label was on a queued issue; add orion to run it again"
        )
    else:
        assert plan.reason == (
            "the orion-cancel label was on an issue that is neither queued nor held; taken off"
        )


def test_a_queueing_owed_names_why_its_claim_gave_up_or_that_it_gave_none() -> None:
    """ADR 0067: the reason carries the lost claim's own note, or says it gave none."""
    said = plan_issue(7, True, frozenset({W}), log(owed(5, "b")), {}, LABELS, 3)
    assert said.reason == ("the last claim took the queue label, then gave up before it ran (GitHub did not "
                           "answer); its queueing goes back to the queue")
    silent = owed(5, "b")
    silent = replace(silent, record=silent.record.with_changes(note=None))
    unsaid = plan_issue(7, True, frozenset({W}), log(silent), {}, LABELS, 3)
    assert "gave up before it ran (no reason given);" in unsaid.reason
