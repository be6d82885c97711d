"""Mutual exclusion without compare-and-swap: the lowest live claim comment wins.

GitHub totally orders comments by id, and every claimer reads the same comments, so every
claimer that sees the same records picks the same winner. A record counts as live unless it is
provably dead: an uncertain record (one this version cannot read, or whose holder cannot be
judged) blocks, it never lets a second run in. A claim once provably dead stays dead: its
holder gave up before anyone could presume it dead (docs/design.md section 3).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from orion_action.config import Labels
from orion_action.core.issue import ClaimEntry, IssueLog, TombstoneEntry
from orion_action.core.record import HOLDER_END, RELEASE_MARK, State

# GitHub's timestamps and its Date header have whole seconds: an event stamped within this
# much before a read may have happened after it.
SERVER_TIME_SLACK_S = 1.0
# GitHub ends a request it has not processed within 10 s ("Timeouts" in its REST API
# troubleshooting guide): a write sent is applied within that, or not at all.
GITHUB_REQUEST_LIMIT_S = 10.0
# The fence's reason when only the lock is gone (core/lock_gone.py decides what then, ADR 0065).
LOCK_REMOVED = "the lock label was removed"


def winner(log: IssueLog, is_dead: Callable[[ClaimEntry], bool]) -> ClaimEntry | None:
    """The lowest-id open claim that is not provably dead, or None."""
    return next((c for c in log.open_claims() if not is_dead(c)), None)


def rivals_before(log: IssueLog, first: ClaimEntry | None, mine: int) -> int:
    """How many claims, from the winner `first` on, came before the claim with comment id
    `mine` that lost to it (at least 1): the losers of one race each count a different number,
    which `run --next` uses to try different issues next (core/queue.py next_pick)."""
    if first is None:
        return 1
    return max(1, sum(1 for c in log.claims if first.comment_id <= c.comment_id < mine))


def blocker(log: IssueLog, token: str, is_dead: Callable[[ClaimEntry], bool]) -> str | None:
    """Why the claim `token` does not win, or None if it does: a lower live claim, or a lower
    claim this version cannot read."""
    mine = log.find(token)
    if mine is None:
        return "the claim comment is gone"
    if token in log.released_tokens():
        return "the claim was released before it started"
    first = winner(log, lambda c: c.record.token != token and is_dead(c))
    if first is not None and first.comment_id < mine.comment_id:
        return f"an earlier live claim (comment {first.comment_id}) holds the issue"
    unreadable = log.blocking_unreadable(below=mine.comment_id)
    if unreadable is not None:
        return f"an earlier claim (comment {unreadable.comment_id}) cannot be read: {unreadable.why}"
    return None


def lost_reason(
    log: IssueLog,
    token: str,
    *,
    is_open: bool,
    has_lock: bool,
    is_dead: Callable[[ClaimEntry], bool],
) -> str | None:
    """Why the holder of `token` no longer holds the issue, or None if it still does.

    This is the fence every beat and every label move checks: the issue closed, the lock
    removed, a tombstone naming the token (or a release this version cannot read, posted after
    the claim: uncertainty stops the run), or an earlier live claim (seen late)."""
    if not is_open:
        return "the issue was closed"
    if not has_lock:
        return LOCK_REMOVED
    for t in log.tombstones:
        if t.tombstone.token == token:
            return f"the claim was released by {t.tombstone.by}: {t.tombstone.reason}"
    mine = log.find(token)
    if mine is not None:
        later = next(
            (u for u in log.unreadable if u.kind == RELEASE_MARK and u.comment_id > mine.comment_id), None
        )
        if later is not None:
            return f"a release this version cannot read was posted (comment {later.comment_id})"
    return blocker(log, token, is_dead)


def ran(entry: ClaimEntry) -> bool:
    """Whether a claim got as far as starting its child (a pure arbitration loser did not)."""
    r = entry.record
    return r.state in (State.RUNNING, State.FINISHED, State.INTERRUPTED, State.CANCELLED) or (
        r.child_pid is not None
    )


def overtaken(log: IssueLog, t: TombstoneEntry) -> bool:
    """A tombstone that is no event of the issue's story, since its claim's story was over:
    - a holder's end marker posted after another tombstone of its claim (a release, or its own
      earlier copy), or after a later claim that ran: the holder's outage account, appended late
      (ADR 0092). It excuses the attempt (`IssueLog.attempts_used`) but is not the issue's newest
      event: the release, or the run since, decides (a person's cancel stays honoured, a next
      run's death is that run's);
    - a pass's release of a claim posted after a later claim that ran: planned before that run
      took the queueing, from a read that did not show it (ADR 0102: its requeue landed under
      the next run's lock). The run since decides.
    A person's release (`release`, by hand) is always an event."""
    claim = log.find(t.tombstone.token)
    if claim is None or t.tombstone.by == "release":
        return False
    if any(claim.comment_id < c.comment_id < t.comment_id and ran(c) for c in log.claims):
        return True
    return t.tombstone.by == HOLDER_END and any(
        o.tombstone.token == t.tombstone.token and o.comment_id < t.comment_id for o in log.tombstones)


def a_release_of(log: IssueLog, t: TombstoneEntry, matters: Callable[[ClaimEntry], bool]) -> bool:
    """Whether tombstone `t` is an event of the issue's story, to a reader for whom only a
    claim that `matters` tells one (a run, to `core.plan`; a claim that may have sent its
    unqueue, to `core.requeue`). A release naming a claim the log does not hold counts (the claim
    may have been deleted, or be older than a listing reaches); a pass's release of a claim that
    does not matter does not. A person's release (`release`, by hand) counts whatever its
    claim's record says: it may release a run the moment it won, list its record before the
    edit that says `running` (list lag), and its rewrite of the visible line then turns the
    record back into `claiming`; finishing it is what the person asked for (ADR 0064). A
    holder's end marker that something followed (`overtaken`) is no event."""
    claim = log.find(t.tombstone.token)
    return (t.tombstone.by == "release" or claim is None or matters(claim)) and not overtaken(log, t)


def ended_before(log: IssueLog, entry: ClaimEntry, cutoff: datetime) -> bool:
    """Whether a claim was over before `cutoff` (GitHub's clock): its final record, or a
    tombstone naming it, was written before then."""
    if not entry.record.state.is_open and entry.updated_at <= cutoff:
        return True
    return any(t.tombstone.token == entry.record.token and t.created_at <= cutoff for t in log.tombstones)


def ran_meanwhile(log: IssueLog, token: str, read_at: datetime) -> ClaimEntry | None:
    """An earlier claim that ran after the claimer of `token` read the issue as queued, or None.

    `read_at` is GitHub's time of that read (the Date of the response; the claimer reads again
    when the issue changed within SERVER_TIME_SLACK_S of it, so this stays decisive). A claim with a lower
    id than ours that ran and was not over before the read ran while we were claiming: our
    "queued" was stale, and running now would run the issue a second time, even though that
    claim may have finished already. Judged on GitHub's clock alone, so claiming needs no read
    of the history beforehand."""
    mine = log.find(token)
    if mine is None:
        return None
    cutoff = read_at - timedelta(seconds=SERVER_TIME_SLACK_S)
    return next(
        (
            c
            for c in log.claims
            if c.comment_id < mine.comment_id and ran(c) and not ended_before(log, c, cutoff)
        ),
        None,
    )


def cancelled_at_lock(after_lock: frozenset[str], labels: Labels) -> str | None:
    """Why a claimer must give up once its lock write is answered, or None (ADR 0066): the
    answer lists every label the issue carries, and the cancel label there means a person
    cancelled the issue after the claimer read it as queued (the claim refuses a cancel it
    reads before posting, ADR 0061). Only a person adds that label; orion only takes it off.
    A claim that goes on would start a child for at least a beat, on work a person stopped."""
    if labels.cancel in after_lock:
        return (f"the {labels.cancel} label was on the issue when this claim's lock landed: a person "
                f"cancelled it while the claim was being made")
    return None


def may_tidy_lock(
    log: IssueLog, token: str, comment_id: int, on_issue: frozenset[str], labels: Labels
) -> bool:
    """Whether a claimer that gave up before running (claim `token` in comment `comment_id`)
    may take the lock it added off again: only where nothing can be undone. No other claim is
    open, none came after ours but a loser's (a later winner's lock is the same label), and the
    issue keeps a label that a claimer or a person acts on. Anything else is left to a pass."""
    others = [c for c in log.open_claims() if c.record.token != token]
    later = [c for c in log.claims if c.comment_id > comment_id and c.record.state is not State.LOST]
    if others or later:
        return False
    return labels.working in on_issue and bool(on_issue & {labels.queue, labels.ready, labels.failed})

