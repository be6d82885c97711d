"""Reconcile planning: for one issue carrying the lock, what to do and why (docs/design.md section 6).

Data in (the issue's state, labels, orion log and a verdict per open claim), a decision out.
The service executes the decision; `--dry-run` and `status` only print it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import NamedTuple

from orion_action.config import Labels
from orion_action.core.arbitration import a_release_of, ended_before, ran
from orion_action.core.issue import ClaimEntry, IssueLog, TombstoneEntry
from orion_action.core.liveness import MISSED_BEAT_FACTOR, Liveness, Verdict
from orion_action.core.record import END_STATES, HOLDER_END, ReleaseAction, State
from orion_action.core.requeue import took_nothing


class Action(str, Enum):
    UNLOCK = "unlock"
    COMPLETE = "complete"
    REQUEUE = "requeue"
    GIVE_UP = "give_up"
    KEEP = "keep"
    REPORT = "report"
    CANCEL = "cancel"  # a queued (not held) issue carries the cancel label: unqueue it

    @property
    def writes(self) -> bool:
        """Whether carrying it out changes the issue (keep and report only look)."""
        return self not in (Action.KEEP, Action.REPORT)


@dataclass(frozen=True)
class Plan:
    issue: int
    action: Action
    reason: str
    holder: ClaimEntry | None = None  # the claim the decision is about, for display
    verdict: Verdict | None = None
    release: tuple[ClaimEntry, ...] = ()  # open claims to tombstone before moving labels
    counts_attempt: bool = False
    add_labels: tuple[str, ...] = ()
    remove_labels: tuple[str, ...] = ()
    attempts_used: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    # A dead run not requeued because the issue carries the cancel label (ADR 0049): its
    # tombstone unlocks, so that no repair (ADR 0025) reads it as a return to the queue.
    for_cancel: bool = False
    # A CANCEL of a cancelled run's stale queue label (ADR 0103), not of a person's standing
    # cancel (ADR 0085): the record of the run, not of the cancel label, decided it.
    run_cancelled: bool = False

    @property
    def writes(self) -> bool:
        return self.action.writes

    @property
    def tombstone_action(self) -> ReleaseAction:
        if self.for_cancel:
            return ReleaseAction.UNLOCK
        return {
            Action.UNLOCK: ReleaseAction.UNLOCK,
            Action.GIVE_UP: ReleaseAction.GIVE_UP,
        }.get(self.action, ReleaseAction.REQUEUE)


def _lock_labels(labels: Labels, on_issue: frozenset[str]) -> tuple[str, ...]:
    """The lock and every stage label: they go together (stage labels are display only).
    The lock comes last: a pass killed halfway leaves it on, so the next pass finishes."""
    stages = sorted(n for n in on_issue if n.startswith(labels.stage_prefix))
    return tuple(n for n in (*stages, labels.working) if n in on_issue)


class Fate(Enum):
    """What last happened to an issue none of whose open claims is alive or in doubt: the newest
    event of its history by comment id (a run, or a release of a run), or a leftover lock."""

    QUEUED_AGAIN = "the queue label is back on: a person's requeue, or a claim that died before it ran"
    CLAIM_IN_FLIGHT = "the lock beside the queue label and no claim listed: a claim may be in flight"
    DIED_UNSTARTED = "the newest run won, then died before its command started"
    DIED_RUNNING = "the newest run died while its command ran, with attempts left"
    DIED_RUNNING_SPENT = "the newest run died while its command ran, on its last attempt"
    FINISHED_OK = "the newest run finished with exit code 0; its label move did not"
    FINISHED_FAILED = "the newest run finished with a failure; its label move did not"
    CANCELLED = "the newest run was cancelled; its label move did not finish"
    STOPPED = "the newest run was interrupted or stopped; its hand-back did not finish"
    STOPPED_SPENT = "the newest run was interrupted or stopped, its budget spent; no hand-back"
    RELEASED = "an earlier release (requeue, unlock or by hand) whose label move did not happen"
    RELEASED_GIVEN_UP = "an earlier give-up whose label move did not happen"
    NEVER_STARTED = "dead open claims, none of which ran its command"
    GAVE_UP_UNSTARTED = "the last claim gave up before it ran, and nothing ran since"
    QUEUEING_OWED = "the last claim took the queue label, then gave up before it ran: its queueing never ran"
    QUEUEING_TAKEN = "the last claim gave up before it ran and took no queue label: someone else took it"
    NO_RECORD = "the lock is on and no trusted claim record explains it"


@dataclass(frozen=True)
class Rule:
    """One row of the table from fate to action. `target` and `also_remove` name fields of
    Labels; `reason` is a format string over the facts `_facts` gathers; `shown` is the verdict
    displayed for the run (None: the dead claim's own verdict, if any) and `says` its text (None:
    the reason)."""

    action: Action
    reason: str
    target: str | None = None
    counts: bool = False
    also_remove: tuple[str, ...] = ()
    shown: Liveness | None = None
    says: str | None = None


_STOPPED = "the run was {what} and its hand-back did not finish"
_RELEASED = "finishing an earlier release whose label move did not happen: {release}"
_FINISHED = "the run finished with exit code {exit_code} but the lock never moved"

RULES: Mapping[Fate, Rule] = {
    # The queue label is removed only by a claim that won; beside a lock and no live claim it
    # means the issue is wanted again: keep it, take the leftover lock off.
    Fate.QUEUED_AGAIN: Rule(
        Action.REQUEUE,
        "{lead}the issue is queued; the lock is left over from a claim that never ran its command",
    ),
    # A claim in flight looks like QUEUED_AGAIN (its lock on, the queue label not yet taken);
    # with no claim listed at all, its comment may just not be listed yet, and taking the lock
    # off would strand it (ADR 0049).
    Fate.CLAIM_IN_FLIGHT: Rule(
        Action.REPORT,
        "the lock is on beside the queue label and no claim is listed yet: one may be in flight",
        shown=Liveness.UNKNOWN,
    ),
    # No pid recorded: the command never started, so no attempt is spent.
    Fate.DIED_UNSTARTED: Rule(
        Action.REQUEUE, "{verdict}; it died before its command started (no attempt spent)", "queue"
    ),
    Fate.DIED_RUNNING: Rule(
        Action.REQUEUE, "{verdict}; attempt {attempt} of {max_attempts}", "queue", counts=True
    ),
    Fate.DIED_RUNNING_SPENT: Rule(
        Action.GIVE_UP, "{verdict}; attempt {attempt} of {max_attempts} failed, retry budget spent", "failed",
        counts=True,
    ),
    Fate.FINISHED_OK: Rule(
        Action.COMPLETE, _FINISHED, "ready", shown=Liveness.FINISHED, says="the run finished"
    ),
    Fate.FINISHED_FAILED: Rule(
        Action.COMPLETE, _FINISHED, "failed", shown=Liveness.FINISHED, says="the run finished"
    ),
    # A person's cancel is final: never back to the queue, and the cancel label goes too. A
    # queue label is here only beside the cancel label (without it, a person who put the queue
    # label back wanted a run: QUEUED_AGAIN), and goes as the holder's cancel ending takes it.
    Fate.CANCELLED: Rule(
        Action.COMPLETE, "the run was cancelled and its label move did not finish", None,
        also_remove=("queue", "cancel"), shown=Liveness.FINISHED,
    ),
    # The holder's own hand-back already counted its attempt (its record says so).
    Fate.STOPPED: Rule(Action.REQUEUE, _STOPPED, "queue", shown=Liveness.FINISHED),
    Fate.STOPPED_SPENT: Rule(
        Action.GIVE_UP, _STOPPED + "; {used} of {max_attempts} attempts spent", "failed",
        shown=Liveness.FINISHED,
    ),
    Fate.RELEASED: Rule(Action.REQUEUE, _RELEASED, "queue"),
    Fate.RELEASED_GIVEN_UP: Rule(Action.GIVE_UP, _RELEASED, "failed"),
    Fate.NEVER_STARTED: Rule(
        Action.REQUEUE, "{verdict}; the claim never started its command (no attempt spent)", "queue"
    ),
    Fate.GAVE_UP_UNSTARTED: Rule(
        Action.REQUEUE, "the last claim gave up before it ran ({note})", "queue", shown=Liveness.FINISHED
    ),
    # Its unqueue was sent (and the queue label is gone): the queueing it took never ran, so it
    # goes back to the queue, as a claim that loses before its unqueue leaves it (ADR 0067).
    Fate.QUEUEING_OWED: Rule(
        Action.REQUEUE, "the last claim took the queue label, then gave up before it ran ({note}); "
        "its queueing goes back to the queue", "queue", shown=Liveness.FINISHED,
    ),
    # Its record says it sent no unqueue, or found the queue label gone: a person or the cancel
    # sweep took the queueing, not a claim, and requeueing would undo that (`requeue-over-cancel`:
    # a claim posted after the sweep took a cancelled issue's labels off). The lock comes off.
    Fate.QUEUEING_TAKEN: Rule(
        Action.UNLOCK, "the last claim gave up before it ran ({note}) and took no queue label: whoever "
        "took it (a person, the cancel sweep) did not want it run; the lock is taken off", None,
        shown=Liveness.FINISHED,
    ),
    Fate.NO_RECORD: Rule(
        Action.REPORT, "the lock label is on but there is no trusted claim record", shown=Liveness.UNKNOWN
    ),
}


@dataclass(frozen=True)
class Fated:
    """A fate, the claim it is about (for display and to release first) and the facts its
    reason names."""

    fate: Fate
    holder: ClaimEntry | None = None
    facts: Mapping[str, object] = field(default_factory=dict)


def fate(on_issue: frozenset[str], log: IssueLog, verdicts: Mapping[str, Verdict], labels: Labels,
         max_attempts: int) -> Fated:
    """What last happened to an issue whose open claims are all dead (or that has none).

    The newest event by comment id decides: a run (finished, interrupted, cancelled, or dead
    while open) or a release of a run. Claims that never started their command decide nothing
    and spend nothing (ADR 0012). Never by update time: a released holder may still write its
    final record late, and that must not hide the next run's claim (defect 5 of the v0.1 audit)."""
    dead = log.open_claims()
    last = _last_event(log)
    queued = labels.queue in on_issue and not (isinstance(last, ClaimEntry) and last.record.state.is_open)
    if queued and not log.claims:
        return Fated(Fate.CLAIM_IN_FLIGHT)
    # Beside the cancel label a queue label is no wish to run: a person's cancel overrules it,
    # as the holder's own cancel ending does (ADR 0053). The run's row decides; none requeues.
    if queued and labels.cancel not in on_issue:
        newest = dead[-1] if dead else None
        lead = f"{verdicts[newest.record.token].reason}; " if newest is not None else ""
        return Fated(Fate.QUEUED_AGAIN, newest, {"lead": lead})
    owed = _queueing_owed(log, last)
    if owed is not None:
        return Fated(Fate.QUEUEING_OWED, owed, {"note": owed.record.note or "no reason given"})
    if isinstance(last, TombstoneEntry) and last.tombstone.by == HOLDER_END:
        last = _as_ended(log, last) or last
    if isinstance(last, ClaimEntry):
        return _run_fate(last, verdicts, log.attempts_used(), max_attempts)
    if last is not None:
        t = last.tombstone
        given_up = t.action is ReleaseAction.GIVE_UP
        released = Fate.RELEASED_GIVEN_UP if given_up else Fate.RELEASED
        return Fated(released, log.find(t.token), {"release": t.reason})
    if dead:
        return Fated(Fate.NEVER_STARTED, dead[-1])
    if log.claims:
        newest = log.claims[-1]
        note = newest.record.note or "no reason given"
        # A claimer's own record says whether it sent its unqueue (ADR 0067); not known (a
        # holder's give-up, an older version): requeued, as before.
        taken = newest.record.state is State.LOST and newest.record.unqueued is False
        return Fated(Fate.QUEUEING_TAKEN if taken else Fate.GAVE_UP_UNSTARTED, newest, {"note": note})
    return Fated(Fate.NO_RECORD)


