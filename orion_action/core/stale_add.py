"""A pass's fate label that landed after someone else had moved the labels (ADR 0073).

A reconcile pass reads the issue (the lock still on), then adds the fate it planned (ready,
failed, queue) and takes the lock off. Labels have no compare-and-swap: between that read and
its addition the holder's own ending may have moved the labels and a person may have requeued
the issue (ready off, queue on). The addition then lands on a decided issue and leaves two
fates (`stale-pass-repair`, scenario `pass_completes_beside_the_holders_label_move`). GitHub's
answer to the addition lists every label of the issue (ADR 0066), so the pass sees it at once.
Pure: the service writes, this decides.

| row        | GitHub's answer to the pass's addition                          | decision          |
|------------|-----------------------------------------------------------------|-------------------|
| locked     | the lock is still on: the pass's own move goes on               | keep the addition |
| one-fate   | the lock is gone and only the pass's ready or failed label is   | keep the addition |
|            | on (a duplicate of the holder's own move, or nothing else       |                   |
|            | decided)                                                        |                   |
| two-fates  | the lock is gone and another fate is on beside the pass's       | take it off again |
| requeued-  | the lock is gone and only the pass's queue label is on: the     | ask GitHub's      |
| unlocked   | holder's own ending or another pass moved the labels, and a     | record            |
|            | person's cancel they carried out shows on no label (ADR 0079)   |                   |

`asks_the_record` names the last row; `core.cancelled.cancel_against_a_persons_queueing` reads
the record, and a cancel standing there (orion's own queue additions set aside: its late
addition is one) takes its queue label off again.

A pass killed between its addition and that look, or whose answer was lost, leaves the two
fates: a person's queue label and orion's ready or failed, and no claimer takes such an issue.
The next pass's look at the queue (ADR 0085) finds it, and GitHub's record of the labels says
whose word is later (ADR 0094, `fates_added_over_a_queueing`). orion adds a fate only while
the lock is on (an ending or a pass adds the next label first and takes the lock off last; a
holder whose one request got no answer waits until it can no longer land, ADR 0076), or to an
issue that carries nothing (a stranded one). So a fate orion added after the latest queueing
and after the lock last came off was planned before that queueing: it comes off. That holds for
orion's own queueing too: a pass's requeue (the queue label, then the lock off) of a holder it
took for dead while it was ending, and another pass's completion of that holder's finished
record landing after it, its writer killed before its look (scenario
`pass_completion_lands_after_another_pass_requeued`).

| row            | GitHub's record of the queue, lock and fate labels               | decision        |
|----------------|------------------------------------------------------------------|-----------------|
| no-queueing    | the queue label's last event is no addition (the record lags)    | nothing         |
| orion-queueing | orion added the queue label last (a hand-back or a requeue), and | nothing         |
|                | the fate came while the lock was on                              |                 |
| lock-on        | the lock's last event is an addition (the record lags the lock   | nothing         |
|                | removal the labels show)                                         |                 |
| fate-first     | the fate's last addition came before the person's queueing, and  | nothing         |
|                | the lock was off by then: they queued a decided issue (the       |                 |
|                | claimer says what to remove)                                     |                 |
| persons-fate   | a person added the fate after the queueing                       | nothing         |
| queued-mid-run | orion added the fate while the lock was on, and the person       | take it off     |
|                | queued the issue while the lock was on or before the fate: a run |                 |
|                | that ended after the person queued it (ADR 0099)                 |                 |
| stale-fate     | orion added the fate after the queueing (a person's or orion's)  | take it off     |
|                | and after the lock's last removal                                |                 |

A person who queues a running issue asks for one more run after this one (ADR 0099): the run's
result stays in its record, and its fate label, which would keep the queueing from running,
comes off.

The same residue comes the other way round: a pass's requeue, planned from a read that took a
holder for dead while it was ending, lands after another pass completed the holder's label move
(its fate, then the lock off), and its writer is killed before its look (default seed 15 episode
9). orion adds a queue label under the lock (a hand-back, a release), or to an issue that
carries nothing, so one added after the lock's last removal beside a fate added before that
removal was planned before the fate: it comes off, and the run's fate stands (ADR 0099,
`requeue_over_a_fate`).

| row             | GitHub's record of the queue, lock and fate labels               | decision      |
|-----------------|------------------------------------------------------------------|---------------|
| not-orions      | the queue label's last event is no addition by orion             | nothing       |
| under-the-lock  | orion added it while the lock was on (a hand-back, a release),   | nothing       |
|                 | or the lock's last event is an addition                          |               |
| fate-after      | no fate on the issue was added before the lock's last removal    | nothing       |
| stale-requeue   | orion added it after the lock's last removal, and a fate added   | take the      |
|                 | before that removal is on                                        | queue label   |
|                 |                                                                  | off           |

Both of orion's writes can also land while one lock is on, and then no order of theirs tells
which is stale (ADR 0102). A pass's requeue, planned from a read that did not show a later
claim, lands under that claim's lock; the run's ending adds its fate after it (the queue label is
stale). A pass's completion lands under a run's lock, and the run hands the issue back (the fate
is stale). A run's own ending and a pass's stale write each add one label, so one of the two is
the run's: the issue's record says which (`core.plan.run_end`: the last run, or the last release
of a run, and what its end does to the labels; a pass's release posted after a later run is no
event of it, `core.arbitration.overtaken`). And a stale requeue under a run's lock alone, the run
then cancelled by a signal, whose ending leaves a queue label it finds as a person's (ADR 0103).
So the record is read for every queue label orion added under the lock's last span, with or
without a fate beside it: one listing of the comments, on such an issue only (a hand-back, a
release back to the queue, a repair).

| row          | what the last run's end does to the labels (the record)             | decision       |
|--------------|---------------------------------------------------------------------|----------------|
| no-word      | no word: no run, an open claim no release names (the listing lags   | nothing        |
|              | its final record), a ready or failed that is not on, a cancel       |                |
|              | beside a fate                                                       |                |
| cancelled    | it takes the queue label off (a cancel), and no fate is on          | take the queue |
|              |                                                                     | label off      |
| handed-back  | it puts the queue label on (a hand-back, a release to the queue)    | take any fate  |
|              |                                                                     | off            |
| run-ended    | it puts on the ready or failed that is on                           | take the queue |
|              |                                                                     | label off      |

That pass comes later, and the stale requeue can land where no one looks before it: after a
cancel ending read the labels and before its lock removal (ADR 0104's read then sees nothing),
leaving a queue label on an unlocked issue whose last run was cancelled. A claimer would take it
and run the cancelled run again. So a claim whose log shows the last run ended cancelled reads
GitHub's record of the queue label before it runs anything (ADR 0105): only a person queues a
cancelled run again. orion's own queue additions after that run's claim (a stale requeue) are no
such word. An addition is after the claim when its second is, or when it follows the run's
unqueue (the first removal in the claim's second or later) in GitHub's order: the run took the
label on at its claim, its unqueue comes a settle (1 s) after its post, and an addition while the
label is on is no event.

The cancel ending's own look (ADR 0104) reads the same rows of its own run: it leaves a label a
person added since its claim, and takes off one only orion added.

| row               | GitHub's record of the queue label since the cancelled run's claim    | decision     |
|-------------------|-----------------------------------------------------------------------|--------------|
| persons-queueing  | a person added the queue label after the cancelled run's claim        | run          |
| not-in-the-record | the queue label's last event is no addition after the claim (the      | do not run;  |
|                   | record lags the label the claimer read)                               | leave it     |
| orions-requeue    | orion (or an actor GitHub no longer names) added it last, after the   | do not run;  |
|                   | claim, and no person did since then                                   | take it off  |
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import NamedTuple

from orion_action.config import Labels
from orion_action.core.cancelled import LabelEvent
from orion_action.core.plan import RunEnd


def stale_fates(added: Sequence[str], after: frozenset[str], lab: Labels) -> tuple[str, ...]:
    """The fate labels the pass just added (`added`) that it must take off again, given the
    issue's labels in GitHub's answer (`after`): someone else moved the labels since the pass's
    last read (the lock is gone) and decided another fate; theirs is the later word."""
    if lab.working in after:
        return ()  # row locked
    fates = {lab.queue, lab.ready, lab.failed}
    ours = tuple(x for x in added if x in fates)
    others = (after & fates) - set(ours)
    return ours if ours and others else ()  # rows two-fates / one-fate


def asks_the_record(added: Sequence[str], after: frozenset[str], lab: Labels) -> bool:
    """Row requeued-unlocked: the pass's requeue landed after someone else took the lock off,
    and only its queue label says what the issue is. Whoever moved the labels may have carried
    out a person's cancel made since the pass's read (ADR 0079), which no label shows any more."""
    fates = {lab.queue, lab.ready, lab.failed}
    return lab.queue in added and lab.working not in after and after & fates == {lab.queue}


class FateOff(NamedTuple):
    """A fate label that comes off an unlocked queued issue, and the row that decided it."""

    label: str
    row: str  # "stale-fate" or "queued-mid-run"


def fates_added_over_a_queueing(events: Sequence[LabelEvent], on: frozenset[str], lab: Labels,
                                is_orion: Callable[[str], bool]) -> tuple[FateOff, ...]:
    """The fate labels (ready, failed) on an unlocked queued issue (`on`: its labels) that
    orion added after the latest queueing and after the lock came off: a stale addition,
    planned before that queueing (row stale-fate); or that a run's ending added, a person having
    queued the issue while the lock was on, before or after the fate (row queued-mid-run);
    either comes off.
    `events`: GitHub's record of the queue, lock, ready and failed labels, oldest first;
    compared by position, since GitHub's stamps are whole seconds.
    A person is any actor orion's logins do not name, a deleted account included."""
    last = _last_positions(events)
    q, lock = last.get(lab.queue.casefold()), last.get(lab.working.casefold())
    if q is None or not events[q].added:
        return ()  # row no-queueing
    if lock is not None and events[lock].added:
        return ()  # row lock-on
    orion_queued = bool(events[q].login) and is_orion(events[q].login)
    mid_run = not orion_queued and lock is not None and q < lock  # a person's, under the lock
    off = []
    for name in (lab.ready, lab.failed):
        f = last.get(name.casefold())
        if name not in on or f is None or not events[f].added:
            continue  # the record lags the label
        if f < q and not mid_run:
            continue  # row fate-first
        if not (events[f].login and is_orion(events[f].login)):
            continue  # row persons-fate
        if lock is not None and f < lock:
            if not orion_queued:  # else row orion-queueing
                off.append(FateOff(name, "queued-mid-run"))  # row queued-mid-run
        else:
            off.append(FateOff(name, "stale-fate"))  # row stale-fate
    return tuple(off)


