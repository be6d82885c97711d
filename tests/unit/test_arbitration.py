"""Arbitration: the lowest live claim comment wins; the fence every heartbeat checks."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orion_action.config import Labels
from orion_action.core.arbitration import (
    GITHUB_REQUEST_LIMIT_S,
    SERVER_TIME_SLACK_S,
    blocker,
    ended_before,
    lost_reason,
    may_tidy_lock,
    ran_meanwhile,
    winner,
)
from orion_action.core.issue import ClaimEntry, Comment, IssueLog, read_log
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
TRUSTED = frozenset({"orion-bot"})


def rec(token: str, state: State = State.RUNNING) -> ClaimRecord:
    return ClaimRecord(token=token, state=state, holder=HOLDER, started_at="s", heartbeat_at="h")


def tomb(token: str) -> Tombstone:
    return Tombstone(token=token, action=ReleaseAction.REQUEUE, reason="holder dead",
                     counts_attempt=True, by="reconcile")


def log_of(*items: tuple[int, ClaimRecord | Tombstone]):
    comments = []
    for cid, block in items:
        body = render_record(block) if isinstance(block, ClaimRecord) else render_tombstone(block)
        at = T0 + timedelta(seconds=cid)
        comments.append(Comment(cid, "orion-bot", body, at, at))
    return read_log(comments, TRUSTED)


def dead(*tokens: str):
    return lambda e: e.record.token in tokens


NOBODY_DEAD = dead()

WINNERS = [
    ("no claims", [], NOBODY_DEAD, None),
    ("one claim", [(5, rec("a"))], NOBODY_DEAD, "a"),
    ("lowest id wins", [(7, rec("b")), (5, rec("a")), (9, rec("c"))], NOBODY_DEAD, "a"),
    ("claiming counts as live", [(5, rec("a", State.CLAIMING)), (6, rec("b"))], NOBODY_DEAD, "a"),
    ("dead lowest is skipped", [(5, rec("a")), (6, rec("b"))], dead("a"), "b"),
    ("all dead", [(5, rec("a")), (6, rec("b"))], dead("a", "b"), None),
    ("finished skipped", [(5, rec("a", State.FINISHED)), (6, rec("b"))], NOBODY_DEAD, "b"),
    ("interrupted skipped", [(5, rec("a", State.INTERRUPTED)), (6, rec("b"))], NOBODY_DEAD, "b"),
    ("lost skipped", [(5, rec("a", State.LOST)), (6, rec("b"))], NOBODY_DEAD, "b"),
    ("tombstoned skipped", [(5, rec("a")), (6, rec("b")), (7, tomb("a"))], NOBODY_DEAD, "b"),
]


@pytest.mark.parametrize("why,items,is_dead,expected", WINNERS, ids=[w[0] for w in WINNERS])
def test_winner(why, items, is_dead, expected) -> None:
    won = winner(log_of(*items), is_dead)
    assert (won.record.token if won else None) == expected


LOST = [
    # (why, items, token, is_open, has_lock, is_dead, expected fragment or None)
    ("holds", [(5, rec("me"))], "me", True, True, NOBODY_DEAD, None),
    ("closed", [(5, rec("me"))], "me", False, True, NOBODY_DEAD, "closed"),
    ("closed wins over the rest", [(5, rec("me"))], "me", False, False, NOBODY_DEAD, "closed"),
    ("lock removed", [(5, rec("me"))], "me", True, False, NOBODY_DEAD, "lock label was removed"),
    ("tombstone names the token", [(5, rec("me")), (8, tomb("me"))], "me", True, True,
     NOBODY_DEAD, "released by reconcile: holder dead"),
    ("a tombstone for another token", [(5, rec("me")), (8, tomb("other"))], "me", True, True,
     NOBODY_DEAD, None),
    ("earlier live claim", [(4, rec("them")), (5, rec("me"))], "me", True, True, NOBODY_DEAD,
     "earlier live claim (comment 4)"),
    ("earlier dead claim", [(4, rec("them")), (5, rec("me"))], "me", True, True, dead("them"),
     None),
    ("earlier finished claim", [(4, rec("them", State.FINISHED)), (5, rec("me"))], "me", True,
     True, NOBODY_DEAD, None),
    ("later live claim", [(5, rec("me")), (6, rec("them"))], "me", True, True, NOBODY_DEAD, None),
    ("own record judged dead still holds", [(5, rec("me")), (6, rec("them"))], "me", True, True,
     dead("me"), None),
    ("comment gone", [(6, rec("them"))], "me", True, True, NOBODY_DEAD, "claim comment is gone"),
    # Found by the model checker: a claimer stalled before arbitrating, released by hand with
    # --force meanwhile, must not win on resuming (a later claimer already runs the issue).
    ("released before it started", [(5, rec("me", State.CLAIMING)), (6, tomb("me")), (7, rec("them"))],
     "me", True, True, NOBODY_DEAD, "released"),
]


@pytest.mark.parametrize("why,items,token,is_open,has_lock,is_dead,expected", LOST,
                         ids=[x[0] for x in LOST])
def test_lost_reason(why, items, token, is_open, has_lock, is_dead, expected) -> None:
    reason = lost_reason(log_of(*items), token, is_open=is_open, has_lock=has_lock,
                         is_dead=is_dead)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and expected in reason


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(State)), st.booleans()), min_size=1, max_size=8),
       st.permutations(range(8)))
def test_every_claimer_agrees_on_one_winner(specs, order) -> None:
    """Whatever order the comments are listed in, every claimer that sees the same comments
    picks the same winner, and at most one of them is not fenced."""
    items = [(i + 1, rec(f"t{i}", state)) for i, (state, _) in enumerate(specs)]
    deads = {f"t{i}" for i, (_, is_dead) in enumerate(specs) if is_dead}
    is_dead = lambda e: e.record.token in deads  # noqa: E731
    shuffled = [items[i] for i in order if i < len(items)]
    won = winner(log_of(*shuffled), is_dead)
    again = winner(log_of(*reversed(shuffled)), is_dead)
    assert (won and won.comment_id) == (again and again.comment_id)
    log = log_of(*items)
    live_open = [c for c in log.open_claims() if c.record.token not in deads]
    holders = [c for c in live_open
               if lost_reason(log, c.record.token, is_open=True, has_lock=True,
                              is_dead=is_dead) is None]
    assert len(holders) <= 1
    if won is not None:
        assert [h.comment_id for h in holders] == [won.comment_id]
        assert isinstance(won, ClaimEntry)


def ran_rec(token: str, state: State, child: int | None = None) -> ClaimRecord:
    return rec(token, state).with_changes(child_pid=child)


def timed_log(*items: tuple[int, ClaimRecord | Tombstone, int]):
    """Comments with an explicit GitHub update time (seconds after T0)."""
    comments = []
    for cid, block, at_s in items:
        body = render_record(block) if isinstance(block, ClaimRecord) else render_tombstone(block)
        created = at_s if isinstance(block, Tombstone) else min(cid, at_s)
        comments.append(Comment(cid, "orion-bot", body, T0 + timedelta(seconds=created),
                                T0 + timedelta(seconds=at_s)))
    return read_log(comments, TRUSTED)


READ_AT = 100  # we read the issue as queued at T0+100 s (GitHub's clock); "me" is comment 10
MEANWHILE = [
    # (why, items as (comment id, block, GitHub time in s), expected comment id or None)
    ("nothing before us", [], None),
    ("an earlier run finished long before we read", [(5, rec("a", State.FINISHED), 50)], None),
    ("an earlier run finished after we read", [(5, rec("a", State.FINISHED), 120)], 5),
    ("an earlier run finished a second before we read", [(5, rec("a", State.FINISHED), 99)], None),
    ("an earlier run finished in the second of our read (whole seconds: not sure)",
     [(5, rec("a", State.FINISHED), 100)], 5),
    ("an earlier run was interrupted after we read", [(5, rec("a", State.INTERRUPTED), 110)], 5),
    ("an earlier run still open", [(5, rec("a", State.RUNNING), 20)], 5),
    ("an earlier open run released before we read", [(5, rec("a", State.RUNNING), 20),
                                                     (7, tomb("a"), 40)], None),
    ("an earlier open run released after we read", [(5, rec("a", State.RUNNING), 20),
                                                    (11, tomb("a"), 140)], 5),
    ("a released run whose late final write came after our read",
     [(5, rec("a", State.INTERRUPTED), 150), (7, tomb("a"), 40)], None),
    ("an earlier pure loser ran nothing", [(5, rec("a", State.LOST), 120)], None),
    ("an earlier run fenced after starting", [(5, ran_rec("a", State.LOST, 77), 120)], 5),
    ("an earlier claimer that never got to run", [(5, rec("a", State.CLAIMING), 120)], None),
    ("a later run is not ours to judge", [(12, rec("z", State.FINISHED), 120)], None),
    ("the first of several", [(3, rec("a", State.FINISHED), 10), (5, rec("b", State.FINISHED), 130)], 5),
]


@pytest.mark.parametrize("why,items,expected", MEANWHILE, ids=[m[0] for m in MEANWHILE])
def test_ran_meanwhile(why, items, expected) -> None:
    log = timed_log(*items, (10, rec("me", State.CLAIMING), 105))
    found = ran_meanwhile(log, "me", T0 + timedelta(seconds=READ_AT))
    assert (found.comment_id if found else None) == expected


def test_ran_meanwhile_without_our_record() -> None:
    assert ran_meanwhile(log_of((5, rec("a", State.FINISHED))), "me", T0) is None


UNREADABLE_CLAIM = "<!-- orion-claim v2\n{}\n-->"


def test_an_unreadable_earlier_claim_blocks_a_later_one() -> None:
    # Defect 10 of the v0.1 audit: a claim this version cannot read let a second run in.
    comments = [Comment(4, "orion-bot", UNREADABLE_CLAIM, T0, T0),
                Comment(5, "orion-bot", render_record(rec("me")), T0, T0)]
    log = read_log(comments, TRUSTED)
    reason = lost_reason(log, "me", is_open=True, has_lock=True, is_dead=NOBODY_DEAD)
    assert reason is not None and "comment 4" in reason and "cannot be read" in reason
    later = read_log([comments[1], Comment(6, "orion-bot", UNREADABLE_CLAIM, T0, T0)], TRUSTED)
    assert lost_reason(later, "me", is_open=True, has_lock=True, is_dead=NOBODY_DEAD) is None


def test_an_unreadable_release_after_our_claim_stops_us() -> None:
    comments = [Comment(5, "orion-bot", render_record(rec("me")), T0, T0),
                Comment(6, "orion-bot", "<!-- orion-release v9\n{}\n-->", T0, T0)]
    reason = lost_reason(read_log(comments, TRUSTED), "me", is_open=True, has_lock=True,
                         is_dead=NOBODY_DEAD)
    assert reason is not None and "cannot read" in reason


# -- may_tidy_lock: a loser takes its lock off again only where nothing can be undone ----------

def _tidy_log(*entries: ClaimEntry) -> IssueLog:
    return IssueLog(tuple(entries), ())


_LAB = Labels()
_LOCK_AND_QUEUE = frozenset({_LAB.working, _LAB.queue})


@pytest.mark.parametrize(
    ("why", "states", "on_issue", "tidy"),
    [
        ("alone, the issue still queued: take the lock off", {2: State.LOST}, _LOCK_AND_QUEUE, True),
        ("alone, the winner's run done (ready)", {1: State.FINISHED, 2: State.LOST},
         frozenset({_LAB.working, _LAB.ready}), True),
        ("alone, failed", {2: State.LOST}, frozenset({_LAB.working, _LAB.failed}), True),
        ("another claim is open: its lock", {1: State.RUNNING, 2: State.LOST}, _LOCK_AND_QUEUE, False),
        ("a later claim won: the same label is its lock", {2: State.LOST, 3: State.FINISHED},
         _LOCK_AND_QUEUE, False),
        ("a later loser does not stop it", {2: State.LOST, 3: State.LOST}, _LOCK_AND_QUEUE, True),
        ("our own give-up not landed yet: the claim is still ours alone", {2: State.CLAIMING},
         _LOCK_AND_QUEUE, True),
        ("no label anyone acts on: a pass decides", {2: State.LOST}, frozenset({_LAB.working}), False),
        ("the lock is already off", {2: State.LOST}, frozenset({_LAB.queue}), False),
    ],
)
def test_may_tidy_lock(why: str, states: dict[int, State], on_issue: frozenset[str], tidy: bool) -> None:
    entries = [ClaimEntry(cid, rec(f"t{cid}", st), T0, T0) for cid, st in states.items()]
    assert may_tidy_lock(_tidy_log(*entries), "t2", 2, on_issue, _LAB) is tidy, why


def test_a_claim_released_before_it_started_never_wins() -> None:
    """Review group 4: a claimer whose own claim was tombstoned during arbitration must not
    start its child, even as the lowest claim."""
    log = log_of((1, rec("a", State.CLAIMING)), (2, tomb("a")))
    assert blocker(log, "a", dead()) == "the claim was released before it started"


def test_ended_before_counts_a_tombstone_at_the_cutoff_second() -> None:
    """Review group 5: GitHub's whole seconds; a tombstone stamped at the cut-off second ended
    the claim before it (the same boundary as the record's own)."""
    log = log_of((1, rec("a")), (5, tomb("a")))
    entry = log.find("a")
    assert entry is not None
    assert ended_before(log, entry, T0 + timedelta(seconds=5))
    assert not ended_before(log, entry, T0 + timedelta(seconds=4))
def test_rivals_before_counts_the_claims_from_the_winner_to_ours() -> None:
    from orion_action.core.arbitration import rivals_before

    log = log_of((3, rec("old", State.FINISHED)), (5, rec("a")), (6, rec("b", State.LOST)), (8, rec("c")),
                 (9, rec("d")))
    first = winner(log, NOBODY_DEAD)
    assert first is not None and first.record.token == "a"
    # An older run before the winner does not count; a loser already marked lost does.
    assert [rivals_before(log, first, mine) for mine in (6, 8, 9)] == [1, 2, 3]
    assert rivals_before(log, None, 9) == 1  # lost to something else: the next issue
    assert rivals_before(log, first, 5) == 1  # never fewer than one


def test_a_write_sent_is_taken_as_landed_within_githubs_request_limit_and_the_stamps_slack() -> None:
    """GitHub ends a request it has not processed within 10 s ("Timeouts" in its REST API
    troubleshooting guide), and its stamps have whole seconds: a claimer waits 11 s for its
    unqueue to land, a holder as long for a label write (services/claiming.py, holding.py)."""
    from orion_action.services.claiming import UNQUEUE_LANDED_S
    from orion_action.services.holding import LABEL_LANDING_MARGIN_S

    assert (GITHUB_REQUEST_LIMIT_S, SERVER_TIME_SLACK_S) == (10.0, 1.0)
    assert UNQUEUE_LANDED_S == LABEL_LANDING_MARGIN_S == 11.0
