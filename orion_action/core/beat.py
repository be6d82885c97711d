"""How often a holder beats, and what it promises (ADR 0045).

GitHub, not the machine, bounds how many claims one identity can hold: every beat is a
comment edit, and GitHub caps content writes near 80 a minute and 500 an hour per identity
(secondary limits) besides the primary budget per token (1,000 an hour per repository for a
GITHUB_TOKEN, 5,000 for an App). A fixed beat that suits ten claims breaks fifty. So a holder
chooses its beat from what it can see, the number of live claims in the repository and the
budget GitHub reports left, within the configuration's bounds, and writes the promise (the
interval and the matching stale_after) into its record with that beat; judges use the
record's promise. Pure: time and every observation are parameters.

The decision table (the beat is the longest that a row asks for, within
[heartbeat.interval, heartbeat.max_interval]):

| row        | asks for                                                             |
|------------|----------------------------------------------------------------------|
| base       | heartbeat.interval                                                   |
| writes     | live beats fit in SHARE of 500 writes/h, less what runs' claims and endings take |
| requests   | live beats fit in SHARE of the token's limit, less what runs take    |
| remaining  | live beats until the window resets fit in what is left above (1 - SHARE) of the limit; |
|            | nothing left: beat after the reset                                   |

stale_after scales with the beat (the configured ratio holds), and a new promise never ends
before the one it replaces (`last_sent + previous stale_after`): whatever edit a judge sees,
its deadline is no earlier than the holder's lease assumed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# GitHub's secondary limit on requests that create content, per identity ("Secondary rate
# limits" in the REST API's rate-limit documentation); comment edits are assumed to count.
WRITES_PER_HOUR = 500
WRITES_PER_MINUTE = 80
HOUR = 3600.0
# A GITHUB_TOKEN's primary budget per repository: the budget assumed until GitHub reports one.
DEFAULT_LIMIT = 1000
# Of each limit, beats plan to use at most this share with the runs' own costs (the rest is
# headroom for people, other tools and bursts).
SHARE = 0.8
# Charged requests and content writes of one steady beat (ADR 0044: the issue read is a free
# 304 while the issue is unchanged).
REQUESTS_PER_BEAT = 2
WRITES_PER_BEAT = 1
# What each live claim's run costs besides its beats, per hour: a claim and an ending are
# about 13 requests and 8 writes, and a run is assumed to last at least 1.6 hours (runs
# turning over faster spend more; GitHub's Retry-After is then the backstop: the adapter waits
# it out, and a beat it fails is an outage, which spends no attempt, ADR 0019). A reconcile
# pass costs little: 2 x ceil(N/100) + 3 requests (ADR 0018).
RUN_REQUESTS_PER_CLAIM_H = 8.0
RUN_WRITES_PER_CLAIM_H = 5.0


@dataclass(frozen=True)
class Bounds:
    """The configuration's bounds: the beat at low load and its stale_after, the longest beat."""

    interval: float
    stale_after: float
    max_interval: float


@dataclass(frozen=True)
class Load:
    """What a holder or a claimer sees. `live`: the claims holding issues in the repository
    now, as the caller counts them: a holder's own is among them (`wanted` counts at
    least 1), a claimer's is not yet (`refusal` adds it). `limit`/`remaining`/`reset_in`: the
    primary budget as GitHub last reported it (None: not reported)."""

    live: int = 1
    limit: int | None = None
    remaining: int | None = None
    reset_in: float | None = None


@dataclass(frozen=True)
class Promise:
    """What a record promises: the next beat within `interval`, and that it is alive while
    its last beat is younger than `stale_after`. `why`: the row that set the interval."""

    interval: float
    stale_after: float
    why: str = "base"


def first_promise(bounds: Bounds) -> Promise:
    """The claim's promise, before anything is known of the load."""
    return Promise(bounds.interval, bounds.stale_after)


def _fit(live: int, per_beat: float, budget: float, window_s: float = HOUR) -> float:
    """The beat at which `live` claims spend `budget` in `window_s` seconds, `per_beat` each
    beat; infinite when there is no budget."""
    return math.inf if budget <= 0 else live * per_beat * window_s / budget


