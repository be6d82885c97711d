"""The claim wrapper: the process around one run. It claims (services/claiming.py), starts the
child, beats from a thread and supervises from its main loop (services/holding.py decides what
a beat and an ending write).

Threads and signals are kept simple: signal handlers only record which signal arrived (a wakeup
fd wakes the main loop), the heartbeat thread only beats and reports through the Holding's
flags, and every decision is taken by the main loop. The child runs under a guardian process
that kills it, and everything it started, when the wrapper dies or its lease runs out.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from orion_action.config import Config
from orion_action.core.ending import (
    TIME_LIMIT_EXIT_CODE,
    Outcome,
    cancelled,
    ending_due,
    finished,
    handed_back,
    signalled,
    timed_out,
)
from orion_action.core.record import ActionsRun, clean_progress, mentions_orion, run_url
from orion_action.core.result import RESULT_MAX_BYTES, clean_result, run_summary
from orion_action.credentials import command_env
from orion_action.errors import (
    AuthError,
    CannotStart,
    ExitCode,
    GitHubError,
    LeaseExpired,
    NotClaimed,
    NotFound,
    OrionError,
    UsageError,
)
from orion_action.ports import ChildPort as Child
from orion_action.ports import Clock, GitHubPort, Host, Policy, RunAsPort
from orion_action.services import trigger
from orion_action.services.claiming import Claim, Claimer
from orion_action.services.dispatch import dispatch_issues, trigger_check
from orion_action.services.fleet import claim_next_across
from orion_action.services.holding import Holding, outage_bound

Log = Callable[[str], None]
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# A cancelled Actions job gets SIGINT, SIGTERM 7.5 s later, then SIGKILL: with the kill grace,
# the writes that end the run (run.on_signal) must fit in what is left. They share one deadline.
HAND_BACK_DEADLINE_S = 2.5
HAND_BACK_REQUEST_TIMEOUT_S = 2
# Each try to record an outage (ADR 0019) is one short request; Holding.record_outage backs off.
OUTAGE_REQUEST_TIMEOUT_S = 5
OUTAGE_REQUEST_RETRY_S = 0.5
PROGRESS_TAIL_BYTES = 4096
RESULT_FILE_NAME = "result.md"
# How long an ending waits for a beat in flight to finish its reads (which its own then repeat
# for free, ADR 0044): the time of two reads, not of an outage.
BEAT_SETTLE_S = 1.0
# The first beat (the record with the child's pid, which spends an attempt) waits this long, at
# most a quarter of the lease left, for a command that ends at once: its final record carries
# the pid instead, one edit and two charged reads fewer (issue 19, ADR 0059). Short: a wrapper
# killed before its pid is recorded spends no attempt.
FIRST_BEAT_WAIT_S = 0.5


class Interrupted(OrionError):
    """A signal arrived before anything was written: nothing to hand back."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name} before claiming anything")
        self.exit_code = 128 + signum  # type: ignore[assignment]


@dataclass(frozen=True)
class RunRequest:
    command: Sequence[str]
    issue: int | None = None  # None: --next
    stage: str | None = None
    require: tuple[str, ...] = ()  # --next considers only issues carrying all of these


def exit_status(returncode: int) -> int:
    """The child's code, or 128+signal when a signal killed it (as shells report it)."""
    return 128 - returncode if returncode < 0 else returncode


def actions_run_from_env(env: dict[str, str]) -> ActionsRun | None:
    if env.get("GITHUB_ACTIONS") != "true" or not env.get("GITHUB_RUN_ID", "").isdigit():
        return None
    attempt = env.get("GITHUB_RUN_ATTEMPT", "1")
    return ActionsRun(
        run_id=int(env["GITHUB_RUN_ID"]),
        run_attempt=int(attempt) if attempt.isdigit() else 1,
        runner_name=env.get("RUNNER_NAME", ""),
        url=run_url(env.get("GITHUB_SERVER_URL") or "https://github.com", env.get("GITHUB_REPOSITORY", ""),
                    int(env["GITHUB_RUN_ID"])),
    )


def issue_document(claim: Claim) -> dict[str, object]:
    """What the child gets in $ORION_ISSUE_FILE: the issue as the claim read it, and the
    comments by trusted authors (orion's own records left out). No extra request."""
    issue = claim.issue
    comments = sorted(claim.comments.values(), key=lambda c: c.id)
    return {
        "number": issue.number,
        "title": issue.title,
        "body": issue.body,
        "labels": sorted(issue.labels),
        "comments": [
            {"id": c.id, "author": c.author, "created_at": c.created_at.isoformat(), "body": c.body}
            for c in comments
            if c.author.lower() in claim.trusted and not mentions_orion(c.body)
        ],
    }


