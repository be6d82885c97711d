"""core.plan: the rules a pass uses for an issue a dead holder left with no label (ADR 0072):
which issues it reads in full (`strand_candidates`), what counts as stranded (`is_stranded`),
and the repair it makes (`plan_strand`): only a dead run's, never a live or finished one's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from test_plan import ALIVE, DEAD, T0, claim, log, tomb

from orion_action.config import Labels
from orion_action.core.cancelled import LabelEvent
from orion_action.core.issue import IssueLog
from orion_action.core.liveness import Verdict
from orion_action.core.plan import (
    ENDED_STRAND_FATES,
    STRAND_FATES,
    Action,
    EndedStrand,
    Fate,
    ended_strand_candidates,
    ended_strand_label,
    fate,
    is_stranded,
    plan_ended_strand,
    plan_issue,
    plan_strand,
    strand_candidates,
)
from orion_action.core.record import State

LABELS = Labels()
Q, W, STAGE = LABELS.queue, LABELS.working, "orion-stage-build"


def test_an_open_unnamed_newest_claim_on_an_unlisted_issue_is_a_candidate() -> None:
    recent = {7: log(claim(1, "a")), 3: log(claim(2, "b", State.CLAIMING))}
    assert strand_candidates(recent, listed=()) == [3, 7]  # in issue order


def test_an_issue_in_the_lock_listing_is_no_candidate() -> None:
    assert strand_candidates({7: log(claim(1, "a"))}, listed={7}) == []


def test_an_issue_with_no_claim_among_the_recent_comments_is_no_candidate() -> None:
    assert strand_candidates({7: log(tomb(1, "a"))}, listed=()) == []


def test_only_the_newest_claim_counts() -> None:
    """An older open claim beside a newer one that finished: the newest says the issue's story
    ended, so there is nothing to read (and an older finished one does not hide a newer open one)."""
    ended_last = log(claim(1, "a"), claim(2, "b", State.FINISHED, 0))
    open_last = log(claim(1, "a", State.FINISHED, 0), claim(2, "b"))
    assert strand_candidates({7: ended_last, 8: open_last}, listed=()) == [8]


def test_a_claim_a_tombstone_names_is_no_candidate_one_naming_another_is() -> None:
    named = log(claim(1, "a"), tomb(2, "a"))
    other = log(claim(1, "a"), tomb(2, "zz"))
    assert strand_candidates({7: named, 8: other}, listed=()) == [8]


def test_stranded_means_open_and_carrying_none_of_orions_labels() -> None:
    assert is_stranded(True, frozenset(), LABELS) is True
    assert is_stranded(True, frozenset({"bug", STAGE}), LABELS) is True  # a stage label is no state
    for ours in (Q, W, LABELS.ready, LABELS.failed, LABELS.cancel):
        assert is_stranded(True, frozenset({ours, "bug"}), LABELS) is False, ours
    assert is_stranded(False, frozenset(), LABELS) is False  # a closed issue is nobody's queue


def test_the_fates_a_strand_repair_may_have_are_a_dead_runs() -> None:
    assert frozenset({Fate.DIED_UNSTARTED, Fate.DIED_RUNNING, Fate.DIED_RUNNING_SPENT}) == STRAND_FATES


def test_a_dead_run_on_a_stranded_issue_is_requeued_with_its_claim_released() -> None:
    plan = plan_strand(7, True, frozenset({STAGE}), log(claim(1, "a")), {"a": DEAD}, LABELS, max_attempts=3)
    assert plan is not None
    assert plan.action is Action.REQUEUE and plan.add_labels == (Q,)
    assert [c.record.token for c in plan.release] == ["a"]
    assert plan.reason.startswith("the issue carried no label (stranded): ")
    assert W not in plan.remove_labels and STAGE in plan.remove_labels  # the lock is not there to take off


def test_a_dead_winner_that_never_started_is_requeued_too() -> None:
    dead = log(claim(1, "a", child_pid=None))
    plan = plan_strand(7, True, frozenset(), dead, {"a": DEAD}, LABELS, max_attempts=3)
    assert plan is not None and plan.action is Action.REQUEUE and plan.add_labels == (Q,)


def test_a_dead_run_on_its_last_attempt_is_given_up() -> None:
    plan = plan_strand(7, True, frozenset(), log(claim(1, "a")), {"a": DEAD}, LABELS, max_attempts=1)
    assert plan is not None and plan.action is Action.GIVE_UP and plan.add_labels == (LABELS.failed,)


def test_no_repair_where_the_issue_is_not_stranded() -> None:
    dead = log(claim(1, "a"))
    assert plan_strand(7, True, frozenset({W}), dead, {"a": DEAD}, LABELS, 3) is None  # the lock listing's
    assert plan_strand(7, False, frozenset(), dead, {"a": DEAD}, LABELS, 3) is None  # closed


def test_no_repair_for_a_live_holder() -> None:
    """Its next beat puts its lock back (ADR 0065)."""
    assert plan_strand(7, True, frozenset(), log(claim(1, "a")), {"a": ALIVE}, LABELS, 3) is None


def test_no_repair_for_a_finished_run_whose_label_a_person_took_off() -> None:
    done = log(claim(1, "a", State.FINISHED, 0))
    assert plan_strand(7, True, frozenset(), done, {}, LABELS, 3) is None


def test_no_repair_for_a_fate_outside_the_strand_fates_though_it_would_write() -> None:
    """Dead claims none of which ran, with no winner among them (NEVER_STARTED): its plan would
    requeue and release, but a loser's claim open on an unlabelled issue is what a claim in
    flight looks like too; only a dead run's fate is repaired."""
    never = log(claim(1, "a", State.CLAIMING), claim(2, "b", State.CLAIMING))
    verdicts = {"a": DEAD, "b": DEAD}
    assert fate(frozenset(), never, verdicts, LABELS, 3).fate not in STRAND_FATES
    would = plan_issue(7, True, frozenset(), never, verdicts, LABELS, 3)
    assert would.writes and would.release and would.add_labels
    assert plan_strand(7, True, frozenset(), never, verdicts, LABELS, 3) is None


