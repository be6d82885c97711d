"""The next pass's judgement of a fate beside a person's queueing (ADR 0094,
`core.stale_add.fates_added_over_a_queueing`): one named row per case of the module's table."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import NamedTuple

import pytest

from orion_action.config import Labels
from orion_action.core.cancelled import LabelEvent
from orion_action.core.stale_add import fates_added_over_a_queueing

LAB = Labels()
ORION = {"orion-bot"}
T0 = datetime(2026, 12, 5, 12, 0, tzinfo=timezone.utc)


def record(*steps: tuple[str, str, str]) -> list[LabelEvent]:
    """(who, "+" or "-", label) in GitHub's order; every event in the same second, so that only
    the order can decide (GitHub's stamps are whole seconds)."""
    return [LabelEvent(label, sign == "+", who, T0) for who, sign, label in steps]


QUEUED = ("mallory", "+", LAB.queue)
UNQUEUED = ("orion-bot", "-", LAB.queue)
LOCKED = ("orion-bot", "+", LAB.working)
UNLOCKED = ("orion-bot", "-", LAB.working)
READY = ("orion-bot", "+", LAB.ready)
READY_OFF = ("mallory", "-", LAB.ready)
RUN = (QUEUED, UNQUEUED, LOCKED, READY, UNLOCKED)  # a run that finished: ready on, lock off last


class Row(NamedTuple):
    name: str
    events: tuple[tuple[str, str, str], ...]
    on: frozenset[str]
    stale: tuple[str, ...]


BOTH = frozenset({LAB.queue, LAB.ready})
ROWS = [
    Row("stale-fate: orion's ready after the person's requeue and the lock's removal",
        (*RUN, READY_OFF, QUEUED, READY), BOTH, (LAB.ready,)),
    Row("stale-fate: a failed planned before the requeue",
        (*RUN, READY_OFF, QUEUED, ("orion-bot", "+", LAB.failed)), frozenset({LAB.queue, LAB.failed}),
        (LAB.failed,)),
    Row("stale-fate: orion's login in another case", (*RUN, READY_OFF, QUEUED, ("Orion-Bot", "+", LAB.ready)),
        BOTH, (LAB.ready,)),
    Row("stale-fate: a deleted account's queueing is a person's",
        (*RUN, READY_OFF, ("", "+", LAB.queue), READY), BOTH, (LAB.ready,)),
    Row("stale-fate: orion's fate on an issue never locked", (QUEUED, READY), BOTH, (LAB.ready,)),
    Row("no-queueing: the record shows no queue label on", (*RUN, READY_OFF, READY), BOTH, ()),
    Row("no-queueing: a person took the queue label off last (the record lags the labels)",
        (*RUN, READY_OFF, QUEUED, ("mallory", "-", LAB.queue), READY), BOTH, ()),
    Row("no-queueing: no event of the queue label at all", (LOCKED, READY, UNLOCKED), BOTH, ()),
    Row("orion-queueing: orion added the queue label last (a hand-back)",
        (*RUN, READY_OFF, ("orion-bot", "+", LAB.queue), READY), BOTH, ()),
    Row("lock-on: the record lags the lock's removal", (QUEUED, UNQUEUED, LOCKED, READY, QUEUED), BOTH, ()),
    Row("lock-on: the lock added last, orion's ready after the queueing", (QUEUED, LOCKED, READY), BOTH, ()),
    Row("fate-first: the person queued a finished issue", (*RUN, QUEUED), BOTH, ()),
    Row("under-the-lock: the person queued mid-run, the run ended ready",
        (QUEUED, UNQUEUED, LOCKED, QUEUED, READY, UNLOCKED), BOTH, ()),
    Row("persons-fate: a person added ready after queueing",
        (*RUN, READY_OFF, QUEUED, ("mallory", "+", LAB.ready)), BOTH, ()),
    Row("the record lags the fate the labels show", (*RUN, READY_OFF, QUEUED), BOTH, ()),
    Row("a fate in the record but not on the issue", (*RUN, READY_OFF, QUEUED, READY, READY_OFF),
        frozenset({LAB.queue}), ()),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_row(row: Row) -> None:
    got = fates_added_over_a_queueing(record(*row.events), row.on, LAB, lambda login: login.lower() in ORION)
    assert got == row.stale, row.name
