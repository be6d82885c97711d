"""Reconcile planning: for one issue carrying the lock, what to do and why (docs/design.md section 6).

Data in (the issue's state, labels, orion log and a verdict per open claim), a decision out.
The service executes the decision; `--dry-run` and `status` only print it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import Enum

from orion_action.config import Labels
from orion_action.core.arbitration import ran
from orion_action.core.issue import ClaimEntry, IssueLog, TombstoneEntry
from orion_action.core.liveness import MISSED_BEAT_FACTOR, Liveness, Verdict
from orion_action.core.record import END_STATES, HOLDER_END, ReleaseAction, State


class Action(str, Enum):
    UNLOCK = "unlock"
    COMPLETE = "complete"
    REQUEUE = "requeue"
    GIVE_UP = "give_up"
    KEEP = "keep"
    REPORT = "report"
    CANCEL = "cancel"  # a queued (not held) issue carries the cancel label: unqueue it


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

    @property
    def writes(self) -> bool:
        return self.action not in (Action.KEEP, Action.REPORT)

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

    Everything is ordered by comment id (GitHub's total order), never by update time: a
    released holder may still write its final record late, and that must not hide the next
    run's claim (defect 5 of the v0.1 audit)."""
    remove = _lock_labels(labels, on_issue)
    open_claims = log.open_claims()
    notes = _notes(log)
    latest = open_claims[-1] if open_claims else (log.claims[-1] if log.claims else None)
    used = log.attempts_used()

    if not is_open:
        return Plan(
            number,
            Action.UNLOCK,
            "the issue is closed",
            holder=latest,
            verdict=verdicts.get(latest.record.token) if latest else None,
            release=open_claims,
            remove_labels=remove,
            notes=notes,
        )

    judged = [(c, verdicts[c.record.token]) for c in open_claims]
    for wanted in (Liveness.ALIVE, Liveness.UNKNOWN):
        hit = next(((c, v) for c, v in judged if v.liveness is wanted), None)
        if hit:
            action = Action.KEEP if wanted is Liveness.ALIVE else Action.REPORT
            return Plan(number, action, hit[1].reason, holder=hit[0], verdict=hit[1], notes=notes)
    unreadable = log.blocking_unreadable()
    if unreadable is not None:
        reason = (
            f"comment {unreadable.comment_id} holds a claim this version cannot read ({unreadable.why}); "
            f"upgrade orion-action, or release it by hand with `orion-action release --force`"
        )
        return Plan(number, Action.REPORT, reason, verdict=Verdict(Liveness.UNKNOWN, reason), notes=notes)

    # Every open claim is provably dead (or there is none): all of them are released. What the
    # labels become is decided by the newest event of the issue's fate, by comment id: a run
    # (finished, interrupted, cancelled, or dead while open) or a release of a run. Claims that
    # never started their command decide nothing and spend nothing.
    release = open_claims
    ran_releases = [t for t in log.tombstones if (c := log.find(t.tombstone.token)) is None or ran(c)]
    events: list[ClaimEntry | TombstoneEntry] = [c for c in log.claims if ran(c)] + ran_releases
    last = max(events, key=lambda e: e.comment_id, default=None)

    def move(
        action: Action,
        reason: str,
        target: str | None,
        holder: ClaimEntry | None,
        verdict: Verdict | None = None,
        counts: bool = False,
        extra_remove: tuple[str, ...] = (),
    ) -> Plan:
        """Release the dead open claims (if any), take the lock and stages off, put `target` on.
        A dead run on an issue carrying the cancel label is not put back in the queue: the
        person asked for no more runs, and a plan made before the cancel sweep ran would undo
        it when it lands after the sweep (ADR 0049); the sweep then takes the label off."""
        for_cancel = target == labels.queue and labels.cancel in on_issue
        if for_cancel:
            target, reason = None, f"{reason}; not requeued: the issue carries {labels.cancel}"
            extra_remove = (*extra_remove, *(n for n in (labels.queue,) if n in on_issue))
        first = tuple(c for c in release if holder is not None and c.comment_id == holder.comment_id)
        return Plan(
            number,
            action,
            reason,
            holder=holder,
            verdict=verdict,
            release=first + tuple(c for c in release if c not in first),  # the one that counts first
            counts_attempt=counts,
            add_labels=(target,) if target else (),
            remove_labels=(*remove, *extra_remove),
            attempts_used=used,
            notes=notes,
            for_cancel=for_cancel,
        )

    if labels.queue in on_issue and not (isinstance(last, ClaimEntry) and last.record.state.is_open):
        # The queue label is removed only by a claim that won; beside a lock and no live claim
        # it means the issue is wanted again (a person's requeue, or a claim that died before it
        # ran): keep it, take the leftover lock off. But a claim in flight looks the same (its
        # lock on, the queue label not yet taken): with no claim listed at all, its comment may
        # just not be listed yet, and taking the lock off would strand it (ADR 0049).
        if not log.claims:
            reason = "the lock is on beside the queue label and no claim is listed yet: one may be in flight"
            return Plan(number, Action.REPORT, reason, verdict=Verdict(Liveness.UNKNOWN, reason), notes=notes)
        reason = "the issue is queued; the lock is left over from a claim that never ran its command"
        dead = release[-1] if release else None
        if dead is not None:
            reason = f"{verdicts[dead.record.token].reason}; {reason}"
        return move(Action.REQUEUE, reason, None, dead, verdicts.get(dead.record.token) if dead else None)
    if isinstance(last, TombstoneEntry) and last.tombstone.by == HOLDER_END:
        last = _as_ended(log, last) or last
    if isinstance(last, ClaimEntry) and last.record.state.is_open and last.record.child_pid is None:
        # It won but died before its command started (no pid recorded): back to the queue,
        # no attempt spent.
        verdict = verdicts[last.record.token]
        reason = f"{verdict.reason}; it died before its command started (no attempt spent)"
        return move(Action.REQUEUE, reason, labels.queue, last, verdict)
    if isinstance(last, ClaimEntry) and last.record.state.is_open:
        verdict = verdicts[last.record.token]
        spent = used + 1 >= max_attempts
        reason = f"{verdict.reason}; attempt {used + 1} of {max_attempts}" + (
            " failed, retry budget spent" if spent else ""
        )
        target = labels.failed if spent else labels.queue
        return move(Action.GIVE_UP if spent else Action.REQUEUE, reason, target, last, verdict, counts=True)
    if isinstance(last, ClaimEntry):
        rec = last.record
        if rec.state is State.FINISHED:
            reason = f"the run finished with exit code {rec.exit_code} but the lock never moved"
            target = labels.ready if rec.exit_code == 0 else labels.failed
            return move(Action.COMPLETE, reason, target, last, Verdict(Liveness.FINISHED, "the run finished"))
        if rec.state is State.CANCELLED:
            reason = "the run was cancelled and its label move did not finish"
            extra = tuple(n for n in (labels.queue, labels.cancel) if n in on_issue)
            finished = Verdict(Liveness.FINISHED, reason)
            return move(Action.COMPLETE, reason, None, last, finished, extra_remove=extra)
        spent = used >= max_attempts
        what = "interrupted" if rec.state is State.INTERRUPTED else "stopped"
        reason = f"the run was {what} and its hand-back did not finish" + (
            f"; {used} of {max_attempts} attempts spent" if spent else ""
        )
        target = labels.failed if spent else labels.queue
        action = Action.GIVE_UP if spent else Action.REQUEUE
        return move(action, reason, target, last, Verdict(Liveness.FINISHED, reason))
    if last is not None:
        t = last.tombstone
        give_up = t.action is ReleaseAction.GIVE_UP
        return move(
            Action.GIVE_UP if give_up else Action.REQUEUE,
            f"finishing an earlier release whose label move did not happen: {t.reason}",
            labels.failed if give_up else labels.queue,
            log.find(t.token),
        )
    if release:
        verdict = verdicts[release[-1].record.token]
        reason = f"{verdict.reason}; the claim never started its command (no attempt spent)"
        return move(Action.REQUEUE, reason, labels.queue, release[-1], verdict)
    if log.claims:
        gave_up = log.claims[-1]
        reason = f"the last claim gave up before it ran ({gave_up.record.note or 'no reason given'})"
        return move(Action.REQUEUE, reason, labels.queue, gave_up, Verdict(Liveness.FINISHED, reason))
    reason = "the lock label is on but there is no trusted claim record"
    return Plan(number, Action.REPORT, reason, verdict=Verdict(Liveness.UNKNOWN, reason), notes=notes)


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
