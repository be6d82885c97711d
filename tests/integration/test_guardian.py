"""The guardian between the wrapper and the user's command (ADR 0010), with real processes:
a driver process stands in for the wrapper where the test must SIGKILL or SIGSTOP it;
elsewhere the test process itself is the guardian's parent. No fixed sleeps: every wait is
on a condition with a timeout."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import psutil
import pytest
from rig import PATIENCE, wait_until

from orion_action.adapters.clock import boottime
from orion_action.adapters.guardian import CannotStart, Guardian, LeaseExpired

pytestmark = pytest.mark.timeout(120)
PY = sys.executable

# Stands in for the wrapper: starts the guardian, prints "GUARDIAN_PID COMMAND_PID", renews
# the lease every quarter of it until the command ends, then prints "STATUS REASON".
DRIVER = textwrap.dedent("""
    import os, sys
    from orion_action.adapters.clock import boottime
    from orion_action.adapters.guardian import Guardian
    lease, grace, command = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    child = Guardian.start(command, dict(os.environ), lease_deadline=boottime() + lease, kill_grace=grace)
    print(child.guardian_pid, child.pid, flush=True)
    while (status := child.wait(lease / 4)) is None:
        child.renew(boottime() + lease)
    print(status, child.reason, flush=True)
""")

# Leaves the command's process group and session for good: fork, setsid, fork again.
# Leaves its group and session by a double fork, then names its final self in the file given as
# its argument: before that, the process a test would find may be the short-lived middle one.
ESCAPE = textwrap.dedent("""
    import os, sys, time
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    time.sleep(300)
""")

# Ignores SIGTERM, then says so by creating the file named by its argument.
STUBBORN = textwrap.dedent("""
    import signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    open(sys.argv[1], "w").close()
    time.sleep(300)
