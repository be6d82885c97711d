"""Every bad input of the round-3 security audit's table ("Bad inputs tried", 124 rows, finding
9), replayed: each ends in one line and the exit code the README documents (64 usage or
configuration, 69 GitHub unreachable or unusable, 0 for the valid controls), never a traceback,
and the token is never printed. ADR 0036.

The cases run in-process (`cli.main(argv, env)`, stderr captured) against a small fake GitHub
below: a plain repository, except for the one answer a case overrides. The audit's row number
leads each case's id; rows past 124 are cases the audit did not try. A few subprocess cases at
the end check that the installed entry point behaves the same. ORION_API_RETRY_SECONDS is 0.2:
a bad answer is tried once, then gives up (that it is retried is checked on the adapter).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rig.harness import product

from orion_action import cli
from orion_action.adapters.github import GitHubRepo
from orion_action.errors import ExitCode, NotFound

TOKEN = "ghp_BADINPUTSECRET0123456789abcdefABCDEF"
REPO = "octo/work"
ISSUE1 = rf"/repos/{REPO}/issues/1"
LIST = rf"/repos/{REPO}/issues"
COMMENTS = rf"/repos/{REPO}/issues(/1)?/comments"
Answer = Callable[[BaseHTTPRequestHandler], None]


def issue(n: object, **fields: object) -> dict[str, object]:
    return {"number": n, "state": "open", "labels": [{"name": "orion", "description": ""}], "comments": 0,
            "created_at": "2026-12-01T00:00:00Z", "updated_at": "2026-12-01T00:00:00Z",
            "title": "t", "body": "b", "user": {"login": "someone"}, **fields}


def send(h: BaseHTTPRequestHandler, status: int, payload: object = None, *, raw: bytes | None = None,
         ctype: str = "application/json; charset=utf-8", headers: Mapping[str, str] = {},
         length: int | None = None) -> None:
    data = raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    for k, v in headers.items():
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(data) if length is None else length))
    h.end_headers()
    h.wfile.write(data)
    if length is not None:  # fewer bytes than promised: the connection is cut
        h.close_connection = True


def answer(status: int, payload: object = None, **kw: object) -> Answer:
    return lambda h: send(h, status, payload, **kw)  # type: ignore[arg-type]


class FakeGitHub:
    """A repository with issue #1 (queued) and no comments; `answers` overrides paths (regex,
    first match), each at most `times` times when given. Every other write is a 404."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, Answer]] = []
        self.served: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def handle_any(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                path = self.path.split("?")[0]
                fake.served.append(f"{self.command} {path}")
                for pattern, respond in list(fake.answers):
                    if re.fullmatch(pattern, path):
                        return respond(self)
                fake.plain(self, path)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = handle_any  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def plain(self, h: BaseHTTPRequestHandler, path: str) -> None:
        if path == "/user":
            return send(h, 200, {"login": "orion-bot"})
        if h.command == "GET" and path == f"/repos/{REPO}/issues/1":
            return send(h, 200, issue(1))
        if h.command == "GET" and re.fullmatch(COMMENTS + "|" + LIST, path):
            return send(h, 200, [])
        return send(h, 404, {"message": "Not Found"})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeGitHub]:
    server = FakeGitHub()
    yield server
    server.close()


@dataclass(frozen=True)
class Case:
    row: int  # the audit's row; above 124: not in the audit
    name: str
    code: int  # the documented exit code
    says: str = ""  # in the one error line (or, for a valid input, in its one warning line)
    argv: tuple[str, ...] = ("status",)
    config: str | bytes | None = None  # written to a file, passed as --config
    env: Mapping[str, str | None] = field(default_factory=dict)
    answers: tuple[tuple[str, Answer], ...] = ()
    valid: bool = False  # a valid input: no error line

    @property
    def id(self) -> str:
        return f"{self.row:03d} {self.name}"


RUN1 = ("run", "--issue", "1", "--", "true")
PEM_JUNK = "-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----"
LOCKED = answer(200, [issue(1, labels=[{"name": "orion-working"}])])


def config(row: int, name: str, text: str | bytes, says: str, code: int = 64) -> Case:
    return Case(row, name, code, says, config=text)


