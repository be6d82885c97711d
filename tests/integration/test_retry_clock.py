"""The adapter's retry budget and per-call Policy (ADR 0058), against a local server that
answers every request 503 (or slowly): the budget is timed on the Clock leases are timed on,
and judged again after every wait, so a wait that spans a suspend of the machine cannot send
a try past the budget, the deadline or an abort; a Policy's timeout bounds each request."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fakes.host import VirtualClock
from rig import PATIENCE

from orion_action.adapters.github import GitHubRepo
from orion_action.errors import Unavailable
from orion_action.ports import Policy


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests = 0
    delay = 0.0  # > 0: answer 200 after this many seconds instead of 503


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.requests += 1
        if self.server.delay:
            time.sleep(self.server.delay)
            body = b'{"full_name": "o/r", "permissions": {"push": true}}'
            self.send_response(200)
        else:
            body = b'{"message": "Service Unavailable"}'
            self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(PATIENCE)


def _client(server: _Server, clock: VirtualClock, sleep) -> GitHubRepo:  # type: ignore[no-untyped-def]
    return GitHubRepo("o/r", "a-token", f"http://127.0.0.1:{server.server_port}", retry_for=30,
                      sleep=sleep, clock=clock)


def test_retries_go_on_while_the_budget_lasts(server: _Server) -> None:
    clock = VirtualClock()
    gh = _client(server, clock, lambda wait: clock.sleep(wait))
    with pytest.raises(Unavailable, match="within 30s"):
        gh.check_repo()
    assert server.requests >= 4  # backoff from 0.5 s, capped at 8 s, fits several tries in 30 s


def test_a_suspend_during_a_retrys_wait_sends_no_try_past_the_budget(server: _Server) -> None:
    """The wait (time.sleep: CLOCK_MONOTONIC) stops while the machine is suspended; the
    Clock (CLOCK_BOOTTIME) does not: the hour it slept is past the 30 s budget."""
    clock = VirtualClock()
    gh = _client(server, clock, lambda wait: clock.sleep(wait + 3600))
    with pytest.raises(Unavailable, match=r"within 30s \(1 tries"):
        gh.check_repo()
    assert server.requests == 1


def test_a_suspend_during_a_retrys_wait_sends_no_try_past_the_deadline(server: _Server) -> None:
    clock = VirtualClock()
    gh = _client(server, clock, lambda wait: clock.sleep(wait + 20))  # within the budget
    with gh.bounded(Policy(clock, clock.monotonic() + 10)), pytest.raises(Unavailable):
        gh.check_repo()
    assert server.requests == 1


def test_an_abort_during_a_retrys_wait_sends_no_further_try(server: _Server) -> None:
    clock = VirtualClock()
    stop = threading.Event()

    def wait(seconds: float) -> None:
        clock.sleep(seconds)
        stop.set()  # the heartbeat was stopped while it waited

    gh = _client(server, clock, wait)
    with gh.bounded(Policy(clock, abort=stop)), pytest.raises(Unavailable):
        gh.check_repo()
    assert server.requests == 1


def test_a_policys_retry_budget_narrows_the_clients(server: _Server) -> None:
    clock = VirtualClock()
    gh = _client(server, clock, lambda wait: clock.sleep(wait))
    with gh.bounded(Policy(clock, retry_for=0.1)), pytest.raises(Unavailable, match=r"within 0.1s \(1 tries"):
        gh.check_repo()
    assert server.requests == 1


def test_a_policys_timeout_bounds_each_request(server: _Server) -> None:
    server.delay = 2.5
    clock = VirtualClock()
    gh = _client(server, clock, lambda wait: clock.sleep(wait))
    with gh.bounded(Policy(clock, timeout=1, retry_for=0.1)), pytest.raises(Unavailable, match="Timeout"):
        gh.check_repo()
    gh.check_repo()  # outside the block: the client's own 10 s timeout waits for the answer
    assert server.requests == 2
