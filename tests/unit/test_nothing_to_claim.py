"""What `run` does not claim, and which issue `--next` takes (docs/design.md section 12): the
real wrapper in-process on the in-memory GitHub, with a real child. An issue it refuses is left
exactly as it was and the command never starts. (Issue 17: these were product subprocesses in
integration/test_run.py, which keeps a success, a failure and the refusals that need a second
live process.)"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fakes.host import real_host
from fakes.memory_github import MemoryServer

from orion_action.config import Config
from orion_action.errors import NotClaimed
from orion_action.services.wrapper import RunRequest, Wrapper

# The trigger check has its own tests; the in-memory GitHub keeps no events.
CONFIG = Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, trigger_permission="none",
                source="test")
LAB = CONFIG.labels


def snapshot(s: MemoryServer, n: int) -> tuple[object, ...]:
    issue = s.issue(n)
    return issue.labels, issue.is_open, tuple((c.id, c.body) for c in s.comments(n))


def run(s: MemoryServer, tmp_path: Path, issue: int | None) -> tuple[int | str, list[int]]:
    """The wrapper's exit code, or the NotClaimed message; and the issues the child ran for."""
    ran = tmp_path / "ran"
    script = f"import os; open({str(ran)!r}, 'a').write(os.environ['ORION_ISSUE'] + '\\n')"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    w = Wrapper([s.client()], CONFIG, lambda line: None, env, real_host(env))
    try:
        code: int | str = w.run(RunRequest(command=[sys.executable, "-c", script], issue=issue))
    except NotClaimed as exc:
        code = str(exc)
    return code, [int(x) for x in ran.read_text().split()] if ran.exists() else []


@pytest.mark.parametrize("labels,closed,says", [
    (["bug"], False, "not queued"),
    ([LAB.queue, LAB.ready], False, ""),
    ([LAB.queue, LAB.failed], False, ""),
    ([LAB.queue], True, ""),
], ids=["unqueued", "ready", "failed", "closed"])
def test_an_issue_that_is_not_queued_is_not_claimed(tmp_path: Path, labels: list[str], closed: bool,
                                                    says: str) -> None:
    s = MemoryServer()
    n = s.create_issue("nothing to do", labels)
    if closed:
        s.close(n)
    before = snapshot(s, n)
    code, ran = run(s, tmp_path, n)
    assert isinstance(code, str) and says in code, code
    assert ran == [] and snapshot(s, n) == before


def test_next_claims_the_oldest_queued_issue(tmp_path: Path) -> None:
    s = MemoryServer()
    skipped = [s.create_issue("not queued", ["bug"]),
               s.create_issue("ready", [LAB.queue, LAB.ready]),
               s.create_issue("failed", [LAB.queue, LAB.failed])]
    closed = s.create_issue("closed", [LAB.queue])
    s.close(closed)
    s.clock.advance(1)
    oldest = s.create_issue("oldest queued", [LAB.queue])
    s.clock.advance(1)
    newer = s.create_issue("newer queued", [LAB.queue])
    before = {n: snapshot(s, n) for n in [*skipped, closed, newer]}
    assert run(s, tmp_path, None) == (0, [oldest])
    assert s.issue(oldest).labels == frozenset({LAB.ready})
    assert {n: snapshot(s, n) for n in [*skipped, closed, newer]} == before


def test_next_with_an_empty_queue_is_not_claimed(tmp_path: Path) -> None:
    s = MemoryServer()
    s.create_issue("not queued", ["bug"])
    code, ran = run(s, tmp_path, None)
    assert isinstance(code, str) and "queue is empty" in code and ran == []
