"""Helpers for the claim-wrapper tests: the product as a real subprocess, a controllable child,
and readers of what the wrapper left on the issue.

No fixed sleeps: the child waits for a file the test creates, and the tests wait on
conditions (``wait_until``) with timeouts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psutil
from rig import RepoHandle, wait_until

from orion_action.core.record import ClaimRecord, RecordError, State, Tombstone, parse_block

PY = sys.executable
BOT = "orion-bot"
FAST = "heartbeat: {interval: 1, stale_after: 4}\nrun: {kill_grace: 1}\n"  # kill_grace < stale_after / 3
QUEUE, WORKING, READY, FAILED = "orion", "orion-working", "orion-ready", "orion-failed"
NOT_CLAIMED, LOST, USAGE = 75, 76, 64

# The child: records its pid and ORION_* environment, optionally appends to a shared log,
# optionally ignores SIGINT/SIGTERM, then waits for DIR/go (unless told not to) and exits CODE.
CHILD_SOURCE = textwrap.dedent("""
    import json, os, signal, sys, time
    d, code, flags = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    for name in ("INT", "TERM"):
        if "ignore-" + name.lower() in flags:
            signal.signal(getattr(signal, "SIG" + name), signal.SIG_IGN)
    env = {k: v for k, v in os.environ.items() if k.startswith("ORION_")}
    for f in flags:
        if f.startswith("log="):
            with open(f[4:], "a") as out:
                out.write(json.dumps({"pid": os.getpid(), "issue": env.get("ORION_ISSUE")}) + "\\n")
    tmp = os.path.join(d, "pid.tmp")
    with open(tmp, "w") as out:
        json.dump({"pid": os.getpid(), "pgid": os.getpgid(0), "env": env}, out)
    os.replace(tmp, os.path.join(d, "pid"))
    if "hold" in flags:
        while not os.path.exists(os.path.join(d, "go")):
            time.sleep(0.02)
    sys.exit(code)
""")


def fast_config(tmp_path: Path, text: str = FAST, name: str = "orion.yml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


class Child:
    """A child command the test controls: ``cmd`` to give the wrapper, ``started``/``pid`` to
    see it, ``release()`` to let it exit with ``code``."""

    def __init__(self, tmp_path: Path, name: str = "child", code: int = 0, hold: bool = True,
                 ignore: tuple[str, ...] = (), log: Path | None = None):
        self.dir = tmp_path / name
        self.dir.mkdir(parents=True, exist_ok=True)
        script = tmp_path / "orion_test_child.py"
        if not script.exists():
            script.write_text(CHILD_SOURCE)
        flags = (["hold"] if hold else []) + [f"ignore-{s}" for s in ignore]
        if log is not None:
            flags.append(f"log={log}")
        self.cmd = [PY, str(script), str(self.dir), str(code), *flags]

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

    def wait_started(self, timeout: float = 20.0) -> int:
        wait_until(lambda: self.started, timeout, message=f"child {self.dir.name} never started")
        return self.pid

    def release(self) -> None:
        (self.dir / "go").write_text("go")

    def gone(self) -> bool:
        return not pid_alive(self.pid)


def pid_alive(pid: int) -> bool:
    """A live, non-zombie process at pid."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


class Run:
    """``orion-action run`` as a real subprocess (``python -m orion_action``)."""

    def __init__(self, env: dict[str, str], tmp_path: Path, *args: str, cmd: list[str] | None,
                 config: Path | None = None, name: str = "run", extra_env: dict[str, str] | None = None):
        self.out = tmp_path / f"{name}.stdout"
        self.err = tmp_path / f"{name}.stderr"
        argv = [PY, "-m", "orion_action", "run"]
        if config is not None:
            argv += ["--config", str(config)]
        argv += list(args)
        if cmd is not None:
            argv += ["--", *cmd]
        self.argv = argv
        full_env = {**env, **(extra_env or {})}
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(argv, env=full_env, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=err, cwd=tmp_path)
        self.started_at = time.monotonic()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait(self, timeout: float = 60.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"wrapper did not exit within {timeout}s; stderr:\n{self.stderr}") from None

    def signal(self, sig: int) -> None:
        os.kill(self.proc.pid, sig)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    @property
    def stdout(self) -> str:
        return self.out.read_text(errors="replace")


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


def snapshot(repo: RepoHandle, n: int) -> tuple[tuple[str, ...], str, tuple[tuple[int, str], ...]]:
    """Labels, state and comments of an issue, to assert nothing was written."""
    issue = repo.issue(n)
    labels = tuple(sorted(label["name"] for label in issue["labels"]))
    comments = tuple((c["id"], c["body"]) for c in repo.comments(n))
    return labels, issue["state"], comments


def requeue(repo: RepoHandle, n: int) -> None:
    """What a person does to run an issue again: clear the outcome labels, put it in the queue."""
    for name in set(repo.labels(n)) & {READY, FAILED, WORKING}:
        repo.remove_label(n, name)
    repo.add_label(n, QUEUE)


def outputs(path: Path) -> dict[str, str]:
    """A $GITHUB_OUTPUT file as a mapping (simple name=value lines)."""
    found: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            found[key] = value
    return found
