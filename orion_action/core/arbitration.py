"""Mutual exclusion without compare-and-swap: the lowest live claim comment wins.

GitHub totally orders comments by id, and every claimer reads the same comments, so every
claimer that sees the same records picks the same winner. A record counts as live unless it is
provably dead: an uncertain record blocks, it never lets a second run in.
"""

from __future__ import annotations

from collections.abc import Callable

from orion_action.core.issue import ClaimEntry, IssueLog


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
