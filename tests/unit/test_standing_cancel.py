"""core/cancelled.py standing_cancel: whether a person's cancel still stands against the latest
queueing, from GitHub's record of label events (ADR 0061), as a table of cases."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from orion_action.core.cancelled import (
    LabelEvent,
    cancel_against_a_persons_queueing,
    standing_cancel,
    swept_a_newer_cancel,
    swept_an_uncancelled_queueing,
)

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
ORION = {"orion-bot", "trusted-author"}


def events(*spec: str) -> list[LabelEvent]:
    """`+q:alice` adds the queue label as alice (`+Q`: spelt in capitals), `-c:orion-bot`
    removes the cancel label as orion's login; `-c:` removes it with no actor known."""
    out = []
    for i, s in enumerate(spec):
        sign, label, login = s[0], s[1], s.partition(":")[2]
        name = {"q": "orion", "Q": "ORION", "c": "orion-cancel", "x": "bug"}[label]
        out.append(LabelEvent(name, sign == "+", login, T0 + timedelta(seconds=i)))
    return out


CASES = [
    # (events, whether a cancel stands, why)
    ((), False, "no history"),
    (("+q:alice",), False, "queued, never cancelled"),
    (("+q:alice", "+c:alice"), True, "cancelled while queued, label still on"),
    (("+q:alice", "+c:alice", "-q:orion-bot", "-c:orion-bot"), True, "the sweep carried the cancel out"),
    (("+q:alice", "+c:alice", "-c:orion-bot"), True, "a stale sweep took the cancel off, queue still on"),
    (("+q:alice", "+c:bob", "-c:alice"), False, "a person withdrew the cancel"),
    (("+q:alice", "+c:bob", "-c:trusted-author"), True, "a trusted author is orion: carries it out"),
    (("+q:alice", "+c:bob", "-c:"), True, "a removal by no known actor withdraws nothing"),
    (("+c:alice", "-c:orion-bot", "+q:alice"), False, "cancelled before the latest queueing"),
    (("+q:alice", "+c:alice", "-c:alice", "+q:orion-bot"), False, "requeued by orion after a withdrawal"),
    (("+q:alice", "+c:alice", "-c:orion-bot", "-c:alice", "+c:alice", "-c:orion-bot"), True,
     "cancelled again after a withdrawal, then swept"),
    (("+q:alice", "+c:alice", "-c:alice", "+c:alice"), True, "withdrawn, then cancelled again"),
    (("+q:alice", "+c:alice", "+q:alice"), False, "the queue label added again after the cancel"),
    (("+q:alice", "+x:alice", "-x:orion-bot"), False, "other labels count for nothing"),
]


@pytest.mark.parametrize(("spec", "stands", "why"), CASES, ids=[c[2] for c in CASES])
def test_standing_cancel(spec: tuple[str, ...], stands: bool, why: str) -> None:
    found = standing_cancel(events(*spec), "orion", "orion-cancel", lambda login: login.lower() in ORION)
    assert (found is not None) is stands, why
    if found is not None:
        assert found.added and found.label == "orion-cancel"


def test_labels_compare_case_insensitively() -> None:
    evs = [LabelEvent("ORION", True, "alice", T0), LabelEvent("Orion-Cancel", True, "alice", T0)]
    assert standing_cancel(evs, "orion", "orion-cancel", lambda _: False) == evs[1]


SWEPT = "+q:alice", "+c:alice", "-q:orion-bot", "-c:alice", "+q:alice", "+c:alice", "-c:orion-bot"
AFTER_SWEEP = [
    # (the labels after the sweep's cancel removal, the record, whether the label goes back, why)
    (frozenset({"orion"}), SWEPT, True, "a cancel made after the sweep's read, taken off by it"),
    (frozenset({"orion:working"}), SWEPT, True, "the same, a claim holds the issue: its holder must see it"),
    (frozenset(), ("+q:alice", "+c:alice", "-q:orion-bot", "-c:orion-bot"), False, "the sweep as meant"),
    (frozenset({"orion"}), ("+q:alice", "+c:alice", "-q:orion-bot", "-c:alice", "+q:alice", "-c:orion-bot"),
     False, "a requeue alone stands"),
    (frozenset({"orion", "orion-cancel"}), SWEPT[:-1], False, "the cancel label is still on: nothing to do"),
    (frozenset({"orion"}), (*SWEPT, "-c:alice"), False, "the person withdrew the new cancel"),
]


@pytest.mark.parametrize(("on", "spec", "back", "why"), AFTER_SWEEP, ids=[c[3] for c in AFTER_SWEEP])
def test_swept_a_newer_cancel(on: frozenset[str], spec: tuple[str, ...], back: bool, why: str) -> None:
    found = swept_a_newer_cancel(on, events(*spec), "orion", "orion-cancel", "orion:working",
                                 lambda login: login in ORION)
    assert (found is not None) is back, why