# The fates an unlocked issue's record can settle (`run_end`): a run that ended, or a release.
# An open claim no release names, with the lock off, is a listing that lags its final record.
_SETTLED = (Fate.FINISHED_OK, Fate.FINISHED_FAILED, Fate.STOPPED, Fate.STOPPED_SPENT, Fate.CANCELLED,
            Fate.RELEASED, Fate.RELEASED_GIVEN_UP)


class RunEnd(NamedTuple):
    """What the issue's last run, or last release of a run, does to its labels (its row of RULES)."""

    label: str | None  # the label it puts on (none for a cancel)
    unqueues: bool  # it takes the queue label off (a cancel)
    claimed_at: datetime | None = None  # when the run's claim was posted (GitHub's time)


def run_end(log: IssueLog, labels: Labels, max_attempts: int) -> RunEnd | None:
    """The end of the issue's last run, or last release of a run, read from the record of an
    issue no lock holds; None when the record has no such word: no run, or an open claim no
    release names. orion's queue label added under a lock asks it whether it was the run's own
    (ADRs 0102 and 0103), and a claimer asks it whether the queueing it found follows a
    cancelled run (ADR 0105)."""
    fated = fate(frozenset(), log, {}, labels, max_attempts)
    if fated.fate not in _SETTLED:
        return None
    rule = RULES[fated.fate]
    return RunEnd(getattr(labels, rule.target) if rule.target else None, "queue" in rule.also_remove,
                  fated.holder.created_at if fated.holder is not None else None)


