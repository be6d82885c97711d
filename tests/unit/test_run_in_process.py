"""`run`'s outcomes, decided by the real wrapper in this process (the main thread: it handles
signals) on the in-memory GitHub, with a real child: a failing exit code, a child killed by a
signal, a command that cannot start, the stage label while the run holds the issue, and
`run.timeout` with the retry budget.
(Issue 17: these were product subprocesses against the emulator in integration/test_run.py
and test_limits.py, which keep a run end to end with the child's ORION_* environment, the step
outputs, every race between real processes, the idle timeout and signals to a real wrapper.)"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fakes.host import real_host
from fakes.memory_github import BOT, MemoryServer
from rig.harness import child_cmd

from orion_action.config import Config
from orion_action.core.record import (
    ClaimRecord,
    ReleaseAction,
    State,
    Tombstone,
    parse_block,
    render_tombstone,
)
from orion_action.errors import UsageError
from orion_action.services.wrapper import RunRequest, Wrapper

# The trigger check has its own tests; the in-memory GitHub keeps no events.
CONFIG = Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, trigger_permission="none",
                source="test")
LAB = CONFIG.labels


def run(s: MemoryServer, command: list[str], issue: int | None, stage: str | None = None,
        extra_env: dict[str, str] | None = None, config: Config = CONFIG) -> tuple[int, list[str]]:
    """`run [--issue N] [--stage S] -- command` in this process: its exit code and its log."""
    logs: list[str] = []
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(extra_env or {})}
    w = Wrapper([s.client()], config, logs.append, env, real_host(env))
    return w.run(RunRequest(command=command, issue=issue, stage=stage)), logs


def records(s: MemoryServer, n: int) -> list[ClaimRecord]:
    return [b for c in s.comments(n) if isinstance(b := parse_block(c.body), ClaimRecord)]


def holding_child(tmp_path: Path, code: int = 0) -> tuple[list[str], Path, Path]:
    """A child that says it started (its pid file), waits for `go`, then exits `code`."""
    started, go = tmp_path / "started", tmp_path / "go"
    return child_cmd(pid_file=started, until=go, exit_code=code), started, go


def test_failure_passes_the_exit_code_and_marks_failed() -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    code, logs = run(s, [sys.executable, "-c", "raise SystemExit(3)"], n, stage="build")
    assert code == 3, logs
    assert s.issue(n).labels == frozenset({LAB.failed})  # lock and stage labels gone
    (rec,) = records(s, n)
    assert rec.state is State.FINISHED and rec.exit_code == 3
    assert "exit code 3" in s.comments(n)[0].body


def test_a_child_killed_by_a_signal_reports_128_plus_signal() -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    code, logs = run(s, ["sh", "-c", "kill -TERM $$"], n)
    assert code == 128 + signal.SIGTERM, logs
    assert s.issue(n).labels == frozenset({LAB.failed})
    assert records(s, n)[0].exit_code == 128 + signal.SIGTERM


def test_a_command_that_cannot_start_is_refused_before_anything_is_claimed(tmp_path: Path) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    with pytest.raises(UsageError, match="cannot start the command"):  # the CLI's exit 64, one line
        run(s, [str(tmp_path / "no-such-cmd")], n)
    assert s.issue(n).labels == frozenset({LAB.queue})  # not claimed, no attempt spent
    assert s.comments(n) == []


def test_stage_label_is_shown_while_held_and_removed_after(tmp_path: Path) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue, "bug"])
    command, started, go = holding_child(tmp_path)
    seen: list[object] = []

    def look() -> None:  # while the child runs (the wrapper has the main thread)
        try:
            while not started.exists():
                time.sleep(0.02)
            seen.append(s.issue(n).labels)
            seen.append(records(s, n)[0].stage)
        finally:
            go.touch()

    side = threading.Thread(target=look, daemon=True)
    side.start()
    code, logs = run(s, command, n, stage="review")
    side.join(60)
    assert code == 0, logs
    assert seen == [frozenset({LAB.working, f"{LAB.stage_prefix}review", "bug"}), "review"]
    assert "stage review" in s.comments(n)[0].body
    assert s.issue(n).labels == frozenset({LAB.ready, "bug"})  # a label a person set is left alone


# -- time limits (was integration/test_limits.py) --------------------------------------------

TIMED_OUT = 124


def limits(timeout: float, attempts: int) -> Config:
    return Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, trigger_permission="none",
                  timeout=timeout, max_attempts=attempts, source="test")


def forever(tmp_path: Path, name: str, ignore: tuple[str, ...] = ()) -> tuple[list[str], Path]:
    """A child that records its pid, then holds until it is stopped (ignoring `ignore`)."""
    pid = tmp_path / f"{name}.pid"
    return child_cmd(pid_file=pid, until=tmp_path / "never", ignore=ignore), pid


def gone(pid_file: Path) -> bool:
    try:
        os.kill(json.loads(pid_file.read_text())["pid"], 0)
    except ProcessLookupError:
        return True
    return False


def test_a_child_that_runs_too_long_is_stopped_with_124_and_requeued(tmp_path: Path) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    command, pid = forever(tmp_path, "child")
    began = time.monotonic()
    code, logs = run(s, command, n, config=limits(1.5, attempts=2))
    assert code == TIMED_OUT, logs
    assert time.monotonic() - began >= 1.5
    assert gone(pid)
    assert s.issue(n).labels == frozenset({LAB.queue})  # attempt 1 of 2 spent: back to the queue
    (rec,) = records(s, n)
    assert rec.state is State.INTERRUPTED and rec.exit_code == TIMED_OUT and rec.counts_attempt
    assert rec.note and "run.timeout" in rec.note and "back to the queue" in rec.note
    assert any("run.timeout" in line for line in logs), logs


def test_a_run_that_times_out_every_time_ends_failed(tmp_path: Path) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    for attempt in (1, 2):
        s.clock.advance(5)  # GitHub's clock moves on between the runs (it moves only when told)
        command, pid = forever(tmp_path, f"child{attempt}")
        code, logs = run(s, command, n, config=limits(1, attempts=2))
        assert code == TIMED_OUT, logs
        assert gone(pid)
    assert s.issue(n).labels == frozenset({LAB.failed})
    last = records(s, n)[-1]
    assert last.attempt == 2 and last.exit_code == TIMED_OUT
    assert last.note and "retry budget spent" in last.note


def test_with_one_attempt_a_timeout_ends_failed_at_once(tmp_path: Path) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    command, _ = forever(tmp_path, "child")
    code, logs = run(s, command, n, config=limits(1, attempts=1))
    assert code == TIMED_OUT, logs
    assert s.issue(n).labels == frozenset({LAB.failed})
    assert "attempt 1 of 1" in (records(s, n)[0].note or "")


# -- the claim lost while the child runs (was integration/test_run_faults.py) -----------------

LOST = 76


def lose_it_meanwhile(s: MemoryServer, n: int, started: Path,
                      how: Callable[[ClaimRecord], None]) -> threading.Thread:
    """Once the child runs and the record says so, `how` takes the claim away (another thread:
    the wrapper has the main one)."""
    def act() -> None:
        while not started.exists() or not [r for r in records(s, n) if r.state is State.RUNNING]:
            time.sleep(0.02)
        how(records(s, n)[0])

    side = threading.Thread(target=act, daemon=True)
    side.start()
    return side


def test_removing_the_lock_label_stops_the_child(tmp_path: Path) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    stubborn, pid = forever(tmp_path, "child", ignore=("term",))  # needs the SIGKILL after the grace
    side = lose_it_meanwhile(s, n, pid, lambda _rec: s.remove_label(n, LAB.working))
    code, logs = run(s, stubborn, n)
    side.join(60)
    assert code == LOST, logs
    assert gone(pid)
    assert any("lock label was removed" in line for line in logs), logs
    assert records(s, n)[0].state is State.LOST
    assert s.issue(n).labels == frozenset()  # the wrapper touches no label once it lost the lock


def test_a_tombstone_naming_the_claim_stops_the_child(tmp_path: Path) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    command, pid = forever(tmp_path, "child")  # its pid file is written once the child runs

    def release(rec: ClaimRecord) -> None:
        tomb = Tombstone(rec.token, ReleaseAction.RELEASE, "released by hand", by="release")
        s.comment(n, render_tombstone(tomb), BOT)

    side = lose_it_meanwhile(s, n, pid, release)
    code, logs = run(s, command, n)
    side.join(60)
    assert code == LOST, logs
    assert gone(pid)
    assert any("released by release" in line for line in logs), logs
