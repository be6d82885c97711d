"""Reading an issue's orion history: trusted authors only, unreadable blocks set aside."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orion_action.core.issue import Comment, read_log, trusted_set
from orion_action.core.record import (
    ClaimRecord,
    Holder,
    ReleaseAction,
    State,
    Tombstone,
    render_record,
    render_tombstone,
)

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
HOLDER = Holder("h", "b", "m", "ns", 10, 1.0)
BOT, MALLORY = "orion-bot", "mallory"
TRUSTED = trusted_set(BOT, ["Alice"])


def rec(token: str, state: State = State.RUNNING) -> ClaimRecord:
    return ClaimRecord(token=token, state=state, holder=HOLDER, started_at="s", heartbeat_at="h")


def tomb(token: str, counts: bool = True, action: ReleaseAction = ReleaseAction.REQUEUE) -> Tombstone:
    return Tombstone(token=token, action=action, reason="dead", counts_attempt=counts)


def comment(cid: int, block: ClaimRecord | Tombstone | str, author: str = BOT) -> Comment:
    if isinstance(block, ClaimRecord):
        body = render_record(block)
    elif isinstance(block, Tombstone):
        body = render_tombstone(block)
    else:
        body = block
    at = T0 + timedelta(seconds=cid)
    return Comment(cid, author, body, at, at)


def test_trusted_set_is_case_insensitive_and_includes_own_login() -> None:
    assert trusted_set("Orion-Bot", ["ALICE", "bob"]) == {"orion-bot", "alice", "bob"}
    assert trusted_set(None, []) == frozenset()


def test_untrusted_authors_are_ignored_and_reported() -> None:
    comments = [
        comment(1, rec("real")),
        comment(2, rec("forged"), author=MALLORY),
        comment(3, tomb("real"), author=MALLORY),  # a forged release must not release anything
        comment(4, "plain chat by mallory", author=MALLORY),  # not orion-looking: not reported
    ]
    log = read_log(comments, TRUSTED)
    assert [c.record.token for c in log.claims] == ["real"]
    assert log.tombstones == ()
    assert log.untrusted == (2, 3)
    assert [c.record.token for c in log.open_claims()] == ["real"]


def test_configured_trusted_author_counts_whatever_the_case() -> None:
    log = read_log([comment(5, rec("a"), author="alice"), comment(6, tomb("a"), author="ALICE")],
                   TRUSTED)
    assert [c.comment_id for c in log.claims] == [5]
    assert log.released_tokens() == {"a"}
    assert log.open_claims() == ()


def test_unreadable_trusted_blocks_are_reported_not_believed() -> None:
    bad = "<!-- orion-claim v1\n{broken\n-->"
    future = "<!-- orion-claim v7\n{}\n-->"
    log = read_log([comment(1, bad), comment(2, future), comment(3, rec("ok"))], TRUSTED)
    assert [u.comment_id for u in log.unreadable] == [1, 2]
    assert all(u.why for u in log.unreadable)
    assert [c.record.token for c in log.claims] == ["ok"]
    # Defect 10 of the v0.1 audit: an unreadable claim blocks, it is not set aside.
    assert log.blocking_unreadable() == log.unreadable[0]
    assert log.blocking_unreadable(below=1) is None
    assert log.blocking_unreadable(below=3) == log.unreadable[0]


def test_an_unreadable_claim_released_by_hand_no_longer_blocks() -> None:
    bad = "<!-- orion-claim v2\n{}\n-->"
    log = read_log([comment(1, bad), comment(2, tomb("unreadable-1", counts=False))], TRUSTED)
    assert log.blocking_unreadable() is None


def test_a_quoted_block_in_a_trusted_comment_counts_for_nothing() -> None:
    # Defect 8 of the v0.1 audit: the worker's own reply quoting a forged tombstone stopped a run.
    quoted = "Somebody posted this:\n```\n" + render_tombstone(tomb("a")) + "```"
    log = read_log([comment(1, rec("a")), comment(2, quoted)], TRUSTED)
    assert log.tombstones == () and log.unreadable == ()
    assert [c.record.token for c in log.open_claims()] == ["a"]


def test_an_untrusted_release_naming_a_claim_is_noted() -> None:
    log = read_log([comment(1, rec("a")), comment(2, tomb("a"), author=MALLORY)], TRUSTED)
    assert [(r.comment_id, r.author, r.token) for r in log.untrusted_releases] == [(2, MALLORY, "a")]


def test_comments_are_read_in_id_order() -> None:
    log = read_log([comment(9, rec("late")), comment(3, rec("early")), comment(5, tomb("x"))],
                   TRUSTED)
    assert [c.comment_id for c in log.claims] == [3, 9]
    assert log.find("late").comment_id == 9  # type: ignore[union-attr]
    assert log.find("nobody") is None


@pytest.mark.parametrize("state,is_open", [(State.CLAIMING, True), (State.RUNNING, True),
                                           (State.FINISHED, False), (State.INTERRUPTED, False),
                                           (State.LOST, False)])
def test_open_claims_by_state(state: State, is_open: bool) -> None:
    log = read_log([comment(1, rec("a", state))], TRUSTED)
    assert bool(log.open_claims()) is is_open


def test_a_tombstone_closes_the_claim_it_names_only() -> None:
    log = read_log([comment(1, rec("a")), comment(2, rec("b")), comment(3, tomb("a"))], TRUSTED)
    assert [c.record.token for c in log.open_claims()] == ["b"]


ATTEMPTS = [
    ("nothing yet", [], 0),
    ("one dead release", [rec("a"), tomb("a")], 1),
    ("two dead releases", [rec("a"), tomb("a"), rec("b"), tomb("b")], 2),
    ("a hand release does not count", [rec("a"), tomb("a", counts=False)], 0),
    ("unlock of a closed issue does not count",
     [rec("a"), tomb("a", counts=False, action=ReleaseAction.UNLOCK)], 0),
    ("a finish resets the budget", [rec("a"), tomb("a"), rec("b", State.FINISHED)], 0),
    ("releases after the last finish count",
     [rec("a"), tomb("a"), rec("b", State.FINISHED), rec("c"), tomb("c")], 1),
    ("a hand-back spends an attempt", [rec("a"), tomb("a"), rec("b", State.INTERRUPTED)], 2),
    ("a hand-back GitHub caused does not",
     [rec("a"), tomb("a"), rec("b", State.INTERRUPTED).with_changes(counts_attempt=False)], 1),
    ("a late hand-back of a released run counts once",
     [rec("a"), tomb("a"), rec("a", State.INTERRUPTED)], 1),
    ("a released claim that never ran spends nothing",
     [rec("a", State.CLAIMING), tomb("a", counts=False)], 0),
    # A reconciler killed before it took back its duplicate leaves two tombstones for one death.
    ("two tombstones of one death count once", [rec("a"), tomb("a"), tomb("a")], 1),
]


@pytest.mark.parametrize("why,blocks,used", ATTEMPTS, ids=[a[0] for a in ATTEMPTS])
def test_attempts_used(why: str, blocks: list, used: int) -> None:
    log = read_log([comment(i + 1, b) for i, b in enumerate(blocks)], TRUSTED)
    assert log.attempts_used() == used


def test_attempts_used_ignores_forged_tombstones() -> None:
    log = read_log([comment(1, rec("a")), comment(2, tomb("a"), author=MALLORY),
                    comment(3, tomb("a"), author=MALLORY)], TRUSTED)
    assert log.attempts_used() == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([BOT, MALLORY, "alice", "Eve"]),
                          st.sampled_from(["claim", "tomb", "chat", "bad"]),
                          st.sampled_from(["a", "b", "c"])), max_size=12))
def test_only_trusted_blocks_are_believed(items: list[tuple[str, str, str]]) -> None:
    comments = []
    for i, (author, kind, token) in enumerate(items, start=1):
        block = {"claim": rec(token), "tomb": tomb(token), "chat": "hello",
                 "bad": "<!-- orion-release v1\n[]\n-->"}[kind]
        comments.append(comment(i, block, author))
    log = read_log(comments, TRUSTED)
    trusted_ids = {c.id for c in comments if c.author.lower() in TRUSTED}
    seen = {c.comment_id for c in log.claims} | {t.comment_id for t in log.tombstones} | {
        u.comment_id for u in log.unreadable}
    assert seen <= trusted_ids
    assert set(log.untrusted) == {c.id for c in comments
                                  if c.author.lower() not in TRUSTED and "<!-- orion" in c.body}
    assert 0 <= log.attempts_used() <= len(log.tombstones) + len(log.claims)


def test_an_unreadable_release_is_kept_as_a_release_and_blocks_no_claim() -> None:
    """Only an unreadable claim blocks (it may be a live run); an unreadable release is set
    aside as a release (the fence reads one after a claim as one that may name it:
    core/arbitration.py lost_reason)."""
    bad_release = "<!-- orion-release v1\n{broken\n-->"
    log = read_log([comment(1, rec("a")), comment(2, bad_release)], TRUSTED)
    assert [(u.comment_id, u.kind) for u in log.unreadable] == [(2, "orion-release")]
    assert log.blocking_unreadable() is None


def test_the_log_before_a_comment_holds_what_was_posted_before_it() -> None:
    """What a claim in comment 3 follows (ADR 0105): comments 1 and 2, not itself nor later ones."""
    log = read_log([comment(1, rec("a", State.CANCELLED)), comment(2, tomb("z")), comment(3, rec("b")),
                    comment(4, rec("c")), comment(5, tomb("a"))], TRUSTED)
    before = log.before(3)
    assert [c.record.token for c in before.claims] == ["a"]
    assert [t.tombstone.token for t in before.tombstones] == ["z"]
    assert log.before(1).claims == () and log.before(1).tombstones == ()
