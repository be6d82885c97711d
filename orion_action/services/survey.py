"""What a survey of the issues carrying the lock found, and the rows `status` and the
dashboard show of it. Shared by the reconciler, the dashboard and the report layer, so none of
them imports another for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from orion_action.config import Config
from orion_action.core.issue import Issue, IssueLog
from orion_action.core.liveness import Liveness, Verdict
from orion_action.core.plan import Plan
from orion_action.core.queue import pick_order, priority_of
from orion_action.ports import Budget, GitHubPort
from orion_action.services.claiming import is_queued

BUDGET_WARN_SHARE = 0.8
DEFAULT_BUDGET = 5000  # requests per hour of a personal or App token
CONTENT_BUDGET = 500  # content-creation writes per hour per identity (comment edits count)
REQUESTS_PER_BEAT = 2


@dataclass(frozen=True)
class Spent:
    """What a client had spent at one moment (the cost lines report it)."""

    requests: int
    not_modified: int
    budget: Budget

    @classmethod
    def of(cls, gh: GitHubPort) -> Spent:
        return cls(gh.requests, gh.not_modified, gh.budget)


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


def heartbeat_load(config: Config, surveys: Sequence[Survey]) -> tuple[int, float]:
    """The live claims among `surveys`, and the heartbeats they make per hour: at the interval
    each record promises (ADR 0045), the configured one where a record is not at hand."""
    live = [s for s in surveys if s.plan.verdict and s.plan.verdict.liveness is Liveness.ALIVE]
    beats = sum(3600 / (s.plan.holder.record.interval if s.plan.holder else config.heartbeat_interval)
                for s in live)
    return len(live), beats


def status_rows(surveys: list[Survey]) -> list[dict[str, str | int | float | None]]:
    rows = []
    for s in surveys:
        holder = s.plan.holder
        rec = holder.record if holder else None
        verdict = s.plan.verdict or Verdict(Liveness.UNKNOWN, s.plan.reason)
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


def queue_rows(gh: GitHubPort, config: Config) -> list[QueueRow]:
    """The queued issues in the order `run --next` takes them (one listing per 100)."""
    lab = config.labels
    queued = [i for i in gh.list_issues(lab.queue) if is_queued(i, config)]
    return [queue_row(i, lab.priority) for i in pick_order(queued, lab.priority)]
