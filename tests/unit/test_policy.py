"""Per-call bounds on GitHub calls (ports.Policy, docs/adr/0051-ports-only.md): a block's
deadline is enforced on the clock it was computed on, nested blocks only narrow, and a client
is never left bounded after its block."""

from __future__ import annotations

import threading

import pytest
from fakes.memory_github import MemoryServer, ServerTime

from orion_action.errors import Unavailable
from orion_action.ports import ONE_TRY, Bounds, Policy


def test_a_nested_block_narrows_the_deadline_and_the_outer_one_holds_again_after_it() -> None:
    s = MemoryServer()
    clock = ServerTime(s)
    bounds = Bounds()
    t = clock.monotonic()
    with bounds.bounded(Policy(clock, t + 10)):
        with bounds.bounded(Policy(clock, t + 100)):
            assert bounds.current() == Policy(clock, t + 10)
        with bounds.bounded(Policy(clock, t + 5)):
            assert bounds.current() == Policy(clock, t + 5)
        assert bounds.current() == Policy(clock, t + 10)
    assert bounds.current() is None


def test_an_abort_is_kept_by_a_nested_deadline() -> None:
    clock = ServerTime(MemoryServer())
    stop = threading.Event()
    bounds = Bounds()
    with bounds.bounded(Policy(clock, abort=stop)), bounds.bounded(Policy(clock, 5.0)):
        assert bounds.current() == Policy(clock, 5.0, stop)
        assert not bounds.current().aborted()  # type: ignore[union-attr]
        stop.set()
        assert bounds.current().aborted()  # type: ignore[union-attr]


def test_the_deadline_is_read_on_the_policys_clock() -> None:
    s = MemoryServer()
    gh = s.client()
    n = s.create_issue("late")
    clock = ServerTime(s)
    with gh.bounded(Policy(clock, clock.monotonic() + 5)):
        gh.get_issue(n)
        clock.sleep(5)  # the server's clock moves: the block's deadline is now
        with pytest.raises(Unavailable, match="no time left"):
            gh.get_issue(n)
    gh.get_issue(n)  # the block is closed: the client is unbounded again
    assert gh.requests == 2


def test_a_nested_block_takes_the_shorter_timeout_and_retry_budget() -> None:
    clock = ServerTime(MemoryServer())
    bounds = Bounds()
    with bounds.bounded(Policy(clock, timeout=5, retry_for=0.5)):
        with bounds.bounded(Policy(clock, timeout=2, retry_for=2.5)):
            assert bounds.current() == Policy(clock, timeout=2, retry_for=0.5)
        with bounds.bounded(Policy(clock, 7.0)):
            assert bounds.current() == Policy(clock, 7.0, timeout=5, retry_for=0.5)
def test_one_try_needs_no_clock_and_keeps_an_outer_deadline_on_its_clock() -> None:
    """ONE_TRY (ADR 0054) bounds nothing in time: inside a deadline it keeps that deadline and
    its clock, and adds that nothing is retried."""
    clock = ServerTime(MemoryServer())
    assert ONE_TRY.aborted() and not ONE_TRY.expired() and not ONE_TRY.past(1e9)
    bounds = Bounds()
    t = clock.monotonic()
    with bounds.bounded(Policy(clock, t + 5)), bounds.bounded(ONE_TRY):
        inner = bounds.current()
        assert inner is not None and inner.clock is clock and inner.deadline == t + 5 and inner.aborted()
    with pytest.raises(ValueError, match="needs the clock"):
        Policy(deadline=1.0).expired()


def test_a_write_under_one_try_is_not_retried_after_a_lost_answer() -> None:
    """The in-memory GitHub retries a write whose answer was lost, as GitHubRepo does, except
    under a policy that retries nothing: then the caller gets the failure, the write applied."""
    s = MemoryServer()
    n = s.create_issue("work", ["orion-working"])
    gh = s.client()
    calls: list[str] = []
    s.on_call = lambda name, _args: calls.append(name)
    s.fail_next(threading.current_thread().name, "lost")
    with gh.bounded(ONE_TRY), pytest.raises(Unavailable):
        gh.remove_label(n, "orion-working")
    assert calls == ["remove_label"] and s.issue(n).labels == frozenset()
