"""The claim wrapper: claim an issue, run the user's command as a child, heartbeat, finish.

Threads and signals are kept simple: signal handlers only record which signal arrived (a
wakeup fd wakes the main loop), the heartbeat thread only edits the record and reports a lost
claim through a flag, and every decision is taken by the main loop.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import select
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from orion_action.adapters import actions
from orion_action.adapters import machine as local
from orion_action.adapters.clock import monotonic, utc_now_iso
from orion_action.adapters.github import GitHubRepo, Issue
from orion_action.config import Config
from orion_action.core.arbitration import lost_reason, ran_meanwhile, settled_claims, winner
from orion_action.core.issue import ClaimEntry, Comment, IssueLog, read_log, trusted_set
from orion_action.core.liveness import Machine
from orion_action.core.record import ActionsRun, ClaimRecord, State, render_record
from orion_action.errors import ExitCode, GitHubError, NotClaimed, NotFound, OrionError
from orion_action.services.observe import judge_entry

Log = Callable[[str], None]
PR_SET_PDEATHSIG = 1
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How long to wait for our own claim comment to show up in the list (GitHub is eventually
# consistent), and how long the interrupt path may spend on its writes.
VISIBILITY_TIMEOUT_S = 20.0
INTERRUPT_WRITE_BUDGET_S = 2.0
# The interrupt's four writes share one deadline: with the kill grace it must fit in the ~10 s
# between a cancelled job's SIGINT and the runner's SIGKILL.
HAND_BACK_DEADLINE_S = 2.5
HAND_BACK_REQUEST_TIMEOUT_S = 2
MAX_NEXT_CANDIDATES = 10


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


@dataclass
class Claim:
    issue: int
    comment_id: int
    record: ClaimRecord
    comments_seen: int


def is_queued(issue: Issue, config: Config) -> bool:
    """Open, carries the queue label, and none of working/ready/failed."""
    lab = config.labels
    return (
        issue.is_open
        and lab.queue in issue.labels
        and not issue.labels & {lab.working, lab.ready, lab.failed}
    )


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
    )


def write_output(env: dict[str, str], name: str, value: object, log: Log | None = None) -> None:
    """Append `name=value` to $GITHUB_OUTPUT when the environment names one: the composite
    action execs the wrapper, so the wrapper itself sets the step's outputs."""
    try:
        actions.set_outputs(env, {name: str(value)})
    except OSError as exc:
        if log is not None:
            log(f"could not write the {name} output to $GITHUB_OUTPUT: {exc.strerror}")


