"""GitHub, through PyGithub: the only module that imports `github`.

Every call goes through `_request`, which retries transient failures with tenacity (PyGithub
itself never retries PATCH), honours `Retry-After` and `x-ratelimit-reset`, is bounded in total
time, counts requests, and turns PyGithub's exceptions into the project's own. Times returned
are GitHub's: each result carries the `Date` header of its response.
"""

from __future__ import annotations

import contextlib
import math
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import github
import requests
import tenacity
from github import Auth

from orion_action.adapters.clock import SYSTEM_CLOCK
from orion_action.core.cancelled import LabelEvent
from orion_action.core.issue import Comment, Issue
from orion_action.core.record import block_kind, seal, unseal, verify
from orion_action.errors import AuthError, Forbidden, GitHubError, NotFound, Unavailable, UsageError
from orion_action.ports import (
    Bounds,
    Budget,
    Clock,
    Finished,
    GitHubPort,
    Policy,
    Queued,
    QueueHistory,
    WorkflowRun,
)

# Issue, Budget: re-exported
__all__ = ["ACTIONS_BOT", "DEFAULT_API_URL", "AppCredentials", "Budget", "GitHubRepo", "Issue"]

DEFAULT_API_URL = "https://api.github.com"
ACTIONS_BOT = "github-actions[bot]"
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_ISSUE_URL = re.compile(r"/issues/(\d+)$")
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
MAX_EVENT_PAGES = 30
# Conditional reads remembered per client (ADR 0044): the fence's issue and comment pages of
# the issues a run holds, a reconciler's judged issues; the oldest is forgotten past this.
MAX_VALIDATORS = 256  # 3000 events: an issue with more is not one a queue label approves
# The trigger check's one read (ADR 0046): who added which label and when, the title's renames,
# and the body's last edit (only GraphQL has it), newest first in pages of 100 timeline items;
# and the issue itself, so that a claim by number reads nothing else first (ADR 0063).
_QUEUE_HISTORY = (
    "query($owner: String!, $name: String!, $number: Int!, $before: String) "
    "{ repository(owner: $owner, name: $name) { labels(first: 100) { totalCount nodes { id name } } "
    "issue(number: $number) { id lastEditedAt "
    "number state title body createdAt updatedAt author { login } comments { totalCount } "
    "labels(first: 100) { totalCount nodes { name description } } "
    "timelineItems(itemTypes: [LABELED_EVENT, UNLABELED_EVENT, RENAMED_TITLE_EVENT], last: 100, "
    "before: $before) { pageInfo { hasPreviousPage startCursor } nodes { __typename "
    "... on LabeledEvent { id createdAt label { name } actor { __typename login ... on User { databaseId } "
    "... on Bot { databaseId } } } "
    "... on UnlabeledEvent { createdAt label { name } actor { __typename login } } "
    "... on RenamedTitleEvent { createdAt } } } } } }"
)
# The holder's ending in one request (ADR 0076): the final record, then the outcome label on
# (the lock comes off later, by REST), run by GitHub in that order; an error on one field does
# not stop the next (https://docs.github.com/en/graphql/reference/mutations#updateissuecomment,
# https://docs.github.com/en/graphql/reference/mutations#addlabelstolabelable).
_FINISH = (
    "mutation($comment: ID!, $body: String!, $issue: ID!, $add: [ID!]!) "
    "{ edit: updateIssueComment(input: {id: $comment, body: $body}) { issueComment { id } } "
    "add: addLabelsToLabelable(input: {labelableId: $issue, labelIds: $add}) "
    "{ labelable { ... on Issue { number } } } }"
)
UNSEALED = "(no valid MAC)"  # appended to the author of a record that does not verify
_ROLES = ("admin", "maintain", "write", "triage", "read")
# The legacy `permission` field (and the API's older names for the same levels).
_LEGACY_PERMISSION = {"admin": "admin", "maintain": "maintain", "write": "write", "push": "write",
                      "triage": "triage", "read": "read", "pull": "read"}
# What an App's installation token may do: only what orion needs, whatever else the App may.
# (Without `actions: read` the status of an App's Actions runs is not seen: they are judged by
# their heartbeats alone.)
APP_TOKEN_PERMISSIONS = {"issues": "write", "metadata": "read"}
# Every failure of the transport (a reset, a truncated or undecodable body, a timeout) is
# transient and ambiguous: the request may have been executed.
_TRANSPORT_ERRORS = (requests.RequestException,)


@dataclass(frozen=True)
class AppCredentials:
    """A GitHub App: its id, its private key (PEM) and, if known, the installation's id."""

    app_id: str
    private_key: str = field(repr=False)
    installation_id: int | None = None


def check_api_url(url: str) -> str:
    """The API's base URL, or UsageError: PyGithub crashes on garbage (AttributeError)."""
    if "@" in url:  # user:password@host: never echo it
        raise UsageError("GITHUB_API_URL must not contain credentials (user:password@): give a token instead")
    bad = UsageError(f"GITHUB_API_URL must be an http(s) URL like {DEFAULT_API_URL}, got {url!r}")
    if not url.isprintable() or any(ch.isspace() for ch in url):
        raise bad
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError when out of range
    except ValueError:
        raise bad from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise bad
    return url.rstrip("/")


def _check_token(token: str) -> str:
    token = token.strip()
    if not token:
        raise AuthError(
            "GITHUB_TOKEN is not set: give orion-action a token with issues: write, "
            "or a GitHub App (ORION_APP_ID and ORION_APP_PRIVATE_KEY)"
        )
    if not (token.isascii() and token.isprintable()) or any(ch.isspace() for ch in token):
        raise AuthError("GITHUB_TOKEN holds spaces, control or non-ASCII characters: it is not a token")
    return token


class _App:
    """A GitHub App's JWT auth and its installation auth, which PyGithub renews before the
    installation token's hour is up. Clones share one, so they share one token."""

    def __init__(self, creds: AppCredentials):
        if not (creds.app_id.isascii() and creds.app_id.isdigit()):
            raise UsageError("ORION_APP_ID must be the GitHub App's numeric id (its settings page shows it)")
        key = creds.private_key.strip()
        if "\n" not in key and "\\n" in key:  # a PEM squeezed onto one line with literal \n
            key = key.replace("\\n", "\n")
        if not (key.startswith("-----BEGIN ") and key.endswith(" PRIVATE KEY-----")):
            raise AuthError("ORION_APP_PRIVATE_KEY is not a PEM key (-----BEGIN ... PRIVATE KEY-----)")
        self.jwt = Auth.AppAuth(creds.app_id, key)
        try:
            self.jwt.create_jwt()
        except Exception:  # PyJWT/cryptography errors; their text is never shown (it may quote the key)
            raise AuthError("ORION_APP_PRIVATE_KEY cannot sign a JWT: is it the App's private key?") from None
        self.app_id = creds.app_id
        self.installation_id = creds.installation_id
        self.installation: Auth.AppInstallationAuth | None = None
        self.login: str | None = None  # "<slug>[bot]", who the installation's comments are by