""")

# Describes itself in a JSON file: its ids and one variable; says hello on stdout.
SELF_REPORT = textwrap.dedent("""
    import json, os, sys
    info = {"pid": os.getpid(), "pgid": os.getpgid(0), "var": os.environ.get("ORION_TEST_VAR")}
    with open(sys.argv[1] + ".tmp", "w") as out:
        json.dump(info, out)
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    print("hello from the command", flush=True)
""")


def alive(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone(pid: int) -> bool:
    """The process `pid` has ended (or was never seen: it may have ended before the lookup)."""
    try:
        return not alive(psutil.Process(pid))
    except psutil.NoSuchProcess:
        return True


def script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def kill_tree(pid: int) -> None:
    try:
        root = psutil.Process(pid)
        family = [p for p in (*root.children(recursive=True), root) if alive(p)]
    except psutil.NoSuchProcess:
        return
    for p in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(family, timeout=PATIENCE)


@pytest.fixture
def start() -> Iterator[Callable[..., Guardian]]:
    """Guardian.start with the test process as the wrapper; everything is killed and reaped
    afterwards, whatever the test left."""
    started: list[Guardian] = []

    def _start(command: Sequence[str], lease: float = 10.0, grace: float = 1.0,
               env: dict[str, str] | None = None) -> Guardian:
        child = Guardian.start(command, env or dict(os.environ), lease_deadline=boottime() + lease,
                               kill_grace=grace)
        started.append(child)
        return child

    yield _start
    for child in started:
        child.close()  # kills whatever still runs
        kill_tree(child.guardian_pid)


@pytest.fixture
def driver(tmp_path: Path) -> Iterator[Callable[..., tuple[subprocess.Popen[str], int, int]]]:
    """A driver process (the wrapper's stand-in) and the pids it reports: guardian, command."""
    path = script(tmp_path, "driver.py", DRIVER)
    drivers: list[subprocess.Popen[str]] = []
    guardians: list[int] = []

    def _driver(command: Sequence[str], lease: float, grace: float) -> tuple[subprocess.Popen[str], int, int]:
        proc = subprocess.Popen([PY, path, str(lease), str(grace), *command], stdout=subprocess.PIPE,
                                text=True)
        drivers.append(proc)
        guardian, pid = map(int, read_line(proc, PATIENCE).split())
        guardians.append(guardian)
        return proc, guardian, pid

    yield _driver
    for proc in drivers:
        proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    for guardian in guardians:
        kill_tree(guardian)


def read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no line from the driver within {timeout}s"
    return proc.stdout.readline().strip()


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def running(procs: list[psutil.Process], *argv: str) -> psutil.Process | None:
    """The live process among `procs` whose command line is `argv`."""
    for p in procs:
        try:
            if p.cmdline() == list(argv) and alive(p):
                return p
        except psutil.Error:
            continue
    return None


# -- the wrapper dies or stalls --------------------------------------------------------------


def test_sigkill_of_the_wrapper_kills_the_command_its_grandchild_and_an_escaped_descendant(
    tmp_path: Path, driver: Callable[..., tuple[subprocess.Popen[str], int, int]]
) -> None:
    escape, named = script(tmp_path, "escape.py", ESCAPE), tmp_path / "escaped.pid"
    proc, guardian, pid = driver(["bash", "-c", f"sleep 300 & {PY} {escape} {named}; wait"],
                                 lease=30, grace=1)

    def family() -> tuple[psutil.Process, psutil.Process, psutil.Process] | None:
        sleeper = running(descendants(guardian), "sleep", "300")
        if not (sleeper and named.exists()):
            return None
        escaped = psutil.Process(int(named.read_text()))
        return (psutil.Process(pid), sleeper, escaped) if escaped.ppid() == guardian else None

    # The escaped process left the group and the session, and reparented to the guardian.
    command, sleeper, escaped = wait_until(family,
                                           message="the command's processes never all ran")
    assert os.getpgid(sleeper.pid) == pid
    assert os.getpgid(escaped.pid) != pid and os.getsid(escaped.pid) != os.getsid(pid)

    proc.kill()
    processes = [command, sleeper, escaped, psutil.Process(guardian)]
    wait_until(lambda: not any(map(alive, processes)),
               message=lambda: f"still alive: {[p.pid for p in processes if alive(p)]}")


def test_sigstop_of_the_wrapper_still_ends_the_command_at_its_lease(
    driver: Callable[..., tuple[subprocess.Popen[str], int, int]]
) -> None:
    proc, guardian, pid = driver(["sleep", "300"], lease=1.0, grace=0.5)
    os.kill(proc.pid, signal.SIGSTOP)
    # Looked up only now: a loaded machine may have kept the driver from renewing in time, and
    # then the command has already ended at its lease, which is what this test waits for.
    try:
        wait_until(lambda: gone(pid), message="the command outlived the lease")
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    # Resumed, the wrapper learns why: it must not go on as if it still held the claim.
    assert read_line(proc, PATIENCE) == "143 lease"
    assert proc.wait(PATIENCE) == 0


def test_lease_expiry_without_renewal_stops_the_command(start: Callable[..., Guardian]) -> None:
    began = boottime()
    child = start(["bash", "-c", "sleep 300 & wait"], lease=0.5, grace=1.0)
    assert child.wait(PATIENCE) == 143
    assert child.reason == "lease"
    assert boottime() - began >= 0.5


def test_lease_expiry_kills_a_command_that_ignores_sigterm_after_the_grace(
    tmp_path: Path, start: Callable[..., Guardian]
) -> None:
    ready = tmp_path / "ready"
    child = start([PY, script(tmp_path, "stubborn.py", STUBBORN), str(ready)], lease=10, grace=0.5)
    wait_until(ready.exists, message="the command never ignored SIGTERM")
    deadline = boottime() + 0.2
    child.renew(deadline)
    assert child.wait(PATIENCE) == 128 + signal.SIGKILL
    assert child.reason == "lease"
    assert boottime() >= deadline + 0.5  # SIGTERM at the deadline, SIGKILL a grace later


def test_renewals_keep_the_command_alive_past_its_first_deadline(start: Callable[..., Guardian]) -> None:
    child = start(["sleep", "300"], lease=1.0, grace=0.5)
    first_deadline = boottime() + 1.0
    while boottime() < first_deadline + 1.0:
        assert child.wait(0.1) is None, f"ended with {child.poll()} ({child.reason}) despite renewals"
        child.renew(boottime() + 1.0)
    assert alive(psutil.Process(child.pid))
    assert child.wait(PATIENCE) == 143 and child.reason == "lease"  # renewals stopped: the lease ends it


@pytest.mark.parametrize("lease", [-1.0, 0.001], ids=["already-passed", "passes-during-start"])
def test_an_expired_lease_never_starts_the_command(
    tmp_path: Path, start: Callable[..., Guardian], lease: float
) -> None:
    marker = tmp_path / "ran"
    command = ["touch", str(marker)]
    with pytest.raises(LeaseExpired):
        start(command, lease=lease)
    assert not marker.exists()
    child = start(command, lease=10)  # the same command under a live lease does run
    assert child.wait(PATIENCE) == 0
    assert marker.exists()


def test_a_killed_guardian_is_noticed_and_the_group_killed_from_the_wrapper(
    start: Callable[..., Guardian]
) -> None:
    child = start(["bash", "-c", "sleep 300 & wait"])
    sleeper = wait_until(lambda: running(descendants(child.guardian_pid), "sleep", "300"))
    os.kill(child.guardian_pid, signal.SIGKILL)
    assert child.wait(PATIENCE) == 128 + signal.SIGKILL
    assert child.reason == "guardian-died"
    wait_until(lambda: not alive(sleeper), message="the group outlived its guardian")


# -- exit status and stop -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "status"),
    [("exit 0", 0), ("exit 3", 3), ("kill -TERM $$", 143), ("exit 127", 127)],
)
def test_the_exit_status_comes_back_exactly(start: Callable[..., Guardian], line: str, status: int) -> None:
    child = start(["bash", "-c", line])
    assert child.wait(PATIENCE) == status
    assert child.reason == "exited"


