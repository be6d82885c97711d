"""A release back to the queue that a released claim's late unqueue undid (ADR 0086). Pure.

A claimer that won sends its queue-label removal; a pass that judged it dead, or a person's
`release --force`, may release its claim and requeue the issue before that removal lands, and
labels have no compare-and-swap: the removal then takes the requeue's label, and the issue
carries no label any pass lists (`late-unqueue`). The claimer puts the label back itself when it
looks (`restore_queue`, ADR 0025); one killed first leaves the issue stranded with its claim
released, which the strand look (ADR 0072) does not take up. So does a claimer whose unqueue
went unanswered and that gave up (`lost`, `unqueued`, ADR 0067) after a release that listed no
claim took the lock off. The next pass looks: among the recently updated comments, an issue whose
last orion event is one of these (`queueing_at_risk`), that carries none of orion's labels, and
whose queue label GitHub's record shows taken off by orion after that event (whenever: a paused
VM sends its writes late, ADR 0095) gets its label back (unless a claim's trigger check refused
it, or a person's cancel stands).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from orion_action.core.arbitration import a_release_of, ended_before, ran
from orion_action.core.cancelled import LabelEvent, cancel_against_a_persons_queueing, last_event
from orion_action.core.issue import ClaimEntry, Comment, IssueLog, TombstoneEntry
from orion_action.core.record import ReleaseAction, State

# The releases that put an issue back in the queue (a pass's requeue, a release by hand); the
# others close, fail or cancel it.
REQUEUES = (ReleaseAction.REQUEUE, ReleaseAction.RELEASE)
# The comment a claim's trigger check leaves when it takes the queue label off (services/trigger.py).
REFUSAL_MARK = "<!-- orion-refused-"
# GitHub's times are whole seconds: a comparison across two of its stamps allows one.
_SECOND = timedelta(seconds=1)


@dataclass(frozen=True)
class AtRisk:
    """An issue's last orion event after which a claim's unqueue, still on the way, may take the
    queueing nothing will run: a release back to the queue of that claim, or the claim's own
    `lost` record saying it sent its unqueue (ADR 0067, the queueing it owes)."""

    comment_id: int  # the event's comment
    since: datetime  # the event's post: orion's removal of the queue label after it is the claim's
    what: str  # for the reason
    released: bool  # a release back to the queue, whose own addition of the label must show


def took_nothing(claim: ClaimEntry) -> bool:
    """A claim that never sent its unqueue: still `claiming` (a claimer writes `running` before
    it sends one), or `lost` before it ran, saying it did not. It tells nothing of the issue's
    queueing. (A run that lost its lease is `lost` too, and took it.)"""
    return claim.record.state is State.CLAIMING or gave_up_taking_nothing(claim)


def took_something(claim: ClaimEntry) -> bool:
    """`not took_nothing(claim)`: the claim may have sent its unqueue."""
    return not took_nothing(claim)


def gave_up_taking_nothing(claim: ClaimEntry) -> bool:
    """A claim whose final record says it took nothing: `lost` before it ran, not having sent its
    unqueue. A claim still `claiming` may have moved on since a lagging listing read it (default
    seed 6 episode 243: listed `claiming`, it had run and been cancelled), and `lost` is final."""
    record = claim.record
    return record.state is State.LOST and not ran(claim) and not record.unqueued


def another_claim_may_have_taken(log: IssueLog, token: str, read_at: datetime) -> bool:
    """Whether a claim other than `token`'s may have taken the queueing the claim of `token` read
    at `read_at` (GitHub's time) (ADR 0096): any that was not over before that read and whose
    record does not say it took nothing as a loser. One still `claiming` counts: a listing may
    show it so after it moved on."""
    return any(c.record.token != token and not gave_up_taking_nothing(c) and not ended_before(log, c, read_at)
               for c in log.claims)


def _last_event(log: IssueLog) -> ClaimEntry | TombstoneEntry | None:
    """The issue's last orion event by comment id. A claim that took nothing is none (default
    seed 170 episode 131: a stalled `--next` claimer posted after the release). Nor is a
    tombstone `a_release_of` sets aside: a holder's end marker posted after a release of its
    claim (ADR 0092: default seed 81 episode 218, a released holder's outage account hid the
    release its late unqueue undid), or a pass's release of a claim that took nothing (default
    seed 173 episode 36: a cancelled run's completion released a stalled claimer's `claiming`
    claim, and that release is no return to the queue)."""
    releases = (t for t in log.tombstones if a_release_of(log, t, took_something))
    events: list[ClaimEntry | TombstoneEntry] = [*filter(took_something, log.claims), *releases]
    return max(events, key=lambda e: e.comment_id, default=None)


def last_requeue(log: IssueLog) -> TombstoneEntry | None:
    """The release back to the queue that is the issue's last orion event (`_last_event`), or
    None: a claim after it, or a release of another kind, says what happened next."""
    last = _last_event(log)
    return last if isinstance(last, TombstoneEntry) and last.tombstone.action in REQUEUES else None


def queueing_at_risk(log: IssueLog) -> AtRisk | None:
    """The event, when the issue's last orion event (`_last_event`) is one (`AtRisk`). The
    released claim need not be listed: its post bounded nothing once the look counted a removal
    however late (ADR 0095), and a claim whose VM paused may be older than the comment listing
    reaches (default seed 85 episode 110: only the release was recent)."""
    last = _last_event(log)
    if isinstance(last, TombstoneEntry) and last.tombstone.action in REQUEUES:
        what = f"its release back to the queue (comment {last.comment_id})"
        return AtRisk(last.comment_id, last.created_at, what, released=True)
    if isinstance(last, ClaimEntry) and last.record.state is State.LOST and last.record.unqueued:
        what = f"the claim in comment {last.comment_id}, which gave up after sending its unqueue"
        return AtRisk(last.comment_id, last.created_at, what, released=False)
    return None


def requeue_candidates(recent: Mapping[int, IssueLog], listed: Collection[int]) -> list[int]:
    """The issues among the recently updated comments (`recent`, by issue) whose queueing a late
    unqueue may have taken (`queueing_at_risk`), and that no label listing (`listed`: the lock's
    and the queue's) shows: each is read, to see whether it carries any label at all."""
    return [n for n, log in sorted(recent.items()) if n not in listed and queueing_at_risk(log) is not None]


def refused_since(comments: Iterable[Comment], trusted: frozenset[str], after: int) -> bool:
    """Whether a claim's trigger check refused the issue after comment `after`: its removal of
    the queue label is orion's too, and meant."""
    return any(c.id > after and _is_refusal(c, trusted) for c in comments)


def taken_by_a_late_unqueue(events: Iterable[LabelEvent], queue: str, is_orion: Callable[[str], bool],
                            since: datetime) -> bool:
    """Whether GitHub's record (`events`, oldest first) shows the queue label's last event to be
    orion's removal, made no earlier than `since` (the event at risk's post): the claimer's late
    removal, which nothing meant. The requeue may have found the label still on, and GitHub
    records no event for a label added twice. A removal by a person is theirs. GitHub's times are
    whole seconds.

    No later bound (ADR 0095): a claimer whose VM paused after its `running` record sends its
    unqueue on resume, whenever that is, on a lease its frozen boot clock still counts (default
    seed 85 episode 110: it landed 64 s after the claim's post, past the window ADR 0086 allowed).
    Every other removal of orion's after a release with no claim since either leaves a mark the
    caller checks (a claim's refusal comment, a cancel standing in the record) or comes with the
    claim's own record (`lost` saying it sent its unqueue)."""
    last = orion_took_the_queue_label(events, queue, is_orion)
    return last is not None and since - _SECOND <= last.at


def requeue_never_landed(events: Iterable[LabelEvent], queue: str, since: datetime) -> bool:
    """Whether GitHub's record (`events`) shows no event of the queue label since `since` (a
    release back to the queue's post; whole seconds, so one second before counts): the
    release's own addition never landed, and nothing took the label since. A pass posts its
    tombstone before it labels a stranded issue, and one killed in between leaves the release
    with no label at all (ADR 0098; default seed 129 episode 238)."""
    return not any(e.of(queue) and e.at >= since - _SECOND for e in events)


def refused_after(comments: Iterable[Comment], trusted: frozenset[str], at: datetime) -> bool:
    """Whether a claim's trigger check refused the issue at or after `at` (whole seconds): its
    comment follows its removal of the queue label, which it meant."""
    return any(c.created_at >= at - _SECOND and _is_refusal(c, trusted) for c in comments)


def _is_refusal(comment: Comment, trusted: frozenset[str]) -> bool:
    """A trigger check's refusal comment, by orion (anyone can write the text)."""
    return comment.author.lower() in trusted and comment.body.startswith(REFUSAL_MARK)


def orion_took_the_queue_label(events: Iterable[LabelEvent], queue: str,
                                is_orion: Callable[[str], bool]) -> LabelEvent | None:
    """The queue label's last event in GitHub's record (`events`, oldest first), when it is
    orion's removal (a known actor: a removal by no known actor is nobody's to undo), or None."""
    last = last_event(list(events), queue)
    if last is None or last.added or not last.login or not is_orion(last.login):
        return None
    return last


def queueing_a_stale_removal_took(events: Iterable[LabelEvent], queue: str, cancel: str, lock: str,
                                  is_orion: Callable[[str], bool], since: datetime,
                                  claims: Iterable[ClaimEntry]) -> LabelEvent | None:
    """A person's queueing that orion's removal of the queue label took although nothing meant it,
    or None (ADR 0088). Read from GitHub's record (`events`: the queue, cancel and lock labels'
    events, oldest first) of an open issue that carries none of orion's labels, and its claims.

    orion takes a queue label off for a cause the record shows, or a comment does: a claim (the
    lock added since the queueing; the strand look and the late-unqueue look judge claims), a
    cancel standing against the person's queueing when the removal landed (the sweep, ADR 0085's
    look, a claim's cancel check), or the trigger check's refusal (its comment: the caller's).
    A lock added since the queueing tells of no cause when every claim posted since the queueing
    gave up taking nothing (`gave_up_taking_nothing`): one whose own unqueue found the label
    already gone (default seed 5 episode 172: a stale sweep's removal landed between the claim's
    lock and its unqueue).
    A removal with none of these was planned before a person's act and landed after it: a cancel
    sweep that read the issue cancelled, whose removal landed after the person took the cancel
    off again (`stale-pass-repair`), its writer killed before its look back (ADR 0073) or its
    answer lost. The queueing is the queue label's latest addition by a person; orion's own
    additions after it, with no lock between, put that queueing back after an earlier removal
    took it (a look of ADR 0073 or 0085: default seed 233 episode 15, where a third stale removal
    landed after such a put-back), and orion's other additions are the other looks'. The removal
    is the label's last event, made at or after `since` (the
    furthest any pass looks back: older history is left as it is), and no cancel stands now (a
    cancel made after the removal is honoured: the issue stays out)."""
    found = list(events)
    removal = orion_took_the_queue_label(found, queue, is_orion)
    if removal is None or removal.at < since - _SECOND:
        return None
    at = max(i for i, e in enumerate(found) if e.of(queue))  # the removal's
    added = max((i for i, e in enumerate(found) if e.of(queue) and e.added
                 and e.login and not is_orion(e.login)), default=None)
    if added is None:
        return None
    queueing = found[added]
    locks = [e for e in found[added:at] if e.of(lock)]
    since_then = [c for c in claims if c.created_at >= queueing.at - _SECOND]
    if locks and not (since_then and all(map(gave_up_taking_nothing, since_then))
                      and min(c.created_at for c in since_then) <= locks[0].at + _SECOND):
        return None  # a claim took it
    if cancel_against_a_persons_queueing(found[:at], queue, cancel, is_orion) is not None:
        return None  # the removal carried out a cancel
    if cancel_against_a_persons_queueing(found, queue, cancel, is_orion) is not None:
        return None
    return queueing