def _timeout_s(seconds: float) -> int:
    """A timeout as PyGithub takes it: whole seconds, at least one."""
    return max(1, round(seconds))


def _retry_after(value: str | None, server_now: float) -> float | None:
    """Seconds to wait from a `Retry-After` in seconds or as an HTTP date (RFC 9110), or an
    `x-ratelimit-reset` epoch; None when unreadable (then the usual backoff applies)."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = when.timestamp() - server_now
    return max(0.0, seconds) if math.isfinite(seconds) else None


class _Transient(Exception):
    """A failure worth retrying; `wait` is what GitHub asked for, if it said."""

    def __init__(self, cause: Exception, wait: float | None, ambiguous: bool):
        super().__init__(str(cause))
        self.cause = cause
        self.wait = wait
        self.ambiguous = ambiguous  # the request may have been executed (timeout, 5xx)


def _when(value: str | None) -> datetime:
    """A time from a `Date` header (or the local clock when there is none or it is garbage:
    only used for GitHub's "now")."""
    if not value:
        return datetime.now(timezone.utc)
    try:
        return _aware(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        try:
            return _aware(parsedate_to_datetime(value))
        except (TypeError, ValueError, IndexError, OverflowError):
            return datetime.now(timezone.utc)


def _aware(when: datetime) -> datetime:
    """GitHub's times are UTC; one without a zone must not meet aware times in a comparison."""
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def _strict_time(value: Any, what: str) -> datetime:
    """A time GitHub must have sent (a security decision rests on it): GitHubError otherwise."""
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00")) if isinstance(value, str) else None
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise GitHubError(f"GitHub sent {what} that is not a time: {str(value)[:40]!r}")
    return when


def _label_name(event: dict[str, Any]) -> str:
    label = event.get("label")
    return str(label.get("name") or "") if isinstance(label, dict) else ""


def _actor_login(actor: object) -> object:
    """An event's actor's login as REST and comments name it: GraphQL names a Bot (the Actions
    bot, an App) by its slug, `github-actions` for `github-actions[bot]`; without the suffix,
    orion's own label writes would read as someone else's (ADRs 0061, 0065)."""
    login = actor.get("login") if isinstance(actor, dict) else None
    if isinstance(actor, dict) and actor.get("__typename") == "Bot" and isinstance(login, str) and login \
            and not login.endswith("[bot]"):
        return f"{login}[bot]"
    return login


def _queued(event: dict[str, Any], number: int) -> Queued:
    """A GraphQL `LabeledEvent` as a Queued: a valid login, time and id, or GitHubError."""
    actor = event.get("actor")
    login = _actor_login(actor)
    if not isinstance(login, str) or not _LOGIN.fullmatch(login):
        raise GitHubError(f"GitHub's labeled event of #{number} names no valid login")
    user_id = actor.get("databaseId") if isinstance(actor, dict) else None
    event_id = event.get("id")
    if not isinstance(event_id, str) or not re.fullmatch(r"[A-Za-z0-9_=-]{1,100}", event_id):
        raise GitHubError(f"GitHub's labeled event of #{number} has no valid id")
    return Queued(
        login=login,
        user_id=user_id if type(user_id) is int else None,
        at=_strict_time(event.get("createdAt"), "an event's createdAt"),
        event_id=event_id,
    )


def _label_event(event: dict[str, Any], added: bool, number: int) -> LabelEvent:
    """A GraphQL `LabeledEvent` or `UnlabeledEvent` as a LabelEvent. An actor GitHub no longer
    names (a deleted account) reads as ""; one that is not a login is GitHubError."""
    login = _actor_login(event.get("actor"))
    if login is not None and (not isinstance(login, str) or not _LOGIN.fullmatch(login)):
        raise GitHubError(f"GitHub's label event of #{number} names no valid login")
    return LabelEvent(_label_name(event), added, login or "",
                      _strict_time(event.get("createdAt"), "an event's createdAt"))


def _header(headers: dict[str, Any] | None, name: str) -> str | None:
    for k, v in (headers or {}).items():
        if k.lower() == name:
            return str(v)
    return None


class _Malformed(ValueError):
    """GitHub's answer is not the shape its endpoint documents (an error page with status 200,
    an empty 204 or a redirect for a GET, cut or nested JSON, a field of the wrong type). It is
    retried like a transient failure, and ambiguous (a write may have landed): a proxy's error
    page passes, and a lasting one ends in `Unavailable` (exit 69) naming what was wrong. The
    message names fields and JSON types only, never the answer's text."""


def _kind(value: Any) -> str:
    """The JSON type of `value`, for a message."""
    if value is None:
        return "null or empty"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else type(value).__name__


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Malformed(f"{what} is {_kind(value)}, not an object")
    return value


def _array(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Malformed(f"{what} is {_kind(value)}, not an array")
    return value


def _whole(data: dict[str, Any], key: str, what: str, least: int = 1) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _Malformed(f"{what}: {key!r} is {_kind(value) if key in data else 'missing'}, "
                         f"not a whole number of at least {least}")
    return value


def _text(data: dict[str, Any], key: str, what: str, required: bool = False) -> str:
    """A string field; null or absent is "" unless `required`."""
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise _Malformed(f"{what}: {key!r} is {_kind(value) if key in data else 'missing'}, "
                         f"not a{' non-empty' if required else ''} string")
    return value


def _time(data: dict[str, Any], key: str, what: str, default: datetime | None = None) -> datetime:
    """An ISO 8601 time field. Liveness is judged on these: a missing or unreadable one is a
    bad answer, never read as "now" (that would make a dead holder look alive)."""
    value = data.get(key)
    if value is None and default is not None:
        return default
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return _aware(datetime.fromisoformat(value.replace("Z", "+00:00")))
    raise _Malformed(f"{what}: {key!r} is {_kind(value) if key in data else 'missing'}, not an ISO 8601 time")


def _login(data: dict[str, Any], key: str, what: str) -> str:
    """The login of a user field (`user`): null (a deleted account: "ghost") reads as ""."""
    user = data.get(key)
    if user is None:
        return ""
    return _text(_object(user, f"{what}: {key!r}"), "login", f"{what}: {key!r}")


def _comment(data: Any) -> Comment:
    c = _object(data, "a comment")
    number = _whole(c, "id", "a comment")
    issue = _ISSUE_URL.search(_text(c, "issue_url", "a comment"))
    created = _time(c, "created_at", "a comment")
    return Comment(
        id=number,
        author=_login(c, "user", "a comment"),
        body=_text(c, "body", "a comment"),
        created_at=created,
        updated_at=_time(c, "updated_at", "a comment", default=created),
        issue=int(issue.group(1)) if issue else None,
        author_id=_user_id(c),
    )


def _user_id(c: dict[str, Any]) -> int | None:
    """The numeric id of the comment's author, if GitHub sent one (trusted_authors are
    matched by it: docs/adr/0035)."""
    user = c.get("user")
    user_id = user.get("id") if isinstance(user, dict) else None
    return user_id if type(user_id) is int else None


def _issue(data: Any, read_at: datetime) -> Issue:
    i = _object(data, "an issue")
    number = _whole(i, "number", "an issue")
    labels = [_object(label, "a label") for label in _array(i.get("labels") or [], "an issue's labels")]
    names = [_text(label, "name", "a label", required=True) for label in labels]
    created = _time(i, "created_at", "an issue")
    return Issue(
        number=number,
        is_open=_text(i, "state", "an issue", required=True) == "open",
        labels=frozenset(names),
        comments=_whole(i, "comments", "an issue", least=0) if i.get("comments") is not None else 0,
        created_at=created,
        read_at=read_at,
        updated_at=_time(i, "updated_at", "an issue", default=created),
        is_pull_request="pull_request" in i,
        title=_text(i, "title", "an issue"),
        body=_text(i, "body", "an issue"),
        label_descriptions=tuple(
            (name, _text(label, "description", "a label")) for name, label in zip(names, labels, strict=True)
        ),
        author=_login(i, "user", "an issue"),
    )


def _graphql_issue(data: Any, read_at: datetime) -> Issue | None:
    """The issue as the trigger check's GraphQL query read it (ADR 0063), or None when the
    answer does not say all a REST read would (over 100 labels, a field missing): the caller
    then reads it apart."""
    try:
        labels = data["labels"]
        if not isinstance(labels["nodes"], list) or labels["totalCount"] != len(labels["nodes"]):
            return None
        return _issue({"number": data["number"], "state": str(data["state"]).lower(), "title": data["title"],
                       "body": data["body"], "created_at": data["createdAt"], "updated_at": data["updatedAt"],
                       "comments": data["comments"]["totalCount"], "user": data["author"],
                       "labels": labels["nodes"]}, read_at)
    except (KeyError, TypeError, _Malformed):
        return None


def _graphql_errors(answer: Any) -> str:
    """The messages of a GraphQL answer's `errors`, for a log line."""
    errors = answer.get("errors") if isinstance(answer, dict) else None
    if not isinstance(errors, list) or not errors:
        return "no data and no error given"
    return "; ".join(str(e.get("message") if isinstance(e, dict) else e)[:200] for e in errors[:3])


# Parsers of whole answers, run inside the retry loop (`GitHubRepo._request(parse=...)`):
# each takes the decoded JSON and the response's headers.
def _one_issue(data: Any, headers: dict[str, Any]) -> Issue:
    return _issue(data, GitHubRepo.server_time(headers))


def _issues(data: Any, headers: dict[str, Any]) -> list[Issue]:
    read_at = GitHubRepo.server_time(headers)
    return [_issue(d, read_at) for d in _array(data, "an issue listing")]


def _one_comment(data: Any, headers: dict[str, Any]) -> Comment:
    return _comment(data)


def _comments(data: Any, headers: dict[str, Any]) -> list[Comment]:
    return [_comment(d) for d in _array(data, "a comment listing")]


def _label_names(data: Any, headers: dict[str, Any]) -> frozenset[str]:
    """POST /issues/{n}/labels answers every label the issue carries after the write."""
    labels = [_object(label, "a label") for label in _array(data, "an issue's labels")]
    return frozenset(_text(label, "name", "a label", required=True) for label in labels)


def _an_object(data: Any, headers: dict[str, Any]) -> dict[str, Any]:
    return _object(data, "the answer")


def _user_login(data: Any, headers: dict[str, Any]) -> str:
    return _text(_object(data, "the user"), "login", "the user", required=True)


def _app_slug(data: Any, headers: dict[str, Any]) -> str:
    return _text(_object(data, "the App"), "slug", "the App", required=True)


def _installation_id(data: Any, headers: dict[str, Any]) -> int:
    return _whole(_object(data, "the installation"), "id", "the installation")


def _workflow_runs(data: Any, headers: dict[str, Any]) -> list[WorkflowRun]:
    runs = _object(data, "a workflow run listing").get("workflow_runs") or []
    found = []
    for r in _array(runs, "a workflow run listing's runs"):
        run = _object(r, "a workflow run")
        began = "run_started_at" if run.get("run_started_at") else "created_at"
        found.append(WorkflowRun(_whole(run, "id", "a workflow run"), _text(run, "status", "a workflow run"),
                                 _text(run, "display_title", "a workflow run"),
                                 _time(run, began, "a workflow run") if run.get(began) else None))
    return found


_Parse = Callable[[Any, dict[str, Any]], Any]


def _cause(cause: BaseException | None) -> str:
    """A transient failure's cause in a few words (never the answer's text)."""
    if isinstance(cause, github.GithubException):
        return _message(cause)
    return str(cause) if isinstance(cause, _Malformed) else type(cause).__name__


def _message(exc: github.GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return str(data.get("message") or exc.message or f"HTTP {exc.status}")


class GitHubRepo:
    """One repository's issues, comments and labels, as orion needs them."""

    def __init__(
        self,
        full_name: str,
        token: str = "",
        api_url: str = DEFAULT_API_URL,
        *,
        app: AppCredentials | None = None,
        timeout: float = 10.0,
        retry_for: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Clock = SYSTEM_CLOCK,
        record_key: bytes | None = None,
        trusted_logins: tuple[str, ...] = (),
        _shared_app: _App | None = None,
        _issue_of: dict[int, int] | None = None,
    ):
        """Authenticate with `token`, or as the GitHub App `app` (then `token` is unused). An
        App without an installation id costs one request here: GET /repos/{repo}/installation.
        `timeout` and `retry_for` are the defaults a call's Policy may replace; `clock` times the
        retry budget of calls made outside any `bounded` block (inside one, the Policy's)."""
        if not _REPO.match(full_name or "") or {".", ".."} & set(full_name.split("/")):
            raise UsageError(f"repository must look like OWNER/NAME, got {full_name!r}")
        self.full_name = full_name
        self.api_url = check_api_url(api_url)
        self.retry_for = retry_for
        self.timeout = timeout
        self._bounds = Bounds()  # the policy of the open `bounded` blocks (ports.Policy)
        self._sleep = sleep
        self._clock = clock
        self._record_key = record_key  # ORION_RECORD_KEY: records are sealed and verified
        self._issue_of = {} if _issue_of is None else _issue_of  # comment id -> issue, as read
        # GraphQL node ids the trigger check's query read (ADR 0076): issue number -> id, and
        # the repository's labels, casefolded name -> id (shared with clones).
        self._node_ids: dict[int, str] = {}
        self._label_ids: dict[str, str] = {}
        self._comment_ids: dict[int, str] = {}  # comment id -> node id, from the answer to its POST
        self._trusted_logins = trusted_logins  # trusted_authors: matched by their user ids
        self._resolved: dict[int, str] | None = None  # their ids, once asked
        self._repo_path = f"{self.api_url}/repos/{full_name}"
        self.requests = 0
        # Told at a request's first transient failure (cli sets it to the log): a wait of up
        # to retry_for seconds is never silent.
        self.on_retry: Callable[[str], None] | None = None
        self.not_modified = 0  # of those, answered 304 to If-None-Match: not charged (ADR 0044)
        # url -> ETag, headers, JSON; shared with every twin (clone), under its lock: a 304 says
        # the answer is the one last read, whichever client read it, so the ending's reads of
        # what the heartbeat read last are free (issue 19).
        self._validators: dict[str, tuple[str, dict[str, Any], Any]] = {}
        self._validators_lock = threading.Lock()
        self.budget = Budget()
        self._login: str | None = None
        self._default_branch: str | None = None
        self._app = _shared_app or (_App(app) if app is not None else None)
        self._token = "" if self._app else _check_token(token)
        self._jwt_gh: github.Github | None = None
        self._gh = self._github(self._installation_auth() if self._app else Auth.Token(self._token))
        # PyGithub fixes the timeout per connection: one per timeout a Policy asks for.
        self._by_timeout = {_timeout_s(self.timeout): self._gh}

    def _github(self, auth: Auth.Auth, timeout: float | None = None) -> github.Github:
        return github.Github(
            auth=auth,
            base_url=self.api_url,
            timeout=_timeout_s(self.timeout if timeout is None else timeout),
            retry=None,
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=None,
            user_agent="orion-action",
        )

    def _installation_auth(self) -> Auth.AppInstallationAuth:
        """The App's installation auth, shared by every clone; found by the repository if no
        installation id was given."""
        app = self._app
        assert app is not None
        if app.installation is None:
            number = app.installation_id
            if number is None:
                try:
                    _, data = self._request("GET", f"{self._repo_path}/installation", jwt=True,
                                            parse=_installation_id)
                except NotFound:
                    raise AuthError(
                        f"the GitHub App {app.app_id} is not installed on {self.full_name} "
                        f"(GET /repos/{self.full_name}/installation: 404)", 404
                    ) from None
                number = data
            app.installation = app.jwt.get_installation_auth(number, dict(APP_TOKEN_PERMISSIONS))
        return app.installation

    def clone(self) -> GitHubRepo:
        """A twin with its own connection and counters, for another thread (the heartbeat's).
        A twin of an App's repo shares its renewing installation auth, not a frozen token."""
        twin = GitHubRepo(
            self.full_name,
            self._token,
            self.api_url,
            timeout=self.timeout,
            retry_for=self.retry_for,
            sleep=self._sleep,
            clock=self._clock,
            record_key=self._record_key,
            trusted_logins=self._trusted_logins,
            _shared_app=self._app,
            _issue_of=self._issue_of,
        )
        twin._login = self._login
        twin.on_retry = self.on_retry
        twin._resolved = self._resolved
        twin._default_branch = self._default_branch
        twin._validators, twin._validators_lock = self._validators, self._validators_lock
        twin._node_ids, twin._label_ids = self._node_ids, self._label_ids
        twin._comment_ids = self._comment_ids
        return twin

    def bounded(self, policy: Policy) -> contextlib.AbstractContextManager[None]:
        return self._bounds.bounded(policy)

    def close(self) -> None:
        for gh in self._by_timeout.values():
            gh.close()
        if self._jwt_gh is not None:
            self._jwt_gh.close()

    # -- plumbing ---------------------------------------------------------------------------

    @property
    def charged(self) -> int:
        """Requests that counted against the rate limit: a 304 to a conditional GET does not."""
        return self.requests - self.not_modified

    def _once(
        self, verb: str, url: str, params: dict[str, Any] | None, body: Any, jwt: bool, parse: _Parse | None,
        conditional: bool, timeout: float,
    ) -> tuple[dict[str, Any], Any]:
        self.requests += 1
        requester = self._jwt_requester() if jwt else self._requester(timeout)
        key = f"{url}?{sorted((params or {}).items())}"
        with self._validators_lock:
            known = self._validators.get(key) if conditional else None
        ask = {"If-None-Match": known[0]} if known else None
        try:  # an App's installation token is renewed in here when due: its errors are these too
            headers, data = requester.requestJsonAndCheck(verb, url, parameters=params, headers=ask,
                                                          input=body)
        except github.GithubException as exc:
            self._note_budget(exc.headers)
            raise self._translate(exc) from None
        except _TRANSPORT_ERRORS as exc:
            raise _Transient(exc, None, ambiguous=True) from None
        except RecursionError:  # JSON nested too deep to decode, or redirects in a loop
            raise _Transient(_Malformed("an answer nested or redirected too deep to read"), None,
                             ambiguous=True) from None
        except RuntimeError as exc:  # PyGithub follows no redirect to another host or protocol
            where = "".join(ch if ch.isprintable() else "?" for ch in str(exc).split(", please")[0])[:200]
            raise GitHubError(
                f"GitHub redirected {verb} {url.replace(self.api_url, '')} where orion does not follow "
                f"({where}): is GITHUB_API_URL right?"
            ) from None
        except (ValueError, OverflowError) as exc:  # undecodable JSON, unreadable rate-limit headers
            raise _Transient(_Malformed(f"an unreadable answer ({type(exc).__name__})"), None,
                             ambiguous=True) from None
        self._note_budget(headers)
        fresh = data
        if known is not None and data is None:  # 304 Not Modified: the body is empty
            self.not_modified += 1
            headers, data = {**known[1], **headers}, known[2]  # the Link of the first answer
        if parse is not None:
            try:
                parsed = parse(data, headers)
            except _Malformed as exc:
                raise _Transient(exc, None, ambiguous=True) from None
        etag = _header(headers, "etag")
        if conditional and fresh is not None:  # only an answer that parsed is remembered
            with self._validators_lock:
                self._validators.pop(key, None)
                if etag:
                    while len(self._validators) >= MAX_VALIDATORS:
                        self._validators.pop(next(iter(self._validators)))
                    self._validators[key] = (etag, dict(headers), fresh)
        return headers, (data if parse is None else parsed)

    def _requester(self, timeout: float) -> Any:
        """The requester whose connection waits `timeout` seconds (whole) for an answer."""
        key = _timeout_s(timeout)
        if key not in self._by_timeout:
            self._by_timeout[key] = self._github(
                self._installation_auth() if self._app else Auth.Token(self._token), key)
        return self._by_timeout[key].requester

    def _jwt_requester(self) -> Any:
        """Requests as the App itself (a JWT): finding its installation, learning its name."""
        assert self._app is not None
        if self._jwt_gh is None:
            self._jwt_gh = self._github(self._app.jwt)
        return self._jwt_gh.requester

    def _note_budget(self, headers: dict[str, Any] | None) -> None:
        limit, remaining = _header(headers, "x-ratelimit-limit"), _header(headers, "x-ratelimit-remaining")
        if limit is not None and remaining is not None:
            with contextlib.suppress(ValueError):
                reset = _retry_after(_header(headers, "x-ratelimit-reset"), 0.0)
                now = self.server_time(headers or {}).timestamp()
                reset_in = None if reset is None else max(0.0, reset - now)
                self.budget = Budget(int(limit), int(remaining), reset_in)

    def _translate(self, exc: github.GithubException) -> Exception:
        """PyGithub's error as the project's own; a 401 is fatal at once (never retried)."""
        status, message = exc.status, _message(exc)
        headers = exc.headers or {}
        now = self.server_time(headers).timestamp()
        retry_after = _retry_after(_header(headers, "retry-after"), now)
        if status == 401:
            if self._app:
                return AuthError(
                    f"GitHub rejected the GitHub App {self._app.app_id} (401 {message}): "
                    f"check ORION_APP_ID and ORION_APP_PRIVATE_KEY", status
                )
            return AuthError(f"GitHub rejected the token (401 {message}): check GITHUB_TOKEN (the action's "
                             f"github-token input)", status)
        if status == 422 and self._app and "permissions requested" in message:
            return AuthError(
                f"the GitHub App {self._app.app_id} lacks Issues: read and write on {self.full_name} "
                f"(422 {message})", status
            )
        if status in (403, 429):
            remaining = _header(headers, "x-ratelimit-remaining")
            reset = _retry_after(_header(headers, "x-ratelimit-reset"), 0.0)
            if retry_after is not None:
                return _Transient(exc, retry_after, ambiguous=False)
            if remaining == "0" and reset is not None:
                return _Transient(exc, max(0.0, reset - time.time()) + 1, ambiguous=False)
            if status == 429 or "rate limit" in message.lower():
                return _Transient(exc, 60.0, ambiguous=False)
            return Forbidden(f"GitHub refused: {message} (403); does the token have issues: write?", status)
        if status in (404, 410):  # 410: the issue was deleted, or the repository's issues are off
            if status == 410:
                return NotFound(f"gone: {message} (410)", status)
            return NotFound(
                f"not found (404 {message}) in {self.full_name}: check the repository's name, and that "
                f"the token can see it (a private repository needs a token with access to it)", status
            )
        if status >= 500:
            return _Transient(exc, retry_after, ambiguous=True)
        return GitHubError(f"GitHub answered {status}: {message}", status)

    def _request(
        self,
        verb: str,
        url: str,
        params: dict[str, Any] | None = None,
        body: Any = None,
        *,
        before_retry: Callable[[], Any] | None = None,
        jwt: bool = False,
        parse: _Parse | None = None,
        conditional: bool = False,
    ) -> tuple[dict[str, Any], Any]:
        """One logical request, retried on transient failures within the retry budget (the
        call's Policy's `retry_for`, else the client's), timed on the Policy's clock, the one
        leases are timed on: a try is sent only while the budget and the deadline still allow
        it, judged again after every wait, since a wait that spans a suspend of the machine
        ends later than it was meant to (ADR 0058).

        `conditional` (GETs only): send the ETag of the last answer to the same URL as
        `If-None-Match`; a 304 returns that answer again (parsed anew with the new headers) and
        counts in `not_modified`, not against the rate limit (ADR 0044).

        `parse` turns the answer into what the caller uses, or rejects it as malformed (then it
        is retried like a transient failure); without it the answer is returned unread.
        `before_retry` runs before retrying an *ambiguous* failure (the request may have been
        executed); if it returns a value, that value is the result and nothing is re-sent."""
        policy = self._bounds.current()  # the caller's `bounded` block, on its clock
        if policy is not None and policy.expired():
            raise Unavailable(f"no time left for {verb} {url.replace(self.api_url, '')}")
        clock = policy.clock if policy is not None and policy.clock is not None else self._clock
        budget = self.retry_for if policy is None or policy.retry_for is None else policy.retry_for
        timeout = self.timeout if policy is None or policy.timeout is None else policy.timeout
        started = clock.monotonic()
        attempt = 0
        ambiguous = False
        last: _Transient | None = None

        def wait_for(state: tenacity.RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            asked = exc.wait if isinstance(exc, _Transient) else None
            if asked is not None:
                return asked
            return min(8.0, 0.5 * 2 ** (state.attempt_number - 1)) * random.uniform(0.8, 1.2)

        def out_of_time(state: tenacity.RetryCallState) -> bool:
            if policy is not None and policy.aborted():
                return True
            wait = wait_for(state)
            return clock.monotonic() + wait - started > budget or (policy is not None and policy.past(wait))

        def spent() -> bool:
            """After a wait: whether the budget, the deadline or an abort forbids the next try."""
            return clock.monotonic() - started > budget or (
                policy is not None and (policy.expired() or policy.aborted()))

        def first_failure(state: tenacity.RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            if state.attempt_number == 1 and self.on_retry is not None and isinstance(exc, _Transient):
                hint = "; check GITHUB_API_URL" if isinstance(exc.cause, OSError | ConnectionError) else ""
                self.on_retry(
                    f"GitHub did not answer {verb} {url.replace(self.api_url, '')} ({_cause(exc.cause)}); "
                    f"retrying for up to {budget:g}s{hint}"
                )

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Transient),
            wait=wait_for,
            stop=out_of_time,
            sleep=self._sleep,
            before_sleep=first_failure,
            reraise=True,
        )
        try:
            for attempt_ctx in retrying:
                with attempt_ctx:
                    if last is not None and spent():
                        break
                    attempt += 1
                    if ambiguous and before_retry is not None:
                        found = before_retry()
                        if found is not None:
                            return {}, found
                    try:
                        return self._once(verb, url, params, body, jwt, parse, conditional, timeout)
                    except _Transient as exc:
                        ambiguous, last = exc.ambiguous, exc
                        raise
        except _Transient as exc:
            last = exc
        assert last is not None
        raise Unavailable(
            f"GitHub did not answer {verb} {url.replace(self.api_url, '')} successfully "
            f"within {budget:g}s ({attempt} tries; last: {_cause(last.cause)})"
        ) from None

    def _pages(
        self, url: str, params: dict[str, Any], parse: _Parse, conditional: bool = False
    ) -> Iterator[tuple[dict[str, Any], list[Any], bool]]:
        """Each page of a listing (as `parse` reads it), and whether another page follows."""
        params = {**params, "per_page": 100}
        page = int(params.pop("page", 1))
        while True:
            headers, data = self._request("GET", url, {**params, "page": page}, parse=parse,
                                          conditional=conditional)
            more = 'rel="next"' in (_header(headers, "link") or "") and bool(data)
            yield headers, data, more
            if not more:
                return
            page += 1

    @staticmethod
    def server_time(headers: dict[str, Any]) -> datetime:
        """GitHub's clock: the `Date` header of a response."""
        value = _header(headers, "date")
        return _when(value) if value else datetime.now(timezone.utc)

    # -- identity ---------------------------------------------------------------------------

    def own_login(self) -> str | None:
        """The token's login (GET /user). An Actions GITHUB_TOKEN cannot read it: then the
        Actions bot, which is who its comments are by. A GitHub App: "<its slug>[bot]"."""
        if self._login is None and self._app is not None:
            if self._app.login is None:
                _, slug = self._request("GET", f"{self.api_url}/app", jwt=True, parse=_app_slug)
                self._app.login = f"{slug}[bot]"
            self._login = self._app.login
        if self._login is None:
            try:
                _, self._login = self._request("GET", f"{self.api_url}/user", parse=_user_login)
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
                "GET", f"{self._repo_path}/collaborators/{quote(login, safe='')}/permission", parse=_an_object
            )
        except NotFound:
            return "none"
        role = str(data.get("role_name") or "")
        if role in _ROLES:
            return role
        return _LEGACY_PERMISSION.get(str(data.get("permission") or ""), "none")

    def queue_history(self, number: int, label: str, cancel: str = "", *others: str) -> QueueHistory:
        """Who added `label` to the issue and when its title or body last changed
        (docs/adr/0034-the-label-approves-the-text.md), in one GraphQL query (ADR 0046): the
        `LabeledEvent`s with their actor, the title's `RenamedTitleEvent`s, and the body's
        `lastEditedAt`; and, in the same query, the `labeled` and `unlabeled` events of `label`
        and `cancel` (ADR 0061), and of `others` (the lock, ADR 0088; the fates, ADR 0094). More
        than 100 such events take one more query per 100, up to MAX_EVENT_PAGES. An answer that
        cannot be read raises GitHubError: no information means no run."""
        owner, name = self.full_name.split("/", 1)
        wanted = {name.casefold() for name in (label, cancel, *others) if name} if cancel else set()
        labelled: list[Queued] = []
        events: list[LabelEvent] = []
        renamed: datetime | None = None
        edited: datetime | None = None
        before: str | None = None
        read: Issue | None = None
        for pages in range(1, MAX_EVENT_PAGES + 1):
            variables = {"owner": owner, "name": name, "number": number, "before": before}
            sent = self._clock.monotonic()
            try:
                headers, answer = self._request("POST", self._graphql_url,
                                          body={"query": _QUEUE_HISTORY, "variables": variables},
                                          parse=_an_object)
            except NotFound:
                raise NotFound(
                    f"GitHub's GraphQL API ({self._graphql_url}) is not there: the trigger check needs "
                    f"it to tell who queued #{number} and whether it was edited since", 404
                ) from None
            try:
                issue = answer["data"]["repository"]["issue"]
                items = issue["timelineItems"]
                nodes, page = items["nodes"], items["pageInfo"]
                more, before = page["hasPreviousPage"] is True, page["startCursor"]
                edited_raw = issue["lastEditedAt"]
            except (KeyError, TypeError):
                nodes = None
            if not isinstance(nodes, list) or (more and not isinstance(before, str)):
                raise GitHubError(f"GitHub's GraphQL answer for #{number} is not the issue's history")
            if pages == 1:
                # A query reads the issue at some moment of its own, before its answer's time.
                # A claim's "read at" allows a second for that (a REST read's Date, whole
                # seconds, with SERVER_TIME_SLACK_S); a query that took longer counts as read
                # that much earlier, so it is never later than a REST read's (ADR 0063).
                slow = max(0.0, self._clock.monotonic() - sent - 1.0)
                read = _graphql_issue(issue, self.server_time(headers) - timedelta(seconds=slow))
                self._learn_ids(number, issue, answer["data"]["repository"].get("labels"))
                if edited_raw is not None:
                    edited = _strict_time(edited_raw, "lastEditedAt")
            older: list[Queued] = []
            older_events: list[LabelEvent] = []
            for node in nodes:
                kind = node.get("__typename") if isinstance(node, dict) else None
                if kind == "RenamedTitleEvent":
                    at = _strict_time(node.get("createdAt"), "an event's createdAt")
                    renamed = max(renamed or at, at)
                    continue
                if kind not in ("LabeledEvent", "UnlabeledEvent"):
                    continue
                if kind == "LabeledEvent" and _label_name(node).casefold() == label.casefold():
                    older.append(_queued(node, number))
                if _label_name(node).casefold() in wanted:
                    older_events.append(_label_event(node, kind == "LabeledEvent", number))
            labelled[:0] = older  # each page is older than the one before it
            events[:0] = older_events
            if not more:
                break
        else:
            raise GitHubError(f"#{number} has over {MAX_EVENT_PAGES * 100} label and title events: "
                              f"who queued it is unknown")
        changed = max((t for t in (renamed, edited) if t is not None), default=None)
        return QueueHistory(tuple(labelled), changed, tuple(events), read)

    def _learn_ids(self, number: int, issue: Any, labels: Any) -> None:
        """Keep the node ids a query answered, for `finish` (ADR 0076); what is missing or
        malformed stays unknown (then the ending writes by REST)."""
        node = issue.get("id") if isinstance(issue, dict) else None
        if isinstance(node, str) and node:
            self._node_ids[number] = node
        nodes = labels.get("nodes") if isinstance(labels, dict) else None
        for label in nodes if isinstance(nodes, list) else []:
            if not isinstance(label, dict):
                continue
            key, name = label.get("id"), label.get("name")
            if isinstance(key, str) and isinstance(name, str):
                self._label_ids[name.casefold()] = key

    def finish(self, number: int, comment_id: int, body: str, add: tuple[str, ...]) -> Finished | None:
        """The record edit, then `add` on, in one GraphQL request (ADR 0076); None (nothing
        sent) when a node id is unknown. A field GitHub refused (its `data` entry null) did not
        land; an answer with no `data` at all is a GitHubError (nothing is known to have landed)."""
        issue, comment = self._node_ids.get(number), self._comment_ids.get(comment_id)
        add_ids = [self._label_ids.get(n.casefold()) for n in add]
        if issue is None or comment is None or None in add_ids:
            return None
        body = self._sealed(body, lambda: number)
        variables = {"comment": comment, "body": body, "issue": issue, "add": add_ids}
        _, answer = self._request("POST", self._graphql_url, body={"query": _FINISH, "variables": variables},
                                  parse=_an_object)
        data = answer.get("data")
        if not isinstance(data, dict):
            raise GitHubError(f"GitHub refused the ending of #{number}: {_graphql_errors(answer)}")
        return Finished(edited=isinstance(data.get("edit"), dict), added=isinstance(data.get("add"), dict))

    @property
    def _graphql_url(self) -> str:
        """api.github.com/graphql; GitHub Enterprise Server: https://HOST/api/graphql."""
        if self.api_url.endswith("/api/v3"):
            return self.api_url[: -len("/v3")] + "/graphql"
        return f"{self.api_url}/graphql"

    # -- issues -----------------------------------------------------------------------------

    def check_repo(self) -> None:
        self._request("GET", self._repo_path)

    def get_issue(self, number: int) -> tuple[Issue, datetime]:
        try:
            headers, issue = self._request("GET", f"{self._repo_path}/issues/{number}", parse=_one_issue,
                                           conditional=True)
        except NotFound as exc:
            gone = " (410: deleted, or the repository's issues are turned off)" if exc.status == 410 else ""
            raise NotFound(f"issue #{number} does not exist in {self.full_name}{gone}", exc.status) from None
        if issue.is_pull_request:
            raise NotFound(f"#{number} in {self.full_name} is a pull request, not an issue", 404)
        return issue, self.server_time(headers)

    def list_issues(self, label: str | None, state: str = "open",
                    since: datetime | None = None) -> list[Issue]:
        """Issues (not pull requests) carrying `label` (None: any labels or none), oldest first
        (`since`: only those updated at or after it)."""
        params = {"state": state, "sort": "created", "direction": "asc"}
        if label is not None:
            params["labels"] = label
        if since is not None:
            params["since"] = since.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        found: list[Issue] = []
        for _, issues, _ in self._pages(f"{self._repo_path}/issues", params, _issues):
            found.extend(i for i in issues if not i.is_pull_request)
        return found

    def create_issue(self, title: str, body: str, labels: list[str], marker: str | None = None) -> Issue:
        """Open an issue (the dashboard). With `marker` (a unique string in the body), a retried
        POST first looks among the issues carrying `labels[0]` for one that already carries it."""

        def already_created() -> Issue | None:
            if marker is None or not labels:
                return None
            return next((i for i in self.list_issues(labels[0], state="all") if marker in i.body), None)

        _, issue = self._request(
            "POST",
            f"{self._repo_path}/issues",
            body={"title": title, "body": body, "labels": labels},
            before_retry=already_created,
            parse=_one_issue,
        )
        return issue

    def edit_issue(self, number: int, *, title: str, body: str) -> None:
        """Rewrite an issue's title and body (one PATCH)."""
        self._request("PATCH", f"{self._repo_path}/issues/{number}", body={"title": title, "body": body})

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
        url = f"{self._repo_path}/issues/{number}/comments"
        listing = self._pages(url, params, _comments, conditional=True)
        for pages, (headers, page, more) in enumerate(listing, start=1):
            now = now or self.server_time(headers)
            comments.extend(self._trusted_view(c, number) for c in page)
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
        for headers, page, _ in self._pages(f"{self._repo_path}/issues/comments", params, _comments):
            now = now or self.server_time(headers)
            for c in map(self._trusted_view, page):
                found.pop(c.id, None)
                found[c.id] = c
        kept = [c for c in found.values() if c.updated_at >= since]
        return kept, now or datetime.now(timezone.utc)

    def get_comment(self, comment_id: int) -> tuple[Comment, datetime]:
        headers, comment = self._request("GET", f"{self._repo_path}/issues/comments/{comment_id}",
                                         parse=_one_comment)
        return self._trusted_view(comment), self.server_time(headers)

    def post_comment(self, number: int, body: str, marker: str | None = None) -> Comment:
        """Post a comment. With `marker` (a unique string in the body), a retried POST first
        looks for a comment of ours that already carries it, so no duplicate is left."""

        found: list[Comment] = []

        def already_posted() -> Comment | None:
            # The marker is a fresh random token: nobody can have copied it before our POST
            # landed, so the first comment carrying it is ours.
            if marker is None:
                return None
            comments, _ = self.list_comments(number)
            mine = next((c for c in comments if marker in c.body), None)
            found.extend([mine] if mine else [])
            return mine

        if self._record_key is not None:
            body = seal(body, self._record_key, self.full_name, number)
        def posted(data: Any, headers: dict[str, Any]) -> Comment:
            made = _comment(data)
            node = data.get("node_id") if isinstance(data, dict) else None
            if isinstance(node, str) and node:  # for the ending's one request (ADR 0076)
                self._comment_ids[made.id] = node
            return made

        _, comment = self._request(
            "POST",
            f"{self._repo_path}/issues/{number}/comments",
            body={"body": body},
            before_retry=already_posted,
            parse=posted,
        )
        # a comment already_posted found was read through _trusted_view already
        return comment if comment in found else self._trusted_view(comment, number)

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        def issue() -> int:
            number = self._issue_of.get(comment_id)
            if number is None:  # not read by this process: GitHub says which issue it is on
                number = self.get_comment(comment_id)[0].issue
            if number is None:
                raise GitHubError(f"GitHub did not say which issue comment {comment_id} is on")
            return number

        body = self._sealed(body, issue)
        _, comment = self._request(
            "PATCH", f"{self._repo_path}/issues/comments/{comment_id}", body={"body": body},
            parse=_one_comment,
        )
        return self._trusted_view(comment)

    def _sealed(self, body: str, issue: Callable[[], int]) -> str:
        """`body` as orion writes it: a record block sealed for its issue when ORION_RECORD_KEY
        is set (`issue` is asked only then: it may cost a read)."""
        if self._record_key is None or not block_kind(body):
            return body
        return seal(body, self._record_key, self.full_name, issue())

    def _by_id(self, c: Comment) -> Comment:
        """Trusted authors are matched by GitHub's numeric user id (docs/adr/0035): a login
        named in `trusted_authors` can be renamed away and registered by someone else. Each is
        resolved to its id once; a comment by one of those ids reads as by the configured login
        (a renamed account stays trusted), and one by a configured login with another id reads
        as by "<login> (another account, id N)", which no login can match. The token's own
        login cannot change hands while the token works, so it needs no look-up."""
        if not self._trusted_logins:
            return c
        user_id = c.author_id
        ids = self._trusted_ids()
        if type(user_id) is int and user_id in ids:
            return replace(c, author=ids[user_id])
        own = (self._login or "").lower()
        if c.author.lower() in {n.lower() for n in self._trusted_logins} and c.author.lower() != own:
            return replace(c, author=f"{c.author} (another account, id {user_id})")
        return c

    def _trusted_ids(self) -> dict[int, str]:
        """{user id: login} of `trusted_authors`, asked once per process (GET /users/{login}
        each); a login GitHub does not know trusts nobody."""
        if self._resolved is None:
            resolved: dict[int, str] = {}
            for login in self._trusted_logins:
                try:
                    _, data = self._request("GET", f"{self.api_url}/users/{quote(login, safe='')}",
                                            parse=_an_object)
                except NotFound:
                    continue
                user_id = data.get("id") if isinstance(data, dict) else None
                if type(user_id) is int:
                    resolved[user_id] = login
            self._resolved = resolved
        return self._resolved

    def _trusted_view(self, comment: Comment, number: int | None = None) -> Comment:
        """A comment as orion reads it: an orion block without its MAC (docs/adr/0035). With
        ORION_RECORD_KEY, a block whose MAC does not verify for this repository and issue
        reads as written by nobody trusted: its author is shown with " (no valid MAC)", which
        no login can match."""
        c = self._by_id(comment)
        number = c.issue or number
        if number is not None:
            self._issue_of[c.id] = number
        if not block_kind(c.body):
            return c
        if self._record_key is None:
            return replace(c, body=unseal(c.body)[0])
        body, valid = verify(c.body, self._record_key, self.full_name, number or 0)
        return replace(c, body=body, author=c.author if valid and number else f"{c.author} {UNSEALED}")

    def delete_comment(self, comment_id: int) -> None:
        with contextlib.suppress(NotFound):
            self._request("DELETE", f"{self._repo_path}/issues/comments/{comment_id}")

    def add_labels(self, number: int, names: tuple[str, ...] | list[str]) -> frozenset[str]:
        """GitHub answers the issue's whole label list (ADR 0066): the claimer reads the cancel
        label there at no extra cost."""
        if not names:
            return frozenset()
        _, labels = self._request("POST", f"{self._repo_path}/issues/{number}/labels",
                                  body={"labels": list(names)}, parse=_label_names)
        return frozenset(labels)

    def remove_label(self, number: int, name: str) -> bool | None:
        """Remove one label: True if it was on the issue, False if it was absent (GitHub's
        404; removal is idempotent). A DELETE that may have landed although its answer was lost
        (a timeout, a 5xx), retried and answered 404, reads None: our own first try may have
        taken the label, or another writer before it (ADR 0096; a winner's unqueue then looks
        for another claim that may have taken the queueing)."""
        maybe_ours = []

        def note_ambiguous() -> None:
            maybe_ours.append(True)  # and send it again

        try:
            self._request("DELETE", f"{self._repo_path}/issues/{number}/labels/{quote(name, safe='')}",
                          before_retry=note_ambiguous)
        except NotFound:
            return None if maybe_ours else False
        return True

    def workflow_run_status(self, run_id: int) -> str | None:
        """`queued`/`in_progress`/`completed`, or None when it cannot be seen (404, no permission)."""
        try:
            _, data = self._request("GET", f"{self._repo_path}/actions/runs/{run_id}")
        except (NotFound, Forbidden):
            return None
        return str(data.get("status")) if isinstance(data, dict) else None

    # -- workflow runs (immediate pickup) -------------------------------------------------------

    def list_workflow_runs(self, workflow: str, status: str, limit: int = 100) -> list[WorkflowRun]:
        """Runs of the workflow file `workflow` in `status` (queued, in_progress, ... or a
        conclusion: success), newest first: one request for up to `limit` (at most 100)."""
        path = f"{self._repo_path}/actions/workflows/{quote(workflow, safe='')}/runs"
        query = {"status": status, "per_page": max(1, min(limit, 100))}
        _, runs = self._request("GET", path, query, parse=_workflow_runs)
        return runs

    def dispatch_workflow(self, workflow: str, inputs: dict[str, str]) -> None:
        """Start the workflow file `workflow` on the default branch (workflow_dispatch)."""
        if self._default_branch is None:
            _, repo = self._request("GET", self._repo_path, parse=_an_object)
            self._default_branch = _text(repo, "default_branch", "a repository") or "main"
        self._request(
            "POST",
            f"{self._repo_path}/actions/workflows/{quote(workflow, safe='')}/dispatches",
            body={"ref": self._default_branch, "inputs": inputs},
        )

    # -- labels of the repository --------------------------------------------------------------

    def get_label(self, name: str) -> tuple[str, str] | None:
        """A repository label's (color, description), or None when the repository has none
        of that name."""
        try:
            _, data = self._request(
                "GET", f"{self._repo_path}/labels/{quote(name, safe='')}", parse=_an_object
            )
        except NotFound:
            return None
        return _text(data, "color", "a label"), _text(data, "description", "a label")

    def ensure_label(self, name: str, color: str, description: str) -> str:
        """Create or update a repository label: returns "created", "updated" or "unchanged"."""
        url = f"{self._repo_path}/labels/{quote(name, safe='')}"
        try:
            _, data = self._request("GET", url, parse=_an_object)
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
