"""core/stale_add.py stale_fates: a pass's fate label that landed after someone else moved the
labels is taken off again (ADR 0073), as a table of cases."""

from __future__ import annotations

import pytest

from orion_action.config import Config
from orion_action.core.stale_add import asks_the_record, stale_fates

LAB = Config(source="test").labels

CASES = [
    # (added, the labels in GitHub's answer, what is taken off again, why)
    ((LAB.ready,), {LAB.ready, LAB.working}, (), "locked: the pass's own move goes on"),
    ((LAB.ready,), {LAB.ready}, (), "one fate: a duplicate of the holder's own move"),
    ((LAB.ready,), {LAB.ready, LAB.queue}, (LAB.ready,), "two fates: a person requeued after the move"),
    ((LAB.queue,), {LAB.queue, LAB.ready}, (LAB.queue,), "two fates: the holder finished meanwhile"),
    ((LAB.failed,), {LAB.failed, LAB.queue, LAB.working}, (), "the lock on: not this rule's"),
    ((), {LAB.queue, LAB.ready}, (), "nothing added"),
]


@pytest.mark.parametrize(("added", "after", "off", "why"), CASES, ids=[c[3] for c in CASES])
def test_stale_fates(added: tuple[str, ...], after: set[str], off: tuple[str, ...], why: str) -> None:
    assert stale_fates(added, frozenset(after), LAB) == off, why


ASKS = [
    # (added, the labels in GitHub's answer, whether the record decides, why)
    ((LAB.queue,), {LAB.queue}, True, "requeued-unlocked: a cancel may have been carried out meanwhile"),
    ((LAB.queue,), {LAB.queue, LAB.cancel}, True, "the cancel label still on: the record says the same"),
    ((LAB.queue,), {LAB.queue, LAB.working}, False, "locked: the pass's own move goes on"),
    ((LAB.queue,), {LAB.queue, LAB.ready}, False, "two fates: stale_fates takes it off"),
    ((LAB.ready,), {LAB.ready}, False, "one fate that is no requeue"),
    ((LAB.failed,), {LAB.failed}, False, "given up: no requeue to undo"),
]


@pytest.mark.parametrize(("added", "after", "asks", "why"), ASKS, ids=[c[3] for c in ASKS])
def test_asks_the_record(added: tuple[str, ...], after: set[str], asks: bool, why: str) -> None:
    assert asks_the_record(added, frozenset(after), LAB) is asks, why
