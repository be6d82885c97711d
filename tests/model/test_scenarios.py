"""The directed scenarios (tests/model/scenarios.py) break no invariant on the code as it is:
each is a situation random search reaches too rarely, kept so that its mutation is killed on
every run (bench/model_mutations.py, ADR 0047)."""

from __future__ import annotations

import pytest

from model import world
from model.scenarios import NEEDS_THE_NEXT_PASS_LOOKS, NEEDS_THE_STRAND_LOOK, SCENARIOS, STALE_LOCK_REMOVALS
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


@pytest.mark.parametrize("name", sorted(NEEDS_THE_NEXT_PASS_LOOKS))
def test_without_the_next_pass_looks_it_breaks(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the next pass's looks (the mutation bench's mode for the rules they mend, ADRs
    0085 and 0086) these scenarios break: the looks are what repair their labels."""
    monkeypatch.setattr(world, "NEXT_PASS_LOOKS", False)
    with pytest.raises((InvariantError, AssertionError)):
        SCENARIOS[name]()


@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - NEEDS_THE_NEXT_PASS_LOOKS))
def test_every_other_scenario_holds_without_the_next_pass_looks(name: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """NEEDS_THE_NEXT_PASS_LOOKS is complete: the mutation bench skips those scenarios without the
    looks and runs every other one, so one left out would credit every such mutation with a kill."""
    monkeypatch.setattr(world, "NEXT_PASS_LOOKS", False)
    SCENARIOS[name]()


@pytest.mark.parametrize("name", sorted(NEEDS_THE_STRAND_LOOK))
def test_without_the_strand_look_it_breaks(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world, "STRAND_LOOK", False)
    with pytest.raises((InvariantError, AssertionError)):
        SCENARIOS[name]()


@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - NEEDS_THE_STRAND_LOOK))
def test_every_other_scenario_holds_without_the_strand_look(name: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """NEEDS_THE_STRAND_LOOK is complete (as NEEDS_THE_NEXT_PASS_LOOKS is)."""
    monkeypatch.setattr(world, "STRAND_LOOK", False)
    SCENARIOS[name]()