def requeue_over_a_fate(events: Sequence[LabelEvent], on: frozenset[str], lab: Labels,
                        is_orion: Callable[[str], bool]) -> bool:
    """Whether the queue label on an unlocked issue (`on`: its labels) is orion's stale requeue
    beside a run's fate (row stale-requeue): orion added it after the lock's last removal, and
    a ready or failed added before that removal is on. `events` as for
    `fates_added_over_a_queueing`."""
    last = _last_positions(events)
    q, lock = last.get(lab.queue.casefold()), last.get(lab.working.casefold())
    if q is None or not events[q].added or not (events[q].login and is_orion(events[q].login)):
        return False  # row not-orions
    if lock is None or events[lock].added or q < lock:
        return False  # row under-the-lock
    fates = (last.get(name.casefold()) for name in (lab.ready, lab.failed) if name in on)
    return any(f is not None and events[f].added and f < lock for f in fates)  # else row fate-after


def _last_positions(events: Sequence[LabelEvent]) -> dict[str, int]:
    """Each label's last event: its position in `events` (by casefolded name)."""
    return {e.label.casefold(): i for i, e in enumerate(events)}


def queued_under_the_lock(events: Sequence[LabelEvent], lab: Labels, is_orion: Callable[[str], bool]) -> bool:
    """Whether orion added the queue label, now on an unlocked issue, while the lock was on:
    after the lock's last addition and before its last removal (ADRs 0102 and 0103). `events` as
    for `fates_added_over_a_queueing`."""
    last = _last_positions(events)
    q, lock = last.get(lab.queue.casefold()), last.get(lab.working.casefold())
    if lock is None or events[lock].added:
        return False  # never locked, or the lock is on (the record lags its removal)
    taken = max((i for i in range(lock) if events[i].of(lab.working) and events[i].added), default=None)
    if q is None or taken is None or not taken < q < lock:
        return False  # not under the lock, or the record does not reach the lock's addition
    return events[q].added and bool(events[q].login) and is_orion(events[q].login)