def check_command(command: Sequence[str], env: dict[str, str]) -> None:
    """Refuse, before anything is claimed, a command that cannot start (ADR 0042): a typo must
    not claim an issue and burn an attempt. Resolved as the child's exec will be: on the
    environment's PATH, or as given when it names a directory."""
    name = command[0] if command else ""
    found = shutil.which(name, path=env.get("PATH", os.defpath)) if name else None
    if found:
        _check_script(found, command, env.get("PATH", os.defpath))
        return
    raise UsageError(f"cannot start the command: {name!r} {_missing(name)}; nothing was claimed")


def _missing(name: str) -> str:
    if "/" in name and os.path.isfile(name):
        return "is not executable"
    return "does not exist" if "/" in name else "is not found on PATH"


SHELLS = ("bash", "sh", "dash", "zsh")
SYNTAX_CHECK_TIMEOUT_S = 10


def _check_script(shell: str, command: Sequence[str], path: str) -> None:
    """`bash -c SCRIPT` (how the action runs `run:`): a script the shell cannot even parse (an
    unmatched quote, a stray `fi`) is refused too. `-n` reads the script and runs nothing; the
    shell gets only PATH (no credential) and C messages."""
    if os.path.basename(shell) not in SHELLS or len(command) < 3 or command[1] != "-c":
        return
    try:
        checked = subprocess.run([shell, "-n", "-c", command[2]], stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=SYNTAX_CHECK_TIMEOUT_S,
                                 env={"PATH": path, "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired):
        return  # no verdict: the run goes on, and the shell reports at its start
    if checked.returncode != 0:
        first = next((line for line in checked.stderr.splitlines() if line.strip()), "a syntax error")
        raise UsageError(f"cannot start the command: {os.path.basename(shell)} cannot parse the "
                         f"script: {first.strip()[:200]}; nothing was claimed")
    _check_first_command(shell, command[2], path)


# The script's first command, when it is a plain word: a path or a program name, nothing the
# shell would expand (no $, quotes, globs or `=`), on the first line that is not blank or a comment.
_FIRST_WORD = re.compile(r"[ \t]*([A-Za-z0-9_./+][A-Za-z0-9_./+-]{0,4095})(?=[ \t;&|)]|\Z)")


def _check_first_command(shell: str, script: str, path: str) -> None:
    """The action runs `bash -c "<run>"`: a typo in the script's first command (`./no-such.sh`)
    parses, then exits 127 after the claim and burns the issue. The shell itself says whether
    it can run that word (POSIX `command -v`: a builtin, keyword or program it finds), with PATH
    only and the run's working directory. A later command, or a first one built by expansion, is
    not judged: only the first is sure to run as written."""
    line = next((x for x in script.splitlines() if x.strip() and not x.lstrip().startswith("#")), "")
    m = _FIRST_WORD.match(line)
    if not m:
        return
    word = m.group(1)
    try:
        known = subprocess.run([shell, "-c", 'command -v "$1"', "orion-check", word],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=SYNTAX_CHECK_TIMEOUT_S, env={"PATH": path, "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired):
        return  # no verdict: the run goes on, and the shell reports at its start
    if known.returncode != 0 and not known.stdout.strip():
        raise UsageError(f"cannot start the command: {word!r}, the script's first command, "
                         f"{_missing(word)}; nothing was claimed")


def read_result(path: Path) -> str | None:
    """The command's result file, made safe (core/result.py), or None. The command is not
    trusted: a symbolic link is not followed and a FIFO or device is not opened for reading
    (either could hand us another file or block the run's end)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return clean_result(os.read(fd, RESULT_MAX_BYTES + 1))
    except OSError:
        return None
    finally:
        os.close(fd)


def read_progress(path: Path) -> str | None:
    """The last non-empty line the child wrote to its progress file (the tail only)."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - PROGRESS_TAIL_BYTES))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    return clean_progress(text)


class Activity:
    """How long the child has run, and how long since it last showed a sign of life: output
    (as the guardian reports it) or a change to its progress file (a stat per look)."""

    def __init__(self, clock: Clock, progress_file: Path):
        self.clock, self.progress_file = clock, progress_file
        self.started = self.last = clock.monotonic()
        self.seen = self._stamp()

    def _stamp(self) -> tuple[int, int] | None:
        try:
            st = self.progress_file.stat()
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns

    def times(self, last_output: float | None) -> tuple[float, float]:
        """(seconds run, seconds idle) now. `last_output` is on the clock's monotonic scale."""
        now = self.clock.monotonic()
        stamp = self._stamp()
        if stamp != self.seen:
            self.seen, self.last = stamp, now
        if last_output is not None:
            self.last = max(self.last, last_output)
        return now - self.started, now - self.last


class Heartbeat(threading.Thread):
    """Beats now and then every interval its record promises (ADR 0045); never touches the
    child."""

    def __init__(
        self,
        holding: Holding,
        gh: GitHubPort,
        log: Log,
        progress_file: Path,
        on_beat: Callable[[], None],
        limits: Policy,
    ):
        """`gh`: this thread's own client (a clone: a `bounded` block bounds its client, and the
        ending's must not bound the beats); `limits`: each beat request's timeout and retry
        budget, short enough that a beat gives up before the lease does."""
        super().__init__(name="orion-heartbeat", daemon=True)
        self.holding, self.gh, self.log = holding, gh, log
        self.progress_file, self.on_beat, self.limits = progress_file, on_beat, limits
        self.stop = threading.Event()
        self.fatal: str | None = None  # the token was rejected: no beat can ever succeed again

    def run(self) -> None:
        # A stopped heartbeat retries nothing more.
        with self.gh.bounded(replace(self.limits, abort=self.stop)):
            self._beat_until_stopped()

    def _beat_until_stopped(self) -> None:
        h = self.holding
        if self.stop.wait(min(FIRST_BEAT_WAIT_S, max(0.0, h.lease_left() / 4))):
            return  # the run ended first: its ending writes the record, pid included
        while not self.stop.is_set():
            h.progress = read_progress(self.progress_file) or h.progress
            try:
                h.beat(self.gh)
                self.on_beat()
            except AuthError as exc:
                self.fatal = f"{exc}: the token expired or was revoked (see README, Tokens)"
                return
            except NotFound:
                h.lost = h.lost or "the claim comment or the issue was deleted"
            except GitHubError as exc:
                if not self.stop.is_set():
                    self.log(f"heartbeat failed, will retry: {exc}")
            if h.lost:
                return
            if self.stop.wait(h.beat_interval()):
                return


class Wrapper:
    """The process around each run, over one repository or several (a single repository is a
    fleet of one): once a claim is won, `self.gh` is its repository's client, so the holder,
    the heartbeat, ORION_REPO and the immediate pickup all act on the issue's own repository."""

    def __init__(
        self,
        repos: Sequence[GitHubPort],
        config: Config,
        log: Log,
        env: dict[str, str],
        host: Host,
    ):
        """`env`: the environment the command's own is made from (credentials.command_env)
        and the Actions run is read from; `host`: this runner's clock, machine, launcher and
        Actions files. The wrapper sets the step's outputs itself: the composite action execs it."""
        self.repos = list(repos)
        self.gh = self.repos[0]
        self.config = config
        self.log = log
        self.env = dict(env)
        self.host = host
        self.clock: Clock = host.clock
        self.runner = host.runner
        # run.user is checked before anything is claimed (UsageError: exit 64).
        self.run_as: RunAsPort | None = (
            host.launcher.resolve_run_as(config.run_user, os.getcwd()) if config.run_user else None
        )
        self.here = host.machine.this_machine()
        self.signal_received: int | None = None  # the first signal: it decides the exit code
        self.signals_seen = 0  # every signal: a second one cuts the kill grace short
        self.draining = False  # run --drain: the loop goes on after a requeue
        self.actor: str | None = None  # --actor: who the action believes queued the issue
        self.result_file: Path | None = None  # this run's $ORION_RESULT_FILE, once the child has one
        self.run_started = 0.0  # clock.monotonic() when this run's claim was won

    # -- the process around the run -------------------------------------------------------

    def run(self, request: RunRequest) -> int:
        check_command(request.command, self.env)
        return self._with_signals(lambda wake: self._run(request, wake))

    def drain(self, request: RunRequest, max_runs: int | None = None) -> int:
        """`run --next --drain`: claim and run queued issues one after another until the queue
        is empty (or `max_runs` runs), so one worker job works down a backlog. Exits 0 when
        every run succeeded or there was nothing to run, else with the first failing run's
        code; a signal stops the drain once the current run has ended (run.on_signal)."""
        check_command(request.command, self.env)
        return self._with_signals(lambda wake: self._drain(request, max_runs, wake))

    def _drain(self, request: RunRequest, max_runs: int | None, wake: socket.socket) -> int:
        self.draining = True
        first_failure, runs = 0, 0
        while max_runs is None or runs < max_runs:
            try:
                code = self._run(request, wake)
            except NotClaimed as exc:
                self.log(f"drain: {exc}; stopping after {runs} run(s)")
                break
            except Interrupted as exc:
                self.log(f"drain: {exc}")
                return first_failure or int(exc.exit_code)
            runs += 1
            first_failure = first_failure or code
            if self.signal_received is not None:
                self.log(f"drain: stopped by {signal.Signals(self.signal_received).name} after {runs} run(s)")
                break
            if code == int(ExitCode.USAGE):
                self.log(f"drain: stopping after {runs} run(s): the last one exited {code}")
                break
        return first_failure

    def _with_signals(self, body: Callable[[socket.socket], int]) -> int:
        # Signals are caught from the start: one that arrives while claiming lets the claim
        # finish and then ends the run (run.on_signal), instead of leaving a half-made claim behind.
        # What escapes a killed guardian comes here, to be killed (ADR 0030).
        self.host.launcher.adopt_orphans()
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        previous = {s: signal.signal(s, self._on_signal) for s in HANDLED_SIGNALS}
        previous_chld = signal.signal(signal.SIGCHLD, lambda *_: None)
        previous_fd = signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
        try:
            return body(wake_r)
        finally:
            signal.set_wakeup_fd(previous_fd)
            signal.signal(signal.SIGCHLD, previous_chld)
            for s, h in previous.items():
                signal.signal(s, h)
            wake_r.close()
            wake_w.close()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.signals_seen += 1
        if self.signal_received is None:
            self.signal_received = signum

    def _check_signal(self) -> None:
        if self.signal_received is not None:
            raise Interrupted(self.signal_received)

    def _dispatch(self, gh: GitHubPort, n: int) -> None:
        """Immediate pickup of the issue just handed back, if it still passes the trigger check."""
        dispatch_issues(gh, self.config, [n], self.log, trigger_check(gh, self.config, self.log), self.runner)

    def claimer(self, gh: GitHubPort) -> Claimer:
        claimer = Claimer(
            gh,
            self.config,
            self.log,
            self.clock,
            self.here,
            self.host.machine.this_holder(),
            actions_run_from_env(self.env),
            self._check_signal,
            sight=self.host.machine.sight,
        )
        # Every claim, on every path, passes the trigger check first (docs/adr/0033).
        claimer.approval = lambda gh, issue, history: trigger.approve(
            gh, self.config, issue.number, issue.read_at, self.actor, self.log, gh.own_login, history
        )
        if self.config.trigger_permission != "none":  # its one read brings the issue (ADR 0063)
            labels = self.config.labels
            claimer.read_queued = lambda gh, n: gh.queue_history(n, labels.queue, labels.cancel)
        return claimer

    def _claim(self, request: RunRequest) -> Claim:
        """Claim the issue `request` names, or the next queued one in any of the repositories;
        `self.gh` becomes the client of the repository the claim is in."""
        if request.issue is not None:
            if len(self.repos) > 1:  # pragma: no cover - cli refuses it
                raise NotClaimed("run --issue N takes one --repo")
            return self.claimer(self.gh).claim_number(request.issue, request.stage)
        if len(self.repos) == 1:
            return self.claimer(self.gh).claim_next(request.stage, request.require)
        claimers = [self.claimer(gh) for gh in self.repos]
        won, claim = claim_next_across(claimers, request.stage, request.require, self.log)
        self.gh = won.gh
        return claim

    def _run(self, request: RunRequest, wake: socket.socket) -> int:
        claim = self._claim(request)
        n = claim.number
        self.result_file, self.run_started = None, self.clock.monotonic()
        self.runner.set_outputs({"issue": str(n)})
        self.runner.set_outputs({"repo": self.gh.full_name})  # several repos: the claim's own
        holding = Holding(self.gh, claim, self.config, self.log, self.clock, self.here,
                          self.host.machine.sight)
        if self.signal_received is not None:
            return self._end_on_signal(holding, None, self.signal_received)
        workdir = Path(tempfile.mkdtemp(prefix=f"orion-{n}-"))
        if self.run_as is not None:  # the user may enter, not add or replace files (ours stay ours)
            workdir.chmod(0o711)
        try:
            # The command's output, folded in the job's log under one line (issue 18, "Visible").
            with self.runner.group(f"orion-action: #{n} {claim.issue.title[:100]}"):
                return self._run_child(request, holding, wake, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _run_child(self, request: RunRequest, holding: Holding, wake: socket.socket, workdir: Path) -> int:
        claim = holding.claim
        n = claim.number
        issue_file = workdir / "issue.json"
        issue_file.write_text(json.dumps(issue_document(claim), indent=1), encoding="utf-8")
        progress_file = workdir / "progress"
        progress_file.touch()
        self.result_file = workdir / RESULT_FILE_NAME
        self.result_file.touch()  # there to write, also for run.user in a directory it cannot write
        if self.run_as is not None:
            self.run_as.give(str(issue_file))
            self.run_as.give(str(progress_file))
            self.run_as.give(str(self.result_file))
        # No credential unless run.pass_token (ADR 0031): the command is not trusted.
        child_env = {
            **command_env(self.env, self.config.pass_token),
            "ORION_ISSUE": str(n),
            "ORION_REPO": self.gh.full_name,
            "ORION_CLAIM_TOKEN": claim.record.token,
            "ORION_STAGE": request.stage or "",
            "ORION_ATTEMPT": str(claim.record.attempt),
            "ORION_ISSUE_FILE": str(issue_file),
            "ORION_PROGRESS_FILE": str(progress_file),
            "ORION_RESULT_FILE": str(self.result_file),
        }
        try:
            child = self.host.launcher.start_child(
                list(request.command),
                child_env,
                holding.lease_until,
                self.config.kill_grace,
                watch_output=self.config.idle_timeout > 0,
                run_as=self.run_as,
            )
        except CannotStart as exc:
            self.log(f"#{n}: cannot start {request.command[0]!r}: {exc.strerror}")
            return self._conclude(holding, finished(self.config, exc.status), exc.status)
        except LeaseExpired:
            why = f"the renew deadline ({self.config.renew_deadline:g}s) passed before the command started"
            with holding.gh.bounded(self._hurried()):
                holding.give_up(why, holding.released)
            self.log(f"#{n}: {why}; exiting {int(ExitCode.LOST)} without touching labels")
            return int(ExitCode.LOST)
        holding.child_pid = child.pid
        self.log(
            f"#{n}: won the claim; running {request.command[0]!r} as pid {child.pid} "
            f"(attempt {claim.record.attempt})"
        )
        beat = Heartbeat(
            holding,
            self.gh.clone(),
            self.log,
            progress_file,
            lambda: child.renew(holding.lease_until),
            Policy(self.clock, timeout=self._beat_timeout(), retry_for=self._beat_retry()),
        )
        beat.start()
        try:
            return self._supervise(holding, child, beat, wake, Activity(self.clock, progress_file))
        finally:
            beat.stop.set()
            child.close()

    def _beat_timeout(self) -> float:
        return max(2.0, min(10.0, self.config.renew_deadline / 4))

    def _beat_retry(self) -> float:
        return max(1.0, min(self.config.heartbeat_interval, self.config.renew_deadline / 3))

    def _supervise(
        self, holding: Holding, child: Child, beat: Heartbeat, wake: socket.socket, activity: Activity
    ) -> int:
        """The main loop: waits until `ending_due` names a way the run ends, then takes it."""
        while True:
            returncode = child.poll()
            if returncode is not None and child.reason == "lease":
                beat.stop.set()
                why = (
                    f"no heartbeat completed within the renew deadline ({self.config.renew_deadline:g}s): "
                    "the guardian stopped the child when its lease ran out"
                )
                return self._lease_out(holding, child, why, wake)
            if returncode is not None and child.reason == "guardian-died":
                beat.stop.set()
                return self._guardian_died(holding, exit_status(returncode))
            ran_s, idle_s = activity.times(child.last_output)
            due = ending_due(holding, returncode, self.signal_received, beat.fatal, ran_s, idle_s)
            if due is None:
                pause = min(0.5, max(0.05, holding.lease_left()))
                select.select([wake.fileno(), child.fileno()], [], [], pause)
                with contextlib.suppress(BlockingIOError):
                    wake.recv(4096)
                continue
            beat.stop.set()
            if returncode is not None:  # "exited": whatever it left running goes too
                # A beat in flight finishes its reads first (a moment, bounded): the ending's
                # own reads of the same issue and listing are then free 304s (issue 19).
                beat.join(min(BEAT_SETTLE_S, max(0.0, holding.lease_left() / 4)))
                child.stop(signal.SIGTERM, self.config.kill_grace, self._second_signal())
                code = exit_status(returncode)
                return self._conclude(holding, finished(self.config, code), code)
            if self.signal_received is not None:
                return self._end_on_signal(holding, child, self.signal_received)
            if beat.fatal is not None:
                self._stop(child, f"{beat.fatal}; stopping the child")
                self.log(f"#{holding.number}: exiting {int(ExitCode.USAGE)}; the claim goes stale")
                return int(ExitCode.USAGE)
            if holding.lost is not None:
                return self._fenced(holding, child, holding.lost)
            if holding.cancel_requested:
                self._stop(child, f"the {self.config.labels.cancel} label was added; stopping the child")
                return self._conclude(holding, cancelled(self.config, None), int(ExitCode.LOST))
            if due in ("timeout", "idle"):
                return self._time_limit(holding, child, due, ran_s, idle_s)
            why = (
                f"no heartbeat completed within the renew deadline ({self.config.renew_deadline:g}s): "
                f"giving up before anyone presumes us dead"
            )
            return self._lease_out(holding, child, why, wake)

    def _time_limit(self, holding: Holding, child: Child, due: str, ran_s: float, idle_s: float) -> int:
        """run.timeout or run.idle_timeout: stop the child, spend the attempt, exit 124."""
        if due == "timeout":
            why = f"run.timeout: the command ran {ran_s:.0f}s (limit {self.config.timeout:g}s)"
        else:
            why = (
                f"run.idle_timeout: the command wrote no output and no progress line for {idle_s:.0f}s "
                f"(limit {self.config.idle_timeout:g}s)"
            )
        self._stop(child, f"#{holding.number}: {why}; stopping the child")
        outcome = timed_out(self.config, holding.claim.record.attempt, why)
        return self._conclude(holding, outcome, TIME_LIMIT_EXIT_CODE)

    def _guardian_died(self, holding: Holding, code: int) -> int:
        """The guardian was killed (the OOM killer, kill -9): the command did not finish, so
        the run is not `finished` but interrupted and handed back (ADR 0030); everything it
        started was killed from here (the wrapper adopts what escaped the group)."""
        why = "the command's guardian process was killed; the command and all it started were stopped"
        self.log(f"#{holding.number}: {why}")
        outcome = handed_back(self.config, holding.claim.record.attempt, why, code)
        return self._conclude(holding, outcome, code)

    def _second_signal(self) -> Callable[[], bool]:
        already = self.signals_seen
        return lambda: self.signals_seen != already

    def _stop(self, child: Child, why: str, first: int = signal.SIGTERM) -> None:
        self.log(why)
        child.stop(first, self.config.kill_grace, self._second_signal())

    def _fenced(self, holding: Holding, child: Child, why: str) -> int:
        n = holding.number
        self._stop(child, f"#{n}: the claim is lost: {why}; stopping the child")
        with holding.gh.bounded(self._hurried()):
            holding.give_up(why, holding.released)
        self.log(f"#{n}: child stopped; exiting {int(ExitCode.LOST)} without touching labels")
        return int(ExitCode.LOST)

    def _lease_out(self, holding: Holding, child: Child, why: str, wake: socket.socket) -> int:
        """The lease ran out. When GitHub is to blame (its beats went unanswered), the run must
        not spend an attempt (ADR 0019): stop the child, then keep trying, bounded, to record
        the outage and hand the issue back. Either way the exit code is LOST (76)."""
        cause = holding.outage()
        if cause is None:
            return self._fenced(holding, child, why)
        n = holding.number
        self._stop(child, f"#{n}: the claim is lost: {why}; {cause}; stopping the child")
        bound = outage_bound(self.config, holding.promise.stale_after)
        self.log(
            f"#{n}: child stopped; recording the outage so that it spends no attempt (for up to {bound:g}s)"
        )
        seen = self.signals_seen

        def pause(seconds: float) -> bool:
            """Wait, woken early by a signal; True when one arrived since the outage began."""
            if self.signals_seen == seen:
                select.select([wake.fileno()], [], [], seconds)
                with contextlib.suppress(BlockingIOError):
                    wake.recv(4096)
            return self.signals_seen != seen

        with holding.gh.bounded(Policy(self.clock, timeout=OUTAGE_REQUEST_TIMEOUT_S,
                                       retry_for=OUTAGE_REQUEST_RETRY_S)):
            recorded = holding.record_outage(why, bound, pause)
            if holding.requeued and not (self.draining and self.signal_received is None):
                self._dispatch(holding.gh, n)
        self.log(f"#{n}: exiting {int(ExitCode.LOST)}" + ("" if recorded else "; the claim goes stale"))
        return int(ExitCode.LOST)

    def _end_on_signal(self, holding: Holding, child: Child | None, signum: int) -> int:
        """A signal (a cancelled Actions job): stop the child, then end the run as run.on_signal
        says, within what is left of the runner's ~10 s; the exit code is 128+signal."""
        n = holding.number
        name = signal.Signals(signum).name
        then = self._on_signal_does()
        if child is None:
            self.log(f"#{n}: received {name} while claiming; ending the run unstarted ({then})")
        else:
            self._stop(child, f"#{n}: received {name}; forwarding it to the child, then {then}", signum)
        outcome = signalled(self.config, holding.claim.record.attempt, name, started=child is not None)
        with holding.gh.bounded(self._hurried(self.clock.monotonic() + HAND_BACK_DEADLINE_S)):
            self._conclude(holding, outcome, 128 + signum)
        return 128 + signum

    def _hurried(self, deadline: float | None = None) -> Policy:
        """The bounds of an ending made in a hurry (the claim is lost, or the job is being
        cancelled): short requests, and a short retry budget for each."""
        return Policy(self.clock, deadline, timeout=HAND_BACK_REQUEST_TIMEOUT_S,
                      retry_for=HAND_BACK_DEADLINE_S)

    def _on_signal_does(self) -> str:
        if self.config.on_signal == "requeue":
            return "handing the issue back (run.on_signal: requeue)"
        return "recording the run as cancelled (run.on_signal: cancel)"

    def _conclude(self, holding: Holding, outcome: Outcome, code: int) -> int:
        """End the run on the issue: the final record and the label move, if still ours."""
        n = holding.number
        holding.result = read_result(self.result_file) if self.result_file else None
        try:
            why = holding.conclude(outcome)
        except GitHubError as exc:
            self.log(f"#{n}: could not record the end of the run ({exc}); a reconcile pass will")
            self._summarise(holding, outcome, f"not recorded on the issue: {exc}")
            return code
        self._summarise(holding, outcome, why)
        if why is not None:
            self.log(f"#{n}: the run ended ({outcome.state.value}), but {why}; leaving the labels")
        else:
            self.log(f"#{n}: {outcome.state.value}" + (f" -> {outcome.add}" if outcome.add else ""))
            # Immediate pickup: a requeued issue gets a worker run now, unless this drain
            # (which goes on) picks it up itself.
            drain_goes_on = self.draining and self.signal_received is None
            if outcome.add == self.config.labels.queue and not drain_goes_on:
                self._dispatch(holding.gh, n)
        return code

    def _summarise(self, holding: Holding, outcome: Outcome, unmoved: str | None) -> None:
        """The run's job summary ($GITHUB_STEP_SUMMARY, when the runner gives one; ADR 0042),
        also when GitHub did not take the ending (`unmoved` says why; the labels stayed)."""
        if not self.runner.has_summary():
            return
        what = outcome.state.value
        if outcome.exit_code is not None:
            what += f", exit code {outcome.exit_code}"
        if unmoved is not None:
            what += f"; the labels were left: {unmoved}"
        elif outcome.add:
            what += f"; labelled {outcome.add}"
        text = run_summary(
            self.gh.full_name,
            holding.number,
            holding.claim.issue.title,
            what,
            holding.claim.record.attempt,
            self.clock.monotonic() - self.run_started,
            holding.result,
            self.runner.server_url,
        )
        try:
            self.runner.add_summary(text)
        except OSError as exc:
            self.log(f"#{holding.number}: could not write the job summary: {exc.strerror}")
