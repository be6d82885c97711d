"""Holding a won claim: one beat at a time, the fence, and the one way every run ends.

The wrapper calls `beat()` from its heartbeat thread and `conclude()` once from its main
thread; the model checker calls the same methods from its own actors. Every label move first
confirms, on a fresh read, that the claim still holds the issue, and no final state is written
over a released claim (defect 4 of the v0.1 audit). The label sequence lives here only:
outcome label first, then stage labels, the lock last (a crash in between leaves the lock on,
which brings a reconcile pass back).
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime

from orion_action.config import Config
from orion_action.core.arbitration import (
    GITHUB_REQUEST_LIMIT_S,
    LOCK_REMOVED,
    SERVER_TIME_SLACK_S,
    lost_reason,
)
from orion_action.core.beat import Bounds, Load, Promise, next_promise, renew_deadline
from orion_action.core.cancelled import LabelEvent, cancel_against_a_persons_queueing
from orion_action.core.ending import Outcome, failed_for_outage, handed_back
from orion_action.core.issue import Issue, IssueLog, read_log
from orion_action.core.liveness import Machine
from orion_action.core.lock_gone import lock_gone
from orion_action.core.record import (
    HOLDER_END,
    ClaimRecord,
    ReleaseAction,
    State,
    Tombstone,
    render_record,
    render_tombstone,
)
from orion_action.core.stale_add import queued_after_a_cancel
from orion_action.errors import AuthError, GitHubError, NotFound, Unavailable
from orion_action.ports import Clock, Finished, GitHubPort, Policy, Sight
from orion_action.services.claiming import Claim, restore_queue
from orion_action.services.observe import judge_entry

Log = Callable[[str], None]
# A beat reads at most this many pages of new comments; the rest waits for the next beat, so
# a beat's cost stays bounded whatever others post (defect 15 of the v0.1 audit).
FENCE_MAX_PAGES = 2
PAGE = 100
# How long a final write waits for a beat in flight before going ahead (and reading back).
FINAL_LOCK_WAIT_S = 1.0
# A holder that gave up because GitHub did not answer keeps trying to say so (ADR 0019) for
# the longer of this and stale_after, backing off from the first pause to the longest.
OUTAGE_RECORD_MIN_S = 600.0
OUTAGE_RETRY_FIRST_S = 1.0
OUTAGE_RETRY_MAX_S = 30.0
# A holder starts a label write (or an end marker) only until this long before a judge may
# presume it dead, so that the write lands before then, however slowly GitHub answers; never
# earlier than its lease's end, though, which is where a small stale_after leaves it (ADR 0024).
LABEL_LANDING_MARGIN_S = GITHUB_REQUEST_LIMIT_S + SERVER_TIME_SLACK_S
# A holder whose beat may stretch counts the repository's live claims (one listing of the lock
# label per 100) every COUNT_EVERY_BEATS beats and at least this often, from the count its
# claimer made (ADR 0060; without one, from its second beat): a fleet that grows is seen within
# minutes at a short beat, and the count costs a fifth of the beats' requests at most (ADR 0045);
# every beat while the writes bind the beat.
COUNT_EVERY_S = 3600.0
COUNT_EVERY_BEATS = 5


def outage_bound(config: Config, promised: float | None = None) -> float:
    """How long a holder cut off by an outage keeps trying to record it: at least until a
    pass may have released it (the stale_after its record promised, `promised`, else the
    configured one), and never less than OUTAGE_RECORD_MIN_S."""
    return max(config.stale_after, promised or 0.0, OUTAGE_RECORD_MIN_S)


def move_labels(gh: GitHubPort, number: int, add: list[str], remove: list[str], lock: str) -> None:
    """The one label sequence of every ending and every repair: the next label on first, then
    the others off, the lock last. A crash in between leaves the lock on, and a reconcile pass
    (which visits every issue carrying the lock) finishes the move."""
    if add:
        gh.add_labels(number, add)
    for name in remove:
        if name != lock:
            gh.remove_label(number, name)
    gh.remove_label(number, lock)


class Holding:
    """A claim this process won and holds."""

    def __init__(
        self,
        gh: GitHubPort,
        claim: Claim,
        config: Config,
        log: Log,
        clock: Clock,
        here: Machine,
        sight: Sight,
    ):
        self.gh, self.claim, self.config, self.log, self.clock, self.here = (
            gh,
            claim,
            config,
            log,
            clock,
            here,
        )
        self.sight = sight
        self.lost: str | None = None  # set once: why the claim is no longer ours
        self.released = False  # ...and whether a tombstone released it
        self.cancel_requested = False  # a person added the cancel label (its record, ADR 0093)
        self.result: str | None = None  # the command's result (core/result.py), for the final record
        # What the last completed beat (or the claim) promised in the record, and when it was
        # sent: judges go by the record's promise, so the lease does too (ADR 0045).
        self.bounds = Bounds(config.heartbeat_interval, config.stale_after, config.heartbeat_max_interval)
        self.promise = Promise(claim.record.interval, claim.record.stale_after)
        self.last_sent = claim.lease_start
        # Until this clock.monotonic() time the holder may run: renewed by every beat, counted
        # from when the beat was *sent* (GitHub's updated_at is no earlier than that).
        self.lease_until = claim.lease_start + renew_deadline(self.promise.stale_after)
        self.live = 1  # live claims in the repository, as last counted
        self._counted_at: tuple[float, int] | None = None  # when, and at which beat
        if claim.live is not None:  # counted by the claimer (ADR 0060): the first beat stretches on it
            self.live, self._counted_at = claim.live + 1, (claim.lease_start, 0)
        self.progress: str | None = None  # the child's last progress line, shown at the next beat
        self.child_pid: int | None = None
        self._record_lock = threading.Lock()
        self._final = False  # once set, no beat writes the record again
        self._ambiguous_write = False  # a record write may have landed after we gave up on it
        self.final_wait = FINAL_LOCK_WAIT_S
        # Since the last beat that completed: why GitHub did not answer a beat (5xx, rate
        # limits, timeouts, no connection), whether one refused (any other error), and whether
        # a beat is waiting for an answer now. Together they tell an outage (ADR 0019).
        self.unanswered: str | None = None
        self.refused: str | None = None
        self.beating = False
        self.requeued = False  # record_outage handed the issue back to the queue
        # The outage record once a try sent it: from then on it may be on GitHub, a pass may
        # hand the issue back on it at once, and no later try moves a label (ADR 0024).
        self._outage_record: ClaimRecord | None = None
        self._outage_marked = False  # our outage marker was posted (ADR 0092)
        # GitHub's stamp of our last record write that a judge counts from (the claim as
        # listed, then each beat that found the claim ours), and GitHub's time at our last
        # fresh read with our clock just before it: the label-write bound on GitHub's clock,
        # which a VM pause, freezing ours, cannot stretch (ADR 0055).
        listed = claim.comments.get(claim.comment_id)
        self._stamp: datetime | None = listed.updated_at if listed is not None else None
        self._read_at: tuple[datetime, float] | None = None
        # The labels the latest fresh read saw (`_fresh_read`): the ending's, once it ends.
        self._read_labels: frozenset[str] = frozenset()
        # The issue's `updated_at` as last judged for a cancel a stale write took off (ADR 0093);
        # None: not yet (the first beat reads, the claim's own label writes having changed it).
        self._issue_judged: datetime | None = None

    @property
    def number(self) -> int:
        return self.claim.number

    # -- beating ---------------------------------------------------------------------------

    def beat(self, gh: GitHubPort | None = None) -> None:
        """Edit the record (state running, beat counter, progress), then check the fence. The
        lease is renewed only by a beat that completed and found the claim still ours. `gh`:
        the heartbeat's own client (short timeouts), else the holding's."""
        self.beating = True
        try:
            self._beat(gh or self.gh)
        except Unavailable as exc:
            self.unanswered = str(exc)
            raise
        except GitHubError as exc:
            self.refused = str(exc)
            raise
        else:
            self.unanswered = self.refused = None
        finally:
            self.beating = False

    def outage(self) -> str | None:
        """Why the lease ran out, when GitHub is to blame: no beat since the last that
        completed was answered (a failure that retrying may cure, or a beat still waiting), and
        none was refused. None when a beat was refused or none was even tried."""
        if self.refused is not None:
            return None
        if self.unanswered is not None:
            return self.unanswered
        return "a heartbeat request got no answer" if self.beating else None

    def _beat(self, gh: GitHubPort) -> None:
        sent = self.clock.monotonic()
        c = self.claim
        promise = self._next_promise(gh, sent)
        with self._record_lock:
            if self._final:
                return
            record = c.record.with_changes(
                state=State.RUNNING,
                beats=c.record.beats + 1,
                heartbeat_at=self.clock.now_iso(),
                child_pid=self.child_pid,
                progress=self.progress,
                interval=promise.interval,
                stale_after=promise.stale_after,
            )
            stamp = self._write(record, gh)
        issue, now = gh.get_issue(c.number)
        lab = self.config.labels
        if lab.cancel in issue.labels or self._cancel_taken_off(issue, gh):
            self.cancel_requested = True
        # Every beat lists, whatever the issue's count says: a deletion and a post between two
        # beats leave the count equal (ADR 0044). Both reads are conditional: the issue's is
        # free while it is unchanged; the listing's page holds our own record, just edited.
        log = self._read_new_comments(issue, gh)
        self.lost = self._keep_lock(issue, log, now, gh)
        self.released = c.record.token in log.released_tokens()
        if self.lost is None:
            self.promise, self.last_sent = promise, sent
            self.lease_until = max(self.lease_until, sent + renew_deadline(promise.stale_after))
            self._stamp = stamp

    def _cancel_taken_off(self, issue: Issue, gh: GitHubPort) -> bool:
        """Whether a person's cancel stands in GitHub's record although its label is gone (ADR
        0093). A cancel sweep planned from an older read (a cancel carried out before this run
        claimed) sends its removal of the cancel label with no compare-and-swap; landing late, it
        takes off a cancel a person made against this run, and no beat would see the label. Read
        only when the issue changed since it was last judged (every label write moves its
        `updated_at`; a steady run's issue read is a free 304): one GraphQL query then, and at
        the first beat. A read that fails is made again at the next beat."""
        lab = self.config.labels
        at, judged = issue.updated_at, self._issue_judged
        changed = at is not None and (judged is None or at > judged)
        if not changed or lab.working not in issue.labels:
            return False
        try:
            events = gh.queue_history(self.number, lab.queue, lab.cancel).label_events
        except AuthError:
            raise
        except GitHubError as exc:
            self.log(f"#{self.number}: could not read GitHub's record of the cancel label ({exc}); next beat")
            return False
        self._issue_judged = issue.updated_at
        return cancel_against_a_persons_queueing(events, lab.queue, lab.cancel,
                                                 self.claim.trusted.has) is not None

    def _next_promise(self, gh: GitHubPort, now: float) -> Promise:
        """What the next beat promises (core/beat.py): from the live claims, counted when the
        count is due (only when the beat may stretch at all), and the budget GitHub reported."""
        counted = self._counted_at
        beats = self.claim.record.beats
        due = counted is None or now - counted[0] >= COUNT_EVERY_S or beats - counted[1] >= COUNT_EVERY_BEATS
        # Bound by the writes, a stale count lets a growing fleet overrun them (the read is
        # cheap beside the write it spaces out): count every beat then (ADR 0060).
        due = due or self.promise.why == "writes"
        due = due and beats >= 1  # not on the first beat: a run that ends at once pays no count
        if self.bounds.max_interval > self.bounds.interval and due:
            working = self.config.labels.working
            self.live = max(1, sum(1 for i in gh.list_issues(working) if i.is_open))
            self._counted_at = (now, beats)
        budget = gh.budget
        load = Load(self.live, budget.limit, budget.remaining, budget.reset_in)
        return next_promise(self.bounds, load, self.promise, now - self.last_sent)

    def beat_interval(self) -> float:
        """How long the beat loop waits before the next beat: what the record promises."""
        return self.claim.record.interval

    def lease_left(self) -> float:
        return self.lease_until - self.clock.monotonic()

    def _write(self, record: ClaimRecord, gh: GitHubPort | None = None) -> datetime:
        """Write our record; returns GitHub's stamp of the write."""
        try:
            written = (gh or self.gh).edit_comment(self.claim.comment_id, self._body(record))
        except Unavailable:
            self._ambiguous_write = True  # the server may still apply it
            raise
        self.claim.record = record
        return written.updated_at

    # -- the fence -------------------------------------------------------------------------

    def _read_new_comments(self, issue: Issue, gh: GitHubPort | None = None) -> IssueLog:
        """Read the comments listed since the last read (at most FENCE_MAX_PAGES pages) and
        return the log of every comment read so far (ADR 0023).

        Comments are listed oldest first, so new ones are at the end: the read starts at the
        page of the last comment listed before. That page must still start with the comment
        that started it before; if it does not (comments before it were deleted, or one listed
        late sits before it), the pages shifted, and the read starts again from page 1. Only
        what was listed counts as seen; every beat lists (ADR 0044), so a comment not listed
        yet is listed by a later beat."""
        c = self.claim
        gh = gh or self.gh
        first_page = max(1, (len(c.listed) - 1) // PAGE + 1)
        kept = (first_page - 1) * PAGE
        comments, _, _ = gh.list_comments_from(c.number, first_page, FENCE_MAX_PAGES)
        if first_page > 1 and (not comments or comments[0].id != c.listed[kept]):
            first_page, kept = 1, 0
            comments, _, _ = gh.list_comments_from(c.number, 1, FENCE_MAX_PAGES)
        c.comments.update({x.id: x for x in comments})
        c.listed = c.listed[:kept] + [x.id for x in comments]
        return read_log(c.comments.values(), c.trusted)

    def _lost_reason(self, issue: Issue, log: IssueLog, now: datetime, lock: bool = False) -> str | None:
        """Why the claim is lost (the fence), or None; `lock`: count the lock as on."""
        token = self.claim.record.token
        return lost_reason(
            log,
            token,
            is_open=issue.is_open,
            has_lock=lock or self.config.labels.working in issue.labels,
            is_dead=lambda e: (
                e.record.token != token
                and judge_entry(e, now, self.config.stale_after, self.here, sight=self.sight).is_dead
            ),
        )

    def _keep_lock(
        self, issue: Issue, log: IssueLog, now: datetime, gh: GitHubPort | None = None
    ) -> str | None:
        """The fence, and what a holder does that finds its lock gone (core/lock_gone.py, ADR
        0065): when orion's own stale write took it off (another claim's late ending, a pass
        that planned before this claim), put it back and hold on; anything else stops the run.
        Costs nothing while the lock is on; one read of GitHub's label events, and a write or
        two, when it is gone. Returns why the claim is lost, or None."""
        lost = self._lost_reason(issue, log, now)
        if lost != LOCK_REMOVED:
            return lost
        gh = gh or self.gh
        c, lab = self.claim, self.config.labels
        posted = c.comments.get(c.comment_id)
        if posted is None:  # our own claim is not listed (deleted): nothing to hold on to
            return lost

        def record() -> tuple[LabelEvent, ...]:  # the lock's and queue label's events (one read)
            return gh.queue_history(c.number, lab.working, lab.queue).label_events

        try:
            decided = lock_gone(
                other_reason=self._lost_reason(issue, log, now, lock=True),
                labels=issue.labels,
                unlisted=issue.comments > len(c.listed),
                record=record,
                posted_at=posted.created_at,
                is_orion=c.trusted.has,
                lab=lab,
            )
        except Unavailable:
            raise
        except GitHubError as exc:
            return f"{lost} (GitHub's record of who removed it could not be read: {exc})"
        if not decided.put_back:
            return decided.why
        if self.clock.monotonic() >= self._last_label_write():
            return f"{decided.why}; too late to put it back before a judge may presume this holder dead"
        try:
            with gh.bounded(Policy(self.clock, self._last_label_write())):
                gh.add_labels(c.number, [lab.working])
                if decided.unqueue:
                    gh.remove_label(c.number, lab.queue)
        except Unavailable:
            raise
        except GitHubError as exc:
            return f"{decided.why}; it could not be put back: {exc}"
        self.log(f"#{c.number}: {decided.why}: put the lock back"
                 + (f" and took the stale {lab.queue!r} label off" if decided.unqueue else "")
                 + "; the run goes on")
        return None

    def fresh_check(self) -> tuple[str | None, bool]:
        """Read the issue and its new comments now: (why the claim is lost or None, whether a
        tombstone released it). A lock taken off by orion's own stale write is put back first
        (ADR 0065), so that the ending's label move has its lock to take off last."""
        issue, log, now = self._fresh_read()
        return self._keep_lock(issue, log, now), self.claim.record.token in log.released_tokens()

    def _fresh_read(self) -> tuple[Issue, IssueLog, datetime]:
        before = self.clock.monotonic()
        issue, now = self.gh.get_issue(self.number)
        self._read_at = (now, before)
        self._read_labels = issue.labels
        return issue, self._read_new_comments(issue), now

    # -- ending ----------------------------------------------------------------------------

    def conclude(self, outcome: Outcome) -> str | None:
        """Write the final record and move the labels, if the claim still holds the issue.
        Returns why it did not (and then nothing but a `lost` note was written), else None."""
        self._stop_beats()
        why, released = self.fresh_check()
        if why is not None:
            self.give_up(why, released)
            return why
        record = self.claim.record.with_changes(
            state=outcome.state,
            exit_code=outcome.exit_code,
            note=outcome.note,
            finished_at=self.clock.now_iso(),
            counts_attempt=outcome.counts_attempt,
            child_pid=self.child_pid,
            progress=self.progress,
        )
        done, sent = self._finish_at_once(record, outcome.add)
        if done is None or not done.edited:  # (b), (c): the record by REST (read back if ambiguous)
            self._write_final(record)
        else:
            self.claim.record = record
        if self.clock.monotonic() >= self._last_label_write():
            raise Unavailable(
                "too late for a label write to land before a judge may presume this holder dead"
            )
        with self._labels_in_time():
            if self._ambiguous_write:
                self._mark_end(record)
            add = None if done is not None and done.added else outcome.add
            if add:
                self.gh.add_labels(self.number, [add])
            if sent is not None:
                # The one request got no answer and may still land: its outcome label must not
                # land after the lock is off (a person's requeue meanwhile would carry two
                # fates), so the lock waits until it no longer can (ADR 0076).
                self.clock.sleep(max(0.0, sent + LABEL_LANDING_MARGIN_S - self.clock.monotonic()))
            self.move_labels(add=None, also_remove=outcome.also_remove + self._stale_queue_label(outcome))
        return None

    def _stale_queue_label(self, outcome: Outcome) -> tuple[str, ...]:
        """The queue label, when a signal's cancel ending finds one orion added on our issue
        (ADR 0104). That ending leaves a queue label it finds, as a person's newer wish
        (`core.ending.signalled`); orion adds one under a run's lock only as a stale write (a
        pass's requeue planned before our claim, ADR 0102), and left on, the cancelled run would
        run again. GitHub's record says whose it is (`core.stale_add.queued_after_a_cancel`, the
        rows a claimer after a cancelled run reads too, ADR 0105): one GraphQL query, only when a
        cancel ending finds the queue label on. A person's addition since our claim, a record
        that lags (the label's last event our own unqueue), or a read that fails leaves it (the
        next pass reads the run's record, ADR 0103; the next claim reads the label's, ADR 0105)."""
        lab = self.config.labels
        if outcome.state is not State.CANCELLED or lab.queue in outcome.also_remove:
            return ()
        if lab.queue not in self._read_labels:
            return ()
        try:
            events = self.gh.queue_history(self.number, lab.queue, lab.cancel).label_events
        except AuthError:
            raise
        except GitHubError as exc:
            self.log(f"#{self.number}: could not read who added the {lab.queue} label ({exc}); left on")
            return ()
        ours = self.claim.comments.get(self.claim.comment_id)
        if ours is None:
            return ()
        row = queued_after_a_cancel(ours.created_at, events, lab, self.claim.trusted.has)
        return (lab.queue,) if row == "orions-requeue" else ()

    def _finish_at_once(self, record: ClaimRecord, add: str | None) -> tuple[Finished | None, float | None]:
        """The final record and the outcome label in ONE request, the lock left on (ADR 0076):
        GitHub runs the edit, then the addition; an error on one does not stop the other, and
        whatever did not land the caller writes by REST before it takes the lock off. Not
        tried without an outcome label, with a beat that may still land (`_ambiguous_write`:
        the REST write reads the record back), with the node ids unknown, or too late for a
        label write. Returns the answer (None: nothing known to have landed) and, when the
        request got no answer and may still land, when it was sent."""
        if not add or self._ambiguous_write or self.clock.monotonic() >= self._last_label_write():
            return None, None
        sent = self.clock.monotonic()
        try:
            with self._labels_in_time():
                return self.gh.finish(self.number, self.claim.comment_id, self._body(record), (add,)), None
        except AuthError:
            raise
        except Unavailable:  # no answer: it may land yet (the REST writes repeat it: idempotent)
            return None, sent
        except GitHubError:  # the whole request refused: nothing landed
            return None, None

    def _mark_end(self, record: ClaimRecord) -> None:
        """A beat we gave up on may still land and turn the final record back into "running"
        (defect 11 of the v0.1 audit): append an end marker, which no edit can undo, and from
        which every reader takes the run's end. One request, only in that case (and after an
        outage record, ADR 0092)."""
        action = {
            State.FINISHED: ReleaseAction.FINISHED,
            State.INTERRUPTED: ReleaseAction.INTERRUPTED,
            State.CANCELLED: ReleaseAction.CANCELLED,
        }[record.state]
        marker = Tombstone(
            token=record.token,
            action=action,
            reason=record.note or f"exit code {record.exit_code}",
            counts_attempt=record.state is State.INTERRUPTED and record.counts_attempt,
            by=HOLDER_END,
            extra={"exit_code": record.exit_code, "nonce": secrets.token_hex(8)},
        )
        self.gh.post_comment(self.number, render_tombstone(marker), marker=marker.extra["nonce"])

    def _append_outage_marker(self, record: ClaimRecord) -> None:
        """Our outage account, appended after the record (ADR 0092): an edit of the record has
        no compare-and-swap, and a write sent before ours (a beat we could not wait for, a
        release's rewrite from an older read) may land over it at any later time. A marker no
        edit can undo excuses the attempt for good (`IssueLog.attempts_used`); it decides the
        issue's fate only while nothing followed our run (`core.arbitration.overtaken`). Each try
        posts it until one was answered: a post whose answer was lost may leave a second copy,
        which changes nothing (the first overtakes it, and the excuse is per claim)."""
        if self._outage_marked:
            return
        self._mark_end(record)
        self._outage_marked = True

    def give_up(self, why: str, released: bool) -> None:
        """The claim is lost: say so on our record, unless it was released (the tombstone is the
        authority then, and a final state must not be written over a released claim). Then put
        back the queue label if our own unqueue, landing after that release, took it (ADR 0025)."""
        self._stop_beats()
        try:
            if not released:
                self._write_final(
                    self.claim.record.with_changes(
                        state=State.LOST, note=why, finished_at=self.clock.now_iso(), child_pid=self.child_pid
                    )
                )
            else:
                # The release rewrote our visible line, but a beat of ours writes "running"
                # before it reads the release (a forced release of a live run always meets
                # one): show the release again, as the releaser did, state unchanged (issue 18).
                shown = render_record(self.claim.record, released=self._release_reason(why))
                self.gh.edit_comment(self.claim.comment_id, shown)
        except GitHubError as exc:
            self.log(f"#{self.number}: could not record that the claim was lost ({exc})")
        if self.claim.unqueued:  # our unqueue may have landed after the release (ADR 0025)
            restore_queue(self.gh, self.config, self.claim, self.log)

    def _release_reason(self, fallback: str) -> str:
        """The reason the tombstone releasing our claim gives (from the comments already read)."""
        token = self.claim.record.token
        log = read_log(self.claim.comments.values(), self.claim.trusted)
        return next((t.tombstone.reason for t in log.tombstones if t.tombstone.token == token), fallback)

    def record_outage(self, why: str, bound_s: float, pause: Callable[[float], bool]) -> bool:
        """The lease ran out because GitHub did not answer (`outage()`) and the child is
        stopped: say so on the record, so that the run spends no attempt (ADR 0019), and hand
        the issue back if the claim is still ours. GitHub may still be down: try again with
        backoff for `bound_s` seconds; `pause(s)` waits and returns True when a signal says to
        stop. Returns whether the record and the outage marker that excuses the attempt for
        good were written (ADR 0092)."""
        self._stop_beats()
        n = self.number
        deadline = self.clock.monotonic() + bound_s
        delay, tries = OUTAGE_RETRY_FIRST_S, 0
        while True:
            tries += 1
            try:
                self._record_outage_once(why)
                return True
            except Unavailable as exc:
                left = deadline - self.clock.monotonic()
                if left <= 0:
                    self.log(
                        f"#{n}: GitHub did not answer for {bound_s:g}s ({tries} tries; last: {exc}); "
                        f"giving up: a reconcile pass will count the attempt"
                    )
                    return False
                wait = min(delay, left)
                self.log(
                    f"#{n}: cannot record the outage yet (try {tries}: {exc}); "
                    f"trying again in {wait:.0f}s, {left:.0f}s left"
                )
                if pause(wait):
                    self.log(f"#{n}: stopped by a signal before the outage was recorded")
                    return False
                delay = min(delay * 2, OUTAGE_RETRY_MAX_S)
            except GitHubError as exc:
                self.log(f"#{n}: cannot record the outage: {exc}")
                return False

    def _record_outage_once(self, why: str) -> None:
        """One try of `record_outage`: read, write the record, and move the labels if ours.

        The record is written once, by the first try that gets that far; a later try only puts
        it back if GitHub shows something else (rewriting it would move its `updated_at`, and
        every claimer meanwhile would lose to it as "ran meanwhile"). Once a try has sent the
        record it may be on GitHub, where a pass hands the issue back on it at once and a next
        run may claim: from then on no try moves a label, and neither does any try that finds
        a claim after ours (ADR 0024). Every try appends the outage marker until one posted it
        (ADR 0092)."""
        issue, log, now = self._fresh_read()
        token = self.claim.record.token
        # Our own outage marker, from an earlier try, releases nothing.
        log = replace(log, tombstones=tuple(
            t for t in log.tombstones if not (t.tombstone.by == HOLDER_END and t.tombstone.token == token)))
        lost = self._lost_reason(issue, log, now)
        by = next((t.tombstone for t in log.tombstones if t.tombstone.token == token), None)
        if by is not None:  # say so first: it is why the count is withdrawn (ADR 0019)
            lost = f"the claim was released by {by.by}: {by.reason}"
        mine = log.find(token)
        later = next((c for c in log.claims if mine is not None and c.comment_id > mine.comment_id), None)
        sent_before = self._outage_record is not None
        if self._outage_record is None:
            note = f"{why}; GitHub was unreachable, so no attempt is spent"
            if lost is None:
                outcome = handed_back(self.config, self.claim.record.attempt, note, counts=False)
                note = outcome.note or note
            self._outage_record = self.claim.record.with_changes(
                state=State.INTERRUPTED,
                note=note if lost is None else f"{note}; meanwhile {lost}",
                finished_at=self.clock.now_iso(),
                counts_attempt=False,
                child_pid=self.child_pid,
                progress=self.progress,
            )
            # Written even over a released claim (the one final record that is): a pass that
            # could not hear from us presumed us dead, and our account is what `attempts_used`
            # believes. The labels are then no longer ours.
            self._write_final(self._outage_record)
        else:
            self._put_back(self._outage_record)
        record = self._outage_record
        self._append_outage_marker(record)
        too_late = self.clock.monotonic() >= self._last_label_write()
        if lost is None and (sent_before or later is not None or too_late):
            # A pass may already hand the issue back (our record may be final on GitHub since
            # an earlier try, or a judge may presume us dead) and a next run hold it: a label
            # move now could take that run's lock off. The record is enough: a pass reads it
            # and hands the issue back without spending an attempt.
            self.log(f"#{self.number}: recorded the outage; the next reconcile pass hands the issue back")
            return
        if lost is None:
            with self._labels_in_time():
                self.move_labels(add=self.config.labels.queue)
            self.requeued = True
            self.log(f"#{self.number}: recorded the outage; back to the queue, no attempt spent")
            return
        if self._failed_for_our_outage(issue, log, record):
            lab = self.config.labels
            self.gh.add_labels(self.number, [lab.queue])
            self.gh.remove_label(self.number, lab.failed)
            self.requeued = True
            self.log(
                f"#{self.number}: recorded the outage; a pass had failed the issue for it: back to the queue"
            )
            return
        self.log(f"#{self.number}: recorded the outage; the claim was already lost ({lost}), labels left")

    def _put_back(self, record: ClaimRecord) -> None:
        """Write `record` again only if GitHub shows something else (an earlier write that did
        not land, or a late beat over it): an unchanged record keeps its `updated_at`."""
        body = render_record(record)
        current, _ = self.gh.get_comment(self.claim.comment_id)
        if current.body != body:
            self.gh.edit_comment(self.claim.comment_id, body)
        self.claim.record = record

    def _last_label_write(self) -> float:
        """The last instant, on our clock, at which a label write of ours may start: a judge may
        presume us dead stale_after after our last completed beat was sent (its updated_at is
        no earlier); less GitHub's whole-second slack and the longest a request it accepted
        takes to land, but never before our lease ends (ADR 0024). The stale_after is the one
        our record promises (ADR 0045).

        Judges count on GitHub's clock, and ours stands still while our VM is paused: the same
        bound is also taken on GitHub's clock, from our last beat's stamp and GitHub's time at
        our last fresh read (counted from just before that read was sent), so that a holder
        resumed past its presumption moves no label (ADR 0055)."""
        stale_after = self.promise.stale_after
        margin = min(LABEL_LANDING_MARGIN_S, stale_after - renew_deadline(stale_after))
        bound = self.last_sent + stale_after - margin
        if self._stamp is not None and self._read_at is not None:
            github_now, sent = self._read_at
            left = (self._stamp - github_now).total_seconds() + stale_after - margin
            bound = min(bound, sent + left)
        return bound

    @contextlib.contextmanager
    def _labels_in_time(self) -> Iterator[None]:
        """No request of the block starts after `_last_label_write` (nor after a deadline the
        caller set already)."""
        with self.gh.bounded(Policy(self.clock, self._last_label_write())):
            yield

    def _failed_for_our_outage(self, issue: Issue, log: IssueLog, record: ClaimRecord) -> bool:
        return failed_for_outage(issue.is_open, issue.labels, log, record, self.config)

    def move_labels(self, add: str | None, also_remove: tuple[str, ...] = ()) -> None:
        lab = self.config.labels
        stage = lab.stage(self.claim.record.stage)
        remove = [*also_remove, *filter(None, [stage])]
        move_labels(self.gh, self.number, [add] if add else [], remove, lab.working)

    def _stop_beats(self) -> None:
        """No beat writes the record after this. A beat in flight gets a moment to finish
        (waited for on the clock, so the model checker can interleave it); if it does not,
        the final write is read back."""
        started = self.clock.monotonic()
        got = self._record_lock.acquire(blocking=False)
        while not got and self.clock.monotonic() - started < self.final_wait:
            self.clock.sleep(0.05)
            got = self._record_lock.acquire(blocking=False)
        self._final = True
        if got:
            self._record_lock.release()
        else:
            self._ambiguous_write = True

    def _write_final(self, record: ClaimRecord) -> None:
        """Final states are sticky (defect 11 of the v0.1 audit): when a beat may still land
        after this write, read the record back and write it again if it was overwritten."""
        self._write(record)
        if not self._ambiguous_write:
            return
        try:
            current, _ = self.gh.get_comment(self.claim.comment_id)
        except NotFound:
            return
        if current.body != self._body(record):
            self.gh.edit_comment(self.claim.comment_id, self._body(record))

    def _body(self, record: ClaimRecord) -> str:
        """The claim comment for `record`: a final one carries the command's result (ADR 0041)."""
        return render_record(record, result=None if record.state.is_open else self.result)
