"""Helpers for the fault suite (and bench/bench.py): what the one child (tests/rig/child.py,
``Orion.child_argv``) logged of its own start and end, workers, "another machine" / "after a
reboot" with Linux namespaces, and the invariant checks every fault test ends with. The
product runs as subprocesses through the one harness, tests/rig/harness.py (Orion, Proc).

Nothing here sleeps for a fixed time: everything waits on a condition (rig.PATIENCE).
"""

from __future__ import annotations

import glob
import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rig import PATIENCE, RepoHandle, wait_until
from rig.harness import Orion, child_events, pid_alive

from orion_action.config import Labels
from orion_action.core.issue import Comment, IssueLog, read_log
from orion_action.core.record import HOLDER_END, State

LABELS = Labels()
TRUSTED = frozenset({"orion-bot"})

# -- processes: rig.harness (Orion, Proc, spawn) ---------------------------------------------


def actions_of(plan: dict[str, Any], issue: int) -> list[str]:
    return [a["action"] for a in plan["actions"] if a["issue"] == issue]


# -- workers: `run --next` in a loop --------------------------------------------------------

WORKERS = 8

# A worker: wait for the start signal, then `run --next` until it exits 75 because the queue
# is empty (75 for a lost race means: try again). Every wrapper's exit code goes to `results`.
WORKER = r'''
import json, os, subprocess, sys, time
results, go, argv = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
while not os.path.exists(go):
    time.sleep(0.01)
for attempt in range(200):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    line = json.dumps({"pid": os.getpid(), "rc": p.returncode, "stderr": p.stderr}) + "\n"
    fd = os.open(results, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, line.encode())
    os.close(fd)
    if p.returncode == 75 and "queue is empty" in p.stderr:
        break
'''


def start_workers(orion: Orion, n: int, tag: str, child_seconds: float
                  ) -> tuple[list[subprocess.Popen[bytes]], Path, Path, Path]:
    """`n` worker processes, waiting for the file `go` to exist; returns them, the results
    file, `go`, and the children's log."""
    work = orion.workdir
    results, go, log = work / f"results-{tag}.jsonl", work / f"go-{tag}", work / f"children-{tag}.log"
    argv = [sys.executable, "-m", "orion_action", "run", "--config", str(orion.config), "--next",
            "--", *orion.child_argv(log, seconds=child_seconds)]
    script = work / "worker.py"
    script.write_text(WORKER)
    workers = [subprocess.Popen([sys.executable, str(script), str(results), str(go), json.dumps(argv)],
                                cwd=work, env=orion.env, stdin=subprocess.DEVNULL)
               for _ in range(n)]
    return workers, results, go, log


# -- the child's own log ------------------------------------------------------------------------


def wait_child_started(log: Path, n: int = 1, timeout: float = PATIENCE) -> list[dict[str, Any]]:
    def started() -> list[dict[str, Any]] | None:
        found = [e for e in child_events(log) if e["event"] == "start"]
        return found if len(found) >= n else None

    return wait_until(started, timeout, message=f"{n} child start(s) in {log}")


def wait_children_gone(log: Path, timeout: float = PATIENCE) -> None:
    """Every child that ever started (per its own log) is gone: nothing left behind."""
    pids = {e["pid"] for e in child_events(log) if e["event"] == "start"}
    wait_until(lambda: not any(pid_alive(p) for p in pids), timeout,
               message=lambda: f"children still running: {[p for p in pids if pid_alive(p)]}")


@dataclass(frozen=True)
class Span:
    issue: str | None
    pid: int
    start: float
    end: float | None


def spans(log: Path) -> list[Span]:
    """One span per child run, from its own start/end events (end None: killed outright)."""
    started: dict[int, dict[str, Any]] = {}
    out: list[Span] = []
    for e in child_events(log):
        if e["event"] == "start":
            started[e["pid"]] = e
        elif e["event"] == "end" and e["pid"] in started:
            s = started.pop(e["pid"])
            out.append(Span(s["issue"], s["pid"], s["t"], e["t"]))
    out += [Span(s["issue"], s["pid"], s["t"], None) for s in started.values()]
    return sorted(out, key=lambda s: s.start)


# -- machine identity: another machine, a reboot ---------------------------------------------------


