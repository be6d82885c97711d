"""Queue order: which queued issue `run --next` takes first (docs/design.md section 12).

The highest priority label first (the earliest name in `labels.priority` the issue carries;
none is lowest), then the oldest (GitHub's creation time, then the number, which GitHub hands
out in order). Pure: the same issues always come out in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from orion_action.core.issue import Issue


def priority_of(labels: Iterable[str], priority: Sequence[str]) -> str | None:
    """The highest priority label among `labels`, or None."""
    have = set(labels)
    return next((name for name in priority if name in have), None)


def pick_order(issues: Iterable[Issue], priority: Sequence[str]) -> list[Issue]:
    """`issues` in the order `run --next` tries them."""
    rank = {name: i for i, name in enumerate(priority)}

    def key(issue: Issue) -> tuple[int, object, int]:
        top = priority_of(issue.labels, priority)
        return (rank[top] if top is not None else len(priority), issue.created_at, issue.number)

    return sorted(issues, key=key)
