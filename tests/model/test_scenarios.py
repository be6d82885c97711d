"""The directed scenarios (tests/model/scenarios.py) break no invariant on the code as it is:
each is a situation random search reaches too rarely, kept so that its mutation is killed on
every run (bench/model_mutations.py, ADR 0047)."""

from __future__ import annotations

import pytest

from model.scenarios import SCENARIOS


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_directed_scenario_holds(name: str) -> None:
    SCENARIOS[name]()