def gh(row: int, name: str, respond: Answer, code: int, says: str, path: str = ISSUE1,
       argv: tuple[str, ...] = RUN1) -> Case:
    return Case(row, name, code, says, argv=argv, answers=((path, respond),))


def reconcile(row: int, name: str, comments: object, code: int, says: str = "") -> Case:
    answers = ((LIST, LOCKED), (COMMENTS, answer(200, comments)))
    return Case(row, name, code, says, argv=("reconcile",), answers=answers, valid=code == 0)


NESTED = "a: " + "[" * 20000 + "]" * 20000 + "\n"
ALIAS_BOMB = "a: &a ['x','x','x','x','x','x','x','x','x']\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
MERGE_BOMB = "base: &b {k0: 0}\n" + "".join(
    f"m{i}: &m{i}\n  <<: [{', '.join(['*m' + str(i - 1) if i else '*b'] * 8)}]\n" for i in range(8))
RATE_LIMITED = {"x-ratelimit-remaining": "0"}
FAILED = "GitHub did not answer GET /repos/octo/work/issues/1 successfully"

CASES = [
    # -- configuration (rows 1-44) ----------------------------------------------------------------
    config(1, "not UTF-8", b"labels: {queue: \xff\xfe}\n", "not UTF-8"),
    config(2, "interval .nan", "heartbeat: {interval: .nan}\n", "heartbeat.interval: must be a finite"),
    config(3, "stale_after .inf", "heartbeat: {stale_after: .inf}\n",
           "heartbeat.stale_after: must be a finite"),
    config(4, "interval 1e-6", "heartbeat: {interval: 1e-6}\n", "heartbeat.interval"),
    config(5, "max_attempts 1e400", "retry: {max_attempts: 1e400}\n", "retry.max_attempts"),
    config(6, "max_attempts with 5000 digits", "retry: {max_attempts: " + "9" * 5000 + "}\n",
           "(line 1, column 23): cannot read this value"),
    config(7, "interval with 5000 digits", "heartbeat: {interval: " + "9" * 5000 + "}\n",
           "cannot read this value"),
    config(8, "max_attempts 0", "retry: {max_attempts: 0}\n", "retry.max_attempts"),
    config(9, "max_attempts true", "retry: {max_attempts: true}\n", "retry.max_attempts"),
    config(10, "duration '1e3s'", "heartbeat: {interval: '1e3s'}\n", "heartbeat.interval"),
    config(11, "duration of 400 nines", "heartbeat: {interval: '" + "9" * 400 + "s'}\n",
           "heartbeat.interval: must be a finite"),
    config(12, "timeout -1", "run: {timeout: -1}\n", "run.timeout: must be zero or more"),
    config(13, "kill_grace 3600", "run: {kill_grace: 3600}\n", "run.kill_grace: must be at most 7s"),
    config(14, "unknown top-level key", "heartbeet: {interval: 5}\n", "heartbeet: unknown key"),
    config(15, "unknown nested key", "heartbeat: {intervall: 5}\n", "heartbeat.intervall: unknown key"),
    config(16, "top level is a list", "- a\n- b\n", "expected a mapping at the top level, got list"),
    config(17, "top level is a string", "just text\n", "expected a mapping at the top level, got str"),
    config(18, "invalid YAML", "labels: {queue: [\n", "invalid YAML (line 2, column 1)"),
    config(19, "tab indentation", "labels:\n\tqueue: x\n", "invalid YAML (line 2, column 1)"),
    config(20, "python tag", "labels: !!python/object/apply:os.system ['id']\n",
           "could not determine a constructor"),
    config(21, "deep nesting (20,000 '[')", NESTED, "nested deeper than 32 levels"),
    config(22, "alias bomb under an unknown key", ALIAS_BOMB, "a: unknown key"),
    config(23, "alias bomb in trusted_authors", "x: &a [a,a,a,a,a,a,a,a,a]\ntrusted_authors: [*a, *a]\n",
           "x: unknown key"),
    config(24, "merge-key bomb", MERGE_BOMB, "base: unknown key"),
    config(25, "labels.queue empty", "labels: {queue: ''}\n", "labels.queue: expected a non-empty string"),
    config(26, "labels.queue with a comma", "labels: {queue: 'a,b'}\n",
           "labels.queue: must not contain a comma"),
    config(27, "labels.queue 51 characters", "labels: {queue: '" + "q" * 51 + "'}\n",
           "at most 50 characters"),
    config(28, "labels.queue is working but for case", "labels: {queue: Orion-Working}\n", "labels.working"),
    config(29, "labels.queue with NUL", 'labels: {queue: "or\\0ion"}\n',
           "labels.queue: must not contain control characters"),
    config(30, "labels.queue with a newline", 'labels: {queue: "or\\nion"}\n',
           "labels.queue: must not contain control characters"),
    config(31, "stage_prefix begins the queue label", "labels: {stage_prefix: orion}\n",
           "labels.stage_prefix"),
    config(32, "priority is a string", "labels: {priority: orion-p0}\n", "labels.priority"),
    config(33, "trusted_authors numbers", "trusted_authors: [1, 2]\n", "trusted_authors"),
    config(34, "trusted_authors a string", "trusted_authors: bob\n", "trusted_authors"),
    config(35, "trusted_authors with ' bob'", "trusted_authors: [' bob']\n",
           "trusted_authors: ' bob' is not a GitHub login"),
    config(36, "trigger.permission Write", "trigger: {permission: Write}\n", "trigger.permission"),
    config(37, "trigger.permission a list", "trigger: {permission: [write]}\n", "trigger.permission"),
    config(38, "dispatch.workflow path traversal", "dispatch: {workflow: ../../evil.yml}\n",
           "dispatch.workflow"),
    config(39, "dashboard.title 300 characters", "dashboard: {title: '" + "t" * 300 + "'}\n",
           "dashboard.title"),
    config(40, "a duplicate key", "trigger: {permission: write}\ntrigger: {permission: none}\n",
           "invalid YAML (line 2, column 1): duplicate key 'trigger'"),
    Case(41, "empty file (valid)", 0, config="", valid=True),
    Case(42, "1 MB of YAML comments (valid)", 0, config="#" + "x" * 1_000_000 + "\n", valid=True),
    Case(43, "config is a directory", 64, "cannot read: Is a directory", argv=("status", "--config", ".")),
    Case(44, "config path missing", 64, "configuration file not found", argv=("status", "--config",
         "nope.yml")),
    # -- command line (rows 45-69) ----------------------------------------------------------------
    Case(45, "--issue abc", 64, "argument --issue", argv=("run", "--issue", "abc", "--", "true")),
    Case(46, "--issue 0", 64, "argument --issue", argv=("run", "--issue", "0", "--", "true")),
    Case(47, "--issue -1", 64, "argument --issue", argv=("run", "--issue", "-1", "--", "true")),
    Case(48, "--issue superscript 2", 64, "argument --issue", argv=("run", "--issue", "\u00b2", "--",
         "true")),
    Case(49, "--issue 10^30", 64, "does not exist in octo/work", argv=("run", "--issue", "1" + "0" * 30,
         "--", "true")),
    Case(50, "--issue with 5000 digits", 64, "argument --issue", argv=("run", "--issue", "9" * 5000, "--",
         "true")),
    Case(51, "--next and --issue", 64, "not allowed with argument --next",
         argv=("run", "--next", "--issue", "1", "--", "true")),
    Case(52, "run without a command", 64, "no command to run", argv=("run", "--issue", "1")),
    Case(53, "--max-runs 0", 64, "argument --max-runs",
         argv=("run", "--next", "--drain", "--max-runs", "0", "--", "true")),
    Case(54, "--max-runs without --drain", 64, "--max-runs works with --drain only",
         argv=("run", "--next", "--max-runs", "2", "--", "true")),
    Case(55, "--stage 'a b'", 64, "argument --stage", argv=("run", "--issue", "1", "--stage", "a b", "--",
         "true")),
    Case(56, "--stage 41 characters", 64, "argument --stage",
         argv=("run", "--issue", "1", "--stage", "s" * 41, "--", "true")),
    Case(57, "--require ''", 64, "argument --require", argv=("run", "--next", "--require", "", "--", "true")),
    Case(58, "--require with --issue", 64, "--require goes with --next",
         argv=("run", "--issue", "1", "--require", "gpu", "--", "true")),
    Case(59, "--repo ../x", 64, "OWNER/NAME, got '../x'", argv=("status", "--repo", "../x")),
    Case(60, "--repo a/b/c", 64, "OWNER/NAME, got 'a/b/c'", argv=("status", "--repo", "a/b/c")),
    Case(61, "--repo ''", 64, "OWNER/NAME, got ''", argv=("status", "--repo", "")),
    Case(62, "--repo twice", 64, "is given more than once", argv=("status", "--repo", REPO, "--repo", REPO)),
    Case(63, "release with two --repo", 64, "release takes one --repo",
         argv=("release", "--issue", "1", "--repo", "a/b", "--repo", "c/d")),
    Case(64, "--actor with two --repo", 64, "--actor goes with one --repo",
         argv=("run", "--next", "--actor", "bob", "--repo", "a/b", "--repo", "c/d", "--", "true")),
    Case(65, "unknown command", 64, "invalid choice: 'frobnicate'", argv=("frobnicate",)),
    Case(66, "unknown option", 64, "unrecognized arguments: --colour", argv=("status", "--colour")),
    Case(67, "--drain without --next", 64, "--drain works with --next only",
         argv=("run", "--issue", "1", "--drain", "--", "true")),
    Case(68, "release --issue x", 64, "argument --issue", argv=("release", "--issue", "x")),
    Case(69, "--actor '' (an empty login)", 64, "argument --actor: expected a GitHub login, got ''",
         argv=("run", "--issue", "1", "--actor", "", "--", "true")),
    # -- environment (rows 70-92) -----------------------------------------------------------------
    Case(70, "GITHUB_TOKEN unset", 64, "GITHUB_TOKEN is not set", env={"GITHUB_TOKEN": None}),
    Case(71, "GITHUB_TOKEN with a newline", 64, "it is not a token", env={"GITHUB_TOKEN": TOKEN + "\nX"}),
    Case(72, "GITHUB_TOKEN not ASCII", 64, "it is not a token", env={"GITHUB_TOKEN": "ghp_\u00e9t\u00e9"}),
    Case(73, "GITHUB_REPOSITORY unset", 64, "no repository", env={"GITHUB_REPOSITORY": None}),
    Case(74, "GITHUB_REPOSITORY 'x'", 64, "OWNER/NAME, got 'x'", env={"GITHUB_REPOSITORY": "x"}),
    Case(75, "GITHUB_API_URL garbage", 64, "GITHUB_API_URL must be", env={"GITHUB_API_URL": "not a url"}),
    Case(76, "GITHUB_API_URL ftp://", 64, "GITHUB_API_URL must be",
         env={"GITHUB_API_URL": "ftp://example.com"}),
    Case(77, "GITHUB_API_URL with user:pass@", 64, "must not contain credentials",
         env={"GITHUB_API_URL": f"http://u:{TOKEN}@example.com"}),
    Case(78, "GITHUB_API_URL port 99999", 64, "GITHUB_API_URL must be",
         env={"GITHUB_API_URL": "http://example.com:99999"}),
    Case(79, "GITHUB_API_URL '[::1'", 64, "GITHUB_API_URL must be", env={"GITHUB_API_URL": "http://[::1"}),
    Case(80, "GITHUB_API_URL with nothing listening", 69, "GitHub did not answer GET /user",
         env={"GITHUB_API_URL": "http://127.0.0.1:9"}),
    Case(81, "ORION_API_RETRY_SECONDS nan", 64, "ORION_API_RETRY_SECONDS",
         env={"ORION_API_RETRY_SECONDS": "nan"}),
    Case(82, "ORION_API_RETRY_SECONDS inf", 64, "ORION_API_RETRY_SECONDS",
         env={"ORION_API_RETRY_SECONDS": "inf"}),
    Case(83, "ORION_API_RETRY_SECONDS -1", 64, "ORION_API_RETRY_SECONDS",
         env={"ORION_API_RETRY_SECONDS": "-1"}),
    Case(84, "ORION_API_RETRY_SECONDS 1e309", 64, "ORION_API_RETRY_SECONDS",
         env={"ORION_API_RETRY_SECONDS": "1e309"}),
    Case(85, "ORION_APP_ID without a key", 64, "ORION_APP_PRIVATE_KEY is not set", env={"ORION_APP_ID": "1"}),
    Case(86, "ORION_APP_ID 'abc'", 64, "ORION_APP_ID must be",
         env={"ORION_APP_ID": "abc", "ORION_APP_PRIVATE_KEY": PEM_JUNK}),
    Case(87, "ORION_APP_PRIVATE_KEY not a PEM", 64, "is not a PEM key",
         env={"ORION_APP_ID": "1", "ORION_APP_PRIVATE_KEY": "hunter2"}),
    Case(88, "ORION_APP_PRIVATE_KEY junk PEM", 64, "cannot sign a JWT",
         env={"ORION_APP_ID": "1", "ORION_APP_PRIVATE_KEY": PEM_JUNK}),
    Case(89, "ORION_APP_INSTALLATION_ID fullwidth digits", 64, "ORION_APP_INSTALLATION_ID must be a number",
         env={"ORION_APP_ID": "1", "ORION_APP_PRIVATE_KEY": PEM_JUNK,
              "ORION_APP_INSTALLATION_ID": "\uff11\uff12"}),
    Case(90, "GITHUB_OUTPUT is a directory", 0, "could not write the exit-code output to $GITHUB_OUTPUT",
         env={"GITHUB_OUTPUT": "."}, valid=True),
    Case(91, "GITHUB_STEP_SUMMARY is a directory (Actions)", 0,
         "could not write the step summary to $GITHUB_STEP_SUMMARY: Is a directory",
         env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": "."}, valid=True),
    Case(92, "GITHUB_OUTPUT in a missing directory", 0, "$GITHUB_OUTPUT: No such file or directory",
         env={"GITHUB_OUTPUT": "no/such/dir/out"}, valid=True),
    # -- GitHub's answers (rows 93-124): `run --issue 1` reads issue #1 first -------------------------
    gh(93, "200 'not json'", answer(200, raw=b"not json"), 69, "an issue: 'number' is missing"),
    gh(94, "200 '{' (cut JSON)", answer(200, raw=b"{"), 69, "an unreadable answer (JSONDecodeError)"),
    gh(95, "200 HTML page", answer(200, raw=b"<html><body>Unicorn!</body></html>", ctype="text/html"), 69,
       "an issue: 'number' is missing"),
    gh(96, "200 []", answer(200, []), 69, "an issue is an array, not an object"),
    gh(97, "200 {}", answer(200, {}), 69, "an issue: 'number' is missing"),
    gh(98, "200 null", answer(200, raw=b"null"), 69, "an issue is null or empty, not an object"),
    gh(99, "200 number 'x'", answer(200, issue("x")), 69, "an issue: 'number' is a string"),
    gh(100, "200 labels are strings", answer(200, issue(1, labels=["orion"])), 69, "a label is a string"),
    gh(101, "200 created_at 'garbage'", answer(200, issue(1, created_at="garbage")), 69,
       "an issue: 'created_at' is a string, not an ISO 8601 time"),
    # tolerated (U+FFFD): the read passes, and the trigger check's GraphQL query meets the fake's 404
    gh(102, "200 invalid UTF-8 in the title",
       answer(200, raw=json.dumps(issue(1, title="@@")).encode().replace(b"@@", b"\xff\xfe")), 64,
       "GraphQL API"),
    gh(103, "200 JSON nested 100,000 deep", answer(200, raw=b"[" * 100000 + b"]" * 100000), 69,
       "an answer nested or redirected too deep to read"),
    gh(104, "200 truncated body", lambda h: send(h, 200, raw=b'{"number": 1, "sta', length=5000), 69, FAILED),
    gh(105, "204 empty for a GET", answer(204), 69, "an issue is null or empty"),
    gh(106, "301 to another host", answer(301, {"message": "Moved"},
                                          headers={"Location": f"http://evil.invalid/repos/{REPO}/issues/1"}),
       69, "redirected from host 127.0.0.1 to evil.invalid"),
    gh(107, "302 same host", answer(302, headers={"Location": "/somewhere"}), 69,
       "an issue is null or empty"),
    gh(108, "307 same host", answer(307, headers={"Location": f"/repos/{REPO}/issues/1"}), 69,
       "an issue is null or empty"),
    gh(109, "401 HTML page", answer(401, raw=b"<html>denied</html>", ctype="text/html"), 64,
       "GitHub rejected the token"),
    gh(110, "403 HTML page", answer(403, raw=b"<html>forbidden</html>", ctype="text/html"), 64,
       "GitHub refused"),
    gh(111, "404 HTML page", answer(404, raw=b"<html>nope</html>", ctype="text/html"), 64,
       "issue #1 does not exist in octo/work"),
    gh(112, "410 Gone (the issue was deleted)", answer(410, {"message": "This issue was deleted"}), 64,
       "issue #1 does not exist in octo/work (410"),
    gh(113, "451 Unavailable For Legal Reasons", answer(451, {"message": "Repository access blocked"}), 69,
       "GitHub answered 451"),
    gh(114, "422 Validation failed", answer(422, {"message": "Validation Failed"}), 69,
       "GitHub answered 422"),
    gh(115, "500 HTML page", answer(500, raw=b"<html>oops</html>", ctype="text/html"), 69, "last: HTTP 500"),
    gh(116, "429 Retry-After 1e12", answer(429, {"message": "slow down"}, headers={"Retry-After": "1e12"}),
       69,
       "last: slow down"),
    gh(117, "403 with x-ratelimit-reset 'soon'", answer(403, {"message": "API rate limit exceeded"},
                                                       headers={**RATE_LIMITED, "x-ratelimit-reset": "soon"}),
       69, "an unreadable answer (ValueError)"),
    gh(118, "the issue list is an object", answer(200, {"items": []}), 69, "an issue listing is an object",
       path=LIST, argv=("status",)),
    gh(119, "the issue list's items lack 'number'", answer(200, [{"state": "open"}]), 69,
       "an issue: 'number' is missing", path=LIST, argv=("status",)),
    gh(120, "/user without login", answer(200, {}), 69, "the user: 'login' is missing", path="/user",
       argv=("status",)),
    reconcile(121, "a comment id 'abc'", [{"id": "abc", "body": "x", "user": {"login": "a"}}], 69,
              "a comment: 'id' is a string"),
    reconcile(122, "a comment without an id", [{"body": "x", "user": {"login": "a"}}], 69,
              "a comment: 'id' is missing"),
    reconcile(123, "the comments answer is an object", {"message": "hi"}, 69,
              "a comment listing is an object"),
    reconcile(124, "a comment whose user and body are null",
              [{"id": 5, "body": None, "user": None, "created_at": "2026-12-01T00:00:00Z"}], 0),
    # -- not in the audit ------------------------------------------------------------------------
    config(125, "a key given twice in a nested mapping",
           "trigger:\n  permission: write\n  permission: none\n",
           "(line 3, column 3): duplicate key 'permission'"),
    config(126, "a 13th month", "labels: {queue: 2026-13-01}\n",
           "cannot read this value (month must be in 1..12)"),
    config(127, "a label with a bidirectional override", 'labels: {ready: "orion-\\u202eydaer"}\n',
           "labels.ready: must not contain control characters"),
    config(128, "a priority label with a newline", 'labels: {priority: ["p\\n0"]}\n', "labels.priority"),
    config(129, "a dashboard title with an escape", 'dashboard: {title: "q\\e[31m"}\n', "dashboard.title"),
    config(130, "nesting of 33 levels", "x: " + "[" * 33 + "]" * 33 + "\n", "nested deeper than 32 levels"),
    Case(131, "--actor ' bob'", 64, "argument --actor", argv=("run", "--issue", "1", "--actor", " bob",
         "--", "true")),
    Case(132, "--require with a newline", 64, "argument --require",
         argv=("run", "--next", "--require", "gp\nu", "--", "true")),
    gh(133, "403 with x-ratelimit-reset 1e400", answer(403, {"message": "API rate limit exceeded"},
                                                      headers={**RATE_LIMITED, "x-ratelimit-reset": "1e400"}),
       69, "an unreadable answer (OverflowError)"),
    gh(134, "200 'comments' is negative", answer(200, issue(1, comments=-1)), 69, "'comments' is a number"),
    gh(135, "200 a label without a name", answer(200, issue(1, labels=[{"color": "fff"}])), 69,
       "a label: 'name' is missing"),
    Case(136, "GITHUB_OUTPUT is a directory under reconcile", 0,
         "could not write the outputs unlock, complete, ", argv=("reconcile",), env={"GITHUB_OUTPUT": "."},
         valid=True),
    reconcile(137, "a comment time without a zone (read as UTC)",
              [{"id": 5, "body": "hi", "user": {"login": "a"}, "created_at": "2026-12-01T00:00:00"}], 0),
]


def run_case(case: Case, fake: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str], str]:
    monkeypatch.chdir(tmp_path)  # no .github/orion.yml here: defaults unless --config
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": fake.url,
           "ORION_API_RETRY_SECONDS": "0.2", **case.env}
    argv = list(case.argv)
    if case.config is not None:
        path = tmp_path / "case.yml"
        path.write_bytes(case.config if isinstance(case.config, bytes) else case.config.encode())
        argv[1:1] = ["--config", str(path)]
    fake.answers = list(case.answers)
    try:
        code = cli.main(argv, {k: v for k, v in env.items() if v is not None})
    except SystemExit as exc:  # argparse's errors (exit 64) end in sys.exit
        code = int(exc.code or 0)
    finally:
        fake.answers = []
    out, err = capsys.readouterr()
    return code, [line for line in err.splitlines() if line.strip()], out


