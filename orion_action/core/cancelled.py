"""Whether a person's cancel still stands against the issue's latest queueing (ADR 0061).

The cancel sweep takes a queued issue's queue label off, then its cancel label, and labels
have no compare-and-swap: a sweep that paused between the two can take off a cancel label a
person added after requeueing the issue, leaving the new queue label on, and a claim would run
what the person cancelled (the model's `stale-sweep-uncancel`). No re-read closes that window,
so the claim asks GitHub's own record, which a stale write cannot rewrite: the issue's timeline
of queue- and cancel-label events, in the order GitHub lists them. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class LabelEvent:
    """One `labeled` (added) or `unlabeled` event of the queue or the cancel label. `login`
    is "" when GitHub names no actor (a deleted account)."""

    label: str
    added: bool
    login: str
    at: datetime

    def of(self, name: str) -> bool:
        """Whether this is an event of label `name`: GitHub compares label names case-insensitively."""
        return self.label.casefold() == name.casefold()


def last_event(events: Sequence[LabelEvent], label: str) -> LabelEvent | None:
    """The latest of `events` (oldest first) of `label`, or None."""
    return next((e for e in reversed(events) if e.of(label)), None)


def standing_cancel(events: Iterable[LabelEvent], queue: str, cancel: str,
                    is_orion: Callable[[str], bool]) -> LabelEvent | None:
    """The cancel that cancels the latest queueing, or None. A cancel label added after the
    queue label's last addition cancels that queueing even if the label is gone since, unless
    someone other than orion (`is_orion(login)`: the token's login or a trusted author) removed
    it afterwards: a person withdrew the cancel. orion's own removals (the sweep, a holder's
    cancelled ending) carry out a cancel, they never withdraw one; a removal by no known actor
    withdraws nothing (fail closed). `events` in GitHub's order, oldest first; labels compared
    case-insensitively, as GitHub names them."""
    q, c = queue.casefold(), cancel.casefold()
    standing: LabelEvent | None = None
    for e in events:
        name = e.label.casefold()
        if name == q and e.added:
            standing = None  # a new queueing: only cancels after it count
        elif name == c and e.added:
            standing = e
        elif name == c and standing is not None and e.login and not is_orion(e.login):
            standing = None
    return standing


def cancel_against_a_persons_queueing(events: Iterable[LabelEvent], queue: str, cancel: str,
                                      is_orion: Callable[[str], bool]) -> LabelEvent | None:
    """The cancel that stands against the latest queueing a person made, every queue label orion
    added set aside, or None (ADR 0085). orion adds the queue label only to hand back a run it
    took or to requeue a dead one, never as a wish of its own, and it never requeues a run a
    person cancelled (ADR 0049): a queue label it adds after a cancel is a stale write (a pass's
    requeue planned before the cancel and landing after another pass or the holder carried the
    cancel out; the model's `requeue-over-cancel`). As the trigger check passes orion's own
    queueings back to the person before it (ADR 0033), the cancel check looks past them to the
    person's: a cancel stands until a person queues the issue again or takes the cancel label
    off. orion puts back a person's cancel its own stale removal took (ADR 0073), and that cancel
    is in the record: such put-backs are set aside too (`without_put_backs`), so one that lands
    after the person queued again cancels nothing (default seed 48 episode 37, ADR 0088). Its
    readers:

    - every claim (the trigger check, ADR 0061);
    - every pass, for the queued issues that changed since the previous pass (ADR 0085): a stale
      write whose writer died before it could look back is still caught;
    - a pass whose queue addition landed after someone else took the lock off (`core.stale_add`
      row `requeued-unlocked`, ADR 0079): another pass or the holder may have carried out a
      cancel made since, which leaves no label to see;
    - a holder putting back a queue label its late unqueue took (`restore_queue`, ADR 0083): a
      stale pass's queue addition after a person's cancel must not make the cancel look
      withdrawn."""
    persons = [e for e in without_put_backs(events, cancel, is_orion)
               if not (e.of(queue) and e.added and e.login and is_orion(e.login))]
    return standing_cancel(persons, queue, cancel, is_orion)


def without_put_backs(events: Iterable[LabelEvent], cancel: str,
                      is_orion: Callable[[str], bool]) -> list[LabelEvent]:
    """`events` without orion's put-backs of a cancel (ADR 0073): an addition of the cancel label
    by orion right after orion's own removal of it restores the cancel before that removal,
    which is in the record already, and may land late: after the person queued the issue again
    (default seed 48 episode 37, ADR 0088). Any other addition counts, whoever made it (a person
    may share orion's login)."""
    c = cancel.casefold()
    kept: list[LabelEvent] = []
    previous: LabelEvent | None = None  # the cancel label's previous event
    for e in events:
        if e.label.casefold() == c:
            put_back = (e.added and previous is not None and not previous.added
                        and bool(e.login) and is_orion(e.login) and bool(previous.login)
                        and is_orion(previous.login))
            previous = e
            if put_back:
                continue
        kept.append(e)
    return kept


def swept_a_newer_cancel(on_issue: frozenset[str], events: Iterable[LabelEvent], queue: str, cancel: str,
                         lock: str, is_orion: Callable[[str], bool]) -> LabelEvent | None:
    """After the cancel sweep's removal of the cancel label (ADR 0073): the cancel its removal
    may have taken off although it came after the sweep's read, or None. The sweep read the
    issue, planned, and its removal landed later (labels have no compare-and-swap): a person
    who requeued the issue and cancelled it again in between lost that cancel, and the labels
    say queued (or a claim made before the new cancel holds it, and its holder never sees the
    label). Such a cancel is one that still stands against the latest queueing in GitHub's
    record (`standing_cancel`) while the issue, as read after the removal, carries the queue
    label or the lock and not the cancel label: the label goes back on, and the next pass's
    sweep (or the holder's beat) carries the cancel out. An issue left with neither label, or
    a cancel a person withdrew, is what the sweep meant to leave."""
    if cancel in on_issue or not (queue in on_issue or lock in on_issue):
        return None
    return standing_cancel(events, queue, cancel, is_orion)


def swept_an_uncancelled_queueing(on_issue: frozenset[str], events: Iterable[LabelEvent], queue: str,
                                  cancel: str, lock: str,
                                  is_orion: Callable[[str], bool]) -> LabelEvent | None:
    """After the cancel sweep's removal of the queue label (ADR 0073): the queueing its removal
    took although no cancel was ever made against it, or None. The sweep read the issue queued
    and cancelled, and its removal landed later: another pass's sweep may have carried that
    cancel out meanwhile and a person requeued the issue (the cancel label off, the queue label
    on), and the removal took the new queueing. In GitHub's record the queue label's last event
    is then orion's removal of a queueing that was added while the cancel label was off, with no
    cancel label added since (orion's put-backs of a cancel set aside: the cancel each restores
    is in the record, ADR 0088): the label goes back. A queueing added beside the cancel
    label is no wish to run (ADR 0053), and a record that does not show the removal yet says
    nothing."""
    if queue in on_issue or lock in on_issue:
        return None
    q, c = queue.casefold(), cancel.casefold()
    cancel_on = False
    queued: LabelEvent | None = None  # the latest queueing, while no cancel is against it
    last: LabelEvent | None = None  # the queue label's latest event
    for e in without_put_backs(events, cancel, is_orion):
        name = e.label.casefold()
        if name == c:
            cancel_on = e.added
            if e.added:
                queued = None
        elif name == q:
            last = e
            if e.added:
                queued = None if cancel_on else e
    if queued is None or last is None or last.added or not last.login or not is_orion(last.login):
        return None
    return queued
