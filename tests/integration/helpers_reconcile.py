"""Helpers for the reconciler's integration tests: a fast configuration, the product as real
subprocesses (`python -m orion_action ...`), claim wrappers that can be killed, and readers
for what orion wrote on an issue.

Every process started here is registered with an :class:`Orion` (the ``orion`` fixture) and
killed, with its child's process group, when the test ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest
from rig import ROOT, Emulator, Proxy, RepoHandle, wait_until

from orion_action.core.record import ClaimRecord, Holder, RecordError, State, Tombstone, parse_block

ORION = (sys.executable, "-m", "orion_action")
Wrap = Callable[[Sequence[str]], list[str]]  # e.g. namespaces.other_machine_cmd


def write_config(directory: Path, *, interval: float = 1, stale_after: float = 4,
                 kill_grace: float = 1, max_attempts: int = 3, name: str = "orion.yml") -> Path:
    """A fast configuration file (seconds everywhere) in ``directory``."""
    path = Path(directory) / name
    path.write_text(
        f"heartbeat: {{interval: {interval}, stale_after: {stale_after}}}\n"
        f"run: {{kill_grace: {kill_grace}}}\n"
        f"retry: {{max_attempts: {max_attempts}}}\n", encoding="utf-8")
    return path


# -- what is on the issue ------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    comment_id: int
    author: str
    body: str
    block: ClaimRecord | Tombstone
    updated_at: str


def blocks(repo: RepoHandle, n: int, author: str = Emulator.OWNER) -> list[Block]:
    """Every readable orion block on issue ``n`` written by ``author``, in comment order."""
    out = []
    for c in repo.comments(n):
        if c["user"] != author:
            continue
        try:
            block = parse_block(c["body"])
        except RecordError:
            continue
        if block is not None:
            out.append(Block(c["id"], c["user"], c["body"], block, c["updated_at"]))
    return out


def records(repo: RepoHandle, n: int) -> list[Block]:
    return [b for b in blocks(repo, n) if isinstance(b.block, ClaimRecord)]


def tombstones(repo: RepoHandle, n: int) -> list[Block]:
    return [b for b in blocks(repo, n) if isinstance(b.block, Tombstone)]


def labels(repo: RepoHandle, n: int) -> set[str]:
    return set(repo.labels(n))


def snapshot(repo: RepoHandle, numbers: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """Everything a write could change on these issues: state, labels, every comment."""
    out = {}
    for n in numbers:
        issue = repo.issue(n)
        out[n] = (issue["state"], sorted(label["name"] for label in issue["labels"]),
                  [(c["id"], c["user"], c["body"], c["updated_at"]) for c in repo.comments(n)])
    return out


def child_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# -- processes -----------------------------------------------------------------------------------


@dataclass
class Wrapper:
    """A running `orion-action run` (the claim wrapper) and what it wrote."""

    proc: subprocess.Popen[bytes]
    issue: int
    log_path: Path
    repo: RepoHandle
    record: ClaimRecord | None = None
    comment_id: int | None = None
    killed_at: float | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def child_pid(self) -> int | None:
        return self.record.child_pid if self.record else None

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _mine(self) -> Block | None:
        for b in records(self.repo, self.issue):
            assert isinstance(b.block, ClaimRecord)
            if b.block.holder.pid == self.pid:
                return b
        return None

    def wait_running(self, timeout: float = 20.0) -> ClaimRecord:
        """Until its record says running (with the child's pid) and the lock is on."""
        def ready() -> Block | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"wrapper exited {self.proc.returncode}:\n{self.output()}")
            b = self._mine()
            if b is None or not isinstance(b.block, ClaimRecord):
                return None
            if b.block.state is State.RUNNING and b.block.child_pid and \
                    "orion-working" in labels(self.repo, self.issue):
                return b
            return None
        b = wait_until(ready, timeout, 0.1, lambda: f"wrapper not running:\n{self.output()}")
        assert isinstance(b.block, ClaimRecord)
        self.record, self.comment_id = b.block, b.comment_id
        return b.block

    def current(self) -> ClaimRecord:
        b = self._mine()
        assert b is not None and isinstance(b.block, ClaimRecord)
        return b.block

    def wait_beats(self, beats: int, timeout: float = 15.0) -> ClaimRecord:
        return wait_until(lambda: (r := self.current()).beats >= beats and r, timeout, 0.1,
                          lambda: f"no beat {beats}:\n{self.output()}")

    def kill(self, timeout: float = 10.0) -> None:
        """SIGKILL the wrapper; its child must die with it (PR_SET_PDEATHSIG)."""
        child = self.child_pid
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout)
        self.killed_at = time.monotonic()
        wait_until(lambda: not child_alive(child), timeout, 0.02,
                   f"child {child} outlived its SIGKILLed wrapper {self.pid}")

    def wait(self, timeout: float = 30.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"wrapper still running after {timeout}s:\n{self.output()}") from None

    def cleanup(self) -> None:
        child = self.child_pid
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pgid in (self.proc.pid, child):
            if pgid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGKILL)


