"""The next pass's judgement of a fate beside a queueing (ADRs 0094, 0099, 0102 and 0103,
`core.stale_add.fates_added_over_a_queueing`, `requeue_over_a_fate`, `queued_under_the_lock` and
`decided_by_the_run`), and a claimer's of a queueing after a cancelled run (ADR 0105,
`queued_after_a_cancel`): one named row per case of the module's tables."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import NamedTuple

import pytest

from orion_action.config import Labels
from orion_action.core.cancelled import LabelEvent
from orion_action.core.plan import RunEnd
from orion_action.core.stale_add import (
    decided_by_the_run,
    fates_added_over_a_queueing,
    queued_after_a_cancel,
    queued_under_the_lock,
    requeue_over_a_fate,
)

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
    off: tuple[tuple[str, str], ...]  # (label, row) of each fate that comes off


BOTH = frozenset({LAB.queue, LAB.ready})
ROWS = [
    Row("stale-fate: orion's ready after the person's requeue and the lock's removal",
        (*RUN, READY_OFF, QUEUED, READY), BOTH, ((LAB.ready, "stale-fate"),)),
    Row("stale-fate: a failed planned before the requeue",
        (*RUN, READY_OFF, QUEUED, ("orion-bot", "+", LAB.failed)), frozenset({LAB.queue, LAB.failed}),
        ((LAB.failed, "stale-fate"),)),
    Row("stale-fate: orion's login in another case", (*RUN, READY_OFF, QUEUED, ("Orion-Bot", "+", LAB.ready)),
        BOTH, ((LAB.ready, "stale-fate"),)),
    Row("stale-fate: a deleted account's queueing is a person's",
        (*RUN, READY_OFF, ("", "+", LAB.queue), READY), BOTH, ((LAB.ready, "stale-fate"),)),
    Row("stale-fate: orion's fate on an issue never locked", (QUEUED, READY), BOTH,
        ((LAB.ready, "stale-fate"),)),
    Row("no-queueing: the record shows no queue label on", (*RUN, READY_OFF, READY), BOTH, ()),
    Row("no-queueing: a person took the queue label off last (the record lags the labels)",
        (*RUN, READY_OFF, QUEUED, ("mallory", "-", LAB.queue), READY), BOTH, ()),
    Row("no-queueing: no event of the queue label at all", (LOCKED, READY, UNLOCKED), BOTH, ()),
    Row("orion-queueing: a hand-back under the lock, and a fate under the lock after it",
        (QUEUED, UNQUEUED, LOCKED, ("orion-bot", "+", LAB.queue), READY, UNLOCKED), BOTH, ()),
    Row("stale-fate: a pass's completion after another pass's requeue took the lock off",
        (QUEUED, UNQUEUED, LOCKED, ("orion-bot", "+", LAB.queue), UNLOCKED, READY), BOTH,
        ((LAB.ready, "stale-fate"),)),
    Row("stale-fate: orion's requeue, then a person's unlock, then orion's fate",
        (QUEUED, UNQUEUED, LOCKED, ("orion-bot", "+", LAB.queue), ("mallory", "-", LAB.working), READY), BOTH,
        ((LAB.ready, "stale-fate"),)),
    Row("lock-on: the record lags the lock's removal", (QUEUED, UNQUEUED, LOCKED, READY, QUEUED), BOTH, ()),
    Row("lock-on: the lock added last, orion's ready after the queueing", (QUEUED, LOCKED, READY), BOTH, ()),
    Row("fate-first: the person queued a finished issue", (*RUN, QUEUED), BOTH, ()),
    Row("queued-mid-run: the person queued mid-run, the run ended ready",
        (QUEUED, UNQUEUED, LOCKED, QUEUED, READY, UNLOCKED), BOTH, ((LAB.ready, "queued-mid-run"),)),
    Row("queued-mid-run: a failed run", (QUEUED, UNQUEUED, LOCKED, QUEUED, ("orion-bot", "+", LAB.failed),
        UNLOCKED), frozenset({LAB.queue, LAB.failed}), ((LAB.failed, "queued-mid-run"),)),
    Row("queued-mid-run: queued while a stale write had the lock off, which the run put back (the "
        "model's default seed 207 episode 53)",
        (QUEUED, UNQUEUED, LOCKED, UNLOCKED, QUEUED, LOCKED, READY, UNLOCKED), BOTH,
        ((LAB.ready, "queued-mid-run"),)),
    Row("queued-mid-run: the run's fate landed first, the lock still on, then the person queued (GraphQL "
        "seed 72 episode 43)",
        (QUEUED, UNQUEUED, LOCKED, READY, QUEUED, UNLOCKED), BOTH, ((LAB.ready, "queued-mid-run"),)),
    Row("persons-fate: a person added ready mid-run, after queueing",
        (QUEUED, UNQUEUED, LOCKED, QUEUED, ("mallory", "+", LAB.ready), UNLOCKED), BOTH, ()),
    Row("persons-fate: a person added ready after queueing",
        (*RUN, READY_OFF, QUEUED, ("mallory", "+", LAB.ready)), BOTH, ()),
    Row("the record lags the fate the labels show", (*RUN, READY_OFF, QUEUED), BOTH, ()),
    Row("a fate in the record but not on the issue", (*RUN, READY_OFF, QUEUED, READY, READY_OFF),
        frozenset({LAB.queue}), ()),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_row(row: Row) -> None:
    got = fates_added_over_a_queueing(record(*row.events), row.on, LAB, lambda login: login.lower() in ORION)
    assert [(f.label, f.row) for f in got] == list(row.off), row.name


# orion's requeue beside a run's fate (ADR 0099, `requeue_over_a_fate`)
REQUEUED = ("orion-bot", "+", LAB.queue)
FAILED = ("orion-bot", "+", LAB.failed)
ENDED_FAILED = (QUEUED, UNQUEUED, LOCKED, FAILED, UNLOCKED)  # a run that ended failed, the lock off last
QUEUE_AND_FAILED = frozenset({LAB.queue, LAB.failed})


class RequeueRow(NamedTuple):
    name: str
    events: tuple[tuple[str, str, str], ...]
    on: frozenset[str]
    stale: bool


REQUEUE_ROWS = [
    RequeueRow("stale-requeue: a pass's requeue lands after the run ended failed (default seed 15 episode 9)",
               (*ENDED_FAILED, REQUEUED), QUEUE_AND_FAILED, True),
    RequeueRow("stale-requeue: beside ready", (*RUN, REQUEUED), BOTH, True),
    RequeueRow("stale-requeue: orion's login in another case", (*ENDED_FAILED, ("Orion-Bot", "+", LAB.queue)),
               QUEUE_AND_FAILED, True),
    RequeueRow("not-orions: a person queued the failed issue", (*ENDED_FAILED, QUEUED), QUEUE_AND_FAILED,
               False),
    RequeueRow("not-orions: a deleted account queued it", (*ENDED_FAILED, ("", "+", LAB.queue)),
               QUEUE_AND_FAILED, False),
    RequeueRow("not-orions: the queue label's last event is a removal (the record lags)",
               (*ENDED_FAILED, REQUEUED, ("orion-bot", "-", LAB.queue)), QUEUE_AND_FAILED, False),
    RequeueRow("under-the-lock: a hand-back adds the queue label before the lock comes off",
               (QUEUED, UNQUEUED, LOCKED, FAILED, REQUEUED, UNLOCKED), QUEUE_AND_FAILED, False),
    RequeueRow("under-the-lock: the record shows the lock on", (QUEUED, UNQUEUED, LOCKED, FAILED, REQUEUED),
               QUEUE_AND_FAILED, False),
    RequeueRow("under-the-lock: never locked", (QUEUED, UNQUEUED, FAILED, REQUEUED), QUEUE_AND_FAILED, False),
    RequeueRow("fate-after: the fate came after the lock's removal (the first table decides)",
               (QUEUED, UNQUEUED, LOCKED, UNLOCKED, REQUEUED, FAILED), QUEUE_AND_FAILED, False),
    RequeueRow("fate-after: the fate in the record is not on the issue", (*ENDED_FAILED, REQUEUED),
               frozenset({LAB.queue}), False),
]


@pytest.mark.parametrize("row", REQUEUE_ROWS, ids=[r.name for r in REQUEUE_ROWS])
def test_requeue_row(row: RequeueRow) -> None:
    got = requeue_over_a_fate(record(*row.events), row.on, LAB, lambda login: login.lower() in ORION)
    assert got is row.stale, row.name


# orion's queue label added under the lock (ADRs 0102 and 0103, `queued_under_the_lock`).
class UnderTheLockRow(NamedTuple):
    name: str
    events: tuple[tuple[str, str, str], ...]
    under: bool


NEXT_RUN = (REQUEUED, UNQUEUED, LOCKED)  # a run since: the queue label taken, the lock on
UNDER_THE_LOCK_ROWS = [
    UnderTheLockRow("a pass's requeue under the next run's lock, then that run's ready (scenario "
                    "pass_requeue_lands_under_the_next_runs_lock)",
                    (*ENDED_FAILED, *NEXT_RUN, REQUEUED, READY, UNLOCKED), True),
    UnderTheLockRow("a pass's ready under the next run's lock, then that run's hand-back",
                    (*RUN, READY_OFF, *NEXT_RUN, READY, REQUEUED, UNLOCKED), True),
    UnderTheLockRow("a hand-back, or a stale requeue before a signal's cancel ending (no fate)",
                    (QUEUED, UNQUEUED, LOCKED, REQUEUED, UNLOCKED), True),
    UnderTheLockRow("orion's login in another case", (QUEUED, UNQUEUED, LOCKED, ("Orion-Bot", "+", LAB.queue),
                    UNLOCKED), True),
    UnderTheLockRow("the queue label came after the lock's removal (requeue_over_a_fate decides)",
                    (*ENDED_FAILED, REQUEUED), False),
    UnderTheLockRow("before the lock's addition", (REQUEUED, LOCKED, UNLOCKED), False),
    UnderTheLockRow("under an earlier span of the lock, not its last",
                    (QUEUED, UNQUEUED, LOCKED, REQUEUED, UNLOCKED, LOCKED, UNLOCKED), False),
    UnderTheLockRow("a person's queueing under the lock (fates_added_over_a_queueing decides)",
                    (QUEUED, UNQUEUED, LOCKED, QUEUED, READY, UNLOCKED), False),
    UnderTheLockRow("a deleted account's queueing under the lock", (QUEUED, UNQUEUED, LOCKED,
                    ("", "+", LAB.queue), UNLOCKED), False),
    UnderTheLockRow("the queue label's last event is a removal (the record lags)",
                    (QUEUED, UNQUEUED, LOCKED, REQUEUED, ("orion-bot", "-", LAB.queue), UNLOCKED), False),
    UnderTheLockRow("the record shows the lock on", (QUEUED, UNQUEUED, LOCKED, REQUEUED, READY), False),
    UnderTheLockRow("the record shows the lock on again, after it",
                    (QUEUED, UNQUEUED, LOCKED, REQUEUED, READY, UNLOCKED, LOCKED), False),
    UnderTheLockRow("never locked", (REQUEUED, READY), False),
    UnderTheLockRow("no queue label in the record", (LOCKED, READY, UNLOCKED), False),
    UnderTheLockRow("the record does not reach the lock's addition", (REQUEUED, READY, UNLOCKED), False),
]


@pytest.mark.parametrize("row", UNDER_THE_LOCK_ROWS, ids=[r.name for r in UNDER_THE_LOCK_ROWS])
def test_under_the_lock_row(row: UnderTheLockRow) -> None:
    got = queued_under_the_lock(record(*row.events), LAB, lambda login: login.lower() in ORION)
    assert got is row.under, row.name


# ...and what the last run's record takes off (ADRs 0102 and 0103, `decided_by_the_run`): a row each.
ALL = frozenset({LAB.queue, LAB.ready, LAB.failed})
RUN_ROWS = [
    ("handed-back: the run went back to the queue, the fate comes off", RunEnd(LAB.queue, False), BOTH,
     (LAB.ready,), "handed-back"),
    ("handed-back: both fates come off", RunEnd(LAB.queue, False), ALL, (LAB.ready, LAB.failed),
     "handed-back"),
    ("handed-back: no fate, nothing comes off (a hand-back of its own)", RunEnd(LAB.queue, False),
     frozenset({LAB.queue}), (), "handed-back"),
    ("run-ended: the run ended ready, the queue label comes off", RunEnd(LAB.ready, False), BOTH,
     (LAB.queue,), "run-ended"),
    ("run-ended: failed stands, queue and ready come off", RunEnd(LAB.failed, False), ALL,
     (LAB.queue, LAB.ready), "run-ended"),
    ("cancelled: the run was cancelled, the queue label comes off", RunEnd(None, True),
     frozenset({LAB.queue}), (LAB.queue,), "cancelled"),
    ("no-word: a cancelled run beside a fate", RunEnd(None, True), BOTH, (), "no-word"),
    ("no-word: the record says nothing (an open claim)", None, BOTH, (), "no-word"),
    ("no-word: the run's fate is not the one on", RunEnd(LAB.failed, False), BOTH, (), "no-word"),
    ("no-word: the run's fate, no fate on", RunEnd(LAB.ready, False), frozenset({LAB.queue}), (), "no-word"),
]


@pytest.mark.parametrize(("name", "end", "on", "remove", "row"), RUN_ROWS, ids=[r[0] for r in RUN_ROWS])
def test_decided_by_the_run(name: str, end: RunEnd | None, on: frozenset[str], remove: tuple[str, ...],
                            row: str) -> None:
    assert decided_by_the_run(end, on, LAB) == (remove, row)


# A look at a queue label found after a cancelled run (ADRs 0104 and 0105, `queued_after_a_cancel`):
# the run was claimed at T0; its claimer unqueued a second later at the earliest (the settle).
def at(seconds: float, who: str, sign: str, label: str = LAB.queue) -> LabelEvent:
    return LabelEvent(label, sign == "+", who, T0 + timedelta(seconds=seconds))


TAKEN = (at(-5, "mallory", "+"), at(1, "orion-bot", "-"))  # the queueing the cancelled run took
AFTER_A_CANCEL_ROWS = [
    ("persons-queueing: a person queued the issue after the run", (*TAKEN, at(9, "mallory", "+")),
     "persons-queueing"),
    ("persons-queueing: a person queued it, then a claim gave up and a pass put it back",
     (*TAKEN, at(9, "mallory", "+"), at(12, "orion-bot", "-"), at(30, "orion-bot", "+")), "persons-queueing"),
    ("persons-queueing: a person queued the running issue (ADR 0099)", (*TAKEN, at(4, "mallory", "+")),
     "persons-queueing"),
    ("orions-requeue: only orion added it since the run's claim", (*TAKEN, at(9, "orion-bot", "+")),
     "orions-requeue"),
    ("orions-requeue: orion's login in another case", (*TAKEN, at(9, "Orion-Bot", "+")), "orions-requeue"),
    ("orions-requeue: the cancel label's events are passed over",
     (*TAKEN, at(9, "orion-bot", "+"), at(10, "mallory", "-", LAB.cancel)), "orions-requeue"),
    ("not-in-the-record: a person's addition in the claim's own second was the one the run took",
     (at(0, "mallory", "+"), at(1, "orion-bot", "-")), "not-in-the-record"),
    ("not-in-the-record: the record ends at the run's unqueue", TAKEN, "not-in-the-record"),
    ("not-in-the-record: no queue event at all", (), "not-in-the-record"),
    ("not-in-the-record: a person's addition the record shows before the run's unqueue",
     (at(0, "mallory", "+"),), "not-in-the-record"),
    ("orions-requeue: a deleted account's addition is no person's (fail closed)", (*TAKEN, at(9, "", "+")),
     "orions-requeue"),
    ("orions-requeue: every stamp in the claim's second, orion's after the run's unqueue",
     (at(0, "mallory", "+"), at(0, "orion-bot", "-"), at(0, "orion-bot", "+")), "orions-requeue"),
    ("orions-requeue: a removal before the claim is not the run's unqueue",
     (at(-9, "alice", "+"), at(-3, "orion-bot", "-"), at(-1, "mallory", "+"), at(1, "orion-bot", "-"),
      at(9, "orion-bot", "+")), "orions-requeue"),
    ("persons-queueing: every stamp in the claim's second, the person's after the run's unqueue",
     (at(0, "mallory", "+"), at(0, "orion-bot", "-"), at(0, "alice", "+")), "persons-queueing"),
]


@pytest.mark.parametrize(("name", "events", "row"), AFTER_A_CANCEL_ROWS,
                         ids=[r[0] for r in AFTER_A_CANCEL_ROWS])
def test_queued_after_a_cancel(name: str, events: tuple[LabelEvent, ...], row: str) -> None:
    assert queued_after_a_cancel(T0, events, LAB, lambda login: login.lower() in ORION) == row
