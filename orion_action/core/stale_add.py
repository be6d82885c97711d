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
| one-fate   | the lock is gone and only the pass's fate is on (a duplicate of | keep the addition |
|            | the holder's own move, or nothing else decided)                 |                   |
| two-fates  | the lock is gone and another fate is on beside the pass's       | take it off again |
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
