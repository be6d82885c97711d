"""`run --next --drain [--max-runs K]`: one invocation works down a backlog (docs/design.md
section 12, "Immediate pickup"), against the emulator with real processes."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from helpers_run import FAILED, QUEUE, READY, USAGE, WORKING, Child, Run, claim_comments, fast_config
from rig import wait_until


def ran(log: Path) -> list[int]:
    """The issues the child ran for, in order."""
    if not log.exists():
        return []
    return [int(json.loads(line)["issue"]) for line in log.read_text().splitlines()]


def drain(orion_env, tmp_path, *args: str, cmd: list[str], name: str = "drain") -> Run:
    config = fast_config(tmp_path)
    return Run(orion_env, tmp_path, "--next", "--drain", *args, cmd=cmd, config=config, name=name)


def test_a_backlog_of_five_is_worked_in_one_invocation(repo, orion_env, tmp_path):
    issues = [repo.create_issue(f"work {i}", [QUEUE]) for i in range(5)]
    log = tmp_path / "ran.jsonl"
    child = Child(tmp_path, hold=False, log=log)
    r = drain(orion_env, tmp_path, cmd=child.cmd)
    assert r.wait(60) == 0, r.stderr
    assert ran(log) == issues  # each once, oldest first
    for n in issues:
        assert set(repo.labels(n)) == {READY}
    assert "stopping after 5 run(s)" in r.stderr


def test_max_runs_stops_the_drain(repo, orion_env, tmp_path):
    issues = [repo.create_issue(f"work {i}", [QUEUE]) for i in range(3)]
    log = tmp_path / "ran.jsonl"
    child = Child(tmp_path, hold=False, log=log)
    r = drain(orion_env, tmp_path, "--max-runs", "2", cmd=child.cmd)
    assert r.wait(60) == 0, r.stderr
    assert ran(log) == issues[:2]
    assert set(repo.labels(issues[2])) == {QUEUE} and not claim_comments(repo, issues[2])


def test_an_empty_queue_is_a_successful_drain(repo, orion_env, tmp_path):
    child = Child(tmp_path, hold=False)
    r = drain(orion_env, tmp_path, cmd=child.cmd)
    assert r.wait(30) == 0, r.stderr
    assert not child.started


def test_the_first_failing_code_is_the_exit_code(repo, orion_env, tmp_path):
    # The first issue's run fails (3); the rest succeed; the drain goes on and exits 3.
    issues = [repo.create_issue(f"work {i}", [QUEUE]) for i in range(3)]
    log = tmp_path / "ran.jsonl"
    script = tmp_path / "fail_first.sh"
    script.write_text(f'#!/bin/sh\necho "{{\\"issue\\": \\"$ORION_ISSUE\\"}}" >> {log}\n'
                      f'[ "$ORION_ISSUE" = "{issues[0]}" ] && exit 3\nexit 0\n')
    script.chmod(0o755)
    r = drain(orion_env, tmp_path, cmd=[str(script)])
    assert r.wait(60) == 3, r.stderr
    assert ran(log) == issues
    assert set(repo.labels(issues[0])) == {FAILED}
    assert all(set(repo.labels(n)) == {READY} for n in issues[1:])


def test_a_signal_stops_the_drain_after_cancelling_the_current_issue(repo, orion_env, tmp_path):
    issues = [repo.create_issue(f"work {i}", [QUEUE]) for i in range(3)]
    log = tmp_path / "ran.jsonl"
    child = Child(tmp_path, log=log)  # holds until released: never, here
    r = drain(orion_env, tmp_path, cmd=child.cmd)
    child.wait_started()
    wait_until(lambda: WORKING in repo.labels(issues[0]), message="first issue never locked")
    r.signal(signal.SIGTERM)
    assert r.wait(30) == 128 + signal.SIGTERM, r.stderr
    assert ran(log) == issues[:1]
    assert set(repo.labels(issues[0])) == set()  # cancelled (run.on_signal: cancel, ADR 0043)
    for n in issues[1:]:
        assert set(repo.labels(n)) == {QUEUE} and not claim_comments(repo, n)


def test_drain_needs_next(repo, orion_env, tmp_path):
    n = repo.create_issue("work", [QUEUE])
    r = Run(orion_env, tmp_path, "--issue", str(n), "--drain", cmd=["true"], config=fast_config(tmp_path))
    assert r.wait(30) == USAGE
    assert "--drain works with --next only" in r.stderr
    r = Run(orion_env, tmp_path, "--next", "--max-runs", "2", cmd=["true"], config=fast_config(tmp_path),
            name="r2")
    assert r.wait(30) == USAGE
    assert "--max-runs works with --drain only" in r.stderr
