"""A live holder finds its lock gone: stop, or put the lock back (ADR 0065).

Labels have no compare-and-swap, so orion itself can take a live run's lock off: another
claim's ending whose lock removal lands (or is retried) after this claim took the issue
(`stolen-by-ending`), or a reconcile pass whose removal was planned before this claim was
posted (`stale-pass-unlock`). A live run is never stopped by another actor's write, except a
person's cancel or forced release (issue 15): so a beat that finds its lock gone reads GitHub's
record of the lock's label events, and puts the lock back when the removal was orion's own and
nothing else says the claim is over. Pure: the service reads, this decides, the service writes.

The decision table (the first row that applies decides):

| row          | when                                                                    | decision  |
|--------------|-------------------------------------------------------------------------|-----------|
| other-reason | the fence finds the claim lost for another reason too (the issue closed, |  stop     |
|              | a tombstone naming it, an earlier live claim)                            |           |
| cancelled    | the issue carries the cancel label (the cancel path ends the run)        |  stop     |
| unlisted     | the issue counts comments the fence has not listed (a release in flight) |  stop     |
| unrecorded   | GitHub's record does not end with a removal of the lock made since the   |  stop     |
|              | claim was posted (it lags, or the lock was added and removed again)      |           |
| person       | that removal was made by anyone but orion (or by no known actor)         |  stop     |
| queue-unknown| the queue label is on and its last addition is not recorded since the    |  stop     |
|              | claim was posted                                                         |           |
| put-back     | otherwise: orion's own stale write. Put the lock back; and take the      |  keep     |
|              | queue label off if orion put it on since the claim (a stale requeue of   |           |
|              | a run before this one: this claim took that queueing)                    |           |

A queue label a person added since the claim stays: their wish, honoured when the run ends,
as when the lock is on (the next pass takes the run's fate off, ADR 0099).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from orion_action.config import Labels
from orion_action.core.arbitration import LOCK_REMOVED, SERVER_TIME_SLACK_S
from orion_action.core.cancelled import LabelEvent, last_event


@dataclass(frozen=True)
class LockGone:
    """What a holder that found its lock gone does: `put_back` the lock (and take the queue
    label off when `unqueue`), or stop, `row` saying which row of the table decided."""

    row: str
    put_back: bool = False
    unqueue: bool = False
    why: str = LOCK_REMOVED


def lock_gone(
    *,
    other_reason: str | None,
    labels: frozenset[str],
    unlisted: bool,
    record: Callable[[], Sequence[LabelEvent]],
    posted_at: datetime,
    is_orion: Callable[[str], bool],
    lab: Labels,
) -> LockGone:
    """The table above. `other_reason`: why the fence finds the claim lost with the lock
    counted as on (None: only the lock is gone); `labels`: the issue's labels as the beat read
    them; `unlisted`: the issue counts more comments than the fence listed; `record()`: the
    `labeled`/`unlabeled` events of the lock and queue labels, GitHub's order, oldest first
    (read only when a row needs it: it costs a request);
    `posted_at`: GitHub's creation time of the claim comment; `is_orion(login)`: the token's
    own login or a trusted author."""
    if other_reason is not None:
        return LockGone("other-reason", why=other_reason)
    if lab.cancel in labels:
        return LockGone("cancelled")
    if unlisted:
        return LockGone("unlisted", why=f"{LOCK_REMOVED}, beside comments not listed yet")
    since = posted_at - timedelta(seconds=SERVER_TIME_SLACK_S)
    events = record()
    removal = last_event(events, lab.working)
    if removal is None or removal.added or removal.at < since:
        return LockGone("unrecorded", why=f"{LOCK_REMOVED} (GitHub's record does not show by whom yet)")
    if not removal.login or not is_orion(removal.login):
        return LockGone("person", why=f"{LOCK_REMOVED} by {removal.login or 'someone GitHub does not name'}")
    unqueue = False
    if lab.queue in labels:
        queued = last_event(events, lab.queue)
        if queued is None or not queued.added or queued.at < since:
            why = f"{LOCK_REMOVED}, and GitHub's record does not show who queued the issue since"
            return LockGone("queue-unknown", why=why)
        unqueue = bool(queued.login) and is_orion(queued.login)
    return LockGone("put-back", put_back=True, unqueue=unqueue,
                    why=f"{LOCK_REMOVED} by orion ({removal.login}), whose write was stale")