def _queueing_owed(log: IssueLog, last: ClaimEntry | TombstoneEntry | None) -> ClaimEntry | None:
    """The newest claim that gave up (`lost`) after sending its unqueue, if it came after the
    newest run or release and every claim that ran had ended before it was posted: the queue
    label it may have taken was a queueing nothing ran (ADR 0067). Claims after it that lost
    before their unqueue took nothing. A run still going when it was posted (a lower claim that
    won on a list that lagged, ADR 0048) may have taken that queueing itself: nothing is owed."""
    newest = next((c for c in reversed(log.claims)
                   if c.record.state is State.LOST and c.record.unqueued and not ran(c)), None)
    if newest is None:
        return None
    if last is not None and last.comment_id > newest.comment_id:
        return None
    if any(ran(c) and not ended_before(log, c, newest.created_at) for c in log.claims if c is not newest):
        return None
    return newest


def _last_event(log: IssueLog) -> ClaimEntry | TombstoneEntry | None:
    """The newest run or release of a run (`core.arbitration.a_release_of`: a pass's release of a
    claim that never ran is none), by comment id."""
    releases = [t for t in log.tombstones if a_release_of(log, t, ran)]
    events: list[ClaimEntry | TombstoneEntry] = [c for c in log.claims if ran(c)] + releases
    return max(events, key=lambda e: e.comment_id, default=None)


