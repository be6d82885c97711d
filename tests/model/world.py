"""The protocol's world for the model checker: the real services over a hostile in-memory GitHub.

Claimers (services/claiming.py: one issue, or `--next`), heartbeats and endings
(services/holding.py) and reconcile passes (services/reconcile.py: survey, execute and the
cancel sweep) run as actors of the cooperative scheduler, one GitHub call at a time, in
whatever order a driver chooses. Around them the world simulates what is not GitHub: machines
with process tables and boot ids (and clones that share every id), wrapper processes that
make one claim or drain many, the guardian that kills a child when its wrapper dies or its
lease runs out, the wrapper's main loop (which reacts through `ending_due`, as
services/wrapper.py does), crashes, signals, reboots, people, and time.

GitHub is as hostile as the real one (ADR 0026): each write stays out of listings for its own
lag, up to `max_lag` (several seconds, above LIST_SETTLE_S); any actor's request can fail
(5xx, a 403/429 with Retry-After, a write that lands but answers an error, a write that lands
up to the request timeout after the client gave up); stamps have whole seconds; several issues.

After every action `check()` asserts the invariants that must hold while processes live;
`quiesce()` ends an episode (every process dies, time passes, reconcile passes run) and
`check_settled()` asserts what must hold then. Drivers: tests/model/explorer.py (seeded
random search) and tests/model/test_protocol_model.py (Hypothesis).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from fakes.memory_github import BOT, PERSON, MemoryServer

from model.scheduler import SLEEP, START, Crashed, Scheduler, StepResult
from orion_action.adapters.clock import Clock
from orion_action.config import Config
from orion_action.core.beat import renew_deadline
from orion_action.core.ending import cancelled, ending_due, finished, handed_back, signalled, timed_out
from orion_action.core.issue import ClaimEntry, IssueLog, read_log, trusted_set
from orion_action.core.liveness import Machine, ProcessSighting, writes_land_within
from orion_action.core.plan import PreviousPass, strand_since
from orion_action.core.record import CLAIM_MARK, END_STATES, HOLDER_END, Holder, ReleaseAction, State
from orion_action.errors import GitHubError, NotFound, OrionError
from orion_action.ports import QueueHistory
from orion_action.services.claiming import LIST_SETTLE_S, Claim, Claimer
from orion_action.services.dispatch import dispatch_after_pass
from orion_action.services.fleet import claim_next_across
from orion_action.services.holding import LABEL_LANDING_MARGIN_S, Holding, outage_bound
from orion_action.services.reconcile import RECENT_MARGIN_S, Action, Reconciler
from orion_action.services.trigger import refuse_if_cancelled

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, kill_grace=1.0, source="model")
WORKFLOW = "orion-worker.yml"  # the worker workflow passes dispatch (World.dispatch)
RECONCILE_WORKFLOW = "orion-reconcile.yml"  # the passes' own workflow: its runs anchor the strand look
DISPATCHING = {"dispatch_workflow": WORKFLOW, "dispatch_max_runs": 2}  # over the world's config
# Adaptive beats (ADR 0045), the switch: a fast base beat that the holders stretch at once
# (two live claims already ask for 18 s against the 2 s base), so each record's promise is
# several times the judges' own stale_after, and a judge that went by its own would release
# live holders. ORION_MODEL_ADAPTIVE=1 turns it on for every World (make simulate, the tests).
ADAPTIVE_CONFIG = Config(heartbeat_interval=2.0, stale_after=12.0, heartbeat_max_interval=60.0,
                         max_attempts=3, kill_grace=1.0, source="model-adaptive")
ADAPTIVE = os.environ.get("ORION_MODEL_ADAPTIVE") == "1"
# The holders' one-request ending (ADR 0076): every client knows the GraphQL node ids, and the
# repositories have orion's labels as `orion init` makes them. Off by default: the pinned
# replays of test_known_holes.py depend on the REST request sequence. ORION_MODEL_GRAPHQL=1
# turns it on for every World (random search over the batched ending).
GRAPHQL = os.environ.get("ORION_MODEL_GRAPHQL") == "1"
# ORION_MODEL_STRICT_LOCKS=1 (bench/model_mutations.py only): orion taking a live run's lock off
# is itself a break, even when the run puts it back (ADR 0065). The put-back heals every stale
# lock removal a live holder outlives, so a mutation that makes more of them (a late or retried
# label write, a pass acting on a stale plan) would otherwise go unseen: judged against the
# unmutated code on the same actions, as every mutation is (ADR 0047).
STRICT_LOCKS = os.environ.get("ORION_MODEL_STRICT_LOCKS") == "1"
# ORION_MODEL_NO_NEXT_PASS_LOOKS=1 (bench/model_mutations.py only): the passes skip their looks
# at what a writer that died left: the queued issues a cancel still stands against (ADR 0085),
# the queueings a late unqueue took (ADR 0086) and those a stale removal took (ADR 0088);
# ORION_MODEL_NO_STRAND_LOOK=1, the stranded issues (ADR 0072). Those looks repair what a
# writer's own look back missed (ADRs 0025, 0052, 0053, 0055, 0067, 0072, 0073, 0079, 0080,
# 0082, 0083), so a mutation of one of those would
# otherwise go unseen: it is judged without them, against the unmutated code without them, as
# ADR 0065's put-back has its strict mode.
NEXT_PASS_LOOKS = os.environ.get("ORION_MODEL_NO_NEXT_PASS_LOOKS") != "1"
STRAND_LOOK = os.environ.get("ORION_MODEL_NO_STRAND_LOOK") != "1"
# ORION_MODEL_NO_HOLDER_CANCEL_READ=1 (the bench only): holders judge a cancel by the label alone,
# without ADR 0093's read of GitHub's record, which also catches what an older sweep rule guards
# against (ADR 0053: a sweep that takes the cancel label off before a claim's lock lands).
HOLDER_CANCEL_READ = os.environ.get("ORION_MODEL_NO_HOLDER_CANCEL_READ") != "1"
# ORION_MODEL_NO_UNQUEUE_LOOK=1 (the bench only): a winner reads its unqueue's unanswered try and
# 404 as "mine", without ADR 0096's look for another claim, which also catches what older claim
# rules guard against (ADR 0011's `ran_meanwhile`, ADR 0023's settle: two winners).
UNQUEUE_LOOK = os.environ.get("ORION_MODEL_NO_UNQUEUE_LOOK") != "1"
# Every holder runs with run.idle_timeout: only a child the driver stopped (SIGSTOP) is ever
# silent, so it changes nothing for the others (World.child_halts).
IDLE_TIMEOUT = 90.0
LAB = CONFIG.labels
ISSUE = 1
MACHINES = ("m1", "m2")  # workers run here; reconcilers on these or on a hosted runner
CLONE = "m1-clone"  # a VM restored from m1's snapshot: m1's every id, its own process table
HOSTED = "hosted"
TRUSTED = trusted_set(BOT, ())
# GitHub's whole-second stamps and the Date header (truncated) blur any time by up to this.
SECOND = 1.0


class InvariantError(AssertionError):
    """An invariant of docs/design.md section 4 does not hold. `hole`: the open finding of
    KNOWN_HOLES this break is an instance of (judged from the world, not from the message)."""

    def __init__(self, message: str, hole: str | None = None):
        super().__init__(message)
        self.hole = hole


# Holes the model finds that are still open on this branch: name -> the finding. A break that
# the world can attribute to one of them (each raise site below says how) is counted, not
# failed, by the explorer, so that the search goes on to find new ones; each has a replayed
# trace in test_known_holes.py, marked xfail(strict=True), which turns red once it is fixed.
# Remove an entry when its fix lands (ADR 0026). Closed: `stolen-by-ending` (audit findings 2
# and 8: another claim's late or retried label write stopped a run) and `stale-pass-unlock` (a
# pass's lock removal planned before a new claim, landing after it): a live holder puts back a
# lock orion's own stale write took off (ADR 0065); and `repair-undoes-cancel` (ADR 0025's
# repair put the queue label back after the cancel sweep took it): the repair reads GitHub's
# record and leaves a cancelled queueing (ADR 0073). The world still names them when they break.
# And `stale-unlock-strand` (that put-back's residue: the holder died before its first beat, the
# issue left with no label): a later pass finds the open claim and requeues (ADR 0072), looking
# back to what the previous successful pass could not judge yet (ADR 0081; outside Actions, where
# that pass is unknown, only while passes come at least every stale_after). And, once the next
# pass looks back where a writer died before it could: `requeue-over-cancel` (a stale requeue
# over a cancel carried out; every reader sets orion's own queue labels aside and each pass
# looks at the queued issues changed since the previous one, ADR 0085) and `late-unqueue` (a
# claim's unqueue landing after a release back to the queue: the pass puts the label back, ADR
# 0086, and the strand look reads past a loser's claim to the winner's). And
# `outage-record-overwritten` (a write sent before the holder's outage record landing over it):
# the holder appends its account as an end marker no edit undoes (ADR 0092). And
# `stale-pass-repair` (a pass's label write, planned before a person's requeue, landing after it,
# ADR 0054): a fate the pass adds after someone else moved the labels comes off again at once
# (ADR 0073), a queueing its removal took is put back (ADRs 0073, 0088), and a stale fate whose
# writer died before its look (two fates) the next pass's look at the queue takes off (ADR 0094).
# And `stale-sweep-uncancel` (a cancel sweep planned before a person's requeue and new cancel
# takes the new cancel off): the sweep reads GitHub's record after its removal (ADR 0073), the
# next pass looks at the queue (ADR 0085), and a holder reads the record when its issue changed
# (ADR 0093); a beat whose read of the record failed is judged by the next one (ADR 0097).
# And `queued-mid-run` (a person queued an issue a live run held, and the run's ending added its
# fate beside the queue label): the next pass's look at the queue takes the fate off, and the
# person's queueing runs (ADR 0099).
KNOWN_HOLES: dict[str, str] = {}


class ModelClock(Clock):
    """Virtual time, as one machine reads it (`machine` None: the server's, the world's own).
    A machine's clocks lag the server's by the time its VM spent paused (a paused VM's boot
    clock stands still, and so does its wall clock until NTP steps it), and its wall clock is
    off by its skew. A sleep is a scheduling point, and the actor may only go on once its wake
    time has come: the driver moves the clock there when it steps a sleeping actor."""

    def __init__(self, world: World, machine: str | None = None):
        self.world = world
        self.machine = machine

    def _behind(self) -> float:
        return self.world.paused_for(self.machine) if self.machine else 0.0

    def monotonic(self) -> float:
        return self.world.server.clock.monotonic() - self._behind()

    def now_iso(self) -> str:
        off = self.world.skew.get(self.machine or "", 0.0) - self._behind()
        return (self.world.server.clock.now + timedelta(seconds=off)).isoformat(timespec="seconds")

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        if seconds > 0:
            name = threading.current_thread().name
            self.world.wake_at[name] = self.world.server.clock.monotonic() + seconds  # server time
            self.world.sched.sleep(seconds)
        return bool(wake and wake.is_set())


@dataclass(eq=False)
class Proc:
    """A wrapper process: one claim, or a drain's many (one identity for all of them)."""

    pid: int
    machine: str
    boot: str
    gone: bool = False  # exited or killed


