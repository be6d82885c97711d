"""What the services need from the world, as ports: GitHub (`GitHubPort`), this machine
(`MachinePort`), the command's process (`LauncherPort`), the Actions runner's files
(`RunnerPort`) and time (`Clock`). Services import these, never `orion_action.adapters`;
`cli.py` builds the adapters and passes them in (docs/adr/0051-ports-only.md).

Two implementations: `adapters.github.GitHubRepo` (PyGithub, the real thing) and the
in-memory `tests/fakes/memory_github.MemoryGitHub` that the model checker drives. One contract
suite (tests/contract) runs against both, so the fake cannot drift from the real API.

Times returned are GitHub's: `server_now` is the `Date` header of the response (whole seconds),
never the local clock.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from orion_action.core.cancelled import LabelEvent
from orion_action.core.issue import Comment, Issue
from orion_action.core.liveness import Machine, ProcessSighting
from orion_action.core.record import Holder


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
    started_at: datetime | None = None  # `run_started_at` (its latest attempt's start)


@dataclass(frozen=True)
class Queued:
    """The last `labeled` event of the queue label: who added it, and when (GitHub's time)."""

    login: str
    user_id: int | None
    at: datetime
    event_id: str  # GitHub's node id of the `labeled` event


@dataclass(frozen=True)
class QueueHistory:
    """What GitHub says about how the issue came to be queued and what changed since."""

    labelled: tuple[Queued, ...]  # every `labeled` event of the queue label, oldest first
    text_changed_at: datetime | None  # the last rename of the title or edit of the body
    # Every `labeled` and `unlabeled` event of the queue and cancel labels, in GitHub's order
    # (ADR 0061: whether a person's cancel still stands)
    label_events: tuple[LabelEvent, ...] = ()
    # The issue itself, read by the same query (title, body, labels, counts; `read_at` is
    # GitHub's time of the answer), where the reader could: a claim by number then needs no
    # issue read of its own (ADR 0063). None: read it apart, before this history.
    issue: Issue | None = None


@dataclass(frozen=True)
class Finished:
    """What GitHub answered to one `finish` request (ADR 0076): the claim comment's final
    record, then the outcome label, as one GraphQL mutation document run in that order; an
    error on one does not stop the other, so each says whether it landed."""

    edited: bool
    added: bool


class GitHubPort(Protocol):
    """One repository's issues, comments and labels, as orion needs them.

    Errors are the project's own: NotFound (404), Unavailable (transient failures outlasted
    the retry budget, or the `Policy` the call is made under forbade it), AuthError,
    Forbidden, GitHubError. A call obeys the policy of the `bounded` block it is made in."""

    full_name: str
    requests: int  # HTTP requests made so far (a listing costs one per page of 100)
    not_modified: int  # of those, conditional reads answered 304: not charged (ADR 0044)
    budget: Budget

    def own_login(self) -> str | None: ...

    def learn_login(self, login: str) -> None: ...

    def check_repo(self) -> None: ...

    def collaborator_permission(self, login: str) -> str:
        """`login`'s access level to the repository ("none" for an outsider)."""
        ...

    def queue_history(self, number: int, label: str, cancel: str = "", *others: str) -> QueueHistory:
        """Who added `label` to the issue and when, and when its title or body last changed;
        with `cancel`, also every event of `label` and `cancel`, added or removed (and of each of
        `others`: the lock, the fates); and the issue as the same query read it, where it could
        (`QueueHistory.issue`)."""
        ...

    def get_issue(self, number: int) -> tuple[Issue, datetime]:
        """The issue and GitHub's time; NotFound for a missing issue or a pull request."""
        ...

    def list_issues(self, label: str | None, state: str = "open",
                    since: datetime | None = None) -> list[Issue]:
        """Issues (not pull requests) carrying exactly `label` (None: any labels or none),
        oldest first; state is "open", "closed" or "all"; `since`: only those updated at or
        after it."""
        ...

    def create_issue(self, title: str, body: str, labels: list[str], marker: str | None = None) -> Issue:
        """A new issue; `marker` (a text in the body) finds it again if the answer is lost."""
        ...

    def edit_issue(self, number: int, *, title: str, body: str) -> None: ...

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

    def add_labels(self, number: int, names: tuple[str, ...] | list[str]) -> frozenset[str]:
        """Add labels (idempotent; unknown labels are created). Returns the issue's labels
        after the write, as GitHub's answer lists them (all of them, not only those added:
        ADR 0066); empty when `names` is (nothing is sent)."""
        ...

    def remove_label(self, number: int, name: str) -> bool | None:
        """Remove one label: True if it was on the issue, False if it was absent, None if that is
        unknown: a try whose answer was lost may have removed it, and a retry found it absent."""
        ...

    def finish(self, number: int, comment_id: int, body: str, add: tuple[str, ...]) -> Finished | None:
        """Edit comment `comment_id` to `body`, then add `add` to issue `number`, in ONE request
        (GraphQL: `updateIssueComment` then `addLabelsToLabelable` in one mutation document,
        run in that order; a refused field does not stop the other, ADR 0076). Only with the
        node ids known without a request: the comment's from the answer to its POST, the
        issue's and every label's from the trigger check's query (existing labels only:
        GraphQL creates none); None when one is unknown: nothing is sent, use the REST writes."""
        ...

    def workflow_run_status(self, run_id: int) -> str | None: ...

    def list_workflow_runs(self, workflow: str, status: str, limit: int = 100) -> list[WorkflowRun]:
        """Runs of the workflow file `workflow` in `status` (a status, or a conclusion such as
        `success`), newest first (up to `limit`, at most 100: one request)."""
        ...

    def dispatch_workflow(self, workflow: str, inputs: dict[str, str]) -> None:
        """workflow_dispatch of the workflow file `workflow` on the default branch."""
        ...

    def get_label(self, name: str) -> tuple[str, str] | None:
        """A repository label's (color, description), or None if there is none of that name."""
        ...

    def ensure_label(self, name: str, color: str, description: str) -> str: ...

    def clone(self) -> GitHubPort:
        """A twin with its own connection and counters, for another thread (the heartbeat's):
        a `bounded` block bounds its client, not its thread. How long its calls may take is
        each block's Policy, as for any client."""
        ...

    def bounded(self, policy: Policy) -> AbstractContextManager[None]:
        """Every call on this client while the block is open obeys `policy` (a nested block
        narrows it, never widens it, and the outer one holds again when it closes)."""
        ...

    def close(self) -> None: ...


class Clock(Protocol):
    """Durations (`monotonic`, suspend included) and display times (`now_iso`); the model
    checker's is virtual. Deadlines are computed and enforced on the same one."""

    def monotonic(self) -> float: ...

    def now_iso(self) -> str: ...

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        """Sleep, or stop early when `wake` is set; returns whether it was woken."""
        ...


# What this machine's process table says of a wrapper pid and its child's group.
Sight = Callable[[int, "int | None"], "ProcessSighting | None"]


class MachinePort(Protocol):
    """This machine: who it is (to judge claims made here) and its process table."""

    def this_machine(self) -> Machine: ...

    def this_holder(self) -> Holder: ...

    def sight(self, pid: int, child_pgid: int | None) -> ProcessSighting | None: ...


class RunAsPort(Protocol):
    """The user `run.user` names (ADR 0032): the command runs as it."""

    @property
    def ids(self) -> tuple[int, int, tuple[int, ...]]: ...

    def env(self, env: dict[str, str]) -> dict[str, str]: ...

    def give(self, path: str) -> None:
        """Make a file orion created for the command its own."""
        ...


class ChildPort(Protocol):
    """The command, running under its guardian (ADR 0010)."""

    pid: int
    reason: str | None  # why it ended when the guardian ended it: "lease", "guardian-died"
    last_output: float | None  # Clock.monotonic() of its last output, when watched

    def fileno(self) -> int: ...

    def poll(self) -> int | None: ...

    def renew(self, deadline: float) -> None: ...

    def stop(self, first_signal: int, grace: float, cut_short: Callable[[], bool] | None = None) -> int: ...

    def close(self) -> None: ...


class LauncherPort(Protocol):
    """How the wrapper starts the command (adapters/child.py)."""

    def start_child(
        self,
        command: list[str],
        env: dict[str, str],
        lease_until: float,
        kill_grace: float,
        watch_output: bool = False,
        run_as: RunAsPort | None = None,
    ) -> ChildPort:
        """Raises errors.CannotStart or errors.LeaseExpired."""
        ...

    def adopt_orphans(self) -> None:
        """What escapes a killed guardian is reparented here, to be killed (ADR 0030)."""
        ...

    def resolve_run_as(self, name: str, workdir: str) -> RunAsPort:
        """The user `run.user` names, checked before anything is claimed (UsageError)."""
        ...


class RunnerPort(Protocol):
    """The GitHub Actions runner's files and log commands; outside Actions, no-ops."""

    @property
    def in_actions(self) -> bool: ...

    @property
    def server_url(self) -> str: ...

    def group(self, title: str) -> AbstractContextManager[None]:
        """Fold what is printed inside into one collapsible group of the job's log."""
        ...

    def set_outputs(self, outputs: Mapping[str, str]) -> None: ...

    def add_summary(self, markdown: str) -> None: ...

    def has_summary(self) -> bool:
        """Whether the runner gives a step summary file at all."""
        ...

    def warning(self, message: str, title: str = "orion-action") -> None:
        """A warning annotation (printed, in Actions only)."""
        ...

    def error(self, message: str, file: str | None = None, line: int | None = None) -> None:
        """An error annotation, on `file` at `line` when given (printed, in Actions only)."""
        ...

    def this_workflow(self) -> tuple[str, str] | None:
        """The repository (owner/name) and the workflow file this job runs from
        (`GITHUB_WORKFLOW_REF`); None outside Actions."""
        ...



@dataclass(frozen=True)
class Host:
    """Everything outside GitHub that the wrapper touches on this runner: its clock, who this
    machine is, how the command is started, and the Actions runner's files."""

    clock: Clock
    machine: MachinePort
    launcher: LauncherPort
    runner: RunnerPort


@dataclass(frozen=True)
class Policy:
    """Bounds on the GitHub calls made in one block, as kazoo copies its retry policy per call
    instead of configuring the client: no request starts once `clock` reads `deadline` or
    later (the deadline is computed and enforced on the same clock), none is retried once
    `abort` is set (`ONE_TRY`: never), each request waits at most `timeout` seconds for an
    answer, and one call's retries stop once `retry_for` seconds have passed on `clock` (ADR
    0058). A policy without a deadline or retry budget needs no clock."""

    clock: Clock | None = None
    deadline: float | None = None
    abort: threading.Event | None = None
    timeout: float | None = None
    retry_for: float | None = None

    def within(self, outer: Policy | None) -> Policy:
        """This policy inside `outer`: the earlier deadline, either abort, the shorter timeout
        and retry budget."""
        if outer is None:
            return self

        def least(a: float | None, b: float | None) -> float | None:
            return b if a is None else a if b is None else min(a, b)

        return Policy(self.clock or outer.clock, least(self.deadline, outer.deadline),
                      self.abort or outer.abort, least(self.timeout, outer.timeout),
                      least(self.retry_for, outer.retry_for))

    def expired(self) -> bool:
        """Whether no request may start now."""
        return self.deadline is not None and self._now() >= self.deadline

    def past(self, wait: float) -> bool:
        """Whether a retry `wait` seconds from now would start after the deadline."""
        return self.deadline is not None and self._now() + wait > self.deadline

    def _now(self) -> float:
        if self.clock is None:
            raise ValueError("a Policy with a deadline needs the clock it is counted on")
        return self.clock.monotonic()

    def aborted(self) -> bool:
        return self.abort is not None and self.abort.is_set()


def _set() -> threading.Event:
    event = threading.Event()
    event.set()
    return event


# One try, no retry: for a label write whose retry, after a try that may have landed with its
# answer lost, could undo what a later writer did meanwhile (a pass's lock removal landing
# again after a new claim took the same lock, ADR 0054). Its failure is the caller's to report.
ONE_TRY = Policy(abort=_set())


class Bounds:
    """The policy of the `bounded` blocks open on one client. A block bounds every call on
    that client while it is open; a thread that must not be bounded by another's block uses
    its own client (the heartbeat's clone)."""

    def __init__(self) -> None:
        self._policy: Policy | None = None

    def current(self) -> Policy | None:
        """The policy a call made now obeys."""
        return self._policy

    @contextlib.contextmanager
    def bounded(self, policy: Policy) -> Iterator[None]:
        outer = self._policy
        self._policy = policy.within(outer)
        try:
            yield
        finally:
            self._policy = outer
