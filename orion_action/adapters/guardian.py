"""The guardian: a small process between the claim wrapper and the user's command, so that
nothing the command starts outlives the wrapper's claim (ADR 0010).

PR_SET_PDEATHSIG reaches only a direct child, and the action runs `bash -c "<run>"`, so work
bash forks used to survive a SIGKILLed wrapper. The guardian is the wrapper's child; it makes
itself a child subreaper (orphans anywhere below it, even ones that setsid() or double-fork
out of the command's process group, reparent to it, not to init) and starts the command in a
session and process group of its own (no controlling terminal; stdin /dev/null in place of a
terminal), with PR_SET_PDEATHSIG(SIGKILL) bound to the guardian. It signals
the group and every descendant, waits the kill grace, SIGKILLs whatever is left, reaps
everything and reports the command's exit status, when

* the command exits and left processes behind (a finished run must not still be working),
* the wrapper asks (`stop`),
* the control pipe from the wrapper reaches EOF: the wrapper is gone, even by SIGKILL,
* the lease passes without a renewal: the wrapper is stopped or hung, and soon someone else
  may presume its claim dead. The command is never started at all if the lease has already
  passed just before exec.

Deadlines are on CLOCK_BOOTTIME, which keeps counting through a system suspend.

Output (when the wrapper asks to `watch` it, for `run.idle_timeout`): the command's stdout and
stderr are pipes the guardian copies, as each chunk arrives and without buffering or loss, to
its own stdout and stderr (the wrapper's), and it reports the time of the last byte, at most
once per OUTPUT_REPORT_S. The copy is drained to EOF before the guardian reports the exit.

Signals: the guardian ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT, and sits in a process group
of its own. A cancelled Actions job sends SIGINT, then SIGTERM, to the wrapper (the action
`exec`s it); a terminal sends them to its foreground group. Those are meant for the wrapper,
which forwards them to the command through `stop`, decides the exit code and hands the issue
back. A guardian that died of them first would leave the command's escaped descendants behind;
one that is only ignoring them still stops everything on EOF if the wrapper dies of them.
SIGTTOU is ignored too, so that a log line written to a terminal from a background group
cannot stop the guardian. The command gets every disposition back to default before exec.
Only SIGKILL ends the guardian itself (SIGSTOP pauses it, and `stop` then kills it): the
wrapper then SIGKILLs the command's group and, being a subreaper too (`adopt_orphans`),
everything that escaped the group, which reparented to it (ADR 0030).

Wire format. Wrapper to guardian (the control pipe): first a line with a length N and N bytes
of a marshalled dict {"command", "env", "deadline", "grace", "watch", "user"} (both ends run
the same interpreter; "user" is None or [uid, gid, groups] for run.user, ADR 0032), then
lines "renew DEADLINE" or "stop SIGNUM GRACE". Guardian to wrapper (the
report pipe): a line "started PID", "cannot-start ERRNO" or "expired", then any number of
"output BOOTTIME" (the command wrote something then), then "exit STATUS WHY".
The command's environment travels over the pipe, never on a command line, and the guardian
starts with an environment that holds no credential (ADR 0031). The guardian runs
with `python -S` and imports little (no json, typing, datetime, psutil): it starts in ~40 ms
with ~11 MB RSS (ADR 0010).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno as errno_codes
import marshal
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence

from orion_action.errors import CANNOT_START_STATUS, CannotStart, LeaseExpired, OrionError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing into the guardian
if TYPE_CHECKING:
    import subprocess

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
IGNORED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGTTOU)
# Python itself ignores these two; the command must not inherit that.
RESET = (*IGNORED, signal.SIGPIPE, signal.SIGXFSZ)
KILL_WAIT_S = 5.0  # how long SIGKILLed processes may take to go (uninterruptible sleep)
STARTUP_TIMEOUT_S = 30.0
ANSWER_S = 3.0  # a guardian silent this long after a stop's grace is killed (stopped, hung)
MAX_SLEEP_S = 60.0  # the guardian wakes at least this often, whatever the deadline
OUTPUT_REPORT_S = 0.25  # a watched command's output time is reported at most this often
LOG_PREFIX = "orion-action guardian: "
# Started like the action starts the wrapper: the package's own directory first on sys.path
# and the working directory left off, so nothing in the caller's checkout shadows a module.
_BOOT = (
    "import sys; sys.path[:] = [sys.argv.pop(1)] + [p for p in sys.path if p]; "
    "from orion_action.adapters.guardian import main; main(sys.argv[1:])"
)
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class GuardianError(OrionError):
    """The guardian could not be started, or stopped answering before the command ran."""


def exit_status(wait_status: int) -> int:
    """The command's code, or 128+signal when a signal killed it (as shells report it)."""
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def boottime() -> float:
    """clock.boottime(), without importing clock.py's datetime into the guardian process."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _require_linux() -> None:
    if not sys.platform.startswith("linux"):
        raise GuardianError(f"the command guardian needs Linux (prctl, /proc); this is {sys.platform}")


# -- the wrapper's side -----------------------------------------------------------------------


class Guardian:
    """The wrapper's handle on a command running under a guardian process.

    `fileno()` becomes readable when the guardian reports (select() on it); `poll()` then
    gives the command's exit status and `reason` why it ended: "exited" (by itself),
    "stopped" (asked to), "lease" (the lease passed), "orphaned" (the control pipe closed),
    or "guardian-died" (the guardian itself was killed: the command's group, and all this
    process adopted, was SIGKILLed from here instead)."""

    adopting = False  # this process is a child subreaper whose every descendant is a run's

    def __init__(self, proc: subprocess.Popen[bytes], control: int, report: int, pid: int, buffer: bytes):
        self._proc = proc
        self._control = control
        self._report = report
        self._buffer = buffer
        self.pid = self.pgid = pid
        self.guardian_pid = proc.pid
        # the wrapper's side only: machine imports psutil, which the guardian process never loads
        from orion_action.adapters.machine import start_ticks

        self.guardian_started = start_ticks(proc.pid)
        self.status: int | None = None
        self.reason: str | None = None
        self.last_output: float | None = None  # boottime of the command's last output (when watched)

    @classmethod
    def start(
        cls,
        command: Sequence[str],
        env: Mapping[str, str],
        *,
        lease_deadline: float,
        kill_grace: float,
        watch_output: bool = False,
        user: tuple[int, int, tuple[int, ...]] | None = None,
    ) -> Guardian:
        """Start a guardian that runs `command` with `env` until `lease_deadline` (on
        clock.boottime()) unless renewed. Raises CannotStart (an OSError, as Popen would) when
        the command cannot be executed, LeaseExpired when the lease passed before exec.
        `watch_output`: pass the command's output through the guardian, which reports when it
        last wrote (`last_output`). `user`: (uid, gid, groups) the command runs as (run.user)."""
        import subprocess  # here: the guardian process itself never needs these

        from orion_action.credentials import without_credentials

        _require_linux()
        control_r, control_w = os.pipe()
        report_r, report_w = os.pipe()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-S", "-c", _BOOT, _ROOT, str(control_r), str(report_w)],
                pass_fds=(control_r, report_w),
                env=without_credentials(os.environ),
            )
        except OSError as exc:
            for fd in (control_r, control_w, report_r, report_w):
                os.close(fd)
            raise GuardianError(f"cannot start the guardian process: {exc}") from exc
        os.close(control_r)
        os.close(report_w)
        spec = {
            "command": list(command),
            "env": dict(env),
            "deadline": lease_deadline,
            "grace": kill_grace,
            "watch": watch_output,
            "user": None if user is None else [user[0], user[1], list(user[2])],
        }
        try:
            payload = marshal.dumps(spec)
            _write_all(control_w, b"%d\n" % len(payload) + payload)
            reply, after = _read_line(report_r, STARTUP_TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            reply, after = f"failed {exc}", b""
        word, _, rest = reply.partition(" ")
        if word == "started":
            os.set_blocking(report_r, False)
            # Never block on a stopped guardian; a line is far below PIPE_BUF, so a write is
            # whole or refused (only once 64 KiB of unread lines have piled up).
            os.set_blocking(control_w, False)
            return cls(proc, control_w, report_r, int(rest), after)
        os.close(control_w)
        os.close(report_r)
        try:
            proc.wait(timeout=KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if word == "cannot-start":
            code = int(rest)
            raise CannotStart(code, os.strerror(code))
        if word == "expired":
            raise LeaseExpired("the lease had passed before the command could start; not started")
        raise GuardianError(f"the guardian failed before starting the command ({reply or 'no answer'})")

    def fileno(self) -> int:
        return self._report

    def poll(self) -> int | None:
        """The command's exit status once everything it started is gone, else None."""
        if self.status is None and self._report >= 0:
            self._read_reports()
        return self.status

    def wait(self, timeout: float | None = None) -> int | None:
        """poll(), waiting up to `timeout` seconds (None: for ever) for the report."""
        deadline = None if timeout is None else boottime() + timeout
        while self.poll() is None and self._report >= 0:
            left = None if deadline is None else deadline - boottime()
            if left is not None and left <= 0:
                return None
            select.select([self._report], [], [], left)
        return self.status

    def renew(self, deadline: float) -> None:
        """Move the lease's deadline (clock.boottime() seconds) to `deadline`."""
        self._send(f"renew {deadline!r}")

    def stop(self, first_signal: int, grace: float, cut_short: Callable[[], bool] | None = None) -> int:
        """`first_signal` to the command's group and every descendant, SIGKILL for what is
        left after `grace` (at once when `cut_short()` turns true: a second signal to the
        wrapper); returns the exit status once nothing is left, at once if it already ended.
        A guardian that does not answer in time is killed, and the group with it."""
        status = self.poll()
        if status is not None:
            return status
        self._send(f"stop {int(first_signal)} {grace!r}")
        give_up = boottime() + grace + ANSWER_S
        while (status := self.wait(0.05)) is None:
            if cut_short is not None and cut_short():
                self._send(f"stop {int(signal.SIGKILL)} 0")
                cut_short = None
            if boottime() > give_up:
                with contextlib.suppress(OSError):
                    os.kill(self.guardian_pid, signal.SIGKILL)  # poll() then sees it gone
                give_up = float("inf")
        return status

    def close(self) -> None:
        """Kill the command if it still runs (and all it started), then let the guardian go."""
        if self.poll() is None and self._report >= 0:
            self.stop(signal.SIGKILL, 0)
        for fd in (self._control, self._report):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._control = self._report = -1
        with contextlib.suppress(Exception):
            self._proc.wait(timeout=KILL_WAIT_S)

    def __enter__(self) -> Guardian:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _send(self, line: str) -> None:
        # A guardian that is gone cannot be told anything; poll() says how it ended.
        with contextlib.suppress(OSError):
            _write_all(self._control, line.encode() + b"\n")

    def _read_reports(self) -> None:
        try:
            data = os.read(self._report, 4096)
        except BlockingIOError:
            data = None
        except OSError:
            data = b""
        if data == b"" and b"\n" not in self._buffer:
            self._guardian_died()
            return
        self._buffer += data or b""
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            word, status, why = (line.decode().split(" ") + ["", ""])[:3]
            if word == "output":
                self.last_output = float(status)
            elif word == "exit":
                self.status, self.reason = int(status), why
                with contextlib.suppress(Exception):
                    self._proc.wait(timeout=KILL_WAIT_S)

    def _guardian_died(self) -> None:
        """No report and no guardian: SIGKILL the command's group from here and, in a process
        that adopts orphans (the wrapper, `adopt_orphans`), everything below it: what left
        the group reparented here when the guardian died (ADR 0030)."""
        with contextlib.suppress(OSError):
            os.killpg(self.pgid, signal.SIGKILL)
        self._proc.wait()
        if Guardian.adopting and self.guardian_started is not None:
            survivors = _kill_descendants(self.guardian_started)
            if survivors:
                _log(f"processes {survivors} survived SIGKILL after the guardian died; leaving them")
        self.status, self.reason = 128 + signal.SIGKILL, "guardian-died"