def test_the_table_has_every_row_of_the_audit() -> None:
    rows = [c.row for c in CASES]
    assert sorted(rows) == rows and len(set(rows)) == len(rows)
    assert set(range(1, 125)) <= set(rows)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_input_is_one_line_and_its_documented_exit_code(
    case, fake, tmp_path, capsys, monkeypatch
) -> None:
    code, lines, out = run_case(case, fake, tmp_path, capsys, monkeypatch)
    shown = "\n".join(lines)
    assert code == case.code, shown
    assert not any("Traceback" in line or "internal error" in line for line in lines), shown
    printed = [line for line in [*out.splitlines(), *lines] if not line.startswith("::add-mask::")]
    assert not any(TOKEN in line for line in printed), "the token was printed"
    assert all(line.startswith("orion-action: ") for line in lines), shown  # nothing but orion's own lines
    errors = [line for line in lines if line.startswith("orion-action: error: ")]
    if case.valid:
        assert errors == [], shown
        if case.says:
            assert len([line for line in lines if case.says in line]) == 1, shown
        return
    assert len(errors) == 1 and errors[0] == lines[-1], shown  # one error, and the command ended there
    assert case.says in errors[0], errors[0]
    if case.row <= 92 or case.row in range(125, 133):  # refused before GitHub had a say: the only line
        assert lines == errors, shown