def _run_fate(last: ClaimEntry, verdicts: Mapping[str, Verdict], used: int, max_attempts: int) -> Fated:
    """The fate of an issue whose newest event is a run, by the state its record ends in."""
    rec = last.record
    if rec.state.is_open:
        if rec.child_pid is None:
            return Fated(Fate.DIED_UNSTARTED, last)
        spent = used + 1 >= max_attempts
        return Fated(Fate.DIED_RUNNING_SPENT if spent else Fate.DIED_RUNNING, last)
    if rec.state is State.FINISHED:
        ok = rec.exit_code == 0
        return Fated(Fate.FINISHED_OK if ok else Fate.FINISHED_FAILED, last, {"exit_code": rec.exit_code})
    if rec.state is State.CANCELLED:
        return Fated(Fate.CANCELLED, last)
    what = "interrupted" if rec.state is State.INTERRUPTED else "stopped"
    return Fated(Fate.STOPPED_SPENT if used >= max_attempts else Fate.STOPPED, last, {"what": what})


def plan_issue(
    number: int,
    is_open: bool,
    on_issue: frozenset[str],
    log: IssueLog,
    verdicts: Mapping[str, Verdict],
    labels: Labels,
    max_attempts: int,
) -> Plan:
    """Decide for one issue carrying the lock. `verdicts` has one entry per open claim token.

    What is true now comes first: a closed issue is unlocked, a live holder kept, one in doubt
    (or a claim this version cannot read) reported. Otherwise every open claim is provably dead
    (or there is none): all of them are released, and what the labels become is the row of
    RULES for the issue's fate."""
    open_claims = log.open_claims()
    notes = _notes(log)
    if not is_open:
        latest = open_claims[-1] if open_claims else (log.claims[-1] if log.claims else None)
        return Plan(
            number,
            Action.UNLOCK,
            "the issue is closed",
            holder=latest,
            verdict=verdicts.get(latest.record.token) if latest else None,
            release=open_claims,
            remove_labels=_lock_labels(labels, on_issue),
            notes=notes,
        )
    judged = [(c, verdicts[c.record.token]) for c in open_claims]
    for wanted, action in ((Liveness.ALIVE, Action.KEEP), (Liveness.UNKNOWN, Action.REPORT)):
        hit = next(((c, v) for c, v in judged if v.liveness is wanted), None)
        if hit:
            return Plan(number, action, hit[1].reason, holder=hit[0], verdict=hit[1], notes=notes)
    unreadable = log.blocking_unreadable()
    if unreadable is not None:
        reason = (
            f"comment {unreadable.comment_id} holds a claim this version cannot read ({unreadable.why}); "
            f"upgrade orion-action, or release it by hand with `orion-action release --force`"
        )
        return Plan(number, Action.REPORT, reason, verdict=Verdict(Liveness.UNKNOWN, reason), notes=notes)
    fated = fate(on_issue, log, verdicts, labels, max_attempts)
    return _apply(number, fated, on_issue, log, verdicts, labels, max_attempts, notes)


