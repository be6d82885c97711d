"""Queue order, `--require` and the pause switch (docs/design.md section 12: "Queue order",
"Pause"; ADR 0022), decided by the real services in-process on the in-memory GitHub: the
wrapper claims and runs a real child, `status`, `pause`, `resume` and `init` are the services
the CLI calls. (Issue 17: these were product subprocesses against the emulator in
integration/test_queue.py, which keeps the end-to-end test of a person's pause through the
REST API; `pause`/`resume` through the action are in integration/test_action.py.)"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest
from fakes.host import HERE, blind, real_host
from fakes.memory_github import MemoryServer

from orion_action.config import Config, Labels
from orion_action.core.record import ClaimRecord, parse_block
from orion_action.errors import NotClaimed
from orion_action.services.pause import DEFAULT_REASON, pause_command, resume_command
from orion_action.services.reconcile import status_repos
from orion_action.services.setup import init_command
from orion_action.services.wrapper import RunRequest, Wrapper

P0, P1 = "orion-p0", "orion-p1"
# The trigger check has its own tests; the in-memory GitHub keeps no events.
CONFIG = Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, trigger_permission="none",
                labels=Labels(priority=(P0, P1)), source="test")
LAB = CONFIG.labels


def queue(s: MemoryServer) -> list[int]:
    found = status_repos([s.client()], CONFIG, lambda line: None, HERE, blind)
    return [int(str(row["issue"])) for _, row in found.queue]


def paused(s: MemoryServer) -> bool:
    return status_repos([s.client()], CONFIG, lambda line: None, HERE, blind).repos[0].paused is not None


def snapshot(s: MemoryServer, n: int) -> tuple[object, ...]:
    issue = s.issue(n)
    return issue.labels, issue.is_open, tuple((c.id, c.body) for c in s.comments(n))


class Worker:
    """`run` in this process: a real child that logs the issue it was given, then exits 0 (or
    waits for a file first, with `hold`)."""

    def __init__(self, s: MemoryServer, tmp_path: Path, name: str = "worker") -> None:
        self.s = s
        self.logs: list[str] = []
        self.gh = s.client()
        self.log_file = tmp_path / f"{name}.issues"
        self.go = tmp_path / f"{name}.go"
        self.started = tmp_path / f"{name}.started"

    def command(self, hold: bool = False) -> list[str]:
        script = (f"import os, pathlib, time\n"
                  f"open({str(self.log_file)!r}, 'a').write(os.environ['ORION_ISSUE'] + '\\n')\n"
                  f"pathlib.Path({str(self.started)!r}).touch()\n"
                  + (f"while not os.path.exists({str(self.go)!r}): time.sleep(0.02)\n" if hold else ""))
        return [sys.executable, "-c", script]

    def run(self, issue: int | None = None, require: tuple[str, ...] = (), hold: bool = False) -> int:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        w = Wrapper([self.gh], CONFIG, self.logs.append, env, real_host(env))
        return w.run(RunRequest(command=self.command(hold), issue=issue, require=require))

    def refused(self, issue: int | None = None, require: tuple[str, ...] = ()) -> str:
        with pytest.raises(NotClaimed) as caught:
            self.run(issue, require)
        return str(caught.value)

    def worked(self) -> list[int]:
        return [int(x) for x in self.log_file.read_text().split()] if self.log_file.exists() else []


# -- queue order ---------------------------------------------------------------------------------


def test_next_takes_priority_labels_first_then_the_oldest(tmp_path: Path) -> None:
    s = MemoryServer()
    plain_old = s.create_issue("plain, oldest", [LAB.queue])
    s.clock.advance(1)
    low = s.create_issue("p1", [LAB.queue, P1])
    s.clock.advance(1)
    top = s.create_issue("p0", [LAB.queue, P0, "bug"])
    s.clock.advance(1)
    low_newer = s.create_issue("p1, newer", [LAB.queue, P1])
    s.clock.advance(1)
    both = s.create_issue("p1 and p0: p0 counts", [LAB.queue, P1, P0])
    s.clock.advance(1)
    plain_new = s.create_issue("plain, newest", [LAB.queue, "p9"])

    order = [top, both, low, low_newer, plain_old, plain_new]
    found = status_repos([s.client()], CONFIG, lambda line: None, HERE, blind)
    assert [(row["issue"], row["priority"]) for _, row in found.queue] == [
        (top, P0), (both, P0), (low, P1), (low_newer, P1), (plain_old, None), (plain_new, None)]
    assert found.repos[0].paused is None

    worker = Worker(s, tmp_path)
    for _ in range(2):  # the two P0 issues: the priority label first, the older of them first
        assert worker.run() == 0, worker.logs
    assert worker.worked() == order[:2]
    assert queue(s) == order[2:]
    assert all(LAB.ready in s.issue(n).labels for n in order[:2])

    # An issue another worker holds is not queued, whatever its labels; a worker that sees one
    # being claimed takes the head or the issue after it, of the head's priority (ADR 0071).
    held = s.create_issue("held elsewhere: not queued", [LAB.queue, P0, LAB.working])
    assert queue(s) == order[2:]
    assert worker.run() == 0, worker.logs
    assert worker.worked()[2] in (low, low_newer)
    assert s.issue(held).labels == {LAB.queue, P0, LAB.working}


def test_require_considers_only_issues_carrying_every_label(tmp_path: Path) -> None:
    s = MemoryServer()
    first = s.create_issue("oldest, top priority, no gpu", [LAB.queue, P0])
    gpu_only = s.create_issue("gpu only", [LAB.queue, "gpu"])
    wanted = s.create_issue("gpu and big", [LAB.queue, "gpu", "big"])
    worker = Worker(s, tmp_path)
    assert worker.run(require=("gpu", "big")) == 0, worker.logs
    assert worker.worked() == [wanted]

    before = {n: snapshot(s, n) for n in (first, gpu_only)}
    assert "the queue is empty: no open issue carrying gpu, big" in worker.refused(require=("gpu", "big"))
    assert worker.worked() == [wanted] and {n: snapshot(s, n) for n in (first, gpu_only)} == before


# -- pause ---------------------------------------------------------------------------------------


def test_pause_refuses_new_claims_and_resume_lets_them_through(tmp_path: Path) -> None:
    s = MemoryServer()
    waiting = s.create_issue("waits", [LAB.queue])
    said = pause_command(s.client(), CONFIG, lambda line: None, "deploy freeze")
    assert said and said[0].startswith("paused")
    assert s.labels[LAB.queue][1] == "paused: deploy freeze"
    assert paused(s)

    before = snapshot(s, waiting)
    worker = Worker(s, tmp_path)
    for issue in (None, waiting):  # --next and --issue N
        message = worker.refused(issue)
        assert "the queue is paused" in message and "deploy freeze" in message
        assert not worker.started.exists()
    assert snapshot(s, waiting) == before  # nothing written

    said = resume_command(s.client(), CONFIG, lambda line: None)
    assert said[0].startswith("resumed")
    assert not paused(s) and not s.labels[LAB.queue][1].startswith("paused")
    assert worker.run() == 0, worker.logs
    assert worker.worked() == [waiting]


def test_a_run_in_flight_goes_on_while_paused(tmp_path: Path) -> None:
    """The wrapper runs in this (the main) thread, as it handles signals; a person pauses from
    another once the child runs, and lets the child finish after the run beat while paused."""
    s = MemoryServer()
    held = s.create_issue("in flight", [LAB.queue])
    worker = Worker(s, tmp_path)
    seen: list[object] = []

    def person() -> None:
        try:
            while not worker.started.exists():  # the condition, not a guess at how long claiming takes
                time.sleep(0.02)
            pause_command(s.client(), CONFIG, lambda line: None, None)
            seen.append(s.labels[LAB.queue][1])
            beats = record(s, held).beats
            while record(s, held).beats <= beats:  # a beat after the pause: the run goes on
                time.sleep(0.05)
            seen.append("beat while paused")
        finally:
            worker.go.touch()

    side = threading.Thread(target=person, daemon=True)
    side.start()
    assert worker.run(held, hold=True) == 0, worker.logs
    side.join(60)
    assert seen == [f"paused: {DEFAULT_REASON}", "beat while paused"], worker.logs
    assert s.issue(held).labels == frozenset({LAB.ready})


def record(s: MemoryServer, n: int) -> ClaimRecord:
    found = [b for c in s.comments(n) if isinstance(b := parse_block(c.body), ClaimRecord)]
    assert len(found) == 1, found
    return found[0]


def test_a_person_pauses_from_the_web_interface_with_the_label(tmp_path: Path) -> None:
    """The description a person gives the queue label, in any case ("Paused - ..."): init
    neither pauses nor resumes; a person's later edit resumes; `resume` then says so."""
    s = MemoryServer()
    n = s.create_issue("waits", [LAB.queue])
    init_command(s.client(), CONFIG, lambda line: None)
    usual = s.labels[LAB.queue]
    assert not usual[1].lower().startswith("paused")  # init never pauses the queue

    s.labels[LAB.queue] = (usual[0], "Paused - release week")
    init_command(s.client(), CONFIG, lambda line: None)
    assert s.labels[LAB.queue][1] == "Paused - release week"  # init does not resume it either
    worker = Worker(s, tmp_path)
    before = worker.gh.requests
    message = worker.refused()
    assert "the queue is paused" in message and "release week" in message
    assert worker.gh.requests - before == 1  # the queue listing, nothing else
    assert paused(s) and queue(s) == [n]

    s.labels[LAB.queue] = (usual[0], "release week is over")
    assert not paused(s)
    assert resume_command(s.client(), CONFIG, lambda line: None)[0].startswith("not paused")
    assert worker.run() == 0 and worker.worked() == [n], worker.logs
