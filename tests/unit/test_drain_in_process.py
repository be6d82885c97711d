"""`run --next --drain [--max-runs K]`: one invocation works down a backlog (docs/design.md
section 12, "Immediate pickup"): the real wrapper in-process on the in-memory GitHub, running a
real child per issue. (Issue 17: these were product subprocesses in integration/test_drain.py,
which keeps a signal stopping a drain, with real processes; `--drain`/`--max-runs` without their
partner option are refused in unit/test_run_usage.py.)"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fakes.host import real_host
from fakes.memory_github import BOT, MemoryServer

from orion_action.config import Config
from orion_action.core.record import (
    ClaimRecord,
    Holder,
    ReleaseAction,
    State,
    Tombstone,
    render_record,
    render_tombstone,
)
from orion_action.services.wrapper import RunRequest, Wrapper

# The trigger check has its own tests; the in-memory GitHub keeps no events.
CONFIG = Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, trigger_permission="none",
                source="test")
LAB = CONFIG.labels


class Drain:
    """A drain whose child appends ORION_ISSUE to a file and exits `fail_on.get(issue, 0)`."""

    def __init__(self, tmp_path: Path) -> None:
        self.s = MemoryServer()
        self.ran_file = tmp_path / "ran"
        self.logs: list[str] = []
        self.fail_on: dict[int, int] = {}

    def queued(self, count: int) -> list[int]:
        issues = []
        for i in range(count):
            issues.append(self.s.create_issue(f"work {i}", [LAB.queue]))
            self.s.clock.advance(1)  # oldest first is the order
        return issues

    def __call__(self, max_runs: int | None = None) -> int:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        command = [sys.executable, "-c",
                   "import os, sys\n"
                   f"open({str(self.ran_file)!r}, 'a').write(os.environ['ORION_ISSUE'] + '\\n')\n"
                   f"sys.exit({self.fail_on!r}.get(int(os.environ['ORION_ISSUE']), 0))\n"]
        w = Wrapper([self.s.client()], CONFIG, self.logs.append, env, real_host(env))
        return w.drain(RunRequest(command=command), max_runs)

    def ran(self) -> list[int]:
        return [int(x) for x in self.ran_file.read_text().split()] if self.ran_file.exists() else []

    def labels(self, n: int) -> frozenset[str]:
        return self.s.issue(n).labels


def test_a_backlog_of_five_is_worked_in_one_invocation(tmp_path: Path) -> None:
    drain = Drain(tmp_path)
    issues = drain.queued(5)
    assert drain() == 0, drain.logs
    assert drain.ran() == issues  # each once, oldest first
    assert all(drain.labels(n) == {LAB.ready} for n in issues)
    assert any("stopping after 5 run(s)" in line for line in drain.logs), drain.logs


def test_max_runs_stops_the_drain(tmp_path: Path) -> None:
    drain = Drain(tmp_path)
    issues = drain.queued(3)
    assert drain(max_runs=2) == 0, drain.logs
    assert drain.ran() == issues[:2]
    assert drain.labels(issues[2]) == {LAB.queue} and drain.s.comments(issues[2]) == []


def test_an_empty_queue_is_a_successful_drain(tmp_path: Path) -> None:
    drain = Drain(tmp_path)
    assert drain() == 0, drain.logs
    assert drain.ran() == []


def test_the_first_failing_code_is_the_exit_code(tmp_path: Path) -> None:
    """The first issue's run fails (3); the rest succeed; the drain goes on and exits 3."""
    drain = Drain(tmp_path)
    issues = drain.queued(3)
    drain.fail_on[issues[0]] = 3
    assert drain() == 3, drain.logs
    assert drain.ran() == issues
    assert drain.labels(issues[0]) == {LAB.failed}
    assert all(drain.labels(n) == {LAB.ready} for n in issues[1:])


def test_an_outsiders_release_of_a_dead_claim_neither_stops_the_drain_nor_earns_advice(
    tmp_path: Path,
) -> None:
    """Finding 7 of the round-3 security audit (demo_outsider_release_blocks_queue.py): a claimer
    killed after its claim post, before its lock, leaves a dead claim on a queued issue; anyone
    may then post a release block naming that claim's token. The drain judges the dead claim
    dead as ever, works both issues, and its log says the comment was ignored without ever
    telling the operator to trust its author."""
    drain = Drain(tmp_path)
    first, second = drain.queued(2)
    now = drain.s.clock.now.isoformat(timespec="seconds")
    dead = ClaimRecord(token="crashed", state=State.CLAIMING, holder=Holder("d", "d", "d", "d", 30, 30.0),
                       started_at=now, heartbeat_at=now, interval=CONFIG.heartbeat_interval,
                       stale_after=CONFIG.stale_after)
    drain.s.comment(first, render_record(dead), BOT)
    forged = Tombstone("crashed", ReleaseAction.RELEASE, "released, trust me", by="release")
    drain.s.comment(first, render_tombstone(forged), "mallory")
    drain.s.clock.advance(CONFIG.stale_after + 10)

    assert drain() == 0, drain.logs
    assert drain.ran() == [first, second]
    assert drain.labels(first) == drain.labels(second) == {LAB.ready}
    assert any("ignored comment" in line and "mallory" in line and "not trusted" in line
               for line in drain.logs), drain.logs
    assert not any("trusted_authors" in line for line in drain.logs), drain.logs
