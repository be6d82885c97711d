"""core.issue: the attempt count (IssueLog.attempts_used, ADR 0012 and 0019) and the label
description lookup behind the pause switch."""

from __future__ import annotations

from datetime import datetime, timezone

from orion_action.core.issue import ClaimEntry, Issue, IssueLog, TombstoneEntry
from orion_action.core.record import HOLDER_END, ClaimRecord, Holder, ReleaseAction, State, Tombstone

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
HOLDER = Holder("h", "b", "m", "ns", 1, 0.0)


def run(cid: int, token: str, state: State, counts: bool = True) -> ClaimEntry:
    record = ClaimRecord(token, state, HOLDER, "s", "h", child_pid=9, counts_attempt=counts)
    return ClaimEntry(cid, record, T0, T0)


def release(cid: int, token: str, counts: bool = True, by: str = "reconcile") -> TombstoneEntry:
    action = ReleaseAction.INTERRUPTED if by == HOLDER_END else ReleaseAction.REQUEUE
    return TombstoneEntry(cid, Tombstone(token, action, "r", counts, by), T0)


def used(*entries: ClaimEntry | TombstoneEntry) -> int:
    return IssueLog(tuple(e for e in entries if isinstance(e, ClaimEntry)),
                    tuple(e for e in entries if isinstance(e, TombstoneEntry))).attempts_used()


def test_a_hand_back_in_the_first_comment_counts() -> None:
    assert used(run(1, "a", State.INTERRUPTED)) == 1
    assert used(run(1, "a", State.RUNNING), release(2, "a")) == 1


def test_only_attempts_since_the_last_finished_run_count() -> None:
    history = [run(1, "a", State.INTERRUPTED), run(2, "b", State.FINISHED), run(3, "c", State.INTERRUPTED),
               run(4, "d", State.FINISHED), run(5, "e", State.INTERRUPTED)]
    assert used(*history) == 1  # after the newest finished run (comment 4), not the oldest


def test_a_hand_back_that_does_not_count_is_excused() -> None:
    assert used(run(1, "a", State.INTERRUPTED, counts=False)) == 0
    # a pass released it as dead (counted), then its own record excused it (ADR 0019)
    assert used(run(1, "a", State.INTERRUPTED, counts=False), release(2, "a")) == 0
    # a lost record is no hand-back: its release still counts
    assert used(run(1, "a", State.LOST, counts=False), release(2, "a")) == 1


def test_only_the_holders_own_end_marker_excuses() -> None:
    ran = run(1, "a", State.RUNNING)
    assert used(ran, release(2, "a"), release(3, "a", counts=False, by=HOLDER_END)) == 0
    # a release by anyone else that does not count excuses nothing the other counted
    assert used(ran, release(2, "a"), release(3, "a", counts=False)) == 1
    # the holder's own marker that counts excuses nothing
    assert used(ran, release(2, "a"), release(3, "a", counts=True, by=HOLDER_END)) == 1


def test_label_description() -> None:
    described = (("orion", "paused: deploy"), ("bug", ""))
    issue = Issue(1, True, frozenset(), 0, T0, T0, label_descriptions=described)
    assert issue.label_description("orion") == "paused: deploy"
    assert issue.label_description("bug") == ""
    assert issue.label_description("other") is None
    assert not issue.is_pull_request  # read without the field: an issue, not a pull request
