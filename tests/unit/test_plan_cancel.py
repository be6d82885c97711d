"""The cancel sweep's plan (orion_action/core/plan.plan_cancel): which unheld issues carrying
the cancel label a reconcile pass takes out of the queue, and which it leaves alone."""

from __future__ import annotations

import pytest

from orion_action.config import Labels
from orion_action.core.plan import Action, plan_cancel

LAB = Labels()
Q, W, C, R = LAB.queue, LAB.working, LAB.cancel, LAB.ready

ROWS = [
    # (why, open, labels, the labels removed in order, or None for no plan)
    ("queued and cancelled: unqueue, the cancel label last", True, {Q, C, "bug"}, (Q, C)),
    ("held: the holder's (or the lock pass's) to cancel", True, {W, C}, None),
    ("held and queued (a requeue beside a lock): still the lock pass's", True, {Q, W, C}, None),
    ("closed: left alone", False, {Q, C}, None),
    ("no cancel label: nothing to do", True, {Q}, None),
    ("cancel on a finished issue: only the cancel label goes", True, {R, C}, (C,)),
]


@pytest.mark.parametrize("why,is_open,labels,removed", ROWS, ids=[r[0] for r in ROWS])
def test_plan_cancel(why: str, is_open: bool, labels: set[str], removed: tuple[str, ...] | None) -> None:
    plan = plan_cancel(7, is_open, frozenset(labels), LAB)
    if removed is None:
        assert plan is None
        return
    assert plan is not None and plan.issue == 7 and plan.action is Action.CANCEL
    assert plan.remove_labels == removed and plan.add_labels == () and plan.release == ()
    assert plan.writes and W not in plan.remove_labels