def _apply(
    number: int,
    fated: Fated,
    on_issue: frozenset[str],
    log: IssueLog,
    verdicts: Mapping[str, Verdict],
    labels: Labels,
    max_attempts: int,
    notes: tuple[str, ...],
) -> Plan:
    """The plan a fate's row of RULES makes: release the dead open claims (the one the fate is
    about first: only it may count an attempt), take the lock and stages off, put the target on.

    A dead run on an issue carrying the cancel label is not put back in the queue: the person
    asked for no more runs, and a plan made before the cancel sweep ran would undo it when it
    lands after the sweep (ADR 0049); the sweep then takes the label off."""
    rule = RULES[fated.fate]
    holder = fated.holder
    judged = verdicts.get(holder.record.token) if holder is not None else None
    used = log.attempts_used()
    reason = rule.reason.format(
        verdict=judged.reason if judged else "", attempt=used + 1, used=used, max_attempts=max_attempts,
        **fated.facts,
    )
    verdict = judged if rule.shown is None else Verdict(rule.shown, rule.says or reason)
    if not rule.action.writes:
        return Plan(number, rule.action, reason, verdict=verdict, notes=notes)
    release = log.open_claims()
    first = tuple(c for c in release if holder is not None and c.comment_id == holder.comment_id)
    extra = tuple(n for n in (getattr(labels, k) for k in rule.also_remove) if n in on_issue)
    target = getattr(labels, rule.target) if rule.target else None
    for_cancel = target == labels.queue and labels.cancel in on_issue
    if for_cancel:
        target = None
        reason, queued = _not_requeued(reason, labels, on_issue)
        extra = (*extra, *queued)
    extra = (*extra, *_stray_outcomes(labels, on_issue, target))
    return Plan(
        number,
        rule.action,
        reason,
        holder=holder,
        verdict=verdict,
        release=first + tuple(c for c in release if c not in first),
        counts_attempt=rule.counts,
        add_labels=(target,) if target else (),
        remove_labels=(*_lock_labels(labels, on_issue), *extra),
        attempts_used=used,
        notes=notes,
        for_cancel=for_cancel,
    )


def _stray_outcomes(labels: Labels, on_issue: frozenset[str], target: str | None) -> tuple[str, ...]:
    """The outcome labels every row's plan also takes off: those beside the lock other than its
    own target (ADR 0076). The holder's ending puts its outcome label on in one request with its
    final record, the lock still on, and GitHub may run the addition and refuse the edit. A
    holder that dies then leaves the lock, the outcome label and a record that still says
    `running`: the record is the word (the run is presumed dead and requeued or failed), and the
    label it never confirmed goes, or the issue would carry two fates."""
    return tuple(n for n in (labels.ready, labels.failed) if n in on_issue and n != target)