# -- an ending's lost outcome label (ADR 0076) ---------------------------------------------------

PROMISE = 600.0  # what a test record promises (ClaimRecord's default stale_after)


@dataclass(frozen=True)
class CandidateRow:
    id: str
    log: IssueLog
    age: float  # seconds since the newest claim's last write, at the listing's time
    found: bool
    listed: bool = False


CANDIDATE_ROWS = [
    CandidateRow("finished, settled", log(claim(1, "a", State.FINISHED, 0)), PROMISE, True),
    CandidateRow("failed, settled", log(claim(1, "a", State.FINISHED, 2)), PROMISE + 5, True),
    CandidateRow("interrupted, settled", log(claim(1, "a", State.INTERRUPTED)), PROMISE, True),
    CandidateRow("finished, its holder's writes may still land", log(claim(1, "a", State.FINISHED, 0)),
                 PROMISE - 1, False),
    CandidateRow("cancelled: its ending puts no label on", log(claim(1, "a", State.CANCELLED)), PROMISE,
                 False),
    CandidateRow("lost: ran nothing more, moved no label", log(claim(1, "a", State.LOST)), PROMISE, False),
    CandidateRow("open: the other strand look's", log(claim(1, "a")), PROMISE, False),
    CandidateRow("released by a pass", log(claim(1, "a", State.FINISHED, 0), tomb(2, "a")), PROMISE, False),
    CandidateRow("in the lock listing", log(claim(1, "a", State.FINISHED, 0)), PROMISE, False, listed=True),
    CandidateRow("an older finished run under a newer open claim",
                 log(claim(1, "a", State.FINISHED, 0), claim(2, "b")), PROMISE, False),
]


@pytest.mark.parametrize("row", CANDIDATE_ROWS, ids=lambda r: r.id)
def test_ended_strand_candidates(row: CandidateRow) -> None:
    newest = max(row.log.claims, key=lambda c: c.comment_id)
    now = newest.updated_at + timedelta(seconds=row.age)
    found = ended_strand_candidates({7: row.log}, {7} if row.listed else set(), now, stale_after=60.0)
    assert found == ([7] if row.found else [])


@dataclass(frozen=True)
class LabelRow:
    id: str
    log: IssueLog
    on_issue: frozenset[str]
    label: str | None  # the outcome label put back; None: nothing
    verdicts: dict[str, Verdict] = field(default_factory=dict)


