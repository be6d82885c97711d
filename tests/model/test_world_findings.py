"""Replays of the holes ADR 0047's world switches found, still open: each is one explorer
episode (seed, episode) with the switches it was found with, run with no hole tolerated.
Marked xfail(strict=True) naming the hole, as test_known_holes.py does: green while the hole
is open, red the day a fix makes the replay pass (then delete the case and its KNOWN_HOLES
entry). Switches are pinned rather than drawn (`explorer.hostile_for`), so that a switch added
later does not steer the episode away from its hole."""

from __future__ import annotations

import random

import pytest

from model import explorer
from model.world import KNOWN_HOLES, InvariantError

# (seed, episode, the switches it was found with, the hole it shows)
CASES = [
    (17, 22, {"pauses": True}, "paused-vm"),
    (19, 122, {"pauses": True}, "lagging-running-edit"),
]


@pytest.mark.parametrize(
    ("seed", "episode", "switches", "hole"),
    [pytest.param(*c, marks=pytest.mark.xfail(raises=InvariantError, strict=True, reason=KNOWN_HOLES[c[3]]),
                  id=f"{c[3]}-{c[0]}-{c[1]}") for c in CASES],
)
def test_world_finding_replays(seed: int, episode: int, switches: dict[str, object], hole: str) -> None:
    rng = random.Random(f"{seed}-{episode}")
    setup = explorer.setup_for(rng, seed, episode)
    for name, value in switches.items():
        setattr(setup, name, value)
    try:
        explorer.episode(rng, 80, [], [], setup)
    except InvariantError as exc:
        assert exc.hole == hole, f"the replay broke another way than recorded: {exc}"
        raise
