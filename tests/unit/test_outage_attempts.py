"""GitHub's failures spend no retry budget (ADR 0019): what `IssueLog.attempts_used` counts
when a holder's own account of an outage meets a reconciler's presumption that it died, and
what a pass plans for a claim that GitHub cut short before it ran."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from orion_action.config import Labels
from orion_action.core.issue import Comment, read_log, trusted_set
from orion_action.core.liveness import Liveness, Verdict
from orion_action.core.plan import Action, Fate, RunEnd, fate, plan_issue, run_end
from orion_action.core.record import (
    HOLDER_END,
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
TRUSTED = trusted_set(BOT, [])


def rec(token: str, state: State = State.RUNNING, counts: bool = True, pid: int | None = 77) -> ClaimRecord:
    return ClaimRecord(
        token=token, state=state, holder=HOLDER, started_at="s", heartbeat_at="h",
        child_pid=pid, counts_attempt=counts,
    )


def outage(token: str) -> ClaimRecord:
    """The holder's account: interrupted by an outage, no attempt spent."""
    return rec(token, State.INTERRUPTED, counts=False)


def dead(token: str, counts: bool = True, action: ReleaseAction = ReleaseAction.REQUEUE) -> Tombstone:
    """A reconcile pass's release of a claim it presumed dead."""
    return Tombstone(token=token, action=action, reason="no heartbeat", counts_attempt=counts)


def by_hand(token: str) -> Tombstone:
    """A person's release (`release --force`)."""
    return Tombstone(token=token, action=ReleaseAction.RELEASE, reason="by hand", by="release")


def end(token: str, action: ReleaseAction = ReleaseAction.INTERRUPTED, counts: bool = False) -> Tombstone:
    """A holder's own end marker."""
    return Tombstone(token=token, action=action, reason="r", counts_attempt=counts, by=HOLDER_END)


def comment(cid: int, block: ClaimRecord | Tombstone, author: str = BOT) -> Comment:
    body = render_record(block) if isinstance(block, ClaimRecord) else render_tombstone(block)
    at = T0 + timedelta(seconds=cid)
    return Comment(cid, author, body, at, at)


def used(*blocks: ClaimRecord | Tombstone | tuple[ClaimRecord | Tombstone, str]) -> int:
    comments = []
    for i, b in enumerate(blocks):
        block, author = b if isinstance(b, tuple) else (b, BOT)
        comments.append(comment(i + 1, block, author))
    return read_log(comments, TRUSTED).attempts_used()


# Each row: the issue's comments in id order (a claim's record shows its final edit), and the
# attempts spent. The claim comment comes before its tombstone, as on GitHub; a record edited
# after the tombstone keeps its lower id.
ROWS = [
    ("a crash still counts: dead, released", [rec("a"), dead("a")], 1),
    ("the outage recorded before any pass", [outage("a")], 0),
    ("the holder's account beats the pass's presumption", [outage("a"), dead("a")], 0),
    ("the account excuses only its own claim", [outage("a"), dead("a"), rec("b"), dead("b")], 1),
    ("an end marker excuses like the record",
     [rec("a"), dead("a"), end("a")], 0),
    ("an end marker that counts excuses nothing",
     [rec("a"), dead("a"), end("a", counts=True)], 1),
    ("a hand-back that counts is not excused by the pass", [rec("a", State.INTERRUPTED), dead("a")], 1),
    ("a lost record (the write landed before the pass) is not an account",
     [rec("a", State.LOST), dead("a")], 1),
    ("two outages in a row spend nothing",
     [outage("a"), dead("a"), outage("b"), dead("b", action=ReleaseAction.GIVE_UP)], 0),
    ("an outage among crashes",
     [rec("a"), dead("a"), outage("b"), dead("b"), rec("c"), dead("c")], 2),
    ("a finish still resets the budget", [rec("a"), dead("a"), rec("b", State.FINISHED), outage("c")], 0),
    ("a claim cut short by a 5xx never ran: nothing to count",
     [rec("a", State.LOST, pid=None)], 0),
    ("a cut-short claim released by a pass spends nothing",
     [rec("a", pid=None), dead("a", counts=False)], 0),
]


@pytest.mark.parametrize("why,blocks,spent", ROWS, ids=[r[0] for r in ROWS])
def test_attempts_used_after_an_outage(why: str, blocks: list, spent: int) -> None:
    assert used(*blocks) == spent


def test_an_untrusted_account_excuses_nothing() -> None:
    assert used(rec("a"), dead("a"), (end("a"), MALLORY)) == 1


def test_an_untrusted_interrupted_record_is_not_the_holders_account() -> None:
    # A forged record with the same token is set aside: the trusted one (running) stands.
    assert used(rec("a"), (outage("a"), MALLORY), dead("a")) == 1


DEAD = Verdict(Liveness.DEAD, "no heartbeat for 700s (stale after 600s)")


@pytest.mark.parametrize("state", [State.CLAIMING, State.RUNNING])
def test_a_claim_cut_short_by_github_is_requeued_without_spending(state: State) -> None:
    """The claimer's writes failed (a 5xx) and so did its "lost" note: the record still says
    claiming or running, with no child pid. A pass requeues it and counts nothing."""
    log = read_log([comment(1, rec("a", state, pid=None))], TRUSTED)
    plan = plan_issue(1, True, frozenset({"orion-working"}), log, {"a": DEAD}, Labels(), max_attempts=1)
    assert plan.action is Action.REQUEUE and not plan.counts_attempt
    assert plan.add_labels == ("orion",)


def test_a_crash_after_the_child_started_counts() -> None:
    log = read_log([comment(1, rec("a"))], TRUSTED)
    plan = plan_issue(1, True, frozenset({"orion-working"}), log, {"a": DEAD}, Labels(), max_attempts=3)
    assert plan.action is Action.REQUEUE and plan.counts_attempt