class Machines:
    """Command prefixes that run a product command as seen from another machine, or from this
    machine after a reboot, with `unshare` (needs root; the suite runs as root in CI).

    Both get a new PID namespace with its own /proc (the holder's pids mean nothing there) and a
    new boot id (a file bind-mounted over /proc/sys/kernel/random/boot_id). Another machine also
    gets its own /etc/machine-id and host name; a reboot keeps both (docs/design.md section 5)."""

    def __init__(self, workdir: Path):
        self.workdir = workdir

    def _prefix(self, host: str | None, machine_id: bool) -> list[str]:
        boot = self.workdir / f"boot-{uuid.uuid4().hex[:8]}"
        boot.write_text(str(uuid.uuid4()) + "\n")
        steps = [f"mount --bind {shlex.quote(str(boot))} /proc/sys/kernel/random/boot_id"]
        if machine_id:
            mid = self.workdir / f"machine-id-{uuid.uuid4().hex[:8]}"
            mid.write_text(uuid.uuid4().hex + "\n")
            for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
                if os.path.exists(path):
                    steps.append(f"mount --bind {shlex.quote(str(mid))} {path}")
        if host:
            steps.append(f"hostname {shlex.quote(host)}")
        script = "set -e; " + "; ".join(steps) + '; exec "$@"'
        return ["unshare", "-m", "-u", "-p", "-f", "--mount-proc", "sh", "-c", script, "sh"]

    def other(self, host: str = "another-runner") -> list[str]:
        return self._prefix(host, machine_id=True)

    def rebooted(self) -> list[str]:
        return self._prefix(None, machine_id=False)


def faketime_prefix(offset: str) -> list[str]:
    """Run under libfaketime, the wall clock shifted by `offset` ("+10m", "-10m").

    What works with Python 3.11 and libfaketime 0.9.10 (Debian bookworm), found by trying:
    * with the monotonic clock faked too (the default), every threading wait with a timeout
      (Event.wait, Lock.acquire, Thread.join: sem_clockwait on CLOCK_MONOTONIC, which
      libfaketime does not wrap) sleeps for the whole offset, so the wrapper's heartbeat
      thread would beat every ten minutes;
    * with FAKETIME_DONT_FAKE_MONOTONIC=1 those waits are right, but time.sleep fails with
      EINVAL (libfaketime shifts the absolute CLOCK_MONOTONIC deadline of clock_nanosleep by
      the offset although it does not fake that clock).
    So this uses FAKETIME_DONT_FAKE_MONOTONIC=1, and what runs under it must not call
    time.sleep: the child sleeps with select(); the wrapper does not sleep on a path without
    API errors (its loops wait on select() and Event.wait). psutil's process start times come
    from /proc (boot time + ticks), so they stay real on both sides, as they must.

    The library is preloaded by `env`, which execs the command: the `faketime` program itself
    forks, and a SIGKILL meant for the wrapper would kill only it."""
    libs = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1") +
                  glob.glob("/usr/lib/faketime/libfaketime.so.1"))
    assert libs, "libfaketime is missing: run `make system-deps` (Debian package faketime)"
    return ["env", f"LD_PRELOAD={libs[0]}", f"FAKETIME={offset}", "FAKETIME_DONT_FAKE_MONOTONIC=1"]


# -- what an issue says ----------------------------------------------------------------------------


@dataclass
class IssueView:
    number: int
    is_open: bool
    labels: set[str]
    comments: list[dict[str, Any]]
    log: IssueLog = field(default_factory=IssueLog)

    @property
    def has_lock(self) -> bool:
        return LABELS.working in self.labels

    def claim_tokens(self) -> list[str]:
        return [c.record.token for c in self.log.claims]


def view(repo: RepoHandle, n: int) -> IssueView:
    issue = repo.issue(n)
    comments = repo.comments(n)
    parsed = [Comment(c["id"], c["user"], c["body"], _iso(c["created_at"]), _iso(c["updated_at"]))
              for c in comments]
    return IssueView(n, issue["state"] == "open", {lab["name"] for lab in issue["labels"]},
                     comments, read_log(parsed, TRUSTED))


def _iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def holder_alive(entry_record: Any) -> bool:
    h = entry_record.holder
    return pid_alive(h.pid, h.pid_start)