@dataclass(eq=False)
class Worker:
    """One claim of a wrapper process: the claim, its holding, its child (under the guardian)."""

    name: str
    proc: Proc
    issue: int | None  # the issue asked for; None: `--next`
    drain: bool = False
    claim: Claim | None = None
    holding: Holding | None = None
    child_started: bool = False
    child_stopped: bool = False
    child_lease: float = 0.0  # the guardian kills the child at this clock.monotonic()
    exit_code: int | None = None  # the child exited with this (the driver decides when)
    signalled: bool = False
    crashed: bool = False
    done: bool = False  # this claim's work in the process is over (the process may drain on)
    stalled: bool = False  # SIGSTOP: none of its threads runs
    ending: str | None = None
    beat_stop: bool = False
    number: int | None = None  # the issue its claim comment was posted on
    posted_at: float | None = None  # clock.monotonic() when its claim comment landed
    gen: int = -1  # the issue's queueing its claim was posted in
    clean_beat: float | None = None  # when the last beat that found the claim still ours was sent
    clean_local: float | None = None  # the same, on its machine's boot clock
    # when the last clean beat that could read everything it judges a cancel by was sent: a beat
    # whose read of GitHub's record of the cancel label failed cannot see a cancel only the record
    # shows (ADR 0093), and reads it again at the next beat
    judged_beat: float | None = None
    record_unread: bool = False  # this beat's read of that record failed
    loss_judged: bool = False
    outage_recorded: bool = False
    outage_retries: int = 0
    child_pid: int | None = None
    run_id: int | None = None  # the dispatched workflow run it is
    started_at: float | None = None  # server monotonic when its child started
    # server monotonic when its claimer last sent its record (the `running` edit): the promise a
    # judge reads from then on, until its first beat
    marked_at: float | None = None
    guardian_dead: bool = False  # its guardian was SIGKILLed (the child died with it)
    halted_local: float | None = None  # its child was SIGSTOPped then, on its machine's boot clock
    # its claim's lock write landed beside the cancel label: a person cancelled the issue before
    # (ADR 0066); the issue number it landed on
    locked_under_cancel: int | None = None
    lock_taken: str | None = None  # strict mode: orion took its lock off while it claimed (ADR 0065)

    @property
    def token(self) -> str | None:
        return self.claim.record.token if self.claim else None

    def actors(self) -> list[str]:
        return [f"{self.name}.claim", f"{self.name}.beat", f"{self.name}.end"]


@dataclass
class Pass:
    """A reconcile pass, for the dead-holder invariant: when it began and what was locked then."""

    forced: bool = False
    machine: str = HOSTED
    boot: str = ""
    began: float | None = None
    began_at: datetime | None = None
    locked: frozenset[int] = frozenset()
    dead: frozenset[int] = frozenset()
    drained: frozenset[int] = frozenset()
    # issue -> its last listing missed a comment beside the queue label (ADR 0054: it waits)
    unlisted: dict[int, bool] = field(default_factory=dict)
    cancels_read: dict[int, int] = field(default_factory=dict)  # issue -> a person's cancels at its listing
    previous: PreviousPass | None = None  # when the last successful pass began, as it read it (ADR 0081)


