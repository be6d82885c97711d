"""What a killed guardian leaves, and a run started from a terminal (ADR 0030, findings 6 and 10
of the round-3 protocol audit), with real processes. Every wait is on a condition."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import sys
import textwrap
from pathlib import Path

import psutil
import pytest
from rig import wait_until
from rig.harness import Orion, blocks, labels, queued_issue

from orion_action.core.record import ClaimRecord, State

pytestmark = pytest.mark.timeout(90)
PY = sys.executable

# Leaves the command's process group for good, each in its own way, and says where it went:
# a process group of its own, and a double-forked daemon in a session of its own.
ESCAPES = textwrap.dedent("""
    import os, sys, time
    d, kind = sys.argv[1], sys.argv[2]
    if kind == "daemon":
        if os.fork():
            os._exit(0)
        os.setsid()
        if os.fork():
            os._exit(0)
    else:
        os.setpgid(0, 0)
    with open(os.path.join(d, kind + ".tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.replace(os.path.join(d, kind + ".tmp"), os.path.join(d, kind + ".pid"))
    time.sleep(300)
""")


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def escaping_command(tmp_path: Path) -> list[str]:
    script = tmp_path / "escapes.py"
    script.write_text(ESCAPES)
    run = f"{PY} {script} {tmp_path}"
    return ["bash", "-c", f"{run} pgrp & {run} daemon; exec sleep 300"]


def escaped(tmp_path: Path) -> list[int]:
    files = [tmp_path / "pgrp.pid", tmp_path / "daemon.pid"]
    wait_until(lambda: all(f.exists() for f in files), message="the escapes never started")
    return [int(f.read_text()) for f in files]


def guardian_of(wrapper_pid: int) -> psutil.Process:
    def find() -> psutil.Process | None:
        for p in psutil.Process(wrapper_pid).children():
            with contextlib.suppress(psutil.Error):
                if "orion_action.adapters.guardian" in " ".join(p.cmdline()):
                    return p
        return None
    return wait_until(find, message="no guardian under the wrapper")


def test_a_killed_guardians_escaped_descendants_die_and_the_run_is_handed_back(
    orion: Orion, repo, tmp_path: Path  # noqa: F811 - the fixture
) -> None:
    n = queued_issue(repo)
    w = orion.running(n, escaping_command(tmp_path))
    pids = escaped(tmp_path)
    assert all(alive(pid) for pid in pids)

    guardian_of(w.pid).kill()  # the OOM killer's choice, say
    assert w.proc.wait() == 128 + signal.SIGKILL
    assert [pid for pid in pids if alive(pid)] == []  # the wrapper adopted and killed them
    record = blocks(repo, n)[-1].block
    assert isinstance(record, ClaimRecord) and record.state is State.INTERRUPTED, record
    assert "guardian process was killed" in (record.note or "")
    assert labels(repo, n) == {"orion"}  # back in the queue, not orion-failed


# Runs under a pseudo-terminal as its controlling terminal (pty.fork): starts a guardian as
# the wrapper does and prints how the command ended.
TERMINAL_DRIVER = textwrap.dedent("""
    import os, sys
    from orion_action.adapters.clock import boottime
    from orion_action.adapters.guardian import Guardian
    command = ["bash", "-c", "read answer; echo read:$?; (: </dev/tty) 2>/dev/null; echo tty:$?"]
    child = Guardian.start(command, dict(os.environ), lease_deadline=boottime() + 20, kill_grace=1)
    status = child.wait(60)
    print("status", status, child.reason, flush=True)
""")


def test_a_command_started_from_a_terminal_is_never_stopped_by_it(tmp_path: Path) -> None:
    """A run by hand in a terminal: the command gets /dev/null, not the terminal, and no
    controlling terminal at all, so neither a read from stdin nor /dev/tty stops it (SIGTTIN)."""
    script = tmp_path / "driver.py"
    script.write_text(TERMINAL_DRIVER)
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child, until exec
        os.execv(PY, [PY, str(script)])
    out = b""
    try:
        def finished() -> bool:
            nonlocal out
            if select.select([master], [], [], 0.5)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the driver and everything on the terminal are gone
                    return True
                out += chunk
                return not chunk
            return False
        wait_until(finished, message=lambda: f"the driver never ended: {out!r}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(master)
    text = out.decode(errors="replace")
    assert "read:1" in text and "tty:1" in text, text  # EOF on stdin; no terminal to open
    assert "status 0 exited" in text, text


def test_the_sweep_after_a_guardian_death_spares_what_the_process_started_before_it(tmp_path: Path) -> None:
    """The wrapper embedded in another process (a test, or any program calling it) adopts
    orphans too; when a guardian dies, only what escaped that run is killed, never a child the
    process started before the guardian (the regression: a test's emulator was swept)."""
    import subprocess

    from orion_action.adapters.guardian import Guardian, adopt_orphans

    older = subprocess.Popen(["sleep", "300"])
    try:
        adopt_orphans()
        guardian = Guardian.start(escaping_command(tmp_path), dict(os.environ), lease_deadline=1e12,
                                  kill_grace=1)
        pids = escaped(tmp_path)
        os.kill(guardian.guardian_pid, signal.SIGKILL)
        wait_until(lambda: guardian.wait(0.2) is not None, message="the death never noticed")
        assert guardian.reason == "guardian-died"
        assert not any(alive(pid) for pid in pids)
        assert older.poll() is None, "a child started before the guardian was killed"
    finally:
        older.kill()
        older.wait()