def wanted(bounds: Bounds, load: Load) -> tuple[float, str]:
    """The longest beat any row of the table asks for, and that row's name (unbounded)."""
    live = max(1, load.live)
    limit = load.limit or DEFAULT_LIMIT
    rows = [
        ("base", bounds.interval),
        ("writes", _fit(live, WRITES_PER_BEAT, SHARE * WRITES_PER_HOUR - live * RUN_WRITES_PER_CLAIM_H)),
        ("requests", _fit(live, REQUESTS_PER_BEAT, SHARE * limit - live * RUN_REQUESTS_PER_CLAIM_H)),
    ]
    if load.remaining is not None and load.reset_in is not None and load.reset_in > 0:
        usable = load.remaining - (1 - SHARE) * limit
        need = _fit(live, REQUESTS_PER_BEAT, usable, load.reset_in)
        rows.append(("remaining", load.reset_in + 1 if need > load.reset_in else need))
    why, interval = max(rows, key=lambda r: r[1])
    return interval, why


def next_promise(
    bounds: Bounds, load: Load, previous: Promise, since_last_sent: float
) -> Promise:
    """The promise the next beat writes. `previous`: the promise of the last beat that
    completed (or the claim's), sent `since_last_sent` seconds ago.

    The interval is the table's, within the bounds; stale_after keeps the configured ratio to
    it, and never ends before the previous promise: a judge that reads the new record (its
    `updated_at` is no earlier than now) presumes death no earlier than one that read the old
    one, so the lease the holder renewed on the old promise stays inside every judge's view.
    A shrinking beat therefore shrinks its stale_after gradually (by at most the time since
    the last beat)."""
    interval, why = wanted(bounds, load)
    interval = min(max(interval, bounds.interval), bounds.max_interval)
    stale_after = interval * bounds.stale_after / bounds.interval
    stale_after = max(stale_after, previous.stale_after - max(0.0, since_last_sent))
    return Promise(interval, stale_after, why if interval > bounds.interval else "base")


def renew_deadline(stale_after: float) -> float:
    """A holder gives up this long after its last completed beat was sent without another:
    before anyone may presume it dead on the promise that beat wrote (Config.renew_deadline
    for a stretched promise)."""
    return stale_after * 2 / 3


def refusal(bounds: Bounds, load: Load) -> str | None:
    """Why a new claim must wait (None: it fits), judged before anything is posted: with
    `load.live` claims already live, one more must still fit SHARE of the writes and of the
    token's requests at the longest beat, and the token must be above its (1 - SHARE) floor.
    Holders then never meet a refusal that outlasts their lease; the queue waits instead
    (issue 19: a limit never costs a run, ADR 0060)."""
    live = max(0, load.live) + 1
    per_hour = HOUR / bounds.max_interval
    limit = load.limit or DEFAULT_LIMIT
    longest = f"{bounds.max_interval / 60:g} min"
    writes = live * (per_hour * WRITES_PER_BEAT + RUN_WRITES_PER_CLAIM_H)
    if writes > SHARE * WRITES_PER_HOUR:
        return (f"{live - 1} claims are live: one more would need about {writes:.0f} content writes an "
                f"hour at the longest beat ({longest}), over {SHARE:.0%} of GitHub's {WRITES_PER_HOUR}")
    requests = live * (per_hour * REQUESTS_PER_BEAT + RUN_REQUESTS_PER_CLAIM_H)
    if requests > SHARE * limit:
        return (f"{live - 1} claims are live: one more would need about {requests:.0f} requests an hour "
                f"at the longest beat ({longest}), over {SHARE:.0%} of the token's {limit}")
    if load.remaining is not None and load.remaining < (1 - SHARE) * limit:
        wait = f" (it resets in {load.reset_in:.0f}s)" if load.reset_in is not None else ""
        return (f"the token has {load.remaining} of {limit} requests left{wait}, "
                f"below the {1 - SHARE:.0%} kept for live claims")
    return None