LABEL_ROWS = [
    LabelRow("finished 0: ready", log(claim(1, "a", State.FINISHED, 0, updated=9)), frozenset(),
             LABELS.ready),
    LabelRow("finished 1: failed", log(claim(1, "a", State.FINISHED, 1, updated=9)), frozenset({STAGE}),
             LABELS.failed),
    LabelRow("interrupted, attempts left: queue", log(claim(1, "a", State.INTERRUPTED, updated=9)),
             frozenset(), Q),
    LabelRow("an orion label is on: not stranded", log(claim(1, "a", State.FINISHED, 0)),
             frozenset({LABELS.ready}), None),
    LabelRow("cancelled: no label", log(claim(1, "a", State.CANCELLED)), frozenset(), None),
    LabelRow("a claim this version cannot read: reported, no label",
             log(claim(1, "a", State.FINISHED, 0), unreadable=((2, "a newer format"),)), frozenset(), None),
    LabelRow("an older dead open claim: the other strand look's",
             log(claim(1, "b"), claim(2, "a", State.FINISHED, 0)), frozenset(), None, {"b": DEAD}),
]


@pytest.mark.parametrize("row", LABEL_ROWS, ids=lambda r: r.id)
def test_ended_strand_label(row: LabelRow) -> None:
    got = ended_strand_label(7, True, row.on_issue, row.log, row.verdicts, LABELS, max_attempts=3)
    if row.label is None:
        assert got is None
    else:
        newest = max(row.log.claims, key=lambda c: c.comment_id)
        assert got == EndedStrand(row.label, newest.updated_at, newest.created_at)


def test_a_closed_issue_gets_no_label_back() -> None:
    finished = log(claim(1, "a", State.FINISHED, 0))
    assert ended_strand_label(7, False, frozenset(), finished, {}, LABELS, 3) is None


ENDED = EndedStrand(LABELS.ready, since=T0 + timedelta(seconds=100, microseconds=400_000),
                    claimed=T0 + timedelta(seconds=30, microseconds=400_000))


def event(label: str, added: bool, at: float) -> LabelEvent:
    return LabelEvent(label, added, "someone", T0 + timedelta(seconds=at))


@dataclass(frozen=True)
class EventRow:
    id: str
    events: tuple[LabelEvent, ...]
    put_on: bool


UNLOCK = event(W, False, 101)  # the one-request ending's removal of the lock, after the record (100)
EVENT_ROWS = [
    EventRow("the lock taken off, nothing added: put it on", (UNLOCK,), True),
    EventRow("a run within one second: its queueing and lock in the record's second, before the removal",
             (event(Q, True, 100), event(W, True, 100), event(Q, False, 100), event(W, False, 100)), True),
    EventRow("no removal of the lock since the record: left alone", (event(W, False, 99),), False),
    EventRow("added with the removal, then taken off: a person's removal stands",
             (event(LABELS.ready, True, 101), UNLOCK, event(LABELS.ready, False, 200)), False),
    EventRow("added in the record's own second (whole seconds): counts as after",
             (event(LABELS.ready, True, 100), UNLOCK), False),
    EventRow("added only before the record (an earlier run's): put it on",
             (event(LABELS.ready, True, 50), event(LABELS.ready, False, 60), UNLOCK), True),
    EventRow("only removed since: put it on", (UNLOCK, event(LABELS.ready, False, 150)), True),
    EventRow("a person's cancel since: it stands", (UNLOCK, event(LABELS.cancel, True, 150)), False),
    EventRow("a person's cancel during the run (a pass then took the lock off): it stands",
             (event(LABELS.cancel, True, 30), event(W, False, 120)), False),
    EventRow("a cancel before the claim (swept before it was claimed): put it on",
             (event(LABELS.cancel, True, 29), event(LABELS.cancel, False, 29), UNLOCK), True),
    EventRow("a requeue since, taken off again: it stands",
             (UNLOCK, event(Q, True, 150), event(Q, False, 160)), False),
    EventRow("a requeue and a claim since, its lock off again: it stands",
             (UNLOCK, event(Q, True, 150), event(W, True, 151), event(Q, False, 151), event(W, False, 155)),
             False),
    EventRow("another label than orion's added since: put it on", (UNLOCK, event("bug", True, 150)), True),
]


@pytest.mark.parametrize("row", EVENT_ROWS, ids=lambda r: r.id)
def test_plan_ended_strand(row: EventRow) -> None:
    plan = plan_ended_strand(7, ENDED, row.events, LABELS)
    if not row.put_on:
        assert plan is None
        return
    assert plan is not None and plan.action is Action.COMPLETE
    assert plan.add_labels == (LABELS.ready,) and plan.release == () and plan.remove_labels == ()


def test_the_fates_an_ending_repair_may_have_are_a_finished_or_stopped_runs() -> None:
    expected = {Fate.FINISHED_OK, Fate.FINISHED_FAILED, Fate.STOPPED, Fate.STOPPED_SPENT}
    assert frozenset(expected) == ENDED_STRAND_FATES
