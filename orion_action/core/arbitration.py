"""Mutual exclusion without compare-and-swap: the lowest live claim comment wins.

GitHub totally orders comments by id, and every claimer reads the same comments, so every
claimer that sees the same records picks the same winner. A record counts as live unless it is
provably dead: an uncertain record blocks, it never lets a second run in.
"""

from __future__ import annotations

from collections.abc import Callable

from orion_action.core.issue import ClaimEntry, IssueLog
from orion_action.core.record import State


def winner(log: IssueLog, is_dead: Callable[[ClaimEntry], bool]) -> ClaimEntry | None:
    """The lowest-id open claim that is not provably dead, or None."""
    return next((c for c in log.open_claims() if not is_dead(c)), None)


def lost_reason(
    log: IssueLog,
    token: str,
    *,
    is_open: bool,
    has_lock: bool,
    is_dead: Callable[[ClaimEntry], bool],
) -> str | None:
    """Why the holder of `token` no longer holds the issue, or None if it still does.

    This is the fence every heartbeat checks: the issue closed, the lock removed, a tombstone
    naming the token, or an earlier live claim (seen late, or posted by a racing claimer)."""
    if not is_open:
        return "the issue was closed"
    if not has_lock:
        return "the lock label was removed"
    for t in log.tombstones:
        if t.tombstone.token == token:
            return f"the claim was released by {t.tombstone.by}: {t.tombstone.reason}"
    mine = log.find(token)
    if mine is None:
        return "the claim comment is gone"
    first = winner(log, lambda c: c.record.token != token and is_dead(c))
    if first is not None and first.comment_id < mine.comment_id:
        return f"an earlier live claim (comment {first.comment_id}) holds the issue"
    return None


def ran(entry: ClaimEntry) -> bool:
    """Whether a claim got as far as starting its child (a pure arbitration loser did not)."""
    r = entry.record
    return r.state in (State.RUNNING, State.FINISHED, State.INTERRUPTED) or r.child_pid is not None


def ran_meanwhile(log: IssueLog, token: str, settled: frozenset[int]) -> ClaimEntry | None:
    """An earlier claim that ran while the holder of `token` was claiming, or None.

    `settled` holds the comment ids of the claims that were already over (not open, or
    tombstoned) when the claimer first read the issue as queued. Any other claim with a lower
    id than ours that ran did so after that read: our "queued" was stale, and running now would
    run the issue a second time, even though that claim may have finished already."""
    mine = log.find(token)
    if mine is None:
        return None
    return next(
        (c for c in log.claims if c.comment_id < mine.comment_id and c.comment_id not in settled and ran(c)),
        None,
    )


def settled_claims(log: IssueLog) -> frozenset[int]:
    """Comment ids of the claims in `log` that are over: not open, or tombstoned."""
    still_open = {c.comment_id for c in log.open_claims()}
    return frozenset(c.comment_id for c in log.claims if c.comment_id not in still_open)
