"""Queue order (orion_action/core/queue.py): priority label first, then age; across several
repositories the same, then the repositories' order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orion_action.core.issue import Issue
from orion_action.core.queue import (
    FIRST_PICK_SPREAD,
    first_pick,
    next_pick,
    pick_order,
    pick_order_across,
    priority_of,
    relist,
)

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


# -- across repositories (run --next --repo A --repo B) -------------------------------------------


def test_across_repositories_priority_then_age_then_repository_order_then_number() -> None:
    pairs = [("o/a", issue(1, age=50)), ("o/b", issue(1, "p1", age=10)), ("o/a", issue(2, "p1", age=20)),
             ("o/b", issue(2, "p0", age=1)), ("o/b", issue(3, age=50)), ("o/a", issue(3, age=50)),
             ("o/b", issue(4, age=60))]
    got = [(r, i.number) for r, i in pick_order_across(pairs, PRIORITY, ["o/b", "o/a"])]
    # p0 first; then p1, the older first (a#2 is 20 minutes old, b#1 10); then the plain ones
    # by age: b#4 is oldest, then a#1, a#3, b#3 from the same minute: o/b is named first, so
    # b#3 before a#1 and a#3, which go by number.
    assert got == [("o/b", 2), ("o/a", 2), ("o/b", 1), ("o/b", 4), ("o/b", 3), ("o/a", 1), ("o/a", 3)]


pairs_st = st.lists(
    st.tuples(st.sampled_from(["o/a", "o/b", "o/c"]),
              st.builds(issue, st.integers(1, 60), st.sampled_from(["p0", "p1", "p2", "bug", "x"]),
                        age=st.integers(0, 30))),
    max_size=15, unique_by=lambda p: (p[0], p[1].number),
)


@given(pairs_st, st.permutations(PRIORITY), st.permutations(["o/a", "o/b", "o/c"]))
def test_across_repositories_is_pick_order_within_each_and_ranks_first(
        pairs: list[tuple[str, Issue]], priority: list[str], repos: list[str]) -> None:
    ordered = pick_order_across(pairs, priority, repos)
    assert sorted((r, i.number) for r, i in ordered) == sorted((r, i.number) for r, i in pairs)
    assert pick_order_across(list(reversed(pairs)), priority, repos) == ordered
    for name in repos:  # one repository's issues keep the single-repository order
        mine = [i for r, i in pairs if r == name]
        assert [i for r, i in ordered if r == name] == pick_order(mine, priority)

    def key(pair: tuple[str, Issue]) -> tuple[int, datetime, int, int]:
        top = priority_of(pair[1].labels, priority)
        return (priority.index(top) if top else len(priority), pair[1].created_at, repos.index(pair[0]),
                pair[1].number)

    keys = [key(p) for p in ordered]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


# -- spreading workers over the queue (issue 19) ---------------------------------------------------

@given(st.integers(1, 30), st.integers(0, 29), st.lists(st.integers(1, 9), max_size=40))
def test_next_pick_visits_every_issue_once_without_listing_again(count: int, start: int,
                                                                 rivals: list[int]) -> None:
    at: int | None = start % count
    tried: list[int] = []
    steps = iter(rivals)
    while at is not None:
        assert at not in tried and 0 <= at < count
        tried.append(at)
        at = next_pick(count, tried, at, next(steps, 1))
    assert sorted(tried) == list(range(count))


@given(st.integers(2, 30), st.integers(0, 29), st.integers(1, 8))
def test_the_losers_of_one_race_go_to_different_issues(count: int, at: int, losers: int) -> None:
    at %= count
    nexts = [next_pick(count, [at], at, rivals) for rivals in range(1, losers + 1)]
    if at + losers < count:  # room ahead of the lost issue for every loser
        assert len(set(nexts)) == losers
        assert nexts == list(range(at + 1, at + losers + 1))


# -- first picks within one position (issue 19, ADR 0071) ------------------------------------------


class FirstRow(NamedTuple):
    why: str
    queued: list[Issue]  # in pick order
    seed: int
    index: int
    crowd: bool = True  # other workers seen


FIRST_ROWS = [
    FirstRow("alone: the head, whatever the seed", [issue(1), issue(2), issue(3)], 7, 0, crowd=False),
    FirstRow("an even seed takes the head", [issue(1), issue(2), issue(3)], 4, 0),
    FirstRow("an odd seed takes the issue after it", [issue(1), issue(2), issue(3)], 7, 1),
    FirstRow("one issue: the head, whatever the seed", [issue(1)], 7, 0),
    FirstRow("nothing queued: 0", [], 7, 0),
    FirstRow("never past a higher priority: the next is lower", [issue(1, "p0"), issue(2, "p1")], 1, 0),
    FirstRow("the next has no priority, the head has one", [issue(1, "p2"), issue(2)], 1, 0),
    FirstRow("same priority: age within one position", [issue(5, "p1"), issue(2, "p1")], 1, 1),
    FirstRow("neither has a priority", [issue(3), issue(8)], 3, 1),
]


@pytest.mark.parametrize("row", FIRST_ROWS, ids=[r.why for r in FIRST_ROWS])
def test_first_pick(row: FirstRow) -> None:
    assert first_pick(row.queued, PRIORITY, row.seed, row.crowd) == row.index


@given(issues, st.permutations(PRIORITY), st.integers(0, 2**32), st.booleans())
def test_a_first_pick_is_within_one_position_and_never_jumps_a_priority(
        found: list[Issue], priority: list[str], seed: int, crowd: bool) -> None:
    ordered = pick_order(found, priority)
    at = first_pick(ordered, priority, seed, crowd)
    assert crowd or at == 0
    assert 0 <= at <= max(0, min(FIRST_PICK_SPREAD - 1, len(ordered) - 1))
    if ordered:
        assert all(priority_of(i.labels, priority) == priority_of(ordered[0].labels, priority)
                   for i in ordered[: at + 1])


def test_seeds_spread_first_picks_over_the_head_and_the_next() -> None:
    queued = [issue(1), issue(2), issue(3)]
    assert {first_pick(queued, (), seed, True) for seed in range(8)} == {0, 1}


class NextRow(NamedTuple):
    why: str
    count: int
    tried: list[int]
    after: int
    rivals: int
    stride: int
    index: int | None


NEXT_ROWS = [
    NextRow("passed over: the next one", 10, [0], 0, 1, 1, 1),
    NextRow("lost to one rival at the head, stride 2: two on", 10, [0], 0, 1, 2, 2),
    NextRow("lost to one rival at the next issue, stride 2", 10, [1], 1, 1, 2, 3),
    NextRow("three rivals, stride 2", 10, [0], 0, 3, 2, 6),
    NextRow("past the end: the first not tried", 4, [1], 1, 2, 2, 0),
    NextRow("past the end, the head tried: the next not tried", 4, [0, 2], 2, 1, 2, 1),
    NextRow("rivals of 0 count as 1", 10, [0], 0, 0, 1, 1),
    NextRow("rivals of 0 count as 1, from an index not tried", 10, [], 3, 0, 1, 4),
    NextRow("a stride of 0 counts as 1, from an index not tried", 10, [], 3, 1, 0, 4),
    NextRow("everything tried: none", 2, [0, 1], 1, 1, 2, None),
]


@pytest.mark.parametrize("row", NEXT_ROWS, ids=[r.why for r in NEXT_ROWS])
def test_next_pick(row: NextRow) -> None:
    assert next_pick(row.count, row.tried, row.after, row.rivals, row.stride) == row.index


@given(st.integers(2, 30), st.integers(1, 8), st.integers(1, 8))
def test_losers_of_the_two_first_races_go_to_different_issues(count: int, head: int, second: int) -> None:
    """The losers at the head and at the issue after it (first picks spread over both), each
    skipping FIRST_PICK_SPREAD places a rival, never meet where the queue has room for all."""
    nexts = [next_pick(count, [0], 0, r, FIRST_PICK_SPREAD) for r in range(1, head + 1)]
    nexts += [next_pick(count, [1], 1, r, FIRST_PICK_SPREAD) for r in range(1, second + 1)]
    if 1 + FIRST_PICK_SPREAD * max(head, second) < count:
        assert len(set(nexts)) == len(nexts)


@pytest.mark.parametrize(("passed", "again"), [(0, False), (1, False), (2, True), (3, True)],
                         ids=["nothing passed over", "one passed over: walk on", "two in a row: list again",
                              "more"])
def test_relist_after_two_issues_passed_over_in_a_row(passed: int, again: bool) -> None:
    assert relist(passed) is again
