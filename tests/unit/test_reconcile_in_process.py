"""Reconcile pass and hand-release decisions (docs/design.md sections 5, 6, 9, 10), decided by
the real services in-process on the in-memory GitHub: `reconcile_repos`, `release` and `status`
and the report layer, as `cli.py` calls them, over hand-made claim records. A holder on this
machine whose process is not in the process table (`nothing_runs`) is dead ("not running on
this machine"); a holder elsewhere is judged by its heartbeat's age on GitHub's clock, which
moves only when a test says. (Issue 17: these were product subprocesses against the emulator
in integration/test_reconcile.py and test_status_release.py, which keep what needs real
processes: SIGKILLed wrappers, a holder stopped by a pass, two passes racing through the proxy,
the cost checked against the proxy's count, the command's Actions-mode outputs, a live holder
refused then forced, and `status` of a live wrapper.)"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import Any

import pytest
from fakes.dashboard_text import issues_in, row, section
from fakes.host import blind
from fakes.memory_github import BOT, MemoryServer, ServerTime

from orion_action import report
from orion_action.adapters.actions import ActionsRunner
from orion_action.config import Config, parse_config
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Machine, ProcessSighting
from orion_action.core.record import (
    ClaimRecord,
    Holder,
    ReleaseAction,
    State,
    Tombstone,
    parse_block,
    render_record,
)
from orion_action.errors import NotClaimed
from orion_action.ports import Sight
from orion_action.services.claiming import Claimer
from orion_action.services.reconcile import reconcile_repos, release, status_repos
from orion_action.services.setup import init_command

# As the integration tests' fast configuration (interval 1 s, stale after 4 s); the trigger
# check has its own tests (the in-memory GitHub keeps no issue events).
CONFIG = Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, max_attempts=3,
                trigger_permission="none", source="test")
LAB = CONFIG.labels
OUTSIDER = "mallory"


# This machine, with a process table proven its own (ADR 0028: "<inode>:<random id>"), so pids
# recorded here are judged against `nothing_runs`.
THIS = Machine("runner-h", "boot-h", "machine-h", "4026531836:table-h")


def nothing_runs(_pid: int, _pgid: int | None) -> ProcessSighting:
    """This machine's process table, in which no holder's wrapper or child runs."""
    return ProcessSighting(wrapper_start=None)


def here_holder(pid: int = 4321) -> Holder:
    """A holder on this machine whose process is gone (`nothing_runs`)."""
    return Holder(THIS.host, THIS.boot_id, THIS.machine_id, THIS.pid_ns, pid, 1_700_000_000.0)


def remote_holder(host: str = "far-away") -> Holder:
    """A holder on another machine: only its heartbeat can be judged from here."""
    return Holder(host, f"boot-of-{host}", f"machine-of-{host}", "4026531836", 4242, 1_700_000_000.0)


# A dead claim that won and never started is in doubt until its unqueue can no longer land:
# its lease (2/3 of stale_after 4) plus 11 s after it was posted (ADR 0072).
PAST_ITS_UNQUEUE_S = 14.0


def post_claim(s: MemoryServer, n: int, holder: Holder, *, state: State = State.RUNNING,
               exit_code: int | None = None, stale_after: float = 4.0, stage: str | None = None,
               lock: bool = True, child_pid: int | None = None, attempt: int = 1,
               login: str = BOT) -> tuple[int, ClaimRecord]:
    """A claim record on issue n by `login` and (`lock`) the lock taken, as a wrapper leaves them."""
    now = s.clock.now.isoformat(timespec="milliseconds")
    record = ClaimRecord(
        token=secrets.token_hex(12), state=state, holder=holder, started_at=now, heartbeat_at=now,
        interval=1.0, stale_after=stale_after, stage=stage, child_pid=child_pid, exit_code=exit_code,
        attempt=attempt, finished_at=now if state in (State.FINISHED, State.INTERRUPTED) else None)
    cid = s.comment(n, render_record(record), login)
    if lock:
        s.add_label(n, LAB.working, BOT)
        if stage:
            s.add_label(n, f"{LAB.stage_prefix}{stage}", BOT)
        s.remove_label(n, LAB.queue, BOT)
    return cid, record


def reconcile(s: MemoryServer, capsys: pytest.CaptureFixture[str], *args: str,
              config: Config = CONFIG) -> tuple[str, list[str]]:
    """`reconcile [--dry-run] [--json]` as cli.py runs it: the pass, then the report layer.
    Returns what it printed and what it logged; the command must exit 0."""
    logs: list[str] = []
    runner = ActionsRunner({})
    dry_run, as_json = "--dry-run" in args, "--json" in args
    passes = reconcile_repos([s.client()], config, logs.append, THIS, nothing_runs, dry_run=dry_run,
                             runner=runner)
    capsys.readouterr()
    assert report.reconcile(passes, config, logs.append, runner, dry_run=dry_run, as_json=as_json) == 0
    return capsys.readouterr().out, logs


def plan_of(s: MemoryServer, capsys: pytest.CaptureFixture[str], *args: str,
            config: Config = CONFIG) -> dict[str, Any]:
    out, _ = reconcile(s, capsys, "--json", *args, config=config)
    return json.loads(out)


def action(s: MemoryServer, capsys: pytest.CaptureFixture[str], n: int,
           config: Config = CONFIG) -> dict[str, Any]:
    """The entry for issue n of one pass."""
    found = [a for a in plan_of(s, capsys, config=config)["actions"] if a["issue"] == n]
    assert len(found) == 1, found
    return found[0]


def snapshot(s: MemoryServer, numbers: list[int]) -> dict[int, tuple[object, ...]]:
    """Everything a write could change on these issues: state, labels, every comment."""
    out: dict[int, tuple[object, ...]] = {}
    for n in numbers:
        issue = s.issue(n)
        out[n] = (issue.is_open, sorted(issue.labels),
                  [(c.id, c.author, c.body, c.updated_at) for c in s.comments(n)])
    return out


def tombstones(s: MemoryServer, n: int) -> list[Tombstone]:
    blocks = [parse_block(c.body) for c in s.comments(n) if c.author == BOT]
    return [b for b in blocks if isinstance(b, Tombstone)]


def labels(s: MemoryServer, n: int) -> set[str]:
    return set(s.issue(n).labels)


def test_dry_run_writes_nothing_and_prints_the_same_plan(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    dead = s.create_issue("dead", [LAB.queue])
    post_claim(s, dead, here_holder())
    hand = s.create_issue("hand", [LAB.working])
    closed = s.create_issue("closed", [LAB.queue])
    post_claim(s, closed, here_holder(), stage="x")
    s.close(closed)
    done = s.create_issue("done", [LAB.queue])
    post_claim(s, done, here_holder(), state=State.FINISHED, exit_code=0)
    alive = s.create_issue("alive", [LAB.queue])
    post_claim(s, alive, remote_holder(), stale_after=600)
    idle = s.create_issue("idle", [LAB.queue])  # queued, no lock: not part of the pass
    s.clock.advance(PAST_ITS_UNQUEUE_S)
    numbers = [dead, hand, closed, done, alive, idle]
    expected = {dead: "requeue", hand: "report", closed: "unlock", done: "complete", alive: "keep"}
    before = snapshot(s, numbers)

    plan = plan_of(s, capsys, "--dry-run")
    assert set(plan) == {"dry_run", "actions", "dispatched", "read_in_full"} and plan["dry_run"] is True
    assert 4 <= plan["read_in_full"] <= 5  # every verdict but `keep` rests on a full read (ADR 0018)
    assert plan["dispatched"] == []  # a dry run dispatches nothing
    actions: list[dict[str, Any]] = plan["actions"]
    assert [set(a) for a in actions] == [{"issue", "action", "reason"}] * len(expected)
    assert {a["issue"]: a["action"] for a in actions} == expected
    assert all(isinstance(a["issue"], int) and a["reason"] for a in actions)
    text, _ = reconcile(s, capsys, "--dry-run")
    assert "(dry run: nothing written)" in text, text
    assert snapshot(s, numbers) == before

    s.clock.advance(2)  # the heartbeat's age moves on between the passes
    real = plan_of(s, capsys)
    assert real["dry_run"] is False

    def same(a: dict[str, Any]) -> tuple[object, ...]:
        return a["issue"], a["action"], re.sub(r"\d+s ago", "Ns ago", str(a["reason"]))
    assert [same(a) for a in real["actions"]] == [same(a) for a in actions]
    assert labels(s, dead) == {LAB.queue}
    assert labels(s, hand) == {LAB.working}
    assert labels(s, closed) == set()
    assert labels(s, done) == {LAB.ready}
    assert labels(s, alive) == {LAB.working}
    assert labels(s, idle) == {LAB.queue}


def test_lock_added_by_hand_is_reported_and_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    n = s.create_issue("hand-locked", [LAB.working, f"{LAB.stage_prefix}x", "bug"])
    forged, _ = post_claim(s, n, here_holder(), lock=False, login=OUTSIDER)
    before = snapshot(s, [n])

    text, _ = reconcile(s, capsys)
    why = "the lock label is on but there is no trusted claim record"
    assert re.search(rf"#{n}\s+report\s+{why}", text), text
    assert "ignored 1 orion-looking comment(s) by untrusted authors" in text
    assert "1 report" in text
    assert action(s, capsys, n)["action"] == "report"
    assert snapshot(s, [n]) == before  # labels and comments untouched
    assert [c.id for c in s.comments(n)] == [forged]


def test_a_crashed_loser_from_an_earlier_run_does_not_block_a_requeue(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A loser that crashed before marking its record lost stays open (and dead) in the log.
    After the winner finished and the issue was queued again (the next stage), a dead holder
    of the new run must still be requeued: the old loser is not "a new claim"."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    _, loser = post_claim(s, n, here_holder(4301), state=State.CLAIMING, lock=False)
    post_claim(s, n, here_holder(4302), state=State.FINISHED, exit_code=0, lock=False)
    _, dead = post_claim(s, n, here_holder(4303), child_pid=4242)  # the next stage's run, killed
    entry = action(s, capsys, n)
    assert entry["action"] == "requeue", entry
    assert labels(s, n) == {LAB.queue}
    # Both dead open claims are released (defect 5 of the v0.1 audit: a dead open claim is
    # always released, or it hides the next run's death); only the run that ran spends an attempt.
    tombs = tombstones(s, n)
    assert sorted(t.token for t in tombs) == sorted([dead.token, loser.token])
    assert [t.token for t in tombs if t.counts_attempt] == [dead.token]


def claim_and_die(s: MemoryServer, n: int, pid: int, config: Config) -> ClaimRecord:
    """A real claim by the claimer on this machine, whose run then started its child (the first
    beat names it) and died: the wrapper's process is gone."""
    claimer = Claimer(s.client(), config, lambda _line: None, ServerTime(s), THIS, here_holder(pid),
                      sight=blind)
    claim = claimer.claim_number(n, None)
    (comment,) = [c for c in s.comments(n) if (b := parse_block(c.body)) is not None
                  and isinstance(b, ClaimRecord) and b.token == claim.record.token]
    s.edit(comment.id, render_record(claim.record.with_changes(state=State.RUNNING, child_pid=pid + 1)))
    return claim.record


