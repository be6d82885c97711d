"""The one test harness for the product as real subprocesses against the emulator.

One way to start a product process (:func:`spawn`, or :class:`Orion` for one repository and
configuration), one way to wait for it (:meth:`Proc.wait`, whose default is the rig's
``PATIENCE``) and read its output (``stdout``/``stderr``, kept in files so no pipe can fill up
and block it); a claim wrapper seen through its record (:class:`Wrapper`); a child the test
controls (:class:`Child`); readers of what orion wrote on an issue; hand-made claims.

Nothing here sleeps for a fixed time: everything waits on a condition (``wait_until``).
Every process an :class:`Orion` starts is killed, with its child's process group, by
:meth:`Orion.cleanup` when the test ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from orion_action.core.record import ClaimRecord, Holder, RecordError, State, Tombstone, parse_block

from . import PATIENCE, Proxy, RepoHandle, wait_until
from .emulator import Emulator

PY = sys.executable
ORION = (PY, "-m", "orion_action")
BOT = Emulator.OWNER
# The fast configuration: a holder is presumed dead 4 s after its last beat.
INTERVAL, STALE_AFTER, KILL_GRACE = 1.0, 4.0, 1.0  # kill_grace < stale_after / 3
FAST = (f"heartbeat: {{interval: {INTERVAL:g}, stale_after: {STALE_AFTER:g}}}\n"
        f"run: {{kill_grace: {KILL_GRACE:g}}}\n")
QUEUE, WORKING, READY, FAILED = "orion", "orion-working", "orion-ready", "orion-failed"
NOT_CLAIMED, LOST, USAGE = 75, 76, 64
Wrap = Callable[[Sequence[str]], list[str]]  # e.g. namespaces.other_machine_cmd


def fast_config(tmp_path: Path, text: str = FAST, name: str = "orion.yml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def write_config(directory: Path, *, interval: float = INTERVAL, stale_after: float = STALE_AFTER,
                 kill_grace: float = KILL_GRACE, max_attempts: int = 3, name: str = "orion.yml") -> Path:
    """A fast configuration file (seconds everywhere) in ``directory``, with a retry budget."""
    path = Path(directory) / name
    path.write_text(
        f"heartbeat: {{interval: {interval:g}, stale_after: {stale_after:g}}}\n"
        f"run: {{kill_grace: {kill_grace:g}}}\n"
        f"retry: {{max_attempts: {max_attempts}}}\n", encoding="utf-8")
    return path


# -- processes -----------------------------------------------------------------------------------


def pid_alive(pid: int | None, create_time: float | None = None) -> bool:
    """Whether ``pid`` runs (not a zombie) and, if given, is the process started at create_time."""
    if not pid:
        return False
    try:
        p = psutil.Process(pid)
        if p.status() == psutil.STATUS_ZOMBIE:
            return False
        return create_time is None or abs(p.create_time() - create_time) < 1.0
    except psutil.Error:
        return False


def _start_time(pid: int) -> float:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return 0.0


class Proc:
    """A subprocess with its output in files; ``returncode``, ``stdout`` and ``stderr`` read
    like those of a ``subprocess.CompletedProcess`` once it has been waited for."""

    def __init__(self, argv: Sequence[str], *, env: dict[str, str], cwd: Path, out: Path,
                 err: Path) -> None:
        self.argv, self.out, self.err = list(argv), out, err
        with open(out, "wb") as o, open(err, "wb") as e:
            self.popen = subprocess.Popen(self.argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                          stdout=o, stderr=e)
        self.started_at = time.monotonic()
        self.create_time = _start_time(self.popen.pid)

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float = PATIENCE) -> int:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.argv[:6]}... still running after {timeout}s; "
                                 f"stderr:\n{self.stderr[-3000:]}") from None

    def send_signal(self, sig: int) -> None:
        os.kill(self.popen.pid, sig)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` if it still runs; a SIGKILL is waited for (the process is reaped)."""
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            if sig == signal.SIGKILL:
                self.popen.wait()

    def kill_tree(self) -> None:
        """SIGKILL it and every process under it (e.g. a machine dying: a wrapper started in
        other namespaces, its guardian and its child), if it still runs."""
        if self.popen.poll() is not None:
            return
        with contextlib.suppress(psutil.Error):
            procs = [psutil.Process(self.pid)]
            procs += procs[0].children(recursive=True)
            for p in procs:
                with contextlib.suppress(psutil.Error):
                    p.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)  # after SIGKILL: only reaping, which a test need not wait for

    def exited(self) -> bool:
        return self.poll() is not None

    @property
    def output(self) -> str:
        """Its stdout and stderr."""
        return self.stdout + self.stderr

    @property
    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def json(self) -> Any:
        text = self.stdout
        start = text.find("{")
        assert start >= 0, f"no JSON in stdout:\n{text}\nstderr:\n{self.stderr}"
        return json.loads(text[start:])


