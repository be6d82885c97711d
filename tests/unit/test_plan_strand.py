"""core.plan: the rules a pass uses for an issue a dead holder left with no label (ADR 0072):
which issues it reads in full (`strand_candidates`), what counts as stranded (`is_stranded`),
and the repair it makes (`plan_strand`): only a dead run's, never a live or finished one's.
"""

from __future__ import annotations

from test_plan import ALIVE, DEAD, claim, log, tomb

from orion_action.config import Labels
from orion_action.core.issue import IssueLog
from orion_action.core.liveness import Verdict
from orion_action.core.plan import (
    STRAND_FATES,
    Action,
    Fate,
    Plan,
    fate,
    is_stranded,
    plan_issue,
    plan_strand,
    strand_candidates,
)
from orion_action.core.record import ReleaseAction, State

LABELS = Labels()
Q, W, STAGE = LABELS.queue, LABELS.working, "orion-stage-build"


def strand(on_issue: frozenset[str], logged: IssueLog, verdicts: dict[str, Verdict], max_attempts: int = 3, *,
           is_open: bool = True, cancel_stands: bool = False) -> Plan | None:
    """Issue 7's repair, as `plan_strand` makes it."""
    return plan_strand(7, is_open, on_issue, logged, verdicts, LABELS, max_attempts,
                       cancel_stands=cancel_stands)


def test_an_open_unnamed_newest_claim_on_an_unlisted_issue_is_a_candidate() -> None:
    recent = {7: log(claim(1, "a")), 3: log(claim(2, "b", State.CLAIMING, child_pid=None), claim(3, "c")),
              5: log(claim(4, "d"))}
    assert strand_candidates(recent, listed=()) == [3, 5, 7]  # in issue order


def test_a_run_that_lost_its_lease_with_its_attempts_spent_gives_up() -> None:
    spent = log(claim(1, "a"), tomb(2, "a"), claim(3, "b", State.LOST, child_pid=4243))  # 1 attempt spent
    plan = strand(frozenset(), spent, {}, max_attempts=1)
    assert plan is not None and plan.action is Action.GIVE_UP and plan.add_labels == (LABELS.failed,)
    assert not plan.release


def test_a_claim_still_claiming_took_nothing_and_is_no_candidate() -> None:
    """A claimer writes `running` before it sends its unqueue: one still `claiming` took no
    queueing, and its issue's repair would have nothing to decide (a claim that never ran)."""
    assert strand_candidates({3: log(claim(2, "b", State.CLAIMING, child_pid=None))}, listed=()) == []


def test_a_run_that_lost_its_lease_is_a_candidate_and_requeued() -> None:
    """A holder whose lease ran out writes `lost` and leaves the labels to a pass, which the lock
    shows; a stale removal of that lock strands the issue (GraphQL-mode seed 151 episode 87's
    second shape). Nothing is left to release: the repair is the label."""
    stopped = log(claim(1, "a", State.LOST, child_pid=4243))  # its child started: it ran
    assert strand_candidates({7: stopped}, listed=()) == [7]
    plan = strand(frozenset(), stopped, {})
    assert plan is not None and plan.action is Action.REQUEUE and plan.add_labels == (Q,) and not plan.release


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


def test_a_newer_lost_claim_does_not_hide_an_older_open_one() -> None:
    """A loser posts after the winner and takes nothing (seed 151 episode 87): the winner's open
    claim is what the issue's story turns on. Only lost claims leave nothing to read."""
    loser_after = log(claim(1, "a"), claim(2, "b", State.LOST, child_pid=None))
    only_lost = log(claim(1, "a", State.LOST, child_pid=None))
    assert strand_candidates({7: loser_after, 8: only_lost}, listed=()) == [7]


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
    assert frozenset({Fate.DIED_UNSTARTED, Fate.DIED_RUNNING, Fate.DIED_RUNNING_SPENT, Fate.STOPPED,
                      Fate.STOPPED_SPENT}) == STRAND_FATES


def test_a_dead_run_on_a_stranded_issue_is_requeued_with_its_claim_released() -> None:
    plan = strand(frozenset({STAGE}), log(claim(1, "a")), {"a": DEAD})
    assert plan is not None
    assert plan.action is Action.REQUEUE and plan.add_labels == (Q,)
    assert [c.record.token for c in plan.release] == ["a"]
    assert plan.reason.startswith("the issue carried no label (stranded): ")
    assert W not in plan.remove_labels and STAGE in plan.remove_labels  # the lock is not there to take off


def test_a_dead_run_on_a_stranded_issue_a_person_cancelled_is_released_and_not_requeued() -> None:
    """The cancel sweep took the cancel label off (no lock held the issue: a person had taken it
    off), and GitHub's record says the cancel stands (ADR 0078)."""
    plan = strand(frozenset({STAGE}), log(claim(1, "a")), {"a": DEAD}, cancel_stands=True)
    assert plan is not None and plan.add_labels == ()
    assert [c.record.token for c in plan.release] == ["a"]
    assert plan.for_cancel and plan.tombstone_action is ReleaseAction.UNLOCK  # no repair reads a requeue
    assert plan.remove_labels == (STAGE,)
    assert plan.reason.startswith("the issue carried no label (stranded) after a person's cancel: ")
    assert plan.reason.endswith("; not requeued")


def test_a_cancelled_dead_run_on_its_last_attempt_gets_no_failed_label_either() -> None:
    plan = strand(frozenset(), log(claim(1, "a")), {"a": DEAD}, max_attempts=1, cancel_stands=True)
    assert plan is not None and plan.add_labels == () and plan.release


def test_a_dead_winner_that_never_started_is_requeued_too() -> None:
    dead = log(claim(1, "a", child_pid=None))
    plan = strand(frozenset(), dead, {"a": DEAD})
    assert plan is not None and plan.action is Action.REQUEUE and plan.add_labels == (Q,)


def test_a_dead_run_on_its_last_attempt_is_given_up() -> None:
    plan = strand(frozenset(), log(claim(1, "a")), {"a": DEAD}, 1)
    assert plan is not None and plan.action is Action.GIVE_UP and plan.add_labels == (LABELS.failed,)


def test_no_repair_where_the_issue_is_not_stranded() -> None:
    dead = log(claim(1, "a"))
    assert strand(frozenset({W}), dead, {"a": DEAD}) is None  # the lock listing's
    assert strand(frozenset(), dead, {"a": DEAD}, is_open=False) is None  # closed


def test_no_repair_for_a_live_holder() -> None:
    """Its next beat puts its lock back (ADR 0065)."""
    assert strand(frozenset(), log(claim(1, "a")), {"a": ALIVE}) is None


def test_no_repair_for_a_finished_run_whose_label_a_person_took_off() -> None:
    done = log(claim(1, "a", State.FINISHED, 0))
    assert strand(frozenset(), done, {}) is None


def test_no_repair_for_a_fate_outside_the_strand_fates_though_it_would_write() -> None:
    """Dead claims none of which ran, with no winner among them (NEVER_STARTED): its plan would
    requeue and release, but a loser's claim open on an unlabelled issue is what a claim in
    flight looks like too; only a dead run's fate is repaired."""
    never = log(claim(1, "a", State.CLAIMING), claim(2, "b", State.CLAIMING))
    verdicts = {"a": DEAD, "b": DEAD}
    assert fate(frozenset(), never, verdicts, LABELS, 3).fate not in STRAND_FATES
    would = plan_issue(7, True, frozenset(), never, verdicts, LABELS, 3)
    assert would.writes and would.release and would.add_labels
    assert strand(frozenset(), never, verdicts) is None
