"""Queue order (orion_action/core/queue.py): priority label first, then age."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orion_action.core.issue import Issue
from orion_action.core.queue import pick_order, priority_of

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
PRIORITY = ("p0", "p1", "p2")


def issue(number: int, *labels: str, age: int | None = None) -> Issue:
    """Issue `number`, created `age` minutes before T0 (default: older numbers are older)."""
    created = T0 - timedelta(minutes=100 - number if age is None else age)
    return Issue(number, True, frozenset({"orion", *labels}), 0, created, T0)


class Row(NamedTuple):
    why: str
    issues: list[Issue]
    priority: tuple[str, ...]
    order: list[int]


ROWS = [
    Row("no issues", [], PRIORITY, []),
    Row("no priority list: oldest first", [issue(3), issue(1), issue(2)], (), [1, 2, 3]),
    Row("no priority labels: oldest first", [issue(2), issue(1)], PRIORITY, [1, 2]),
    Row("a priority label beats age", [issue(1), issue(5, "p2")], PRIORITY, [5, 1]),
    Row("higher priority first", [issue(1, "p2"), issue(2, "p1"), issue(3, "p0")], PRIORITY, [3, 2, 1]),
    Row("oldest first within a priority", [issue(4, "p1"), issue(2, "p1"), issue(3)], PRIORITY, [2, 4, 3]),
    Row("the highest label an issue carries counts", [issue(1, "p1"), issue(2, "p2", "p0")], PRIORITY,
        [2, 1]),
    Row("labels outside the list are no priority", [issue(1), issue(2, "p9", "bug")], PRIORITY, [1, 2]),
    Row("age is the creation time, not the number", [issue(1, age=1), issue(2, age=5)], (), [2, 1]),
    Row("same second: the lower number first", [issue(9, age=3), issue(8, age=3)], (), [8, 9]),
    Row("the list's order is the priority", [issue(1, "p0"), issue(2, "p2")], ("p2", "p0"), [2, 1]),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.why for r in ROWS])
def test_pick_order(row: Row) -> None:
    assert [i.number for i in pick_order(row.issues, row.priority)] == row.order


def test_priority_of() -> None:
    assert priority_of({"p2", "p1", "bug"}, PRIORITY) == "p1"
    assert priority_of({"bug"}, PRIORITY) is None
    assert priority_of({"p0"}, ()) is None


issues = st.lists(
    st.builds(issue, st.integers(1, 60), st.sampled_from(["p0", "p1", "p2", "bug", "x"]),
              age=st.integers(0, 30)),
    max_size=12, unique_by=lambda i: i.number,
)


@given(issues, st.permutations(PRIORITY))
def test_order_is_a_permutation_sorted_by_rank_then_age(found: list[Issue], priority: list[str]) -> None:
    ordered = pick_order(found, priority)
    assert sorted(i.number for i in ordered) == sorted(i.number for i in found)
    assert pick_order(list(reversed(found)), priority) == ordered  # the input order does not matter
    rank = [priority.index(p) if (p := priority_of(i.labels, priority)) else len(priority) for i in ordered]
    assert rank == sorted(rank)
    for a, b in zip(ordered, ordered[1:], strict=False):
        if priority_of(a.labels, priority) == priority_of(b.labels, priority):
            assert (a.created_at, a.number) < (b.created_at, b.number)
