"""The adaptive heartbeat rule (orion_action/core/beat.py, ADR 0045): each row of its decision
table, the bounds, and the promise that never ends before the one it replaces."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orion_action.core.beat import (
    DEFAULT_LIMIT,
    WRITES_PER_HOUR,
    WRITES_PER_MINUTE,
    Bounds,
    Load,
    Promise,
    first_promise,
    next_promise,
    refusal,
    renew_deadline,
    wanted,
)

DEFAULT = Bounds(interval=120.0, stale_after=600.0, max_interval=1800.0)
FIRST = first_promise(DEFAULT)
TOKEN = 1000  # a GITHUB_TOKEN's requests an hour per repository
APP = 5000


def fresh(live: int, limit: int = TOKEN) -> Load:
    """`live` claims at the start of a rate-limit window, the budget untouched."""
    return Load(live=live, limit=limit, remaining=limit, reset_in=3600.0)


def test_a_few_claims_beat_at_the_configured_interval() -> None:
    p = next_promise(DEFAULT, fresh(10), FIRST, 120.0)
    assert (p.interval, p.stale_after, p.why) == (120.0, 600.0, "base")


@pytest.mark.parametrize("limit", [TOKEN, APP])
def test_fifty_claims_stretch_to_fit_the_identitys_content_writes(limit: int) -> None:
    # 80 % of 500 writes/h, less 5 an hour for each run's own writes, leaves 150 for 50 beats.
    p = next_promise(DEFAULT, fresh(50, limit), FIRST, 120.0)
    assert (p.interval, p.stale_after, p.why) == (1200.0, 6000.0, "writes")


def test_a_small_request_budget_decides_when_it_binds_first() -> None:
    interval, why = wanted(DEFAULT, fresh(10, limit=600))
    # 10 claims x 2 requests x 3600 s / (480 - 10 x 8) requests
    assert (interval, why) == (180.0, "requests")


def test_the_remaining_budget_stretches_the_beat_before_github_refuses() -> None:
    # 250 left of 1,000 with 10 minutes to the reset: 50 above the 20 % floor, for 10 claims.
    load = Load(live=10, limit=TOKEN, remaining=250, reset_in=600.0)
    p = next_promise(DEFAULT, load, FIRST, 120.0)
    assert (p.interval, p.why) == (pytest.approx(240.0), "remaining")  # 10 x 2 x 600 / 50


def test_nothing_left_above_the_floor_beats_after_the_reset() -> None:
    load = Load(live=2, limit=TOKEN, remaining=150, reset_in=700.0)
    p = next_promise(DEFAULT, load, FIRST, 120.0)
    assert (p.interval, p.why) == (701.0, "remaining")
    assert p.stale_after == pytest.approx(701.0 * 5)


def test_an_unreported_budget_assumes_a_github_token() -> None:
    assert wanted(DEFAULT, Load(live=50)) == wanted(DEFAULT, fresh(50, TOKEN))


def test_more_claims_than_one_identity_carries_beat_at_the_longest_interval() -> None:
    p = next_promise(DEFAULT, fresh(100, APP), FIRST, 120.0)
    assert (p.interval, p.stale_after) == (1800.0, 9000.0)


def test_bounds_without_room_never_stretch() -> None:
    fixed = Bounds(interval=120.0, stale_after=600.0, max_interval=120.0)
    p = next_promise(fixed, fresh(100), first_promise(fixed), 120.0)
    assert (p.interval, p.stale_after, p.why) == (120.0, 600.0, "base")


def test_a_shrinking_promise_never_ends_before_the_one_it_replaces() -> None:
    stretched = Promise(1200.0, 6000.0, "writes")
    p = next_promise(DEFAULT, fresh(1), stretched, 1200.0)
    assert p.interval == 120.0  # beat often again at once...
    assert p.stale_after == 4800.0  # ...but promise no earlier end than the last beat did
    q = next_promise(DEFAULT, fresh(1), p, 120.0)
    assert q.stale_after == 4680.0


def test_the_renew_deadline_is_two_thirds_of_the_promise() -> None:
    assert renew_deadline(6000.0) == 4000.0


@given(
    live=st.integers(min_value=1, max_value=300),
    limit=st.sampled_from([60, 1000, 5000, 15000]),
    remaining=st.integers(min_value=0, max_value=15000),
    reset_in=st.floats(min_value=0.0, max_value=3600.0),
    previous=st.floats(min_value=120.0, max_value=20000.0),
    since=st.floats(min_value=0.0, max_value=20000.0),
    max_interval=st.sampled_from([120.0, 600.0, 1800.0, 7200.0]),
)
def test_every_promise_is_within_bounds_and_outlasts_the_last(
    live: int, limit: int, remaining: int, reset_in: float, previous: float, since: float, max_interval: float
) -> None:
    bounds = Bounds(120.0, 600.0, max_interval)
    load = Load(live, limit, min(remaining, limit), reset_in)
    p = next_promise(bounds, load, Promise(previous / 5, previous), since)
    assert bounds.interval <= p.interval <= bounds.max_interval
    assert p.stale_after >= 5 * p.interval * (1 - 1e-12)  # the configured ratio, or more
    # The judge's deadline never moves earlier (but for float rounding of since's subtraction:
    # a femtosecond, where records and GitHub's stamps count microseconds at best).
    assert since + p.stale_after >= previous * (1 - 1e-12)


def test_a_new_claim_waits_once_one_more_would_not_fit_at_the_longest_beat() -> None:
    """ADR 0060: at the 30 min beat a claim needs 2 beat writes and about 5 run writes an hour:
    57 claims fit 80 % of 500 writes, a 58th does not; the requests bind later (about 12 an
    hour each: 66 on a GITHUB_TOKEN, so the writes bind first there; a smaller budget binds)."""
    assert refusal(DEFAULT, fresh(56)) is None
    why = refusal(DEFAULT, fresh(57))
    assert why is not None and "content writes" in why
    assert refusal(DEFAULT, fresh(57, APP)) is not None  # the writes are per identity, whatever the token
    slow = Bounds(interval=120.0, stale_after=600.0, max_interval=7200.0)  # 0.5 beat writes an hour
    why = refusal(slow, fresh(60, 600))  # 9 requests an hour each: 53 fit 80 % of 600
    assert why is not None and "requests an hour" in why
    assert refusal(slow, fresh(60, APP)) is None
    twenty = Bounds(interval=120.0, stale_after=600.0, max_interval=1200.0)  # 3 + 5 writes an hour each
    assert refusal(twenty, fresh(49)) is None  # 50 claims: exactly 80 % of 500 still fits
    assert refusal(twenty, fresh(50)) is not None


def test_a_new_claim_waits_while_the_token_is_below_its_floor() -> None:
    assert refusal(DEFAULT, Load(live=1, limit=TOKEN, remaining=201, reset_in=900.0)) is None
    why = refusal(DEFAULT, Load(live=1, limit=TOKEN, remaining=199, reset_in=900.0))
    assert why is not None and "199 of 1000" in why and "resets in 900s" in why
    at_floor = Load(live=1, limit=TOKEN, remaining=200, reset_in=900.0)
    assert refusal(DEFAULT, at_floor) is None  # the floor itself is still usable
    unreported = refusal(DEFAULT, Load(live=1, limit=TOKEN, remaining=10, reset_in=None))
    assert unreported is not None and "resets" not in unreported


def test_the_planned_limits_are_githubs_published_ones() -> None:
    """The module's figures are GitHub's documented secondary limits on content writes per
    identity (80 a minute, 500 an hour; bench/capacity.py paces its writes by the first) and a
    GITHUB_TOKEN's primary budget (1,000 requests an hour per repository)."""
    assert (WRITES_PER_MINUTE, WRITES_PER_HOUR, DEFAULT_LIMIT) == (80, 500, 1000)