def adopt_orphans() -> None:
    """Make this process (the wrapper) a child subreaper. While a guardian lives, orphans
    reparent to it, the nearer subreaper; should it be killed, what the command started that
    left its process group reparents here instead of to init, and `Guardian` kills it all.
    Only for a process that starts nothing but guardians: every descendant is then a run's."""
    if sys.platform.startswith("linux"):
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        Guardian.adopting = True


def _kill_descendants(since: int) -> list[int]:
    """SIGKILL and reap what escaped the run (a process that keeps forking is outrun: as a
    subreaper, no child means no descendant); the pids still there after KILL_WAIT_S (stuck in
    uninterruptible sleep). What escaped reparented here when the guardian died, so it is a
    child of ours started after the guardian (`since`, in clock ticks since boot),
    with its own descendants; a child this process started before the guardian (whatever
    else embeds the wrapper, such as a test's emulator) is never touched."""
    give_up = boottime() + KILL_WAIT_S
    while pids := _descendants(os.getpid(), since):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in pids:  # the adopted ones are our children: reap them
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)
        if boottime() > give_up:
            return pids
        select.select([], [], [], 0.01)
    return []


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _read_line(fd: int, timeout: float) -> tuple[str, bytes]:
    """One line from a pipe ("" at EOF), and whatever came after it."""
    deadline = boottime() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - boottime()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no answer within {timeout:g}s")
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    line, _, after = data.partition(b"\n")
    return line.decode(), after


