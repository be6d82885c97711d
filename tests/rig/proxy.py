"""A fault-injecting HTTP reverse proxy between the product under test and the emulator.

Why: the emulator is a well-behaved server, but the claim protocol must survive a badly
behaved GitHub (5xx, secondary rate limits, lost requests, partitions). And the emulator
differs from GitHub where it matters: it accepts unknown tokens (GitHub: 401 "Bad
credentials"), cannot create workflow runs, and cannot list a repository's issue comments
(its ``/issues/:number`` route shadows ``/issues/comments``). The proxy fixes these and
injects faults that a test switches at runtime.

It runs in a thread of the pytest process; the product (subprocesses) talks to
``proxy.url``. Each client connection gets its own handler thread, so a parked request
never blocks another. All state sits behind one ``threading.Condition`` that every change
notifies; parked requests and the ``wait_*`` helpers wait on it (no polling, no sleeps).

A request meets, in order: the global cut-off, the first matching rule (in the order the
rules were added), the token check, the synthetic endpoints (workflow runs, repository
comments), the emulator.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import random
import re
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from . import PATIENCE

SECONDARY_RATE_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again. If you reach out to GitHub Support for help, please include the request ID.")
DOCS = "https://docs.github.com/rest"
RUN_STATUSES = {"queued", "in_progress", "completed", "waiting", "requested", "pending"}
_RUN_PATH = re.compile(r"/repos/([^/]+)/([^/]+)/actions/runs/(\d+)(?:/attempts/(\d+))?")
_WORKFLOW_PATH = re.compile(r"/repos/([^/]+)/([^/]+)/actions/workflows/([^/]+)/(dispatches|runs)")
_REPO_COMMENTS = re.compile(r"/repos/([^/]+)/([^/]+)/issues/comments")
_ISSUE_EVENTS = re.compile(r"/repos/([^/]+)/([^/]+)/issues/(\d+)/events")
# Headers about one hop, not the message: never copied across the proxy.
_RESP_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer",
             "transfer-encoding", "upgrade"}
# If-None-Match is answered here, over the emulator's body, as GitHub answers it (ADR 0044).
_REQ_HOP = _RESP_HOP | {"content-length", "host", "accept-encoding", "if-none-match"}
_JSON = [("Content-Type", "application/json; charset=utf-8")]


@dataclass(eq=False)
class Rule:
    """One fault. ``count``: how many more times it applies (None: always); ``probability``
    draws from the proxy's seeded ``random``, so a run is reproducible."""

    method: str | None  # None: any method
    path: re.Pattern[str]  # re.search-ed against the path without its query string
    action: str  # status | blackhole | hold | delay | drop
    status: int = 0
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    after_forward: bool = False
    count: int | None = None
    probability: float = 1.0
    hits: int = 0
    removed: bool = False
    proxy: Proxy | None = field(default=None, repr=False)

    def remove(self) -> None:
        assert self.proxy is not None
        self.proxy.remove(self)


@dataclass(eq=False)
class Hold(Rule):
    """Parks matching requests (the emulator sees nothing) until the test releases them:
    freezes one side of a race at an exact point."""

    parked: int = 0
    drop: bool = False

    def wait_arrived(self, timeout: float = PATIENCE, n: int = 1) -> int:
        """Block until ``n`` requests in all have been parked; AssertionError on timeout."""
        assert self.proxy is not None
        with self.proxy._cv:
            if not self.proxy._cv.wait_for(lambda: self.parked >= n, timeout):
                raise AssertionError(f"hold {self.method} {self.path.pattern}: {self.parked} "
                                     f"of {n} requests arrived within {timeout}s")
            return self.parked

    def release(self, drop: bool = False) -> None:
        """End the hold: parked requests go on to the emulator, or (``drop=True``) their
        connections close without an answer. Later requests are not held."""
        assert self.proxy is not None
        self.drop = drop
        self.proxy.remove(self)


@dataclass
class LogEntry:
    """A request as the proxy saw it. ``status`` is None until answered, and stays None
    when no answer was given (blackholed, dropped, cut off)."""

    method: str
    path: str  # without the query string
    query: str
    token: str | None  # the token's name ("orion-bot"), "<unknown>", None without auth
    time: float  # time.time() on arrival
    status: int | None = None
    action: str = "pending"  # forward | fault | 401 | synthetic | blackhole | drop | cut_off
    conditional: bool = False  # sent with If-None-Match (a 304 to it is free, ADR 0044)
    mutation: bool = False  # a GraphQL mutation: a content write, however it is sent (ADR 0076)


class _Server(ThreadingHTTPServer):
    """Tracks client sockets so stop() can close idle keep-alive connections (their threads
    would sit in readline() forever), then joins every handler thread."""

    daemon_threads, block_on_close = False, True

    def __init__(self, proxy: Proxy) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.proxy, self._lock, self._closing = proxy, threading.Lock(), False
        self._socks: set[socket.socket] = set()

    def track(self, sock: socket.socket, add: bool) -> None:
        with self._lock:
            if not add:
                self._socks.discard(sock)
            elif self._closing:
                _shutdown(sock)
            else:
                self._socks.add(sock)

    def close_connections(self) -> None:
        with self._lock:
            self._closing = True
            for sock in self._socks:
                _shutdown(sock)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client that left is normal here
            traceback.print_exc()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as urllib3 expects
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        self.server.proxy._handle(self)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve


