"""A person takes a live run's issue over by hand (ADR 0068): seed 849015474 episode 49.

w1 runs issue 1; a person deletes w1's claim comment (the issue's only comment), takes the lock
off and requeues the issue. Nothing on GitHub shows w1's claim any more, so w5 claims the
queued issue and runs, and for a moment two children work it. The promise is that of a forced
release: the old run stops at its first beat (the edit of its deleted comment gets 404). The
model's overlap rule allowed no overlap at all with list lag inside the settle; it now excuses a
run whose claim comment a person deleted and holds it to that beat instead."""

from __future__ import annotations

import pytest

from model import explorer
from model.explorer import Setup
from model.world import InvariantError, World

SETUP = Setup(issues=1, max_lag=0.0, whole_seconds=True, lag_seed="849015474-49", dispatch=True)
# The shrunk trace `simulate.py --seed 849015474 --no-random` printed before this ADR; r0 steps
# twice more since a pass with no issue locked looks for stranded issues (two requests, ADR 0072),
# twice more since it looks at the queued issues changed since (a listing and a record, ADR 0085),
# and once more for its listing of the issues changed since (ADR 0088).
TRACE: list[explorer.Act] = [
    ("worker", "m1", 1, True), ("fail", "w0.claim", "late", 3), ("burst", "w0.claim", 4),
    ("reconciler", "m1"), ("burst", "r0", 5), *[("step", "r0")] * 9, ("drain-next", "w0"),
    ("burst", "w1.claim", 7),
    ("worker", "m2", 1, False), ("step", "w2.claim"), ("worker", "m2", 1, False), ("worker", "m1", 1, False),
    ("race", 1), ("person", "delete", 1, 336), ("person", "unlock", 1), ("pickup", "m1"), ("crash", "w3"),
    ("step", "w4.claim"), ("person", "requeue", 1), ("race", 4), ("burst", "w5.claim", 7),
]
# Then both holders beat (w1 first): w1's beat finds its claim comment gone and stops.
BEATS: list[explorer.Act] = [*[("step", "w1.beat")] * 4, ("time", 10.0), *[("step", "w1.beat")] * 4,
                             *[("step", "w5.beat")] * 8]


def _played(acts: list[explorer.Act]) -> World:
    world = SETUP.world()
    for act in acts:
        explorer.apply(world, act)
        world.check()
    return world


def test_the_takeover_trace_breaks_nothing() -> None:
    explorer.run_acts(SETUP, [*TRACE, *BEATS])


def test_the_old_run_overlaps_the_new_one_until_its_first_beat_and_stops_there() -> None:
    world = _played(TRACE)
    try:
        w1, w5 = world.workers["w1"], world.workers["w5"]
        assert world.child_alive(w1) and world.child_alive(w5), "the trace no longer reaches the overlap"
        assert world.taken_over(w1) and not world.taken_over(w5)
        for act in BEATS:
            explorer.apply(world, act)
            world.check()
        assert w1.holding is not None and w1.holding.lost == "the claim comment or the issue was deleted"
        assert w1.clean_beat is None and not world.child_alive(w1)
        assert world.child_alive(w5) and w5.clean_beat is not None
    finally:
        world.close()


def test_an_old_run_that_beats_on_after_the_deletion_breaks_the_bound() -> None:
    """The excuse is bounded: a beat that found the claim still its own, sent after the
    deletion had landed, is a break (what the mutation "a beat whose claim comment was deleted
    carries on" makes)."""
    world = _played(TRACE)
    try:
        w1 = world.workers["w1"]
        assert w1.claim is not None
        deleted = world.deleted_by_person[(1, w1.claim.comment_id)]
        w1.clean_beat = deleted + 2.0
        with pytest.raises(InvariantError, match="after a person deleted its claim comment"):
            world.check()
    finally:
        world.close()


def test_without_the_deletion_the_overlap_is_still_a_break() -> None:
    """Only the deletion excuses: the same two live runs with w1's claim comment in place (as
    if nobody had deleted it) break the overlap rule at once."""
    world = _played(TRACE)
    try:
        world.deleted_by_person.clear()
        with pytest.raises(InvariantError, match="two runs work issue 1 at once"):
            world.check()
    finally:
        world.close()
