"""The GitHub adapter under answers that used to crash it (defect 16 of the v0.1 audit) and
under a 401 (defect 14): every one is either retried within the budget or one of the
project's own errors, never a traceback.

Retry-After and 401 go through the rig's proxy in front of the emulator; broken transports
come from a raw socket server below, because no well-behaved HTTP server can send them.
"""

from __future__ import annotations

import socket
import threading
import time
from email.utils import formatdate

import pytest
from rig import PATIENCE, Emulator

from orion_action.adapters.github import GitHubRepo
from orion_action.errors import AuthError, Unavailable


class _Sleeps:
    """The adapter's sleep, recorded (it still sleeps: the retry budget is wall-clock)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        time.sleep(seconds)


def _adapter(repo, proxy, token: str = Emulator.BOT_TOKEN) -> tuple[GitHubRepo, _Sleeps]:
    sleeps = _Sleeps()
    return GitHubRepo(repo.full_name, token, proxy.url, retry_for=10, sleep=sleeps), sleeps


@pytest.mark.parametrize("status", [403, 429, 503])
def test_retry_after_as_an_http_date_is_waited_for(repo, proxy, status):
    n = repo.create_issue("work")
    when = formatdate(time.time() + 1, usegmt=True)  # "Thu, 03 Dec 2026 09:30:01 GMT"
    proxy.fail("GET", rf"/issues/{n}$", status, headers={"Retry-After": when}, count=1)
    gh, sleeps = _adapter(repo, proxy)
    issue, _ = gh.get_issue(n)
    assert issue.number == n
    assert proxy.count("GET", rf"/issues/{n}$") == 2
    assert len(sleeps.waits) == 1 and 0 <= sleeps.waits[0] <= 2.5  # the date, less the answer's Date


@pytest.mark.parametrize("value", ["soon", "Wed, 99 Foo 2026 25:61:00 GMT", "nan", "-5"])
def test_an_unreadable_retry_after_falls_back_to_backoff(repo, proxy, value):
    n = repo.create_issue("work")
    proxy.fail("GET", rf"/issues/{n}$", 503, headers={"Retry-After": value}, count=1)
    gh, sleeps = _adapter(repo, proxy)
    assert gh.get_issue(n)[0].number == n
    assert len(sleeps.waits) == 1 and 0 <= sleeps.waits[0] <= 1


@pytest.mark.parametrize("verb", ["GET", "PATCH"])
def test_a_401_is_an_auth_error_at_once_never_retried(repo, proxy, verb):
    n = repo.create_issue("work")
    comment = repo.comment(n, "hello")
    gh, sleeps = _adapter(repo, proxy, token="revoked-token")
    with pytest.raises(AuthError) as info:
        if verb == "GET":
            gh.get_issue(n)
        else:
            gh.edit_comment(comment, "changed")
    assert info.value.status == 401 and "rejected the token" in str(info.value)
    assert len(proxy.matching()) == 1 and sleeps.waits == []  # one request, no wait: not retried


class _BrokenServer:
    """Answers every request with a response broken one way: a chunked body cut short, or a
    body that says gzip and is not."""

    ANSWERS = {
        "chunked": (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n40\r\n{\"full_name\": "),
        "gzip": (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                 b"Content-Length: 9\r\nConnection: close\r\n\r\nnot gzip!"),
    }

    def __init__(self, mode: str) -> None:
        self.answer = self.ANSWERS[mode]
        self.requests = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                self.requests += 1
                conn.sendall(self.answer)

    def close(self) -> None:
        self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close alone does not)
        self._sock.close()
        self._thread.join(PATIENCE)
        assert not self._thread.is_alive()


@pytest.mark.parametrize("mode", ["chunked", "gzip"])
def test_a_broken_transport_is_retried_then_unavailable(mode):
    server = _BrokenServer(mode)
    try:
        gh = GitHubRepo("octo/work", "a-token", server.url, retry_for=1.5, sleep=_Sleeps())
        with pytest.raises(Unavailable) as info:
            gh.check_repo()
        assert server.requests >= 2  # retried, as a connection error is
        assert ("ChunkedEncodingError" if mode == "chunked" else "ContentDecodingError") in str(info.value)
    finally:
        server.close()


def test_a_token_rejected_mid_run_ends_the_run_at_once_not_at_the_renew_deadline(repo, proxy, orion_env,
                                                                                 tmp_path):
    """Defect 14: a 401 in the heartbeat used to be retried until the renew deadline (here
    400 s, far beyond the wait below, so no clock bound is needed). Now the first rejected
    beat stops the child and the run exits 64."""
    from rig import wait_until
    from rig.harness import QUEUE, USAGE, Child, Run, fast_config, pid_alive, running_record

    config = fast_config(tmp_path, "heartbeat: {interval: 1, stale_after: 600}\n")
    n = repo.create_issue("work", [QUEUE])
    child = Child(tmp_path)
    r = Run(orion_env, tmp_path, "--issue", str(n), cmd=child.cmd, config=config)
    child.wait_started()
    wait_until(lambda: running_record(repo, n), message="record never said running")
    pid = child.pid
    proxy.fail(None, "/", 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com"})
    assert r.wait() == USAGE, r.stderr
    assert proxy.count(status=401) <= 2, r.stderr  # a beat or two, not retried until the deadline
    assert not pid_alive(pid)
    assert "the token expired or was revoked" in r.stderr


def test_the_budget_says_when_the_window_resets(repo, proxy):
    """ADR 0045: a holder near its primary limit stretches its beat past the reset, which the
    adapter reads from `x-ratelimit-reset` against the response's Date."""
    n = repo.create_issue("work")
    gh, _ = _adapter(repo, proxy)
    gh.get_issue(n)
    budget = gh.budget
    assert budget.limit is not None and budget.remaining is not None
    assert budget.reset_in is not None and 0 <= budget.reset_in <= 3600


def test_a_label_removal_whose_answer_was_lost_and_retry_reads_404_is_unknown(repo, proxy):
    """A DELETE that landed but whose answer was lost (the connection dropped after GitHub did
    it), retried and answered 404: the adapter cannot tell whether its own first try took the
    label or another writer's before it, and says so (None, ADR 0096). A clean 404 is False, a
    clean 200 True."""
    n = repo.create_issue("work", ["orion", "orion-ready"])
    gh, _ = _adapter(repo, proxy)
    proxy.drop("DELETE", rf"/issues/{n}/labels/orion$", after_forward=True, count=1)
    assert gh.remove_label(n, "orion") is None
    assert proxy.count("DELETE", rf"/issues/{n}/labels/orion$") == 2  # the first try, then the retry
    assert gh.remove_label(n, "orion") is False
    assert gh.remove_label(n, "orion-ready") is True
    assert repo.labels(n) == []
