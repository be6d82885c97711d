"""A person's forced release that lists a winner's record before its `running` edit (ADR 0064):
seed 43 episode 117 with adaptive beats on (it breaks the same way with them off).

w3 and w1 claim issue 2; w3 (the lower comment) wins, edits its record to `running` and takes
the queue label; w1 lists w3's claim and loses before its unqueue (its record: `lost`,
unqueued false). A person's `release --issue 2 --force` (r2) lists the comments within the
list lag of w3's edit, so it reads w3's record as `claiming`, posts the tombstone and rewrites
the claim's visible line from that record: GitHub's record of w3 reads `claiming`, no pid,
again. r2 dies before its label move, and w3 before its first beat. The next pass saw no run
(`ran` reads the record), ignored the person's tombstone as a release of a claim that never
ran, and took the loser's record as the last word (QUEUEING_TAKEN): the lock off and nothing
on, the issue stranded. A person's release now decides whatever its claim's record says
(core/plan.py `_last_event`): the pass finishes it and the issue is queued again.

Since ADR 0080 the release reads the comment again before its rewrite and leaves a body newer
than its listing: on this trace w3's record stays `running`. The rule above still decides where
a write lands between that read and the rewrite (directed scenario
release_lists_a_winner_before_its_running_edit)."""

from __future__ import annotations

import pytest

from model import explorer, world
from model.explorer import Setup
from model.world import LAB, InvariantError, World
from orion_action.core.record import State

SETUP = Setup(issues=2, max_lag=2.5, whole_seconds=False, clones=False, lag_seed="43-117", skew=2.0,
              pauses=False, guardians_die=False, dispatch=False, repos=1, halts=False)
# The shrunk trace `ORION_MODEL_ADAPTIVE=1 simulate.py --seed 43 --no-random --episodes 118`
# printed before this ADR.
TRACE: list[explorer.Act] = [
    ("reconciler", "m2"), ("person", "force", 2), ("worker", "m2", 1, False), ("worker", "m2", 2, True),
    ("worker", "m1", None, False), ("step", "w0.claim"), ("worker", "m2", 2, False), ("step", "w3.claim"),
    ("step", "w0.claim"), ("step", "w3.claim"), ("step", "w1.claim"), ("person", "force", 2), ("race", 4),
    ("step", "w3.claim"), ("step", "w1.claim"), ("step", "r2"), ("step", "r2"), ("step", "r2"),
    ("step", "w3.claim"), ("step", "r2"), ("step", "r2"), ("step", "r2"),
]
N = 2


@pytest.fixture(params=[True, False], ids=["adaptive", "fixed-beat"], autouse=True)
def adaptive(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world, "ADAPTIVE", request.param)


def _settled() -> World:
    w = SETUP.world()
    for act in TRACE:
        assert explorer.apply(w, act), act
        w.check()
    w.quiesce()
    return w


def test_the_trace_breaks_nothing() -> None:
    explorer.run_acts(SETUP, TRACE)


def test_the_release_leaves_the_winners_newer_record_and_the_pass_requeues() -> None:
    """The release listed the winner as `claiming` and read it again as `running` before its
    rewrite: it leaves that record (ADR 0080). The loser's record says it took no queueing, the
    person's tombstone names the winner, and the issue ends queued, its lock off."""
    w = _settled()
    try:
        log = w.issue_log(N)
        won, lost = log.claims
        assert won.record.state is State.RUNNING and won.record.released is None
        assert w.workers["w3"].child_started, "the winner no longer started its child"
        assert lost.record.state is State.LOST and lost.record.unqueued is False
        named = [t.tombstone.by for t in log.tombstones if t.tombstone.token == won.record.token]
        assert named == ["release"]
        assert w.gh_of(N).issue(N).labels & {LAB.queue, LAB.working, LAB.ready, LAB.failed} == {LAB.queue}
        w.check_settled()
    finally:
        w.close()


def test_the_same_issue_left_with_no_label_is_still_stranded() -> None:
    """The settle check still calls the outcome before this ADR (no label) a strand: the queue
    label taken off behind the world's back (no person's act is recorded to excuse it)."""
    w = _settled()
    try:
        w.gh_of(N)._issue(N).labels.discard(LAB.queue)
        with pytest.raises(InvariantError, match=f"stranded: open issue {N}"):
            w.check_settled()
    finally:
        w.close()