@pytest.mark.parametrize("kind", ["missing", "not-executable"])
def test_a_command_that_cannot_start_reports_127_and_why(
    tmp_path: Path, start: Callable[..., Guardian], kind: str
) -> None:
    if kind == "missing":
        command, code = [str(tmp_path / "no-such-command")], errno.ENOENT
    else:
        (tmp_path / "plain").write_text("#!/bin/sh\n")
        command, code = [str(tmp_path / "plain")], errno.EACCES
    with pytest.raises(CannotStart) as caught:
        start(command)
    assert caught.value.status == 127
    assert caught.value.errno == code
    assert caught.value.strerror == os.strerror(code)


def test_stop_ends_the_whole_group_within_the_grace(start: Callable[..., Guardian]) -> None:
    child = start(["bash", "-c", "sleep 300 & wait"], grace=1.0)
    sleeper = wait_until(lambda: running(descendants(child.guardian_pid), "sleep", "300"))
    assert child.stop(signal.SIGTERM, 20) == 143  # ended by the signal, not by the grace's SIGKILL
    assert child.reason == "stopped"
    assert not alive(sleeper)


def test_stop_kills_what_ignores_the_first_signal_after_the_grace_or_sooner_when_told(
    tmp_path: Path, start: Callable[..., Guardian]
) -> None:
    stubborn = script(tmp_path, "stubborn.py", STUBBORN)
    ready = tmp_path / "ready"
    child = start([PY, stubborn, str(ready)])
    wait_until(ready.exists)
    began = boottime()
    assert child.stop(signal.SIGTERM, 0.5) == 137
    assert boottime() - began >= 0.5

    ready.unlink()
    child = start([PY, stubborn, str(ready)])
    wait_until(ready.exists)
    began = boottime()
    # A second signal to the wrapper cuts a long grace short: the grace is an hour, so the stop
    # returns within the test's timeout only if it was cut short (no clock bound needed).
    assert child.stop(signal.SIGTERM, 3600, cut_short=lambda: boottime() > began + 0.3) == 137
    assert boottime() - began > 0.3


def test_stop_kills_a_guardian_that_does_not_answer_and_the_group_with_it(
    start: Callable[..., Guardian]
) -> None:
    child = start(["bash", "-c", "sleep 300 & wait"])
    sleeper = wait_until(lambda: running(descendants(child.guardian_pid), "sleep", "300"))
    os.kill(child.guardian_pid, signal.SIGSTOP)
    assert child.stop(signal.SIGTERM, 0.2) == 128 + signal.SIGKILL  # returns: it does not wait on it
    assert child.reason == "guardian-died"
    wait_until(lambda: not alive(sleeper), message="the group outlived its stopped guardian")


def test_leftovers_of_a_finished_command_are_gone_before_its_exit_is_reported(
    tmp_path: Path, start: Callable[..., Guardian]
) -> None:
    pid_file = tmp_path / "sleeper"
    child = start(["bash", "-c", f"sleep 300 & echo $! > {pid_file}; exit 0"])
    assert child.wait(PATIENCE) == 0
    assert child.reason == "exited"
    leftover = int(pid_file.read_text())
    assert not psutil.pid_exists(leftover) or not alive(psutil.Process(leftover))


# -- what the guardian and the command are -------------------------------------------------


