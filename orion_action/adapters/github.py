"""GitHub, through PyGithub: the only module that imports `github`.

Every call goes through `_request`, which retries transient failures with tenacity (PyGithub
itself never retries PATCH), honours `Retry-After` and `x-ratelimit-reset`, is bounded in total
time, counts requests, and turns PyGithub's exceptions into the project's own. Times returned
are GitHub's: each result carries the `Date` header of its response.
"""

from __future__ import annotations

import contextlib
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import github
import requests
import tenacity
from github import Auth

from orion_action.core.issue import Comment, Issue
from orion_action.errors import AuthError, Forbidden, GitHubError, NotFound, Unavailable, UsageError
from orion_action.ports import Budget, GitHubPort

__all__ = ["ACTIONS_BOT", "DEFAULT_API_URL", "Budget", "GitHubRepo", "Issue"]  # Issue, Budget: re-exported

DEFAULT_API_URL = "https://api.github.com"
ACTIONS_BOT = "github-actions[bot]"
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_ISSUE_URL = re.compile(r"/issues/(\d+)$")
_ROLES = ("admin", "maintain", "write", "triage", "read")
# The legacy `permission` field (and the API's older names for the same levels).
_LEGACY_PERMISSION = {"admin": "admin", "maintain": "maintain", "write": "write", "push": "write",
                      "triage": "triage", "read": "read", "pull": "read"}


class _Transient(Exception):
    """A failure worth retrying; `wait` is what GitHub asked for, if it said."""

    def __init__(self, cause: Exception, wait: float | None, ambiguous: bool):
        super().__init__(str(cause))
        self.cause = cause
        self.wait = wait
        self.ambiguous = ambiguous  # the request may have been executed (timeout, 5xx)


def _when(value: str | None) -> datetime:
    if not value:
        return datetime.now(timezone.utc)
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return parsedate_to_datetime(value)


def _header(headers: dict[str, Any] | None, name: str) -> str | None:
    for k, v in (headers or {}).items():
        if k.lower() == name:
            return str(v)
    return None


def _comment(data: dict[str, Any]) -> Comment:
    issue = _ISSUE_URL.search(data.get("issue_url") or "")
    return Comment(
        id=int(data["id"]),
        author=(data.get("user") or {}).get("login", ""),
        body=data.get("body") or "",
        created_at=_when(data.get("created_at")),
        updated_at=_when(data.get("updated_at") or data.get("created_at")),
        issue=int(issue.group(1)) if issue else None,
    )


def _issue(data: dict[str, Any], read_at: datetime) -> Issue:
    return Issue(
        number=int(data["number"]),
        is_open=data.get("state") == "open",
        labels=frozenset(label["name"] for label in data.get("labels") or []),
        comments=int(data.get("comments") or 0),
        created_at=_when(data.get("created_at")),
        read_at=read_at,
        updated_at=_when(data.get("updated_at") or data.get("created_at")),
        is_pull_request="pull_request" in data,
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
    )