def spawn(args: Sequence[str], *, env: dict[str, str], workdir: Path, name: str | None = None,
          prefix: Sequence[str] = (), wrap: Wrap | None = None, cwd: Path | None = None) -> Proc:
    """Start ``python -m orion_action ARGS`` (after ``prefix``, e.g. a faketime wrapper, or as
    ``wrap`` rewrites the whole command, e.g. into another machine's namespaces); its output
    goes to ``workdir/NAME.stdout`` and ``.stderr``. Not waited for."""
    name = name or uuid.uuid4().hex[:8]
    argv = [*prefix, *ORION, *args]
    return Proc(wrap(argv) if wrap else argv, env=env, cwd=cwd or workdir,
                out=workdir / f"{name}.stdout", err=workdir / f"{name}.stderr")


def product(args: Sequence[str], *, env: dict[str, str], workdir: Path, cwd: Path | None = None,
            wrap: Wrap | None = None, timeout: float = PATIENCE) -> Proc:
    """``python -m orion_action ARGS`` run to its end (see :func:`spawn`)."""
    proc = spawn(args, env=env, workdir=workdir, wrap=wrap, cwd=cwd)
    proc.wait(timeout)
    return proc


def assert_clean_stderr(proc: Proc) -> None:
    text = proc.stderr
    assert "Traceback" not in text, f"a traceback in stderr of {proc.argv[3:8]}:\n{text}"


class Run(Proc):
    """``orion-action run [--config C] ARGS [-- CMD]`` in ``tmp_path``, started at once."""

    def __init__(self, env: dict[str, str], tmp_path: Path, *args: str, cmd: list[str] | None,
                 config: Path | None = None, name: str = "run",
                 extra_env: dict[str, str] | None = None):
        argv = ["run", *(["--config", str(config)] if config is not None else []), *args,
                *(["--", *cmd] if cmd is not None else [])]
        super().__init__([*ORION, *argv], env={**env, **(extra_env or {})}, cwd=tmp_path,
                         out=tmp_path / f"{name}.stdout", err=tmp_path / f"{name}.stderr")


# The one child script (tests/rig/child.py): every suite's child command runs it.
CHILD = Path(__file__).resolve().with_name("child.py")


def child_cmd(*, log: Path | None = None, name: str | None = None, pid_file: Path | None = None,
              until: Path | None = None, seconds: float | None = None, exit_code: int = 0,
              ignore: Sequence[str] = (), end_on: Sequence[str] = (),
              steps: Sequence[str] = ()) -> list[str]:
    """The argv of the one child (see tests/rig/child.py for what each option does)."""
    argv = [PY, str(CHILD)]
    for flag, value in (("--log", log), ("--name", name), ("--pid-file", pid_file),
                        ("--until", until), ("--seconds", seconds)):
        if value is not None:
            argv += [flag, str(value)]
    for step in steps:
        argv += ["--step", step]
    argv += ["--exit", str(exit_code)]
    for sig in ignore:
        argv += ["--ignore", sig]
    for sig in end_on:
        argv += ["--end-on", sig]
    return argv


def child_events(log: Path) -> list[dict[str, Any]]:
    """The events the children sharing ``log`` wrote so far (a line still being written is not
    read yet)."""
    if not log.exists():
        return []
    text = log.read_text()
    complete = text[: text.rfind("\n") + 1]
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


def child_starts(log: Path) -> list[dict[str, Any]]:
    """The "start" events in a children's log: one per child that ran."""
    return [e for e in child_events(log) if e["event"] == "start"]


