"""The heartbeats' cost (core/cost.py): the arithmetic `reconcile`, `status` and the dashboard
report, and the warning's threshold and advice."""

from __future__ import annotations

import pytest

from orion_action.core.cost import DEFAULT_BUDGET, HeartbeatCost, heartbeat_cost


def test_no_live_claim_costs_nothing_and_shows_the_configured_interval() -> None:
    c = heartbeat_cost([], None, 45)
    assert (c.live, c.beats_per_hour, c.interval, c.budget) == (0, 0, 45, DEFAULT_BUDGET)
    assert c.requests_per_hour == 0 and c.share == 0 and not c.too_high


def test_each_claim_beats_at_its_own_promise_and_the_interval_shown_is_their_mean_rate() -> None:
    c = heartbeat_cost([60, 120], 1000, 30)
    assert c.beats_per_hour == 60 + 30
    assert c.requests_per_hour == 180  # two charged requests a beat
    assert c.interval == pytest.approx(3600 * 2 / 90)
    assert c.share == pytest.approx(0.18)
    assert c.budget == 1000


def test_the_warning_fires_above_80_percent_of_the_request_budget() -> None:
    at = HeartbeatCost(live=1, beats_per_hour=400, interval=9, budget=1000)  # 800/h = 80%: not above
    assert at.share == pytest.approx(0.8) and not at.too_high
    assert HeartbeatCost(live=1, beats_per_hour=401, interval=9, budget=1000).too_high


def test_the_warning_fires_above_80_percent_of_the_write_limit_whatever_the_budget() -> None:
    assert not HeartbeatCost(live=10, beats_per_hour=400, interval=90, budget=100_000).too_high
    assert HeartbeatCost(live=10, beats_per_hour=401, interval=90, budget=100_000).too_high


def test_the_advice_is_the_shortest_whole_interval_within_both_limits() -> None:
    # 50 claims on 1,000/h: requests need 50*3600*2/800 = 450 s; writes 50*3600/400 = 450 s.
    assert HeartbeatCost(live=50, beats_per_hour=6000, interval=30, budget=1000).needed_interval == 450
    # 10 claims on 5,000/h: requests 18 s, writes 90 s: the writes decide.
    assert HeartbeatCost(live=10, beats_per_hour=1200, interval=30, budget=5000).needed_interval == 90
    # A fraction rounds up; never below one second.
    assert HeartbeatCost(live=3, beats_per_hour=1, interval=30, budget=5000).needed_interval == 27
    assert HeartbeatCost(live=0, beats_per_hour=0, interval=30, budget=5000).needed_interval == 1


def test_an_unknown_budget_is_no_share() -> None:
    c = HeartbeatCost(live=1, beats_per_hour=100, interval=36, budget=0)
    assert c.share == 0.0 and c.needed_interval == 9


def test_on_a_small_budget_the_requests_decide_the_advice() -> None:
    # 10 claims on 600/h: requests need 10*3600*2/480 = 150 s; the writes only 90 s.
    assert HeartbeatCost(live=10, beats_per_hour=1200, interval=30, budget=600).needed_interval == 150


def test_a_report_before_github_reports_a_budget_assumes_what_the_holders_assume() -> None:
    """DEFAULT_BUDGET is the budget the holders plan their beats with (core/beat.py, a
    GITHUB_TOKEN's 1,000 an hour), so one claim at 2 min is 60 requests of 1,000: a report
    never assumes more room than the beats it reports on."""
    c = heartbeat_cost([120.0], None, 120.0)
    assert (c.budget, c.share) == (1000, pytest.approx(60 / 1000))
