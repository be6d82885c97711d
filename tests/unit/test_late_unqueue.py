"""core.requeue: the rules a pass uses to queue again an issue a released claim's late unqueue
left with no label (ADR 0086): which issues it reads (`requeue_candidates`, `last_requeue`), a
trigger check's refusal (`refused_since`), and GitHub's record (`taken_by_a_late_unqueue`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from test_plan import T0, claim, log, tomb

from orion_action.core.cancelled import LabelEvent
from orion_action.core.issue import Comment, TombstoneEntry
from orion_action.core.record import HOLDER_END, ReleaseAction, State, Tombstone
from orion_action.core.requeue import (
    last_requeue,
    queueing_at_risk,
    refused_since,
    requeue_candidates,
    requeue_never_landed,
    taken_by_a_late_unqueue,
)

ORION = {"orion-bot"}


def test_the_last_event_a_release_back_to_the_queue_makes_a_candidate() -> None:
    recent = {
        7: log(claim(1, "a"), tomb(2, "a")),  # a pass's requeue
        8: log(claim(1, "a"), tomb(2, "a", ReleaseAction.RELEASE)),  # a release by hand
        9: log(claim(1, "a"), tomb(2, "a"), claim(3, "b")),  # claimed again since
        10: log(claim(1, "a"), tomb(2, "a", ReleaseAction.GIVE_UP)),  # failed, not requeued
        11: log(claim(1, "a"), tomb(2, "a", ReleaseAction.UNLOCK)),  # under a cancel
        12: log(claim(1, "a", State.FINISHED, 0)),
        13: log(claim(1, "a"), tomb(2, "a")),
    }
    assert requeue_candidates(recent, listed={13}) == [7, 8]


def test_a_claim_that_gave_up_after_sending_its_unqueue_makes_a_candidate() -> None:
    """ADR 0067's `lost` record with `unqueued`: its removal may have taken the queueing after a
    release that listed no claim took the lock off; one that never sent it took nothing."""
    sent = claim(1, "a", State.LOST, child_pid=None)
    sent = replace(sent, record=sent.record.with_changes(unqueued=True))
    unsent = replace(sent, record=sent.record.with_changes(unqueued=False))
    unknown = replace(sent, record=sent.record.with_changes(unqueued=None))
    given_up = log(sent, tomb(2, "a", ReleaseAction.GIVE_UP))
    recent = {7: log(sent), 8: log(unsent), 9: log(unknown), 10: given_up}
    assert requeue_candidates(recent, listed=()) == [7]
    risk = queueing_at_risk(log(sent))
    assert risk is not None and risk.comment_id == 1 and risk.since == sent.created_at and not risk.released
    assert "gave up" in risk.what


def test_a_release_whose_claim_is_not_listed_puts_the_queueing_at_risk_too() -> None:
    """A claim whose VM paused after its `running` record may be older than the comment listing
    reaches while its release is recent (default seed 85 episode 110): the release alone says
    what the queueing is, and the look counts a removal however late (ADR 0095)."""
    for released in (log(tomb(2, "a")), log(claim(1, "a"), tomb(2, "a"))):
        risk = queueing_at_risk(released)
        assert risk is not None and risk.comment_id == 2 and risk.since == T0 + timedelta(seconds=2)
        assert risk.released  # its own queue label must show in the record (ADR 0098)


def test_a_claim_that_took_nothing_after_the_release_hides_nothing() -> None:
    """Seed 170 episode 131: a stalled `--next` claimer posts after the release and dies while
    `claiming`; a loser that never sent its unqueue is the same. Neither ends the release's story."""
    claiming = claim(3, "c", State.CLAIMING)
    lost = claim(3, "c", State.LOST, child_pid=None)
    lost = replace(lost, record=lost.record.with_changes(unqueued=False))
    won = claim(3, "c", State.RUNNING, child_pid=None)
    for after in (claiming, lost):
        risk = queueing_at_risk(log(claim(1, "a"), tomb(2, "a"), after))
        assert risk is not None and risk.comment_id == 2
        assert last_requeue(log(claim(1, "a"), tomb(2, "a"), after)) is not None
    assert queueing_at_risk(log(claim(1, "a"), tomb(2, "a"), won)) is None  # it won: it unqueued


def test_a_holders_outage_marker_after_the_release_hides_nothing() -> None:
    """Default seed 81 episode 218: a person's forced release of a winner whose unqueue then
    landed; the winner's lease ran out and its outage path appended its marker ("interrupted",
    no attempt) after the release (ADR 0092). The marker is its account, not the issue's newest
    event (`overtaken`): the release stays the event at risk. A marker with nothing before it of
    its claim is the run's own end, and the release it follows no longer is the last event."""
    marker = TombstoneEntry(3, Tombstone("a", ReleaseAction.INTERRUPTED, "r", counts_attempt=False,
                                         by=HOLDER_END), T0 + timedelta(seconds=3))
    released = log(claim(1, "a"), tomb(2, "a", ReleaseAction.RELEASE), marker)
    risk = queueing_at_risk(released)
    assert risk is not None and risk.comment_id == 2
    assert requeue_candidates({7: released}, listed=()) == [7]
    assert queueing_at_risk(log(claim(1, "a"), marker)) is None  # the run's own end


def test_the_last_requeue_is_by_comment_id_not_by_kind() -> None:
    assert last_requeue(log(tomb(3, "a"), claim(2, "a"))) is not None
    assert last_requeue(log(tomb(1, "a"), claim(2, "b"))) is None
    assert last_requeue(log()) is None