@dataclass
class Orion:
    """The product as subprocesses against the test's proxy, with one configuration."""

    env: dict[str, str]
    config: Path
    tmp: Path
    repo: RepoHandle
    proxy: Proxy
    wrappers: list[Wrapper] = field(default_factory=list)

    def argv(self, command: str, *args: str, config: Path | None = None) -> list[str]:
        return [*ORION, command, "--config", str(config or self.config), *args]

    def run(self, command: str, *args: str, wrap: Wrap | None = None,
            env: dict[str, str] | None = None, config: Path | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        argv = self.argv(command, *args, config=config)
        if wrap is not None:
            argv = wrap(argv)
        return subprocess.run(argv, env=env or self.env, cwd=ROOT, capture_output=True,
                              text=True, timeout=timeout)

    def reconcile(self, *args: str, wrap: Wrap | None = None, env: dict[str, str] | None = None,
                  config: Path | None = None) -> dict[str, Any]:
        """One `reconcile --json` pass: the JSON plan (the pass must exit 0)."""
        result = self.run("reconcile", "--json", *args, wrap=wrap, env=env, config=config)
        assert result.returncode == 0, f"reconcile exited {result.returncode}:\n{result.stderr}"
        try:
            plan = json.loads(result.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"not JSON:\n{result.stdout}\n{result.stderr}") from None
        plan["_stderr"] = result.stderr
        return plan

    def action(self, n: int, *args: str, **kw: Any) -> dict[str, Any]:
        """The entry for issue n of one reconcile pass."""
        plan = self.reconcile(*args, **kw)
        found = [a for a in plan["actions"] if a["issue"] == n]
        assert len(found) == 1, plan
        return found[0]

    def status(self, *args: str, wrap: Wrap | None = None) -> dict[str, Any]:
        result = self.run("status", "--json", *args, wrap=wrap)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def start(self, issue: int, command: Sequence[str] = ("sleep", "600"), *,
              stage: str | None = None, env: dict[str, str] | None = None,
              config: Path | None = None) -> Wrapper:
        """Start a claim wrapper on ``issue`` running ``command`` (not waited for)."""
        log = self.tmp / f"wrapper-{issue}-{len(self.wrappers)}.log"
        args = ["--issue", str(issue), *(["--stage", stage] if stage else []), "--", *command]
        with open(log, "wb") as out:
            proc = subprocess.Popen(self.argv("run", *args, config=config), env=env or self.env,
                                    cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT)
        w = Wrapper(proc, issue, log, self.repo)
        self.wrappers.append(w)
        return w

    def running(self, issue: int, command: Sequence[str] = ("sleep", "600"), **kw: Any) -> Wrapper:
        """A wrapper that holds ``issue`` and runs ``command``."""
        w = self.start(issue, command, **kw)
        w.wait_running()
        return w

    def cleanup(self) -> None:
        for w in self.wrappers:
            w.cleanup()


@pytest.fixture
def orion(tmp_path: Path, orion_env: dict[str, str], repo: RepoHandle, proxy: Proxy):
    """An :class:`Orion` with the fast configuration (interval 1 s, stale after 4 s)."""
    o = Orion(orion_env, write_config(tmp_path), tmp_path, repo, proxy)
    try:
        yield o
    finally:
        o.cleanup()


def queued_issue(repo: RepoHandle, title: str = "work", *extra: str) -> int:
    return repo.create_issue(title, labels=["orion", *extra])


# -- hand-made claims (planning cases that need no running wrapper) ------------------------------


def exited_pid() -> int:
    """The pid of a process that has exited and been reaped: nothing runs there now."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def local_holder(pid: int | None = None, pid_start: float | None = None) -> Holder:
    """A holder on this machine (same process table); by default one whose process is gone."""
    from orion_action.adapters import machine

    m = machine.this_machine()
    pid = exited_pid() if pid is None else pid
    start = pid_start if pid_start is not None else time.time() - 60
    return Holder(host=m.host, boot_id=m.boot_id, machine_id=m.machine_id, pid_ns=m.pid_ns,
                  pid=pid, pid_start=start)


def remote_holder(host: str = "far-away") -> Holder:
    """A holder on another machine: only its heartbeat can be judged from here."""
    return Holder(host=host, boot_id="boot-of-" + host, machine_id="machine-of-" + host,
                  pid_ns="4026531836", pid=4242, pid_start=1_700_000_000.0)


def post_claim(repo: RepoHandle, n: int, holder: Holder, *, state: State = State.RUNNING,
               exit_code: int | None = None, interval: float = 1, stale_after: float = 4,
               stage: str | None = None, lock: bool = True, token: str | None = None,
               child_pid: int | None = None,
               author_token: str = Emulator.BOT_TOKEN) -> tuple[int, ClaimRecord]:
    """Write a claim record on issue n as ``author_token`` and (``lock``) take the lock."""
    import secrets

    from orion_action.adapters.clock import utc_now_iso
    from orion_action.core.record import render_record

    now = utc_now_iso()
    record = ClaimRecord(
        token=token or secrets.token_hex(12), state=state, holder=holder, started_at=now,
        heartbeat_at=now, interval=interval, stale_after=stale_after, stage=stage,
        child_pid=child_pid, exit_code=exit_code,
        finished_at=now if state in (State.FINISHED, State.INTERRUPTED) else None)
    cid = repo.comment(n, render_record(record), token=author_token)
    if lock:
        repo.add_label(n, "orion-working", *([f"orion-stage-{stage}"] if stage else []))
        with contextlib.suppress(AssertionError):  # it was not queued
            repo.remove_label(n, "orion")
    return cid, record
