"""What a survey of the issues carrying the lock found, and the rows `status` and the
dashboard show of it. Pure data and rules: shared by the reconciler (which makes surveys),
the dashboard and the report layer (which show them), so none of them imports another for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from orion_action.core.issue import Issue, IssueLog
from orion_action.core.liveness import Liveness, Verdict
from orion_action.core.plan import Plan
from orion_action.core.queue import priority_of


@dataclass(frozen=True)
class Survey:
    """One issue carrying the lock, as read, judged and planned."""

    issue: Issue
    log: IssueLog
    now: datetime
    verdicts: dict[str, Verdict]
    plan: Plan
    full_read: bool = True  # False: kept on a fresh beat seen in the repository listing
    listed: int | None = None  # how many comments the full read listed

    @property
    def heartbeat_age(self) -> float | None:
        holder = self.plan.holder
        if holder is None:
            return None
        return max(0.0, round((self.now - holder.updated_at).total_seconds(), 1))

    @property
    def verdict(self) -> Verdict:
        """The plan's verdict, or UNKNOWN with the plan's reason when it reached none."""
        return self.plan.verdict or Verdict(Liveness.UNKNOWN, self.plan.reason)


def live_intervals(surveys: Sequence[Survey], configured: float) -> list[float]:
    """The beat interval of each live claim among `surveys`: the one its record promises (ADR
    0045), the `configured` one where a record is not at hand (core/cost.py prices them)."""
    live = [s for s in surveys if s.plan.verdict and s.plan.verdict.liveness is Liveness.ALIVE]
    return [s.plan.holder.record.interval if s.plan.holder else configured for s in live]


StatusRow = dict[str, "str | int | float | None"]


def status_rows(surveys: Sequence[Survey]) -> list[StatusRow]:
    """The claims as `status` prints them and its JSON documents them (docs/design.md)."""
    rows = []
    for s in surveys:
        holder = s.plan.holder
        rec = holder.record if holder else None
        verdict = s.verdict
        rows.append(
            {
                "issue": s.issue.number,
                "verdict": verdict.liveness.value,
                "reason": verdict.reason,
                "host": rec.holder.host if rec else None,
                "pid": rec.holder.pid if rec else None,
                "heartbeat_age_s": s.heartbeat_age,
                "stage": rec.stage if rec else None,
                "attempt": rec.attempt if rec else None,
                "progress": rec.progress if rec else None,
            }
        )
    return rows


QueueRow = dict[str, "int | str | None"]


def queue_row(issue: Issue, priority: Sequence[str]) -> QueueRow:
    """A queued issue as `status` and the dashboard show it."""
    return {"issue": issue.number, "priority": priority_of(issue.labels, priority), "title": issue.title,
            "created_at": issue.created_at.isoformat() if issue.created_at else None}