def plan_release(
    number: int,
    is_open: bool,
    on_issue: frozenset[str],
    open_claims: tuple[ClaimEntry, ...],
    verdicts: Mapping[str, Verdict],
    labels: Labels,
    force: bool,
) -> Plan:
    """`release` by hand of an issue carrying the lock: requeue, releasing every open claim.
    A holder judged alive or in doubt is released only with `force`; without it the plan is a
    REPORT whose reason is the refusal. Only a dead run that started its command spends an
    attempt (ADR 0012); a closed issue is not work, and a cancelled one is not wanted, so
    neither is queued again."""
    blocking = [(c, verdicts[c.record.token]) for c in open_claims if not verdicts[c.record.token].is_dead]
    if blocking and not force:
        v = blocking[0][1]
        return Plan(
            number,
            Action.REPORT,
            f"refusing to release #{number}: its holder is {v.liveness.value} ({v.reason}); "
            f"use --force only if you are sure the run is gone",
            holder=blocking[0][0],
            verdict=v,
        )
    reason = "released by hand with --force" if blocking else "released by hand; the holder is dead"
    # An issue carrying the cancel label is not put back in the queue, and its tombstone
    # unlocks, so that the released holder's repair (ADR 0025) does not requeue it after the
    # cancel sweep took the label off (ADR 0049).
    cancelled = labels.cancel in on_issue
    queued: tuple[str, ...] = ()
    if cancelled:
        reason, queued = _not_requeued(reason, labels, on_issue)
    return Plan(
        number,
        Action.REQUEUE,
        reason,
        holder=open_claims[0] if open_claims else None,
        release=open_claims,
        counts_attempt=not blocking and any(c.record.child_pid is not None for c in open_claims),
        add_labels=(labels.queue,) if is_open and not cancelled else (),
        remove_labels=(*(x for x in on_issue if x.startswith(labels.stage_prefix)), *queued, labels.working),
        for_cancel=cancelled,
    )


def _not_requeued(reason: str, labels: Labels, on_issue: frozenset[str]) -> tuple[str, tuple[str, ...]]:
    """A release under the cancel label (a pass's or one by hand, ADR 0049): the reason says why
    the issue is not put back in the queue, and a queue label on it comes off with the lock."""
    return f"{reason}; not requeued: the issue carries {labels.cancel}", tuple(
        n for n in (labels.queue,) if n in on_issue)


def keep_on_fresh_beat(
    number: int,
    is_open: bool,
    on_issue: frozenset[str],
    recent: IssueLog,
    now: datetime,
    labels: Labels,
    judge: Callable[[ClaimEntry], Verdict],
) -> Plan | None:
    """`keep`, decided from the repository's recently updated comments alone, or None: read the
    whole issue (docs/adr/0018-flat-reconcile-cost.md).

    `recent` holds the issue's comments that the repository-wide listing returned (those
    updated in the last few beat intervals). The shortcut only ever keeps, and only when what
    a full read would see cannot be anything but a live holder: the issue is open, carries the
    lock and no label a pass acts on, nothing recent ended or released anything, and exactly one
    trusted record is recent: a running claim, not marked released, that beat on time by
    GitHub's clock (so no Actions-run lookup is due) and that `judge` finds alive. A dead holder
    stops beating, so it drops out of the shortcut within MISSED_BEAT_FACTOR intervals, well
    before a full read could call it dead from its heartbeat."""
    if not is_open or labels.working not in on_issue:
        return None
    if on_issue & {labels.queue, labels.cancel, labels.ready, labels.failed}:
        return None
    if recent.tombstones or recent.unreadable or recent.untrusted_releases or len(recent.claims) != 1:
        return None
    entry = recent.claims[0]
    record = entry.record
    if record.state is not State.RUNNING or record.released is not None:
        return None
    if (now - entry.updated_at).total_seconds() > MISSED_BEAT_FACTOR * record.interval:
        return None
    verdict = judge(entry)
    if verdict.liveness is not Liveness.ALIVE:
        return None
    return Plan(number, Action.KEEP, verdict.reason, holder=entry, verdict=verdict)


