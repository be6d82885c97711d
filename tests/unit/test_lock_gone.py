"""core/lock_gone.py: what a live holder does that finds its lock gone (ADR 0065), row by row."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from orion_action.config import Labels
from orion_action.core.cancelled import LabelEvent
from orion_action.core.lock_gone import lock_gone

LAB = Labels()
POSTED = datetime(2026, 12, 4, 12, 0, 0, tzinfo=timezone.utc)
ORION, PERSON = "orion-bot", "alice"


def at(s: float) -> datetime:
    return POSTED + timedelta(seconds=s)


def removed(by: str = ORION, s: float = 5) -> LabelEvent:
    return LabelEvent(LAB.working, False, by, at(s))


def decide(events: list[LabelEvent], labels: frozenset[str] = frozenset(), *, other: str | None = None,
           unlisted: bool = False, reads: list[int] | None = None):
    def record() -> list[LabelEvent]:
        if reads is not None:
            reads.append(1)
        return events

    return lock_gone(other_reason=other, labels=labels, unlisted=unlisted, record=record, posted_at=POSTED,
                     is_orion=lambda login: login.lower() == ORION, lab=LAB)


def test_orion_s_stale_removal_is_put_back() -> None:
    d = decide([LabelEvent(LAB.working, True, ORION, at(1)), removed()])
    assert (d.row, d.put_back, d.unqueue) == ("put-back", True, False)


def test_a_person_s_removal_stops_the_run() -> None:
    d = decide([removed(PERSON)])
    assert (d.row, d.put_back) == ("person", False)
    assert PERSON in d.why


def test_a_removal_by_no_named_actor_stops_the_run() -> None:
    assert decide([removed("")]).row == "person"


@pytest.mark.parametrize(("events", "why"), [
    ([], "no event recorded"),
    ([removed(), LabelEvent(LAB.working, True, ORION, at(6))], "the record ends with the lock added"),
    ([removed(s=-3)], "the last removal is older than the claim"),
])
def test_a_record_that_does_not_show_the_removal_stops_the_run(events: list[LabelEvent], why: str) -> None:
    assert decide(events).row == "unrecorded", why


def test_a_removal_in_the_claim_s_own_second_counts() -> None:
    assert decide([removed(s=-0.5)]).put_back  # whole-second stamps


@pytest.mark.parametrize(("kwargs", "row"), [
    ({"other": "the issue was closed"}, "other-reason"),
    ({"labels": frozenset({LAB.cancel})}, "cancelled"),
    ({"unlisted": True}, "unlisted"),
])
def test_rows_that_stop_before_reading_the_record(kwargs: dict, row: str) -> None:
    reads: list[int] = []
    d = decide([removed()], reads=reads, **kwargs)
    assert (d.row, d.put_back, reads) == (row, False, [])


def test_the_other_reason_is_the_reason_given() -> None:
    assert decide([removed()], other="an earlier live claim holds the issue").why.startswith("an earlier")


def test_orion_s_stale_queue_label_comes_off_with_the_put_back() -> None:
    events = [LabelEvent(LAB.queue, True, ORION, at(4)), removed()]
    d = decide(events, frozenset({LAB.queue}))
    assert (d.row, d.put_back, d.unqueue) == ("put-back", True, True)


def test_a_person_s_requeue_during_the_run_stays() -> None:
    events = [LabelEvent(LAB.queue, True, PERSON, at(4)), removed()]
    d = decide(events, frozenset({LAB.queue}))
    assert (d.put_back, d.unqueue) == (True, False)


@pytest.mark.parametrize("events", [
    [removed()],  # the queue label's addition not recorded yet
    [LabelEvent(LAB.queue, True, ORION, at(-10)), removed()],  # only one from before the claim
    [LabelEvent(LAB.queue, True, ORION, at(3)), LabelEvent(LAB.queue, False, ORION, at(4)), removed()],
])
def test_a_queue_label_the_record_does_not_explain_stops_the_run(events: list[LabelEvent]) -> None:
    assert decide(events, frozenset({LAB.queue})).row == "queue-unknown"


def test_labels_compare_case_insensitively() -> None:
    assert decide([LabelEvent(LAB.working.upper(), False, ORION.upper(), at(5))]).put_back


def test_a_removal_stamped_one_whole_second_before_the_claim_counts_and_one_earlier_does_not() -> None:
    """GitHub's stamps have whole seconds (SERVER_TIME_SLACK_S): an event stamped up to 1 s
    before the claim's comment may have happened after it; earlier than that, it did not."""
    assert decide([removed(s=-1)]).row == "put-back"
    assert decide([removed(s=-1.5)]).row == "unrecorded"


def test_a_queue_label_stamped_one_whole_second_before_the_claim_is_explained() -> None:
    on = frozenset({LAB.queue})
    d = decide([LabelEvent(LAB.queue, True, ORION, at(-1)), removed()], on)
    assert (d.row, d.put_back, d.unqueue) == ("put-back", True, True)
    assert decide([LabelEvent(LAB.queue, True, ORION, at(-1.5)), removed()], on).row == "queue-unknown"


@pytest.mark.parametrize(("kwargs", "events", "row"), [
    ({"other": "the issue was closed"}, [removed()], "other-reason"),
    ({"labels": frozenset({LAB.cancel, LAB.queue})}, [removed()], "cancelled"),
    ({"unlisted": True, "labels": frozenset({LAB.queue})}, [removed()], "unlisted"),
    ({"labels": frozenset({LAB.queue})}, [], "unrecorded"),
    ({"labels": frozenset({LAB.queue})}, [removed(PERSON)], "person"),
    ({"labels": frozenset({LAB.queue})}, [removed()], "queue-unknown"),
])
def test_a_run_that_stops_takes_no_label_off(kwargs: dict, events: list[LabelEvent], row: str) -> None:
    """Only the put-back row writes: a stopping run leaves the queue label to its ending."""
    d = decide(events, **kwargs)
    assert (d.row, d.put_back, d.unqueue) == (row, False, False)
