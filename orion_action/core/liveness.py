"""The liveness judgement: is the holder of a claim still alive? (docs/design.md section 5)

A pure function of the record, what the judge could observe, and GitHub's clock. A claim is
dead when its process is provably gone (the wrapper, or the claim's own command while the
wrapper went on), and only then; the heartbeat decides where the process table cannot be
seen, and a live pid never outlasts it. Anything uncertain is `unknown`: reported, never
released.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from orion_action.core.record import ClaimRecord, Holder, State

# A process's start time as psutil reports it wobbles by a few milliseconds between reads.
START_TIME_TOLERANCE_S = 1.0
# updated_at later than GitHub's own Date header by more than this is "from the future".
FUTURE_TOLERANCE_S = 30.0
# Where the kernel has no boot id, the machine adapter records the boot time instead, as
# "boot-time-<seconds since the epoch>". It moves when the wall clock is stepped, so two such
# ids this close are one boot; no machine reboots faster than this.
BOOT_TIME_PREFIX = "boot-time-"
BOOT_TIME_TOLERANCE_S = 60.0
# A holder that beats on time never looks older than this many intervals.
MISSED_BEAT_FACTOR = 1.5


class Liveness(str, Enum):
    ALIVE = "alive"
    DEAD = "dead"
    FINISHED = "finished"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Verdict:
    liveness: Liveness
    reason: str
    # Dead because the judge saw the holder's process gone (its own process table, a reboot),
    # not only silent: a silent holder may be cut off and still write its own account (ADR 0090).
    holder_gone: bool = False

    @property
    def is_dead(self) -> bool:
        return self.liveness is Liveness.DEAD


@dataclass(frozen=True)
class Machine:
    """The judge's own machine."""

    host: str
    boot_id: str
    machine_id: str
    pid_ns: str


@dataclass(frozen=True)
class ProcessSighting:
    """What the judge's process table says about a record's pids (same process table only)."""

    wrapper_start: float | None  # start time of the process now at the wrapper's pid; None: none
    child_group_alive: bool = False  # the child's process group still has members
    wrapper_start_ticks: int | None = None  # its start in clock ticks since boot, where known


@dataclass(frozen=True)
class Observations:
    machine: Machine | None = None
    processes: ProcessSighting | None = None  # None: not read, or the holder is hidden from us
    run_status: str | None = None  # the recorded Actions run's status; None: no observation


def _same_start(p: ProcessSighting, h: Holder) -> bool:
    """The process at the recorded pid is the recorded one: exact ticks where both sides have
    them (immune to wall-clock steps), else start times within a tolerance."""
    if p.wrapper_start_ticks is not None and h.pid_start_ticks is not None:
        return p.wrapper_start_ticks == h.pid_start_ticks
    return p.wrapper_start is not None and abs(p.wrapper_start - h.pid_start) <= START_TIME_TOLERANCE_S


def same_boot(recorded: str, here: str) -> bool | None:
    """Whether two boot ids name one boot of a kernel; None when either is unknown (empty)."""
    if not recorded or not here:
        return None
    if recorded.startswith(BOOT_TIME_PREFIX) and here.startswith(BOOT_TIME_PREFIX):
        try:
            then = float(recorded[len(BOOT_TIME_PREFIX) :])
            now = float(here[len(BOOT_TIME_PREFIX) :])
        except ValueError:
            return recorded == here
        return abs(then - now) <= BOOT_TIME_TOLERANCE_S
    return recorded == here


def same_machine(holder: Holder, machine: Machine | None) -> bool:
    """Same machine id and host name, both known. Clones of one image can share both, so this
    alone never proves anything; it only qualifies the stronger checks below."""
    return (
        machine is not None
        and bool(holder.machine_id)
        and holder.machine_id == machine.machine_id
        and bool(holder.host)
        and holder.host == machine.host
    )


def table_id(pid_ns: str) -> str:
    """The process table's random id in a record's `pid_ns` ("<namespace inode>:<id>", ADR
    0028); "" for none, as in an older record's bare inode, which every host's initial PID
    namespace shares (the kernel constant 4026531836) and snapshot clones do too."""
    _, colon, ident = pid_ns.partition(":")
    return ident if colon else ""


def same_process_table(holder: Holder, machine: Machine | None) -> bool:
    """Same machine, same kernel boot *and* same process table, each known on both sides: only
    then do pids mean the same process. Anything less (two hosts with no readable namespace id
    booted in the same minute, VMs restored from one memory snapshot) could be two process
    tables that would each judge the other's live holder dead at once. One table is proven
    only by its random id, never by ids a clone shares."""
    return (
        machine is not None
        and same_machine(holder, machine)
        and same_boot(holder.boot_id, machine.boot_id) is True
        and bool(table_id(holder.pid_ns))
        and holder.pid_ns == machine.pid_ns
    )


def rebooted(holder: Holder, machine: Machine | None) -> bool:
    """Same machine, new boot: every process of the claim is gone, *if* this really is the same
    machine. Clones can share machine id and host name, so the judgement also needs a missed
    beat (see judge)."""
    return same_machine(holder, machine) and same_boot(holder.boot_id, machine.boot_id) is False  # type: ignore[union-attr]


