"""core.dashboard at its edges: the 24-hour window, the row limit, ages and times as shown,
which section an issue lands in, the job summary's extra columns and why an issue failed, for
every kind of last event (docs/adr/0020)."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from test_dashboard_render import COST, HOLDER, NOW, WORKING, tomb, view

from orion_action.core.dashboard import (
    FINISHED_WINDOW,
    MAX_ROWS,
    REASON_MAX,
    CachedReason,
    Failed,
    Finished,
    Queued,
    _age,
    _time,
    failed_reason,
    finished_recently,
    one_section_each,
    parse_reasons,
    render_body,
    render_summary,
)
from orion_action.core.issue import ClaimEntry, IssueLog
from orion_action.core.record import HOLDER_END, ClaimRecord, ReleaseAction, State


def test_finished_means_within_the_last_24_hours_inclusive() -> None:
    assert timedelta(hours=24) == FINISHED_WINDOW
    edge = Finished(1, "edge", NOW - FINISHED_WINDOW, False)
    older = Finished(2, "older", NOW - FINISHED_WINDOW - timedelta(seconds=1), False)
    assert finished_recently([older, edge], NOW) == [edge]


def test_a_table_of_exactly_the_limit_is_not_cut() -> None:
    assert MAX_ROWS == 100
    body = render_body(view(queue=[Queued(n, None) for n in range(1, MAX_ROWS + 1)], working=[]), NOW, {})
    assert f"| {MAX_ROWS} | #{MAX_ROWS} | - |" in body and "more._" not in body
    over = render_body(view(queue=[Queued(n, None) for n in range(1, MAX_ROWS + 2)], working=[]), NOW, {})
    assert "… and 1 more." in over


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(None, "-"), (0, "0s"), (119.9, "119s"), (120, "2m"), (7199, "119m"), (7200, "2h 0m"), (7260, "2h 1m")],
)
def test_ages(seconds: float | None, shown: str) -> None:
    assert _age(seconds) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "-"),
        (datetime(2026, 12, 3, 9, 5), "2026-12-03 09:05 UTC"),  # no zone: UTC
        (datetime.fromisoformat("2026-12-03T10:05:00+01:00"), "2026-12-03 09:05 UTC"),
        ("2026-12-03T09:05:00Z", "2026-12-03 09:05 UTC"),
        ("not a time", "not a time"),
        ("<b>", "\\<b\\>"),  # an unreadable value is shown as escaped text
    ],
)
def test_times(value: datetime | str | None, shown: str) -> None:
    assert _time(value) == shown


def test_an_issue_failed_and_finished_is_shown_as_failed_and_a_dead_holder_as_working() -> None:
    v = one_section_each(view(queue=[], working=[replace(WORKING, issue=9, verdict="dead")],
                              failed=[Failed(9, "x", "r"), Failed(4, "y", "r")],
                              finished=[Finished(4, "y", NOW, True), Finished(6, "z", NOW, True)]))
    assert [w.issue for w in v.working] == [9]
    assert [f.issue for f in v.failed] == [4]
    assert [f.issue for f in v.finished] == [6]


def test_only_the_summary_shows_ages_and_both_show_progress() -> None:
    body = render_body(view(), NOW, {})
    summary = render_summary(view(), NOW, "o/r")
    queue_head = "| order | issue | title | priority |"
    assert queue_head + "\n" in body and queue_head + " issue age |" in summary
    assert "| outcome | links | last update |\n" in body
    assert "| outcome | links | last update | ago |" in summary
    assert "| started | progress |" in body
    assert "| started | elapsed | heartbeat age | progress |" in summary


def test_a_queued_time_without_a_zone_is_utc() -> None:
    summary = render_summary(view(queue=[Queued(5, None, "t", "2026-12-01T12:00:00")]), NOW, "o/r")
    assert "| 1 | [#5](https://github.com/o/r/issues/5) | t | - | 48h 0m |" in summary


def test_no_budget_known_is_no_share() -> None:
    summary = render_summary(view(cost=replace(COST, load=replace(COST.load, budget=0))), NOW, "o/r")
    assert "(0% of 0/h)" in summary


def test_the_reason_cache_is_written_in_key_order_and_only_a_mapping_is_read() -> None:
    body = render_body(view(), NOW, {9: CachedReason(1, "a"), 12: CachedReason(2, "b")})
    assert '{"12":{"c":2,"r":"b"},"9":{"c":1,"r":"a"}}' in body
    assert parse_reasons("x\n<!-- orion-dashboard-reasons\n[1, 2]\n-->\n") == {}


def _noted(cid: int, state: State, note: str | None = None) -> ClaimEntry:
    rec = ClaimRecord(f"t{cid}", state, HOLDER, "", "", note=note)
    return ClaimEntry(cid, rec, NOW, NOW)


@pytest.mark.parametrize(
    ("log", "why"),
    [
        (IssueLog(claims=(_noted(1, State.RUNNING, "slow"),),
                  tombstones=(tomb(2, "t1", ReleaseAction.FINISHED, "", by=HOLDER_END),)),
         "the run was finished: slow"),  # an end marker without an exit code
        (IssueLog(claims=(_noted(1, State.RUNNING),),
                  tombstones=(tomb(2, "t1", ReleaseAction.INTERRUPTED, "", by=HOLDER_END, exit_code=124),)),
         "the run was interrupted"),  # an exit code on a hand-back is no "command exited"
        (IssueLog(tombstones=(tomb(2, "gone", ReleaseAction.CANCELLED, "", by=HOLDER_END),)),
         "the run was cancelled"),  # the claim comment is gone: no note
        (IssueLog(claims=(_noted(1, State.CANCELLED, "by alice"),)),
         "the run was cancelled (attempt 1): by alice"),
        (IssueLog(claims=(_noted(1, State.LOST, "fenced"),)), "the run was lost (attempt 1): fenced"),
        (IssueLog(claims=(_noted(1, State.INTERRUPTED),)), "the run was interrupted (attempt 1)"),
    ],
)
def test_failed_reason_for_each_last_event(log: IssueLog, why: str) -> None:
    assert failed_reason(log) == why


def test_a_reason_of_exactly_the_limit_is_not_cut() -> None:
    note = "x" * (REASON_MAX - len("the run was lost (attempt 1): "))
    exact = failed_reason(IssueLog(claims=(_noted(1, State.LOST, note),)))
    assert len(exact) == REASON_MAX and not exact.endswith("…")
    longer = failed_reason(IssueLog(claims=(_noted(1, State.LOST, note + "y"),)))
    assert len(longer) == REASON_MAX and longer.endswith("…")


def test_a_time_without_a_zone_is_utc_whatever_the_machines_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert _time(datetime(2026, 12, 3, 9, 5)) == "2026-12-03 09:05 UTC"
    finally:
        monkeypatch.undo()
        time.tzset()