def _comment(cid: int, author: str, body: str) -> Comment:
    return Comment(cid, author, body, T0, T0, 7)


@pytest.mark.parametrize(("comment", "refused"), [
    (_comment(5, "orion-bot", "<!-- orion-refused-LE_1 -->\n**orion did not start a run**"), True),
    (_comment(5, "Orion-Bot", "<!-- orion-refused-LE_1 -->\n"), True),
    (_comment(5, "mallory", "<!-- orion-refused-LE_1 -->\n"), False),  # anyone can write the text
    (_comment(2, "orion-bot", "<!-- orion-refused-LE_1 -->\n"), False),  # before the release
    (_comment(3, "orion-bot", "<!-- orion-refused-LE_1 -->\n"), False),  # the release's own id: not after it
    (_comment(5, "orion-bot", "a word about <!-- orion-refused- -->"), False),
])
def test_a_refusal_since_the_release(comment: Comment, refused: bool) -> None:
    assert refused_since([comment], frozenset(ORION), after=3) is refused


RELEASED_AT = T0 + timedelta(seconds=10)


def ev(label: str, added: bool, login: str, at: int) -> LabelEvent:
    return LabelEvent(label, added, login, T0 + timedelta(seconds=at))


# (events, whether they show the released claim's late unqueue, why)
RECORDS = [
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 12)), True,
     "the requeue found the label on (no event); orion took it off after the release"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 9), ev("orion", True, "orion-bot", 10),
      ev("orion", False, "orion-bot", 11)), True, "the requeue added it, the late unqueue took it"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "alice", 12)), False, "a person dequeued it"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "", 12)), False, "a removal by no known actor"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 8)), False,
     "taken off before the release: the release found it off and its addition would show"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 9)), True,
     "whole seconds: one second before the release counts"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 3600)), True,
     "an hour after the release: a claimer whose VM paused sends its unqueue on resume (ADR 0095)"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 12), ev("orion", True, "alice", 13)),
     False, "queued again since"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 12),
      ev("orion-cancel", True, "bob", 13)),
     True, "other labels do not hide the removal (a cancel is asked for separately)"),
    ((ev("ORION", True, "alice", 0), ev("Orion", False, "orion-bot", 12)), True,
     "labels compare case-insensitively"),
    ((), False, "no record"),
]


@pytest.mark.parametrize(("events", "taken", "why"), RECORDS, ids=[r[2] for r in RECORDS])
def test_taken_by_a_late_unqueue(events: tuple[LabelEvent, ...], taken: bool, why: str) -> None:
    found = taken_by_a_late_unqueue(events, "orion", lambda login: login in ORION, RELEASED_AT)
    assert found is taken, why


# (events, whether the release's own queue label never landed, why); the release at T0+10 s
NEVER_LANDED = [
    ((), True, "no event of the label at all"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 5)), True,
     "a claim's unqueue before the release, and no addition since: the release stopped at its tombstone"),
    ((ev("orion", True, "alice", 0), ev("orion", False, "orion-bot", 9)), False,
     "whole seconds: a removal one second before the release may be after it"),
    ((ev("orion", False, "orion-bot", 5), ev("orion", True, "orion-bot", 11)), False,
     "the release's addition landed (then went: another rule's business)"),
    ((ev("orion", False, "orion-bot", 5), ev("orion", True, "orion-bot", 11),
      ev("orion", False, "alice", 12)), False, "a person took it off after the release"),
    ((ev("orion", False, "orion-bot", 5), ev("orion-cancel", True, "bob", 12)), True,
     "other labels do not count (a cancel is asked for separately)"),
]


@pytest.mark.parametrize(("events", "never", "why"), NEVER_LANDED, ids=[r[2] for r in NEVER_LANDED])
def test_requeue_never_landed(events: tuple[LabelEvent, ...], never: bool, why: str) -> None:
    assert requeue_never_landed(events, "orion", RELEASED_AT) is never, why


def test_a_claim_since_the_release_that_may_have_taken_the_queueing_ends_the_risk() -> None:
    """Default seed 147 episode 99: after a release (comment 2), a claim that won and unqueued
    may have taken the queueing, and is the issue's last event; one still `claiming` (read by
    itself: a listing may lag its edits) or a loser whose final record says it took nothing did
    not (seed 170 episode 131: a stalled `--next` claimer posted after the release and died while
    `claiming`), and the release stays at risk. A pass's release of a claim that never ran is no
    return to the queue (seed 173 episode 36)."""
    lost = claim(3, "c", State.LOST, child_pid=None)
    lost_clean = replace(lost, record=lost.record.with_changes(unqueued=False))
    lost_unqueued = replace(lost, record=lost.record.with_changes(unqueued=True))
    for later, at_risk in ((claim(3, "c"), None), (claim(3, "c", State.CANCELLED), None), (lost_unqueued, 3),
                           (claim(3, "c", State.CLAIMING), 2), (lost_clean, 2)):
        risk = queueing_at_risk(log(claim(1, "a"), tomb(2, "a"), later))
        assert (risk.comment_id if risk else None) == at_risk, later.record
    never_ran = log(claim(1, "a", State.CANCELLED), claim(2, "b", State.CLAIMING), tomb(3, "b"))
    assert queueing_at_risk(never_ran) is None
