"""core.plan.plan_release: `release` by hand (docs/design.md section 12), decided without GitHub."""

from __future__ import annotations

from test_plan import ALIVE, DEAD, UNKNOWN, claim

from orion_action.config import Labels
from orion_action.core.plan import Action, plan_release
from orion_action.core.record import ReleaseAction, State

LABELS = Labels()
ON = frozenset({"orion-working", "orion-stage-build", "bug"})


def test_a_dead_run_is_requeued_and_its_attempt_counted() -> None:
    a = claim(1, "a")
    plan = plan_release(7, True, ON, (a,), {"a": DEAD}, LABELS, force=False)
    assert (plan.action, plan.reason) == (Action.REQUEUE, "released by hand; the holder is dead")
    assert plan.counts_attempt and plan.release == (a,) and plan.holder == a
    assert plan.add_labels == ("orion",)
    assert set(plan.remove_labels) == {"orion-stage-build", "orion-working"}
    assert plan.remove_labels[-1] == "orion-working"  # the lock last


def test_a_dead_claim_that_never_started_spends_nothing() -> None:
    plan = plan_release(7, True, ON, (claim(1, "a", State.CLAIMING),), {"a": DEAD}, LABELS, force=False)
    assert plan.action is Action.REQUEUE and not plan.counts_attempt


def test_a_live_or_uncertain_holder_is_refused_without_force() -> None:
    for verdict in (ALIVE, UNKNOWN):
        plan = plan_release(7, True, ON, (claim(1, "a"),), {"a": verdict}, LABELS, force=False)
        assert plan.action is Action.REPORT and not plan.writes
        assert plan.reason == (
            f"refusing to release #7: its holder is {verdict.liveness.value} ({verdict.reason}); "
            "use --force only if you are sure the run is gone"
        )


def test_force_releases_a_live_holder_without_spending_an_attempt() -> None:
    both = (claim(1, "a"), claim(2, "b"))
    plan = plan_release(7, True, ON, both, {"a": DEAD, "b": ALIVE}, LABELS, force=True)
    assert (plan.action, plan.reason) == (Action.REQUEUE, "released by hand with --force")
    assert not plan.counts_attempt and [c.record.token for c in plan.release] == ["a", "b"]


def test_a_closed_issue_is_unlocked_not_queued() -> None:
    plan = plan_release(7, False, ON, (claim(1, "a"),), {"a": DEAD}, LABELS, force=False)
    assert plan.add_labels == () and "orion-working" in plan.remove_labels


def test_no_open_claim_still_takes_the_lock_off() -> None:
    plan = plan_release(7, True, frozenset({"orion-working"}), (), {}, LABELS, force=False)
    assert plan.holder is None and plan.release == () and not plan.counts_attempt
    assert plan.remove_labels == ("orion-working",) and plan.add_labels == ("orion",)


def test_a_dead_run_released_by_hand_is_requeued_and_its_tombstone_says_requeue() -> None:
    plan = plan_release(7, True, ON, (claim(1, "a"),), {"a": DEAD}, LABELS, force=False)
    assert not plan.for_cancel and plan.tombstone_action is ReleaseAction.REQUEUE


def test_a_release_under_the_cancel_label_is_not_requeued_and_its_tombstone_unlocks() -> None:
    """ADR 0049: a person's cancel stands. The reason says why the issue is not queued again,
    a queue label on it comes off with the lock, and the tombstone unlocks, so that the released
    holder's repair (ADR 0025) does not requeue it once the cancel sweep took the label off."""
    on = ON | {"orion-cancel", "orion"}
    plan = plan_release(7, True, on, (claim(1, "a"),), {"a": DEAD}, LABELS, force=False)
    assert (plan.action, plan.reason) == (
        Action.REQUEUE, "released by hand; the holder is dead; not requeued: the issue carries orion-cancel")
    assert plan.add_labels == ()
    assert set(plan.remove_labels) == {"orion-stage-build", "orion", "orion-working"}
    assert plan.remove_labels[-1] == "orion-working"
    assert plan.for_cancel and plan.tombstone_action is ReleaseAction.UNLOCK
