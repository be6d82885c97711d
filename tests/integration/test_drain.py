"""`run --next --drain`: a signal stops the drain after cancelling the current issue, against
the emulator with real processes. How a drain works down a backlog (docs/design.md section 12,
"Immediate pickup": order, --max-runs, an empty queue, the exit code) is decided in-process on
the in-memory GitHub (unit/test_drain_in_process.py, issue 17); --drain and --max-runs without
their partner option are refused in unit/test_run_usage.py."""

from __future__ import annotations

import signal
from pathlib import Path

from rig import wait_until
from rig.harness import QUEUE, WORKING, Child, Run, child_starts, claim_comments, fast_config


def ran(log: Path) -> list[int]:
    """The issues the child ran for, in order."""
    return [int(e["issue"]) for e in child_starts(log)]


def drain(orion_env, tmp_path, *args: str, cmd: list[str], name: str = "drain") -> Run:
    config = fast_config(tmp_path)
    return Run(orion_env, tmp_path, "--next", "--drain", *args, cmd=cmd, config=config, name=name)


def test_a_signal_stops_the_drain_after_cancelling_the_current_issue(repo, orion_env, tmp_path):
    issues = [repo.create_issue(f"work {i}", [QUEUE]) for i in range(3)]
    log = tmp_path / "ran.jsonl"
    child = Child(tmp_path, log=log)  # holds until released: never, here
    r = drain(orion_env, tmp_path, cmd=child.cmd)
    child.wait_started()
    wait_until(lambda: WORKING in repo.labels(issues[0]), message="first issue never locked")
    r.send_signal(signal.SIGTERM)
    assert r.wait() == 128 + signal.SIGTERM, r.stderr
    assert ran(log) == issues[:1]
    assert set(repo.labels(issues[0])) == set()  # cancelled (run.on_signal: cancel, ADR 0043)
    for n in issues[1:]:
        assert set(repo.labels(n)) == {QUEUE} and not claim_comments(repo, n)