def _log(*blocks: ClaimRecord | Tombstone):
    return read_log([comment(cid, b) for cid, b in enumerate(blocks, 1)], TRUSTED)


# A holder's outage marker decides the issue's fate only while nothing followed its run: a
# release of its claim, or a later claim that ran, came before it (ADR 0092). Nor does a pass's
# release posted after a later claim that ran (ADR 0102). The records of
# "a" read `running` here: a late write undid its outage record, so only the marker says how
# it ended (`interrupted`, STOPPED); as no event, the release or the next run decides.
MARKER_ROWS = [
    ("the marker alone decides: interrupted", [rec("a"), end("a")], Fate.STOPPED, "a"),
    ("a release of its claim came first: the release decides", [rec("a"), dead("a"), end("a")],
     Fate.RELEASED, "a"),
    ("a release after the marker is newer anyway", [rec("a"), end("a"), dead("a")], Fate.RELEASED, "a"),
    ("a later claim that ran came first: that run decides",
     [rec("a"), dead("a"), rec("b", State.FINISHED), end("a")], Fate.FINISHED_FAILED, "b"),
    ("a later claim that never ran does not overtake it",
     [rec("a"), rec("b", State.LOST, pid=None), end("a")], Fate.STOPPED, "a"),
    ("another claim's release before it does not overtake it",
     [rec("a"), rec("b", State.LOST, pid=None), dead("b"), end("a")], Fate.STOPPED, "a"),
    ("a pass's release after a later run was planned before it: that run decides (ADR 0102)",
     [rec("a"), rec("b", State.FINISHED), dead("a")], Fate.FINISHED_FAILED, "b"),
    ("a person's release after a later run still decides",
     [rec("a"), rec("b", State.FINISHED), by_hand("a")], Fate.RELEASED, "a"),
    ("a pass's release after a later claim that never ran still decides",
     [rec("a"), rec("b", State.LOST, pid=None), dead("a")], Fate.RELEASED, "a"),
    ("its own earlier copy decides as it would",
     [rec("a"), end("a"), end("a")], Fate.STOPPED, "a"),
]


@pytest.mark.parametrize(("why", "blocks", "expected", "holder"), MARKER_ROWS,
                         ids=[r[0] for r in MARKER_ROWS])
def test_an_outage_marker_decides_only_while_nothing_followed_its_run(
        why: str, blocks: list, expected: Fate, holder: str) -> None:
    logged = _log(*blocks)
    decided = fate(frozenset({Labels().working}), logged, {}, Labels(), 3)
    assert decided.fate is expected
    assert decided.holder is not None and decided.holder.record.token == holder


LAB = Labels()
# What the last run's end does to an unlocked issue's labels, read from its record (`run_end`,
# ADRs 0102 and 0103), or None: the record has no word.
ENDED_ROWS = [
    ("a run that finished with no exit code recorded: failed",
     [rec("a"), dead("a"), rec("b", State.FINISHED)], RunEnd(LAB.failed, False)),
    ("a run handed back by its outage marker", [rec("a"), end("a")], RunEnd(LAB.queue, False)),
    ("a run released back to the queue", [rec("a"), dead("a")], RunEnd(LAB.queue, False)),
    ("a run interrupted on its last attempt: failed",
     [rec("a"), dead("a"), rec("b"), dead("b"), rec("c", State.INTERRUPTED)], RunEnd(LAB.failed, False)),
    ("a run given up", [rec("a"), dead("a", action=ReleaseAction.GIVE_UP)], RunEnd(LAB.failed, False)),
    ("a cancelled run: no label, the queue label off", [rec("a", State.CANCELLED)], RunEnd(None, True)),
    ("a cancelled run, a pass's stale release of an earlier run after it",
     [rec("a"), dead("a"), rec("b", State.CANCELLED), dead("a")], RunEnd(None, True)),
    ("an open claim no release names: the listing lags its final record", [rec("a")], None),
    ("no claim at all", [], None),
]


@pytest.mark.parametrize(("why", "blocks", "expected"), ENDED_ROWS, ids=[r[0] for r in ENDED_ROWS])
def test_what_the_last_runs_end_does(why: str, blocks: list, expected: RunEnd | None) -> None:
    got = run_end(_log(*blocks), LAB, 3)
    assert (got._replace(claimed_at=None) if got is not None else None) == expected


@pytest.mark.parametrize(("why", "blocks", "claimed"), [
    ("a cancelled run: its own claim", [rec("a"), dead("a"), rec("b", State.CANCELLED)], 3),
    ("a released run: the claim the release names", [rec("a"), rec("b", State.LOST, pid=None), dead("a")], 1),
    ("a cancelled run's end marker: its claim", [rec("a"), end("a", ReleaseAction.CANCELLED)], 1),
])
def test_the_end_says_when_its_run_was_claimed(why: str, blocks: list, claimed: int) -> None:
    """A claimer compares GitHub's record of the queue label with it (ADR 0105)."""
    got = run_end(_log(*blocks), LAB, 3)
    assert got is not None and got.claimed_at == T0 + timedelta(seconds=claimed)


@pytest.mark.parametrize("code", [0, 1])
def test_a_finished_run_gives_its_exit_codes_label(code: int) -> None:
    """Also past a pass's release of an earlier run, posted after it (scenario
    pass_requeue_lands_under_the_next_runs_lock)."""
    finished = rec("b", State.FINISHED).with_changes(exit_code=code)
    stale = [rec("a"), dead("a"), finished, dead("a")]
    got = run_end(_log(*stale), LAB, 3)
    assert got is not None and got[:2] == (LAB.ready if code == 0 else LAB.failed, False)
