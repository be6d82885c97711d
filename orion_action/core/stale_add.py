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
"""

from __future__ import annotations

from collections.abc import Sequence

from orion_action.config import Labels


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