class Child:
    """A child command the test controls: ``cmd`` to give the wrapper, ``started``/``pid`` to
    see it (its pid file, with its ORION_* environment), ``release()`` to let it exit with
    ``code`` (``hold=False``: at once); it ignores the signals named in ``ignore``; with
    ``log`` it appends its start and end to that shared file (:func:`child_events`)."""

    def __init__(self, tmp_path: Path, name: str = "child", code: int = 0, hold: bool = True,
                 ignore: tuple[str, ...] = (), log: Path | None = None):
        self.dir = tmp_path / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.cmd = child_cmd(log=log, pid_file=self.marker, until=self.dir / "go" if hold else None,
                             exit_code=code, ignore=ignore)

    @property
    def marker(self) -> Path:
        return self.dir / "pid"

    @property
    def started(self) -> bool:
        return self.marker.exists()

    def info(self) -> dict[str, Any]:
        return json.loads(self.marker.read_text())

    @property
    def pid(self) -> int:
        return int(self.info()["pid"])

    def wait_started(self, timeout: float = PATIENCE) -> int:
        wait_until(lambda: self.started, timeout, message=f"child {self.dir.name} never started")
        return self.pid

    def release(self) -> None:
        (self.dir / "go").write_text("go")

    def gone(self) -> bool:
        return not pid_alive(self.pid)


# -- what is on the issue ------------------------------------------------------------------------


def claim_comments(repo: RepoHandle, n: int) -> list[dict[str, Any]]:
    """The bot's comments on issue n that carry a claim record, oldest first."""
    return [c for c in repo.comments(n) if c["user"] == BOT and "<!-- orion-claim" in c["body"]]


def records(repo: RepoHandle, n: int) -> list[ClaimRecord]:
    out = []
    for c in claim_comments(repo, n):
        block = parse_block(c["body"])
        assert isinstance(block, ClaimRecord), c["body"]
        out.append(block)
    return out


def only_record(repo: RepoHandle, n: int) -> ClaimRecord:
    found = records(repo, n)
    assert len(found) == 1, found
    return found[0]


def running_record(repo: RepoHandle, n: int) -> ClaimRecord | None:
    """The record saying running with its child's pid: from the first beat, which comes up to
    half a second after the child started (ADR 0059), not the claim's `running`."""
    for r in records(repo, n):
        if r.state is State.RUNNING and r.child_pid is not None:
            return r
    return None


def tombstones(repo: RepoHandle, n: int) -> list[Tombstone]:
    out = []
    for c in repo.comments(n):
        try:
            block = parse_block(c["body"])
        except RecordError:
            continue
        if isinstance(block, Tombstone):
            out.append(block)
    return out


@dataclass(frozen=True)
class Block:
    comment_id: int
    author: str
    body: str
    block: ClaimRecord | Tombstone
    updated_at: str


def blocks(repo: RepoHandle, n: int, author: str = BOT) -> list[Block]:
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


def record_blocks(repo: RepoHandle, n: int) -> list[Block]:
    return [b for b in blocks(repo, n) if isinstance(b.block, ClaimRecord)]


def tombstone_blocks(repo: RepoHandle, n: int) -> list[Block]:
    return [b for b in blocks(repo, n) if isinstance(b.block, Tombstone)]


def labels(repo: RepoHandle, n: int) -> set[str]:
    return set(repo.labels(n))


def snapshot(repo: RepoHandle, n: int) -> tuple[tuple[str, ...], str, tuple[tuple[int, str], ...]]:
    """Labels, state and comments of an issue, to assert nothing was written."""
    issue = repo.issue(n)
    names = tuple(sorted(label["name"] for label in issue["labels"]))
    comments = tuple((c["id"], c["body"]) for c in repo.comments(n))
    return names, issue["state"], comments