def _child_setup() -> None:  # pragma: no cover - runs in the forked child
    """In the child before exec: its own process group, and die with the wrapper."""
    os.setpgid(0, 0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


@contextlib.contextmanager
def _quiet(beat: Heartbeat | None, timeout: float) -> Iterator[None]:
    """Hold the heartbeat's record lock, if it comes within `timeout`: then no beat in flight
    can overwrite a final record (finished, interrupted) with a running one."""
    locked = beat is not None and beat.record_lock.acquire(timeout=timeout)
    try:
        yield
    finally:
        if locked:
            assert beat is not None
            beat.record_lock.release()


class Heartbeat(threading.Thread):
    """Edits the claim record every interval and checks the fence; never touches the child."""

    def __init__(
        self, gh: GitHubRepo, claim: Claim, config: Config, trusted: frozenset[str], here: Machine, log: Log
    ):
        super().__init__(name="orion-heartbeat", daemon=True)
        self.gh, self.claim, self.config, self.trusted, self.here, self.log = (
            gh,
            claim,
            config,
            trusted,
            here,
            log,
        )
        self.stop = threading.Event()
        gh.abort = self.stop
        self.record_lock = threading.Lock()
        self.last_ok = monotonic()
        self.lost: str | None = None  # set once: why the claim is no longer ours

    def run(self) -> None:
        while not self.stop.wait(self.config.heartbeat_interval):
            try:
                # Count from before the edit was sent: GitHub's updated_at (what a judge ages)
                # is no earlier than that, however slow the answer was.
                sent = monotonic()
                self.beat()
                self.last_ok = sent
            except NotFound:
                self.lost = "the claim comment or the issue was deleted"
            except GitHubError as exc:
                if not self.stop.is_set():
                    self.log(f"heartbeat failed, will retry: {exc}")
            if self.lost:
                return

    def beat(self) -> None:
        c = self.claim
        with self.record_lock:
            if self.stop.is_set():
                return
            c.record = c.record.with_changes(beats=c.record.beats + 1, heartbeat_at=utc_now_iso())
            self.gh.edit_comment(c.comment_id, render_record(c.record))
        issue, _ = self.gh.get_issue(c.issue)
        if (
            not issue.is_open
            or self.config.labels.working not in issue.labels
            or issue.comments != c.comments_seen
        ):
            comments, now = self.gh.list_comments(c.issue)
            log = read_log(comments, self.trusted)
            self.lost = lost_reason(
                log,
                c.record.token,
                is_open=issue.is_open,
                has_lock=self.config.labels.working in issue.labels,
                is_dead=lambda e: judge_entry(e, now, self.config.stale_after, self.here).is_dead,
            )
            c.comments_seen = issue.comments


class Wrapper:
    def __init__(self, gh: GitHubRepo, config: Config, log: Log, env: dict[str, str] | None = None):
        self.gh = gh
        self.config = config
        self.log = log
        self.env = dict(os.environ if env is None else env)
        self.here = local.this_machine()
        self.signal_received: int | None = None  # the first signal: it decides the exit code
        self.signals_seen = 0  # every signal: a second one cuts the kill grace short

    # -- claiming -------------------------------------------------------------------------

    def claim_one(self, request: RunRequest) -> Claim:
        """Claim the requested issue, or with --next the oldest queued one we can win."""
        if request.issue is not None:
            issue, _ = self.gh.get_issue(request.issue)
            return self.claim(issue, request.stage)
        lab = self.config.labels
        queued = [i for i in self.gh.list_issues(lab.queue) if is_queued(i, self.config)]
        if not queued:
            raise NotClaimed(f"the queue is empty: no open issue carries only the {lab.queue!r} label")
        for issue in queued[:MAX_NEXT_CANDIDATES]:
            try:
                return self.claim(issue, request.stage)
            except NotClaimed as exc:
                self.log(f"#{issue.number}: {exc}; trying the next queued issue")
        raise NotClaimed(
            f"none of the {min(len(queued), MAX_NEXT_CANDIDATES)} oldest queued issues could be claimed"
        )

    def _require_queued(self, issue: Issue) -> None:
        if not is_queued(issue, self.config):
            state = "closed" if not issue.is_open else "open"
            shown = ", ".join(sorted(issue.labels)) or "none"
            raise NotClaimed(f"issue #{issue.number} is not queued ({state}; labels: {shown})")

    def claim(self, issue: Issue, stage: str | None) -> Claim:
        lab = self.config.labels
        n = issue.number
        self._require_queued(issue)
        history: list[Comment] = []
        if issue.comments:
            # The claims already over *before* we read the issue as queued are history; any
            # other earlier claim that ran did so after our read (see ran_meanwhile). So read
            # the comments first, then the issue again.
            history, _ = self.gh.list_comments(n)
            issue, _ = self.gh.get_issue(n)
            self._require_queued(issue)
        if self.signal_received is not None:
            raise Interrupted(self.signal_received)
        now_iso = utc_now_iso()
        record = ClaimRecord(
            token=secrets.token_hex(12),
            state=State.CLAIMING,
            holder=local.this_holder(),
            started_at=now_iso,
            heartbeat_at=now_iso,
            interval=self.config.heartbeat_interval,
            stale_after=self.config.stale_after,
            stage=stage,
            actions=actions_run_from_env(self.env),
        )
        posted = self.gh.post_comment(n, render_record(record), marker=record.token)
        self.gh.learn_login(posted.author)
        trusted = trusted_set(posted.author, self.config.trusted_authors)
        settled = settled_claims(read_log(history, trusted))
        self.log(f"#{n}: posted claim {record.token} (comment {posted.id}); taking the lock")
        try:
            self.gh.add_labels(n, [lab.working, *filter(None, [lab.stage(stage)])])
            self.gh.remove_label(n, lab.queue)
            log, comments = self._read_until_visible(n, record.token, trusted)
        except (GitHubError, NotClaimed) as exc:
            # Say on the issue that this claim will never run: a lock left behind by a claim
            # marked lost goes back to the queue at the next reconcile, without waiting for
            # the claim to go stale.
            self._give_up_claim(Claim(n, posted.id, record, 0), f"the claim could not be completed: {exc}")
            raise
        mine = log.find(record.token)
        assert mine is not None
        first = winner(log, lambda e: e.record.token != record.token and self._is_dead(e))
        claim = Claim(n, posted.id, record, comments)
        if first is None or first.record.token != record.token:
            why = (
                f"comment {first.comment_id} claimed it first"
                if first
                else "the claim was released before it started"
            )
            self._give_up_claim(claim, why)
            if first is not None and lab.stage(first.record.stage) != lab.stage(stage):
                self._remove_labels(n, [lab.stage(stage)])  # ours; the winner shows its own
            self._tidy_after_losing(claim, trusted)
            raise NotClaimed(f"issue #{n} lost the race: {why}")
        meanwhile = ran_meanwhile(log, record.token, settled)
        if meanwhile is not None:
            why = (
                f"comment {meanwhile.comment_id} ran the issue while this claim was being "
                f"made (it is {meanwhile.record.state.value})"
            )
            self._give_up_claim(claim, why)
            self._undo_stale_lock(claim, log, meanwhile)
            raise NotClaimed(f"issue #{n} lost the race: {why}")
        claim.record = record.with_changes(attempt=log.attempts_used() + 1)
        return claim

    def _tidy_after_losing(self, claim: Claim, trusted: frozenset[str]) -> None:
        """After marking itself lost, a loser looks once more: if no claim is open any more and
        the newest run is over, the lock on the issue is ours, added after that run ended, and
        nobody else will take it off (the winner is done; the other losers lost to open claims
        too). The last loser to say "lost" always sees this, so one of them cleans up."""
        try:
            comments, _ = self.gh.list_comments(claim.issue)
        except GitHubError:
            return  # the reconciler completes it
        log = read_log(comments, trusted)
        if log.open_claims():
            return
        ended = [c for c in log.claims if c.record.state in (State.FINISHED, State.INTERRUPTED)]
        last = max(ended, key=lambda c: (c.updated_at, c.comment_id), default=None)
        newest_release = max((t.comment_id for t in log.tombstones), default=0)
        if last is not None and last.comment_id > newest_release:
            self._undo_stale_lock(claim, log, last)

    def _undo_stale_lock(self, claim: Claim, log: IssueLog, ended: ClaimEntry) -> None:
        """Our lock and stage labels went onto an issue a run had already taken (and maybe
        finished): take them off again if that run is over and nobody else holds the issue,
        and put the queue label back if that run handed the issue back. Otherwise leave the
        labels to that run or to the reconciler."""
        lab = self.config.labels
        # Only a lower open claim could hold the issue: every higher one lost to ours and,
        # as a loser, touches no label (two late claimers would each leave it to the other).
        mine = log.find(claim.record.token)
        others = [
            c
            for c in log.open_claims()
            if c.record.token != claim.record.token and (mine is None or c.comment_id < mine.comment_id)
        ]
        if ended.record.state not in (State.FINISHED, State.INTERRUPTED) or others:
            return
        try:
            if ended.record.state is State.INTERRUPTED:
                self.gh.add_labels(claim.issue, [lab.queue])
            else:
                # Complete the finished run's move before taking the lock off: once the lock is
                # gone its wrapper, if it has not moved the labels yet, finds the lock removed
                # and leaves them, and no reconcile pass visits an issue without the lock.
                code = ended.record.exit_code
                self.gh.add_labels(claim.issue, [lab.ready if code == 0 else lab.failed])
            # The lock goes last: while it is on, a reconcile pass can finish the job.
            for name in filter(None, [lab.stage(claim.record.stage), lab.working]):
                self.gh.remove_label(claim.issue, name)
        except GitHubError as exc:
            self.log(f"#{claim.issue}: could not take our stale lock off ({exc}); the reconciler will")

    def _remove_labels(self, n: int, names: list[str | None]) -> None:
        """A loser's tidying up: best effort, never an error of its own."""
        try:
            for name in filter(None, names):
                self.gh.remove_label(n, name)
        except GitHubError as exc:
            self.log(f"#{n}: could not remove a label we added ({exc}); it is display only")

    def _is_dead(self, entry: ClaimEntry) -> bool:
        return judge_entry(entry, self._now, self.config.stale_after, self.here).is_dead

    def _read_until_visible(self, n: int, token: str, trusted: frozenset[str]) -> tuple[IssueLog, int]:
        deadline = monotonic() + VISIBILITY_TIMEOUT_S
        pause = 0.2
        while True:
            comments, self._now = self.gh.list_comments(n)
            log = read_log(comments, trusted)
            if log.find(token) is not None:
                return log, len(comments)
            if monotonic() > deadline:
                raise NotClaimed(f"issue #{n}: our claim comment never became visible; not running")
            threading.Event().wait(pause)
            pause = min(pause * 2, 2.0)

    def _give_up_claim(self, claim: Claim, why: str) -> None:
        """A loser marks its own record lost and touches no label: the winner holds them."""
        claim.record = claim.record.with_changes(state=State.LOST, note=why)
        try:
            self.gh.edit_comment(claim.comment_id, render_record(claim.record))
        except GitHubError as exc:
            self.log(f"#{claim.issue}: could not mark our claim lost ({exc}); it is harmless")

    # -- running --------------------------------------------------------------------------

    def run(self, request: RunRequest) -> int:
        # Signals are caught from the start: one that arrives while claiming lets the claim
        # finish and then hands the issue back, instead of leaving a half-made claim behind.
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        previous = {s: signal.signal(s, self._on_signal) for s in HANDLED_SIGNALS}
        previous_chld = signal.signal(signal.SIGCHLD, lambda *_: None)
        previous_fd = signal.set_wakeup_fd(wake_w.fileno(), warn_on_full_buffer=False)
        try:
            return self._run(request, wake_r)
        finally:
            signal.set_wakeup_fd(previous_fd)
            signal.signal(signal.SIGCHLD, previous_chld)
            for s, h in previous.items():
                signal.signal(s, h)
            wake_r.close()
            wake_w.close()

    def _run(self, request: RunRequest, wake_r: socket.socket) -> int:
        claim = self.claim_one(request)
        n = claim.issue
        write_output(self.env, "issue", n, self.log)
        if self.signal_received is not None:
            return self._interrupt(claim, None, self.signal_received, None)
        trusted = trusted_set(self.gh.own_login(), self.config.trusted_authors)
        child_env = {
            **self.env,
            "ORION_ISSUE": str(n),
            "ORION_REPO": self.gh.full_name,
            "ORION_CLAIM_TOKEN": claim.record.token,
            "ORION_STAGE": request.stage or "",
            "ORION_ATTEMPT": str(claim.record.attempt),
        }
        try:
            child = subprocess.Popen(list(request.command), env=child_env, preexec_fn=_child_setup)
        except OSError as exc:
            self.log(f"#{n}: cannot start {request.command[0]!r}: {exc.strerror}")
            return self._finish(claim, trusted, 127, None)
        self.log(
            f"#{n}: won the claim; running {request.command[0]!r} as pid {child.pid} "
            f"(attempt {claim.record.attempt})"
        )
        claim.record = claim.record.with_changes(state=State.RUNNING, child_pid=child.pid)
        beat = Heartbeat(
            self.gh.clone(timeout=self._beat_timeout(), retry_for=self._beat_retry()),
            claim,
            self.config,
            trusted,
            self.here,
            self.log,
        )
        try:
            self.gh.edit_comment(claim.comment_id, render_record(claim.record))
        except GitHubError as exc:
            self.log(f"#{n}: could not mark the claim running yet ({exc}); the heartbeat will")
        beat.start()
        return self._supervise(claim, child, beat, wake_r, trusted)

    def _beat_timeout(self) -> float:
        return max(2.0, min(10.0, self.config.renew_deadline / 4))

    def _beat_retry(self) -> float:
        return max(1.0, min(self.config.heartbeat_interval, self.config.renew_deadline / 3))

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.signals_seen += 1
        if self.signal_received is None:
            self.signal_received = signum

    def _supervise(
        self,
        claim: Claim,
        child: subprocess.Popen[bytes],
        beat: Heartbeat,
        wake: socket.socket,
        trusted: frozenset[str],
    ) -> int:
        """The main loop: the first of child exit, signal, lost claim, or renew deadline wins."""
        while True:
            returncode = child.poll()
            if returncode is not None:
                self._stop_leftovers(child.pid)
                beat.stop.set()
                beat.join(timeout=self._beat_timeout() + 1)
                return self._finish(claim, trusted, exit_status(returncode), beat)
            if self.signal_received is not None:
                beat.stop.set()
                return self._interrupt(claim, child, self.signal_received, beat)
            if beat.lost:
                beat.stop.set()
                return self._fenced(claim, child, beat.lost, beat)
            silent = monotonic() - beat.last_ok
            if silent > self.config.renew_deadline:
                beat.stop.set()
                return self._fenced(
                    claim,
                    child,
                    f"no heartbeat completed for {silent:.0f}s (renew deadline "
                    f"{self.config.renew_deadline:g}s): giving up before anyone presumes us dead",
                    beat,
                )
            select.select([wake], [], [], 0.5)
            with contextlib.suppress(BlockingIOError):
                wake.recv(4096)

    def _stop_child(self, child: subprocess.Popen[bytes], first: int, grace: float) -> None:
        """Signal the child's process group, wait `grace`, then kill what is left of it."""
        pgid = child.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, first)
        deadline = monotonic() + grace
        already = self.signals_seen
        while child.poll() is None and monotonic() < deadline:
            if self.signals_seen != already:
                break  # a second signal: stop waiting
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.1)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        child.wait()

    def _stop_leftovers(self, pgid: int) -> None:
        """The child exited; whatever it left running in its process group goes too, before
        the issue is marked finished (a finished run must not still be working on it)."""
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        if not local.group_alive(pgid):
            return  # only zombies not yet reaped
        self.log(f"the child left processes running in its process group {pgid}; stopping them")
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = monotonic() + self.config.kill_grace
        while local.group_alive(pgid) and monotonic() < deadline:
            threading.Event().wait(0.1)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)

    def _fenced(self, claim: Claim, child: subprocess.Popen[bytes], why: str, beat: Heartbeat) -> int:
        n = claim.issue
        self.log(f"#{n}: the claim is lost: {why}; stopping the child")
        self._stop_child(child, signal.SIGTERM, self.config.kill_grace)
        # Say so on the issue if we still can; a beat in flight must not overwrite it.
        try:
            with _quiet(beat, 1):
                claim.record = claim.record.with_changes(
                    state=State.LOST, note=why, finished_at=utc_now_iso()
                )
                quick = self.gh.clone(timeout=2, retry_for=INTERRUPT_WRITE_BUDGET_S)
                quick.edit_comment(claim.comment_id, render_record(claim.record))
        except GitHubError:
            pass
        self.log(f"#{n}: child stopped; exiting {int(ExitCode.LOST)} without touching labels")
        return int(ExitCode.LOST)

    def _interrupt(
        self, claim: Claim, child: subprocess.Popen[bytes] | None, signum: int, beat: Heartbeat | None
    ) -> int:
        n = claim.issue
        name = signal.Signals(signum).name
        if child is None:
            self.log(f"#{n}: received {name} while claiming; handing the issue back unstarted")
        else:
            self.log(f"#{n}: received {name}; forwarding it to the child and handing the issue back")
            self._stop_child(child, signum, self.config.kill_grace)
        lab = self.config.labels
        quick = self.gh.clone(timeout=HAND_BACK_REQUEST_TIMEOUT_S, retry_for=INTERRUPT_WRITE_BUDGET_S)
        quick.deadline = monotonic() + HAND_BACK_DEADLINE_S
        try:
            with _quiet(beat, 1):
                claim.record = claim.record.with_changes(
                    state=State.INTERRUPTED,
                    finished_at=utc_now_iso(),
                    note=f"stopped by {name}; the issue went back to the queue",
                )
                quick.edit_comment(claim.comment_id, render_record(claim.record))
            quick.add_labels(n, [lab.queue])
            if lab.stage(claim.record.stage):  # before the lock: see _finish
                quick.remove_label(n, lab.stage(claim.record.stage) or "")
            quick.remove_label(n, lab.working)
            self.log(f"#{n}: handed back to the queue")
        except GitHubError as exc:
            self.log(f"#{n}: could not hand the issue back ({exc}); the reconciler will")
        return 128 + signum

    def _finish(self, claim: Claim, trusted: frozenset[str], code: int, beat: Heartbeat | None) -> int:
        """Write `finished` first (the issue's own log), then move the labels."""
        n = claim.issue
        lab = self.config.labels
        try:
            with _quiet(beat, self._beat_timeout() + 1):
                claim.record = claim.record.with_changes(
                    state=State.FINISHED, exit_code=code, finished_at=utc_now_iso()
                )
                self.gh.edit_comment(claim.comment_id, render_record(claim.record))
        except GitHubError as exc:
            self.log(f"#{n}: could not record the finish ({exc}); the reconciler will judge the claim")
            return code
        target = lab.ready if code == 0 else lab.failed
        try:
            issue, now = self.gh.get_issue(n)
            if issue.comments != claim.comments_seen or lab.working not in issue.labels:
                comments, now = self.gh.list_comments(n)
                why = lost_reason(
                    read_log(comments, trusted),
                    claim.record.token,
                    is_open=issue.is_open,
                    has_lock=lab.working in issue.labels,
                    is_dead=lambda e: judge_entry(e, now, self.config.stale_after, self.here).is_dead,
                )
                if why and issue.is_open:
                    self.log(f"#{n}: finished with exit code {code}, but {why}; leaving the labels")
                    return code
            self.gh.add_labels(n, [target])
            # The stage label before the lock: a crash in between must leave the lock on, which
            # brings the reconciler back (it only visits issues carrying the lock).
            stage = lab.stage(claim.record.stage)
            if stage:
                self.gh.remove_label(n, stage)
            self.gh.remove_label(n, lab.working)
        except GitHubError as exc:
            self.log(f"#{n}: finished, but moving the labels failed ({exc}); the reconciler will")
            return code
        self.log(f"#{n}: finished with exit code {code}; {lab.working} -> {target}")
        return code
