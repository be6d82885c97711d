"""What the live claims' heartbeats cost GitHub, as `reconcile`, `status` and the dashboard
report it (ADR 0045, 0058). Pure arithmetic: the report layer only formats it.

Each live claim beats at the interval its record promises; a beat is REQUESTS_PER_BEAT
charged requests and one comment edit (a content write). The warning fires when the beats
alone would use more than SHARE of the token's hourly budget or of GitHub's content-write
limit, and names the interval that would bring both back under it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from orion_action.core.beat import DEFAULT_LIMIT, HOUR, REQUESTS_PER_BEAT, SHARE, WRITES_PER_HOUR

# The budget a report assumes until GitHub has reported one: the one the holders plan their
# beats with (a GITHUB_TOKEN's, the smallest), so that the report warns no later than the
# beats stretch.
DEFAULT_BUDGET = DEFAULT_LIMIT


@dataclass(frozen=True)
class HeartbeatCost:
    """The hourly load of the live claims' heartbeats against one token's budget."""

    live: int  # live claims
    beats_per_hour: float  # = comment edits per hour
    interval: float  # the live claims' mean interval, as their records promise
    budget: int  # the token's requests per hour
    warn_share: ClassVar[float] = SHARE  # above this share of a limit, the report warns
    write_limit: ClassVar[int] = WRITES_PER_HOUR  # GitHub's content writes per hour per identity

    @property
    def requests_per_hour(self) -> float:
        return self.beats_per_hour * REQUESTS_PER_BEAT

    @property
    def share(self) -> float:
        """The share of the token's budget the beats use (none of an unknown budget)."""
        return self.requests_per_hour / self.budget if self.budget else 0.0

    @property
    def too_high(self) -> bool:
        """Whether the beats would use more than SHARE of the budget or of the write limit."""
        return self.share > self.warn_share or self.beats_per_hour > self.warn_share * self.write_limit

    @property
    def needed_interval(self) -> int:
        """The shortest whole interval (seconds, at least 1) at which the live claims' beats
        stay within SHARE of both limits."""
        need = max(
            self.live * HOUR * REQUESTS_PER_BEAT / (SHARE * self.budget) if self.budget else 0.0,
            self.live * HOUR / (SHARE * WRITES_PER_HOUR),
        )
        return max(math.ceil(need), 1)


def heartbeat_cost(intervals: Sequence[float], budget: int | None, configured: float) -> HeartbeatCost:
    """The cost of live claims beating at `intervals` (one per claim, seconds), against
    `budget` requests per hour (None: not reported yet, DEFAULT_BUDGET is assumed). With no
    live claim the interval shown is the `configured` one."""
    beats = sum(HOUR / i for i in intervals)
    every = HOUR * len(intervals) / beats if beats else configured
    return HeartbeatCost(len(intervals), beats, every, budget or DEFAULT_BUDGET)
