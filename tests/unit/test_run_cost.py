"""What a run costs on GitHub (issue 19, ADR 0059): a command that ends before its first beat is
due costs no beat, and its final record carries the child's pid (which spends the attempt); a
command that runs on gets its first beat, with the pid, without waiting for its end. The real
wrapper on the in-memory GitHub, every request counted."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fakes.host import real_host
from fakes.memory_github import MemoryServer

from orion_action.config import Config
from orion_action.core.record import State, block_kind, parse_block
from orion_action.services import wrapper
from orion_action.services.wrapper import RunRequest, Wrapper

CONFIG = Config(heartbeat_interval=1.0, stale_after=30.0, kill_grace=1.0, trigger_permission="none",
                source="test")
LAB = CONFIG.labels
WRITES = {"post_comment", "edit_comment", "add_labels", "remove_label"}


def run(command: list[str], ops: list[tuple[str, tuple[object, ...]]], s: MemoryServer, n: int) -> int:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    w = Wrapper([s.client()], CONFIG, lambda line: None, env, real_host(env))
    return w.run(RunRequest(command=command, issue=n))


def claim_record(s: MemoryServer, n: int):  # type: ignore[no-untyped-def]
    record = parse_block(next(c.body for c in s.comments(n) if block_kind(c.body) == "orion-claim"))
    assert record is not None
    return record


@pytest.mark.timeout(60)
def test_a_command_that_ends_before_its_first_beat_costs_no_beat(monkeypatch: pytest.MonkeyPatch) -> None:
    # The wait is bounded by a quarter of the lease left (about 5 s here): time for `true` to end.
    monkeypatch.setattr(wrapper, "FIRST_BEAT_WAIT_S", 60.0)
    s = MemoryServer()
    n = s.create_issue("nothing to do", [LAB.queue])
    ops: list[tuple[str, tuple[object, ...]]] = []
    s.on_call = lambda op, args: ops.append((op, args))
    assert run(["true"], ops, s, n) == 0
    writes = [op for op, _ in ops if op in WRITES]
    # claim, lock, running, unqueue; final record, outcome label, lock off: no beat between.
    assert writes == ["post_comment", "add_labels", "edit_comment", "remove_label",
                      "edit_comment", "add_labels", "remove_label"]
    record = claim_record(s, n)
    assert record.state is State.FINISHED and record.beats == 0
    assert record.child_pid is not None  # the final record spends the attempt the beat would have
    assert LAB.ready in s.issue(n).labels


@pytest.mark.timeout(60)
def test_a_command_that_runs_on_gets_its_first_beat_with_the_pid(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wrapper, "FIRST_BEAT_WAIT_S", 0.1)
    s = MemoryServer()
    n = s.create_issue("something to do", [LAB.queue])
    beaten = tmp_path / "beaten"
    ops: list[tuple[str, tuple[object, ...]]] = []

    def seen(op: str, args: tuple[object, ...]) -> None:
        ops.append((op, args))
        body = str(args[-1]) if args else ""
        if op == "edit_comment" and '"beats":1,' in body and '"child_pid":null' not in body:
            beaten.touch()

    s.on_call = seen
    # The command ends only once GitHub got a beat carrying its pid (or gives up after 50 s).
    script = ("import os, sys, time\nend = time.monotonic() + 50\n"
              f"while not os.path.exists({str(beaten)!r}):\n"
              "    if time.monotonic() > end: sys.exit(9)\n    time.sleep(0.02)\n")
    assert run([sys.executable, "-c", script], ops, s, n) == 0
    record = claim_record(s, n)
    assert record.state is State.FINISHED and record.beats >= 1 and record.child_pid is not None


@pytest.mark.timeout(60)
def test_a_claim_by_number_reads_the_issue_with_the_trigger_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """ADR 0063: where the trigger check runs, its one query brings the issue, so that `run
    --issue N` reads nothing before it; and the node ids, so that the ending writes its final
    record and outcome label in one GraphQL request, the lock off last (ADR 0076): every request
    of a run that does nothing, in order (11; 6 of them content writes)."""
    monkeypatch.setattr(wrapper, "FIRST_BEAT_WAIT_S", 60.0)
    s = MemoryServer()
    for name in (LAB.queue, LAB.working, LAB.ready, LAB.failed):  # as `orion init` made them
        s.labels[name] = ("ededed", "")
    s.permissions["maintainer"] = "write"
    n = s.create_issue("nothing to do")
    s.add_label(n, LAB.queue, "maintainer")
    s.clock.advance(5)
    ops: list[tuple[str, tuple[object, ...]]] = []
    s.on_call = lambda op, args: ops.append((op, args))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    checked = Config(heartbeat_interval=1.0, stale_after=30.0, kill_grace=1.0, trigger_permission="write",
                     source="test")
    w = Wrapper([s.client()], checked, lambda line: None, env, real_host(env))
    assert w.run(RunRequest(command=["true"], issue=n)) == 0
    assert [op for op, _ in ops] == [
        "queue_history", "collaborator_permission",  # the issue, who queued it, their access
        "post_comment", "add_labels", "list_comments", "edit_comment", "remove_label",  # the claim
        "get_issue", "list_comments", "finish", "remove_label",  # the ending: record + ready, lock off
    ]
    assert s.issue(n).labels == {LAB.ready}