class World:
    def __init__(self, issues: int = 1, max_lag: float = 0.0, whole_seconds: bool = False,
                 lag_seed: str = "0", clones: bool = False, skew: dict[str, float] | None = None,
                 adaptive: bool | None = None, repos: int = 1) -> None:
        self.config = ADAPTIVE_CONFIG if (ADAPTIVE if adaptive is None else adaptive) else CONFIG
        self.holding_config = replace(self.config, idle_timeout=IDLE_TIMEOUT)
        self.server = MemoryServer()  # the first repository; GitHub's clock is shared by all
        # A second repository (`repos=2`): its own issues, comments and failures. Its issue
        # numbers follow the first's (it has that many pull requests first, which share the
        # numbering and are no issue to orion) and its comment ids are far from the first's, so
        # that every number and id names one thing in the world; an injected failure hits the
        # actor's next request whichever repository it goes to.
        self.servers = [self.server]
        if repos > 1:
            other = MemoryServer(f"{BOT}/other", clock=self.server.clock)
            other._next_comment = 2_000_001
            other._failures = self.server._failures
            other.failed_actors = self.server.failed_actors
            self.servers.append(other)
        if GRAPHQL:
            self.know_node_ids()
        self.repo_of: dict[int, MemoryServer] = {}  # issue -> its repository
        self.sched = Scheduler()
        self.workers: dict[str, Worker] = {}
        self.procs: list[Proc] = []
        self.boots = {m: f"{m}-boot-0" for m in (*MACHINES, CLONE, HOSTED)}
        self.wake_at: dict[str, float] = {}
        self.reconcilers = 0
        self.passes: dict[str, Pass] = {}
        self.log: list[str] = []
        self.next_pid = 100
        self.max_lag = max_lag
        self.clones = clones
        self.skew = dict(skew or {})  # machine -> how far its wall clock is ahead of GitHub's (s)
        self.pauses = False  # whether drivers pause VMs (the explorer's switches)
        self.guardians_die = False  # whether drivers SIGKILL guardians
        self.dispatch = False  # whether passes dispatch the worker workflow (then `pickup` runs it)
        self.halts = False  # whether drivers SIGSTOP children
        self.mid_run_queueing = False  # whether people queue issues a run holds (ADR 0099)
        self.server.workflows[WORKFLOW] = "orion #{issue}"
        self.paused: dict[str, float] = {}  # machine -> server monotonic when its VM was paused
        self.pause_total: dict[str, float] = {}  # machine -> time its VM spent paused, ended pauses
        self.pause_ends: dict[str, float] = {}  # machine -> server monotonic its last pause ended
        self.issue_numbers: list[int] = []
        self.gen: dict[int, int] = {}  # issue -> its queueing (every queue label added counts one)
        self.person: dict[int, list[tuple[str, float]]] = {}  # issue -> a person's acts, with times
        self.last_person: dict[int, str] = {}  # issue -> "requeue" or "cancel"
        self.requeued_at: dict[int, datetime] = {}
        self.lock_removed_by: dict[int, tuple[str, float]] = {}
        # (issue, comment id) -> when a person deleted that comment of the bot's (a claim among them:
        # a takeover by hand, excused from the overlap rule but bounded by one beat, ADR 0068)
        self.deleted_by_person: dict[tuple[int, int], float] = {}
        self.strict_locks = STRICT_LOCKS
        self.locks_taken: list[str] = []  # orion's removals of a live run's lock (strict mode)
        self.stale_uncancel: dict[int, bool] = {}  # issue -> its cancel label's last removal was a sweep's
        # planned (its listing of the cancel label) before a person's latest cancel
        self.label_writes: dict[int, list[tuple[str, str, str, float]]] = {}  # issue -> (actor, op, label, t)
        self.released_by: dict[int, set[str]] = {}  # issue -> the passes that posted a tombstone there
        self.landed_late: set[str] = set()  # actors whose late write landed
        self.wrote: set[str] = set()  # actors GitHub applied a write of
        self.listed_at: dict[str, datetime] = {}  # claimer -> when it last listed the comments
        self.overlap_notes: list[str] = []
        self._logs: dict[int, tuple[int, IssueLog]] = {}
        self._seen_tombstones: set[int] = set()
        for s in self.servers:
            s.on_call, s.on_applied, s.sleep = self.sched.hook, self._applied, self._wait
        self.server.clock.whole_seconds = whole_seconds
        self.clock = ModelClock(self)
        if max_lag > 0:
            import random

            def lag_of(comment_id: int, writes: int) -> float:
                r = random.Random(f"{lag_seed}-{comment_id}-{writes}").random()
                return 0.0 if r < 0.4 else max_lag * (r - 0.4) / 0.6

            for s in self.servers:
                s.lag_of = lag_of
        for i in range(issues):
            self._new_issue(self.server, f"work {i + 1}")
        for s in self.servers[1:]:
            for _ in range(issues):
                s.create_issue("a pull request", pull_request=True)
            self._new_issue(s, f"work in {s.full_name}")

    def _new_issue(self, server: MemoryServer, title: str) -> None:
        n = server.create_issue(title, [LAB.queue])
        self.repo_of[n] = server
        self.issue_numbers.append(n)
        self.gen[n] = 0
        self.person[n] = []

    def know_node_ids(self) -> None:
        """The holders know the node ids, as the trigger check's query tells them, of orion's
        labels as `orion init` makes them (ADR 0076): their endings write in one request."""
        for s in self.servers:
            s.node_ids_known = True
            for name in (LAB.queue, LAB.working, LAB.ready, LAB.failed, LAB.cancel):
                s.labels.setdefault(name, ("ededed", ""))

    def gh_of(self, issue: int) -> MemoryServer:
        """The repository that holds `issue` (issue numbers are unique in the world)."""
        return self.repo_of.get(issue, self.server)

    def delayed(self) -> list[tuple[MemoryServer, int]]:
        """Late writes in flight, each as (its repository, its index there)."""
        return [(s, i) for s in self.servers for i in range(len(s.delayed))]

    def _wait(self, seconds: float) -> None:
        """A client waits out a Retry-After (a scheduling point)."""
        self.clock.sleep(seconds)

    # -- machines ------------------------------------------------------------------------

    def paused_for(self, machine: str) -> float:
        """How far the machine's clocks lag the server's: the time its VM spent paused."""
        now = self.server.clock.monotonic()
        running = now - self.paused[machine] if machine in self.paused else 0.0
        return self.pause_total.get(machine, 0.0) + running

    def paused_since_beat(self, w: Worker) -> bool:
        """Its VM paused after its last beat that found the claim still its own (or, before its
        first beat, after its claimer sent the `running` record that judges read): to everyone
        else it is dead, and may be released; on resume its child runs on until that next beat,
        which must stop it (the bound of one beat). A pause before that record is the claimer's
        to notice (its decision judges its claim's age on GitHub's clock); one after it, while
        the claimer unqueues or starts the child, it cannot tell from its frozen boot clock
        (seed 11, episode 186: the record written at 25 s, the VM paused 60 s, the child started
        at once on resume, and its first beat is what must stop it)."""
        if w.started_at is None:  # not running: a claimer's own checks judge a pause
            return False
        first = w.started_at if w.marked_at is None else min(w.marked_at, w.started_at)
        since = w.clean_beat if w.clean_beat is not None else first
        m = w.proc.machine
        return m in self.paused or self.pause_ends.get(m, -1.0) > since

    def frozen(self, w: Worker) -> bool:
        """Its wrapper runs no code now: stopped (SIGSTOP) or its VM paused."""
        return w.stalled or w.proc.machine in self.paused

    def clock_of(self, machine: str) -> ModelClock:
        return ModelClock(self, machine)

    def machine_of(self, actor: str) -> str:
        w = self.workers.get(actor.partition(".")[0])
        if w is not None:
            return w.proc.machine
        p = self.passes.get(actor)
        return p.machine if p is not None else HOSTED

    def pause_vm(self, machine: str) -> None:
        """The hypervisor pauses the machine's VM (or a laptop sleeps): none of its processes
        runs, and its boot clock (CLOCK_MONOTONIC) stands still, so that on resume a lease
        counted on it has not run out however long the pause was."""
        self.paused.setdefault(machine, self.server.clock.monotonic())

    def resume_vm(self, machine: str) -> None:
        began = self.paused.pop(machine, None)
        if began is None:
            return
        spent = self.server.clock.monotonic() - began
        self.pause_total[machine] = self.pause_total.get(machine, 0.0) + spent
        self.pause_ends[machine] = self.server.clock.monotonic()
        for actor in list(self.wake_at):  # a sleep counted on the frozen clock lasts that much longer
            if self.machine_of(actor) == machine:
                self.wake_at[actor] += spent

    def machine(self, name: str) -> Machine:
        ids = "m1" if name == CLONE else name  # a snapshot clone keeps host, boot, machine and ns ids
        boot = self.boots["m1" if name == CLONE else name]
        # a clone shares the namespace inode but not the random table id (ADR 0028)
        return Machine(host=ids, boot_id=boot, machine_id=f"{ids}-id", pid_ns=f"{ids}-ns:{name}-table")

    def sight(self, machine: str) -> Callable[[int, int | None], ProcessSighting | None]:
        """That machine's process table: a wrapper is there while its process lives, its
        child's process group while the child runs."""

        def look(pid: int, child: int | None) -> ProcessSighting | None:
            for p in self.procs:
                if p.pid == pid and p.machine == machine and p.boot == self.boots[machine]:
                    group = any(self.child_alive(w) for w in self.workers.values()
                                if child is not None and w.child_pid == child)
                    return ProcessSighting(wrapper_start=None if p.gone else float(pid),
                                           child_group_alive=group)
            return ProcessSighting(wrapper_start=None)

        return look

    def child_alive(self, w: Worker) -> bool:
        """The guardian kills the child when its lease runs out on the machine's boot clock."""
        return (
            w.child_started
            and not w.child_stopped
            and not w.crashed
            and w.exit_code is None
            # TERM, then KILL
            and self.clock_of(w.proc.machine).monotonic() < w.child_lease + self.config.kill_grace
        )

    # -- actors --------------------------------------------------------------------------

    def _gh(self, server: MemoryServer):  # noqa: ANN202 - the fake's client
        """A client of `server`, the repository the actor works. Deadlines are each call's
        Policy, on its caller's clock (a machine's boot clock for the actors on it, ADR 0051),
        so a client needs no clock, nor machine, of its own."""
        return server.client(BOT)

    def spawn_worker(self, machine: str, issue: int | None = ISSUE, *, drain: bool = False,
                     proc: Proc | None = None) -> Worker:
        """A wrapper claims `issue` (None: the first queued one, `--next`). `proc`: a drain's
        process, which claims again with the same identity."""
        if proc is None:
            self.next_pid += 1
            proc = Proc(self.next_pid, machine, self.boots[machine])
            self.procs.append(proc)
        machine = proc.machine
        w = Worker(f"w{len(self.workers)}", proc, issue, drain)
        self.workers[w.name] = w
        ids = self.machine(machine)
        holder = Holder(ids.host, proc.boot if machine != CLONE else ids.boot_id, ids.machine_id, ids.pid_ns,
                        proc.pid, float(proc.pid))
        clock = self.clock_of(machine)
        claimers = [Claimer(self._gh(s), self.config, self.log.append, clock, ids, holder,
                            sight=self.sight(machine)) for s in self.servers]
        # The trigger check's cancel rule (ADR 0061); the model approves every issue's text and
        # queuer. Its GraphQL read is taken with the claim's issue read, not as a step of its
        # own, so that adding it moved no recorded trace (fewer interleavings, none invented).
        for claimer, s in zip(claimers, self.servers, strict=True):
            claimer.approval = lambda gh, found, _history, s=s: refuse_if_cancelled(
                gh, self.config, found.number, s.history(found.number, LAB.queue, LAB.cancel), lambda: BOT)
            if not UNQUEUE_LOOK:
                # an empty log: no other claim, no release; the unqueue was "mine"
                claimer._listed_in_full = lambda _claim: read_log([], TRUSTED)  # type: ignore[method-assign]

        def claim() -> Claim:
            if issue is None:  # `--next`: over every repository, as the wrapper does with several
                if len(claimers) == 1:
                    return claimers[0].claim_next(None)
                return claim_next_across(claimers, None, (), self.log.append)[1]
            claimer = claimers[self.servers.index(self.gh_of(issue))]
            found, _ = claimer.gh.get_issue(issue)
            return claimer.claim(found, None)

        self.sched.spawn(f"{w.name}.claim", claim)
        return w

    def drain_next(self, w: Worker) -> Worker | None:
        """A drain whose claim is over claims the next queued issue, as the same process."""
        if not (w.drain and w.done and not w.proc.gone and not w.crashed):
            return None
        if any(o.proc is w.proc and not o.done for o in self.workers.values()):
            return None
        return self.spawn_worker(w.proc.machine, None, drain=True, proc=w.proc)

    def queued_runs(self) -> list[int]:
        """Dispatched workflow runs no runner has picked up yet, oldest first."""
        return sorted(r for r, status in self.server.workflow_runs.items() if status == "queued")

    def pickup(self, machine: str) -> Worker | None:
        """A runner on `machine` picks up the oldest dispatched run: `run --issue N`."""
        runs = self.queued_runs()
        if not runs:
            return None
        run = runs[0]
        inputs = next(d["inputs"] for d in self.server.dispatches if d["run_id"] == run)
        issue = int(inputs["issue"])  # type: ignore[index]
        self.server.workflow_runs[run] = "in_progress"
        w = self.spawn_worker(machine, issue)
        w.run_id = run
        return w

    def _runs_over(self) -> None:
        """A dispatched run whose wrapper is gone is completed."""
        for w in self.workers.values():
            if w.run_id is not None and w.proc.gone:
                self.server.workflow_runs[w.run_id] = "completed"

    def drain_exits(self, w: Worker) -> None:
        if w.drain and w.done and not any(o.proc is w.proc and not o.done for o in self.workers.values()):
            w.proc.gone = True

    def spawn_reconciler(self, machine: str) -> str:
        name = f"r{self.reconcilers}"
        self.reconcilers += 1
        here = self.machine(machine)
        reconcilers = [Reconciler(self._gh(s), self.config, self.log.append, here=here,
                                  sight=self.sight(machine)) for s in self.servers]
        for reconciler in reconcilers:
            reconciler.strands = True  # as reconcile_pass does (ADR 0072)
            if not NEXT_PASS_LOOKS:
                reconciler.survey_queue = list  # type: ignore[method-assign]
                reconciler.survey_late_unqueues = lambda _listed: []  # type: ignore[method-assign]
                reconciler.survey_taken_queueings = lambda _listed: []  # type: ignore[method-assign]
            if not STRAND_LOOK:
                reconciler.survey_strands = lambda _listed: []  # type: ignore[method-assign]
        dispatching = replace(self.config, **DISPATCHING)

        def run_pass() -> None:
            # The pass's run of the reconcile workflow, and when its last successful run began
            # (ADR 0081), as `previous_pass` reads them: taken from the server, not as a step of
            # its own, so that the anchor moved no recorded trace.
            run_id = self.server.start_run(RECONCILE_WORKFLOW)
            server = self.server
            succeeded = [server.run_started[r] for r, c in server.run_conclusions.items()
                         if c == "success" and server.run_info[r][0] == RECONCILE_WORKFLOW]
            previous = PreviousPass(max(succeeded, default=None))
            self.passes[name].previous = previous
            for reconciler in reconcilers:
                reconciler.previous_pass = previous
            for reconciler in reconcilers:  # one repository after the other, as reconcile_repos does
                _, done = reconciler.pass_over(dry_run=False)
                requeued = [p.issue for p in done if p.action is Action.REQUEUE]
                if self.dispatch and reconciler is reconcilers[0]:  # the first repository's workflow only
                    # as reconcile_pass does; the model approves every issue
                    dispatch_after_pass(reconciler.gh, dispatching, requeued, self.log.append, lambda _: True)
            # A pass that raised or was killed never succeeds; nor does one that could not make
            # every read or write it meant to (it exits 69, ADR 0091).
            incomplete = any(reconciler.incomplete for reconciler in reconcilers)
            self.server.end_run(run_id, "failure" if incomplete else "success")

        self.passes[name] = Pass(machine=machine, boot=self.boots[machine])
        self.sched.spawn(name, run_pass)
        return name

    def spawn_forced_release(self, issue: int = ISSUE) -> str:
        """A person runs `orion-action release --issue N --force` (from a hosted runner): the
        one way a live holder is released on purpose. Its holder must stop at its next beat,
        and must not undo the next run's labels when it ends (defect 4 of the v0.1 audit)."""
        name = f"r{self.reconcilers}"
        self.reconcilers += 1
        self.passes[name] = Pass(forced=True)
        self.person[issue].append(("release", self.clock.monotonic()))
        reconciler = Reconciler(self._gh(self.gh_of(issue)), self.config, self.log.append,
                                here=self.machine(HOSTED), sight=self.sight(HOSTED))

        def release() -> None:
            with contextlib.suppress(OrionError):
                reconciler.release(issue, force=True)

        self.sched.spawn(name, release)
        return name

    def _start_child(self, w: Worker, claim: Claim) -> None:
        w.claim = claim
        w.number = claim.number
        for o in self.workers.values():  # overlapping runs are the overlap invariant's business
            if (o is not w and o.child_started and o.number == w.number and o.gen == w.gen
                    and not self.child_alive(o) and not self.disrupted(w.number)):
                lower_won_late = o.claim is not None and o.claim.comment_id > claim.comment_id
                raise InvariantError(
                    f"issue {w.number}'s queueing {w.gen} was run twice ({o.name}, then {w.name}) "
                    f"with no recorded death requeueing it in between",
                    "lower-claim-wins-late" if lower_won_late and self.max_lag > LIST_SETTLE_S else None,
                )
        self._check_cancelled_run_not_rerun(w, claim)
        listed = self.listed_at.get(f"{w.name}.claim")
        for t in self.issue_log(claim.number).tombstones:
            before = (listed - t.created_at).total_seconds() if listed else 0.0
            if t.tombstone.token == claim.record.token and before > self.max_lag + SECOND:
                raise InvariantError(f"{w.name} started its child although its claim was released "
                                     f"{before:.0f}s before its last list ({t.tombstone.reason})")
        m = w.proc.machine
        h = Holding(self._gh(self.gh_of(claim.number)), claim, self.holding_config, self.log.append,
                    self.clock_of(m), self.machine(m), self.sight(m))
        if not HOLDER_CANCEL_READ:
            h._cancel_taken_off = lambda _issue, _gh: False  # type: ignore[method-assign]
        w.holding = h
        if h.lease_left() <= 0:  # the wrapper gives up before starting anything
            self._spawn_ending(w, "lease")
            return
        w.child_started, w.child_lease, w.started_at = True, h.lease_until, self.clock.monotonic()
        if w.lock_taken is not None and self.strict_locks and not self._person_since(
                claim.number, w.posted_at or 0.0, ("release", "unlock", "close", "delete", "cancel")):
            self.locks_taken.append(f"{w.lock_taken}, then {w.name} won and ran")
        self.next_pid += 1
        h.child_pid = w.child_pid = self.next_pid  # each claim's child its own (a drain's too)

        beat_gh = self._gh(self.gh_of(claim.number))  # the heartbeat thread's own client
        read_record = beat_gh.queue_history

        def queue_history(*args: str | int) -> QueueHistory:
            try:
                return read_record(*args)  # type: ignore[arg-type]
            except GitHubError:
                w.record_unread = True
                raise

        beat_gh.queue_history = queue_history  # type: ignore[method-assign]

        def beats() -> None:
            while not w.beat_stop:
                sent, sent_local = self.clock.monotonic(), h.clock.monotonic()
                w.record_unread = False
                try:
                    h.beat(beat_gh)
                    w.child_lease = h.lease_until  # after every beat, as the wrapper's on_beat does
                    if h.lost is None:
                        w.clean_beat, w.clean_local = sent, sent_local
                        if not w.record_unread:
                            w.judged_beat = sent
                except NotFound:
                    h.lost = h.lost or "the claim comment or the issue was deleted"
                except GitHubError:
                    pass
                if h.lost:
                    return
                self.clock.sleep(h.beat_interval())  # what the record promises (ADR 0045)

        self.sched.spawn(f"{w.name}.beat", beats)

    def _spawn_ending(self, w: Worker, due: str) -> None:
        """The wrapper's main loop takes an ending: it stops the child first, then writes."""
        w.ending, w.beat_stop, w.child_stopped = due, True, True
        h = w.holding
        assert h is not None
        code = w.exit_code

        def end() -> None:
            try:
                if due == "exited":
                    h.conclude(finished(self.config, code or 0))
                elif due == "signal":
                    # a cancelled Actions job: run.on_signal (default cancel, ADR 0043)
                    h.conclude(signalled(self.config, h.claim.record.attempt, "SIGTERM", started=True))
                elif due == "cancel":
                    h.conclude(cancelled(self.config, None))
                elif due == "timeout":  # run.timeout or run.idle_timeout: a failed attempt, handed back
                    h.conclude(timed_out(self.config, h.claim.record.attempt, "run.timeout reached"))
                elif due == "idle":  # a stopped child writes nothing: run.idle_timeout ends the run
                    h.conclude(timed_out(self.config, h.claim.record.attempt, "run.idle_timeout reached"))
                elif due == "guardian":  # the guardian was SIGKILLed: interrupted, handed back (ADR 0030)
                    why = "the guardian was killed"
                    h.conclude(handed_back(self.config, h.claim.record.attempt, why, 137))
                elif due == "lease" and h.lost is None and h.outage() is not None:
                    # GitHub did not answer (a beat stalled or failed): the wrapper's outage
                    # path, which records it without spending an attempt and hands back (ADR 0019).
                    def pause(seconds: float) -> bool:
                        w.outage_retries += 1
                        return bool(self.clock.sleep(seconds))

                    bound = outage_bound(self.config, h.promise.stale_after)
                    w.outage_recorded = h.record_outage("the lease ran out", bound, pause)
                else:
                    h.give_up(h.lost or "the lease ran out", h.released)
            except GitHubError:
                pass

        self.sched.spawn(f"{w.name}.end", end)

    # -- the driver's actions ----------------------------------------------------------------

    def runnable(self) -> list[str]:
        stalled = {a for w in self.workers.values() if w.stalled for a in w.actors()}
        return [a for a in self.sched.runnable()
                if a not in stalled and self.machine_of(a) not in self.paused]

    def step(self, actor: str) -> StepResult:
        op = self.sched.pending_op(actor)
        if op is not None and op[0] == SLEEP:
            wake = self.wake_at.pop(actor, 0.0)
            if wake > self.clock.monotonic():
                self.advance(wake - self.clock.monotonic())
        if op is not None and op[0] == "list_comments" and actor.endswith(".claim"):
            self.listed_at[actor] = self.server.clock.now  # a claimer's arbitration list
        if op is not None and op[0] == "edit_comment" and actor.endswith(".claim"):
            claimer = self.workers.get(actor.partition(".")[0])
            if claimer is not None:
                claimer.marked_at = self.server.clock.monotonic()
        p = self.passes.get(actor)
        if p is not None and op is not None and op[0] == "list_comments":
            n = int(op[1][0])  # type: ignore[index]
            repo = self.gh_of(n)
            lagging = set(repo.lagging())  # a pass waits for one only beside the queue label
            p.unlisted[n] = LAB.queue in repo.issue(n).labels and any(
                c.id in lagging for c in repo.comments(n))
        if p is not None and op is not None and op[0] == "list_issues" and op[1][0] == LAB.cancel:
            p.cancels_read = {n: self._cancels(n) for n in self.issue_numbers}
        if p is not None and p.began is None:
            p.began, p.began_at = self.clock.monotonic(), self.server.clock.now
            p.locked = frozenset(n for n in self.issue_numbers
                                 if LAB.working in self.gh_of(n).issue(n).labels)
            # Locked issues whose every claim is dead now: no child, and its wrapper exited,
            # crashed, or is stopped for good (SIGSTOP) or draining on (a drain's earlier claim)
            # ; `drained`: those among them whose wrapper process still lives.
            dead, drained = set(), set()
            for n in p.locked:
                ws = [w for w in self.workers.values() if w.number == n]
                if all(not self.child_alive(w) and (w.done or w.crashed or self.frozen(w)) for w in ws):
                    dead.add(n)
                    if any(not w.proc.gone for w in ws):
                        drained.add(n)
            p.dead, p.drained = frozenset(dead), frozenset(drained)
        result = self.sched.step(actor)
        self._after(actor, result)
        return result

    def advance(self, seconds: float) -> None:
        """Time passes; late writes land at their time at the latest."""
        end = self.server.clock.now.timestamp() + seconds
        while True:
            due = min((d for s in self.servers if (d := s.next_landing()) is not None), default=None)
            if due is None or due.timestamp() > end:
                break
            if due > self.server.clock.now:
                self.server.clock.advance(due.timestamp() - self.server.clock.now.timestamp())
            for s in self.servers:
                s.land_due()
        left = end - self.server.clock.now.timestamp()
        if left > 0:
            self.server.clock.advance(left)

    def land(self, index: int = 0) -> None:
        """A late write lands now."""
        server, i = self.delayed()[index]
        server.land(i)
        self.react()

    def fail(self, actor: str, kind: str, times: int = 1) -> None:
        self.server.fail_next(actor, kind, times)  # type: ignore[arg-type]

    def crash(self, w: Worker) -> None:
        """The wrapper process dies (SIGKILL, OOM, a runner wiped): its threads with it, and the
        guardian kills the child when it sees the wrapper's pipe close. A drain's earlier
        claims die with it."""
        w.proc.gone = True
        for o in self.workers.values():
            if o.proc is w.proc:
                o.crashed = True
                for a in o.actors():
                    if self._exists(a):
                        self.sched.crash(a)
        self._runs_over()

    def reboot(self, machine: str) -> None:
        self.resume_vm(machine)
        for w in self.workers.values():
            if w.proc.machine == machine and not w.proc.gone:
                self.crash(w)
        for name, p in self.passes.items():  # a pass running there dies with the machine
            if p.machine == machine and p.boot == self.boots[machine] and not self.sched.result(name).done:
                self.sched.crash(name)
        n = int(self.boots[machine].rsplit("-", 1)[1]) + 1
        self.boots[machine] = f"{machine}-boot-{n}"

    def child_exits(self, w: Worker, code: int) -> None:
        if self.child_alive(w):
            w.exit_code = code

    def time_limit(self, w: Worker) -> None:
        """run.timeout (or run.idle_timeout) passes: the wrapper's main loop stops the child and
        hands the run back as a failed attempt (services/wrapper.py `_time_limit`)."""
        if self.child_alive(w) and not (w.ending or w.done or w.crashed or self.frozen(w)):
            self._spawn_ending(w, "timeout")

    def guardian_dies(self, w: Worker) -> None:
        """The child's guardian is SIGKILLed (the OOM killer): the child dies with it
        (PDEATHSIG), what escaped its group is killed by the wrapper, which adopted it, and the
        wrapper records the run interrupted and hands it back (services/wrapper.py
        `_guardian_died`, ADR 0030). With the wrapper stopped, nothing of this happens until it
        runs again; the child is dead meanwhile all the same."""
        if self.child_alive(w) and not (w.ending or w.done or w.crashed):
            w.exit_code, w.guardian_dead = 137, True
            self.react()

    def child_halts(self, w: Worker) -> None:
        """Someone SIGSTOPs the child (job control cannot: it has no terminal, ADR 0030), or
        SIGCONTs it again. A stopped child is alive: its wrapper beats on and holds the issue,
        nobody may release it, and it writes nothing, so run.idle_timeout ends the run once
        the child has been silent that long on the wrapper's clock."""
        if w.halted_local is not None:
            w.halted_local = None
        elif self.child_alive(w):
            w.halted_local = self.clock_of(w.proc.machine).monotonic()

    def idle_for(self, w: Worker) -> float | None:
        """How long the child has written nothing (only a stopped child is silent)."""
        if w.halted_local is None:
            return None
        return self.clock_of(w.proc.machine).monotonic() - w.halted_local

    def signal(self, w: Worker) -> None:
        if not (w.crashed or w.done):
            w.signalled = True

    def _check_cancelled_run_not_rerun(self, w: Worker, claim: Claim) -> None:
        """A cancelled run runs again only on a person's word (ADR 0043): a child started after
        a run whose record on GitHub says it ended cancelled (the cancel label, or a cancelled
        Actions job with `on_signal: cancel`) needs a person's queueing or forced release since
        that run's claim. A queue label orion added (a stale requeue under its lock) is no such
        word, whatever the world counts as a queueing. Keyed to the record, as every reader goes
        by it: a run released before its ending wrote, or whose ending never wrote, was a death
        to them, and a death may be requeued."""
        n = claim.number
        earlier = [o for o in self.workers.values() if o is not w and o.number == n and o.child_started
                   and o.claim is not None and o.claim.comment_id < claim.comment_id]
        if not earlier or self.disrupted(n):
            return
        o = max(earlier, key=lambda x: x.claim.comment_id if x.claim else 0)
        log = self.issue_log(n)
        entry = log.find(o.token) if o.token else None
        if entry is None or self.ended_as(log, entry) is not State.CANCELLED:
            return
        if any(t.tombstone.token == o.token and t.tombstone.by != HOLDER_END for t in log.tombstones):
            return
        if self._person_since(n, o.posted_at or 0.0, ("requeue", "release")):
            return
        raise InvariantError(f"{w.name} ran issue {n} again after {o.name}'s run ended cancelled, with no "
                             f"person's queueing since")

    def _person(self, issue: int, what: str) -> None:
        self.person[issue].append((what, self.clock.monotonic()))

    def person_requeue(self, issue: int = ISSUE) -> None:
        """A person puts a finished or failed issue back in the queue (never a held one)."""
        gh = self.gh_of(issue)
        found = gh.issue(issue)
        if found.is_open and LAB.working not in found.labels and LAB.queue not in found.labels:
            for name in (LAB.ready, LAB.failed, LAB.cancel):
                gh.remove_label(issue, name)
            gh.add_label(issue, LAB.queue)
            self.gen[issue] += 1
            self.requeued_at[issue] = self.server.clock.now
            self.last_person[issue] = "requeue"
            self._person(issue, "requeue")

    def person_queues_running(self, issue: int = ISSUE) -> None:
        """A person puts the queue label on an issue under the lock: one more run after this one
        (ADR 0099). The run's fate, when it ends, comes off at the next pass, and the new queueing
        runs once. Not beside the cancel label: there a queue label is no wish to run (ADR 0053)."""
        gh = self.gh_of(issue)
        found = gh.issue(issue)
        if found.is_open and LAB.working in found.labels and not found.labels & {LAB.queue, LAB.cancel}:
            gh.add_label(issue, LAB.queue)
            self.gen[issue] += 1
            self.requeued_at[issue] = self.server.clock.now
            self.last_person[issue] = "requeue"
            self._person(issue, "requeue")

    def person_cancel(self, issue: int = ISSUE) -> None:
        self.gh_of(issue).add_label(issue, LAB.cancel)
        self.last_person[issue] = "cancel"
        self._person(issue, "cancel")

    def person_close(self, issue: int = ISSUE) -> None:
        self.gh_of(issue).close(issue)
        self._person(issue, "close")

    def person_reopen(self, issue: int = ISSUE) -> None:
        self.gh_of(issue).reopen(issue)
        self._person(issue, "reopen")

    def person_comments(self, issue: int = ISSUE) -> None:
        self.gh_of(issue).comment(issue, "any news?", PERSON)

    def person_deletes_comment(self, issue: int, pick: int) -> None:
        """A person deletes a comment (spam, or by mistake one of the bot's)."""
        comments = sorted(self.gh_of(issue).comments(issue), key=lambda c: c.id)
        if comments:
            gone = comments[pick % len(comments)]
            self.gh_of(issue).delete(gone.id)
            self._person(issue, "delete" if gone.author == BOT else "delete spam")
            if gone.author == BOT:
                self.deleted_by_person[(issue, gone.id)] = self.clock.monotonic()

    def person_unlocks(self, issue: int = ISSUE) -> None:
        """A person takes the lock label off by hand (a forced release without the command)."""
        if self.gh_of(issue).remove_label(issue, LAB.working):
            self._person(issue, "unlock")

    def person_labels(self, issue: int, name: str, add: bool) -> None:
        """A person adds or removes a queue/ready/failed label by hand."""
        if add:
            self.gh_of(issue).add_label(issue, name)
            if name == LAB.queue:
                self.gen[issue] += 1
        else:
            self.gh_of(issue).remove_label(issue, name)
        self._person(issue, f"{'add' if add else 'remove'} {name}")

    # -- reacting ------------------------------------------------------------------------------

    def _exists(self, actor: str) -> bool:
        try:
            self.sched.result(actor)
        except AssertionError:
            return False
        return True

    def _applied(self, actor: str, op: str, args: tuple[object, ...]) -> None:
        """GitHub applied a client's write: count queueings, note who took a lock off, and when
        a claim comment landed."""
        if any(s.delayed_landing for s in self.servers):
            self.landed_late.add(actor)
        self.wrote.add(actor)
        if op in ("add_labels", "remove_label"):
            names = args[1] if op == "add_labels" else (args[1],)
            self.label_writes.setdefault(int(args[0]), []).extend(  # type: ignore[call-overload]
                (actor, op, str(x), self.clock.monotonic()) for x in names)  # type: ignore[attr-defined]
        if op == "add_labels" and LAB.working in args[1] and actor.endswith(".claim"):  # type: ignore[operator]
            w = self.workers.get(actor.partition(".")[0])
            n = int(args[0])  # type: ignore[call-overload]
            if w is not None and LAB.cancel in self.gh_of(n).issue(n).labels:
                w.locked_under_cancel = n
        if op == "add_labels" and LAB.queue in args[1]:  # type: ignore[operator]
            self.gen[int(args[0])] += 1  # type: ignore[call-overload]
        elif op == "remove_label" and args[1] == LAB.cancel:
            p, n = self.passes.get(actor), int(args[0])  # type: ignore[call-overload]
            self.stale_uncancel[n] = p is not None and p.cancels_read.get(n, 0) < self._cancels(n)
        elif op == "remove_label" and args[1] == LAB.queue and actor.endswith(".claim"):
            # The unqueue takes the queueing that is on the issue when it lands (ADR 0048): a
            # claim posted before a requeue (a person's forced release) runs the new one. (One
            # that lands on no queue label took nothing, and its claimer gives up.)
            w, n = self.workers.get(actor.partition(".")[0]), int(args[0])  # type: ignore[call-overload]
            if w is not None and w.number == n:
                w.gen = self.gen[n]
        elif op == "remove_label" and args[1] == LAB.working:
            self.lock_removed_by[int(args[0])] = (actor, self.clock.monotonic())  # type: ignore[call-overload]
            if self.strict_locks:
                self._note_lock_taken(actor, int(args[0]))  # type: ignore[call-overload]
        elif op == "post_comment" and actor in self.passes:
            self.released_by.setdefault(int(args[0]), set()).add(actor)  # type: ignore[call-overload]
        elif op == "post_comment" and actor.endswith(".claim"):
            w = self.workers.get(actor.partition(".")[0])
            if w is not None and CLAIM_MARK in str(args[1]):  # `--next` posts one claim per issue it tries
                w.number, w.posted_at, w.gen = int(args[0]), self.clock.monotonic(), self.gen[int(args[0])]  # type: ignore[call-overload]

    def _note_lock_taken(self, actor: str, n: int) -> None:
        """Strict mode: orion (another claim's actor, or a pass) took the lock of the one live
        run on issue n, a run nobody released: no tombstone names it, and no person released,
        unlocked, closed, deleted or cancelled since its claim."""
        for c in self.workers.values():  # a claim posted, not decided yet: judged if it runs
            if (c.number == n and c.posted_at is not None and not c.child_started and not c.done
                    and not c.crashed and actor.partition(".")[0] != c.name):
                took = f"{actor} took the lock off issue {n} at t={self.clock.monotonic():g}"
                c.lock_taken = c.lock_taken or took
        live = [w for w in self.workers.values() if w.number == n and self.child_alive(w)]
        if len(live) != 1 or live[0].holding is None or live[0].holding.lost is not None:
            return
        w = live[0]
        if actor.partition(".")[0] == w.name or w.token is None:
            return
        if any(t.tombstone.token == w.token for t in self.issue_log(n).tombstones):
            return
        if self._person_since(n, w.posted_at or 0.0, ("release", "unlock", "close", "delete", "cancel")):
            return
        self.locks_taken.append(f"{actor} took {w.name}'s lock off issue {n} at t={self.clock.monotonic():g} "
                                "while it ran")

    def _after(self, actor: str, result: StepResult) -> None:
        name, _, part = actor.partition(".")
        w = self.workers.get(name)
        if w is not None and result.done:
            if part == "claim":
                if isinstance(result.result, Claim) and not w.crashed:
                    self._start_child(w, result.result)
                else:
                    w.done = True  # lost, refused or failed: the wrapper exits
                    if not w.drain:
                        w.proc.gone = True
                    if result.error is not None and not isinstance(result.error, (OrionError, Crashed)):
                        raise result.error
            elif part == "end":
                w.done = True
                if not w.drain:
                    w.proc.gone = True
                if result.error is not None and not isinstance(result.error, (OrionError, Crashed)):
                    raise result.error
                if self._exists(f"{name}.beat") and not self.sched.result(f"{name}.beat").done:
                    self.sched.crash(f"{name}.beat")  # the ending is over: no beat after it
        self._judge_losses()
        self._runs_over()
        self.react()
        if result.done and actor in self.passes:
            self._check_pass(actor, result)

    def react(self) -> None:
        """Each wrapper's main loop takes the ending that is due (unless it is stopped)."""
        for w in self.workers.values():
            if w.holding is None or w.ending or w.crashed or w.done or self.frozen(w):
                continue
            due = "guardian" if w.guardian_dead else ending_due(w.holding, w.exit_code,
                                                                15 if w.signalled else None, None,
                                                                idle_s=self.idle_for(w))
            if due is not None:
                self._spawn_ending(w, due)

    # -- invariants ----------------------------------------------------------------------------

    def issue_log(self, n: int) -> IssueLog:
        writes = self.gh_of(n).writes
        cached = self._logs.get(n)
        if cached is None or cached[0] != writes:
            cached = (writes, read_log(self.gh_of(n).comments(n), TRUSTED))
            self._logs[n] = cached
        return cached[1]

    def _cancels(self, n: int) -> int:
        return sum(1 for what, _ in self.person.get(n, ()) if what == "cancel")

    def _person_since(self, n: int, since: float, kinds: tuple[str, ...]) -> bool:
        return any(what in kinds and at >= since for what, at in self.person.get(n, ()))

    def _label_by(self, n: int, op: str, label: str, since: float = 0.0) -> list[str]:
        """Who wrote `op` of `label` on issue n since `since` (actors, oldest first)."""
        return [a for a, o, x, at in self.label_writes.get(n, ()) if o == op and x == label and at >= since]

    def _strand_cause(self, n: int) -> str | None:
        """A pass planned before the last claim took that claim's lock off and the claim's
        holder died before a beat could put it back (stale-unlock-strand), or a winner's unqueue
        came after a requeue and the winner died before its repair."""
        last = max((w.posted_at for w in self.workers.values() if w.number == n and w.posted_at is not None),
                   default=None)
        for actor, op, label, _ in self.label_writes.get(n, ()):
            p = self.passes.get(actor)
            if (p is not None and op == "remove_label" and label == LAB.working and last is not None
                    and p.began is not None and p.began <= last and self._strand_unvisited(n)):
                return "stale-unlock-strand"
        return "late-unqueue" if self._unqueued_after_requeue(n) else None

    def _strand_unvisited(self, n: int) -> bool:
        """No pass began while the newest open claim of issue n could be judged dead by its
        heartbeat and still listed it in its look for stranded issues (ADR 0072; how far back,
        `strand_since`, ADR 0081, less the few seconds a pass takes to reach its listing)."""
        open_claims = self.issue_log(n).open_claims()
        if not open_claims:
            return False
        c = max(open_claims, key=lambda e: e.comment_id)
        lo = self.server_stamp_monotonic(c.updated_at) + max(self.config.stale_after, c.record.stale_after)
        cfg = self.config

        def sees(p: Pass) -> bool:
            if p.forced or p.began is None or p.began_at is None or p.began < lo:
                return False
            since = strand_since(p.began_at, cfg.stale_after, cfg.longest_stale_after, p.previous,
                                 RECENT_MARGIN_S)
            return c.updated_at >= since + timedelta(seconds=15.0)

        return not any(sees(p) for p in self.passes.values())

    def _unqueued_after_requeue(self, n: int) -> bool:
        """Whether a winner's queue-label removal came after a pass or a person's release took
        the lock off or put the queue label on (audit finding 3)."""
        writes = self.label_writes.get(n, [])
        for i, (actor, op, label, _) in enumerate(writes):
            if actor.endswith(".claim") and op == "remove_label" and label == LAB.queue and any(
                a in self.passes
                and ((o == "remove_label" and x == LAB.working) or (o == "add_labels" and x == LAB.queue))
                for a, o, x, _ in writes[:i]
            ):
                return True
        return False

    def _late_claim_unqueue(self, n: int) -> str | None:
        """A claimer's queue-label removal landed late (after it gave up on the request) since a
        person's last requeue: its repair (ADR 0025) ran before it landed (replay (18, 58))."""
        since = max((at for what, at in self.person[n] if what == "requeue"), default=0.0)
        late = [a for a in self._label_by(n, "remove_label", LAB.queue, since)
                if a.endswith(".claim") and a in self.landed_late]
        return "late-unqueue" if late else None

    def _paused_writer(self, n: int) -> str | None:
        """A holder of issue n whose VM paused while it held the issue wrote its labels."""
        writers = {a.partition(".")[0] for a, _, _, _ in self.label_writes.get(n, ())
                   if a.endswith((".end", ".beat"))}
        for name in writers:
            w = self.workers[name]
            m = w.proc.machine
            if w.started_at is not None and self.pause_ends.get(m, -1.0) > w.started_at:
                return "paused-vm"
        return None

    def _duplicate(self, n: int) -> str | None:
        tokens = [c.record.token for c in self.issue_log(n).claims]
        return "duplicate-claim" if len(tokens) != len(set(tokens)) else None

    def _stale_pass_write(self, n: int) -> bool:
        """Whether a pass wrote a label on issue n after a person's act there that came after
        the pass began: its plan could not know of it (labels have no compare-and-swap)."""
        acts = [at for _, at in self.person.get(n, ())]
        for actor, _, _, at in self.label_writes.get(n, ()):
            p = self.passes.get(actor)
            if p is not None and p.began is not None and any(p.began <= t <= at for t in acts):
                return True
        return False

    def _judge_losses(self) -> None:
        """A live run may be stopped by another actor's write only for a person's cancel, forced
        release, unlock, close or deletion, or because an earlier claim holds the issue (two
        runs at once: the overlap invariant bounds that)."""
        for w in self.workers.values():
            h = w.holding
            if h is None or h.lost is None or w.loss_judged:
                continue
            w.loss_judged = True
            if not self.child_alive(w) or w.number is None or self.paused_since_beat(w):
                continue
            since = w.posted_at or 0.0
            if self._person_since(w.number, since, ("release", "unlock", "close", "delete", "cancel")):
                continue
            if any(t.tombstone.token == w.token and t.tombstone.by == "release"
                   for t in self.issue_log(w.number).tombstones):
                continue  # a person's forced release, whenever they started the command
            if "earlier" in h.lost:
                continue
            who = self.lock_removed_by.get(w.number)
            by = f" (the lock was last removed by {who[0]} at t={who[1]:g})" if who else ""
            hole = None
            remover = self.workers.get(who[0].partition(".")[0]) if who is not None else None
            if who is not None and remover is not None and remover is not w and (
                who[0] in self.landed_late or (who[0].endswith(".end") and remover.outage_retries > 0)
            ):
                hole = "stolen-by-ending"  # a late write, or the outage path's retry (findings 2, 8)
            elif who is not None and who[0] in self.passes:
                began = self.passes[who[0]].began
                if began is not None and began <= since:
                    hole = "stale-pass-unlock"
                elif self.max_lag > 1.0:
                    hole = "pass-unlocks-unlisted-claim"
            raise InvariantError(f"{w.name}'s live run on issue {w.number} was stopped by another "
                                 f"actor's write: {h.lost}{by}", hole)

    def check(self) -> None:
        if self.locks_taken:
            raise InvariantError(f"strict mode: {self.locks_taken[0]} (ADR 0065)")
        now = self.clock.monotonic()
        for n in self.issue_numbers:
            log = self.issue_log(n)
            forced = {t.tombstone.token for t in log.tombstones if t.tombstone.by == "release"}
            live = [w for w in self.workers.values() if w.number == n and self.child_alive(w)]
            # A run whose claim comment a person deleted, or whose claim a person released by
            # force, was taken over by hand: a new claim cannot see it, and it must stop at its
            # next beat instead (ADR 0068; _check_taken_over, _check_releases_honoured).
            self._check_overlap(n, [w for w in live if w.token not in forced and not self.taken_over(w)
                                    and not self.paused_since_beat(w)])
            self._check_taken_over(live)
            # A VM paused since its beat: its boot clock, its lease and its guardian stood still
            # (ADR 0047); what it may still do on resume is ADR 0055's bound on GitHub's clock.
            self._check_promises(log, [w for w in live if not self.paused_since_beat(w)])
            by_token = {w.token: w for w in self.workers.values() if w.token}
            started = {w.token for w in self.workers.values() if w.child_started}
            for c in log.claims:
                w = by_token.get(c.record.token)
                if (w is not None and w.signalled and w.ending == "signal"
                        and c.record.state is State.INTERRUPTED and c.record.counts_attempt):
                    # run.on_signal: cancel (the model's default): a cancelled Actions job
                    # cancels its run, as the cancel label does; it never hands the issue back
                    # and spends no attempt (ADR 0043). An outage's record spends none either.
                    raise InvariantError(f"{w.name} was signalled and handed issue {n} back")
            for t in log.tombstones:
                if t.comment_id in self._seen_tombstones:
                    continue
                self._seen_tombstones.add(t.comment_id)
                tomb = t.tombstone
                w = by_token.get(tomb.token)
                if (
                    tomb.action not in (ReleaseAction.UNLOCK, ReleaseAction.RELEASE)
                    and w is not None
                    and self.child_alive(w)
                    and not self.paused_since_beat(w)
                ):
                    raise InvariantError(f"{w.name}'s live run was released: {tomb.reason}")
                if tomb.counts_attempt and tomb.token not in started:
                    raise InvariantError(f"an attempt was charged for a claim that never ran ({tomb.reason})")
            self._check_releases_honoured(log, live)
            for w in live:
                self._check_lease(w)
                self._check_idle(w)
                self._check_claim_after_cancel(w)
            cancels = [at for what, at in self.person[n] if what == "cancel"]
            if cancels and self.last_person.get(n) == "cancel":
                for w in live:
                    h = w.holding
                    assert h is not None
                    after = w.judged_beat is not None and w.judged_beat >= cancels[-1] + SECOND
                    if after and not h.cancel_requested:
                        # stale-sweep-uncancel: the cancel label was last taken off by a
                        # sweep that listed the cancel label before this cancel came
                        raise InvariantError(f"a person's cancel of issue {n} was not honoured: {w.name} "
                                             f"beat at t={w.judged_beat:g} after it and runs on",
                                             "stale-sweep-uncancel" if self.stale_uncancel.get(n) else None)
        del now

    def _check_claim_after_cancel(self, w: Worker) -> None:
        """A claim made after a person's cancel starts no child (ADR 0066): a claimer whose lock
        write landed while the issue carried the cancel label (only a person adds it) read the
        cancel in that write's answer, and must give up before starting anything. Checked at
        every step, so a child started for even one step is caught, not only one that outlives
        its first beat (which the cancel-honoured check bounds)."""
        if w.locked_under_cancel is not None and w.locked_under_cancel == w.number:
            raise InvariantError(f"{w.name} started a child on issue {w.number} although its lock landed "
                                 f"beside a person's cancel (a claim after a cancel starts no child)")

    def taken_over(self, w: Worker) -> bool:
        """A person deleted this run's claim comment: no claimer can list it any more."""
        return w.claim is not None and (w.number, w.claim.comment_id) in self.deleted_by_person

    def _check_taken_over(self, live: list[Worker]) -> None:
        """A person who deletes a live run's claim comment takes the issue over by hand (with
        the lock off and the queue label on, the next claim sees nothing of the old run): the
        old run stops at its first beat sent after the deletion (plus the lag and a second of
        GitHub's rounding), as after a forced release (ADR 0068)."""
        for w in live:
            if w.clean_beat is None or not self.taken_over(w):
                continue
            assert w.claim is not None
            deleted = self.deleted_by_person[(w.number, w.claim.comment_id)]
            if w.clean_beat >= deleted + self.max_lag + 2 * SECOND:
                raise InvariantError(f"{w.name} beat at t={w.clean_beat:g}, after a person deleted its claim "
                                     f"comment at t={deleted:g}, and runs on")

    def _check_releases_honoured(self, log: IssueLog, live: list[Worker]) -> None:
        """A release is honoured: a holder whose claim a tombstone names stops at its first beat
        sent after the tombstone could be listed (it landed, plus `max_lag`, plus a second of
        GitHub's rounding), whoever released it and whatever the labels say meanwhile."""
        for w in live:
            if w.clean_beat is None or w.token is None:
                continue
            for t in log.tombstones:
                if t.tombstone.token != w.token:
                    continue
                landed = self.server_stamp_monotonic(t.created_at)
                if w.clean_beat >= landed + self.max_lag + 2 * SECOND:
                    raise InvariantError(f"{w.name} beat at t={w.clean_beat:g}, after its claim was released "
                                         f"at t={landed:g} ({t.tombstone.reason}), and runs on")

    def _check_lease(self, w: Worker) -> None:
        """Only a beat that found the claim still ours renews the lease: the guardian kills the
        child by renew_deadline (plus the kill grace) after the last such beat was sent, on the
        machine's boot clock, even when the wrapper itself is stopped."""
        assert w.claim is not None
        since = w.clean_local if w.clean_local is not None else w.claim.lease_start
        now = self.clock_of(w.proc.machine).monotonic()
        # The lease of the promise that beat made (ADR 0045: a stretched beat's is longer).
        renew = renew_deadline(w.holding.promise.stale_after) if w.holding else self.config.renew_deadline
        if now >= since + renew + self.config.kill_grace:
            raise InvariantError(f"{w.name}'s child outlives its lease: its last beat that found the claim "
                                 f"its own was sent at t={since:g} (its boot clock), now t={now:g}")

    def _check_idle(self, w: Worker) -> None:
        """A stopped child holds its issue only until run.idle_timeout: once it has been silent
        that long, a wrapper that runs has ended the run (its main loop reacts after every
        action, so at once)."""
        idle = self.idle_for(w)
        if idle is not None and idle >= IDLE_TIMEOUT and not (w.ending or self.frozen(w)):
            raise InvariantError(f"{w.name}'s stopped child has been silent {idle:.0f}s, past "
                                 f"run.idle_timeout ({IDLE_TIMEOUT:g}s), and its run goes on")

    def server_stamp_monotonic(self, stamp: datetime) -> float:
        """The server monotonic time of a GitHub stamp (whole seconds round it down)."""
        return self.server.clock.monotonic() - (self.server.clock.now - stamp).total_seconds()
    def _check_promises(self, log: IssueLog, live: list[Worker]) -> None:
        """Holder and judge agree (ADR 0045): a live holder's lease (which its guardian
        enforces) ends no later than a judge may presume it dead by what its record on GitHub
        promises: the comment's update time plus the record's stale_after, less GitHub's
        whole-second rounding. Only of a claim that still holds the issue: once a tombstone
        names it, no judge goes by its promise (IssueLog.open_claims leaves it out), and the
        releaser's rewrite of its visible line may restate an older promise from the record as
        it listed it (ADR 0064). Nor of a run whose claim comment a person deleted: its promise
        went with the comment (a duplicate its lost POST left, ADR 0049, may still show the token
        with the claimer's first record), and it stops at its next beat (`_check_taken_over`,
        ADR 0068; seed 36 episode 52)."""
        released = log.released_tokens()
        for w in live:
            h = w.holding
            if self.taken_over(w):
                continue
            entry = log.find(w.token) if h is not None and w.token else None
            if h is None or entry is None or not entry.record.state.is_open or w.token in released:
                continue
            left = h.lease_until - self.clock_of(w.proc.machine).monotonic()  # the lease is on its boot clock
            lease_end = self.server.clock.now + timedelta(seconds=left)
            rounding = SECOND if self.server.clock.whole_seconds else 0.001
            deadline = entry.updated_at + timedelta(seconds=entry.record.stale_after - rounding)
            if lease_end > deadline:
                raise InvariantError(
                    f"{w.name}'s lease outlasts the promise its record states: it holds until "
                    f"{(lease_end - deadline).total_seconds():.1f}s after a judge may presume it dead "
                    f"(record: interval {entry.record.interval:g}s, "
                    f"stale_after {entry.record.stale_after:g}s)"
                )

    def _check_overlap(self, n: int, live: list[Worker]) -> None:
        """Two children of one issue may overlap only until the later claim's first beat sent
        after every claim could be listed (its comment landed, plus `max_lag`, plus a second
        of GitHub's rounding): that beat must see the earlier claim and stop. The bound is one
        beat plus the allowed lag."""
        if len(live) < 2:
            return
        if self.max_lag <= LIST_SETTLE_S:  # lag within the settle: no overlap at all (design section 3)
            raise InvariantError(f"two runs work issue {n} at once: {[w.name for w in live]} (list lag "
                                 f"at most {self.max_lag:g}s, within the settle)")
        live = sorted(live, key=lambda w: w.claim.comment_id if w.claim else 0)
        listable = max(w.posted_at or 0.0 for w in live) + self.max_lag + SECOND
        for w in live[1:]:
            if w.clean_beat is not None and w.clean_beat >= listable:
                names = [x.name for x in live]
                raise InvariantError(
                    f"two runs work issue {n} at once: {names}; {w.name} beat at t={w.clean_beat:g}, "
                    f"after every claim was listable (t={listable:g}), and did not stop"
                )

    def _check_pass(self, name: str, result: StepResult) -> None:
        """A dead holder is released within stale_after plus one pass: a pass that began after
        every claim on a locked issue was dead and stale, and met no failure, takes the lock off."""
        p = self.passes[name]
        if p.forced or p.began_at is None or result.error is not None or name in self.server.failed_actors:
            return
        if self.delayed() or any(a.endswith(".claim") for a in self.sched.runnable()):
            return
        if any(o is not p and o.began is not None and o.began <= p.began and not self.sched.result(a).done
               for a, o in self.passes.items()):
            return  # an earlier pass still at work: a pass whose release duplicates its leaves it the labels
        for n in p.dead:
            if LAB.working not in self.gh_of(n).issue(n).labels or self.disrupted(n):
                continue
            if p.unlisted.get(n):  # its last listing missed a comment, maybe a claim (ADR 0054)
                continue
            if any(a != name and (not self.sched.result(a).done or self.sched.result(a).crashed
                                  or a in self.server.failed_actors
                                  or (a in self.passes and self.passes[a].unlisted.get(n)))
                   for a in self.released_by.get(n, ())):
                # another pass's tombstone came first, and this one left it the labels (ADR 0006):
                # that pass is still at work, was killed (its machine rebooted: GraphQL seed 198
                # episode 119), met a failure, or left the labels because its last listing missed
                # a comment (ADR 0054): the next pass finishes its move. (Default seed 31 episode
                # 101, once ADR 0090 stopped the first pass's rewrite of the dead holder's record,
                # which had made the holder look fresh to this check.)
                continue
            if any(a != name and a in self.passes and not self.sched.result(a).done and p.began <= at
                   for a, _, _, at in self.label_writes.get(n, ())):
                # another pass, still at work, moved this issue's labels while this one moved them
                # (its cancel handling took the queue label this pass's unlock looks for, ADR 0067):
                # that pass, or the next, finishes (default seed 127 episode 157)
                continue
            ws = [w for w in self.workers.values() if w.number == n]
            if any(self.child_alive(w) or not (w.done or w.crashed or self.frozen(w)) for w in ws):
                continue
            claims = self.issue_log(n).claims
            newest = max((c.updated_at for c in claims), default=None)
            if newest is None:
                continue
            # the judge waits for the larger of its stale_after and the record's promise
            stale_after = max([self.config.stale_after, *(c.record.stale_after for c in claims)])
            # and for a winner that never started, until its unqueue can no longer land (ADR 0072,
            # `unqueue_in_flight`): longer than stale_after where stale_after is under 27 s
            # (the adaptive world's 12 s: seed 11 episode 28, ADR 0106)
            unqueued = max((c.created_at + timedelta(seconds=writes_land_within(
                c.record, self.config.stale_after, LABEL_LANDING_MARGIN_S) - stale_after)
                for c in claims if c.record.state is State.RUNNING and c.record.child_pid is None),
                default=newest)
            if (p.began_at - max(newest, unqueued)).total_seconds() > stale_after + self.max_lag + 2 * SECOND:
                drained = n in p.drained
                raise InvariantError(
                    f"a dead holder was kept: issue {n} is still locked after pass {name}, which began "
                    f"{(p.began_at - newest).total_seconds():.0f}s after its last claim write (stale_after "
                    f"{stale_after:g}s)",
                    "drain-identity" if drained else self._duplicate(n),
                )

    def quiesce(self, passes: int = 4) -> None:
        """End the episode: every wrapper dies, late writes land, time passes, reconcile passes
        run to the end."""
        for m in list(self.paused):
            self.resume_vm(m)
        for w in self.workers.values():
            w.stalled = False
            if not w.crashed:
                self.crash(w)
        for a in self.runnable():
            self.sched.crash(a)
        self.advance(self.server.request_timeout + 1)
        # the longest promise any record may make (ADR 0045)
        c = self.config
        longest = c.heartbeat_max_interval * c.stale_after / c.heartbeat_interval
        for _ in range(passes):
            self.advance(longest + self.max_lag + 1)
            r = self.spawn_reconciler(HOSTED)
            while not self.sched.result(r).done:
                self.step(r)
                self.check()

    def check_settled(self) -> None:
        for n in self.issue_numbers:
            self._check_settled(n)

    def disrupted(self, n: int) -> bool:
        """A person took a lock off, deleted one of the bot's comments or moved a label by
        hand: what the labels say after that is theirs to answer for."""
        return any(what in ("unlock", "delete") or what.startswith(("add ", "remove "))
                   for what, _ in self.person[n])

    @staticmethod
    def ended_as(log: IssueLog, entry: ClaimEntry) -> State:
        """The state a run ended in, as every reader takes it (core/plan.py's `_as_ended`): a
        holder's own end marker (by HOLDER_END) over its claim record, which a beat that landed
        after the ending's final write may have turned back into `running` (ADR 0069)."""
        marker = next((t.tombstone for t in log.tombstones
                       if t.tombstone.token == entry.record.token and t.tombstone.by == HOLDER_END), None)
        ended = END_STATES.get(marker.action) if marker is not None else None
        return ended or entry.record.state

    def _check_settled(self, n: int) -> None:
        issue = self.gh_of(n).issue(n)
        labels = issue.labels
        if not issue.is_open:
            if LAB.working in labels:
                raise InvariantError(f"a closed issue keeps the lock: {sorted(labels)}")
            return
        if self.disrupted(n):
            return
        if LAB.working in labels:
            raise InvariantError(f"the lock is still on issue {n} after every holder died: {sorted(labels)}",
                                 self._duplicate(n))
        if LAB.cancel in labels:
            # Every pass's sweep carries a cancel out: one still on after the quiesce's passes
            # was left by orion (ADR 0088: its stale put-back, swept again at every pass).
            raise InvariantError(f"issue {n} keeps the cancel label after every pass: {sorted(labels)}")
        log = self.issue_log(n)
        fates = labels & {LAB.queue, LAB.ready, LAB.failed}
        cancelled_last = self.last_person.get(n) == "cancel"
        stale = "stale-pass-repair" if self._stale_pass_write(n) else None
        if len(fates) > 1 and not self._person_since(n, 0.0, ("release",)):
            raise InvariantError(f"issue {n} carries more than one of queue/ready/failed: {sorted(labels)}",
                                 stale or self._paused_writer(n))
        if cancelled_last and LAB.queue in labels:
            cancel_at = max(at for what, at in self.person[n] if what == "cancel")
            writes = [x for x in self.label_writes.get(n, ()) if x[3] >= cancel_at]
            passes = any(
                a in self.passes and o == "add_labels" and x == LAB.queue
                and any(b in self.passes and b != a and o2 == "remove_label" and x2 in (LAB.cancel, LAB.queue)
                        for b, o2, x2, _ in writes[:i])  # another pass's cancel sweep had begun
                for i, (a, o, x, _) in enumerate(writes)
            )
            requeuers = self._label_by(n, "add_labels", LAB.queue, cancel_at)
            by_holder = any(a.endswith((".end", ".beat")) for a in requeuers)
            repaired = "repair-undoes-cancel" if by_holder else None
            swept = "stale-sweep-uncancel" if self.stale_uncancel.get(n) else None
            raise InvariantError(f"a person's cancel of issue {n} was undone: {sorted(labels)}",
                                 "requeue-over-cancel" if passes else repaired or swept or stale)
        if not fates:
            # The last claim that got past claiming decides: a claim still `claiming` whose
            # claimer died holds nothing (a late claimer that read the issue as queued before a
            # cancel, ADR 0043); a late unqueue of one that did is the late-unqueue hole below.
            last = next((c for c in reversed(log.claims)
                         if c.record.state not in (State.LOST, State.CLAIMING)), None)
            if not cancelled_last and (last is None or self.ended_as(log, last) is not State.CANCELLED):
                raise InvariantError(f"stranded: open issue {n} has none of queue/ready/failed: "
                                     f"{sorted(labels)}",
                                     self._strand_cause(n))
        if LAB.queue in labels and not cancelled_last:
            # A run that ended cancelled (a cancelled Actions job, run.on_signal: cancel, or the
            # cancel label) stays out of the queue until a person puts it back (ADR 0043, ADR
            # 0069: every reader takes the end from the holder's end marker too).
            ran_last = next((c for c in reversed(log.claims)
                             if c.record.state not in (State.LOST, State.CLAIMING)), None)
            requeued = self.requeued_at.get(n)
            # A release decides instead: a pass's of a holder it judged dead before the holder
            # wrote its end (a stall), or a person's by force, which requeues (ADR 0049), even
            # one that listed no claim yet and so posted no tombstone (GraphQL-mode seed 172
            # episode 89: the person's release took the lock off and left the queue label).
            released = ran_last is not None and (any(
                (t.tombstone.token == ran_last.record.token and t.tombstone.by != HOLDER_END)
                or (t.tombstone.by == "release" and t.comment_id > ran_last.comment_id)
                for t in log.tombstones) or any(
                w.token == ran_last.record.token and w.posted_at is not None
                and self._person_since(n, w.posted_at, ("release",)) for w in self.workers.values()))
            # The world knows why the run ended; GitHub knows it once the ending wrote something. A
            # wrapper killed after the signal and before any write of its ending is a death to every
            # reader, and a death may be requeued (default GraphQL seed 156 episode 120: a stale
            # requeue landing after the run's claim, the run signalled and killed at once).
            by_signal = ran_last is not None and any(
                w.token == ran_last.record.token and w.ending == "signal" and f"{w.name}.end" in self.wrote
                for w in self.workers.values())
            cancelled = ran_last is not None and (
                by_signal or self.ended_as(log, ran_last) is State.CANCELLED)
            if (cancelled and not released and ran_last is not None
                    and (requeued is None or requeued < ran_last.created_at)):
                raise InvariantError(f"issue {n}'s cancelled run was queued again: {sorted(labels)}", stale)
        if n in self.requeued_at and LAB.queue not in labels and not cancelled_last:
            from orion_action.core.arbitration import ran

            since = self.requeued_at[n] - timedelta(seconds=SECOND)  # stamps may have whole seconds
            worked = [c for c in log.claims if c.created_at >= since and ran(c)]
            if not worked:
                raise InvariantError(f"a person's requeue of issue {n} was lost: {sorted(labels)}",
                                     self._late_claim_unqueue(n))
        for w in self.workers.values():
            if w.outage_recorded and w.number == n and w.token is not None:
                entry = log.find(w.token)
                ends = [t for t in log.tombstones
                        if t.tombstone.token == w.token and t.tombstone.by == HOLDER_END]
                excused = entry is not None and (
                    (entry.record.state is State.INTERRUPTED and not entry.record.counts_attempt)
                    or any(not t.tombstone.counts_attempt for t in ends)
                )
                if not excused:
                    raise InvariantError(f"{w.name}'s outage spent an attempt on issue {n}")

    def close(self) -> None:
        self.sched.close()


__all__ = ["CLONE", "CONFIG", "HOSTED", "ISSUE", "MACHINES", "START", "InvariantError", "World"]