# -- the adapter: a bad answer is retried, then Unavailable ------------------------------------------

def test_a_malformed_answer_is_retried_like_an_outage_and_a_good_one_then_counts(fake) -> None:
    served = iter([answer(200, raw=b"<html>proxy error</html>", ctype="text/html"), answer(200, {})])

    def first_two_bad(h: BaseHTTPRequestHandler) -> None:
        next(served, lambda h: fake.plain(h, f"/repos/{REPO}/issues/1"))(h)

    fake.answers = [(ISSUE1, first_two_bad)]
    fake.served.clear()
    try:
        gh = GitHubRepo(REPO, TOKEN, fake.url, retry_for=30, sleep=lambda _: None)
        found, _ = gh.get_issue(1)
    finally:
        fake.answers = []
    assert found.number == 1 and found.labels == {"orion"}
    assert fake.served.count(f"GET /repos/{REPO}/issues/1") == 3 and gh.requests == 3


def test_a_write_answered_with_garbage_is_looked_for_before_it_is_sent_again(fake) -> None:
    """A bad answer to a POST is ambiguous (the comment may have landed): the retry first lists
    the comments for the marker, and finds it, so no second claim comment is posted."""
    posted: list[dict[str, object]] = []

    def post_lands_answer_is_garbage(h: BaseHTTPRequestHandler) -> None:
        if h.command == "POST":
            posted.append({"id": 7, "body": "claim nonce-4c1d", "user": {"login": "orion-bot"},
                           "created_at": "2026-12-01T00:00:00Z"})
            return send(h, 200, raw=b"<html>502 from a proxy</html>", ctype="text/html")
        send(h, 200, posted)

    fake.answers = [(rf"/repos/{REPO}/issues/1/comments", post_lands_answer_is_garbage)]
    fake.served.clear()
    try:
        gh = GitHubRepo(REPO, TOKEN, fake.url, retry_for=30, sleep=lambda _: None)
        comment = gh.post_comment(1, "claim nonce-4c1d", marker="nonce-4c1d")
    finally:
        fake.answers = []
    assert comment.id == 7 and len(posted) == 1
    assert fake.served.count(f"POST /repos/{REPO}/issues/1/comments") == 1


