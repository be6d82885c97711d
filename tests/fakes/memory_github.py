"""An in-memory GitHub for the model checker: one repository, the emulator's semantics.

`MemoryServer` is GitHub (issues, comments, labels, a clock that only the driver moves);
`MemoryGitHub` is one client of it implementing `orion_action.ports.GitHubPort`, as
`GitHubRepo` does over HTTP. tests/contract/test_github_contract.py runs one suite against
this and the emulator, so every semantic here is checked against the real thing.

What mirrors the emulator (npm emulate@0.11.2) and why it matters to the protocol:
- comment ids increase in posting order and are never reused (GitHub's total order of claims);
- `created_at`/`updated_at` are the server clock in milliseconds, `server_now` (the `Date`
  header) in whole seconds, so `now` can be *earlier* than a stamp written in the same second;
- a frozen clock gives equal stamps to successive writes (ties are real: GitHub has seconds);
- listings are paged by 100 and each page is read at its own moment (a step of its own), so a
  deletion between pages can hide a comment, as over HTTP;
- 404 is NotFound for a missing issue or comment; a pull request is not an issue.

Where it follows the emulator rather than GitHub: label names match exactly (GitHub ignores
case), a fresh comment's `updated_at` equals its `created_at` (the emulator is 1 ms later in
a few percent of posts), and listings are consistent unless `list_lag` says otherwise
(GitHub's replicas may lag a write; the emulator never does).

Knobs for the driver: `clock.advance`; `list_lag` + `settle` (a comment's latest write,
deletion included, stays out of listings for that long; direct reads are always current);
`hide` (one comment out of listings for a while, beyond any settle);
`lag_of` (a lag per write instead: each comment lags on its own, ADR 0026); `clock.whole_seconds`
(GitHub's stamps); `on_call` (runs before every request: a scheduling point); `on_applied` (who
wrote what); `fail_next` (unavailable, ambiguous, lost and retried as the adapter retries,
limited by a 403/429 Retry-After, or late: applied after the client gave up, see `land`);
`meter` (GitHub's rate limits enforced: a request over one is refused, Unavailable);
person actions (`create_issue`,
`add_label`, `close`, `comment`, ...) that bypass the hook and the counting.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from orion_action.adapters.clock import Clock
from orion_action.core.cancelled import LabelEvent
from orion_action.core.issue import Comment, Issue
from orion_action.errors import GitHubError, NotFound, Unavailable
from orion_action.ports import Bounds, Budget, Finished, Policy, Queued, QueueHistory, WorkflowRun

if TYPE_CHECKING:
    from orion_action.ports import GitHubPort

BOT = "orion-bot"
PERSON = "a-person"
PAGE = 100
RATE_LIMIT = 5000  # core requests per hour of a personal token
FIRST_COMMENT_ID = 1_000_001  # far from issue numbers, so mixing them up cannot pass a test
Failure = Literal["unavailable", "ambiguous", "lost", "retried", "limited", "late", "partial", "partial-edit"]
T = TypeVar("T")
_WRITES = frozenset({"post_comment", "edit_comment", "delete_comment", "add_labels", "remove_label",
                     "finish", "ensure_label", "dispatch_workflow"})


class Meter(Protocol):
    """GitHub's rate limits, enforced (bench/capacity.py): `admit` charges a request, or
    refuses it with the Retry-After GitHub would send; `refund` gives back a 304's charge;
    `budget` is what the rate-limit headers would say."""

    def admit(self, login: str, write: bool, now: float) -> float | None: ...

    def refund(self, login: str, now: float) -> None: ...

    def budget(self, login: str, now: float) -> Budget: ...


class ServerClock:
    """GitHub's clock. It moves only when the driver says, so every timing is chosen."""

    def __init__(self, start: datetime | None = None):
        self.start = start or datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)
        self.now = self.start
        self.whole_seconds = False  # stamps at GitHub's precision (whole seconds), not the emulator's

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("GitHub's clock does not go back")
        self.now += timedelta(seconds=seconds)

    def monotonic(self) -> float:
        """Seconds since start: a stand-in for a runner's `time.monotonic` (for `deadline`)."""
        return (self.now - self.start).total_seconds()

    def stamp(self) -> datetime:
        """A record's timestamp, at the emulator's precision (milliseconds), or GitHub's (whole
        seconds, truncated) with `whole_seconds`."""
        if self.whole_seconds:
            return self.now.replace(microsecond=0)
        return self.now.replace(microsecond=self.now.microsecond // 1000 * 1000)

    def date(self) -> datetime:
        """The `Date` header: whole seconds, truncated."""
        return self.now.replace(microsecond=0)


@dataclass
class _Issue:
    number: int
    title: str
    body: str
    created_at: datetime
    is_pull_request: bool = False
    is_open: bool = True
    labels: set[str] = field(default_factory=set)
    comments: int = 0
    updated_at: datetime | None = None  # every change moves it, as on GitHub

    def freeze(self, read_at: datetime, descriptions: dict[str, tuple[str, str]] | None = None) -> Issue:
        """As a read returns it; `descriptions`: the repository's labels (name -> colour and
        description), whose descriptions GitHub embeds in each issue's label objects."""
        known = descriptions or {}
        return Issue(self.number, self.is_open, frozenset(self.labels), self.comments, self.created_at,
                     read_at, self.updated_at or self.created_at, self.is_pull_request, self.title,
                     self.body, tuple((n, known.get(n, ("", ""))[1]) for n in sorted(self.labels)))


def _issue_etag(answer: tuple[Issue, datetime]) -> object:
    """An issue's representation as GitHub's ETag covers it: everything but when it was read
    (a comment edit leaves it alone; a post or deletion moves the count, ADR 0044)."""
    return replace(answer[0], read_at=answer[0].created_at)


@dataclass
class Delayed:
    """A write the client gave up on (it got a timeout) that GitHub applies later, by `land_by`
    (when it was sent plus the request timeout), unless it is dropped."""

    actor: str
    op: str
    args: tuple[object, ...]
    apply: Callable[[], object]
    land_by: datetime


@dataclass
class _Lag:
    """What listings show of one comment until `until` (None: not listed at all yet)."""

    shown: Comment | None
    until: datetime


class MemoryServer:
    """One repository on an in-memory GitHub. Thread-safe; the driver owns the clock."""

    def __init__(self, full_name: str = f"{BOT}/work", *, clock: ServerClock | None = None):
        self.full_name = full_name
        self.clock = clock or ServerClock()
        self.list_lag = 0.0  # seconds a write stays invisible to listings; 0: consistent
        # Per write instead of `list_lag`: (comment id, write count) -> seconds that write stays
        # out of listings, so each comment lags on its own and a later one can be listed first.
        self.lag_of: Callable[[int, int], float] | None = None
        self.writes = 0  # every change counts one: a cheap "has anything changed" for readers
        self.retry_after = 2.0  # what a 403/429 ("limited") asks the client to wait, in seconds
        self.request_timeout = 10.0  # a "late" write lands at most this long after it was sent
        self.sleep: Callable[[float], None] | None = None  # how a client waits out Retry-After
        # Called with (actor, op, args) when a client's write is applied (late ones included).
        self.on_applied: Callable[[str, str, tuple[object, ...]], None] | None = None
        self.delayed: list[Delayed] = []  # late writes in flight, oldest first
        self.failed_actors: set[str] = set()  # every actor an injected failure hit
        self.delayed_landing = False  # set while `land` applies a late write (for on_applied)
        self.on_call: Callable[[str, tuple[object, ...]], None] | None = None
        self.actor_of: Callable[[], str] = lambda: threading.current_thread().name
        self.workflow_runs: dict[int, str] = {}  # run id -> queued/in_progress/completed
        self.workflows: dict[str, str] = {}  # workflow files that accept workflow_dispatch -> run name
        self.run_info: dict[int, tuple[str, str]] = {}  # dispatched run id -> (workflow file, title)
        self.run_conclusions: dict[int, str] = {}  # completed run id -> success, failure, ...
        self.run_started: dict[int, datetime] = {}  # run id -> run_started_at
        self.dispatches: list[dict[str, object]] = []  # every workflow_dispatch accepted, in order
        self.labels: dict[str, tuple[str, str]] = {}  # repository labels: name -> (color, description)
        self.spent: dict[str, int] = {}  # requests per login, for the rate-limit budget
        self.permissions: dict[str, str] = {}  # login -> access level; absent: "none"
        # Every `labeled` event: (issue, label, login, when), in order (the event id is the index).
        self.labelled: list[tuple[int, str, str, datetime]] = []
        # Every `labeled` and `unlabeled` event: (issue, label, login, when, added), in order.
        self.label_events: list[tuple[int, str, str, datetime, bool]] = []
        self.text_changed: dict[int, datetime] = {}  # issue -> last edit of its title or body
        self.meter: Meter | None = None  # GitHub's limits, enforced; None: never refused
        # Whether every client knows the GraphQL node ids `finish` needs without a query (the
        # model runs no trigger check; its holders know them as the query would have told them).
        self.node_ids_known = False
        self._issues: dict[int, _Issue] = {}
        self._comments: dict[int, Comment] = {}
        self._lagging: dict[int, _Lag] = {}
        self._failures: dict[str, list[Failure]] = {}
        self._next_comment = FIRST_COMMENT_ID
        self._lock = threading.RLock()

    def client(self, login: str = BOT) -> MemoryGitHub:
        return MemoryGitHub(self, login)

    # -- knobs -------------------------------------------------------------------------------

    def fail_next(self, actor: str, kind: Failure = "unavailable", count: int = 1) -> None:
        """The next `count` requests of `actor` (a thread name, see `actor_of`) fail.
        "unavailable": nothing is applied and every retry failed (the caller gets Unavailable).
        "ambiguous": a write is applied, then its answer and every retry are lost (Unavailable).
        "lost": the write is applied, its answer lost, and the client retries as GitHubRepo does:
        a new request (a new scheduling point); a post with a marker first lists the comments
        and returns its own if the list shows it, else posts again (a duplicate, under lag).
        "retried": a 5xx (502, 503) that applied nothing, and the client retries as GitHubRepo
        does (a new scheduling point): the answer looks like "lost", the issue differs.
        "limited": a 403/429 with Retry-After: nothing is applied, the client waits
        `retry_after` (`sleep`, a scheduling point) and sends again, unless that wait would pass
        its deadline (then Unavailable), as GitHubRepo does.
        "late": the client times out (Unavailable) and a write is applied later: it waits in
        `delayed` until the driver lands it (`land`) or its time is up (`land_due`).
        "partial": a `finish` whose record edit landed while GitHub refused its addition (a
        label deleted from the repository meanwhile, an internal error on one field: ADR 0076);
        "partial-edit": a `finish` whose edit GitHub refused while its addition landed; on any
        other request, either is "unavailable"."""
        with self._lock:
            self._failures.setdefault(actor, []).extend([kind] * count)

    def land(self, index: int = 0) -> Delayed | None:
        """A late write lands now (it is dropped if it would land after its `land_by`)."""
        with self._lock:
            if index >= len(self.delayed):
                return None
            d = self.delayed.pop(index)
            if self.clock.now <= d.land_by:
                self.delayed_landing = True
                try:
                    with contextlib.suppress(GitHubError):  # a 4xx nobody hears
                        d.apply()
                        self.writes += 1
                        if self.on_applied is not None:
                            self.on_applied(d.actor, d.op, d.args)
                finally:
                    self.delayed_landing = False
            return d

    def next_landing(self) -> datetime | None:
        with self._lock:
            return min((d.land_by for d in self.delayed), default=None)

    def land_due(self) -> None:
        """Every late write whose time is up lands (the clock sits at its `land_by`)."""
        with self._lock:
            for i in reversed([i for i, d in enumerate(self.delayed) if d.land_by <= self.clock.now]):
                self.land(i)

    def settle(self, comment_id: int | None = None) -> None:
        """Listings catch up with one comment, or with all."""
        with self._lock:
            if comment_id is None:
                self._lagging.clear()
            else:
                self._lagging.pop(comment_id, None)

    def hide(self, comment_id: int, seconds: float) -> None:
        """Listings leave one comment out for `seconds` from now, whatever `list_lag` says (one
        write lagging beyond the others, as GitHub's replicas can); direct reads and the issue's
        comment count stay current."""
        with self._lock:
            self._lagging[comment_id] = _Lag(None, self.clock.now + timedelta(seconds=seconds))

    def lagging(self) -> list[int]:
        """Ids of comments whose latest write listings do not show yet."""
        with self._lock:
            self._expire()
            return sorted(self._lagging)

    # -- person actions: applied at once, no hook, no request counted -------------------------

    def start_run(self, workflow: str, title: str = "") -> int:
        """A run of the workflow file `workflow` begins now (not by workflow_dispatch: a
        scheduled reconcile pass, say): in progress until `end_run`."""
        self.workflows.setdefault(workflow, workflow)
        run_id = 900_001 + len(self.run_info)
        self.workflow_runs[run_id] = "in_progress"
        self.run_info[run_id] = (workflow, title or workflow)
        self.run_started[run_id] = self.clock.stamp()
        return run_id

    def end_run(self, run_id: int, conclusion: str = "success") -> None:
        self.workflow_runs[run_id] = "completed"
        self.run_conclusions[run_id] = conclusion

    def create_issue(self, title: str = "an issue", labels: tuple[str, ...] | list[str] = (),
                     body: str = "", *, pull_request: bool = False) -> int:
        """A new issue (or pull request: they share numbers, and are no issue to orion)."""
        with self._lock:
            number = len(self._issues) + 1
            self._issues[number] = _Issue(number, title, body, self.clock.stamp(), pull_request)
            self._add_labels(number, labels)
            return number

    def add_label(self, number: int, name: str, login: str = PERSON) -> None:
        with self._lock:
            self._add_labels(number, [name], login)

    def remove_label(self, number: int, name: str, login: str = PERSON) -> bool:
        with self._lock:
            return self._remove_label(number, name, login)

    def close(self, number: int) -> None:
        with self._lock:
            self._issue(number).is_open = False
            self._touch(number)

    def reopen(self, number: int) -> None:
        with self._lock:
            self._issue(number).is_open = True
            self._touch(number)

    def comment(self, number: int, body: str, login: str = PERSON) -> int:
        with self._lock:
            return self._post(number, body, login).id

    def edit(self, comment_id: int, body: str) -> None:
        with self._lock:
            self._edit(comment_id, body)

    def delete(self, comment_id: int) -> None:
        with self._lock:
            self._delete(comment_id)

    # -- inspection for invariants: the truth, never lagged ----------------------------------

    def issue(self, number: int) -> Issue:
        with self._lock:
            return self._issue(number).freeze(self.clock.date())

    def comments(self, number: int) -> list[Comment]:
        with self._lock:
            return [c for c in self._comments.values() if c.issue == number]

    def issues(self) -> list[Issue]:
        with self._lock:
            return [i.freeze(self.clock.date()) for i in self._issues.values()]

    # -- the model (callers hold the lock) -----------------------------------------------------

    def _issue(self, number: int, *, pulls: bool = True) -> _Issue:
        issue = self._issues.get(number)
        if issue is None or (issue.is_pull_request and not pulls):
            raise NotFound(f"not found: issue #{number} in {self.full_name}", 404)
        return issue

    def _comment(self, comment_id: int) -> Comment:
        found = self._comments.get(comment_id)
        if found is None:
            raise NotFound(f"not found: comment {comment_id}", 404)
        return found

    def _touch(self, number: int) -> None:
        self.writes += 1
        issue = self._issues.get(number)
        if issue is not None:
            issue.updated_at = self.clock.stamp()

    def _add_labels(self, number: int, names: tuple[str, ...] | list[str],
                    login: str = PERSON) -> frozenset[str]:
        issue = self._issue(number)
        for name in names:
            self.labels.setdefault(name, ("ededed", ""))  # GitHub creates unknown labels
            if name not in issue.labels:  # GitHub records no event for a label already there
                self.labelled.append((number, name, login, self.clock.stamp()))
                self.label_events.append((number, name, login, self.clock.stamp(), True))
            issue.labels.add(name)
        self._touch(number)
        return frozenset(issue.labels)  # GitHub answers the issue's whole label list

    def _remove_label(self, number: int, name: str, login: str = PERSON) -> bool:
        """GitHub answers 404 alike for a missing issue and an absent label: both are False."""
        issue = self._issues.get(number)
        if issue is None or name not in issue.labels:
            return False
        issue.labels.discard(name)
        self.label_events.append((number, name, login, self.clock.stamp(), False))
        self._touch(number)
        return True

    def history(self, number: int, label: str, cancel: str = "", *others: str) -> QueueHistory:
        """What the trigger check's GraphQL query answers (adapters/github.py queue_history)."""
        self._issue(number, pulls=False)
        labelled = tuple(Queued(login, None, at, f"LE_{event_id}")  # a node id, as GraphQL gives
                         for event_id, (n, name, login, at) in enumerate(self.labelled)
                         if n == number and name == label)
        wanted = {label, cancel, *others} if cancel else set()
        events = tuple(LabelEvent(name, added, login, at)
                       for n, name, login, at, added in self.label_events if n == number and name in wanted)
        return QueueHistory(labelled, self.text_changed.get(number), events)

    def _listed(self, previous: Comment | None, comment_id: int) -> None:
        """Record that listings may go on showing `previous` for `list_lag` seconds (or what
        `lag_of` says for this write)."""
        self.writes += 1
        seconds = self.lag_of(comment_id, self.writes) if self.lag_of is not None else self.list_lag
        if seconds <= 0:
            return
        until = self.clock.now + timedelta(seconds=seconds)
        lag = self._lagging.get(comment_id)
        if lag is None or lag.until <= self.clock.now:  # an expired lag shows nothing any more
            self._lagging[comment_id] = _Lag(previous, until)
        else:
            lag.until = max(lag.until, until)

    def _post(self, number: int, body: str, login: str) -> Comment:
        issue = self._issue(number)
        if not body.strip():
            raise GitHubError("GitHub answered 422: Validation failed", 422)
        now = self.clock.stamp()
        posted = Comment(self._next_comment, login, body, now, now, number)
        self._next_comment += 1
        self._comments[posted.id] = posted
        issue.comments += 1
        self._touch(number)
        self._listed(None, posted.id)
        return posted

    def _edit(self, comment_id: int, body: str) -> Comment:
        previous = self._comment(comment_id)
        edited = replace(previous, body=body, updated_at=self.clock.stamp())
        self._comments[comment_id] = edited
        self._listed(previous, comment_id)
        return edited

    def _delete(self, comment_id: int) -> None:
        previous = self._comment(comment_id)
        del self._comments[comment_id]
        if previous.issue in self._issues:
            self._issues[previous.issue].comments -= 1
        self._listed(previous, comment_id)

    def _expire(self) -> None:
        for cid in [cid for cid, lag in self._lagging.items() if lag.until <= self.clock.now]:
            del self._lagging[cid]

    def _visible(self) -> list[Comment]:
        """Every comment as listings show it now: lagging writes show their previous state."""
        self._expire()
        shown = {cid: c for cid, c in self._comments.items() if cid not in self._lagging}
        shown.update({cid: lag.shown for cid, lag in self._lagging.items() if lag.shown is not None})
        return list(shown.values())

    def _take_failure(self) -> Failure | None:
        actor = self.actor_of()
        queue = self._failures.get(actor)
        if not queue:
            return None
        self.failed_actors.add(actor)
        return queue.pop(0)


class MemoryGitHub:
    """A client of a `MemoryServer`: the GitHubPort the services get in the model.

    Every HTTP request `GitHubRepo` would make is one call of `server.on_call(op, args)` before
    it (listings: once per page, with the page number appended to args), one count in
    `requests`, and one chance for an injected failure."""

    def __init__(self, server: MemoryServer | None = None, login: str = BOT):
        self.server = server or MemoryServer()
        self.full_name = self.server.full_name
        self.requests = 0
        self.not_modified = 0  # conditional reads answered "304": refunded from `server.spent`
        self._validators: dict[tuple[object, ...], object] = {}  # (op, args) -> what was answered
        self.budget = Budget()
        self.login = login
        self._bounds = Bounds()  # the policy of the open `bounded` blocks (ports.Policy)
        self._login: str | None = None  # what GET /user said, as the adapter caches it
        self._default_branch: str | None = None  # what GET /repos/... said, as the adapter caches it
        # What the trigger check's query told this client (ADR 0076): issues and labels by name.
        self._node_ids: set[int] = set()
        self._label_ids: set[str] = set()
        self._posted: set[int] = set()  # comments this client posted: their node ids are known

    # -- plumbing --------------------------------------------------------------------------------

    def _request(self, op: str, *args: object, apply: Callable[[], T],
                 before_retry: Callable[[], T | None] | None = None,
                 validator: Callable[[T], object] | None = None,
                 partial: Callable[[str], T] | None = None) -> T:
        """One HTTP request: the hook (a scheduling point), the deadline, an injected failure,
        then the change, atomically, as GitHub applies one request.

        `validator` makes it a conditional GET (ADR 0044): what it returns for the answer is
        the resource's representation (its ETag); the same as this client's last answer to the
        same request is a 304, counted in `not_modified` and not charged."""
        server = self.server
        if server.on_call is not None:
            server.on_call(op, args)
        policy = self._bounds.current()  # the caller's `bounded` block, on its clock
        if policy is not None and policy.expired():
            raise Unavailable(f"no time left for {op}")
        with server._lock:
            self.requests += 1
            meter, now = server.meter, server.clock.monotonic()
            if meter is not None:
                wait = meter.admit(self.login, op in _WRITES, now)
                self.budget = meter.budget(self.login, now)
                if wait is not None:
                    raise Unavailable(f"GitHub limited {op} (403, Retry-After {wait:.0f}s)")
            spent = server.spent[self.login] = server.spent.get(self.login, 0) + 1
            if meter is None:
                self.budget = Budget(RATE_LIMIT, max(0, RATE_LIMIT - spent))
            failure = server._take_failure()
            if (failure == "partial" or failure == "partial-edit") and partial is not None:
                kind: str = failure
                return self._applied(op, args, lambda: partial(kind))
            if failure in ("partial", "partial-edit"):
                failure = "unavailable"
            if failure is None:
                answer = self._applied(op, args, apply)
                if validator is not None:
                    etag = validator(answer)
                    key = (op, *args)
                    if self._validators.get(key) == etag:
                        self.not_modified += 1
                        server.spent[self.login] = spent - 1
                        self.budget = Budget(RATE_LIMIT, max(0, RATE_LIMIT - spent + 1))
                        if meter is not None:
                            meter.refund(self.login, now)
                            self.budget = meter.budget(self.login, now)
                    self._validators[key] = etag
                return answer
            if failure == "late" and op in _WRITES:
                land_by = server.clock.now + timedelta(seconds=server.request_timeout)
                server.delayed.append(Delayed(server.actor_of(), op, args, apply, land_by))
                raise Unavailable(f"GitHub did not answer {op} in time (injected late)")
            if failure in ("ambiguous", "lost") and op in _WRITES:
                with contextlib.suppress(GitHubError):  # a 4xx nobody hears
                    self._applied(op, args, apply)
            if failure not in ("lost", "retried", "limited"):
                raise Unavailable(f"GitHub did not answer {op} successfully (injected {failure})")
        if failure == "limited":
            wait = server.retry_after
            if policy is not None and (policy.past(wait) or policy.aborted()):
                raise Unavailable(f"GitHub limited {op} (403, Retry-After {wait:g}s) past the deadline")
            if server.sleep is not None:
                server.sleep(wait)
            return self._request(op, *args, apply=apply, before_retry=before_retry, validator=validator)
        if policy is not None and policy.aborted():  # as GitHubRepo: no retry once aborted
            raise Unavailable(f"GitHub did not answer {op} successfully (injected {failure}; no retry)")
        found = before_retry() if before_retry is not None else None
        if found is not None:
            return found
        return self._request(op, *args, apply=apply, before_retry=before_retry, validator=validator)

    def _applied(self, op: str, args: tuple[object, ...], apply: Callable[[], T]) -> T:
        result = apply()
        if op in _WRITES and op != "finish" and self.server.on_applied is not None:  # finish: per part
            self.server.on_applied(self.server.actor_of(), op, args)
        return result

    def _pages(self, op: str, args: tuple[object, ...], items: Callable[[], list[T]],
               first_page: int = 1, max_pages: int | None = None,
               page_validator: Callable[[tuple[list[T], bool]], object] | None = None,
               ) -> tuple[list[T], bool]:
        """A listing read page by page, each page from the state at its own request; whether
        pages were left unread."""
        out: list[T] = []
        page = first_page
        while True:
            def one(page: int = page) -> tuple[list[T], bool]:
                everything = items()
                return everything[(page - 1) * PAGE: page * PAGE], page < math.ceil(len(everything) / PAGE)

            batch, more = self._request(op, *args, page, apply=one, validator=page_validator)
            out.extend(batch)
            if not more or not batch:
                return out, False
            if max_pages is not None and page - first_page + 1 >= max_pages:
                return out, True
            page += 1

    def _date(self) -> datetime:
        return self.server.clock.date()

    # -- identity --------------------------------------------------------------------------------

    def own_login(self) -> str | None:
        if self._login is None:
            self._login = str(self._request("own_login", apply=lambda: self.login))
        return self._login

    def learn_login(self, login: str) -> None:
        self._login = login

    def check_repo(self) -> None:
        self._request("check_repo", apply=lambda: None)

    # -- issues ----------------------------------------------------------------------------------

    def get_issue(self, number: int) -> tuple[Issue, datetime]:
        def get() -> tuple[Issue, datetime]:
            issue = self.server._issue(number, pulls=False)
            return issue.freeze(self._date(), self.server.labels), self._date()

        return self._request("get_issue", number, apply=get, validator=_issue_etag)

    def list_issues(self, label: str | None, state: str = "open",
                    since: datetime | None = None) -> list[Issue]:
        """Exact (case-sensitive) label match (None: every issue), state open/closed/all,
        oldest first (`since`: only those updated at or after it, as GitHub's parameter)."""

        def matching() -> list[Issue]:
            found = [i for i in self.server._issues.values()
                     if not i.is_pull_request and (label is None or label in i.labels)
                     and (state == "all" or i.is_open == (state == "open"))
                     and (since is None or (i.updated_at or i.created_at) >= since)]
            found.sort(key=lambda i: (i.created_at, i.number))
            frozen = [i.freeze(self._date(), self.server.labels) for i in found]
            return [i for i in frozen if since is None or (i.updated_at or i.created_at) >= since]

        return self._pages("list_issues", (label, state), matching)[0]

    def create_issue(self, title: str, body: str, labels: list[str], marker: str | None = None) -> Issue:
        def create() -> Issue:
            number = self.server.create_issue(title, (), body)
            self.server._add_labels(number, labels, self.login)
            return self.server._issue(number).freeze(self._date(), self.server.labels)

        return self._request("create_issue", title, apply=create)

    def edit_issue(self, number: int, *, title: str, body: str) -> None:
        def edit() -> None:
            issue = self.server._issue(number, pulls=False)
            issue.title, issue.body = title, body
            self.server.text_changed[number] = self.server.clock.stamp()
            self.server._touch(number)

        self._request("edit_issue", number, apply=edit)

    def collaborator_permission(self, login: str) -> str:
        return self._request("collaborator_permission", login,
                             apply=lambda: self.server.permissions.get(login, "none"))

    def queue_history(self, number: int, label: str, cancel: str = "", *others: str) -> QueueHistory:
        """With the issue, as the adapter's one GraphQL query reads it (ADR 0063)."""

        def history() -> QueueHistory:
            read = self.server._issue(number, pulls=False).freeze(self._date(), self.server.labels)
            self._node_ids.add(number)  # the query reads the node ids too (ADR 0076)
            self._label_ids.update(self.server.labels)
            return replace(self.server.history(number, label, cancel, *others), issue=read)

        return self._request("queue_history", number, label, apply=history)

    def list_comments(self, number: int) -> tuple[list[Comment], datetime]:
        comments, now, _ = self.list_comments_from(number)
        return comments, now

    def list_comments_from(self, number: int, first_page: int = 1,
                           max_pages: int | None = None) -> tuple[list[Comment], datetime, bool]:
        now: list[datetime] = []

        def listed() -> list[Comment]:
            self.server._issue(number)
            now.append(self._date())
            return sorted((c for c in self.server._visible() if c.issue == number), key=lambda c: c.id)

        comments, more = self._pages("list_comments", (number,), listed, first_page, max_pages,
                                     page_validator=lambda answer: tuple(answer[0]) + (answer[1],))
        return comments, now[0], more

    def list_repo_comments(self, since: datetime) -> tuple[list[Comment], datetime]:
        now: list[datetime] = []

        def listed() -> list[Comment]:
            now.append(self._date())
            fresh = [c for c in self.server._visible() if c.updated_at >= since]
            return sorted(fresh, key=lambda c: (c.updated_at, c.id))

        found: dict[int, Comment] = {}
        for c in self._pages("list_repo_comments", (since,), listed)[0]:
            found.pop(c.id, None)  # an edit between pages shows it twice: the last copy wins
            found[c.id] = c
        return list(found.values()), now[0]

    def get_comment(self, comment_id: int) -> tuple[Comment, datetime]:
        def get() -> tuple[Comment, datetime]:
            return self.server._comment(comment_id), self._date()

        return self._request("get_comment", comment_id, apply=get)

    def post_comment(self, number: int, body: str, marker: str | None = None) -> Comment:
        """With `marker`, a retry after a lost answer first looks for the comment in the list
        (which may lag), as the adapter does."""

        def already_posted() -> Comment | None:
            if marker is None:
                return None
            return next((c for c in self.list_comments(number)[0] if marker in c.body), None)

        def post() -> Comment:
            posted = self.server._post(number, body, self.login)
            self._posted.add(posted.id)  # the answer carries its node id (ADR 0076)
            return posted

        found = self._request("post_comment", number, body, before_retry=already_posted, apply=post)
        self._posted.add(found.id)
        return found

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        return self._request("edit_comment", comment_id, body,
                             apply=lambda: self.server._edit(comment_id, body))

    def delete_comment(self, comment_id: int) -> None:
        def delete() -> None:
            if comment_id in self.server._comments:  # already gone is fine, as in the adapter
                self.server._delete(comment_id)

        self._request("delete_comment", comment_id, apply=delete)

    def add_labels(self, number: int, names: tuple[str, ...] | list[str]) -> frozenset[str]:
        """As the adapter: the issue's labels after the write (ADR 0066)."""
        if not names:  # the adapter sends nothing for no labels
            return frozenset()
        return self._request("add_labels", number, tuple(names),
                             apply=lambda: self.server._add_labels(number, names, self.login))

    def remove_label(self, number: int, name: str) -> bool | None:
        """As the adapter: absent reads False, unless an earlier try may have landed: then None
        (ADR 0096)."""
        maybe_ours: list[bool] = []

        def note_ambiguous() -> None:
            maybe_ours.append(True)

        removed = self._request("remove_label", number, name, before_retry=note_ambiguous,
                                apply=lambda: self.server._remove_label(number, name, self.login))
        return True if removed else (None if maybe_ours else False)

    def finish(self, number: int, comment_id: int, body: str, add: tuple[str, ...]) -> Finished | None:
        """As the adapter's one GraphQL request (ADR 0076): None (nothing sent) unless the node
        ids are known (the comment's: posted by this client); the record edit, then the
        addition, in one request; GitHub creates no label here, so a label the repository does
        not have refuses the addition (the edit still lands). `fail_next` "partial": the edit
        landed, the addition refused; "partial-edit": the edit refused, the addition landed."""
        server = self.server
        known = server.node_ids_known or (number in self._node_ids and comment_id in self._posted)
        ids = self._label_ids | (set(server.labels) if server.node_ids_known else set())
        if not known or not all(n in ids for n in add):
            return None

        def noted(op: str, *args: object) -> None:  # who wrote what, as the REST writes say it
            if server.on_applied is not None:
                server.on_applied(server.actor_of(), op, args)

        def edit() -> bool:
            try:
                server._edit(comment_id, body)
            except GitHubError:  # a deleted comment: the field is refused
                return False
            noted("edit_comment", comment_id, body)
            return True

        def addition() -> bool:
            server._issue(number)
            if not all(n in server.labels for n in add):
                return False
            server._add_labels(number, add, self.login)
            noted("add_labels", number, tuple(add))
            return True

        def both() -> Finished:
            return Finished(edited=edit(), added=addition())

        def partly(kind: str) -> Finished:
            if kind == "partial":
                return Finished(edited=edit(), added=False)
            return Finished(edited=False, added=addition())

        return self._request("finish", number, comment_id, body, tuple(add), apply=both, partial=partly)

    def list_workflow_runs(self, workflow: str, status: str, limit: int = 100) -> list[WorkflowRun]:
        """GitHub's `status` filter matches a run's status or its conclusion (`success`)."""
        server = self.server

        def listed() -> list[WorkflowRun]:
            if workflow not in server.workflows:
                raise NotFound(f"not found: workflow {workflow}", 404)
            return [
                WorkflowRun(rid, server.workflow_runs[rid], title, server.run_started.get(rid))
                for rid, (file, title) in sorted(server.run_info.items(), reverse=True)
                if file == workflow
                and status in (server.workflow_runs.get(rid), server.run_conclusions.get(rid))
            ][:min(limit, PAGE)]

        return self._request("list_workflow_runs", workflow, status, apply=listed)

    def dispatch_workflow(self, workflow: str, inputs: dict[str, str]) -> None:
        server = self.server
        if self._default_branch is None:
            self._default_branch = self._request("check_repo", apply=lambda: "main")

        def dispatch() -> None:
            if workflow not in server.workflows:
                raise NotFound(f"not found: workflow {workflow}", 404)
            run_id = 900_001 + len(server.run_info)
            title = server.workflows[workflow].format(**inputs) if inputs else workflow
            server.workflow_runs[run_id] = "queued"
            server.run_info[run_id] = (workflow, title)
            server.dispatches.append(
                {"workflow": workflow, "ref": self._default_branch, "inputs": dict(inputs), "run_id": run_id}
            )

        self._request("dispatch_workflow", workflow, dict(inputs), apply=dispatch)

    def workflow_run_status(self, run_id: int) -> str | None:
        return self._request("workflow_run_status", run_id,
                             apply=lambda: self.server.workflow_runs.get(run_id))

    def get_label(self, name: str) -> tuple[str, str] | None:
        return self._request("get_label", name, apply=lambda: self.server.labels.get(name))

    def ensure_label(self, name: str, color: str, description: str) -> str:
        labels = self.server.labels
        have = self._request("get_label", name, apply=lambda: labels.get(name))
        if have is None:
            self._request("ensure_label", name, apply=lambda: labels.__setitem__(name, (color, description)))
            return "created"
        assert isinstance(have, tuple)
        if have[0].lower() == color.lower() and have[1] == description:
            return "unchanged"
        self._request("ensure_label", name, apply=lambda: labels.__setitem__(name, (color, description)))
        return "updated"

    def clone(self) -> MemoryGitHub:
        """A twin with its own counters; it knows the login if this one does, and shares the
        validators of conditional reads, like the adapter."""
        twin = MemoryGitHub(self.server, self.login)
        twin._login = self._login
        twin._validators = self._validators
        twin._node_ids, twin._label_ids, twin._posted = self._node_ids, self._label_ids, self._posted
        return twin

    def bounded(self, policy: Policy) -> contextlib.AbstractContextManager[None]:
        return self._bounds.bounded(policy)

    def close(self) -> None:
        pass


if TYPE_CHECKING:  # mypy holds the fake to the port, as it does the adapter

    def _is_a_port(gh: MemoryGitHub) -> GitHubPort:
        return gh


class ServerTime(Clock):
    """Every clock is the server's, and a sleep moves it."""

    def __init__(self, server: MemoryServer):
        self.server = server

    def monotonic(self) -> float:
        return self.server.clock.monotonic()

    def now_iso(self) -> str:
        return self.server.clock.now.isoformat(timespec="seconds")

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        if seconds > 0:
            self.server.clock.advance(seconds)
        return False