def test_two_dead_holders_spend_a_budget_of_two(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    config = Config(heartbeat_interval=1.0, stale_after=30.0, kill_grace=1.0, max_attempts=2,
                    trigger_permission="none", source="test")
    first = claim_and_die(s, n, 5001, config)
    assert first.attempt == 1
    entry = action(s, capsys, n, config)
    assert entry["action"] == "requeue" and "attempt 1 of 2" in str(entry["reason"]), entry
    assert "wrapper pid 5001 is not running on this machine" in str(entry["reason"])
    assert labels(s, n) == {LAB.queue}

    second = claim_and_die(s, n, 5002, config)
    assert second.attempt == 2  # the claimer counts the attempt the tombstone spent
    entry = action(s, capsys, n, config)
    assert entry["action"] == "give_up", entry
    assert "attempt 2 of 2 failed, retry budget spent" in str(entry["reason"])
    assert labels(s, n) == {LAB.failed}

    tombs = tombstones(s, n)
    assert [t.action for t in tombs] == [ReleaseAction.REQUEUE, ReleaseAction.GIVE_UP]
    assert [t.token for t in tombs] == [first.token, second.token]
    visible = [c.body for c in s.comments(n) if "needs a person" in c.body][-1].split("-->", 1)[1]
    assert "retry budget is spent" in visible and "needs a person" in visible
    assert "attempt 2 of 2" in visible and "pid 5002" in visible
    # A person takes over from here: nothing carries the lock any more.
    assert plan_of(s, capsys, config=config)["actions"] == []
    assert read_log(s.comments(n), trusted_set(BOT, ())).attempts_used() == 2


# -- release by hand (was integration/test_status_release.py) --------------------------------


def release_by_hand(s: MemoryServer, capsys: pytest.CaptureFixture[str], n: int,
                    sight: Sight = nothing_runs) -> str:
    """`release --issue N` as cli.py runs it: the service, then its one line (exit 0)."""
    plan = release(s.client(), CONFIG, lambda _line: None, THIS, sight, n, force=False)
    capsys.readouterr()
    assert report.release(plan, CONFIG, n) == 0
    return capsys.readouterr().out


def test_release_of_a_dead_holder_needs_no_force(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    dead = claim_and_die(s, n, 5001, CONFIG)
    assert "released by hand; the holder is dead" in release_by_hand(s, capsys, n)
    assert labels(s, n) == {LAB.queue}
    (tomb,) = tombstones(s, n)
    assert tomb.token == dead.token and tomb.counts_attempt
    # The hand release counts as an attempt, as a reconcile requeue would.
    assert claim_and_die(s, n, 5002, CONFIG).attempt == 2


def test_release_of_a_finished_claim_with_the_lock_on(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    post_claim(s, n, here_holder(), state=State.FINISHED, exit_code=0)
    out = release_by_hand(s, capsys, n)
    # The run's own log says it finished: the release completes its label move, it does not
    # send the issue round again.
    assert labels(s, n) == {LAB.ready}
    assert f"#{n}: completed" in out, out
    assert tombstones(s, n) == []  # no open claim to tombstone


def test_release_of_an_issue_without_the_lock_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    before = snapshot(s, [n])
    assert f"does not carry {LAB.working!r}; nothing to release" in release_by_hand(s, capsys, n)
    assert snapshot(s, [n]) == before


def test_release_of_a_hand_lock_with_only_a_forged_record(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    n = s.create_issue("hand", [LAB.working])
    post_claim(s, n, here_holder(), lock=False, login=OUTSIDER)
    # No trusted record: nothing to judge, nothing to tombstone; a hand release still works
    # (the lock is the only thing to undo) and does not trust the forged record. No orion run
    # ever claimed the issue, so nothing queued it: it is left for a person to queue.
    out = release_by_hand(s, capsys, n)
    assert labels(s, n) == set()
    assert f"not queued: add the {LAB.queue!r} label to queue it" in out
    assert tombstones(s, n) == []


def test_release_of_a_closed_issue_only_unlocks_it(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    post_claim(s, n, here_holder(), stage="build")
    s.close(n)
    out = release_by_hand(s, capsys, n)
    assert labels(s, n) == set()  # a closed issue is not work: no queue label
    assert len(tombstones(s, n)) == 1
    assert not s.issue(n).is_open
    assert f"#{n}: released" in out and f"{LAB.working} removed" in out


def test_an_orphaned_child_is_unknown_reported_and_not_released(capsys: pytest.CaptureFixture[str]) -> None:
    """The wrapper is gone but its child's process group still runs (docs/design.md section 5):
    `unknown`. Reconcile reports it, release refuses it, status says so; once the group is gone
    the pass requeues it."""
    group_runs = [True]

    def sight(_pid: int, _pgid: int | None) -> ProcessSighting:
        return ProcessSighting(wrapper_start=None, child_group_alive=group_runs[0])

    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    post_claim(s, n, here_holder(), child_pid=7777)
    before = snapshot(s, [n])
    passes = reconcile_repos([s.client()], CONFIG, lambda _line: None, THIS, sight, dry_run=False)
    assert passes[0].result is not None
    (entry,) = passes[0].result.action_entries()
    assert entry["action"] == "report", entry
    assert "process group 7777 is still running" in str(entry["reason"])
    with pytest.raises(NotClaimed, match="its holder is unknown"):
        release_by_hand(s, capsys, n, sight)
    assert snapshot(s, [n]) == before
    found = status_repos([s.client()], CONFIG, lambda _line: None, THIS, sight)
    capsys.readouterr()
    assert report.status(found, CONFIG, lambda _line: None, ActionsRunner({}), as_json=True) == 0
    assert [c["verdict"] for c in json.loads(capsys.readouterr().out)["claims"]] == ["unknown"]
    group_runs[0] = False
    assert action(s, capsys, n)["action"] == "requeue"


# -- more pass decisions (was integration/test_reconcile.py) ---------------------------------


def test_closed_issue_with_a_dead_holder_is_unlocked(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    dead = claim_and_die(s, n, 5001, CONFIG)
    s.add_label(n, f"{LAB.stage_prefix}review", BOT)
    s.close(n)
    entry = action(s, capsys, n)
    assert entry["action"] == "unlock" and entry["reason"] == "the issue is closed", entry
    assert labels(s, n) == set()  # no queue label either: a closed issue is not work
    (tomb,) = tombstones(s, n)
    assert (tomb.token, tomb.action, tomb.counts_attempt) == (dead.token, ReleaseAction.UNLOCK, False)
    assert not s.issue(n).is_open


def test_live_holder_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    """A holder on this machine whose wrapper runs (the process at its pid started when the
    record says) and whose child's group runs is kept, whatever else the pass sees."""
    holder = here_holder(5001)

    def runs(pid: int, _pgid: int | None) -> ProcessSighting:
        return ProcessSighting(wrapper_start=holder.pid_start if pid == holder.pid else None,
                               child_group_alive=True)

    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    post_claim(s, n, holder, child_pid=5002)
    passes = reconcile_repos([s.client()], CONFIG, lambda _line: None, THIS, runs, dry_run=False)
    assert passes[0].result is not None
    (entry,) = passes[0].result.action_entries()
    assert entry["action"] == "keep", entry
    assert f"wrapper pid {holder.pid} is running on this machine" in str(entry["reason"])
    assert labels(s, n) == {LAB.working} and tombstones(s, n) == []


def test_new_claim_after_a_requeue_is_not_touched_by_a_stale_pass(capsys: pytest.CaptureFixture[str]) -> None:
    """After a requeue and a fresh claim, the next pass keeps the new holder and still counts
    the old tombstone as one attempt used."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    claim_and_die(s, n, 5001, CONFIG)
    assert action(s, capsys, n)["action"] == "requeue"
    far = Machine("far-away", "boot-of-far-away", "machine-of-far-away", "4026531836:far")
    claimer = Claimer(s.client(), CONFIG, lambda _line: None, ServerTime(s), far, remote_holder(),
                      sight=blind)
    claim = claimer.claim_number(n, None)
    assert claim.record.attempt == 2
    entry = action(s, capsys, n)
    assert entry["action"] == "keep", entry
    assert len(tombstones(s, n)) == 1


# -- immediate pickup after a pass (was integration/test_dispatch.py) -------------------------

WORKER = "orion-worker.yml"


def dispatching(max_runs: int = 4) -> Config:
    return Config(heartbeat_interval=1.0, stale_after=4.0, kill_grace=1.0, trigger_permission="none",
                  dispatch_workflow=WORKER, dispatch_max_runs=max_runs, source="test")


def with_worker() -> MemoryServer:
    s = MemoryServer()
    s.workflows[WORKER] = "orion worker #{issue}"
    return s


def sent(s: MemoryServer) -> list[tuple[object, object, object]]:
    """(workflow, ref, inputs) of every dispatch the pass made."""
    return [(d["workflow"], d["ref"], d["inputs"]) for d in s.dispatches]


def run_of(s: MemoryServer, n: int) -> int:
    return int(str(next(d["run_id"] for d in s.dispatches if d["inputs"] == {"issue": str(n)})))


def test_reconcile_dispatches_the_issue_it_requeued(capsys: pytest.CaptureFixture[str]) -> None:
    s = with_worker()
    config = dispatching()
    n = s.create_issue("work", [LAB.queue])
    post_claim(s, n, here_holder())  # a holder whose process is gone: requeued once its unqueue landed
    s.clock.advance(PAST_ITS_UNQUEUE_S)
    plan = plan_of(s, capsys, config=config)
    assert [a["action"] for a in plan["actions"]] == ["requeue"]
    assert labels(s, n) == {LAB.queue}
    assert plan["dispatched"] == [n]
    assert sent(s) == [(WORKER, "main", {"issue": str(n)})]
    # The run it started waits in the queue: the next pass starts no second one for the issue.
    assert plan_of(s, capsys, config=config)["dispatched"] == []
    assert len(sent(s)) == 1


def test_never_more_than_max_runs_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    s = with_worker()
    config = dispatching(max_runs=3)
    issues = [s.create_issue(f"work {i}", [LAB.queue]) for i in range(5)]
    s.workflow_runs[555] = "in_progress"  # a run started otherwise (its schedule)
    s.run_info[555] = (WORKER, "orion worker (scheduled)")
    assert plan_of(s, capsys, config=config)["dispatched"] == issues[:2]  # 3 - 1 in progress
    assert plan_of(s, capsys, config=config)["dispatched"] == []  # full
    # The scheduled run ends, and the run for the first issue worked it (ready): two runs are
    # free; the second issue's run still waits, so the next two issues get them, oldest first.
    for rid in (555, run_of(s, issues[0])):
        s.workflow_runs[rid] = "completed"
    s.remove_label(issues[0], LAB.queue)
    s.add_label(issues[0], LAB.ready)
    assert plan_of(s, capsys, config=config)["dispatched"] == issues[2:4]
    assert [inputs["issue"] for _, _, inputs in sent(s)] == [str(n) for n in issues[:4]]  # type: ignore[index]
    # A run that ended without taking its issue frees it for another dispatch.
    s.workflow_runs[run_of(s, issues[1])] = "completed"
    assert plan_of(s, capsys, config=config)["dispatched"] == [issues[1]]


def test_without_a_workflow_nothing_is_dispatched(capsys: pytest.CaptureFixture[str]) -> None:
    s = with_worker()
    s.create_issue("work", [LAB.queue])
    ops: list[str] = []
    s.on_call = lambda op, _args: ops.append(op)
    assert plan_of(s, capsys)["dispatched"] == []
    assert s.dispatches == [] and not [op for op in ops if "workflow" in op], ops


def test_a_missing_workflow_is_a_logged_line_not_a_failure(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()  # GitHub knows no such workflow: 404
    s.create_issue("work", [LAB.queue])
    out, logs = reconcile(s, capsys, "--json", config=dispatching())
    assert json.loads(out)["dispatched"] == []
    assert any(f"dispatch: GitHub has no workflow {WORKER} (404): check dispatch.workflow" in line
               for line in logs), logs


# -- status's step summary (was integration/test_dashboard.py) --------------------------------


def test_status_writes_the_tables_to_the_step_summary(tmp_path: Path) -> None:
    config = parse_config({"heartbeat": {"interval": 1, "stale_after": 4}, "run": {"kill_grace": 1},
                           "labels": {"priority": ["orion-p0"]},
                           "dashboard": {"enabled": True, "title": "fleet queue"},
                           "trigger": {"permission": "none"}}, source="dash.yml")
    s = MemoryServer()
    init_command(s.client(), config, lambda _line: None)
    queued = s.create_issue("work", [LAB.queue])
    failed = s.create_issue("broke", [LAB.failed])
    post_claim(s, failed, remote_holder(), state=State.FINISHED, exit_code=2, lock=False)
    summary = tmp_path / "summary.md"
    runner = ActionsRunner({"GITHUB_STEP_SUMMARY": str(summary)})
    gh = s.client()
    found = status_repos([gh], config, lambda _line: None, THIS, nothing_runs,
                         summary_url=runner.server_url if runner.has_summary() else None)
    assert report.status(found, config, lambda _line: None, runner, as_json=False) == 0
    text = summary.read_text()
    assert re.sub(r"\\(.)", r"\1", text.splitlines()[0]) == f"## orion queue: {gh.full_name}"
    assert "**The queue is running**" in text
    assert issues_in(section(text, "Queue")) == [queued]
    assert row(section(text, "Failed"), failed)[-2] == "the command exited with code 2 (attempt 1)"
    assert "_No issue is held._" in section(text, "Working")


def _stale_requeue_over_a_cancel(s: MemoryServer) -> int:
    """A person queued and cancelled the issue, orion carried the cancel out, and a pass's stale
    requeue landed after (its pass killed before it looked back): the labels say queued."""
    n = s.create_issue("cancelled, then requeued by a stale write", [])
    s.add_label(n, LAB.queue, OUTSIDER)
    s.add_label(n, LAB.cancel, OUTSIDER)
    s.remove_label(n, LAB.queue, BOT)
    s.remove_label(n, LAB.cancel, BOT)
    s.add_label(n, LAB.queue, BOT)
    return n


def test_a_pass_takes_a_stale_requeue_over_a_cancel_off(capsys: pytest.CaptureFixture[str]) -> None:
    """ADR 0085: the queued issue changed since the previous pass; GitHub's record shows the
    person's cancel standing once orion's own queue label is set aside."""
    s = MemoryServer()
    n = _stale_requeue_over_a_cancel(s)
    entry = action(s, capsys, n)
    assert entry["action"] == "cancel" and f"{OUTSIDER} added the {LAB.cancel} label" in entry["reason"]
    assert labels(s, n) == set()
    assert plan_of(s, capsys)["actions"] == []


def test_a_queued_issue_unchanged_since_the_previous_pass_could_look_is_not_read(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The look reaches back as the strand look does (2 x stale_after + 5 s outside Actions):
    an issue unchanged since then was the previous pass's to look at, and costs no query."""
    s = MemoryServer()
    n = _stale_requeue_over_a_cancel(s)
    s.clock.advance(2 * CONFIG.stale_after + 6)
    asked: list[str] = []
    s.on_call = lambda op, args: asked.append(op)  # type: ignore[assignment, func-returns-value]
    assert plan_of(s, capsys)["actions"] == []
    assert "queue_history" not in asked and labels(s, n) == {LAB.queue}


def test_a_persons_requeue_the_cancels_removal_took_is_put_back(capsys: pytest.CaptureFixture[str]) -> None:
    """Labels have no compare-and-swap: the person queues the issue again (the label off and on)
    just before the pass's removal lands, which takes that queueing. The pass's look at GitHub's
    record after its removal finds the person's queueing after the cancel, and puts it back."""
    s = MemoryServer()
    n = _stale_requeue_over_a_cancel(s)

    def requeue_first(op: str, args: tuple[object, ...]) -> None:
        if op == "remove_label" and args[:2] == (n, LAB.queue):
            s.on_call = None
            s.remove_label(n, LAB.queue, OUTSIDER)
            s.add_label(n, LAB.queue, OUTSIDER)

    s.on_call = requeue_first  # type: ignore[assignment]
    entry = action(s, capsys, n)
    assert entry["action"] == "keep" and "a person queued the issue again" in entry["reason"]
    assert labels(s, n) == {LAB.queue}


def test_a_claim_posted_after_the_passs_tombstone_keeps_the_release(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The pass posts its tombstone for a dead holder; before it lists the comments again,
    another pass finishes that release (the queue label on, the lock off) and a claimer takes the
    issue. That claim came after our release: the tombstone stays (taking it back would undo the
    release that let the claim in, default seed 14 episode 107) and the pass moves no label, which
    could take the new claim's lock off (ADR 0089). A claim posted before the tombstone is one
    that appeared while the pass ran: the tombstone is taken back
    (integration/test_reconcile.py)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    _, dead = post_claim(s, n, here_holder(4301), child_pid=4242)
    posted: list[int] = []

    def hook(op: str, args: tuple[object, ...]) -> None:
        if op == "post_comment":
            posted.append(1)
        elif op == "list_comments" and posted and len(posted) == 1:
            posted.append(2)
            s.add_label(n, LAB.queue, BOT)  # another pass finishes our release
            s.remove_label(n, LAB.working, BOT)
            post_claim(s, n, here_holder(4302), stale_after=600)  # and a claimer takes the issue

    s.on_call = hook
    entry = action(s, capsys, n)
    s.on_call = None
    assert entry["action"] == "keep", entry
    assert "came after this pass's release, which stands" in entry["reason"]
    assert [t.token for t in tombstones(s, n)] == [dead.token]
    assert labels(s, n) == {LAB.working}
