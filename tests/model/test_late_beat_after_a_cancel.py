"""A signalled run's ending, and a beat that lands after it (ADR 0069): seed 41 episode 127.

w1 (on m1's clone) wins issue 3 and runs. A SIGTERM reaches its wrapper (a cancelled Actions
job): by default that ends the run as `cancelled`, with no requeue (DESIGN, "Cancel"). Its
ending finds a beat still in flight, writes the final record, reads it back and, since a beat
may still land, posts its end marker (a holder tombstone saying `cancelled`). The beat then
lands and turns the claim record back into `running`, exactly what the end marker is for. w1
dies before its label move; a pass reads the marker and only takes the lock off. The issue is
left with no label, as a cancel leaves it. The model's settle check read the claim record
(`running`), not the end marker, and called the issue stranded. It now takes the run's end from
the marker, as every reader does (core/plan.py `_as_ended`)."""

from __future__ import annotations

import json
import re

import pytest

from model import explorer
from model.explorer import Setup
from model.world import LAB, InvariantError, World
from orion_action.core.record import HOLDER_END, ReleaseAction, State

SETUP = Setup(issues=3, max_lag=4.0, whole_seconds=True, clones=True, lag_seed="41-127", skew=0.0,
              pauses=False, guardians_die=False, dispatch=True, repos=1, halts=True)
# The shrunk trace `simulate.py --seed 41 --no-random --episodes 130` printed before this ADR,
# with one more beat step (the first beat reads GitHub's record of the cancel label, ADR 0093).
TRACE: list[explorer.Act] = [
    ("worker", "m2", None, False), ("worker", "m1-clone", 3, False), ("burst", "w1.claim", 5), ("race", 3),
    ("burst", "w1.beat", 7), *[("step", "w1.beat")] * 3, ("signal", "w1"), ("step", "w1.end"), ("time", 1.0),
    ("burst", "w1.end", 6), ("step", "w1.beat"),
]
N = 3


def _settled() -> World:
    world = SETUP.world()
    for act in TRACE:
        explorer.apply(world, act)
        world.check()
    world.quiesce()
    return world


def test_the_trace_breaks_nothing() -> None:
    explorer.run_acts(SETUP, TRACE)


def test_the_late_beat_reverts_the_record_and_the_end_marker_says_cancelled() -> None:
    """The trace still reaches its shape: a `running` claim record, a holder end marker saying
    `cancelled`, and no label at all once a pass has taken the lock off."""
    world = _settled()
    try:
        log = world.issue_log(N)
        (claim,) = log.claims
        assert claim.record.state is State.RUNNING, "the late beat no longer lands after the final write"
        (marker,) = [t.tombstone for t in log.tombstones if t.tombstone.token == claim.record.token]
        assert marker.by == HOLDER_END and marker.action is ReleaseAction.CANCELLED
        assert World.ended_as(log, claim) is State.CANCELLED
        assert world.gh_of(N).issue(N).labels & {LAB.queue, LAB.working, LAB.ready, LAB.failed} == set()
        world.check_settled()
    finally:
        world.close()


def _rewrite_marker(world: World, change: str | None) -> None:
    """Turn the end marker into another action (or delete it), behind the world's back (no
    person's act is recorded, so nothing excuses the labels)."""
    server = world.gh_of(N)
    (comment,) = [c for c in server.comments(N) if '"by":"holder"' in c.body]
    if change is None:
        server.delete(comment.id)
        return
    found = re.search(r"\{.*\}", comment.body)
    assert found is not None
    data = json.loads(found.group(0))
    data["action"] = change
    server.edit(comment.id, comment.body.replace(found.group(0), json.dumps(data, separators=(",", ":"))))


@pytest.mark.parametrize("change", [ReleaseAction.INTERRUPTED.value, ReleaseAction.FINISHED.value, None],
                         ids=["interrupted", "finished", "no-marker"])
def test_a_run_that_did_not_end_cancelled_and_left_no_label_is_still_stranded(change: str | None) -> None:
    """The excuse is the cancel only: the same labels (none) after a run whose end marker says
    it was interrupted (handed back to the queue) or finished (ready), or after a run with no
    end marker and a `running` record, are a strand."""
    world = _settled()
    try:
        _rewrite_marker(world, change)
        with pytest.raises(InvariantError, match="stranded: open issue 3"):
            world.check_settled()
    finally:
        world.close()
