"""Random search with the holders' one-request ending on (ADR 0076): the ending's final record
and outcome label are one GraphQL mutation (the lock off after it), and the explorer may answer
it in part (the edit landed and the addition refused, or the other way round). Off by default
in the model (the pinned replays of test_known_holes.py hold the REST request sequence), so
this file turns it on: a short search in `make test`, a longer one in `make test-slow`.
`ORION_MODEL_GRAPHQL=1 make simulate` runs the long search by hand."""

from __future__ import annotations

import pytest

from model import explorer, world


@pytest.fixture
def one_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(world, "GRAPHQL", True)
    if "partial" not in explorer.KINDS:
        monkeypatch.setattr(explorer, "KINDS", (*explorer.KINDS, "partial", "partial-edit"))


def test_the_fault_kinds_include_the_partial_answer(one_request: None) -> None:
    assert {"partial", "partial-edit"} <= set(explorer.KINDS)
    w = world.World(issues=1)
    try:
        assert all(s.node_ids_known for s in w.servers)
    finally:
        w.close()


@pytest.mark.parametrize("seed", [1, 3])
def test_the_explorer_breaks_nothing_new_with_the_one_request_ending(one_request: None, seed: int) -> None:
    taken, failure = explorer.explore(seed, 40)
    assert failure is None, str(failure)
    assert taken > 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [5, 7, 11])
def test_long_search_with_the_one_request_ending(one_request: None, seed: int) -> None:
    taken, failure = explorer.explore(seed, 250, shrink_failure=True)
    assert failure is None, str(failure)
    assert taken >= 250 * 75, taken