def judge(
    record: ClaimRecord | None,
    heartbeat_at: datetime | None,
    now: datetime,
    stale_after: float,
    seen: Observations,
) -> Verdict:
    """Judge one claim. `heartbeat_at` is the comment's `updated_at` and `now` the `Date` header
    of the same response, both GitHub's clock; `stale_after` is the judge's configured value
    (the larger of it and the holder's own is used)."""
    if record is None:
        return Verdict(Liveness.UNKNOWN, "no trusted claim record on the issue")
    if not record.state.is_open:
        return Verdict(Liveness.FINISHED, _finished_reason(record))
    h = record.holder
    if heartbeat_at is None:
        return Verdict(Liveness.UNKNOWN, "the claim comment has no update time")
    age = (now - heartbeat_at).total_seconds()
    if age < -FUTURE_TOLERANCE_S:
        return Verdict(Liveness.UNKNOWN, f"the heartbeat is {-age:.0f}s in the future by GitHub's clock")
    limit = max(stale_after, record.stale_after)
    missed = age > MISSED_BEAT_FACTOR * record.interval
    note = ""
    if same_process_table(h, seen.machine) and seen.processes is None:
        # The holder's own process table, but it hides the holder from us (another user under
        # /proc hidepid): no observation, as from another machine; the weaker ones decide.
        note = "; this machine's process table does not show the holder"
    elif same_process_table(h, seen.machine):
        p = seen.processes
        assert p is not None
        wrapper_runs = p.wrapper_start is not None and _same_start(p, h)
        # The claim's own process: a drain's wrapper outlives each of its claims, so a claim
        # whose command was started lives only while that command's process group does.
        claim_runs = record.child_pid is None or p.child_group_alive
        if wrapper_runs and claim_runs and age <= limit:
            return Verdict(Liveness.ALIVE, f"wrapper pid {h.pid} is running on this machine")
        if wrapper_runs and claim_runs:
            # Past its own lease the holder has fenced itself: a live pid proves nothing more
            # (ADR 0028); the heartbeat rule below says dead.
            note = f"; wrapper pid {h.pid} still runs but no longer beats for this claim"
        elif p.child_group_alive:
            return Verdict(
                Liveness.UNKNOWN,
                f"wrapper pid {h.pid} is gone but its child's process group "
                f"{record.child_pid} is still running",
            )
        elif wrapper_runs and missed:
            return Verdict(
                Liveness.DEAD,
                f"wrapper pid {h.pid} runs on, but this claim's command (process group "
                f"{record.child_pid}) is gone and a beat was missed",
            )
        elif not wrapper_runs:
            if p.wrapper_start is not None:
                return Verdict(
                    Liveness.DEAD, f"pid {h.pid} now belongs to another process (the wrapper is gone)", True
                )
            return Verdict(Liveness.DEAD, f"wrapper pid {h.pid} is not running on this machine", True)
        # Else the wrapper runs on and this claim's command is gone, but no beat was missed yet
        # (a run that is ending): the heartbeat decides.
    if rebooted(h, seen.machine) and age > MISSED_BEAT_FACTOR * record.interval:
        return Verdict(
            Liveness.DEAD, f"host {h.host} rebooted since the claim (new boot id) and missed a beat", True
        )
    if record.actions and seen.run_status == "completed" and age > record.stale_after:
        # Not before the holder's own promise has run out: a partitioned self-hosted runner's
        # job is failed by GitHub while its wrapper and command go on (ADR 0029).
        return Verdict(Liveness.DEAD, f"Actions run {record.actions.run_id} has completed")
    shown_age = max(age, 0.0)
    if age > limit:
        return Verdict(Liveness.DEAD, f"no heartbeat for {shown_age:.0f}s (stale after {limit:g}s){note}")
    return Verdict(
        Liveness.ALIVE,
        f"last heartbeat {shown_age:.0f}s ago on GitHub's clock (stale after {limit:g}s){note}",
    )


def _finished_reason(record: ClaimRecord) -> str:
    if record.state is State.FINISHED:
        return f"the run finished with exit code {record.exit_code}"
    if record.state is State.INTERRUPTED:
        return "the run was interrupted and handed the issue back"
    return f"the claim was lost: {record.note or 'another claim won'}"


# A claimer's writes start within its lease (its renew deadline, two thirds of its stale_after)
# after its claim was posted, and every write lands within GitHub's request limit plus its
# whole-second slack after it was sent (`services/holding.py LABEL_LANDING_MARGIN_S`).
LEASE_SHARE = 2 / 3


def writes_land_within(record: ClaimRecord, stale_after: float, landing_margin: float) -> float:
    """Seconds after its claim's post by which every write of a claim has landed: its lease (a
    share of the stale_after it promises, or ours if longer) plus `landing_margin`."""
    return max(stale_after, record.stale_after) * LEASE_SHARE + landing_margin


def unqueue_in_flight(
    record: ClaimRecord,
    posted_at: datetime,
    now: datetime,
    stale_after: float,
    landing_margin: float,
    verdict: Verdict,
) -> Verdict:
    """A dead claim that won and never started its command (`running`, no child pid) may still
    have its queue-label removal in flight until its lease's writes can no longer land: until
    `posted_at` (the claim comment's creation, GitHub's clock) plus its lease plus
    `landing_margin`. Requeued before that, the removal may land after the requeue and leave
    the issue with no label that any pass lists (`late-unqueue`, ADR 0072); in doubt until
    then, the next pass judges it. Any other verdict is returned as it is."""
    unstarted = record.state is State.RUNNING and record.child_pid is None
    if verdict.liveness is not Liveness.DEAD or not unstarted:
        return verdict
    window = writes_land_within(record, stale_after, landing_margin)
    age = (now - posted_at).total_seconds()
    if age >= window:
        return verdict
    return Verdict(
        Liveness.UNKNOWN,
        f"{verdict.reason}, but it won {max(age, 0.0):.0f}s ago and never started: its queue-label "
        f"removal may still land (until {window:g}s after its claim); the next pass judges it",
    )
