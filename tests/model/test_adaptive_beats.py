"""The model with adaptive beats on (ADR 0045): holders stretch a 2 s base beat as soon as two
claims are live, so every record promises several times the judges' own stale_after. No
invariant may break beyond the open holes KNOWN_HOLES names, the new one included: a live
holder's lease never outlasts the promise its record states (world.py, _check_promises).
`ORION_MODEL_ADAPTIVE=1 make simulate` runs the long search."""

from __future__ import annotations

import pytest

from model import explorer, world
from model.world import ADAPTIVE_CONFIG, MACHINES, World


@pytest.fixture
def adaptive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world, "ADAPTIVE", True)


def test_two_live_claims_stretch_the_beat_and_the_records_say_so(adaptive: None) -> None:
    w = World(issues=2)
    a = w.spawn_worker(MACHINES[0], w.issue_numbers[0])
    b = w.spawn_worker(MACHINES[1], w.issue_numbers[1])
    for i in range(300):
        actors = w.runnable()
        if not actors or all(x.holding and x.holding.claim.record.beats >= 3 for x in (a, b)):
            break
        w.step(actors[i % len(actors)])
        w.check()
    for x in (a, b):
        assert x.holding is not None
        record = x.holding.claim.record
        assert record.interval > 4 * ADAPTIVE_CONFIG.heartbeat_interval
        assert record.stale_after > 4 * ADAPTIVE_CONFIG.stale_after
        assert x.holding.beat_interval() == record.interval


@pytest.mark.parametrize("seed", [1, 3])
def test_the_explorer_breaks_nothing_new_with_adaptive_beats(adaptive: None, seed: int) -> None:
    taken, failure = explorer.explore(seed, 40)
    assert failure is None, str(failure)
    assert taken > 0
