"""A queued issue carrying the cancel label is never claimed, and a reconcile pass takes it out
of the queue (ADR 0043's sweep, core/plan.plan_cancel): the real wrapper and pass in-process on
the in-memory GitHub. (Issue 17: this was integration/test_cancel.py's subprocess test; the
cancel label stopping a running child stays there, with real processes.)"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fakes.host import real_host
from fakes.memory_github import MemoryServer

from orion_action.adapters import machine as local
from orion_action.config import Config
from orion_action.core.plan import Action
from orion_action.errors import NotClaimed
from orion_action.services.reconcile import reconcile_pass
from orion_action.services.wrapper import RunRequest, Wrapper

# The trigger check has its own tests; the in-memory GitHub keeps no events.
CONFIG = Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, trigger_permission="none",
                source="test")
LAB = CONFIG.labels


def snapshot(s: MemoryServer, n: int) -> tuple[object, ...]:
    issue = s.issue(n)
    return issue.labels, issue.is_open, tuple((c.id, c.body) for c in s.comments(n))


def cancels(s: MemoryServer, *, dry_run: bool) -> list[tuple[int, Action, str]]:
    result = reconcile_pass(s.client(), CONFIG, lambda line: None, local.this_machine(), local.sight,
                            dry_run=dry_run)
    return [(p.issue, p.action, p.reason) for p in result.done]


def test_a_queued_issue_carrying_cancel_is_never_claimed_and_the_pass_unqueues_it(tmp_path: Path) -> None:
    s = MemoryServer()
    n = s.create_issue("cancelled while queued", [LAB.queue, LAB.cancel, "bug"])
    held = s.create_issue("held by someone", [LAB.working, LAB.cancel])  # the holder's to cancel
    before = snapshot(s, n)
    started = tmp_path / "started"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    command = [sys.executable, "-c", f"import pathlib; pathlib.Path({str(started)!r}).touch()"]
    for issue in (n, None):  # --issue N and --next
        w = Wrapper([s.client()], CONFIG, lambda line: None, env, real_host(env))
        with pytest.raises(NotClaimed):
            w.run(RunRequest(command=command, issue=issue))
        assert not started.exists()
    assert snapshot(s, n) == before

    dry = cancels(s, dry_run=True)
    assert (n, Action.CANCEL) in [(i, a) for i, a, _ in dry]
    assert held not in [i for i, a, _ in dry if a is Action.CANCEL]
    assert snapshot(s, n) == before  # a dry run writes nothing

    (entry,) = [(a, why) for i, a, why in cancels(s, dry_run=False) if i == n]
    assert entry[0] is Action.CANCEL and "cancelled before it ran" in entry[1]
    assert s.issue(n).labels == frozenset({"bug"})  # none of queue/cancel; a person's own label stays
    assert LAB.cancel in s.issue(held).labels  # not the sweep's: the issue carries the lock
    assert [i for i, _, _ in cancels(s, dry_run=False) if i == n] == []