def assert_consistent(repo: RepoHandle, n: int, expect: str | None = None) -> IssueView:
    """The state every fault test must end in, once the runs are dead and a reconcile ran:

    * no lock label and no stage label is left (no lock with a dead holder);
    * exactly one of queued / ready / failed, and ready/failed only if the newest record
      finished with the matching exit code (``expect`` pins which);
    * no live claim at all (every wrapper is dead), no claim released twice, every tombstone
      names a real claim, nothing unreadable or untrusted."""
    v = view(repo, n)
    lab = LABELS
    where = f"#{n}: labels {sorted(v.labels)}"
    assert not v.has_lock, f"{where}: the lock is left behind"
    stages = [x for x in v.labels if x.startswith(lab.stage_prefix)]
    assert not stages, f"{where}: a stage label is left behind"
    outcome = [x for x in (lab.queue, lab.ready, lab.failed) if x in v.labels]
    assert len(outcome) == 1, f"{where}: expected exactly one of queued/ready/failed"
    state = {lab.queue: "queued", lab.ready: "ready", lab.failed: "failed"}[outcome[0]]
    ended = [c for c in v.log.claims if c.record.state in (State.FINISHED, State.INTERRUPTED)]
    last = max(ended, key=lambda c: c.comment_id, default=None)
    if state in ("ready", "failed"):
        assert last is not None and last.record.state is State.FINISHED, \
            f"{where}: {state} but no claim record says finished"
        assert (last.record.exit_code == 0) == (state == "ready"), \
            f"{where}: {state} but the run exited {last.record.exit_code}"
    if expect is not None:
        assert state == expect, f"{where}: expected {expect}, is {state}"
    live = [c for c in v.log.open_claims() if holder_alive(c.record)]
    assert not live, f"{where}: live claims left: {[c.comment_id for c in live]}"
    # A holder's own end marker is its account of how the run ended, not a release: an outage
    # marker follows a pass's release of the same claim (ADR 0092).
    released = [t.tombstone.token for t in v.log.tombstones if t.tombstone.by != HOLDER_END]
    assert len(released) == len(set(released)), f"{where}: a claim was released twice: {released}"
    tokens = {t.tombstone.token for t in v.log.tombstones}
    assert tokens <= set(v.claim_tokens()), f"{where}: a tombstone names no claim"
    assert not v.log.unreadable and not v.log.untrusted, f"{where}: {v.log}"
    return v


def create_labels(repo: RepoHandle, names: Iterable[str] = ()) -> None:
    lab = LABELS
    for name in (lab.queue, lab.working, lab.ready, lab.failed, *names):
        repo.api("POST", "/labels", json={"name": name, "color": "ededed"})


def requeue_all(repo: RepoHandle, numbers: Iterable[int]) -> None:
    """A person putting finished issues back in the queue."""
    for n in numbers:
        labels = set(repo.labels(n))
        repo.add_label(n, LABELS.queue)
        for name in labels & {LABELS.ready, LABELS.failed}:
            repo.remove_label(n, name)


def last_write_to(proxy: Any, comment_id: int) -> float:
    """Arrival time (proxy clock = GitHub's here) of the last answered write of a comment."""
    writes = [e for e in proxy.log
              if e.method == "PATCH" and e.path.endswith(f"/issues/comments/{comment_id}")
              and e.status is not None and e.status < 300]
    return max(e.time for e in writes) if writes else 0.0


def until_action(orion: Orion, n: int, wanted: str, prefix: Sequence[str] = (),
                 timeout: float = PATIENCE, every: Callable[[dict[str, Any], float], None] | None = None
                 ) -> tuple[dict[str, Any], float]:
    """Reconcile repeatedly until issue n gets `wanted`; returns that plan and when it ended.
    `every(plan, ended_at)` sees each pass before the next one (e.g. to check for `keep`)."""
    deadline = time.monotonic() + timeout
    while True:
        plan = orion.reconcile(prefix=prefix)
        ended = time.time()
        if every is not None:
            every(plan, ended)
        if wanted in actions_of(plan, n):
            return plan, ended
        assert time.monotonic() < deadline, f"#{n}: no {wanted!r} within {timeout}s; last {plan}"
