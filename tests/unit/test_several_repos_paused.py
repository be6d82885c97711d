"""Several repositories, one paused (docs/design.md section 12, "Several repositories" and
"Pause"; ADR 0021, 0022): `run --next` skips the paused one and says so, claims nothing when
every queue is paused, and `status --json` names the paused ones. The real wrapper, status
service and report in-process on two in-memory GitHubs whose issue numbers collide. (Issue 17:
this was a subprocess test in integration/test_several_repos.py, which keeps the claims, the
pass and the action's outputs across repositories end to end.)"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from fakes.host import HERE, blind, real_host
from fakes.memory_github import MemoryServer

from orion_action import report
from orion_action.adapters.actions import ActionsRunner
from orion_action.config import Config, Labels
from orion_action.errors import NotClaimed
from orion_action.services.pause import pause_command
from orion_action.services.reconcile import status_repos
from orion_action.services.wrapper import RunRequest, Wrapper

P0, P1 = "orion-p0", "orion-p1"
# The trigger check has its own tests; the in-memory GitHub keeps no events.
CONFIG = Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, trigger_permission="none",
                labels=Labels(priority=(P0, P1)), source="test")
LAB = CONFIG.labels


def status_json(servers: list[MemoryServer], capsys: pytest.CaptureFixture[str]) -> dict:
    found = status_repos([s.client() for s in servers], CONFIG, lambda line: None, HERE, blind)
    report.status(found, CONFIG, lambda line: None, ActionsRunner({}), as_json=True)
    doc: dict = json.loads(capsys.readouterr().out)
    return doc


def test_a_paused_repository_is_skipped_and_all_paused_claims_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = MemoryServer("me/a"), MemoryServer("me/b")
    top = a.create_issue("A: p0, would go first", [LAB.queue, P0])
    plain = b.create_issue("B: plain", [LAB.queue])
    assert top == plain == 1  # colliding numbers: a claim in the wrong repository shows
    pause_command(a.client(), CONFIG, lambda line: None, "release week")
    st = status_json([a, b], capsys)
    assert st["paused"] is False and st["paused_repos"] == ["me/a"]

    worked = tmp_path / "worked"
    script = (f"import os; open({str(worked)!r}, 'a').write(os.environ['ORION_REPO'] + '#' "
              f"+ os.environ['ORION_ISSUE'] + '\\n')")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    logs: list[str] = []

    def run_next() -> int:
        w = Wrapper([a.client(), b.client()], CONFIG, logs.append, env, real_host(env))
        return w.run(RunRequest(command=[sys.executable, "-c", script]))

    assert run_next() == 0, logs
    assert worked.read_text().splitlines() == [f"me/b#{plain}"]
    assert any("me/a: the queue is paused" in line and "release week" in line for line in logs), logs
    assert a.issue(top).labels == frozenset({LAB.queue, P0}) and a.comments(top) == []

    b.create_issue("B: another", [LAB.queue])
    pause_command(b.client(), CONFIG, lambda line: None, "holiday")
    with pytest.raises(NotClaimed) as caught:
        run_next()
    assert str(caught.value) == "every repository's queue is paused (me/a, me/b); nothing is claimed"
    assert len(worked.read_text().splitlines()) == 1
    st = status_json([a, b], capsys)
    assert st["paused"] is True and st["paused_repos"] == ["me/a", "me/b"]
