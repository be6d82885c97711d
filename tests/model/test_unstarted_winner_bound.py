"""A dead winner that never started is released once its unqueue can no longer land (ADR 0106):
seed 11 episode 28 with adaptive beats on (stale_after 12 s), shrunk.

w0 on m2 wins issue 1 (its record says `running`, no child pid) and its wrapper dies 10 s
later. A pass on m2, 16 s after the claim, sees the wrapper gone, but its unqueue may still land
until 12 × 2/3 + 11 = 19 s after the claim (ADR 0072): the pass waits, and the next one after
that window releases. The world's liveness check allowed only stale_after plus 2 s, and called
the first pass's wait "a dead holder was kept"."""

from __future__ import annotations

import pytest

from model import explorer, world
from model.explorer import Setup
from model.world import CONFIG, HOSTED
from orion_action.core.liveness import writes_land_within
from orion_action.services.holding import LABEL_LANDING_MARGIN_S

SETUP = Setup(issues=1, max_lag=0.0, whole_seconds=True, clones=False, lag_seed="11-28", skew=-2.0,
              pauses=True, guardians_die=False, dispatch=False, repos=1, halts=False, mid_run_queueing=False)
TRACE: list[explorer.Act] = [
    ("worker", "m2", 1, False), ("burst", "w0.claim", 10), ("time", 10.0), ("crash", "w0"), ("time", 5.0),
    ("reconciler", "m2"), ("burst", "r0", 8),
]
N = 1


@pytest.fixture(autouse=True)
def adaptive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world, "ADAPTIVE", True)


def test_the_pass_waits_out_the_unqueue_and_the_next_releases() -> None:
    w = SETUP.world()
    try:
        for act in TRACE:
            assert explorer.apply(w, act), act
            w.check()
        lab = CONFIG.labels
        (claim,) = w.issue_log(N).claims
        assert claim.record.child_pid is None, "the winner started its command"
        assert lab.working in w.server.issue(N).labels, "the pass did not wait for the unqueue"
        window = writes_land_within(claim.record, w.config.stale_after, LABEL_LANDING_MARGIN_S)
        assert window > w.config.stale_after + 2, "the window is within the old bound: nothing to test"
        w.advance(window)
        r = w.spawn_reconciler(HOSTED)
        while not w.sched.result(r).done:
            w.step(r)
            w.check()
        assert lab.working not in w.server.issue(N).labels, "the next pass kept the dead winner"
    finally:
        w.close()
