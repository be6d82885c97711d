"""Queue order: which queued issue `run --next` takes first (docs/design.md section 12).

The highest priority label first (the earliest name in `labels.priority` the issue carries;
none is lowest), then the oldest (GitHub's creation time, then the number, which GitHub hands
out in order). Pure: the same issues always come out in the same order. Across several
repositories (`run --next --repo A --repo B`) the same key decides, with ties broken by the
order the repositories were given, then the number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from orion_action.core.issue import Issue


def priority_of(labels: Iterable[str], priority: Sequence[str]) -> str | None:
    """The highest priority label among `labels`, or None."""
    have = set(labels)
    return next((name for name in priority if name in have), None)


def _rank(issue: Issue, priority: Sequence[str]) -> tuple[int, datetime]:
    top = priority_of(issue.labels, priority)
    return (priority.index(top) if top is not None else len(priority), issue.created_at)


def pick_order(issues: Iterable[Issue], priority: Sequence[str]) -> list[Issue]:
    """`issues` in the order `run --next` tries them."""
    return sorted(issues, key=lambda issue: (*_rank(issue, priority), issue.number))


def pick_order_across(
    queued: Iterable[tuple[str, Issue]], priority: Sequence[str], repos: Sequence[str]
) -> list[tuple[str, Issue]]:
    """(repository, issue) pairs in the order `run --next` with several repositories tries
    them: priority, then age, then the repository's place in `repos`, then the number. Within
    one repository this is `pick_order`."""
    place = {name: i for i, name in enumerate(repos)}
    return sorted(queued, key=lambda pair: (*_rank(pair[1], priority), place[pair[0]], pair[1].number))


# How many places a worker's first pick may lie from the head (issue 19: queue order holds
# "within one position"): workers that list at once spread over the head and the next issue,
# by a number of their own, instead of all racing for the head. Never across priorities.
FIRST_PICK_SPREAD = 2


# Issues passed over in a row (another worker took each since it was listed) after which
# `run --next` lists the queue again instead of walking on through a listing gone stale: one
# request against one for every issue passed, and what it shows is what is left.
RELIST_AFTER_PASSED = 2


def relist(passed_in_a_row: int) -> bool:
    """Whether `run --next` lists the queue again, after `passed_in_a_row` issues in a row
    were passed over (taken since they were listed)."""
    return passed_in_a_row >= RELIST_AFTER_PASSED


def first_pick(queued: Sequence[Issue], priority: Sequence[str], seed: int, crowd: bool) -> int:
    """The index in `queued` (in pick order) that a worker tries first. Alone (`crowd` false:
    it sees no other worker) the head; in a crowd the head, or the issue after it for half the
    workers (`seed`: a number of the worker's own), but only when that issue has the head's
    priority: priority always holds, age within one position. 0 when `queued` is empty."""
    at = max(0, min(seed % FIRST_PICK_SPREAD, len(queued) - 1)) if crowd else 0
    top = priority_of(queued[0].labels, priority) if queued else None
    while at and priority_of(queued[at].labels, priority) != top:
        at -= 1
    return at


def next_pick(count: int, tried: Iterable[int], after: int, rivals: int, stride: int = 1) -> int | None:
    """The index a worker tries next, without listing again, after losing the issue at index
    `after` to a race in which `rivals` claims (the winner's included) came before its own.

    The losers of one race each see the same claims in the same order, so skipping as many
    places as claims came before one's own sends them to different issues instead of all to
    the next one (where all but one would lose again). `stride`: the places a rival counts
    for; FIRST_PICK_SPREAD after a lost race, so that the losers of the race at the head and
    those of the race at the issue after it (first picks spread over both) go to different
    issues. Past the end it wraps around to the first index not tried yet; None when every
    index was tried."""
    seen = set(tried)
    start = after + max(1, rivals) * max(1, stride)
    for i in (*range(start, count), *range(count)):
        if i not in seen:
            return i
    return None