class Proxy:
    """``Proxy(emulator.url, tokens={"bot_token": "orion-bot"})``, then ``start()``/``stop()``
    or ``with``. ``tokens`` maps each accepted token to a name; ``upstream_tokens`` maps it
    to the token sent on to the emulator (the rig gives each test its own, so rate-limit
    counters are per test). ``helper_tokens`` (the same shape) are what the proxy uses for
    the reads it makes to build a repository-wide comment listing the emulator lacks, so that
    the caller's counter is charged one request per page, as GitHub charges it."""

    def __init__(self, upstream: str, tokens: dict[str, str] | None = None,
                 upstream_tokens: dict[str, str] | None = None, seed: int = 0,
                 helper_tokens: dict[str, str] | None = None) -> None:
        parts = urlsplit(upstream)
        self._up_host, self._up_port = parts.hostname or "localhost", parts.port or 80
        self.tokens, self._up_tokens = dict(tokens or {}), dict(upstream_tokens or {})
        self._helper_tokens = dict(helper_tokens or {})
        # The listing built for a page 1, reused for the pages after it (a snapshot, as a
        # caller paging through quickly sees on GitHub): query without page -> (time, list).
        self._listings: dict[str, tuple[float, list[dict[str, Any]]]] = {}
        self.random = random.Random(seed)
        self._cv = threading.Condition()  # reentrant: helpers call each other under it
        self._rules: list[Rule] = []
        self._runs: dict[tuple[str, str, int], dict[str, Any]] = {}
        self._workflows: dict[tuple[str, str, str], str] = {}  # (owner, repo, file) -> run name
        self.dispatches: list[dict[str, Any]] = []  # every workflow_dispatch accepted, in order
        self._next_run = 900_000
        self.log: list[LogEntry] = []
        self._cut_off = self._stopping = False
        self._refuse_adds = 0  # the next ending mutations whose addition GitHub refuses (ADR 0076)
        self._refuse_edits = 0  # the next ending mutations whose record edit GitHub refuses
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.port, self.url = 0, ""

    def start(self) -> Proxy:
        self._server = _Server(self)
        self.port = self._server.server_address[1]
        self.url = f"http://localhost:{self.port}"  # PyGithub wants the same host as Links
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name=f"rig-proxy-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Drop parked requests, close every connection, join every thread. Idempotent."""
        server, thread, self._server = self._server, self._thread, None
        if server is None or thread is None:
            return
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
        server.shutdown()
        server.close_connections()
        server.server_close()  # joins the handler threads
        thread.join()

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()  # first, so requests still parked are dropped, not sent on
        self.clear()

    # ---- faults ----------------------------------------------------------------------
    def _add(self, method: str | None, path: str, action: str, cls: type = Rule,
             **kw: Any) -> Any:
        rule = cls(_m(method), re.compile(path), action, proxy=self, **kw)
        with self._cv:
            self._rules.append(rule)
        return rule

    def fail(self, method: str | None, path: str, status: int = 503, body: Any = None, *,
             headers: dict[str, str] | None = None, count: int | None = None,
             probability: float = 1.0) -> Rule:
        """Answer ``status`` with a JSON body (default: GitHub-shaped message)."""
        if body is None:
            body = {"message": HTTPStatus(status).phrase, "documentation_url": DOCS}
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self._add(method, path, "status", status=status, body=data,
                         headers=dict(headers or {}), count=count, probability=probability)

    def secondary_rate_limit(self, method: str | None, path: str, retry_after: int = 60, *,
                             status: int = 403, count: int | None = None,
                             probability: float = 1.0) -> Rule:
        """GitHub's secondary limit: 403 (or 429) with ``Retry-After``."""
        body = {"message": SECONDARY_RATE_LIMIT_MESSAGE, "documentation_url":
                f"{DOCS}/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}
        return self.fail(method, path, status, body, count=count, probability=probability,
                         headers={"Retry-After": str(retry_after)})

    def blackhole(self, method: str | None, path: str, *, count: int | None = None,
                  probability: float = 1.0) -> Rule:
        """Read the request, never answer; once the rule is removed (or the proxy stops)
        close the connection unanswered. The emulator never sees it."""
        return self._add(method, path, "blackhole", count=count, probability=probability)

    def hold(self, method: str | None, path: str, *, count: int | None = None) -> Hold:
        """Park matching requests until ``hold.release()``; see :class:`Hold`."""
        return self._add(method, path, "hold", Hold, count=count)

    def delay(self, method: str | None, path: str, seconds: float, *,
              count: int | None = None, probability: float = 1.0) -> Rule:
        """Latency: wait ``seconds``, then go on."""
        return self._add(method, path, "delay", seconds=seconds, count=count,
                         probability=probability)

    def drop(self, method: str | None, path: str, *, after_forward: bool = False,
             count: int | None = None, probability: float = 1.0) -> Rule:
        """Close the connection unanswered. With ``after_forward`` the emulator performs the
        request first: the write happened, but the client never learns of it."""
        return self._add(method, path, "drop", after_forward=after_forward, count=count,
                         probability=probability)

    def remove(self, rule: Rule) -> None:
        with self._cv:
            rule.removed = True
            if rule in self._rules:
                self._rules.remove(rule)
            self._cv.notify_all()

    def refuse_finish_add(self, count: int = 1) -> None:
        """The next `count` ending mutations (ADR 0076) answer as GitHub does when the label to
        add cannot be resolved (deleted from the repository meanwhile) or that field fails
        alone: `add` null with an error; the record edit before it has landed."""
        with self._cv:
            self._refuse_adds = count

    def refuse_finish_edit(self, count: int = 1) -> None:
        """The next `count` ending mutations (ADR 0076) answer with the record edit refused
        (`edit` null with an error, nothing edited) and the addition, which the error does not
        stop, landed."""
        with self._cv:
            self._refuse_edits = count

    def cut_off(self, on: bool = True) -> None:
        """Partition: while on, every request is blackholed (and dropped when it ends)."""
        with self._cv:
            self._cut_off = on
            self._cv.notify_all()

    def clear(self) -> None:
        """Remove every rule (held requests go on, blackholed ones are dropped) and end a
        cut-off. Workflow runs and the log stay."""
        with self._cv:
            self._refuse_adds = self._refuse_edits = 0
            for rule in list(self._rules):
                self.remove(rule)
            self.cut_off(False)

    def set_workflow_run(self, owner: str, repo: str, run_id: int, status: str,
                         conclusion: str | None = None, run_attempt: int = 1,
                         **fields: Any) -> None:
        """Make ``GET /repos/{owner}/{repo}/actions/runs/{run_id}`` (and ``.../attempts/N``)
        answer a GitHub-shaped run instead of the emulator's 404; ``fields`` override."""
        if status not in RUN_STATUSES:
            raise ValueError(f"unknown workflow run status {status!r}")
        with self._cv:
            key = (owner.lower(), repo.lower(), int(run_id))
            self._runs[key] = dict(self._runs.get(key, {}), **fields, status=status, conclusion=conclusion,
                                   run_attempt=run_attempt)

    def add_workflow(self, owner: str, repo: str, file: str, run_name: str = "orion worker #{issue}") -> None:
        """A workflow file that accepts workflow_dispatch (the emulator cannot create one):
        ``POST .../actions/workflows/{file}/dispatches`` then records the dispatch and starts
        a queued synthetic run titled ``run_name`` (formatted with the inputs, like a
        workflow's ``run-name``), and ``GET .../actions/workflows/{file}/runs?status=S`` lists
        those runs; ``set_workflow_run`` moves them on."""
        with self._cv:
            self._workflows[(owner.lower(), repo.lower(), file)] = run_name

    def _workflow(self, method: str, path: str, query: str, body: bytes) -> tuple[int, Any] | None:
        match = _WORKFLOW_PATH.fullmatch(path)
        if match is None:
            return None
        owner, repo, file, what = match.groups()
        key = (owner.lower(), repo.lower(), file)
        with self._cv:
            if key not in self._workflows:
                return None  # the emulator's answer: it knows no workflow files
            if what == "dispatches" and method == "POST":
                sent = json.loads(body or b"{}")
                inputs = sent.get("inputs") or {}
                if not isinstance(sent.get("ref"), str):
                    return 422, {"message": "Invalid request: ref is required", "documentation_url": DOCS}
                self._next_run += 1
                title = self._workflows[key].format(**inputs) if inputs else file
                self._runs[(key[0], key[1], self._next_run)] = dict(
                    status="queued", conclusion=None, run_attempt=1, display_title=title,
                    path=f".github/workflows/{file}")
                self.dispatches.append({"workflow": file, "ref": sent["ref"], "inputs": inputs,
                                        "run_id": self._next_run})
                self._cv.notify_all()
                return 204, None
            if what == "runs" and method == "GET":
                # GitHub's `status` filter takes a status or a conclusion ("success"), and
                # `per_page` bounds the page (default 30): https://docs.github.com/rest/actions/
                # workflow-runs#list-workflow-runs-for-a-workflow
                args = parse_qs(query)
                status = args.get("status", [None])[0]
                found = [(rid, run) for (o, r, rid), run in sorted(self._runs.items(), reverse=True)
                         if (o, r) == key[:2] and run.get("path") == f".github/workflows/{file}"
                         and status in (None, run["status"], run.get("conclusion"))]
                found = found[:int(args.get("per_page", ["30"])[0])]
                runs = [self._synthetic_run("GET", f"/repos/{owner}/{repo}/actions/runs/{rid}")
                        for rid, _ in found]
                return 200, {"total_count": len(runs), "workflow_runs": runs}
        return None

    # ---- request log -----------------------------------------------------------------
    def matching(self, method: str | None = None, path: str | None = None,
                 status: int | None = None) -> list[LogEntry]:
        """Logged requests with this method (None or "*": any) whose path (no query)
        re.search-es ``path``; with ``status``, only those answered so."""
        pattern, method = (re.compile(path) if path else None), _m(method)
        with self._cv:
            return [e for e in self.log if method in (None, e.method)
                    and (pattern is None or pattern.search(e.path))
                    and (status is None or e.status == status)]

    def count(self, method: str | None = None, path: str | None = None,
              status: int | None = None) -> int:
        return len(self.matching(method, path, status))

    def wait_for(self, method: str | None = None, path: str | None = None, n: int = 1,
                 timeout: float = PATIENCE, status: int | None = None) -> list[LogEntry]:
        """Block until ``n`` matching requests have been seen; AssertionError on timeout."""
        with self._cv:
            if not self._cv.wait_for(lambda: self.count(method, path, status) >= n, timeout):
                seen = [f"{e.method} {e.path} -> {e.status}" for e in self.log[-20:]]
                raise AssertionError(f"saw {self.count(method, path, status)} of {n} requests "
                                     f"{method} {path} status={status} in {timeout}s; "
                                     f"last requests: {seen}")
            return self.matching(method, path, status)

    # ---- request handling ------------------------------------------------------------
    def _handle(self, h: _Handler) -> None:
        body = _read_body(h)
        path, _, query = h.path.partition("?")
        token = _token(h.headers.get("Authorization"))
        with self._cv:
            name = None if token is None else self.tokens.get(token, "<unknown>")
            entry = LogEntry(h.command, path, query, name, time.time(),
                             conditional=bool(h.headers.get("If-None-Match")),
                             mutation=path == "/graphql" and _is_mutation(body))
            self.log.append(entry)
            self._cv.notify_all()
            rule = None if self._cut_off else self._match(h.command, path)
            cut = self._cut_off
        try:
            if cut:
                self._park(lambda: not self._cut_off)
                return self._drop(h, entry, "cut_off")
            self._dispatch(h, entry, body, path, token, rule)
        except OSError:  # the client went away
            h.close_connection = True

    def _dispatch(self, h: _Handler, entry: LogEntry, body: bytes, path: str,
                  token: str | None, rule: Rule | None) -> None:
        action = rule.action if rule else None
        if rule is not None:
            if action == "status":
                return self._send(h, entry, rule.status, _JSON + list(rule.headers.items()),
                                  rule.body, "fault")
            if action == "blackhole":
                self._park(lambda: rule.removed)
                return self._drop(h, entry, "blackhole")
            if isinstance(rule, Hold):
                with self._cv:
                    rule.parked += 1
                    self._cv.notify_all()
                if not self._park(lambda: rule.removed) or rule.drop:
                    return self._drop(h, entry, "drop")
            if action == "delay" and not self._park(lambda: False, rule.seconds):
                return self._drop(h, entry, "drop")
            if action == "drop" and not rule.after_forward:
                return self._drop(h, entry, "drop")
        if token is not None and token not in self.tokens:
            denied = {"message": "Bad credentials", "documentation_url": DOCS}
            return self._send(h, entry, 401, _JSON, json.dumps(denied).encode(), "401")
        answer = self._workflow(h.command, path, h.path.partition("?")[2], body)
        if answer is not None:
            code, payload = answer
            return self._send(h, entry, code, _JSON, b"" if payload is None else json.dumps(payload).encode(),
                              "synthetic")
        run = self._synthetic_run(h.command, path)
        if run is not None:
            found = run or {"message": "Not Found", "documentation_url": DOCS}
            return self._send(h, entry, 200 if run else 404, _JSON, json.dumps(found).encode(),
                              "synthetic")
        if h.command == "POST" and path == "/graphql":
            code, answer = self._graphql(token, body)
            return self._send(h, entry, code, _JSON, json.dumps(answer).encode(), "synthetic")
        if h.command == "GET" and _REPO_COMMENTS.fullmatch(path):
            status, headers, data = self._repo_comments(path, h.path.partition("?")[2], token)
        else:
            free = None if rule is not None else self._not_modified(h, body, token)
            if free is not None:  # a 304 GitHub does not charge: the caller's counter stays
                return self._send(h, entry, 304, free, b"", "forward")
            status, headers, data = self._forward(h, body, token)
            if status == 200 and h.command == "GET" and (m := _ISSUE_EVENTS.fullmatch(path)):
                data = self._with_creation_labels(m, h.path.partition("?")[2], headers, data, token)
        if action == "drop":
            return self._drop(h, entry, "drop")
        if h.command == "GET" and status == 200:
            status, headers, data = self._conditional(h.headers.get("If-None-Match"), headers, data)
        self._send(h, entry, status, headers, data, "forward")

    def _not_modified(self, h: _Handler, body: bytes, token: str | None) -> list[tuple[str, str]] | None:
        """The headers of a 304 to a conditional GET whose answer has not changed, asked of
        the emulator with the caller's helper alias (so the caller's rate-limit counter is not
        charged, as GitHub charges no 304, ADR 0044); None: answer it normally. The 304 carries
        no rate-limit headers (they would be the alias's)."""
        asked = h.headers.get("If-None-Match")
        if h.command != "GET" or not asked or token is None or token not in self._helper_tokens:
            return None
        status, headers, data = self._forward(h, body, token, helper=True)
        if status != 200 or _ISSUE_EVENTS.fullmatch(h.path.partition("?")[0]):
            return None
        status, headers, _ = self._conditional(asked, headers, data)
        if status != 304:
            return None
        return [(k, v) for k, v in headers if not k.lower().startswith("x-ratelimit")]

    @staticmethod
    def _conditional(asked: str | None, headers: list[tuple[str, str]],
                     data: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        """GitHub's conditional GET: every 200 carries an ETag of its representation (here a
        hash of the body: the emulator sends none GitHub would), and a GET whose If-None-Match
        names it is answered 304 with no body (free on GitHub, ADR 0044)."""
        etag = f'W/"{hashlib.sha256(data).hexdigest()[:32]}"'
        kept = [(k, v) for k, v in headers if k.lower() not in ("etag", "content-type")]
        if asked is not None and etag in (t.strip() for t in asked.split(",")):
            return 304, [*kept, ("ETag", etag)], b""
        return 200, [*[(k, v) for k, v in headers if k.lower() != "etag"], ("ETag", etag)], data

    def _match(self, method: str, path: str) -> Rule | None:
        for rule in self._rules:
            if (rule.count != 0 and rule.method in (None, method) and rule.path.search(path)
                    and (rule.probability >= 1 or self.random.random() < rule.probability)):
                rule.hits += 1
                rule.count = None if rule.count is None else rule.count - 1
                return rule
        return None

    def _park(self, done: Callable[[], bool], timeout: float | None = None) -> bool:
        """Wait until ``done()`` or the timeout; False if the proxy is stopping."""
        with self._cv:
            self._cv.wait_for(lambda: self._stopping or done(), timeout)
            return not self._stopping

    def _forward(self, h: _Handler, body: bytes, token: str | None,
                 helper: bool = False) -> tuple[int, list[tuple[str, str]], bytes]:
        # A fresh upstream connection per request: reusing one the emulator may just have
        # closed (its keep-alive timeout is 5 s) could need a retry that duplicates a POST.
        headers = {k: v for k, v in h.headers.items() if k.lower() not in _REQ_HOP}
        headers["Accept-Encoding"] = "identity"  # bodies get rewritten: no compression
        if token is not None:
            alias = self._helper_tokens.get(token) if helper else None
            headers["Authorization"] = f"token {alias or self._up_tokens.get(token, token)}"
        conn = http.client.HTTPConnection(self._up_host, self._up_port, timeout=60)
        try:
            conn.request(h.command, h.path, body=body or None, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.getheaders(), resp.read()  # read() de-chunks
        except (OSError, http.client.HTTPException) as exc:
            data = json.dumps({"message": f"rig proxy: emulator unreachable: {exc}"})
            return 502, _JSON, data.encode()
        finally:
            conn.close()

    def _upstream_get(self, path: str, token: str | None, helper: bool = False,
                      answer_headers: list[tuple[str, str]] | None = None) -> tuple[int, Any]:
        """One GET to the emulator: as the caller, or (``helper``) with the caller's helper
        alias, which no test counts. ``answer_headers`` receives the response's headers."""
        headers = {"Accept": "application/vnd.github+json"}
        if token is not None:
            alias = self._helper_tokens.get(token) if helper else None
            headers["Authorization"] = f"token {alias or self._up_tokens.get(token, token)}"
        conn = http.client.HTTPConnection(self._up_host, self._up_port, timeout=60)
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            if answer_headers is not None:
                answer_headers.extend(resp.getheaders())
            return resp.status, json.loads(resp.read() or b"null")
        finally:
            conn.close()

    def _repo_comments(self, path: str, query: str,
                       token: str | None) -> tuple[int, list[tuple[str, str]], bytes]:
        """GET /repos/{o}/{r}/issues/comments as GitHub documents it (since: updated at or
        after, compared as times; sort created|updated; direction; pages of per_page), built
        from the emulator's per-issue listings. Comments on pull requests are not included.

        The caller is charged one request per page, as GitHub charges it: one small read as the
        caller gives the answer its rate-limit headers, and the listing itself is built with
        the caller's helper alias (when the proxy has one). Page 1 builds the listing; the
        pages after it (asked within 30 s) page through that snapshot."""
        q = {k: v[-1] for k, v in parse_qs(query).items()}
        charged: list[tuple[str, str]] = []
        status, probe = self._upstream_get(f"{path[:-len('/comments')]}?per_page=1", token,
                                           answer_headers=charged)
        if status != 200:
            return status, _JSON, json.dumps(probe).encode()
        limits = [(k, v) for k, v in charged if k.lower().startswith("x-ratelimit-")]
        key = path + "?" + urlencode(sorted((k, v) for k, v in q.items() if k != "page"))
        page = max(1, int(q.get("page") or 1))
        with self._cv:
            cached = self._listings.get(key)
        if page > 1 and cached is not None and time.time() - cached[0] < 30:
            found = cached[1]
        else:
            built = self._build_repo_comments(path, q, token)
            if isinstance(built, tuple):
                return built[0], _JSON, json.dumps(built[1]).encode()
            found = built
            with self._cv:
                self._listings[key] = (time.time(), found)
        per_page = min(100, max(1, int(q.get("per_page") or 30)))
        headers = list(_JSON) + limits
        if page * per_page < len(found):
            nxt = urlencode({**q, "page": page + 1, "per_page": per_page})
            headers.append(("Link", f'<{self.url}{path}?{nxt}>; rel="next"'))
        data = json.dumps(found[(page - 1) * per_page: page * per_page]).encode()
        return 200, headers, data

    def _build_repo_comments(self, path: str, q: dict[str, str],
                             token: str | None) -> list[dict[str, Any]] | tuple[int, Any]:
        found: list[dict[str, Any]] = []
        for page in range(1, 1000):
            status, issues = self._upstream_get(
                f"{path[:-len('/comments')]}?state=all&per_page=100&page={page}", token, helper=True)
            if status != 200:
                return status, issues
            for issue in issues:
                for cpage in range(1, 1000):
                    _, batch = self._upstream_get(
                        f"{path[:-len('comments')]}{issue['number']}/comments?per_page=100&page={cpage}",
                        token, helper=True)
                    found += batch
                    if len(batch) < 100:
                        break
            if len(issues) < 100:
                break

        def when(stamp: str) -> datetime:
            return datetime.fromisoformat(stamp.replace("Z", "+00:00"))

        if q.get("since"):
            since = when(q["since"])
            found = [c for c in found if when(c["updated_at"]) >= since]
        field_ = "updated_at" if q.get("sort") == "updated" else "created_at"
        found.sort(key=lambda c: (when(c[field_]), c["id"]), reverse=q.get("direction") == "desc")
        return found

    def _rewrite(self, data: bytes) -> bytes:
        """Bodies and Link headers hold absolute emulator URLs; PyGithub follows them, so
        they must name the proxy, or paging would bypass it (and PyGithub refuses them)."""
        for host in ("localhost", "127.0.0.1"):
            data = data.replace(f"http://{host}:{self._up_port}".encode(), self.url.encode())
        return data

    def _send(self, h: _Handler, entry: LogEntry, status: int,
              headers: list[tuple[str, str]], data: bytes, action: str) -> None:
        data = self._rewrite(data)
        h.send_response_only(status)  # not send_response: it would add a second Date
        names = set()
        for key, value in headers:
            low = key.lower()
            if low in _RESP_HOP or (low == "content-length" and h.command != "HEAD"):
                continue
            if low in ("link", "location"):
                value = self._rewrite(value.encode("latin-1")).decode("latin-1")
            names.add(low)
            h.send_header(key, value)
        if "date" not in names:
            h.send_header("Date", h.date_time_string())
        if h.command != "HEAD" and status >= 200 and status not in (204, 304):
            h.send_header("Content-Length", str(len(data)))
        if h.close_connection:
            h.send_header("Connection", "close")
        self._done(entry, status, action)  # first: once a client sees an answer, so does the log
        h.end_headers()
        if h.command != "HEAD" and data:
            h.wfile.write(data)

    def _drop(self, h: _Handler, entry: LogEntry, action: str) -> None:
        self._done(entry, None, action)
        h.close_connection = True
        _shutdown(h.connection)

    def _done(self, entry: LogEntry, status: int | None, action: str) -> None:
        with self._cv:
            entry.status, entry.action = status, action
            self._cv.notify_all()

    def _with_creation_labels(self, m: re.Match[str], query: str, headers: list[tuple[str, str]],
                              data: bytes, token: str | None) -> bytes:
        """GitHub records a `labeled` event (by the issue's author, at its creation) for each
        label an issue is opened with; the emulator records none. Added to a one-page answer."""
        if int(parse_qs(query).get("page", ["1"])[-1]) != 1 or any(
                k.lower() == "link" and 'rel="next"' in v for k, v in headers):
            return data
        events = json.loads(data or b"[]")
        owner, repo, number = m.groups()
        status, issue = self._upstream_get(f"/repos/{owner}/{repo}/issues/{number}", token, helper=True)
        if status != 200:
            return data
        seen = {(e.get("label") or {}).get("name") for e in events if e.get("event") == "labeled"}
        made = [{"id": 0, "event": "labeled", "actor": issue.get("user"), "created_at": issue["created_at"],
                 "label": {"name": label["name"], "color": label.get("color", "")}}
                for label in issue.get("labels") or [] if label["name"] not in seen]
        return json.dumps(made + events).encode()

    def _graphql(self, token: str | None, body: bytes) -> tuple[int, dict[str, Any]]:
        """GitHub's GraphQL answer to the one query orion sends (the trigger check's: the issue
        (ADR 0063), its `lastEditedAt` and its `LABELED_EVENT`, `UNLABELED_EVENT` and
        `RENAMED_TITLE_EVENT` items, the last 100 before a cursor), which the emulator lacks.
        Built from the emulator's events:
        `lastEditedAt` is the time of the last `edited` event, which the emulator records for
        every change of its title or body (GitHub's REST has none); the labels an issue was
        opened with are `labeled` events by its author at its creation, as on GitHub. A cursor
        is an item's index."""
        sent = json.loads(body or b"{}")
        v = sent.get("variables") or {}
        if str(sent.get("query") or "").lstrip().startswith("mutation"):
            return self._graphql_finish(token, v)
        owner, repo, number = str(v.get("owner")), str(v.get("name")), int(v.get("number") or 0)
        status, issue = self._upstream_get(f"/repos/{owner}/{repo}/issues/{number}", token, helper=True)
        if status == 401:
            return 401, {"message": "Bad credentials", "documentation_url": DOCS}
        if status != 200 or not isinstance(issue, dict) or "pull_request" in issue:
            return 200, {"data": {"repository": {"issue": None}},
                         "errors": [{"type": "NOT_FOUND", "message": f"no issue #{number}"}]}
        events: list[dict[str, Any]] = []
        for page in range(1, 100):
            path = f"/repos/{owner}/{repo}/issues/{number}/events?per_page=100&page={page}"
            _, batch = self._upstream_get(path, token, helper=True)
            events += batch or []
            if len(batch or []) < 100:
                break
        seen = {(e.get("label") or {}).get("name") for e in events if e.get("event") == "labeled"}
        made = [{"id": 0, "event": "labeled", "actor": issue.get("user"), "created_at": issue["created_at"],
                 "label": {"name": label["name"]}}
                for label in issue.get("labels") or [] if label["name"] not in seen]
        items: list[dict[str, Any]] = []
        for i, e in enumerate(made + events):
            actor = e.get("actor") or {}
            if e.get("event") == "labeled":
                items.append({"__typename": "LabeledEvent", "id": f"LE_{e.get('id')}_{i}",
                              "createdAt": e["created_at"],
                              "label": {"name": (e.get("label") or {}).get("name")},
                              "actor": {"login": actor.get("login"), "databaseId": actor.get("id")}})
            elif e.get("event") == "unlabeled":
                items.append({"__typename": "UnlabeledEvent", "createdAt": e["created_at"],
                              "label": {"name": (e.get("label") or {}).get("name")},
                              "actor": {"login": actor.get("login")} if actor else None})
            elif e.get("event") == "renamed":
                items.append({"__typename": "RenamedTitleEvent", "createdAt": e["created_at"]})
        end = int(v["before"]) if v.get("before") is not None else len(items)
        start = max(0, end - 100)
        edits = [e["created_at"] for e in events if e.get("event") == "edited"]
        last = max((datetime.fromisoformat(t.replace("Z", "+00:00")) for t in edits), default=None)
        stamp = last.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if last else None
        timeline = {"pageInfo": {"hasPreviousPage": start > 0, "startCursor": str(start)},
                    "nodes": items[start:end]}
        labels = [{"name": x["name"], "description": x.get("description")} for x in issue.get("labels") or []]
        user = issue.get("user")
        read = {"number": issue["number"], "state": str(issue["state"]).upper(), "title": issue["title"],
                "body": issue.get("body"), "createdAt": issue["created_at"], "updatedAt": issue["updated_at"],
                "author": {"login": user["login"]} if user else None,
                "comments": {"totalCount": issue.get("comments", 0)},
                "labels": {"totalCount": len(labels), "nodes": labels}}
        read.update(lastEditedAt=stamp, timelineItems=timeline, id=f"I_{owner}:{repo}:{number}")
        _, repo_labels = self._upstream_get(f"/repos/{owner}/{repo}/labels?per_page=100", token, helper=True)
        nodes = [{"id": f"LA_{owner}:{repo}:{x['name']}", "name": x["name"]} for x in repo_labels or []]
        return 200, {"data": {"repository": {"issue": read,
                                             "labels": {"totalCount": len(nodes), "nodes": nodes}}}}

    def _graphql_finish(self, token: str | None, v: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The holder's one-request ending (ADR 0076): `updateIssueComment` (the final record)
        then `addLabelsToLabelable` (the outcome label), run in that order on the emulator's
        REST writes (PATCH of the comment, POST of the labels) as the caller. As GitHub
        documents it, an error on one field does not stop the next: a label to add that the
        repository does not have (GraphQL creates none) nulls `add` with an error after the
        edit landed; `refuse_finish_add` does the same, `refuse_finish_edit` refuses the edit
        and lets the addition land. The comment's node id is the emulator's own (base64 of
        `0:IssueComment<id>`, as the POST answered it)."""
        owner, repo, number = str(v.get("issue", "")).removeprefix("I_").split(":", 2)
        add = [str(x).split(":", 2)[2] for x in v.get("add") or []]
        node = str(v.get("comment", ""))
        try:
            decoded = base64.b64decode(node + "=" * (-len(node) % 4)).decode()
        except (ValueError, UnicodeDecodeError):
            decoded = ""
        comment = decoded.removeprefix("0:IssueComment") if decoded.startswith("0:IssueComment") else ""
        base = f"/repos/{owner}/{repo}"
        with self._cv:
            refuse_add, refuse_edit = self._refuse_adds > 0, self._refuse_edits > 0
            self._refuse_adds -= refuse_add
            self._refuse_edits -= refuse_edit
        data: dict[str, Any] = {}
        errors: list[dict[str, Any]] = []
        edited = (not refuse_edit and comment.isdigit() and self._upstream_write(
            "PATCH", f"{base}/issues/comments/{comment}", token, {"body": v.get("body")}) == 200)
        if edited:
            data["edit"] = {"issueComment": {"id": node}}
        else:
            data["edit"] = None
            errors.append({"type": "NOT_FOUND", "path": ["edit"],
                           "message": f"Could not resolve to a node with the global id of '{node}'"})
        missing = [n for n in add
                   if self._upstream_get(f"{base}/labels/{quote(n, safe='')}", token, helper=True)[0] != 200]
        if refuse_add or missing:
            data["add"] = None
            errors.append({"type": "NOT_FOUND", "path": ["add"], "message":
                           f"Could not resolve to a node with the global id of 'LA_{owner}:{repo}:"
                           f"{(missing or add)[0]}'"})
        else:
            self._upstream_write("POST", f"{base}/issues/{number}/labels", token, {"labels": add})
            data["add"] = {"labelable": {"number": int(number)}}
        return 200, {"data": data, **({"errors": errors} if errors else {})}

    def _upstream_write(self, method: str, path: str, token: str | None, body: Any = None) -> int:
        """One write to the emulator with the caller's helper alias (the same login, so its
        events name the caller, as GitHub's would for the mutation; its own rate-limit counter,
        since GitHub charges GraphQL to GraphQL's budget, not the REST one); the status."""
        headers = {"Accept": "application/vnd.github+json", "Content-Type": "application/json"}
        if token is not None:
            alias = self._helper_tokens.get(token)
            headers["Authorization"] = f"token {alias or self._up_tokens.get(token, token)}"
        conn = http.client.HTTPConnection(self._up_host, self._up_port, timeout=60)
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            resp = conn.getresponse()
            resp.read()
            return resp.status
        finally:
            conn.close()

    def _synthetic_run(self, method: str, path: str) -> dict[str, Any] | None:
        """The run to answer; {} for an attempt that does not exist (404); None: not ours."""
        match = _RUN_PATH.fullmatch(path)
        if method != "GET" or match is None:
            return None
        owner, repo, run_id, attempt = match.groups()
        with self._cv:
            run = dict(self._runs.get((owner.lower(), repo.lower(), int(run_id))) or {})
        if not run:
            return None
        if attempt is not None:
            if not 1 <= int(attempt) <= run["run_attempt"]:
                return {}
            run["run_attempt"] = int(attempt)
        url = f"{self.url}/repos/{owner}/{repo}/actions/runs/{run_id}"
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"id": int(run_id), "run_number": int(run_id), "node_id": f"WFR_{run_id}",
                "name": "orion", "display_title": "orion", "path": ".github/workflows/orion.yml",
                "event": "workflow_dispatch", "workflow_id": 1, "head_branch": "main",
                "head_sha": "0" * 40, "url": url, "jobs_url": f"{url}/jobs",
                "logs_url": f"{url}/logs", "cancel_url": f"{url}/cancel",
                "rerun_url": f"{url}/rerun",
                "html_url": f"{self.url}/{owner}/{repo}/actions/runs/{run_id}",
                "created_at": now, "updated_at": now, "run_started_at": now,
                "repository": {"name": repo, "full_name": f"{owner}/{repo}",
                               "owner": {"login": owner}}, **run}


def _m(method: str | None) -> str | None:
    return None if method is None or method == "*" else method.upper()


def _token(header: str | None) -> str | None:
    """The token of ``token X`` / ``Bearer X``; any other scheme counts as an unknown token."""
    if header is None:
        return None
    match = re.fullmatch(r"\s*(?:token|bearer)\s+(\S+)\s*", header, re.IGNORECASE)
    return match.group(1) if match else header


def _is_mutation(body: bytes) -> bool:
    """Whether a GraphQL request's document is a mutation."""
    try:
        return str(json.loads(body or b"{}").get("query") or "").lstrip().startswith("mutation")
    except (ValueError, AttributeError):
        return False


def _read_body(h: _Handler) -> bytes:
    if "chunked" in h.headers.get("Transfer-Encoding", "").lower():
        chunks = []
        while size := int(h.rfile.readline().split(b";")[0].strip() or b"0", 16):
            chunks.append(h.rfile.read(size))
            h.rfile.readline()
        while h.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return b"".join(chunks)
    length = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(length) if length else b""