def test_the_guardian_outlives_signals_meant_for_the_wrapper(start: Callable[..., Guardian]) -> None:
    child = start(["sleep", "300"])
    # In a group of its own: a terminal's signals to the wrapper's group do not reach it.
    assert os.getpgid(child.guardian_pid) not in (os.getpgid(0), child.pgid)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        os.kill(child.guardian_pid, signum)
        os.killpg(os.getpgid(child.guardian_pid), signum)
    # A guardian that had died of them would report nothing: poll() would say guardian-died.
    assert child.stop(signal.SIGTERM, 1) == 143
    assert child.reason == "stopped"


def test_the_command_runs_in_its_own_group_with_its_environment_and_our_stdout(
    tmp_path: Path, start: Callable[..., Guardian], capfd: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "self.json"
    env = {**os.environ, "ORION_TEST_VAR": "a value\nwith a newline"}
    child = start([PY, script(tmp_path, "report.py", SELF_REPORT), str(out)], env=env)
    assert child.wait(PATIENCE) == 0
    info = json.loads(out.read_text())
    assert info["pid"] == info["pgid"] == child.pid == child.pgid
    assert info["var"] == "a value\nwith a newline"
    assert "hello from the command" in capfd.readouterr().out


def test_the_command_inherits_no_ignored_signal(
    start: Callable[..., Guardian], capfd: pytest.CaptureFixture[str]
) -> None:
    """The guardian ignores SIGINT/TERM/HUP/QUIT/TTOU, and Python ignores SIGPIPE/XFSZ: an
    ignored signal would survive exec, and the command could not be stopped by SIGTERM."""
    capfd.readouterr()
    child = start(["grep", "^SigIgn:", "/proc/self/status"])
    assert child.wait(PATIENCE) == 0
    label, mask = capfd.readouterr().out.split()
    # Only signals a process may set count: glibc reserves 32 and 33 (thread cancellation), and a
    # CI harness may start us with one of those ignored, which nobody can reset.
    settable = sum(1 << (s - 1) for s in signal.valid_signals() if s < 65)
    assert label == "SigIgn:" and int(mask, 16) & settable == 0, mask


def test_startup_is_cheap(start: Callable[..., Guardian]) -> None:
    """A small guardian (memory does not depend on the machine's load). Its start-up time is
    measured, not asserted, in ADR 0010 and bench/test-times.md."""
    child = start(["sleep", "300"])
    with open(f"/proc/{child.guardian_pid}/status") as f:
        rss_kb = int(next(line.split()[1] for line in f if line.startswith("VmRSS:")))
    assert rss_kb < 30_000
    assert child.stop(signal.SIGKILL, 0) == 137


# -- run.user -------------------------------------------------------------------------------


def test_a_command_run_as_another_user_is_still_bound_to_the_guardian() -> None:
    """run.user (ADR 0032): the command has the user's ids, groups and nothing more, and still
    dies with its guardian (a change of ids clears PR_SET_PDEATHSIG: it must be set after)."""
    import pwd
    import tempfile

    if os.geteuid() != 0:
        raise RuntimeError("run.user needs the tests to run as root (as tests/namespaces.py does)")
    nobody = pwd.getpwnam("nobody")
    out = Path(tempfile.mkdtemp(prefix="guardian-user-"))
    out.chmod(0o777)
    probe = (  # PR_GET_PDEATHSIG is 2
        "import ctypes, json, os, sys; v = ctypes.c_int(); "
        "ctypes.CDLL(None).prctl(2, ctypes.byref(v), 0, 0, 0); "
        "json.dump([os.getresuid(), os.getresgid(), os.getgroups(), v.value], open(sys.argv[1], 'w'))"
    )
    try:
        child = Guardian.start(
            ["/usr/bin/python3", "-c", probe, str(out / "ids.json")],
            dict(os.environ),
            lease_deadline=boottime() + 10,
            kill_grace=1,
            user=(nobody.pw_uid, nobody.pw_gid, (nobody.pw_gid,)),
        )
        assert child.wait(PATIENCE) == 0
        child.close()
        uids, gids, groups, pdeathsig = json.loads((out / "ids.json").read_text())
        assert uids == [nobody.pw_uid] * 3 and gids == [nobody.pw_gid] * 3 and groups == [nobody.pw_gid]
        assert pdeathsig == signal.SIGKILL
    finally:
        for path in out.iterdir():
            path.unlink()
        out.rmdir()