AFTER_QUEUE_REMOVAL = [
    # (the labels after the sweep's queue-label removal, the record, whether it goes back, why)
    (frozenset(),
     ("+q:alice", "+c:alice", "-q:orion-bot", "-c:orion-bot", "-c:alice", "+q:alice", "-q:orion-bot"), True,
     "another sweep carried the cancel out, the person requeued, our removal took it"),
    (frozenset(), ("+q:alice", "+c:alice", "-q:orion-bot"), False, "the sweep as meant"),
    (frozenset({"orion-cancel"}), ("+c:alice", "+q:alice", "-q:orion-bot"), False,
     "queued beside the cancel label: no wish to run (ADR 0053)"),
    (frozenset(), ("+q:alice", "+c:alice", "-c:alice", "+q:alice"), False, "the record lags our removal"),
    (frozenset(), ("+q:alice", "-q:alice"), False, "a person took the queue label off"),
    (frozenset(), ("+q:alice", "-q:orion-bot"), True,
     "a queueing no cancel was ever made against, taken by our removal (the record starts uncancelled)"),
    (frozenset({"orion:working"}), ("+q:alice", "-q:orion-bot"), False, "a claim took it: its lock is on"),
    (frozenset(), ("+q:alice", "+c:bob", "-c:alice", "-q:orion-bot"), False,
     "a cancel was made against this queueing (withdrawn later): the sweep read it"),
    (frozenset({"orion-cancel"}),
     ("+c:alice", "-q:orion-bot", "-c:alice", "+q:alice", "+c:alice", "-c:orion-bot", "-q:orion-bot",
      "+q:alice", "+c:orion-bot", "-q:orion-bot"), True,
     "orion's stale put-back of a cancel landed after the person queued again: it cancels nothing "
     "(default seed 48 episode 37, ADR 0088)"),
    (frozenset({"orion-cancel"}),
     ("+q:alice", "+c:alice", "-q:orion-bot", "-c:orion-bot", "+q:alice", "+c:alice", "-c:orion-bot",
      "+c:orion-bot", "-q:orion-bot"), False,
     "orion put back the person's newer cancel (ADR 0073): the person's cancel is in the record"),
]


@pytest.mark.parametrize(("on", "spec", "back", "why"), AFTER_QUEUE_REMOVAL,
                         ids=[c[3] for c in AFTER_QUEUE_REMOVAL])
def test_swept_an_uncancelled_queueing(on: frozenset[str], spec: tuple[str, ...], back: bool,
                                       why: str) -> None:
    found = swept_an_uncancelled_queueing(on, events(*spec), "orion", "orion-cancel", "orion:working",
                                          lambda login: login in ORION)
    assert (found is not None) is back, why


# (events, whether the cancel stands with orion's own queue and cancel additions set aside, why): the rule
# of every claim, of the pass's look at the queued issues, of a pass's late requeue and of a
# holder's put-back (ADR 0085; ADRs 0079 and 0083 read it too).
PERSONS_QUEUEING = [
    (("+q:alice", "-q:orion-bot", "+c:bob", "-c:orion-bot", "+q:orion-bot"), True,
     "a cancel carried out, then orion's late requeue"),
    (("+q:alice", "-q:orion-bot", "+c:bob", "-c:alice", "+q:orion-bot"), False,
     "the person withdrew that cancel"),
    (("+q:alice", "-q:orion-bot", "+q:orion-bot"), False, "no cancel: the requeue stands"),
    (("+q:alice", "-q:orion-bot", "+c:bob", "-c:orion-bot", "+q:carol"), False,
     "a person queued it again after the cancel"),
    (("+q:alice", "+c:bob", "-q:orion-bot", "-c:orion-bot", "+q:orion-bot", "+q:trusted-author"), True,
     "a trusted author is orion: its queueing is no person's either"),
    (("+q:alice", "+c:bob", "+q:orion-bot"), True, "orion's addition beside the cancel label"),
    (("+q:alice", "+q:orion-bot", "+c:bob"), True, "a cancel after orion's requeue: the person's queueing"),
    (("+q:alice", "-q:orion-bot", "+c:bob", "-c:orion-bot", "+q:"), False,
     "a queueing by no known actor (a deleted account) is not orion's: it queues again"),
    (("+c:bob", "-c:orion-bot", "+q:orion-bot"), True,
     "no person ever queued it: a cancel stands against orion's queue label alone"),
    (("+Q:orion-bot", "+c:bob"), True, "labels compare case-insensitively"),
    (("+q:alice", "+c:alice", "-c:orion-bot", "+q:alice", "+c:orion-bot"), False,
     "orion's put-back of a cancel, landing after the person queued again, cancels nothing (ADR 0088)"),
    (("+q:alice", "+c:alice", "-c:orion-bot", "+c:orion-bot"), True,
     "orion's put-back of the person's cancel: the person's cancel stands"),
    (("+q:alice", "+c:orion-bot"), True,
     "a cancel by orion's login that puts nothing back counts: a person may share the login"),
    (("+q:alice", "+c:alice", "-c:alice", "+c:orion-bot"), True,
     "an addition after a person's removal puts nothing back: it counts"),
]


@pytest.mark.parametrize(("spec", "stands", "why"), PERSONS_QUEUEING, ids=[c[2] for c in PERSONS_QUEUEING])
def test_cancel_against_a_persons_queueing(spec: tuple[str, ...], stands: bool, why: str) -> None:
    found = cancel_against_a_persons_queueing(events(*spec), "orion", "orion-cancel",
                                              lambda login: login in ORION)
    assert (found is not None) is stands, why