def test_an_unreported_limit_is_a_github_tokens_for_the_remaining_row_and_the_floor() -> None:
    unreported = Load(live=10, limit=None, remaining=250, reset_in=600.0)
    assert wanted(DEFAULT, unreported) == wanted(DEFAULT, Load(10, TOKEN, 250, 600.0))
    why = refusal(DEFAULT, Load(live=1, limit=None, remaining=199, reset_in=900.0))
    assert why is not None and "199 of 1000 requests left" in why


# Bounds whose longest beat is 12 s: 300 beat writes and 5 run writes an hour a claim, so one
# claim fits 80 % of 500 writes and two do not.
TWELVE = Bounds(interval=6.0, stale_after=30.0, max_interval=12.0)


def test_a_load_with_no_count_is_the_holder_alone() -> None:
    why = refusal(TWELVE, Load())  # the holder's own claim is live: one more makes two
    assert why is not None
    assert why.startswith("1 claims are live: one more would need about 610 content writes")


def test_the_first_claim_in_a_quiet_repository_fits_where_a_second_would_not() -> None:
    assert refusal(TWELVE, Load(live=0)) is None
    assert refusal(TWELVE, Load(live=1)) is not None


def test_a_live_count_below_zero_is_read_as_none() -> None:
    six = Bounds(interval=6.0, stale_after=30.0, max_interval=6.0)  # 605 writes an hour: not even one fits
    why = refusal(six, Load(live=-1))
    assert why is not None
    assert why.startswith("0 claims are live: one more would need about 605 content writes")
    assert why == refusal(six, Load(live=0))


def test_a_holder_that_sees_no_live_claims_counts_itself() -> None:
    short = Bounds(interval=1.0, stale_after=5.0, max_interval=1800.0)
    # one claim's beat in 80 % of 500 writes less its run's 5: 3600 / 395 s
    assert wanted(short, Load(live=0)) == wanted(short, Load(live=1)) == (3600 / 395, "writes")


def test_a_request_budget_under_one_request_an_hour_still_asks_for_a_finite_beat() -> None:
    """_fit is infinite only when nothing is left: 80 % of a 101-request token, less 10 runs'
    8 requests an hour each, leaves 0.8 of a request for 10 claims' 2 a beat."""
    interval, why = wanted(DEFAULT, Load(live=10, limit=101))
    assert (interval, why) == (pytest.approx(10 * 2 * 3600 / 0.8), "requests")


def test_a_clock_stepping_back_never_extends_the_previous_promise() -> None:
    stretched = Promise(1200.0, 6000.0, "writes")
    p = next_promise(DEFAULT, fresh(10), stretched, -30.0)  # the last beat seems 30 s in the future
    assert (p.interval, p.stale_after) == (120.0, 6000.0)


def test_the_requests_refusal_counts_two_requests_a_beat_and_keeps_the_share_itself() -> None:
    """At the 30 min beat a claim takes 2 beats x 2 requests + 8 run requests = 12 an hour:
    40 claims take exactly 80 % of a 600-request token (still fits), a 41st does not."""
    assert refusal(DEFAULT, Load(live=39, limit=600)) is None
    why = refusal(DEFAULT, Load(live=40, limit=600))
    assert why is not None
    assert why.startswith("40 claims are live: one more would need about 492 requests an hour")
