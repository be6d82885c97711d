"""What the services need from GitHub, as a port.

Two implementations: `adapters.github.GitHubRepo` (PyGithub, the real thing) and the
in-memory `tests/fakes/memory_github.MemoryGitHub` that the model checker drives. One contract
suite (tests/contract) runs against both, so the fake cannot drift from the real API.

Times returned are GitHub's: `server_now` is the `Date` header of the response (whole seconds),
never the local clock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from orion_action.core.issue import Comment, Issue


@dataclass(frozen=True)
class Budget:
    """The token's core request budget as the last response reported it."""

    limit: int | None = None
    remaining: int | None = None
    reset_in: float | None = None  # seconds from that response until the window resets


@dataclass(frozen=True)
class WorkflowRun:
    """A run of a workflow, as the dispatcher counts them (`title` is its display title)."""

    id: int
    status: str
    title: str = ""


@dataclass(frozen=True)
class Queued:
    """The last `labeled` event of the queue label: who added it, and when (GitHub's time)."""

    login: str
    user_id: int | None
    at: datetime
    event_id: int


@dataclass(frozen=True)
class QueueHistory:
    """What GitHub says about how the issue came to be queued and what changed since."""

    labelled: tuple[Queued, ...]  # every `labeled` event of the queue label, oldest first
    text_changed_at: datetime | None  # the last rename of the title or edit of the body


class GitHubPort(Protocol):
    """One repository's issues, comments and labels, as orion needs them.

    Errors are the project's own: NotFound (404), Unavailable (transient failures outlasted
    the retry budget, or `deadline` passed), AuthError, Forbidden, GitHubError."""

    full_name: str
    requests: int  # HTTP requests made so far (a listing costs one per page of 100)
    not_modified: int  # of those, conditional reads answered 304: not charged (ADR 0044)
    budget: Budget
    abort: threading.Event | None  # set it to cut retries short
    deadline: float | None  # a monotonic time after which no request starts

    def own_login(self) -> str | None: ...

    def learn_login(self, login: str) -> None: ...

    def check_repo(self) -> None: ...

    def get_issue(self, number: int) -> tuple[Issue, datetime]:
        """The issue and GitHub's time; NotFound for a missing issue or a pull request."""
        ...

    def list_issues(self, label: str, state: str = "open") -> list[Issue]:
        """Issues (not pull requests) carrying exactly `label`, oldest first; state is
        "open", "closed" or "all"."""
        ...

    def list_comments(self, number: int) -> tuple[list[Comment], datetime]:
        """Every comment of the issue in id order, and GitHub's time at the first page."""
        ...

    def list_comments_from(
        self, number: int, first_page: int = 1, max_pages: int | None = None
    ) -> tuple[list[Comment], datetime, bool]:
        """The comments from page `first_page` on (100 a page), at most `max_pages` pages;
        GitHub's time at the first page read; whether pages were left unread."""
        ...

    def list_repo_comments(self, since: datetime) -> tuple[list[Comment], datetime]:
        """Comments of every issue updated at or after `since` (each with its issue number),
        by update time, and GitHub's time at the first page."""
        ...

    def get_comment(self, comment_id: int) -> tuple[Comment, datetime]: ...

    def post_comment(self, number: int, body: str, marker: str | None = None) -> Comment: ...

    def edit_comment(self, comment_id: int, body: str) -> Comment: ...

    def delete_comment(self, comment_id: int) -> None:
        """Delete; an already deleted comment is fine."""
        ...

    def add_labels(self, number: int, names: tuple[str, ...] | list[str]) -> None:
        """Add labels (idempotent; unknown labels are created)."""
        ...

    def remove_label(self, number: int, name: str) -> bool:
        """Remove one label: True if it was on the issue, False if it was absent."""
        ...

    def workflow_run_status(self, run_id: int) -> str | None: ...

    def list_workflow_runs(self, workflow: str, status: str) -> list[WorkflowRun]:
        """Runs of the workflow file `workflow` in `status`, newest first (up to 100)."""
        ...

    def dispatch_workflow(self, workflow: str, inputs: dict[str, str]) -> None:
        """workflow_dispatch of the workflow file `workflow` on the default branch."""
        ...

    def get_label(self, name: str) -> tuple[str, str] | None:
        """A repository label's (color, description), or None if there is none of that name."""
        ...

    def ensure_label(self, name: str, color: str, description: str) -> str: ...

    def clone(self, *, timeout: float | None = None, retry_for: float | None = None) -> GitHubPort:
        """A twin with its own connection and budgets, e.g. for the heartbeat thread."""
        ...

    def close(self) -> None: ...