def _as_ended(log: IssueLog, marker: TombstoneEntry) -> ClaimEntry | None:
    """The claim a holder's end marker closes, with the final state the marker records (its
    own record may have been turned back into "running" by a heartbeat that landed late)."""
    t = marker.tombstone
    claim = log.find(t.token)
    state = END_STATES.get(t.action)
    if claim is None or state is None:
        return None
    code = t.extra.get("exit_code")
    record = claim.record.with_changes(
        state=state, exit_code=code if isinstance(code, int) else claim.record.exit_code
    )
    return replace(claim, record=record, updated_at=marker.created_at)


def plan_cancel(number: int, is_open: bool, on_issue: frozenset[str], labels: Labels) -> Plan | None:
    """An issue carrying the cancel label and not the lock: nothing runs it, so the request is
    met by taking it out of the queue: the queue label off, then the cancel label (a person
    re-adds the queue label to run it again). A held issue is its holder's to cancel (its beat
    reads the labels), or the lock pass's when the holder is dead; a closed one is left alone."""
    if not is_open or labels.cancel not in on_issue or labels.working in on_issue:
        return None
    queued = labels.queue in on_issue
    reason = (
        f"cancelled before it ran: the {labels.cancel} label was on a queued issue; "
        f"add {labels.queue} to run it again"
        if queued
        else f"the {labels.cancel} label was on an issue that is neither queued nor held; taken off"
    )
    remove = ((labels.queue,) if queued else ()) + (labels.cancel,)
    return Plan(number, Action.CANCEL, reason, remove_labels=remove)


def _notes(log: IssueLog) -> tuple[str, ...]:
    notes = []
    if log.untrusted:
        notes.append(f"ignored {len(log.untrusted)} orion-looking comment(s) by untrusted authors")
    notes += [f"comment {u.comment_id} is unreadable: {u.why}" for u in log.unreadable]
    # Anyone can post a release block: it is ignored, and never earns advice to trust its
    # author (finding 7 of the round-3 security audit).
    notes += [
        f"ignored comment {r.comment_id} by {r.author}: a release of claim {r.token} by an author "
        f"who is not trusted"
        for r in log.untrusted_releases
    ]
    return tuple(notes)


# -- an issue a dead holder left with no label (ADR 0072) -------------------------------------


# How far back a pass looks for stranded issues, in stale_after, when it cannot tell when the
# previous pass ran (outside GitHub Actions): a claim that died just before one pass could judge
# it is judged by the next, while passes come at least every stale_after.
STRAND_LOOKBACK = 2.0
# The furthest back any pass looks (ADR 0081): a week of the repository's updated comments.
STRAND_LOOKBACK_MAX_S = 7 * 24 * 3600.0


@dataclass(frozen=True)
class PreviousPass:
    """When the previous successful run of this reconcile workflow began (GitHub's
    `run_started_at`); `started_at` None: the workflow has no successful run yet."""

    started_at: datetime | None


def strand_since(now: datetime, stale_after: float, longest_promise: float, previous: PreviousPass | None,
                 margin: float) -> datetime:
    """The update time from which a pass at `now` lists the repository's comments to find
    stranded issues (ADR 0081). A stranded claim is found only by a pass that begins once it can
    be judged dead (its last write plus the stale_after its record promises, at most
    `longest_promise`) and still lists it.

    - `previous` None (outside Actions: the previous pass is unknown): `STRAND_LOOKBACK`
      stale_after back, which holds while passes come at least every stale_after.
    - Anchored at the previous successful pass's start: every claim it could not yet judge dead
      (its last write less than `longest_promise` before that start) is listed now, however
      late this pass comes (GitHub delays scheduled runs by hours under load, or drops them).
    - No successful pass yet: `STRAND_LOOKBACK_MAX_S` back, the bound of every case."""
    unanchored = now - timedelta(seconds=STRAND_LOOKBACK * stale_after + margin)
    furthest = now - timedelta(seconds=STRAND_LOOKBACK_MAX_S)
    if previous is None:
        return unanchored
    if previous.started_at is None:
        return furthest
    anchored = previous.started_at - timedelta(seconds=longest_promise + margin)
    return max(furthest, min(unanchored, anchored))


