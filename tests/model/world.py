"""The protocol's world for the model checker: the real services over the in-memory GitHub.

Claimers (services/claiming.py), heartbeats and endings (services/holding.py) and reconcile
passes (services/reconcile.py) run as actors of the cooperative scheduler, one GitHub call at
a time, in whatever order a driver chooses. Around them the world simulates what is not
GitHub: machines with process tables and boot ids, the guardian that kills a child when its
wrapper dies or its lease runs out, the wrapper's main loop (which reacts through
`ending_due`, as services/wrapper.py does), crashes, signals, reboots, a person, and time.

After every action `check()` asserts the invariants; `quiesce()` ends an episode (every
process dies, time passes, reconcile passes run) and `check_settled()` asserts what must hold
then. A driver is tests/model/test_protocol_model.py (Hypothesis) or tests/model/simulate.py
(a seeded random explorer for long runs).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from fakes.memory_github import BOT, PERSON, MemoryServer

from model.scheduler import SLEEP, START, Crashed, Scheduler, StepResult
from orion_action.adapters.clock import Clock
from orion_action.config import Config
from orion_action.core.arbitration import ran
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Machine, ProcessSighting
from orion_action.core.record import Holder, ReleaseAction, State
from orion_action.errors import GitHubError, NotFound, OrionError
from orion_action.services.claiming import Claim, Claimer
from orion_action.services.holding import (
    Holding,
    cancelled,
    ending_due,
    finished,
    handed_back,
    outage_bound,
)
from orion_action.services.reconcile import Reconciler

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, kill_grace=1.0, source="model")
LAB = CONFIG.labels
ISSUE = 1
MACHINES = ("m1", "m2")  # workers run here; reconcilers on these or on a hosted runner
HOSTED = "hosted"
TRUSTED = trusted_set(BOT, ())


class InvariantError(AssertionError):
    """An invariant of docs/design.md section 4 does not hold."""


class ModelClock(Clock):
    """Virtual time: every machine reads the server's clock (skew is not modelled). A sleep is
    a scheduling point, and the actor may only go on once its wake time has come: the driver
    moves the clock there when it steps a sleeping actor."""

    def __init__(self, world: World):
        self.world = world

    def monotonic(self) -> float:
        return self.world.server.clock.monotonic()

    def now_iso(self) -> str:
        return self.world.server.clock.now.isoformat(timespec="seconds")

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        if seconds > 0:
            name = threading.current_thread().name
            self.world.wake_at[name] = self.monotonic() + seconds
            self.world.sched.sleep(seconds)
        return bool(wake and wake.is_set())


@dataclass
class Worker:
    """One wrapper process: its claim, its holding, its child (under the guardian)."""

    name: str
    machine: str
    pid: int
    boot: str
    claim: Claim | None = None
    holding: Holding | None = None
    child_started: bool = False
    child_stopped: bool = False
    child_lease: float = 0.0  # the guardian kills the child at this clock.monotonic()
    exit_code: int | None = None  # the child exited with this (the driver decides when)
    signalled: bool = False
    crashed: bool = False
    done: bool = False  # the wrapper process exited
    stalled: bool = False  # SIGSTOP: none of its threads runs
    ending: str | None = None
    beat_stop: bool = False

    @property
    def token(self) -> str | None:
        return self.claim.record.token if self.claim else None

    def actors(self) -> list[str]:
        return [f"{self.name}.claim", f"{self.name}.beat", f"{self.name}.end"]


@dataclass
class World:
    server: MemoryServer = field(default_factory=MemoryServer)
    sched: Scheduler = field(default_factory=Scheduler)
    workers: dict[str, Worker] = field(default_factory=dict)
    boots: dict[str, str] = field(default_factory=lambda: {m: f"{m}-boot-0" for m in (*MACHINES, HOSTED)})
    wake_at: dict[str, float] = field(default_factory=dict)
    reconcilers: int = 0
    log: list[str] = field(default_factory=list)
    seen_tombstones: set[int] = field(default_factory=set)
    requeued_at: datetime | None = None  # a person's last requeue
    last_person: str = ""  # the person's last queue action: "requeue" or "cancel"
    next_pid: int = 100
    forced: set[str] = field(default_factory=set)  # actors that are a person's forced release
    missed: list[str] = field(default_factory=list)  # beats that missed their own release

    def __post_init__(self) -> None:
        self.server.on_call = self.sched.hook
        self.clock = ModelClock(self)
        self.server.create_issue("work", [LAB.queue])

    # -- machines ------------------------------------------------------------------------

    def machine(self, name: str) -> Machine:
        return Machine(host=name, boot_id=self.boots[name], machine_id=f"{name}-id",
                       pid_ns=f"{name}-ns:{name}-table")

    def sight(self, machine: str) -> Callable[[int, int | None], ProcessSighting | None]:
        """That machine's process table: a wrapper is there while its process lives, its
        child's process group while the child runs."""

        def look(pid: int, _child: int | None) -> ProcessSighting | None:
            for w in self.workers.values():
                if w.pid == pid and w.machine == machine and w.boot == self.boots[machine]:
                    alive = not (w.crashed or w.done)
                    return ProcessSighting(wrapper_start=float(pid) if alive else None,
                                           child_group_alive=self.child_alive(w))
            return ProcessSighting(wrapper_start=None)

        return look

    def child_alive(self, w: Worker) -> bool:
        return (
            w.child_started
            and not w.child_stopped
            and not w.crashed
            and w.exit_code is None
            and self.clock.monotonic() < w.child_lease + CONFIG.kill_grace  # the guardian's TERM, then KILL
        )

    # -- actors --------------------------------------------------------------------------

    def _gh(self):  # noqa: ANN202 - the fake's client
        return self.server.client(BOT)

    def spawn_worker(self, machine: str) -> Worker:
        self.next_pid += 1
        w = Worker(f"w{len(self.workers)}", machine, self.next_pid, self.boots[machine])
        self.workers[w.name] = w
        holder = Holder(machine, self.boots[machine], f"{machine}-id", f"{machine}-ns:{machine}-table", w.pid,
                        float(w.pid))
        claimer = Claimer(
            self._gh(), CONFIG, self.log.append, self.clock, self.machine(machine), holder,
            sight=self.sight(machine),
        )

        def claim() -> Claim:
            issue, _ = claimer.gh.get_issue(ISSUE)
            return claimer.claim(issue, None)

        self.sched.spawn(f"{w.name}.claim", claim)
        return w

    def spawn_reconciler(self, machine: str) -> str:
        name = f"r{self.reconcilers}"
        self.reconcilers += 1
        here = self.machine(machine)
        reconciler = Reconciler(self._gh(), CONFIG, self.log.append, here=here, sight=self.sight(machine))

        def run_pass() -> None:
            for s in reconciler.survey():
                with contextlib.suppress(GitHubError):
                    reconciler.execute(s)

        self.sched.spawn(name, run_pass)
        return name

    def spawn_forced_release(self) -> str:
        """A person runs `orion-action release --issue N --force` (from a hosted runner): the
        one way a live holder is released on purpose. Its holder must stop at its next beat,
        and must not undo the next run's labels when it ends (defect 4 of the v0.1 audit)."""
        name = f"r{self.reconcilers}"
        self.reconcilers += 1
        self.forced.add(name)
        reconciler = Reconciler(self._gh(), CONFIG, self.log.append, here=self.machine(HOSTED),
                                sight=self.sight(HOSTED))

        def release() -> None:
            with contextlib.suppress(OrionError):
                reconciler.release(ISSUE, force=True)

        self.sched.spawn(name, release)
        return name

    def _start_child(self, w: Worker, claim: Claim) -> None:
        w.claim = claim
        h = Holding(self._gh(), claim, CONFIG, self.log.append, self.clock, self.machine(w.machine),
                    self.sight(w.machine))
        w.holding = h
        if h.lease_left() <= 0:  # the wrapper gives up before starting anything
            self._spawn_ending(w, "lease")
            return
        w.child_started, w.child_lease = True, h.lease_until
        h.child_pid = w.pid + 1

        def beats() -> None:
            while not w.beat_stop:
                released = self._released_in_listings(claim.record.token)
                try:
                    h.beat()
                    if h.lost is None and released:  # checked by `check` (an actor cannot raise)
                        self.missed.append(f"{w.name}'s beat missed the tombstone that released it")
                    if h.lost is None:
                        w.child_lease = h.lease_until  # the wrapper renews the guardian's lease
                except NotFound:
                    h.lost = h.lost or "the claim comment or the issue was deleted"
                except GitHubError:
                    pass
                if h.lost:
                    return
                self.clock.sleep(CONFIG.heartbeat_interval)

        self.sched.spawn(f"{w.name}.beat", beats)

    def _released_in_listings(self, token: str) -> bool:
        """A tombstone naming `token` is in what listings show now: the fence of a beat that
        starts now must see it, whatever was deleted meanwhile (ADR 0023, 0044)."""
        with self.server._lock:
            shown = [c for c in self.server._visible() if c.issue == ISSUE]
        return token in read_log(shown, TRUSTED).released_tokens()

    def _spawn_ending(self, w: Worker, due: str) -> None:
        """The wrapper's main loop takes an ending: it stops the child first, then writes."""
        w.ending, w.beat_stop, w.child_stopped = due, True, True
        h = w.holding
        assert h is not None
        code = w.exit_code

        def end() -> None:
            try:
                if due == "exited":
                    h.conclude(finished(CONFIG, code or 0))
                elif due == "signal":
                    h.conclude(handed_back(CONFIG, h.claim.record.attempt, "stopped by SIGTERM"))
                elif due == "cancel":
                    h.conclude(cancelled(CONFIG, None))
                elif due == "lease" and h.lost is None and h.outage() is not None:
                    # GitHub did not answer (a beat stalled): the wrapper's outage path, which
                    # records it without spending an attempt and hands back (ADR 0019).
                    h.record_outage("the lease ran out", outage_bound(CONFIG),
                                    lambda s: self.clock.sleep(s) and False)
                else:
                    h.give_up(h.lost or "the lease ran out", h.released)
            except GitHubError:
                pass

        self.sched.spawn(f"{w.name}.end", end)

    # -- the driver's actions ----------------------------------------------------------------

    def runnable(self) -> list[str]:
        stalled = {a for w in self.workers.values() if w.stalled for a in w.actors()}
        return [a for a in self.sched.runnable() if a not in stalled]

    def step(self, actor: str) -> StepResult:
        op = self.sched.pending_op(actor)
        if op is not None and op[0] == SLEEP:
            wake = self.wake_at.pop(actor, 0.0)
            if wake > self.clock.monotonic():
                self.advance(wake - self.clock.monotonic())
        result = self.sched.step(actor)
        self._after(actor, result)
        return result

    def advance(self, seconds: float) -> None:
        self.server.clock.advance(seconds)

    def crash(self, w: Worker) -> None:
        """The wrapper process dies (SIGKILL, OOM, a runner wiped): its threads with it, and the
        guardian kills the child when it sees the wrapper's pipe close."""
        w.crashed = True
        for a in w.actors():
            if self._exists(a):
                self.sched.crash(a)

    def reboot(self, machine: str) -> None:
        for w in self.workers.values():
            if w.machine == machine and not w.done:
                self.crash(w)
        n = int(self.boots[machine].rsplit("-", 1)[1]) + 1
        self.boots[machine] = f"{machine}-boot-{n}"

    def child_exits(self, w: Worker, code: int) -> None:
        if self.child_alive(w):
            w.exit_code = code

    def signal(self, w: Worker) -> None:
        if not (w.crashed or w.done):
            w.signalled = True

    def person_requeue(self) -> None:
        """A person puts a finished or failed issue back in the queue (never a held one)."""
        issue = self.server.issue(ISSUE)
        if issue.is_open and LAB.working not in issue.labels and LAB.queue not in issue.labels:
            for name in (LAB.ready, LAB.failed, LAB.cancel):
                self.server.remove_label(ISSUE, name)
            self.server.add_label(ISSUE, LAB.queue)
            self.requeued_at = self.server.clock.now
            self.last_person = "requeue"

    def person_cancel(self) -> None:
        self.server.add_label(ISSUE, LAB.cancel)
        self.last_person = "cancel"

    def person_close(self) -> None:
        self.server.close(ISSUE)

    def person_reopen(self) -> None:
        self.server.reopen(ISSUE)

    def person_comments(self) -> None:
        self.server.comment(ISSUE, "any news?", PERSON)

    def person_deletes_comments(self, count: int) -> None:
        """She deletes up to `count` of her oldest comments: deletions keep the issue's comment
        count level with the posts they follow (a tombstone and the next claim are two), so the
        fence must not trust the count (issue 16, ADR 0044)."""
        for cid in sorted(c.id for c in self.server.comments(ISSUE) if c.author == PERSON)[:count]:
            self.server.delete(cid)

    # -- reacting ------------------------------------------------------------------------------

    def _exists(self, actor: str) -> bool:
        try:
            self.sched.result(actor)
        except AssertionError:
            return False
        return True

    def _after(self, actor: str, result: StepResult) -> None:
        name, _, part = actor.partition(".")
        w = self.workers.get(name)
        if w is not None and result.done:
            if part == "claim":
                if isinstance(result.result, Claim) and not w.crashed:
                    self._start_child(w, result.result)
                else:
                    w.done = True  # lost, refused or failed: the wrapper exits
                    if result.error is not None and not isinstance(result.error, (OrionError, Crashed)):
                        raise result.error
            elif part == "end":
                w.done = True
                if result.error is not None and not isinstance(result.error, (OrionError, Crashed)):
                    raise result.error
                if self._exists(f"{name}.beat") and not self.sched.result(f"{name}.beat").done:
                    self.sched.crash(f"{name}.beat")  # the process exits, its threads with it
        self.react()

    def react(self) -> None:
        """Each wrapper's main loop takes the ending that is due (unless it is stopped)."""
        for w in self.workers.values():
            if w.holding is None or w.ending or w.crashed or w.done or w.stalled:
                continue
            due = ending_due(w.holding, w.exit_code, 15 if w.signalled else None, None)
            if due is not None:
                self._spawn_ending(w, due)

    # -- invariants ----------------------------------------------------------------------------

    def check(self) -> None:
        if self.missed:
            raise InvariantError(f"{self.missed[0]} (ADR 0044)")
        log = read_log(self.server.comments(ISSUE), TRUSTED)
        # A person's `release --force` of a live run is taken at their word ("only if you are
        # sure the run is gone"): that run may overlap the next one until its next beat sees the
        # tombstone. Everything else about it is still checked (its ending must not touch the
        # next run's labels: defect 4 of the v0.1 audit).
        forced = {t.tombstone.token for t in log.tombstones if t.tombstone.by == "release"}
        running = [w.name for w in self.workers.values() if self.child_alive(w) and w.token not in forced]
        if len(running) > 1:
            raise InvariantError(f"two runs work issue {ISSUE} at once: {running}")
        started = {w.token for w in self.workers.values() if w.child_started}
        by_token = {w.token: w for w in self.workers.values() if w.token}
        for t in log.tombstones:
            if t.comment_id in self.seen_tombstones:
                continue
            self.seen_tombstones.add(t.comment_id)
            tomb = t.tombstone
            w = by_token.get(tomb.token)
            if (
                tomb.action not in (ReleaseAction.UNLOCK, ReleaseAction.RELEASE)
                and w is not None
                and self.child_alive(w)
            ):
                raise InvariantError(f"{w.name}'s live run was released: {tomb.reason}")
            if tomb.counts_attempt and tomb.token not in started:
                raise InvariantError(f"an attempt was charged for a claim that never ran ({tomb.reason})")

    def quiesce(self, passes: int = 4) -> None:
        """End the episode: every wrapper dies, time passes, reconcile passes run to the end."""
        for w in self.workers.values():
            w.stalled = False
            if not w.done:
                self.crash(w)
        for a in self.runnable():
            self.sched.crash(a)
        for _ in range(passes):
            self.advance(CONFIG.stale_after + 1)
            r = self.spawn_reconciler(HOSTED)
            while not self.sched.result(r).done:
                self.step(r)
                self.check()

    def check_settled(self) -> None:
        issue = self.server.issue(ISSUE)
        labels = issue.labels
        if not issue.is_open:
            if LAB.working in labels:
                raise InvariantError(f"a closed issue keeps the lock: {sorted(labels)}")
            return
        if LAB.working in labels:
            raise InvariantError(f"the lock is still on after every holder died: {sorted(labels)}")
        if not labels & {LAB.queue, LAB.ready, LAB.failed}:
            log = read_log(self.server.comments(ISSUE), TRUSTED)
            last = next((c for c in reversed(log.claims) if c.record.state is not State.LOST), None)
            if self.last_person != "cancel" and (last is None or last.record.state is not State.CANCELLED):
                shown = sorted(labels)
                raise InvariantError(f"stranded: an open issue with none of queue/ready/failed: {shown}")
        if self.requeued_at is not None and LAB.queue not in labels:
            log = read_log(self.server.comments(ISSUE), TRUSTED)
            worked = [c for c in log.claims if c.created_at >= self.requeued_at and ran(c)]
            if not worked and self.last_person != "cancel":
                raise InvariantError(f"a person's requeue was lost: {sorted(labels)}")

    def close(self) -> None:
        self.sched.close()


__all__ = ["CONFIG", "HOSTED", "ISSUE", "MACHINES", "START", "InvariantError", "World"]
