"""The reads behind a survey's report: what a client had spent, and the queue in pick order.
The survey itself and its rows are pure (core/survey.py)."""

from __future__ import annotations

from dataclasses import dataclass

from orion_action.config import Config
from orion_action.core.queue import pick_order
from orion_action.core.survey import QueueRow, queue_row
from orion_action.ports import Budget, GitHubPort
from orion_action.services.claiming import is_queued


@dataclass(frozen=True)
class Spent:
    """What a client had spent at one moment (the cost lines report it)."""

    requests: int
    not_modified: int
    budget: Budget

    @classmethod
    def of(cls, gh: GitHubPort) -> Spent:
        return cls(gh.requests, gh.not_modified, gh.budget)


def queue_rows(gh: GitHubPort, config: Config) -> list[QueueRow]:
    """The queued issues in the order `run --next` takes them (one listing per 100)."""
    lab = config.labels
    queued = [i for i in gh.list_issues(lab.queue) if is_queued(i, config)]
    return [queue_row(i, lab.priority) for i in pick_order(queued, lab.priority)]
