"""Holes ADR 0047's world switches found. Each is the shrunk trace of its explorer episode
(`explorer.run_acts`), replayed exactly, because a random episode's witness is lost as soon as
the product's request sequence changes (it did when ADR 0048 and 0049 landed). An open hole's
trace goes in test_known_holes.py's ACT_CASES, marked xfail(strict=True) naming it: green while
the hole is open, red the day a fix makes the trace pass (then it moves here, to CLOSED, and its
KNOWN_HOLES entry goes). A closed hole's trace must break nothing."""

from __future__ import annotations

import pytest

from model import explorer
from model.explorer import Setup

# Seed 19 episode 122, with VMs that pause: lagging-running-edit. A winner's `running` edit
# still lagged in listings when it died at once, and a claimer on its machine read its claim as
# never run and dead, and ran the queueing again. Closed by ADR 0048: that claimer's unqueue
# finds the queue label already taken, and it gives up.
CLOSED = [
    (
        Setup(
            issues=3,
            max_lag=1.0,
            whole_seconds=True,
            clones=False,
            lag_seed="19-122",
            skew=0.0,
            pauses=True,
            guardians_die=False,
            dispatch=False,
        ),
        [
            ("worker", "m1", 2, False),
            ("worker", "m2", None, False),
            ("worker", "m2", 1, False),
            ("worker", "m2", 3, True),
            ("worker", "m2", 3, False),
            ("step", "w4.claim"),
            ("race", 4),
            ("step", "w4.claim"),
            ("race", 1),
            ("step", "w4.claim"),
            ("crash", "w4"),
            ("step", "w3.claim"),
            ("step", "w3.claim"),
            ("step", "w3.claim"),
        ],
        "lagging-running-edit",
    ),
    # Seed 17 episode 22, with VMs that pause: paused-vm. m1's VM paused right after w3 won
    # issue 2 and stayed paused 65 s, past stale_after, its boot clock frozen; a pass released
    # w3's claim, and on resume w3's ending counted its label-write bound on that frozen clock
    # and added `failed` beside the pass's queue label. Closed by ADR 0055: the bound is also
    # taken on GitHub's clock, from the last beat's stamp.
    (
        Setup(
            issues=3,
            max_lag=4.0,
            whole_seconds=True,
            clones=False,
            lag_seed="17-22",
            skew=0.0,
            pauses=True,
            guardians_die=False,
            dispatch=False,
        ),
        [
            ("worker", "m2", 3, False),
            ("burst", "w0.claim", 2),
            ("reconciler", "m1"),
            ("worker", "m2", 3, False),
            ("burst", "w1.claim", 6),
            ("reconciler", "m1"),
            ("worker", "m2", 3, False),
            ("worker", "m1", 2, False),
            ("race", 4),
            ("race", 2),
            ("step", "w3.claim"),
            ("step", "w3.claim"),
            ("pause", "m1"),
            ("reconciler", "m1"),
            ("reconciler", "m1"),
            ("reconciler", "m1"),
            ("time", 65.0),
            ("pause", "m1"),
            ("exit", "w3", 1),
            ("step", "w3.end"),
            ("burst", "r4", 10),
            ("burst", "w3.end", 4),
        ],
        "paused-vm",
    ),
    # Seed 20 episode 210, with a snapshot clone: stale-pass-unlock through a retry. A pass's
    # lock removal landed but its answer was lost; a drain on the clone won the requeued issue,
    # and the client's retry took its lock off. A pass's label move is one try (ADR 0054).
    (
        Setup(
            issues=1,
            max_lag=1.0,
            whole_seconds=True,
            clones=True,
            lag_seed="20-210",
            skew=0.0,
            pauses=False,
            guardians_die=False,
            dispatch=False,
        ),
        [
            ("worker", "m1", 1, False), ("step", "w0.claim"), ("step", "w0.claim"),
            ("fail", "w0.claim", "limited", 2), *[("step", "w0.claim")] * 3,
            ("worker", "m1", 1, False), ("worker", "m2", 1, False), ("step", "w0.claim"),
            ("step", "w0.claim"), ("fail", "w0.claim", "late", 1), ("race", 3), ("reconciler", "m1"),
            ("worker", "m1-clone", 1, False), ("land", 6), ("reconciler", "m1"), *[("step", "r1")] * 6,
            ("fail", "r1", "lost", 2), ("worker", "m2", 1, True), ("step", "r1"),
            ("worker", "m1-clone", 1, True), ("burst", "w5.claim", 8), ("step", "w5.claim"),
            ("step", "w5.claim"), ("step", "r1"),
        ],
        "stale-pass-unlock (a retried lock removal)",
    ),
]


@pytest.mark.parametrize(("setup", "acts", "hole"), CLOSED, ids=[c[2] for c in CLOSED])
def test_closed_world_finding(setup: Setup, acts: list[explorer.Act], hole: str) -> None:
    explorer.run_acts(setup, acts)