class RunDecides(NamedTuple):
    """The labels that come off an issue whose queue label orion added under the lock, and the row."""

    remove: tuple[str, ...]
    row: str  # "no-word", "cancelled", "handed-back" or "run-ended"


def decided_by_the_run(end: RunEnd | None, on: frozenset[str], lab: Labels) -> RunDecides:
    """What comes off an unlocked issue whose queue label orion added under the lock
    (`queued_under_the_lock`; `on`: its labels), given what the last run's end does to the
    labels (`end`, from `core.plan.run_end`): the labels a stale write left."""
    fates = tuple(x for x in (lab.ready, lab.failed) if x in on)
    if end is None:
        return RunDecides((), "no-word")
    if end.unqueues and not fates:
        return RunDecides((lab.queue,), "cancelled")
    if end.label == lab.queue:
        return RunDecides(fates, "handed-back")
    if end.label is not None and end.label in fates:
        return RunDecides((lab.queue, *(x for x in fates if x != end.label)), "run-ended")
    return RunDecides((), "no-word")  # a fate that is not on, or a cancel (no label) beside a fate


def queued_after_a_cancel(claimed_at: datetime, events: Sequence[LabelEvent], lab: Labels,
                          is_orion: Callable[[str], bool]) -> str:
    """The row of a look at a queue label found after a run that ended cancelled, claimed at
    `claimed_at` (GitHub's time): a claimer's, about to run it (ADR 0105), and the cancel
    ending's own (ADR 0104). `events`: the queue label's `labeled` and `unlabeled` events
    (others are passed over) in GitHub's order, oldest first."""
    queue = [e for e in events if e.of(lab.queue)]
    # The run's unqueue: the first removal in the claim's second or later (an event after it in
    # GitHub's order came after the claim, whatever its stamp says).
    taken = next((i for i, e in enumerate(queue) if not e.added and e.at >= claimed_at), len(queue))
    since = [e for i, e in enumerate(queue) if e.at > claimed_at or i > taken]
    if any(e.added and e.login and not is_orion(e.login) for e in since):
        return "persons-queueing"
    if not since or since[-1] is not queue[-1] or not queue[-1].added:
        return "not-in-the-record"
    return "orions-requeue"  # orion's, or by no actor GitHub names (a deleted account): fail closed