def strand_candidates(recent: Mapping[int, IssueLog], listed: Collection[int]) -> list[int]:
    """The issues a pass reads in full although no label listing shows them: those whose
    newest claim that did not lose, among the recently updated comments (`recent`, by issue),
    is still open and named by no tombstone there, and that are not in the lock listing
    (`listed`). A claim that
    is open on an issue without the lock is either in flight (a claimer adds its lock after
    posting), put back by its live holder at its next beat (ADR 0065), or dead with the issue
    stranded: a late or stale label write took the lock or the queue label after its last
    writer could look (`stale-unlock-strand`). In the steady state there is none."""
    found = []
    for n, log in sorted(recent.items()):
        # A claim that took nothing (a loser, `core.requeue.took_nothing`) ends no story: an
        # older winner may hold the issue (seed 151 episode 87: the loser posted after the
        # winner, whose lock a late tidy took off). One that sent its unqueue and gave up is
        # `core.requeue`'s (ADR 0086).
        standing = [c for c in log.claims if not took_nothing(c)]
        if n in listed or not standing:
            continue
        newest = max(standing, key=lambda c: c.comment_id)
        named = any(t.tombstone.token == newest.record.token for t in log.tombstones)
        # An open claim, or a run that lost its lease (`lost` after it started: its holder
        # leaves the labels to a pass, which the lock would have shown).
        stopped = newest.record.state is State.LOST and ran(newest)
        if (newest.record.state.is_open or stopped) and not named:
            found.append(n)
    return found


def is_stranded(is_open: bool, on_issue: frozenset[str], labels: Labels) -> bool:
    """An open issue that carries none of orion's labels: no label listing shows it."""
    ours = {labels.queue, labels.working, labels.ready, labels.failed, labels.cancel}
    return is_open and not (on_issue & ours)


# The fates a pass repairs on a stranded issue: a run (or a won claim) whose holder died, or
# whose lease ran out (`lost` after it started: nothing to release, the labels are the pass's).
STRAND_FATES = frozenset({Fate.DIED_UNSTARTED, Fate.DIED_RUNNING, Fate.DIED_RUNNING_SPENT, Fate.STOPPED,
                          Fate.STOPPED_SPENT})


def plan_strand(number: int, is_open: bool, on_issue: frozenset[str], log: IssueLog,
                verdicts: Mapping[str, Verdict], labels: Labels, max_attempts: int, *,
                cancel_stands: bool) -> Plan | None:
    """The repair of a stranded issue, or None: the plan a pass makes for an issue carrying the
    lock, when every open claim is provably dead and the issue's fate is a dead run's (a live
    or doubtful holder, or any other fate, is left alone: a person may have taken the labels
    off a finished run). Nothing is taken off but stage labels; the lock is not there.

    `cancel_stands`: GitHub's record shows a person's cancel still standing against the latest
    queueing (`core.cancelled.standing_cancel`). The cancel sweep takes the cancel label off an
    issue no lock holds, and a person may have taken the lock off a dead holder before it ran:
    the labels then say nothing, and only the record says the issue is cancelled. Its dead
    claims are released (a tombstone that unlocks, as under the cancel label, ADR 0049) and no
    label goes on: a cancelled issue carries none (ADR 0078)."""
    if not is_stranded(is_open, on_issue, labels):
        return None
    plan = plan_issue(number, is_open, on_issue, log, verdicts, labels, max_attempts)
    # Every STRAND_FATES row writes and puts a label on; a live or doubtful holder's plan (keep,
    # report) releases nothing, and only a run that lost its lease has nothing to release.
    found = fate(on_issue, log, verdicts, labels, max_attempts).fate
    if found not in STRAND_FATES or (not plan.release and found not in (Fate.STOPPED, Fate.STOPPED_SPENT)):
        return None
    unlocked = tuple(x for x in plan.remove_labels if x != labels.working)
    if cancel_stands:
        why = f"the issue carried no label (stranded) after a person's cancel: {plan.reason}; not requeued"
        return replace(plan, reason=why, add_labels=(), remove_labels=unlocked, for_cancel=True)
    return replace(plan, reason=f"the issue carried no label (stranded): {plan.reason}",
                   remove_labels=unlocked)
