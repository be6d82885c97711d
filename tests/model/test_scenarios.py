"""The directed scenarios (tests/model/scenarios.py) break no invariant on the code as it is:
each is a situation random search reaches too rarely, kept so that its mutation is killed on
every run (bench/model_mutations.py, ADR 0047)."""

from __future__ import annotations

import pytest

from model import world
from model.scenarios import (
    NEEDS_THE_HOLDER_CANCEL_READ,
    NEEDS_THE_NEXT_PASS_LOOKS,
    NEEDS_THE_STRAND_LOOK,
    NEEDS_THE_UNQUEUE_LOOK,
    SCENARIOS,
    STALE_LOCK_REMOVALS,
)
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


# The worlds without a look (the mutation bench's modes for the rules those looks mend, ADRs
# 0085, 0086, 0088, 0072, 0093 and 0096), each with the scenarios only that look repairs.
WITHOUT_A_LOOK = {"NEXT_PASS_LOOKS": NEEDS_THE_NEXT_PASS_LOOKS, "STRAND_LOOK": NEEDS_THE_STRAND_LOOK,
                  "HOLDER_CANCEL_READ": NEEDS_THE_HOLDER_CANCEL_READ, "UNQUEUE_LOOK": NEEDS_THE_UNQUEUE_LOOK}


@pytest.mark.parametrize(("switch", "name"), [(switch, name) for switch, needs in WITHOUT_A_LOOK.items()
                                              for name in sorted(needs)])
def test_without_the_look_it_breaks(switch: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the look these scenarios break: the look is what repairs their labels."""
    monkeypatch.setattr(world, switch, False)
    with pytest.raises((InvariantError, AssertionError)):
        SCENARIOS[name]()


@pytest.mark.parametrize(("switch", "name"), [(switch, name) for switch, needs in WITHOUT_A_LOOK.items()
                                              for name in sorted(set(SCENARIOS) - needs)])
def test_every_other_scenario_holds_without_the_look(switch: str, name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each NEEDS_ list is complete: the mutation bench skips those scenarios without the look
    and runs every other one, so one left out would credit every such mutation with a kill."""
    monkeypatch.setattr(world, switch, False)
    SCENARIOS[name]()
