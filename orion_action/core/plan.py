"""Reconcile planning: for one issue carrying the lock, what to do and why (DESIGN.md section 6).

Data in (the issue's state, labels, orion log and a verdict per open claim), a decision out.
The service executes the decision; `--dry-run` and `status` only print it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from orion_action.config import Labels
from orion_action.core.issue import ClaimEntry, IssueLog
from orion_action.core.liveness import Liveness, Verdict
from orion_action.core.record import ReleaseAction, State


class Action(str, Enum):
    UNLOCK = "unlock"
    COMPLETE = "complete"
    REQUEUE = "requeue"
    GIVE_UP = "give_up"
    KEEP = "keep"
    REPORT = "report"


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

    @property
    def writes(self) -> bool:
        return self.action not in (Action.KEEP, Action.REPORT)

    @property
    def tombstone_action(self) -> ReleaseAction:
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
    """Decide for one issue carrying the lock. `verdicts` has one entry per open claim token."""
    remove = _lock_labels(labels, on_issue)
    open_claims = log.open_claims()
    notes = tuple(
        [f"ignored {len(log.untrusted)} orion-looking comment(s) by untrusted authors"]
        if log.untrusted
        else []
    ) + tuple(f"comment {cid} is unreadable: {why}" for cid, why in log.unreadable)
    latest = open_claims[-1] if open_claims else (log.claims[-1] if log.claims else None)

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

    # Every open claim is provably dead (or there is none). A dead claim posted before the
    # last run ended lost that run's race and crashed before saying so: it is not the holder.
    ended = [c for c in log.claims if c.record.state in (State.FINISHED, State.INTERRUPTED)]
    last_end = max(ended, key=lambda c: (c.updated_at, c.comment_id), default=None)
    dead = [c for c in open_claims if last_end is None or c.created_at >= last_end.updated_at]
    used = log.attempts_used()
    if dead:
        verdict = verdicts[dead[0].record.token]
        spent = used + 1 >= max_attempts
        return Plan(
            number,
            Action.GIVE_UP if spent else Action.REQUEUE,
            f"{verdict.reason}; attempt {used + 1} of {max_attempts}"
            + (" failed, retry budget spent" if spent else ""),
            holder=dead[0],
            verdict=verdict,
            release=tuple(dead),
            counts_attempt=True,
            add_labels=(labels.failed if spent else labels.queue,),
            remove_labels=remove,
            attempts_used=used,
            notes=notes,
        )

    def move(
        action: Action, reason: str, target: str, holder: ClaimEntry | None, verdict: Verdict | None = None
    ) -> Plan:
        """A label move with nothing to tombstone: the lock (and stages) off, `target` on."""
        return Plan(
            number,
            action,
            reason,
            holder=holder,
            verdict=verdict,
            add_labels=(target,),
            remove_labels=remove,
            attempts_used=used,
            notes=notes,
        )

    last_tomb = log.tombstones[-1] if log.tombstones else None
    if last_end is not None and (last_tomb is None or last_end.comment_id > last_tomb.comment_id):
        rec = last_end.record
        if rec.state is State.FINISHED:
            return move(
                Action.COMPLETE,
                f"the run finished with exit code {rec.exit_code} but the lock never moved",
                labels.ready if rec.exit_code == 0 else labels.failed,
                last_end,
                Verdict(Liveness.FINISHED, "the run finished"),
            )
        reason = "the run was interrupted and its hand-back did not finish"
        return move(Action.REQUEUE, reason, labels.queue, last_end, Verdict(Liveness.FINISHED, reason))
    if last_tomb is not None:
        t = last_tomb.tombstone
        give_up = t.action is ReleaseAction.GIVE_UP
        return move(
            Action.GIVE_UP if give_up else Action.REQUEUE,
            f"finishing an earlier release whose label move did not happen: {t.reason}",
            labels.failed if give_up else labels.queue,
            log.find(t.token),
        )
    gave_up = log.claims[-1] if log.claims else None
    if (
        gave_up is not None
        and gave_up.record.state is State.LOST
        and (last_tomb is None or gave_up.comment_id > last_tomb.comment_id)
    ):
        reason = f"the last claim gave up before it ran ({gave_up.record.note or 'no reason given'})"
        return move(Action.REQUEUE, reason, labels.queue, gave_up, Verdict(Liveness.FINISHED, reason))
    reason = "the lock label is on but there is no trusted claim record"
    return Plan(number, Action.REPORT, reason, verdict=Verdict(Liveness.UNKNOWN, reason), notes=notes)
