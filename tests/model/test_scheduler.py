"""The scheduler runs real code one GitHub call at a time, in exactly the order it is told."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from fakes.memory_github import MemoryGitHub, MemoryServer
from hypothesis import given, settings
from hypothesis import strategies as st

from model.scheduler import SLEEP, START, Crashed, Scheduler, SchedulerError

WRITES = 3


@pytest.fixture
def server() -> MemoryServer:
    return MemoryServer()


@pytest.fixture
def sched(server: MemoryServer) -> Iterator[Scheduler]:
    with Scheduler() as s:
        server.on_call = s.hook
        yield s
    server.on_call = None


def poster(gh: MemoryGitHub, n: int, name: str) -> Callable[[], str]:
    def run() -> str:
        for i in range(WRITES):
            gh.post_comment(n, f"{name}{i}")
        return f"{name} done"

    return run


def actor_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("actor-")]


@settings(max_examples=40, deadline=None)
@given(order=st.lists(st.sampled_from(["actor-a", "actor-b"]), min_size=0, max_size=12))
def test_writes_land_in_the_order_the_driver_chose(order: list[str]) -> None:
    server = MemoryServer()
    n = server.create_issue("race")
    with Scheduler() as sched:
        server.on_call = sched.hook
        for name in ("actor-a", "actor-b"):
            sched.spawn(name, poster(server.client(), n, name[-1]))
        for name in order:
            if name in sched.runnable():
                sched.step(name)
        performed = [args[1] for actor, op, args in sched.trace if op == "post_comment"]
        assert [c.body for c in server.comments(n)] == performed
        for name in sched.runnable():  # finish both: each then ends with its result
            while name in sched.runnable():
                last = sched.step(name)
            assert last.done and last.result == f"{name[-1]} done" and last.error is None
    assert sorted(c.body for c in server.comments(n)) == sorted(f"{x}{i}" for x in "ab" for i in range(3))
    assert not actor_threads()


def test_a_chosen_interleaving_is_exact(server: MemoryServer, sched: Scheduler) -> None:
    n = server.create_issue("race")
    assert sched.spawn("actor-a", poster(server.client(), n, "a")).op == START
    sched.spawn("actor-b", poster(server.client(), n, "b"))
    assert sched.runnable() == ["actor-a", "actor-b"]
    first = sched.step("actor-b")  # runs b up to its first call; nothing is written yet
    assert (first.op, first.args) == ("post_comment", (n, "b0"))
    assert server.comments(n) == []
    for name in ["actor-a", "actor-a", "actor-b", "actor-a", "actor-b"]:
        sched.step(name)
    assert [c.body for c in server.comments(n)] == ["a0", "b0", "a1", "b1"]
    assert sched.pending_op("actor-a") == ("post_comment", (n, "a2"))


def test_a_crashed_actor_writes_nothing_more(server: MemoryServer, sched: Scheduler) -> None:
    n = server.create_issue("crash")
    gh = server.client()
    reached: list[str] = []

    def careful() -> None:
        try:
            gh.post_comment(n, "claim")
            gh.post_comment(n, "running")
        except Exception:  # a service's usual handler must not swallow a crash
            reached.append("except")
        finally:
            reached.append("finally")
            gh.add_labels(n, ["cleanup"])  # a dead process writes nothing: this raises Crashed
            reached.append("after cleanup")

    sched.spawn("actor-a", careful)
    sched.step("actor-a")
    sched.step("actor-a")  # "claim" is written; "running" is pending
    end = sched.crash("actor-a")
    assert end.done and end.crashed
    assert reached == ["finally"]
    assert [c.body for c in server.comments(n)] == ["claim"]
    assert server.issue(n).labels == frozenset()
    assert sched.runnable() == []
    with pytest.raises(SchedulerError):
        sched.step("actor-a")
    assert sched.crash("actor-a").crashed  # crashing the dead is a no-op


def test_crash_before_the_first_line_runs_nothing(server: MemoryServer, sched: Scheduler) -> None:
    ran: list[bool] = []
    sched.spawn("actor-a", lambda: ran.append(True))
    assert sched.crash("actor-a").crashed
    assert ran == []


def test_sleep_is_a_point_and_moves_no_clock(server: MemoryServer, sched: Scheduler) -> None:
    n = server.create_issue("sleepy")
    gh = server.client()
    before = server.clock.now

    def beat() -> None:
        gh.post_comment(n, "beat 1")
        sched.sleep(30)
        gh.post_comment(n, "beat 2")

    sched.spawn("actor-a", beat)
    sched.step("actor-a")
    assert sched.step("actor-a").op == SLEEP
    assert sched.pending_op("actor-a") == (SLEEP, (30,))
    assert server.clock.now == before and len(server.comments(n)) == 1
    sched.step("actor-a")
    assert sched.step("actor-a").done
    assert [(op, args) for _, op, args in sched.trace] == [
        (START, ()), ("post_comment", (n, "beat 1")), (SLEEP, (30,)), ("post_comment", (n, "beat 2"))]


def test_an_actors_exception_is_its_result(server: MemoryServer, sched: Scheduler) -> None:
    gh = server.client()

    def broken() -> None:
        gh.get_issue(404)

    sched.spawn("actor-a", broken)
    sched.step("actor-a")
    end = sched.step("actor-a")
    assert end.done and not end.crashed and type(end.error).__name__ == "NotFound"


def test_blocking_outside_a_point_is_reported_not_hung(server: MemoryServer) -> None:
    gate = threading.Event()
    gh = server.client()
    sched = Scheduler(timeout=0.2)
    server.on_call = sched.hook

    def stuck() -> None:
        gate.wait(10)
        gh.check_repo()

    sched.spawn("actor-a", stuck)
    with pytest.raises(SchedulerError, match="block on something else"):
        sched.step("actor-a")
    gate.set()
    # The short timeout was for the step to give up on a blocked actor; the join in close waits
    # for a thread that is now free to end, which a loaded machine may take long to schedule.
    sched.timeout = 60.0
    sched.close()
    assert not actor_threads()
    assert sched.result("actor-a").crashed


def test_driver_calls_pass_through_and_strangers_are_refused(server: MemoryServer,
                                                           sched: Scheduler) -> None:
    gh = server.client()
    n = server.create_issue("x")
    gh.post_comment(n, "from the driver")  # setup and inspection need no step
    sched.sleep(5)
    refused: list[BaseException] = []

    def stranger() -> None:
        try:
            gh.check_repo()
        except BaseException as exc:
            refused.append(exc)

    t = threading.Thread(target=stranger, name="not-an-actor")
    t.start()
    t.join(60)
    assert len(refused) == 1 and isinstance(refused[0], SchedulerError)
    assert [c.body for c in server.comments(n)] == ["from the driver"]


def test_close_stops_every_actor_wherever_it_waits(server: MemoryServer) -> None:
    n = server.create_issue("teardown")
    with Scheduler() as sched:
        server.on_call = sched.hook
        sched.spawn("actor-a", poster(server.client(), n, "a"))  # never started
        sched.spawn("actor-b", poster(server.client(), n, "b"))
        sched.step("actor-b")
        sched.step("actor-b")  # mid-way
        sched.spawn("actor-c", lambda: None)
        sched.step("actor-c")  # finished
        assert len(actor_threads()) == 2
    assert not actor_threads()
    assert sched.result("actor-a").crashed and sched.result("actor-b").crashed
    assert sched.result("actor-c").error is None
    assert [c.body for c in server.comments(n)] == ["b0"]
    with pytest.raises(SchedulerError):
        sched.spawn("actor-d", lambda: None)


def test_crashed_is_not_an_exception() -> None:
    assert not issubclass(Crashed, Exception)
