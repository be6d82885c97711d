"""The liveness judgement across machines (docs/design.md section 5), with the reconciler run in
Linux namespaces (tests/namespaces.py): another host, this host after a reboot, another
container on the same kernel. The holders are real wrappers on this machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

import pytest
from namespaces import available, other_container_cmd, other_machine_cmd, rebooted_cmd
from rig import PATIENCE, ROOT, wait_until
from rig.harness import (
    Orion,
    Wrapper,
    queued_issue,
    tombstone_blocks,
    write_config,
)

from orion_action.adapters import machine
from orion_action.core.record import ReleaseAction

_why_not = available()
if _why_not:  # a clear failure, never a silent skip
    raise RuntimeError(f"tests/namespaces.py cannot work here: {_why_not}")

PROBE = (
    "import json, os, socket, sys\n"
    "from orion_action.adapters import machine\n"
    "m = machine.this_machine()\n"
    "print(json.dumps({'host': m.host, 'boot_id': m.boot_id, 'machine_id': m.machine_id,\n"
    "  'pid_ns': m.pid_ns, 'pid': os.getpid(), 'sees': os.path.exists(f'/proc/{sys.argv[1]}')}))\n"
)


def probe(wrap, *args, target: int | None = None) -> dict:
    argv = wrap([sys.executable, "-c", PROBE, str(target or os.getpid())], *args)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(argv, capture_output=True, text=True, timeout=PATIENCE, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    # The identity files are bind-mounted, then removed: nothing is left behind.
    leftovers = [a for a in argv if a.startswith(tempfile.gettempdir() + "/orion-ns-")]
    assert not [a for a in leftovers if os.path.exists(a)], leftovers
    return json.loads(result.stdout)


def labels(repo, n: int) -> set[str]:
    return set(repo.labels(n))


# -- the helper itself ---------------------------------------------------------------------------


def test_namespace_helpers_change_what_the_judge_sees_of_its_machine():
    here = machine.this_machine()
    plain = probe(list)
    assert (plain["host"], plain["boot_id"], plain["machine_id"], plain["pid_ns"]) == (
        here.host, here.boot_id, here.machine_id, here.pid_ns)
    assert plain["sees"] is True

    boot = str(uuid.uuid4())
    other = probe(other_machine_cmd, "build-7", boot)
    assert other["host"] == "build-7" and other["boot_id"] == boot
    assert other["machine_id"] not in ("", here.machine_id)
    assert other["pid_ns"] != here.pid_ns and other["pid"] == 1  # its own process table
    assert other["sees"] is False  # our pid does not exist there

    rebooted = probe(rebooted_cmd)
    assert (rebooted["host"], rebooted["machine_id"]) == (here.host, here.machine_id)
    assert rebooted["boot_id"] not in (here.boot_id, boot)
    assert rebooted["pid_ns"] != here.pid_ns

    container = probe(other_container_cmd)
    assert (container["host"], container["boot_id"], container["machine_id"]) == (
        here.host, here.boot_id, here.machine_id)
    assert container["pid_ns"] != here.pid_ns and container["sees"] is False

    # Nothing leaks out of the namespaces: this machine is unchanged afterwards.
    assert machine.this_machine() == here


# -- another machine -----------------------------------------------------------------------------


def _until_released(orion: Orion, n: int, w: Wrapper, wrap) -> list[tuple[float, dict]]:
    """Reconcile passes from `wrap` back to back until one is not `keep`; (end time after the
    kill, entry) of each pass."""
    passes: list[tuple[float, dict]] = []

    def released() -> bool:
        entry = orion.action(n, wrap=wrap)
        passes.append((time.monotonic() - w.killed_at, entry))
        return entry["action"] != "keep"

    wait_until(released, interval=0.2, message=lambda: f"never released: {passes}")
    return passes


def _assert_kept_until_stale(passes: list[tuple[float, dict]], interval: float, stale: float) -> None:
    *kept, (at, last) = passes
    assert last["action"] == "requeue", passes
    assert "no heartbeat for" in last["reason"] and f"stale after {stale:g}s" in last["reason"]
    # The last beat landed at most one interval (plus its latency) before the kill, and the
    # Date header has a resolution of a second: nothing may be released earlier than this.
    assert at >= stale - interval - 1.5, passes
    assert kept and all(e["action"] == "keep" for _, e in kept), passes
    assert all("last heartbeat" in e["reason"] for _, e in kept), passes


def test_another_machine_keeps_a_killed_claim_until_stale_then_requeues(orion: Orion, repo, tmp_path):
    orion.config = write_config(tmp_path, interval=1, stale_after=6)
    n = queued_issue(repo)
    w = orion.running(n)
    live = orion.action(n, wrap=other_machine_cmd)
    assert live["action"] == "keep" and "on GitHub's clock" in live["reason"], live

    w.kill()
    passes = _until_released(orion, n, w, other_machine_cmd)
    _assert_kept_until_stale(passes, 1, 6)
    assert labels(repo, n) == {"orion"}
    assert [t.block.action for t in tombstone_blocks(repo, n)] == [ReleaseAction.REQUEUE]


def test_a_reboot_requeues_after_one_missed_beat(orion: Orion, repo, tmp_path):
    """A new boot id on the same machine proves the holder gone only together with a missed
    beat: clones of one image share machine id and host name (defect 12 of the v0.1 audit)."""
    # stale_after is an hour: a release within the test cannot have waited for it (no clock bound).
    orion.config = write_config(tmp_path, interval=1, stale_after=3600)
    n = queued_issue(repo)
    w = orion.running(n)
    w.kill()  # a reboot takes every process with it
    passes = _until_released(orion, n, w, rebooted_cmd)
    *kept, (_, entry) = passes
    assert entry["action"] == "requeue", entry
    assert f"host {machine.this_machine().host} rebooted since the claim" in entry["reason"]
    assert "missed a beat" in entry["reason"]  # long before stale_after (an hour)
    assert all(e["action"] == "keep" for _, e in kept), passes
    assert labels(repo, n) == {"orion"}


def test_a_clone_with_a_fresh_heartbeat_is_not_judged_rebooted(orion: Orion, repo, tmp_path):
    orion.config = write_config(tmp_path, interval=1, stale_after=30)
    n = queued_issue(repo)
    orion.running(n)
    entry = orion.action(n, wrap=rebooted_cmd)  # same machine id and host, another boot id
    assert entry["action"] == "keep", entry
    assert "last heartbeat" in entry["reason"]


# Slow: the container view is in `make test` (status from elsewhere) and in test_liveness's table.
@pytest.mark.slow
def test_another_container_judges_by_heartbeat_not_by_its_process_table(orion: Orion, repo, tmp_path):
    orion.config = write_config(tmp_path, interval=1, stale_after=6)
    n = queued_issue(repo)
    w = orion.running(n)
    # The wrapper's pid is invisible in the other PID namespace, yet the claim is alive.
    assert probe(other_container_cmd, target=w.pid)["sees"] is False
    entry = orion.action(n, wrap=other_container_cmd)
    assert entry["action"] == "keep", entry
    assert "last heartbeat" in entry["reason"] and "on this machine" not in entry["reason"]
    status = orion.status(wrap=other_container_cmd)
    assert status["claims"][0]["verdict"] == "alive"

    w.kill()
    passes = _until_released(orion, n, w, other_container_cmd)
    _assert_kept_until_stale(passes, 1, 6)
    assert labels(repo, n) == {"orion"}


# Slow (15 s by design); `make test` judges a beating holder from another machine in
# test_a_beating_holder_costs_no_run_lookup.
@pytest.mark.slow
def test_a_long_run_judged_from_another_machine_is_never_released(orion: Orion, repo, tmp_path):
    orion.config = write_config(tmp_path, interval=1, stale_after=4)
    n = queued_issue(repo)
    w = orion.running(n, ["sleep", "15"], stage="long")
    seen: list[str] = []
    while w.proc.poll() is None:  # back-to-back passes (each about a second) for the whole run
        plan = orion.reconcile(wrap=other_machine_cmd)
        seen += [f"{a['action']}: {a['reason']}" for a in plan["actions"] if a["issue"] == n]
    assert w.wait() == 0, w.output()
    # Several passes per stale_after, all `keep`; only a pass overlapping the finish (record
    # finished, labels not yet moved) may complete it instead, and only as the last one.
    keeps = [e for e in seen if e.startswith("keep: ")]
    assert len(keeps) >= 5 and seen[:len(keeps)] == keeps, seen
    assert len(seen) - len(keeps) <= 1 and all(e.startswith("complete: ") for e in seen[len(keeps):]), seen
    assert tombstone_blocks(repo, n) == []
    assert labels(repo, n) == {"orion-ready"}
    assert w.current().beats >= 10


# -- a recorded Actions run ----------------------------------------------------------------------


def test_a_completed_actions_run_is_dead_at_the_holders_own_stale_after(orion: Orion, repo, proxy, tmp_path):
    """ADR 0029: `completed` releases a claim once the holder's own stale_after has passed,
    not sooner (a partitioned self-hosted runner's job is failed while its holder goes on),
    and before a judge's longer stale_after."""
    orion.config = write_config(tmp_path, interval=1, stale_after=6)
    judge_config = write_config(tmp_path, interval=1, stale_after=600, name="judge.yml")
    run_id = 987654
    proxy.set_workflow_run(repo.owner, repo.name, run_id, "completed", "failure")  # runner lost
    n = queued_issue(repo)
    env = {**orion.env, "GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": str(run_id),
           "GITHUB_RUN_ATTEMPT": "1", "RUNNER_NAME": "self-hosted-3"}
    w = orion.running(n, env=env)
    assert w.record.actions is not None and w.record.actions.run_id == run_id
    assert w.record.actions.runner_name == "self-hosted-3"
    run_path = rf"/actions/runs/{run_id}$"

    w.kill()  # the job's processes are gone
    def released() -> bool:
        entry = orion.action(n, wrap=other_machine_cmd, config=judge_config)
        if entry["action"] == "keep":
            assert "last heartbeat" in entry["reason"], entry
            return False
        assert entry["action"] == "requeue", entry
        assert f"Actions run {run_id} has completed" in entry["reason"], entry
        return True
    wait_until(released, interval=0.2)
    assert labels(repo, n) == {"orion"} and proxy.count("GET", run_path) >= 1


def test_a_beating_holder_costs_no_run_lookup(orion: Orion, repo, proxy, tmp_path):
    orion.config = write_config(tmp_path, interval=2, stale_after=30)
    run_id = 1234
    proxy.set_workflow_run(repo.owner, repo.name, run_id, "completed", "success")
    n = queued_issue(repo)
    env = {**orion.env, "GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": str(run_id)}
    w = orion.running(n, env=env)
    # Right after a beat the holder is alive whatever the run says (ADR 0004).
    beats = w.current().beats
    w.wait_beats(beats + 1)
    entry = orion.action(n, wrap=other_machine_cmd)
    assert entry["action"] == "keep", entry
    assert proxy.count("GET", rf"/actions/runs/{run_id}$") == 0


@pytest.mark.parametrize("wrap", [other_machine_cmd, other_container_cmd], ids=["machine", "container"])
def test_status_from_elsewhere_shows_the_holder(orion: Orion, repo, wrap):
    n = queued_issue(repo)
    w = orion.running(n, stage="plan")
    claims = orion.status(wrap=wrap)["claims"]
    assert len(claims) == 1
    c = claims[0]
    assert (c["issue"], c["verdict"], c["host"], c["pid"], c["stage"], c["attempt"]) == (
        n, "alive", machine.this_machine().host, w.pid, "plan", 1)
