"""How a run ends: the outcome of each ending, and which ending is due (docs/design.md section 5).

Pure rules the holder applies: an outcome says what the run's final record and its labels
become; `ending_due` says which way the run ends now, if any; `failed_for_outage` says whether a
pass failed the issue only for a run whose record now excuses it (ADR 0019). Services carry
them out (services/holding.py, services/wrapper.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from orion_action.config import Config
from orion_action.core.issue import IssueLog
from orion_action.core.record import ClaimRecord, ReleaseAction, State

TIME_LIMIT_EXIT_CODE = 124  # run.timeout or run.idle_timeout stopped the child (as `timeout` says)


class Held(Protocol):
    """What `ending_due` reads of a held claim (services.holding.Holding)."""

    config: Config
    lost: str | None
    cancel_requested: bool

    def lease_left(self) -> float: ...


@dataclass(frozen=True)
class Outcome:
    """How a run ended, and what that does to the record and the labels."""

    state: State
    exit_code: int | None = None
    note: str | None = None
    add: str | None = None  # the label that says what happens next
    also_remove: tuple[str, ...] = ()  # labels removed besides the lock and the stage label
    counts_attempt: bool = True


def finished(config: Config, code: int) -> Outcome:
    lab = config.labels
    return Outcome(State.FINISHED, exit_code=code, add=lab.ready if code == 0 else lab.failed)


def handed_back(
    config: Config, attempt: int, why: str, code: int | None = None, counts: bool = True
) -> Outcome:
    """An interrupted run goes back to the queue, or to failed once its attempts are spent
    (a run that is cancelled or hangs every time must not loop forever)."""
    lab = config.labels
    spent = counts and attempt >= config.max_attempts
    note = why + (
        f"; attempt {attempt} of {config.max_attempts}, retry budget spent"
        if spent
        else "; back to the queue"
    )
    return Outcome(
        State.INTERRUPTED,
        exit_code=code,
        note=note,
        add=lab.failed if spent else lab.queue,
        counts_attempt=counts,
    )


def timed_out(config: Config, attempt: int, why: str) -> Outcome:
    """A time limit stopped the child: a failed attempt (exit code 124, as `timeout` reports
    it), back to the queue while the retry budget allows, then failed."""
    return handed_back(config, attempt, why, code=TIME_LIMIT_EXIT_CODE)


def cancelled(config: Config, by: str | None) -> Outcome:
    lab = config.labels
    who = f" by {by}" if by else ""
    return Outcome(
        State.CANCELLED,
        note=f"cancelled{who} (the {lab.cancel} label); add {lab.queue} to run it again",
        also_remove=(lab.queue, lab.cancel),
        counts_attempt=False,
    )


def signalled(config: Config, attempt: int, signame: str, started: bool) -> Outcome:
    """A signal to the wrapper (SIGINT/SIGTERM/SIGHUP: on a runner, the Actions job was
    cancelled). By default the run ends as the cancel label ends it: a person pressed Cancel,
    so the issue must not run again on its own (no attempt, no requeue, no dispatch). With
    run.on_signal: requeue (pre-emptible runners, whose jobs a machine stops) it is handed
    back; only a run whose command started spends an attempt (ADR 0043). Unlike the cancel
    label, it leaves a queue label on: the claim took it off, so one there now was put back
    by a person after the run began (a newer wish than the job's cancel), unless GitHub's
    record shows orion added it, a stale requeue (the holder's ending reads it, ADR 0104)."""
    why = f"stopped by {signame}"
    if config.on_signal == "requeue":
        return handed_back(config, attempt, why, counts=started)
    lab = config.labels
    return Outcome(
        State.CANCELLED,
        note=f"cancelled: the Actions job was cancelled ({why}); add {lab.queue} to run it again",
        also_remove=(lab.cancel,),
        counts_attempt=False,
    )


def ending_due(
    holding: Held,
    child_code: int | None,
    signum: int | None,
    fatal: str | None,
    ran_s: float | None = None,
    idle_s: float | None = None,
) -> str | None:
    """Which way the run ends now, if any, in the order the supervisor checks them: the child
    exited, a signal, a rejected token, the claim lost, a cancel, the lease run out, then the
    time limits: `ran_s` (how long the child has run) past run.timeout, `idle_s` (how long it
    has written no output and no progress line) past run.idle_timeout."""
    if child_code is not None:
        return "exited"
    if signum is not None:
        return "signal"
    if fatal is not None:
        return "fatal"
    if holding.lost is not None:
        return "lost"
    if holding.cancel_requested:
        return "cancel"
    if holding.lease_left() <= 0:
        return "lease"
    config = holding.config
    if config.timeout > 0 and ran_s is not None and ran_s >= config.timeout:
        return "timeout"
    if config.idle_timeout > 0 and idle_s is not None and idle_s >= config.idle_timeout:
        return "idle"
    return None


def failed_for_outage(
    is_open: bool, on_issue: frozenset[str], log: IssueLog, record: ClaimRecord, config: Config
) -> bool:
    """Whether a pass turned the issue failed only because it counted our run, which our
    record now excuses: its give-up released our claim and is the issue's last event, the
    issue is open and carries the failed label alone of ours, and without our run the
    budget is not spent."""
    lab = config.labels
    token = record.token
    mine = [t for t in log.tombstones if t.tombstone.token == token]
    events = [c.comment_id for c in log.claims] + [t.comment_id for t in log.tombstones]
    if not (
        is_open
        and lab.failed in on_issue
        and not on_issue & {lab.working, lab.queue, lab.ready, lab.cancel}
        and len(mine) == 1
        and mine[0].tombstone.action is ReleaseAction.GIVE_UP
        and mine[0].comment_id == max(events)
    ):
        return False
    ours = tuple(replace(c, record=record) if c.record.token == token else c for c in log.claims)
    return replace(log, claims=ours).attempts_used() < config.max_attempts
