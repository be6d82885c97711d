"""Cancel means cancel (issue 18, ADR 0043). run.on_signal: a signal to the wrapper (a cancelled
Actions job) ends the run as `cancelled`, as the cancel label does, unless the configuration asks
for a requeue: the real wrapper on the in-memory GitHub, signalled for real while its child runs,
and the reconcile pass that finds such a run's label move unfinished. And a forced release leaves
no comment of the holder reading as working."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from fakes.host import real_host
from fakes.memory_github import MemoryServer

from orion_action.adapters import machine as local
from orion_action.config import Config
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.plan import Action
from orion_action.core.record import State, block_kind
from orion_action.services.reconcile import Reconciler, reconcile_pass
from orion_action.services.wrapper import RunRequest, Wrapper

WORKER = "orion-worker.yml"
# The trigger check has its own tests; the in-memory GitHub keeps no events.
CONFIG = Config(heartbeat_interval=1.0, stale_after=30.0, kill_grace=1.0, trigger_permission="none",
                dispatch_workflow=WORKER, source="test")
LAB = CONFIG.labels
TRUSTED = trusted_set("orion-bot", ())


OnCall = Callable[[str, tuple[object, ...]], None]


def signalled_run(tmp_path: Path, config: Config, signum: int, queued_by: str | None = None,
                  on_call: OnCall | None = None) -> tuple[MemoryServer, int, int]:
    """Run a child that says it started and then waits; send `signum` to this process (the
    wrapper) once it has (after `queued_by`, if given, puts the queue label on, and `on_call`
    starts watching GitHub's requests); return the server, the issue and the wrapper's exit code."""
    s = MemoryServer()
    s.workflows[WORKER] = "orion worker #{issue}"
    n = s.create_issue("Long work", [LAB.queue])
    started = tmp_path / "started"
    script = f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(120)"

    def cancel_the_job() -> None:
        while not started.exists():  # the condition, not a guess at how long starting takes
            time.sleep(0.02)
        if queued_by is not None:
            s.add_label(n, LAB.queue, login=queued_by)
        s.on_call = on_call
        os.kill(os.getpid(), signum)

    threading.Thread(target=cancel_the_job, daemon=True).start()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    w = Wrapper([s.client()], config, lambda line: None, env, real_host(env))
    code = w.run(RunRequest(command=[sys.executable, "-c", script], issue=n))
    return s, n, code


@pytest.mark.timeout(60)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_cancelled_job_cancels_the_run(tmp_path: Path, signum: int) -> None:
    s, n, code = signalled_run(tmp_path, CONFIG, signum)
    assert code == 128 + signum
    labels = s.issue(n).labels
    assert not labels & {LAB.queue, LAB.working, LAB.cancel, LAB.failed, LAB.ready}, labels
    log = read_log(s.comments(n), TRUSTED)
    (claim,) = log.claims
    assert claim.record.state is State.CANCELLED
    assert "the Actions job was cancelled" in (claim.record.note or "")
    assert signal.Signals(signum).name in (claim.record.note or "")
    assert log.attempts_used() == 0  # no attempt spent
    assert s.dispatches == []  # nothing started another run
    # A reconcile pass afterwards starts nothing: the run is over.
    result = reconcile_pass(s.client(), CONFIG, lambda line: None, local.this_machine(), local.sight,
                            dry_run=False)
    assert not [p for p in result.done if p.issue == n]
    assert result.dispatched == [] and s.dispatches == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("who", "left"), [("orion-bot", False), ("mallory", True)])
def test_a_cancelled_jobs_ending_takes_off_only_orions_queue_label(tmp_path: Path, who: str,
                                                                   left: bool) -> None:
    """A queue label put on while the run held the issue: a person's is a newer wish, and the
    cancel ending leaves it; orion's can only be a stale requeue (a pass planned before this
    claim), and GitHub's record says so: it comes off with the lock, so the cancelled run does
    not run again (ADR 0104)."""
    s, n, code = signalled_run(tmp_path, CONFIG, signal.SIGTERM, queued_by=who)
    assert code == 128 + signal.SIGTERM
    labels = s.issue(n).labels
    assert (LAB.queue in labels) is left and LAB.working not in labels, labels
    (claim,) = read_log(s.comments(n), TRUSTED).claims
    assert claim.record.state is State.CANCELLED


@pytest.mark.timeout(60)
def test_requeue_hands_the_issue_back_and_dispatches(tmp_path: Path) -> None:
    s, n, code = signalled_run(tmp_path, replace(CONFIG, on_signal="requeue"), signal.SIGTERM)
    assert code == 128 + signal.SIGTERM
    labels = s.issue(n).labels
    assert LAB.queue in labels and LAB.working not in labels
    log = read_log(s.comments(n), TRUSTED)
    (claim,) = log.claims
    assert claim.record.state is State.INTERRUPTED and claim.record.counts_attempt
    assert log.attempts_used() == 1
    assert [d.get("workflow") for d in s.dispatches] == [WORKER]


@pytest.mark.timeout(60)
def test_a_pass_finishes_a_cancelled_runs_label_move_and_never_requeues(tmp_path: Path) -> None:
    """The wrapper wrote its `cancelled` record and was killed before its last label write
    (the lock goes last): the pass finishes the cancel-label move; no requeue, no dispatch."""
    s, n, _ = signalled_run(tmp_path, CONFIG, signal.SIGTERM)
    s.add_label(n, LAB.working)  # the state a kill before the lock's removal leaves
    result = reconcile_pass(s.client(), CONFIG, lambda line: None, local.this_machine(), local.sight,
                            dry_run=False)
    (plan,) = [p for p in result.done if p.issue == n]
    assert plan.action is Action.COMPLETE and not plan.add_labels and not plan.counts_attempt
    assert not s.issue(n).labels & {LAB.queue, LAB.working, LAB.failed}
    assert result.dispatched == [] and s.dispatches == []
    assert read_log(s.comments(n), TRUSTED).attempts_used() == 0


@pytest.mark.timeout(60)
def test_a_forced_release_leaves_no_comment_of_the_holder_reading_as_working(tmp_path: Path) -> None:
    """`release --force` of a live holder rewrites its line; the holder's next beat writes
    "running" again before it reads the release, so the holder, giving up, rewrites it too."""
    s = MemoryServer()
    n = s.create_issue("Long work", [LAB.queue])
    started = tmp_path / "started"
    script = f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(120)"
    released: list[str] = []

    def release_by_hand() -> None:
        while not started.exists():
            time.sleep(0.02)
        reconciler = Reconciler(s.client(), CONFIG, lambda line: None, local.this_machine(), local.sight)
        released.append(reconciler.release(n, force=True).reason)

    threading.Thread(target=release_by_hand, daemon=True).start()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    w = Wrapper([s.client()], CONFIG, lambda line: None, env, real_host(env))
    code = w.run(RunRequest(command=[sys.executable, "-c", script], issue=n))
    assert released == ["released by hand with --force"]
    assert code == 76  # the claim was lost: the holder stopped its child
    (claim,) = [c for c in s.comments(n) if block_kind(c.body) == "orion-claim"]
    visible = claim.body.split("-->", 1)[1]
    assert "no longer holds this issue" in visible and "released" in visible, visible
    assert "working" not in visible, visible
    record = read_log(s.comments(n), TRUSTED).claims[0].record
    assert record.state is State.RUNNING  # no final state written over a released claim


@pytest.mark.timeout(60)
def test_a_cancelled_jobs_ending_that_cannot_read_the_record_leaves_the_queue_label(tmp_path: Path) -> None:
    """GitHub's record cannot be read: the label stays, for the next pass (ADRs 0103, 0104)."""
    from orion_action.errors import GitHubError

    def refused(op: str, args: tuple[object, ...]) -> None:
        if op == "queue_history":
            raise GitHubError("HTTP 502")

    s, n, code = signalled_run(tmp_path, CONFIG, signal.SIGTERM, queued_by="orion-bot", on_call=refused)
    assert code == 128 + signal.SIGTERM
    assert s.issue(n).labels == frozenset({LAB.queue})