def _message(exc: github.GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return str(data.get("message") or exc.message or f"HTTP {exc.status}")


class GitHubRepo:
    """One repository's issues, comments and labels, as orion needs them."""

    def __init__(
        self,
        full_name: str,
        token: str,
        api_url: str = DEFAULT_API_URL,
        *,
        timeout: float = 10.0,
        retry_for: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not _REPO.match(full_name or ""):
            raise UsageError(f"repository must look like OWNER/NAME, got {full_name!r}")
        if not token or not token.strip():
            raise AuthError("GITHUB_TOKEN is not set: give orion-action a token with issues: write")
        self.full_name = full_name
        self.api_url = api_url.rstrip("/")
        self.retry_for = retry_for
        self.timeout = timeout
        self.abort: threading.Event | None = None  # set it to cut retries short
        self.deadline: float | None = None  # time.monotonic() after which no request starts
        self._token = token.strip()
        self._sleep = sleep
        self._gh = github.Github(
            auth=Auth.Token(token.strip()),
            base_url=self.api_url,
            timeout=max(1, round(timeout)),  # PyGithub insists on whole seconds
            retry=None,
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=None,
            user_agent="orion-action",
        )
        self._requester = self._gh.requester
        self._repo_path = f"{self.api_url}/repos/{full_name}"
        self.requests = 0
        self.budget = Budget()
        self._login: str | None = None

    def clone(self, *, timeout: float | None = None, retry_for: float | None = None) -> GitHubRepo:
        """A twin with its own connection and budgets, e.g. for the heartbeat thread."""
        twin = GitHubRepo(
            self.full_name,
            self._token,
            self.api_url,
            timeout=self.timeout if timeout is None else timeout,
            retry_for=self.retry_for if retry_for is None else retry_for,
            sleep=self._sleep,
        )
        twin._login = self._login
        return twin

    def close(self) -> None:
        self._gh.close()

    # -- plumbing ---------------------------------------------------------------------------

    def _once(
        self, verb: str, url: str, params: dict[str, Any] | None, body: Any
    ) -> tuple[dict[str, Any], Any]:
        self.requests += 1
        try:
            headers, data = self._requester.requestJsonAndCheck(verb, url, parameters=params, input=body)
        except github.GithubException as exc:
            self._note_budget(exc.headers)
            raise self._translate(exc) from None
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise _Transient(exc, None, ambiguous=True) from None
        self._note_budget(headers)
        return headers, data

    def _note_budget(self, headers: dict[str, Any] | None) -> None:
        limit, remaining = _header(headers, "x-ratelimit-limit"), _header(headers, "x-ratelimit-remaining")
        if limit is not None and remaining is not None:
            self.budget = Budget(int(limit), int(remaining))

    def _translate(self, exc: github.GithubException) -> Exception:
        status, message = exc.status, _message(exc)
        headers = exc.headers or {}
        retry_after = _header(headers, "retry-after")
        if status == 401:
            return AuthError(f"GitHub rejected the token (401 {message})", status)
        if status in (403, 429):
            remaining, reset = (
                _header(headers, "x-ratelimit-remaining"),
                _header(headers, "x-ratelimit-reset"),
            )
            if retry_after is not None:
                return _Transient(exc, float(retry_after), ambiguous=False)
            if remaining == "0" and reset is not None:
                return _Transient(exc, max(0.0, float(reset) - time.time()) + 1, ambiguous=False)
            if status == 429 or "rate limit" in message.lower():
                return _Transient(exc, 60.0, ambiguous=False)
            return Forbidden(f"GitHub refused: {message} (403); does the token have issues: write?", status)
        if status == 404:
            return NotFound(f"not found: {message}", status)
        if status >= 500:
            wait = float(retry_after) if retry_after is not None else None
            return _Transient(exc, wait, ambiguous=True)
        return GitHubError(f"GitHub answered {status}: {message}", status)

    def _request(
        self,
        verb: str,
        url: str,
        params: dict[str, Any] | None = None,
        body: Any = None,
        *,
        before_retry: Callable[[], Any] | None = None,
    ) -> tuple[dict[str, Any], Any]:
        """One logical request, retried on transient failures within `retry_for` seconds.

        `before_retry` runs before retrying an *ambiguous* failure (the request may have been
        executed); if it returns a value, that value is the result and nothing is re-sent."""
        started = time.monotonic()
        if self.deadline is not None and started >= self.deadline:
            raise Unavailable(f"no time left for {verb} {url.replace(self.api_url, '')}")
        attempt = 0
        ambiguous = False

        def wait_for(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            asked = exc.wait if isinstance(exc, _Transient) else None
            if asked is not None:
                return asked
            return min(8.0, 0.5 * 2 ** (state.attempt_number - 1)) * random.uniform(0.8, 1.2)

        def out_of_time(state: tenacity.RetryCallState) -> bool:
            if self.abort is not None and self.abort.is_set():
                return True
            resume = time.monotonic() + wait_for(state)
            return resume - started > self.retry_for or (self.deadline is not None and resume > self.deadline)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Transient),
            wait=wait_for,
            stop=out_of_time,
            sleep=self._sleep,
            reraise=True,
        )
        try:
            for attempt_ctx in retrying:
                with attempt_ctx:
                    attempt += 1
                    if ambiguous and before_retry is not None:
                        found = before_retry()
                        if found is not None:
                            return {}, found
                    try:
                        return self._once(verb, url, params, body)
                    except _Transient as exc:
                        ambiguous = exc.ambiguous
                        raise
        except _Transient as exc:
            cause = exc.cause
            what = _message(cause) if isinstance(cause, github.GithubException) else type(cause).__name__
            raise Unavailable(
                f"GitHub did not answer {verb} {url.replace(self.api_url, '')} successfully "
                f"within {self.retry_for:g}s ({attempt} tries; last: {what})"
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _pages(self, url: str, params: dict[str, Any]) -> Iterator[tuple[dict[str, Any], list[Any], bool]]:
        """Each page of a listing, and whether another page follows."""
        params = {**params, "per_page": 100}
        page = int(params.pop("page", 1))
        while True:
            headers, data = self._request("GET", url, {**params, "page": page})
            more = 'rel="next"' in (_header(headers, "link") or "") and bool(data)
            yield headers, data, more
            if not more:
                return
            page += 1

    @staticmethod
    def server_time(headers: dict[str, Any]) -> datetime:
        """GitHub's clock: the `Date` header of a response."""
        value = _header(headers, "date")
        return parsedate_to_datetime(value) if value else datetime.now(timezone.utc)

    # -- identity ---------------------------------------------------------------------------

    def own_login(self) -> str | None:
        """The token's login (GET /user). An Actions GITHUB_TOKEN cannot read it: then the
        Actions bot, which is who its comments are by."""
        if self._login is None:
            try:
                _, data = self._request("GET", f"{self.api_url}/user")
                self._login = str(data["login"])
            except (Forbidden, NotFound):
                self._login = ACTIONS_BOT
        return self._login

    def learn_login(self, login: str) -> None:
        """Our own login, learnt from a comment we just wrote: saves a GET /user."""
        self._login = login

    def collaborator_permission(self, login: str) -> str:
        """`login`'s access to the repository: admin, maintain, write, triage, read or none.

        GitHub's `role_name` is the fine-grained level; `permission` is the legacy one
        (maintain reads as write, triage as read), used for custom roles. Not a collaborator
        (404) is `none`."""
        try:
            _, data = self._request(
                "GET", f"{self._repo_path}/collaborators/{quote(login, safe='')}/permission"
            )
        except NotFound:
            return "none"
        role = str(data.get("role_name") or "")
        if role in _ROLES:
            return role
        return _LEGACY_PERMISSION.get(str(data.get("permission") or ""), "none")

    # -- issues -----------------------------------------------------------------------------

    def check_repo(self) -> None:
        self._request("GET", self._repo_path)

    def get_issue(self, number: int) -> tuple[Issue, datetime]:
        try:
            headers, data = self._request("GET", f"{self._repo_path}/issues/{number}")
        except NotFound:
            raise NotFound(f"issue #{number} does not exist in {self.full_name}", 404) from None
        issue = _issue(data, self.server_time(headers))
        if issue.is_pull_request:
            raise NotFound(f"#{number} in {self.full_name} is a pull request, not an issue", 404)
        return issue, self.server_time(headers)

    def list_issues(self, label: str, state: str = "open") -> list[Issue]:
        """Issues (not pull requests) carrying `label`, oldest first."""
        params = {"labels": label, "state": state, "sort": "created", "direction": "asc"}
        found: list[Issue] = []
        for headers, data, _ in self._pages(f"{self._repo_path}/issues", params):
            read_at = self.server_time(headers)
            found.extend(i for i in (_issue(d, read_at) for d in data) if not i.is_pull_request)
        return found

    def list_comments(self, number: int) -> tuple[list[Comment], datetime]:
        """Every comment of the issue, and GitHub's time at the first page."""
        comments, now, _ = self.list_comments_from(number)
        return comments, now

    def list_comments_from(
        self, number: int, first_page: int = 1, max_pages: int | None = None
    ) -> tuple[list[Comment], datetime, bool]:
        """The issue's comments from page `first_page` on (100 a page, oldest first), at most
        `max_pages` pages; GitHub's time at the first page read; whether pages were left."""
        comments: list[Comment] = []
        now: datetime | None = None
        params = {"page": first_page} if first_page > 1 else {}
        listing = self._pages(f"{self._repo_path}/issues/{number}/comments", params)
        for pages, (headers, data, more) in enumerate(listing, start=1):
            now = now or self.server_time(headers)
            comments.extend(_comment(c) for c in data)
            if more and max_pages is not None and pages >= max_pages:
                return comments, now, True
        return comments, now or datetime.now(timezone.utc), False

    def list_repo_comments(self, since: datetime) -> tuple[list[Comment], datetime]:
        """Comments of every issue updated at or after `since`, by update time (GET
        /issues/comments; the per-issue listing has no `since` on the emulator).

        `since` is sent a second early in whole seconds: GitHub documents that form, and the
        emulator compares it as a string with its millisecond stamps ("…:26Z" sorts after
        "…:26.5Z"). The exact bound is applied here. A comment edited while the pages are read
        can move to a later page and show twice (the last copy wins) or push another across
        a page boundary; callers that need all of them read each issue."""
        floor = since.astimezone(timezone.utc).replace(microsecond=0) - timedelta(seconds=1)
        params = {"since": floor.strftime("%Y-%m-%dT%H:%M:%SZ"), "sort": "updated", "direction": "asc"}
        found: dict[int, Comment] = {}
        now: datetime | None = None
        for headers, data, _ in self._pages(f"{self._repo_path}/issues/comments", params):
            now = now or self.server_time(headers)
            for c in map(_comment, data):
                found.pop(c.id, None)
                found[c.id] = c
        kept = [c for c in found.values() if c.updated_at >= since]
        return kept, now or datetime.now(timezone.utc)

    def get_comment(self, comment_id: int) -> tuple[Comment, datetime]:
        headers, data = self._request("GET", f"{self._repo_path}/issues/comments/{comment_id}")
        return _comment(data), self.server_time(headers)

    def post_comment(self, number: int, body: str, marker: str | None = None) -> Comment:
        """Post a comment. With `marker` (a unique string in the body), a retried POST first
        looks for a comment of ours that already carries it, so no duplicate is left."""

        def already_posted() -> Comment | None:
            # The marker is a fresh random token: nobody can have copied it before our POST
            # landed, so the first comment carrying it is ours.
            if marker is None:
                return None
            comments, _ = self.list_comments(number)
            return next((c for c in comments if marker in c.body), None)

        headers, data = self._request(
            "POST",
            f"{self._repo_path}/issues/{number}/comments",
            body={"body": body},
            before_retry=already_posted,
        )
        return data if isinstance(data, Comment) else _comment(data)

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        _, data = self._request(
            "PATCH", f"{self._repo_path}/issues/comments/{comment_id}", body={"body": body}
        )
        return _comment(data)

    def delete_comment(self, comment_id: int) -> None:
        with contextlib.suppress(NotFound):
            self._request("DELETE", f"{self._repo_path}/issues/comments/{comment_id}")

    def add_labels(self, number: int, names: tuple[str, ...] | list[str]) -> None:
        if names:
            self._request("POST", f"{self._repo_path}/issues/{number}/labels", body={"labels": list(names)})

    def remove_label(self, number: int, name: str) -> bool:
        """Remove one label: True if it was on the issue, False if it was absent (GitHub's
        404; removal is idempotent). A DELETE that landed but whose answer was lost, then
        retried, also reads False: the label is gone either way."""
        try:
            self._request("DELETE", f"{self._repo_path}/issues/{number}/labels/{quote(name, safe='')}")
        except NotFound:
            return False
        return True

    def workflow_run_status(self, run_id: int) -> str | None:
        """`queued`/`in_progress`/`completed`, or None when it cannot be seen (404, no permission)."""
        try:
            _, data = self._request("GET", f"{self._repo_path}/actions/runs/{run_id}")
        except (NotFound, Forbidden):
            return None
        return str(data.get("status")) if isinstance(data, dict) else None

    # -- labels of the repository --------------------------------------------------------------

    def ensure_label(self, name: str, color: str, description: str) -> str:
        """Create or update a repository label: returns "created", "updated" or "unchanged"."""
        url = f"{self._repo_path}/labels/{quote(name, safe='')}"
        try:
            _, data = self._request("GET", url)
        except NotFound:
            self._request(
                "POST",
                f"{self._repo_path}/labels",
                body={"name": name, "color": color, "description": description},
            )
            return "created"
        if (data.get("color") or "").lower() == color.lower() and (
            data.get("description") or ""
        ) == description:
            return "unchanged"
        self._request("PATCH", url, body={"new_name": name, "color": color, "description": description})
        return "updated"


if TYPE_CHECKING:  # mypy holds the adapter to the port the services are written against

    def _is_a_port(repo: GitHubRepo) -> GitHubPort:
        return repo
