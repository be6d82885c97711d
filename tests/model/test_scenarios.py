"""The directed scenarios (tests/model/scenarios.py) break no invariant on the code as it is:
each is a situation random search reaches too rarely, kept so that its mutation is killed on
every run (bench/model_mutations.py, ADR 0047)."""

from __future__ import annotations

import pytest

from model import world
from model.scenarios import NEEDS_THE_QUEUE_LOOK, SCENARIOS, STALE_LOCK_REMOVALS
from model.world import InvariantError


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_directed_scenario_holds(name: str) -> None:
    SCENARIOS[name]()


@pytest.mark.parametrize("name", sorted(STALE_LOCK_REMOVALS))
def test_strict_mode_counts_a_lock_put_back(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The world's strict mode (the mutation bench's, ADR 0065) breaks where orion takes a live
    run's lock off, though the run puts it back: so it can tell the mutations that make more
    such removals from the code as it is."""
    monkeypatch.setattr(world, "STRICT_LOCKS", True)
    with pytest.raises(InvariantError, match="strict mode"):
        SCENARIOS[name]()


@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - STALE_LOCK_REMOVALS))
def test_every_other_scenario_holds_in_strict_mode(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """STALE_LOCK_REMOVALS is complete: the mutation bench skips those scenarios in strict mode
    and runs every other one, so a scenario whose code as it is takes a live run's lock off, left
    out of the list, would credit every strict-mode mutation with a kill it did not make."""
    monkeypatch.setattr(world, "STRICT_LOCKS", True)
    SCENARIOS[name]()


@pytest.mark.parametrize("name", sorted(NEEDS_THE_QUEUE_LOOK))
def test_without_the_queue_look_a_stale_requeue_stays(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the pass's look at the queued issues (the mutation bench's mode for the rules it
    mends, ADR 0085) these scenarios break: the look is what takes their stale label off."""
    monkeypatch.setattr(world, "QUEUE_LOOK", False)
    with pytest.raises((InvariantError, AssertionError)):
        SCENARIOS[name]()


@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - NEEDS_THE_QUEUE_LOOK))
def test_every_other_scenario_holds_without_the_queue_look(name: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """NEEDS_THE_QUEUE_LOOK is complete: the mutation bench skips those scenarios without the
    look and runs every other one, so one left out would credit every such mutation with a kill."""
    monkeypatch.setattr(world, "QUEUE_LOOK", False)
    SCENARIOS[name]()
