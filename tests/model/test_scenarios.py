"""The directed scenarios (tests/model/scenarios.py) break no invariant on the code as it is:
each is a situation random search reaches too rarely, kept so that its mutation is killed on
every run (bench/model_mutations.py, ADR 0047)."""

from __future__ import annotations

import pytest

from model.scenarios import OPEN_SCENARIOS, SCENARIOS
from model.world import KNOWN_HOLES, InvariantError


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_directed_scenario_holds(name: str) -> None:
    SCENARIOS[name]()


@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=pytest.mark.xfail(raises=InvariantError, strict=True, reason=KNOWN_HOLES[hole]))
     for name, (_, hole) in sorted(OPEN_SCENARIOS.items())],
)
def test_open_hole_scenario_breaks_as_recorded(name: str) -> None:
    """A scenario of an open hole breaks, and the world attributes the break to that hole."""
    scenario, hole = OPEN_SCENARIOS[name]
    try:
        scenario()
    except InvariantError as exc:
        assert exc.hole == hole, f"{name} broke another way than recorded: {exc}"
        raise