def snapshots(repo: RepoHandle, numbers: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """Everything a write could change on these issues: state, labels, every comment."""
    out = {}
    for n in numbers:
        issue = repo.issue(n)
        out[n] = (issue["state"], sorted(label["name"] for label in issue["labels"]),
                  [(c["id"], c["user"], c["body"], c["updated_at"]) for c in repo.comments(n)])
    return out


def requeue(repo: RepoHandle, n: int) -> None:
    """What a person does to run an issue again: clear the outcome labels, put it in the queue."""
    for name in set(repo.labels(n)) & {READY, FAILED, WORKING}:
        repo.remove_label(n, name)
    repo.add_label(n, QUEUE)


def queue_as_a_person(repo: RepoHandle, n: int) -> None:
    """A person with write access (mallory, made a collaborator) puts the queue label on: not
    orion's own login, whose queue label after a cancelled run is a stale requeue (ADR 0105)."""
    repo.api("PUT", f"/collaborators/{Emulator.OUTSIDER}", json={"permission": "write"})
    repo.api("POST", f"/issues/{n}/labels", token=Emulator.OUTSIDER_TOKEN, json={"labels": [QUEUE]})


def queued_issue(repo: RepoHandle, title: str = "work", *extra: str) -> int:
    return repo.create_issue(title, labels=[QUEUE, *extra])


def outputs(path: Path) -> dict[str, str]:
    """A $GITHUB_OUTPUT file as a mapping (simple name=value lines)."""
    found: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            found[key] = value
    return found


# -- the product against one repository ----------------------------------------------------------


class Wrapper:
    """A running `orion-action run` (the claim wrapper) and what it wrote."""

    def __init__(self, proc: Proc, issue: int, repo: RepoHandle):
        self.proc, self.issue, self.repo = proc, issue, repo
        self.record: ClaimRecord | None = None
        self.comment_id: int | None = None
        self.killed_at: float | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def child_pid(self) -> int | None:
        return self.record.child_pid if self.record else None

    def output(self) -> str:
        return self.proc.stdout + self.proc.stderr

    def _mine(self) -> Block | None:
        for b in record_blocks(self.repo, self.issue):
            assert isinstance(b.block, ClaimRecord)
            if b.block.holder.pid == self.pid:
                return b
        return None

    def wait_running(self, timeout: float = PATIENCE) -> ClaimRecord:
        """Until its record says running (with the child's pid) and the lock is on."""
        def ready() -> Block | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"wrapper exited {self.proc.returncode}:\n{self.output()}")
            b = self._mine()
            if b is None or not isinstance(b.block, ClaimRecord):
                return None
            if b.block.state is State.RUNNING and b.block.child_pid and \
                    WORKING in labels(self.repo, self.issue):
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

    def wait_beats(self, beats: int, timeout: float = PATIENCE) -> ClaimRecord:
        return wait_until(lambda: (r := self.current()).beats >= beats and r, timeout, 0.1,
                          lambda: f"no beat {beats}:\n{self.output()}")

    def kill(self, timeout: float = PATIENCE) -> None:
        """SIGKILL the wrapper; its child must die with it (PR_SET_PDEATHSIG)."""
        child = self.child_pid
        self.proc.kill()
        self.killed_at = time.monotonic()
        wait_until(lambda: not pid_alive(child), timeout, 0.02,
                   f"child {child} outlived its SIGKILLed wrapper {self.pid}")

    def wait(self, timeout: float = PATIENCE) -> int:
        return self.proc.wait(timeout)

    def cleanup(self) -> None:
        child = self.child_pid
        self.proc.kill()
        for pgid in (self.proc.pid, child):
            if pgid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGKILL)