# -- the guardian process ---------------------------------------------------------------------


def _log(message: str) -> None:
    with contextlib.suppress(OSError):
        os.write(2, (LOG_PREFIX + message + "\n").encode())


def _descendants(root: int, since: int | None = None) -> list[int]:
    """Every live process below `root`, from /proc: what psutil's children(recursive=True)
    does, without psutil's import time and RSS (ADR 0010). With `since`, only the subtrees of
    `root`'s children that started after that tick (a tick is 10 ms; what the command starts
    comes tens of milliseconds after the guardian, which first execs python and the command)."""
    try:
        if os.readlink("/proc/self") != str(os.getpid()):
            return []  # the /proc of another PID namespace: its pids are not ours to signal
    except OSError:
        return []
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        state, ppid = fields[:2]
        if state != b"Z" and (since is None or int(ppid) != root or int(fields[19]) > since):
            children.setdefault(int(ppid), []).append(int(name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def drop_privileges(uid: int, gid: int, groups: Sequence[int]) -> None:
    """In a forked child before exec (run.user): become the user for good, saved ids too:
    supplementary groups as initgroups would set them, then the group, then the user."""
    os.setgroups(list(groups))
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise PermissionError(errno_codes.EPERM, "could not drop privileges")


def _spawn(
    command: Sequence[str],
    env: Mapping[str, str],
    deadline: float,
    outputs: Sequence[tuple[int, int]] = (),
    user: Sequence | None = None,
) -> int:
    """Fork and exec the command in a session (and process group) of its own, bound to us by
    PDEATHSIG.
    The lease is checked in the child just before exec. Raises CannotStart or LeaseExpired.
    `outputs`: (write end, fd) pairs the command gets as its stdout and stderr; `user`:
    [uid, gid, groups] the command runs as."""
    result_r, result_w = os.pipe()  # close-on-exec: EOF with no data means exec succeeded
    guardian = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child, until exec
        try:
            os.close(result_r)
            # A session of its own, not only a process group: it has no controlling terminal,
            # so job control can never stop it (SIGTTIN, SIGTTOU) and /dev/tty fails at once;
            # a terminal as stdin is replaced by /dev/null (ADR 0030).
            os.setsid()
            if os.isatty(0):
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.close(null)
            if user is not None:  # first: a change of ids clears PR_SET_PDEATHSIG
                drop_privileges(*user)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != guardian:
                os._exit(CANNOT_START_STATUS)  # the guardian died before the prctl took hold
            for s in RESET:
                signal.signal(s, signal.SIG_DFL)
            for write_end, target in outputs:
                os.dup2(write_end, target)  # dup2 leaves the copy inheritable
            if boottime() >= deadline:
                os.write(result_w, b"expired")
            else:
                os.execvpe(command[0], list(command), dict(env))
        except OSError as exc:
            os.write(result_w, b"%d" % (exc.errno or errno_codes.EINVAL))
        except BaseException:
            os.write(result_w, b"%d" % errno_codes.EINVAL)
        finally:
            os._exit(CANNOT_START_STATUS)
    os.close(result_w)
    with os.fdopen(result_r, "rb") as f:
        result = f.read()
    if not result:
        return pid
    os.waitpid(pid, 0)
    if result == b"expired":
        raise LeaseExpired("the lease had passed")
    raise CannotStart(int(result), os.strerror(int(result)))


def _read_spec(fd: int) -> dict | None:
    """The first message: a line with its length, then the marshalled spec. The wrapper sends
    nothing more before it reads "started"; None if it went away first."""
    data = b""
    while True:
        head, newline, body = data.partition(b"\n")
        if newline and len(body) >= int(head):
            spec: dict = marshal.loads(body)
            return spec
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        data += chunk


class _Process:
    """The guardian's state: one loop, reacting to the control pipe, SIGCHLD and the clock."""

    def __init__(self, control: int, report: int):
        self.control: int | None = control
        self.report = report
        self.buffer = b""
        self.pid = 0
        self.wait_status: int | None = None
        self.outputs: dict[int, int] = {}  # read end of a command's output pipe -> our fd it goes to
        self.last_output: float | None = None
        self.reported_output: float | None = None
        self.next_report = 0.0
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def run(self, spec: dict) -> None:
        self.deadline, grace = float(spec["deadline"]), float(spec["grace"])
        pairs: list[tuple[int, int]] = []
        if spec.get("watch"):
            for target in (1, 2):
                read_end, write_end = os.pipe()
                os.set_blocking(read_end, False)
                self.outputs[read_end] = target
                pairs.append((write_end, target))
        try:
            self.pid = _spawn(spec["command"], spec["env"], self.deadline, pairs, spec.get("user"))
        except CannotStart as exc:
            self.say(f"cannot-start {exc.errno}")
            return
        except LeaseExpired:
            self.say("expired")
            return
        finally:
            for write_end, _ in pairs:
                os.close(write_end)
        self.say(f"started {self.pid}")
        why, first, grace = self.supervise(grace)
        if why == "lease":
            _log(f"the lease passed without a renewal; stopping the command (pid {self.pid})")
        elif why == "orphaned":
            _log(f"the wrapper is gone; stopping the command (pid {self.pid})")
        self.stop_everything(first, grace)
        assert self.wait_status is not None
        self.drain_outputs()
        self.say(f"exit {exit_status(self.wait_status)} {why}")

    def supervise(self, grace: float) -> tuple[str, int, float]:
        """Until the command exits, the wrapper asks, the wrapper goes, or the lease passes:
        why it ends, and the first signal and grace for what is left."""
        while True:
            if self.reap():
                return "exited", signal.SIGTERM, grace
            left = self.deadline - boottime()
            if left <= 0:
                return "lease", signal.SIGTERM, grace
            word, args = self.parse(self.next_message(min(left, MAX_SLEEP_S)))
            if word == "eof":
                return "orphaned", signal.SIGTERM, grace
            if word == "renew":
                self.deadline = float(args[0])
            elif word == "stop":
                return "stopped", int(args[0]), float(args[1])

    def stop_everything(self, first: int, grace: float) -> None:
        """`first` to the group and every descendant; SIGKILL for what is left after `grace`
        (sooner if a second stop says so); then reap it all."""
        if self.reap() and not self.has_children():
            return  # the common end: the command exited and left nothing behind
        if first != signal.SIGKILL:
            if self.wait_status is not None:
                _log(f"the command left processes running; sending them {signal.Signals(first).name}")
            self.signal_all(first)
            kill_at = boottime() + grace
            while self.has_children() and (left := kill_at - boottime()) > 0:
                word, args = self.parse(self.next_message(left, wake_only=self.control is None))
                if word == "stop":
                    if int(args[0]) != signal.SIGKILL:
                        self.signal_all(int(args[0]))
                    kill_at = min(kill_at, boottime() + float(args[1]))
        give_up = boottime() + KILL_WAIT_S
        while self.has_children():
            self.signal_all(signal.SIGKILL)
            if boottime() > give_up:
                _log(f"processes {_descendants(os.getpid())} survived SIGKILL; leaving them")
                break
            self.next_message(0.05, wake_only=True)
        if self.wait_status is None:  # the command is a stuck survivor: report it as killed
            self.wait_status = signal.SIGKILL

    def signal_all(self, signum: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signum)
        for pid in _descendants(os.getpid()):
            # Our own unreaped children keep their pid; another descendant's pid could only
            # be reused if its parent reaped it between the scan and here.
            with contextlib.suppress(OSError):
                os.kill(pid, signum)

    def reap(self) -> bool:
        """Reap every exited child (orphans reparent to us); True once the command exited."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == self.pid:
                self.wait_status = status
        return self.wait_status is not None

    def has_children(self) -> bool:
        """Whether anything is left below us: as a subreaper, no child means no descendant."""
        self.reap()
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return False
        return True

    # -- messages -------------------------------------------------------------------------

    def next_message(self, timeout: float | None, wake_only: bool = False) -> str | None:
        """The next control line; None on timeout, a SIGCHLD or output; "" on EOF (once seen, always)."""
        while True:
            if not wake_only and b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                return line.decode()
            if not wake_only and self.control is None:
                return ""
            fds = [self.wake_r, *self.outputs] + ([] if wake_only or self.control is None else [self.control])
            wait = timeout
            if self.last_output != self.reported_output:  # an output time waits to be reported
                flush_in = max(0.0, self.next_report - boottime())
                wait = flush_in if wait is None else min(wait, flush_in)
            ready = select.select(fds, [], [], wait)[0]
            for fd in ready:
                if fd in self.outputs:  # output ends the wait like a SIGCHLD: callers loop
                    self.copy_output(fd)
            self.report_output()
            if self.wake_r in ready:
                with contextlib.suppress(OSError):
                    os.read(self.wake_r, 4096)
            if self.control is not None and self.control in ready:
                data = os.read(self.control, 65536)
                if data:
                    self.buffer += data
                    continue
                os.close(self.control)
                self.control = None
                continue
            return None

    def copy_output(self, fd: int) -> bool:
        """Copy what the command wrote on `fd` to where it goes; False at EOF (or nothing to read)."""
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            os.close(fd)
            del self.outputs[fd]
            return False
        self.last_output = boottime()
        target = self.outputs[fd]
        while data:
            try:
                data = data[os.write(target, data) :]
            except BlockingIOError:
                select.select([], [target], [], 1.0)
            except OSError:
                break  # our stdout or stderr is gone: nobody can read it any more
        return True

    def report_output(self, force: bool = False) -> None:
        """Tell the wrapper when the command last wrote, at most once per OUTPUT_REPORT_S."""
        if self.last_output is None or self.last_output == self.reported_output:
            return
        now = boottime()
        if force or now >= self.next_report:
            self.say(f"output {self.last_output!r}")
            self.reported_output = self.last_output
            self.next_report = now + OUTPUT_REPORT_S

    def drain_outputs(self) -> None:
        """Copy what is left in the output pipes: everything that wrote to them is gone (or
        survived SIGKILL; then stop at the first empty read)."""
        for fd in list(self.outputs):
            while fd in self.outputs and self.copy_output(fd):
                pass
            if fd in self.outputs:
                os.close(fd)
                del self.outputs[fd]
        self.report_output(force=True)

    @staticmethod
    def parse(line: str | None) -> tuple[str, list[str]]:
        if line is None:
            return "", []
        if line == "":
            return "eof", []
        word, *args = line.split()
        return word, args

    def say(self, line: str) -> None:
        with contextlib.suppress(OSError):  # a wrapper that is gone reads nothing
            _write_all(self.report, line.encode() + b"\n")


def main(argv: Sequence[str]) -> None:
    """The guardian process: `python -c _BOOT ROOT CONTROL_FD REPORT_FD`."""
    for s in IGNORED:
        signal.signal(s, signal.SIG_IGN)
    os.setpgid(0, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    control, report = int(argv[0]), int(argv[1])
    for fd in (control, report):
        os.set_inheritable(fd, False)
    spec = _read_spec(control)
    if spec is None:
        return  # the wrapper went away before saying anything
    guardian = _Process(control, report)
    try:
        guardian.run(spec)
    except BaseException:
        if guardian.pid:  # a bug here must not leave the command unguarded
            guardian.signal_all(signal.SIGKILL)
        raise