def test_410_is_not_found_with_its_status(fake) -> None:
    fake.answers = [(ISSUE1, answer(410, {"message": "This issue was deleted"}))]
    try:
        with pytest.raises(NotFound) as info:
            GitHubRepo(REPO, TOKEN, fake.url, retry_for=30, sleep=lambda _: None).get_issue(1)
    finally:
        fake.answers = []
    assert info.value.status == 410 and info.value.exit_code == ExitCode.USAGE


# -- anything else: exit 70, one line; the traceback with --verbose -----------------------------------

def _crash(args, config, env) -> int:
    raise RuntimeError(f"unforeseen\nstate with {TOKEN} in it")


@pytest.mark.parametrize("argv", [["status"], ["--verbose", "status"], ["status", "--verbose"]])
def test_an_unexpected_error_is_one_line_and_70(argv, fake, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(cli, "dispatch", _crash)
    output = tmp_path / "out"
    code, lines, _ = run_case(Case(0, "crash", 70, argv=tuple(argv), env={"GITHUB_OUTPUT": str(output)}),
                              fake, tmp_path, capsys, monkeypatch)
    assert code == ExitCode.INTERNAL == 70
    assert lines[-1].startswith("orion-action: internal error: RuntimeError: unforeseen state with *** in it")
    assert not any(TOKEN in line for line in lines)
    if "--verbose" in argv:
        assert lines[0] == "Traceback (most recent call last):" and "in _crash" in "\n".join(lines)
    else:
        assert lines == [lines[-1]] and "--verbose" in lines[-1]
    assert output.read_text() == "exit-code=70\n"  # the step's output still says what happened


def test_a_crash_in_a_thread_is_one_line(fake, tmp_path, capsys, monkeypatch) -> None:
    def crash_in_a_thread(args, config, env) -> int:
        worker = threading.Thread(target=_crash, args=(None, None, None), name="orion-heartbeat")
        worker.start()
        worker.join()
        return 0

    monkeypatch.setattr(cli, "dispatch", crash_in_a_thread)
    code, lines, _ = run_case(Case(0, "thread", 0), fake, tmp_path, capsys, monkeypatch)
    assert code == 0
    assert len(lines) == 1, lines
    assert lines[0].startswith("orion-action: internal error in thread orion-heartbeat: RuntimeError: "
                               "unforeseen state with ***"), lines


def test_the_help_documents_the_exit_codes_and_verbose() -> None:
    text = cli.build_parser().format_help()
    assert re.search(r"(?m)^  70 +an unexpected internal error", text) and "--verbose" in text
    for code in ExitCode:
        assert re.search(rf"(?m)^  {int(code)} ", text), code


# -- the real entry point, as a subprocess ----------------------------------------------------------

SMOKE = [c for c in CASES if c.row in (40, 91, 95, 112)]


@pytest.mark.parametrize("case", SMOKE, ids=[c.id for c in SMOKE])
def test_the_entry_point_agrees(case, fake, tmp_path) -> None:
    argv = list(case.argv)
    if case.config is not None:
        (tmp_path / "case.yml").write_text(str(case.config))
        argv[1:1] = ["--config", "case.yml"]
    env = {"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO,
           "GITHUB_API_URL": fake.url, "ORION_API_RETRY_SECONDS": "0.2", **case.env}
    fake.answers = list(case.answers)
    try:
        done = product(argv, env=env, workdir=tmp_path)
    finally:
        fake.answers = []
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == case.code, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert len([line for line in lines if case.says in line]) == 1, done.stderr