class Orion:
    """The product as subprocesses against one repository (through the test's proxy), with one
    configuration; ``cwd`` the directory the processes run in (``workdir`` unless given)."""

    def __init__(self, env: dict[str, str], config: Path, workdir: Path,
                 *, repo: RepoHandle | None = None, proxy: Proxy | None = None,
                 cwd: Path | None = None):
        self.env, self.config, self.workdir = env, config, workdir
        self.repo, self.proxy, self.cwd = repo, proxy, cwd or workdir
        self.procs: list[Proc] = []
        self.wrappers: list[Wrapper] = []

    def with_api(self, api_url: str) -> Orion:
        """The same, through another proxy (e.g. an un-cut one in a partition test)."""
        twin = Orion({**self.env, "GITHUB_API_URL": api_url}, self.config, self.workdir,
                     repo=self.repo, proxy=self.proxy, cwd=self.cwd)
        twin.procs, twin.wrappers = self.procs, self.wrappers  # one list: cleanup sees both
        return twin

    def spawn(self, args: Sequence[str], prefix: Sequence[str] = (), env: dict[str, str] | None = None,
              wrap: Wrap | None = None, name: str | None = None) -> Proc:
        """Start ``orion-action ARGS`` (not waited for): the one way this harness starts one."""
        proc = spawn(args, env={**self.env, **(env or {})}, workdir=self.workdir, name=name,
                     prefix=prefix, wrap=wrap, cwd=self.cwd)
        self.procs.append(proc)
        return proc

    def command(self, name: str, *args: str, prefix: Sequence[str] = (), wrap: Wrap | None = None,
                env: dict[str, str] | None = None, config: Path | None = None,
                timeout: float = PATIENCE) -> Proc:
        """``orion-action NAME --config C ARGS``, waited for."""
        proc = self.spawn([name, "--config", str(config or self.config), *args], prefix, env, wrap)
        proc.wait(timeout)
        return proc

    def reconcile(self, *args: str, prefix: Sequence[str] = (), wrap: Wrap | None = None,
                  env: dict[str, str] | None = None, config: Path | None = None,
                  timeout: float = PATIENCE) -> dict[str, Any]:
        """One `reconcile --json` pass: the JSON plan (the pass must exit 0 with no traceback);
        its stderr under ``_stderr``."""
        proc = self.command("reconcile", "--json", *args, prefix=prefix, wrap=wrap, env=env,
                            config=config, timeout=timeout)
        assert proc.returncode == 0, f"reconcile exited {proc.returncode}:\n{proc.stderr}"
        assert_clean_stderr(proc)
        plan = proc.json()
        plan["_stderr"] = proc.stderr
        return plan

    def action(self, n: int, *args: str, **kw: Any) -> dict[str, Any]:
        """The entry for issue n of one reconcile pass."""
        plan = self.reconcile(*args, **kw)
        found = [a for a in plan["actions"] if a["issue"] == n]
        assert len(found) == 1, plan
        return found[0]

    def status(self, *args: str, prefix: Sequence[str] = (), wrap: Wrap | None = None,
               timeout: float = PATIENCE) -> dict[str, Any]:
        proc = self.command("status", "--json", *args, prefix=prefix, wrap=wrap, timeout=timeout)
        assert proc.returncode == 0, f"status exited {proc.returncode}:\n{proc.stderr}"
        assert_clean_stderr(proc)
        return proc.json()

    def child_argv(self, log: Path, *, until: Path | None = None, seconds: float | None = None,
                   exit_code: int = 0) -> list[str]:
        """The fault suite's child: the one child, logging its own start and end to ``log``
        (a SIGTERM ends it with a logged end), held until ``until`` exists or ``seconds`` (an
        hour unless given) have passed."""
        return child_cmd(log=log, until=until, seconds=3600 if seconds is None else seconds,
                         exit_code=exit_code, end_on=("term",))

    def run(self, issue: int | None = None, *, child: Sequence[str], stage: str | None = None,
            prefix: Sequence[str] = (), env: dict[str, str] | None = None,
            config: Path | None = None, name: str | None = None, wrap: Wrap | None = None) -> Proc:
        """A claim wrapper (`run --issue N`, or `--next` without one) running ``child``; not
        waited for."""
        which = ["--next"] if issue is None else ["--issue", str(issue)]
        stage_args = ["--stage", stage] if stage else []
        return self.spawn(["run", "--config", str(config or self.config), *which, *stage_args,
                           "--", *child], prefix, env, wrap, name=name)

    def product(self, *args: str, env: dict[str, str] | None = None,
                timeout: float = PATIENCE) -> Proc:
        """``orion-action ARGS`` as given (no ``--config`` added), waited for."""
        proc = self.spawn(args, env=env)
        proc.wait(timeout)
        return proc

    def start(self, issue: int, command: Sequence[str] = ("sleep", "600"), *,
              stage: str | None = None, env: dict[str, str] | None = None,
              config: Path | None = None) -> Wrapper:
        """A claim wrapper on ``issue`` running ``command``, seen through its record (not
        waited for)."""
        assert self.repo is not None, "this Orion has no repository"
        proc = self.run(issue, child=command, stage=stage, env=env, config=config,
                        name=f"wrapper-{issue}-{len(self.wrappers)}")
        w = Wrapper(proc, issue, self.repo)
        self.wrappers.append(w)
        return w

    def running(self, issue: int, command: Sequence[str] = ("sleep", "600"), **kw: Any) -> Wrapper:
        """A wrapper that holds ``issue`` and runs ``command``."""
        w = self.start(issue, command, **kw)
        w.wait_running()
        return w

    def cleanup(self, tree: bool = False) -> None:
        """Kill what the test left running: the wrappers with their children's process groups,
        then every other process (their children die with them: PR_SET_PDEATHSIG), with
        everything under it if ``tree``."""
        for w in self.wrappers:
            w.cleanup()
        for proc in self.procs:
            if tree:
                proc.kill_tree()
            else:
                proc.kill()


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
        repo.add_label(n, WORKING, *([f"orion-stage-{stage}"] if stage else []))
        with contextlib.suppress(AssertionError):  # it was not queued
            repo.remove_label(n, QUEUE)
    return cid, record

