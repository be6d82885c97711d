"""The reconcile pass, `status` and `release`: judge every issue carrying the lock and repair
what a dead run left behind (docs/design.md sections 5, 6 and 10).

Survey first (read only), then execute each plan. The survey reads the repository's recently
updated comments in one listing and keeps a claim whose holder visibly beats on time without
reading its issue; every other issue is read in full, and only a full read can lead to a write
(docs/adr/0018-flat-reconcile-cost.md). Before releasing a claim the record is
read again and kept if its heartbeat moved; after posting a tombstone the comments are read
again so that two reconcilers racing over one dead claim leave one tombstone, not two.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from functools import partial

from orion_action.config import Config
from orion_action.core.cancelled import (
    cancel_against_a_persons_queueing,
    standing_cancel,
    swept_a_newer_cancel,
    swept_an_uncancelled_queueing,
)
from orion_action.core.issue import ClaimEntry, Comment, Issue, IssueLog, Logins, read_log, trusted_set
from orion_action.core.liveness import (
    MISSED_BEAT_FACTOR,
    Machine,
    Verdict,
    unqueue_in_flight,
)
from orion_action.core.plan import (
    STRAND_LOOKBACK,
    STRAND_LOOKBACK_MAX_S,
    Action,
    Plan,
    PreviousPass,
    is_stranded,
    keep_on_fresh_beat,
    plan_cancel,
    plan_issue,
    plan_release,
    plan_strand,
    run_end,
    strand_candidates,
    strand_since,
)
from orion_action.core.queue import pick_order_across
from orion_action.core.record import (
    ReleaseAction,
    State,
    Tombstone,
    parse_block,
    render_record,
    render_tombstone,
)
from orion_action.core.requeue import (
    orion_took_the_queue_label,
    queueing_a_stale_removal_took,
    queueing_at_risk,
    refused_after,
    refused_since,
    requeue_candidates,
    requeue_never_landed,
    taken_by_a_late_unqueue,
)
from orion_action.core.stale_add import (
    FateOff,
    asks_the_record,
    decided_by_the_run,
    fates_added_over_a_queueing,
    queued_under_the_lock,
    requeue_over_a_fate,
    stale_fates,
)
from orion_action.core.survey import QueueRow, Survey, queue_row
from orion_action.errors import AuthError, GitHubError, NotClaimed, OrionError, Unavailable
from orion_action.ports import ONE_TRY, GitHubPort, RunnerPort, Sight
from orion_action.services import dashboard
from orion_action.services.claiming import is_queued, missing_label_hint
from orion_action.services.dispatch import dispatch_after_pass, trigger_check
from orion_action.services.holding import LABEL_LANDING_MARGIN_S, move_labels
from orion_action.services.observe import judge_entry
from orion_action.services.pause import Paused, read_pause
from orion_action.services.survey import Spent

Log = Callable[[str], None]
# The repository-wide listing reaches this much further back than a holder beating on time
# can be: GitHub's whole-second stamps, and a listing that takes a while.
RECENT_MARGIN_S = 5.0
# How many times a pass tries its lock removal, looking at the issue again between tries
# (ADR 0054): about what the client's own retries give a write under a flaky API.
LOCK_TRIES = 5
# The most records a pass reads for issues a stale removal may have left with no label (ADR
# 0088): one GraphQL query each, for the open issues without orion's labels changed since the
# previous pass; past it, the most recently updated are read and the count is logged.
TAKEN_LOOK_READS = 100
# A `since` no comment reaches: the listing answers one empty page and GitHub's time.
_NO_COMMENT_YET = datetime(9000, 1, 1, tzinfo=timezone.utc)


def _fate_off_reason(off: tuple[FateOff, ...]) -> str:
    """Why a pass takes fate labels off a person's queueing (ADR 0094, ADR 0099)."""
    names = ", ".join(f.label for f in off)
    if all(f.row == "queued-mid-run" for f in off):
        return (f"a person queued the issue while a run held it: the run's {names} label, added when it "
                f"ended, comes off (its result stays in its record), and the issue waits in the queue "
                f"for the run they asked for")
    return (f"orion's {names} label, planned before the issue was queued again and added after the lock "
            f"came off, landed beside the queue label (a stale write): it comes off, and the issue waits "
            f"in the queue")


def _holder_line(entry: ClaimEntry | None) -> str:
    if entry is None:
        return ""
    h = entry.record.holder
    return f"runner {h.host}, pid {h.pid}, comment {entry.comment_id}"


def _seen_gone(s: Survey, entries: tuple[ClaimEntry, ...]) -> tuple[ClaimEntry, ...]:
    """The released claims whose holder the pass saw gone (ADR 0090): its process missing from
    its own machine's process table, or its machine rebooted. A holder judged dead only by its
    silence may be cut off from GitHub and write its outage record ("interrupted", no attempt
    spent) once it is back; the pass's rewrite, planned from its earlier read, could land after
    that record and undo it on the comment (the model's `outage-record-overwritten`, trace (13,
    197); the holder's marker keeps the account since ADR 0092). Its record is left as it is:
    the tombstone says it is released."""
    return tuple(e for e in entries
                 if (v := s.verdicts.get(e.record.token)) is not None and v.holder_gone)


class Reconciler:
    def __init__(
        self,
        gh: GitHubPort,
        config: Config,
        log: Log,
        here: Machine,
        sight: Sight,
    ):
        self.gh = gh
        self.config = config
        self.log = log
        self.here = here
        self.sight = sight
        self._trusted: Logins | None = None
        # Whether this pass looks for issues a dead holder left with no label (ADR 0072): the
        # reconcile pass does, `status` and `release` do not.
        self.strands = False
        # When the previous successful pass of this reconcile workflow began, if known (ADR
        # 0081): how far back the strand look reaches.
        self.previous_pass: PreviousPass | None = None
        # The repository-wide listing `survey` made, reaching back `_strand_since` ("unmade":
        # no open issue carried the lock; None: it failed).
        self._strand_listing: tuple[list[Comment], datetime] | None | str = "unmade"
        # The open issues the queue listing showed (`survey_queue`), if it was made.
        self._queued: set[int] = set()
        # `_recent_by_issue`'s answer, once made.
        self._recent: tuple[dict[int, list[Comment]], dict[int, IssueLog]] | None = None
        # Why the pass could not make every read or write it meant to (`_looked_short`).
        self.incomplete: list[str] = []

    @property
    def trusted(self) -> Logins:
        """orion's logins (the token's and the trusted authors): read at first use, since the
        token's login may cost a request. Their label removals carry a cancel out, they never
        withdraw one (ADR 0061)."""
        if self._trusted is None:
            self._trusted = trusted_set(self.gh.own_login(), self.config.trusted_authors)
        return self._trusted

    # -- reading --------------------------------------------------------------------------

    def survey_issue(self, issue: Issue) -> Survey:
        comments, now = self.gh.list_comments(issue.number)
        log = read_log(comments, self.trusted)
        stale_after = self.config.stale_after
        verdicts = {
            c.record.token: judge_entry(c, now, stale_after, self.here, self.gh.workflow_run_status,
                                        sight=self.sight)
            for c in log.open_claims()
        }
        if issue.is_open:  # a closed issue is only unlocked: a late unqueue strands nothing there
            verdicts = {c.record.token: unqueue_in_flight(c.record, c.created_at, now, stale_after,
                                                          LABEL_LANDING_MARGIN_S, verdicts[c.record.token])
                        for c in log.open_claims()}
        plan = plan_issue(
            issue.number,
            issue.is_open,
            issue.labels,
            log,
            verdicts,
            self.config.labels,
            self.config.max_attempts,
        )
        return Survey(issue, log, now, verdicts, plan, listed=len(comments))

    def survey(self) -> list[Survey]:
        """Every issue carrying the lock: ceil(N/100) listings, then ceil(C/100) for the
        repository's recently updated comments (C: about one per live claim), then a full read
        of each issue the listing cannot show to be held by a live holder."""
        _ = self.trusted  # one GET /user up front, not in the middle of the pass
        issues = self.gh.list_issues(self.config.labels.working, state="all")
        self._strand_listing = "unmade"
        self._recent = None
        recent = self._recent_comments(issues)
        return [self._kept_on_fresh_beat(i, recent) or self.survey_issue(i) for i in issues]

    def _recent_comments(self, issues: list[Issue]) -> tuple[dict[int, list[Comment]], datetime] | None:
        """The repository's comments updated within a beat and a half of the lock listing (on
        GitHub's clock), by issue; None when no open issue carries the lock or the listing
        failed (then every issue is read in full: slower, never less safe). A pass that looks
        for stranded issues (`strands`) lists further back in the same request and keeps the
        whole listing for `survey_strands`."""
        held = [i for i in issues if i.is_open]
        if not held:
            return None
        # The longest beat a holder may promise (ADR 0045): a holder beating slower than the
        # window would still be kept, but only after a full read of its issue.
        window = MISSED_BEAT_FACTOR * self.config.heartbeat_max_interval + RECENT_MARGIN_S
        oldest = min(i.read_at for i in held)
        since = oldest - timedelta(seconds=window)
        reach = min(since, self._strand_since(oldest)) if self.strands else since
        try:
            comments, now = self.gh.list_repo_comments(reach)
        except AuthError:
            raise
        except GitHubError as exc:
            self._looked_short(f"the repository-wide comment listing failed ({exc}); "
                               f"reading every issue in full")
            self._strand_listing = None
            return None
        self._strand_listing = (comments, now)
        by_issue: dict[int, list[Comment]] = {}
        for c in comments:
            if c.issue is not None and c.updated_at >= since:
                by_issue.setdefault(c.issue, []).append(c)
        return by_issue, now

    def _looked_short(self, why: str) -> None:
        """A read or a write of the pass failed (logged with `why`): the pass is incomplete
        (`incomplete`, ADR 0091). Its looks start from what changed since the previous
        successful pass, so one that could not look must not count as successful, or the next
        pass would start after what it missed (default seed 29 episode 215)."""
        self.incomplete.append(why)
        self.log(f"{why}; this pass is incomplete, and the next looks back from the previous complete one")

    def _strand_since(self, now: datetime) -> datetime:
        """From which update time a pass at `now` lists comments for stranded issues: back to
        what the previous successful pass could not judge yet, when it is known (ADR 0081)."""
        c = self.config
        return strand_since(now, c.stale_after, c.longest_stale_after, self.previous_pass, RECENT_MARGIN_S)

    def _kept_on_fresh_beat(
        self, issue: Issue, recent: tuple[dict[int, list[Comment]], datetime] | None
    ) -> Survey | None:
        if recent is None or issue.number not in recent[0]:
            return None
        now = recent[1]
        log = read_log(recent[0][issue.number], self.trusted)

        def judge(entry: ClaimEntry) -> Verdict:
            # No Actions-run lookup: the shortcut only takes holders that beat on time.
            return judge_entry(entry, now, self.config.stale_after, self.here, sight=self.sight)

        lab = self.config.labels
        plan = keep_on_fresh_beat(issue.number, issue.is_open, issue.labels, log, now, lab, judge)
        if plan is None or plan.holder is None or plan.verdict is None:
            return None
        return Survey(issue, log, now, {plan.holder.record.token: plan.verdict}, plan, full_read=False)

    def survey_cancels(self) -> list[Plan]:
        """Open issues carrying the cancel label that no run holds (one listing per 100)."""
        lab = self.config.labels
        found = (plan_cancel(i.number, i.is_open, i.labels, lab) for i in self.gh.list_issues(lab.cancel))
        return [p for p in found if p is not None]

    def survey_strands(self, listed: set[int]) -> list[Survey]:
        """Issues a dead holder left with no label, which no label listing shows (ADR 0072):
        the repository's comments updated since `strand_since` (ADR 0081: back to what the
        previous successful pass could not judge yet, or `STRAND_LOOKBACK` stale_after; the survey's
        repository-wide listing reaching further back, its pages beyond the first the only extra
        cost; when no open issue carried the lock, one empty page for GitHub's time and the
        listing, ceil(C/100)); an issue whose newest claim there is open and not in `listed`
        (the lock listing) is read (one request), and, carrying none of orion's labels, surveyed
        in full (one more) and planned by `plan_strand`. None in the steady state: every open
        claim's issue carries the lock."""
        recent = self._recent_by_issue()
        if recent is None:
            return []
        _, logs = recent
        found = []
        lab = self.config.labels
        for n in strand_candidates(logs, listed):
            try:
                issue, _ = self.gh.get_issue(n)
                if not is_stranded(issue.is_open, issue.labels, lab):
                    continue
                s = self.survey_issue(issue)
            except AuthError:
                raise
            except GitHubError as exc:
                self._looked_short(f"#{n}: could not read an issue that may be stranded ({exc})")
                continue
            attempts = self.config.max_attempts
            stands = self._cancel_stands(n)
            if stands is None:
                continue
            plan = plan_strand(n, issue.is_open, issue.labels, s.log, s.verdicts, lab, attempts,
                               cancel_stands=stands)
            if plan is not None:
                found.append(replace(s, plan=plan))
        return found

    def _recent_by_issue(self) -> tuple[dict[int, list[Comment]], dict[int, IssueLog]] | None:
        """The repository's comments updated since `strand_since`, by issue, and each issue's
        log read from them: the survey's listing, or (no open issue carried the lock) one empty
        page for GitHub's time and the listing, made and read once a pass (the strand look and
        the late-unqueue look share it). None when it failed or this is no reconcile pass."""
        if self._recent is not None:
            return self._recent
        listing = self._strand_listing
        if listing is None or not self.strands:
            return None  # the survey's listing failed: the next pass looks
        if isinstance(listing, str):
            try:
                _, now = self.gh.list_repo_comments(_NO_COMMENT_YET)
                listing = self.gh.list_repo_comments(self._strand_since(now))
            except AuthError:
                raise
            except GitHubError as exc:
                self._looked_short(f"the listing that looks for stranded issues failed ({exc})")
                self._strand_listing = None
                return None
            self._strand_listing = listing
        by_issue: dict[int, list[Comment]] = {}
        for c in listing[0]:
            if c.issue is not None:
                by_issue.setdefault(c.issue, []).append(c)
        self._recent = by_issue, {n: read_log(cs, self.trusted) for n, cs in by_issue.items()}
        return self._recent

    def survey_late_unqueues(self, listed: set[int]) -> list[Plan]:
        """Issues a claim's late unqueue left with no label (ADR 0086): among the recently
        updated comments, those whose last orion event puts a queueing at risk (a release back
        to the queue, or a claim's `lost` record saying it sent its unqueue:
        `core.requeue.queueing_at_risk`) and that no label listing shows (`listed`: the lock's
        and the queue's) are read: their comments, then the issue (two requests each; in the
        steady state none: a requeued issue is queued or claimed again). One carrying none of
        orion's labels, that no claim's trigger check refused since, whose whole log (every
        comment listed, a claim shown `claiming` read again) still puts the queueing at risk,
        and whose queue label GitHub's record (one GraphQL query)
        shows taken off by orion after that event (however late, ADR 0095) or, after a release,
        never put on (its writer stopped between its tombstone and its labels, ADR 0098), and no
        cancel standing, gets its queue label back."""
        recent = self._recent_by_issue()
        if recent is None:
            return []
        comments, logs = recent
        lab = self.config.labels
        found = []
        for n in requeue_candidates(logs, listed):
            risk = queueing_at_risk(logs[n])
            if risk is None:
                continue
            if refused_since(comments[n], self.trusted, risk.comment_id):
                continue  # a claim's trigger check took the label off, and meant it
            try:
                listing, _ = self.gh.list_comments(n)
                issue, _ = self.gh.get_issue(n)  # after the listing (ADR 0082)
                if not is_stranded(issue.is_open, issue.labels, lab):
                    continue
                if issue.comments > len(listing):
                    continue  # a comment not listed yet may be a claim that took the queueing
                # The whole log decides, not the recently updated comments: a claim since may
                # have taken the queueing, and the released claim may never have run.
                risk = queueing_at_risk(self._claims_read_again(listing, risk.comment_id))
                if risk is None:
                    continue
                events = self.gh.queue_history(n, lab.queue, lab.cancel).label_events
            except AuthError:
                raise
            except GitHubError as exc:
                self._looked_short(f"#{n}: could not read an issue a late unqueue may have stranded ({exc})")
                continue
            if taken_by_a_late_unqueue(events, lab.queue, self.trusted.has, risk.since):
                how = f"that claim's late {lab.queue} label removal took the queueing"
            elif risk.released and requeue_never_landed(events, lab.queue, risk.since):
                how = f"its {lab.queue} label never landed (the release stopped after its tombstone)"
            else:
                continue
            if cancel_against_a_persons_queueing(events, lab.queue, lab.cancel, self.trusted.has):
                continue  # the issue was cancelled since: it carries no label (ADR 0078)
            why = f"the issue carried no label: after {risk.what}, {how}; queued again"
            found.append(Plan(n, Action.REQUEUE, why, add_labels=(lab.queue,)))
        return found

    def _claims_read_again(self, listing: list[Comment], after: int) -> IssueLog:
        """The issue's log from `listing`, each claim posted after comment `after` that the
        listing shows `claiming` read again by itself (one request each; a listing may lag a
        claim's later edits, default seed 147 episode 99, and a claim's own GET does not)."""
        by_id = {c.id: c for c in listing}
        for c in read_log(listing, self.trusted).claims:
            if c.comment_id > after and c.record.state is State.CLAIMING:
                by_id[c.comment_id], _ = self.gh.get_comment(c.comment_id)
        return read_log(by_id.values(), self.trusted)

    def survey_taken_queueings(self, listed: set[int]) -> list[Plan]:
        """Issues a pass's stale removal of the queue label left with no label (ADR 0088): a
        removal planned before a person's act (the cancel sweep read the issue cancelled, and
        the person took the cancel off again) that landed after it, its writer killed before it
        could look back (ADR 0073) or its answer lost. Nothing lists such an issue, so the pass
        lists the open issues updated since what the previous pass could not judge yet
        (`strand_since`, ADR 0081; one request per 100), and reads GitHub's record (one GraphQL
        query) of each one carrying none of orion's labels that no other look took up
        (`listed`), at most `TAKEN_LOOK_READS`, the most recently updated first. Where the queue
        label's last event is orion's removal, the issue's comments are listed (one request per
        100: its claims, and a refusal) and the issue read again (one more: a comment the
        listing does not show yet may be a claim, and the next pass looks): a person's queueing
        that removal took with no cause (`core.requeue.queueing_a_stale_removal_took`) is put
        back."""
        listing = self._strand_listing
        if self._recent_by_issue() is None or not isinstance(listing, tuple):
            return []  # the comment listing failed: the next pass looks
        lab = self.config.labels
        now = listing[1]
        try:
            changed = self.gh.list_issues(None, since=self._strand_since(now))
        except AuthError:
            raise
        except GitHubError as exc:
            self._looked_short(f"the listing of recently updated issues failed ({exc})")
            return []
        bare = [i for i in changed if i.number not in listed and is_stranded(i.is_open, i.labels, lab)
                and lab.dashboard not in i.labels]  # the dashboard is orion's own issue, never queued
        bare.sort(key=lambda i: i.updated_at or i.created_at, reverse=True)
        if len(bare) > TAKEN_LOOK_READS:
            self.log(f"{len(bare)} open issues without orion's labels changed since the previous pass; "
                     f"reading the {TAKEN_LOOK_READS} most recently updated")
        oldest = now - timedelta(seconds=STRAND_LOOKBACK_MAX_S)
        found = []
        for issue in bare[:TAKEN_LOOK_READS]:
            n = issue.number
            try:
                events = self.gh.queue_history(n, lab.queue, lab.cancel, lab.working).label_events
                if orion_took_the_queue_label(events, lab.queue, self.trusted.has) is None:
                    continue
                comments, _ = self.gh.list_comments(n)
                read, _ = self.gh.get_issue(n)  # after the listing (ADR 0082)
            except AuthError:
                raise
            except GitHubError as exc:
                self._looked_short(f"#{n}: could not read whether a stale removal took its queueing ({exc})")
                continue
            if read.comments > len(comments) or not is_stranded(read.is_open, read.labels, lab):
                continue  # a claim not listed yet (default seed 10 episode 21), or labelled since
            claims = read_log(comments, self.trusted).claims
            taken = queueing_a_stale_removal_took(events, lab.queue, lab.cancel, lab.working,
                                                  self.trusted.has, oldest, claims)
            if taken is None or refused_after(comments, self.trusted, taken.at):
                continue
            who = taken.login or "someone"
            why = (f"the issue carried no label: {who} queued it, and a pass's {lab.queue} label removal "
                   f"planned before that landed after it and took the queueing; queued again")
            found.append(Plan(n, Action.REQUEUE, why, add_labels=(lab.queue,)))
        return found

    def execute_put_back(self, plan: Plan) -> Plan:
        """Put the queue label back on an issue `survey_late_unqueues` or
        `survey_taken_queueings` found stranded, unless it was labelled meanwhile (a person's
        call)."""
        issue, _ = self.gh.get_issue(plan.issue)
        if not is_stranded(issue.is_open, issue.labels, self.config.labels):
            return replace(plan, action=Action.KEEP, reason="the issue was labelled meanwhile; left as it is")
        self.gh.add_labels(plan.issue, list(plan.add_labels))
        return plan

    def _cancel_stands(self, n: int) -> bool | None:
        """Whether GitHub's record shows a person's cancel standing against the issue's latest
        queueing (ADR 0078), for a stranded issue: the cancel sweep may have taken its label
        off (one GraphQL query, made only for a stranded issue). None when it cannot be read:
        the next pass looks."""
        lab = self.config.labels
        try:
            history = self.gh.queue_history(n, lab.queue, lab.cancel)
        except AuthError:
            raise
        except GitHubError as exc:
            self._looked_short(f"#{n}: could not read whether a stranded issue was cancelled ({exc})")
            return None
        return standing_cancel(history.label_events, lab.queue, lab.cancel, self.trusted.has) is not None

    def execute_strand(self, s: Survey) -> Plan:
        """Release the dead claims of a stranded issue and put its labels on (`plan_strand`).
        No claimer takes an issue without the queue label, so no claim can be in flight; what
        is checked is another pass doing the same (a comment the listing lags, before our
        tombstone; an earlier tombstone, after it: ADR 0006) and a person labelling the issue
        meanwhile. Once our tombstone stands the labels go on: a pass that stopped there would
        leave a released claim on an issue with no label, which no later pass takes up."""
        plan, n = s.plan, s.plan.issue
        keep = replace(plan, action=Action.KEEP, release=())
        for entry in plan.release:
            fresh, _ = self.gh.get_comment(entry.comment_id)
            if fresh.updated_at != entry.updated_at:
                return replace(keep, reason="the heartbeat moved while the pass ran; keeping the claim")
        issue, _ = self.gh.get_issue(n)
        if s.listed is not None and issue.comments > s.listed:
            why = "a comment is not listed yet (another pass's release?); the next pass looks again"
            return replace(keep, reason=why)
        known = {c.record.token for c in s.log.claims}
        mine = self._post_tombstones(n, plan.release, plan.tombstone_action, plan.reason, plan.counts_attempt)
        comments, _ = self.gh.list_comments(n)
        fresh_log = read_log(comments, self.trusted)
        duplicate = self._beaten_to_it(fresh_log, plan, set(mine), known, before_mine=True)
        if duplicate:
            for cid in mine:
                self.gh.delete_comment(cid)
            return replace(keep, reason=duplicate)
        self._no_longer_working(_seen_gone(s, plan.release), plan.reason)
        claimed = self._claimed_after_ours(fresh_log, plan, set(mine), known)
        if claimed is not None:
            return replace(keep, reason=claimed)
        issue, _ = self.gh.get_issue(n)
        if not is_stranded(issue.is_open, issue.labels, self.config.labels):
            return replace(keep, reason="the issue was labelled meanwhile; the labels are left as they are")
        if plan.add_labels:  # none after a person's cancel (ADR 0078)
            self.gh.add_labels(n, list(plan.add_labels))
        for name in plan.remove_labels:
            self.gh.remove_label(n, name)
        return plan

    def pass_over(self, dry_run: bool) -> tuple[list[Survey], list[Plan]]:
        """A pass's reads and writes, in order: the locked issues (`survey`, `execute`), the
        cancel sweep, the queued issues a cancel still stands against (ADR 0085), the stranded
        issues. A write that fails turns its plan into `report`; the next pass retries it."""
        surveys = self.survey()
        repair = "the repair of a stranded issue"
        done = [self._carried_out(s.plan, dry_run, partial(self.execute, s), s.plan.action.value)
                for s in surveys]
        done += [self._carried_out(p, dry_run, partial(self.execute_cancel, p), "cancel")
                 for p in self.survey_cancels()]
        done += [self._carried_out(p, dry_run, partial(self.execute_queue_repair, p), p.action.value)
                 for p in self.survey_queue()]
        locked = {s.issue.number for s in surveys}
        done += [self._carried_out(s.plan, dry_run, partial(self.execute_strand, s), repair)
                 for s in self.survey_strands(locked)]
        done += [self._carried_out(p, dry_run, partial(self.execute_put_back, p), repair)
                 for p in self.survey_late_unqueues(locked | self._queued)]
        repaired = {p.issue for p in done}
        done += [self._carried_out(p, dry_run, partial(self.execute_put_back, p), repair)
                 for p in self.survey_taken_queueings(locked | self._queued | repaired)]
        return surveys, done

    def _carried_out(self, plan: Plan, dry_run: bool, execute: Callable[[], Plan], what: str) -> Plan:
        if dry_run:
            return plan
        try:
            return execute()
        except GitHubError as exc:
            self._looked_short(f"#{plan.issue}: {what} failed: {exc}; the next pass will retry")
            return replace(plan, action=Action.REPORT, reason=f"{plan.reason}; the write failed: {exc}")

    # -- writing --------------------------------------------------------------------------

    def execute_cancel(self, plan: Plan) -> Plan:
        """The queue label first, then, unless a run took the issue meanwhile (its claim read
        it before the cancel label came: its holder then sees the label at its next beat), the
        cancel label. A pass killed in between leaves the cancel label, and the next pass
        finishes. Nothing while a claim may still be in flight, and what goes is planned again
        from the issue as read just before (a person may have requeued and cancelled it again
        since the sweep listed it: the queue label goes too), ADR 0053."""
        lab = self.config.labels
        n = plan.issue
        issue, _ = self.gh.get_issue(n)
        in_flight = self._claim_in_flight(issue)
        if in_flight is not None:
            return replace(plan, action=Action.KEEP, reason=in_flight)
        fresh = plan_cancel(n, issue.is_open, issue.labels, lab)
        if fresh is None:
            return replace(plan, action=Action.KEEP, reason="the labels changed meanwhile; nothing to cancel")
        plan = fresh
        if lab.queue in plan.remove_labels:
            self.gh.remove_label(n, lab.queue)
            history = self.gh.queue_history(n, lab.queue, lab.cancel)  # brings the issue (ADR 0063)
            issue = history.issue if history.issue is not None else self.gh.get_issue(n)[0]
            if lab.working in issue.labels:
                reason = f"a run took the issue meanwhile; its holder stops at the {lab.cancel} label"
                return replace(plan, action=Action.KEEP, reason=reason)
            requeued = swept_an_uncancelled_queueing(issue.labels, history.label_events, lab.queue,
                                                     lab.cancel, lab.working, self.trusted.has)
            if requeued is not None:
                # A queueing made after the cancel was carried out (by another pass), taken by
                # our removal planned before it: put it back (ADR 0073).
                self.gh.add_labels(n, [lab.queue])
                who = requeued.login or "someone"
                why = (f"{who} queued the issue again after its cancel was carried out, and the sweep's "
                       f"removal took that queueing; the {lab.queue} label is back")
                if lab.cancel in issue.labels:
                    # orion's own put-back of a cancel the person's queueing came after (ADR 0088):
                    # it cancels nothing, and left on, every pass would sweep the queue again.
                    self.gh.remove_label(n, lab.cancel)
                    restored = self._newer_cancel_put_back(n)
                    why = why if restored is None else restored
                return replace(plan, action=Action.KEEP, reason=why)
        self.gh.remove_label(n, lab.cancel)
        restored = self._newer_cancel_put_back(n)
        return plan if restored is None else replace(plan, action=Action.KEEP, reason=restored)

    def _newer_cancel_put_back(self, n: int) -> str | None:
        """Why the cancel label went back on after the sweep took it off, or None (ADR 0073).
        The removal was planned from a read, and a person may have requeued and cancelled the
        issue again before it landed: it then took the new cancel off (`stale-sweep-uncancel`).
        GitHub's record shows that cancel standing (orion's removal withdraws none, ADR 0061)
        and the issue read with it (one query) the queue label or a lock without the cancel
        label: the label goes back, for the next pass's sweep or the holder's beat."""
        lab = self.config.labels
        history = self.gh.queue_history(n, lab.queue, lab.cancel)
        issue = history.issue if history.issue is not None else self.gh.get_issue(n)[0]
        newer = swept_a_newer_cancel(issue.labels, history.label_events, lab.queue, lab.cancel, lab.working,
                                     self.trusted.has)
        if newer is None:
            return None
        self.gh.add_labels(n, [lab.cancel])
        who = newer.login or "someone"
        return (f"{who} cancelled the issue again while the sweep ran, and the sweep's removal took that "
                f"cancel off; the {lab.cancel} label is back and the next pass finishes")

    def survey_queue(self) -> list[Plan]:
        """Queued issues a stale write whose writer died before it could look back at GitHub's
        record left saying the wrong thing. Either the latest queueing by a person was
        cancelled although the cancel label is gone (ADR 0085: a pass's requeue landing after
        the cancel was carried out, ADR 0079; a sweep's removal taking a newer cancel off, ADR
        0073), or a pass's ready or failed planned before that queueing landed beside it, and
        no claimer takes an issue carrying two fates (ADR 0094, `core.stale_add`), or a run's
        ending added its fate after a person queued it mid-run, or a pass's requeue planned
        before a run's end landed beside its fate (ADR 0099). The next pass
        looks for both: the queue listing (one request per 100), then GitHub's record (one
        GraphQL query) of each queued issue neither held nor carrying the cancel label (the
        holder's and the sweep's) that changed since what the previous pass could judge
        (`strand_since`, ADR 0081). A listing or a read that fails is logged and left to the
        next pass."""
        lab = self.config.labels
        try:
            queued = self.gh.list_issues(lab.queue)
        except AuthError:
            raise
        except GitHubError as exc:
            self._looked_short(f"the queue listing failed ({exc}); no look for cancels it should carry out")
            return []
        self._queued = {i.number for i in queued}
        found = []
        for issue in queued:
            if lab.cancel in issue.labels or lab.working in issue.labels or issue.updated_at is None:
                continue
            if issue.updated_at < self._strand_since(issue.read_at):
                continue  # the previous pass looked at it as it is
            try:
                history = self.gh.queue_history(issue.number, lab.queue, lab.cancel, lab.working, lab.ready,
                                                lab.failed)
            except AuthError:
                raise
            except GitHubError as exc:
                self._looked_short(f"#{issue.number}: could not read whether a cancel stands ({exc})")
                continue
            events = history.label_events
            cancel = cancel_against_a_persons_queueing(events, lab.queue, lab.cancel, self.trusted.has)
            on = history.issue.labels if history.issue is not None else issue.labels
            stale = fates_added_over_a_queueing(events, on, lab, self.trusted.has)
            if cancel is not None:
                who = cancel.login or "someone"
                why = (f"cancelled: {who} added the {lab.cancel} label after a person last queued the issue "
                       f"and no person has taken it off since, though the labels said queued (a stale "
                       f"write); add {lab.queue} to run it again")
                found.append(Plan(issue.number, Action.CANCEL, why, remove_labels=(lab.queue,)))
            elif lab.queue not in on or on & {lab.working, lab.cancel}:
                continue  # the labels moved since the listing
            elif stale:
                names = tuple(f.label for f in stale)
                found.append(Plan(issue.number, Action.REQUEUE, _fate_off_reason(stale), remove_labels=names))
            elif requeue_over_a_fate(events, on, lab, self.trusted.has):
                fate = ", ".join(sorted(on & {lab.ready, lab.failed}))
                why = (f"orion's {lab.queue} label, planned before the run ended and added after the lock "
                       f"came off, landed beside the run's {fate} label (a stale write): it comes off, and "
                       f"the run's end stands")
                found.append(Plan(issue.number, Action.COMPLETE, why, remove_labels=(lab.queue,)))
            elif queued_under_the_lock(events, lab, self.trusted.has):
                plan = self._decided_by_the_run(issue, on)
                found += [plan] if plan is not None else []
        return found

    def _decided_by_the_run(self, issue: Issue, on: frozenset[str]) -> Plan | None:
        """The plan for an issue whose queue label orion added under the lock (ADRs 0102 and
        0103): the issue's record says whether it was the run's own, and a stale write's labels
        come off: a fate beside a hand-back, the queue label beside the run's fate, or the queue
        label of a run that was cancelled. One listing of the comments; one that lags a comment
        the issue counts, or fails, leaves the issue to the next pass (it stays among the changed
        issues it looks at)."""
        lab = self.config.labels
        n = issue.number
        try:
            comments, _ = self.gh.list_comments(n)
        except AuthError:
            raise
        except GitHubError as exc:
            self._looked_short(f"#{n}: could not read whether the run left its {lab.queue} label ({exc})")
            return None
        if issue.comments > len(comments):
            return None
        end = run_end(read_log(comments, self.trusted), lab, self.config.max_attempts)
        decided = decided_by_the_run(end, on, lab)
        if not decided.remove:
            return None
        if decided.row == "cancelled":
            why = (f"orion's {lab.queue} label landed while a run held the issue (a stale write), and the "
                   f"run was cancelled: its record says so, and the {lab.queue} label comes off; add it to "
                   f"run the issue again")
            return Plan(n, Action.CANCEL, why, remove_labels=decided.remove, run_cancelled=True)
        both = f"orion's {lab.queue} label and its {', '.join(sorted(on & {lab.ready, lab.failed}))} label"
        if decided.row == "handed-back":
            why = (f"{both} both landed while one lock was on (a stale write); the last run's record "
                   f"hands the issue back to the queue, so the {', '.join(decided.remove)} label comes off")
            return Plan(n, Action.REQUEUE, why, remove_labels=decided.remove)
        why = (f"{both} both landed while one lock was on (a stale write); the last run's record ends "
               f"it {end.label if end else ''}, so the {lab.queue} label comes off, and the run's end stands")
        return Plan(n, Action.COMPLETE, why, remove_labels=decided.remove)

    def execute_queue_repair(self, plan: Plan) -> Plan:
        """Carry out a plan of `survey_queue`: a cancel (`execute_cancelled_queue`), a cancelled
        run's stale queue label (`execute_cancelled_run`) or a stale fate's removal
        (`execute_stale_fate`)."""
        if plan.action is Action.CANCEL and plan.run_cancelled:
            return self.execute_cancelled_run(plan)
        if plan.action is Action.CANCEL:
            return self.execute_cancelled_queue(plan)
        return self.execute_stale_fate(plan)

    def execute_cancelled_run(self, plan: Plan) -> Plan:
        """Take orion's stale queue label off an issue whose last run was cancelled (ADR 0103),
        unless the labels changed since the record was read, and not while a claim may be in
        flight (ADR 0053): the issue looks queued, and a claimer may have read it so. No look
        after: the label stayed on from the read to the removal, so no person's queueing landed
        meanwhile for the removal to take."""
        lab = self.config.labels
        issue, _ = self.gh.get_issue(plan.issue)
        if lab.queue not in issue.labels or issue.labels & {lab.working, lab.cancel, lab.ready, lab.failed}:
            return replace(plan, action=Action.KEEP, reason="the labels changed meanwhile; left as they are")
        in_flight = self._claim_in_flight(issue)
        if in_flight is not None:
            return replace(plan, action=Action.KEEP, reason=in_flight)
        self.gh.remove_label(plan.issue, lab.queue)
        return plan

    def execute_stale_fate(self, plan: Plan) -> Plan:
        """Take a stale label (`survey_queue`, ADRs 0094 and 0099) off, unless the labels changed
        since the record was read (a person's call, or a run): a fate, after which the queue label
        is the person's, or orion's stale queue label, after which the run's fate stands. No
        claimer takes an issue carrying a fate, so none can be in flight."""
        lab = self.config.labels
        n = plan.issue
        issue, _ = self.gh.get_issue(n)
        if (lab.queue not in issue.labels or issue.labels & {lab.working, lab.cancel}
                or not issue.labels & {lab.ready, lab.failed}):
            return replace(plan, action=Action.KEEP, reason="the labels changed meanwhile; left as they are")
        for name in plan.remove_labels:
            if name in issue.labels:
                self.gh.remove_label(n, name)
        return self._hand_back_meanwhile(plan) if plan.action is Action.COMPLETE else plan

    def _hand_back_meanwhile(self, plan: Plan) -> Plan:
        """After a stale requeue came off beside a run's fate (ADR 0099), look again: labels
        have no compare-and-swap, and a holder's hand-back after an outage (ADR 0019) adds the
        queue label beside the failed label a pass gave the issue for it, then takes failed off.
        Landing between the pass's read and its removal, it leaves no label; the queue label
        was the hand-back's, and goes back."""
        lab = self.config.labels
        n = plan.issue
        issue, _ = self.gh.get_issue(n)
        if issue.labels & {lab.queue, lab.working, lab.ready, lab.failed, lab.cancel}:
            return plan
        self.gh.add_labels(n, [lab.queue])
        why = (f"the run's fate came off while the pass took the {lab.queue} label off (a holder's hand-back "
               f"after an outage); the {lab.queue} label is back")
        return replace(plan, action=Action.KEEP, reason=why)

    def execute_cancelled_queue(self, plan: Plan) -> Plan:
        """Take the queue label off an issue `survey_cancelled_queue` found cancelled: not while
        a claim may be in flight (ADR 0053), and then, since labels have no compare-and-swap,
        look at GitHub's record once more: a person who queued the issue again meanwhile, whose
        queueing the removal took, gets it back."""
        lab = self.config.labels
        n = plan.issue
        issue, _ = self.gh.get_issue(n)
        if lab.queue not in issue.labels or lab.cancel in issue.labels or lab.working in issue.labels:
            return replace(plan, action=Action.KEEP, reason="the labels changed meanwhile; nothing to cancel")
        in_flight = self._claim_in_flight(issue)
        if in_flight is not None:
            return replace(plan, action=Action.KEEP, reason=in_flight)
        self.gh.remove_label(n, lab.queue)
        history = self.gh.queue_history(n, lab.queue, lab.cancel)
        after = history.issue if history.issue is not None else self.gh.get_issue(n)[0]
        if lab.queue in after.labels or lab.working in after.labels:
            return plan
        if cancel_against_a_persons_queueing(history.label_events, lab.queue, lab.cancel,
                                             self.trusted.has) is not None:
            return plan
        self.gh.add_labels(n, [lab.queue])
        why = f"a person queued the issue again while the pass ran; the {lab.queue} label is back"
        return replace(plan, action=Action.KEEP, reason=why)

    def _claim_in_flight(self, issue: Issue) -> str | None:
        """Why the cancel sweep must leave the labels to a later pass, or None (ADR 0053). A
        claimer that read the issue as queued before the cancel label came may still add its
        lock: all its writes start within `renew_deadline` of its claim's post (its lease) and
        land within the request limit. Were the sweep to take the cancel label off first, that
        lock would land on an issue no longer marked cancelled, and a pass would requeue the
        claim that gave up under it (`requeue-over-cancel`). So the sweep waits until the
        issue's newest claim is older than that, and while a comment is not listed yet (it may
        be that claim). Two reads per unheld issue carrying the cancel label (the issue's, made
        by the caller, and its comments)."""
        comments, now = self.gh.list_comments(issue.number)
        if issue.comments > len(comments):
            return ("a comment is not listed yet (it may be a claim in flight); the next pass finishes "
                    "the cancel")
        newest = max(read_log(comments, self.trusted).claims, key=lambda c: c.comment_id, default=None)
        window = self.config.renew_deadline + LABEL_LANDING_MARGIN_S
        if newest is not None and (now - newest.created_at).total_seconds() < window:
            return (f"a claim (comment {newest.comment_id}) was posted less than {window:g}s ago and may "
                    f"still add its lock; the next pass finishes the cancel")
        return None

    def execute(self, s: Survey) -> Plan:
        """Carry out one plan; returns what was actually done (a plan may turn into `keep`)."""
        plan = s.plan
        if not plan.writes:
            return plan
        n = plan.issue
        if plan.action is not Action.UNLOCK:
            for entry in plan.release:
                fresh, _ = self.gh.get_comment(entry.comment_id)
                if fresh.updated_at != entry.updated_at:
                    return replace(
                        plan,
                        action=Action.KEEP,
                        release=(),
                        reason="the heartbeat moved while the pass ran; keeping the claim",
                    )
        mine = self._post_tombstones(n, plan.release, plan.tombstone_action, plan.reason, plan.counts_attempt)
        listed = s.listed
        known = {c.record.token for c in s.log.claims}
        if mine:
            comments, _ = self.gh.list_comments(n)
            listed = len(comments)
            fresh_log = read_log(comments, self.trusted)
            duplicate = self._beaten_to_it(fresh_log, plan, set(mine), known, before_mine=True)
            if duplicate:
                for cid in mine:
                    self.gh.delete_comment(cid)
                return replace(plan, action=Action.KEEP, release=(), reason=duplicate)
            self._no_longer_working(_seen_gone(s, plan.release), plan.reason)
            claimed = self._claimed_after_ours(fresh_log, plan, set(mine), known)
            if claimed is not None:
                return replace(plan, action=Action.KEEP, release=(), reason=claimed)
        if plan.action is not Action.UNLOCK:
            unseen = self._not_listed_yet(n, listed, plan, known, set(mine))
            if unseen is not None:
                return replace(plan, action=Action.KEEP, release=(), reason=unseen)
        lock = self.config.labels.working
        if plan.action is Action.UNLOCK:  # a closed issue: no claim can take it meanwhile
            move_labels(self.gh, n, list(plan.add_labels), list(plan.remove_labels), lock)
            return plan
        if plan.add_labels:
            after = self.gh.add_labels(n, list(plan.add_labels))
            stale = stale_fates(plan.add_labels, after, self.config.labels)
            if stale:  # someone moved the labels since our read, and decided otherwise (ADR 0073)
                for name in stale:
                    self.gh.remove_label(n, name)
                why = (f"the labels were moved while the pass ran ({', '.join(sorted(after))} when its "
                       f"{', '.join(stale)} landed); its addition is taken off again")
                return replace(plan, action=Action.KEEP, release=(), reason=why)
            if asks_the_record(plan.add_labels, after, self.config.labels):
                cancelled = self._cancelled_meanwhile(n)
                if cancelled is not None:
                    return replace(plan, action=Action.KEEP, release=(), reason=cancelled)
        for name in plan.remove_labels:
            if name != lock:
                self.gh.remove_label(n, name)
        kept = self._take_lock_off(n, listed, plan, known, set(mine))
        return plan if kept is None else replace(plan, action=Action.KEEP, release=(), reason=kept)

    def _cancelled_meanwhile(self, n: int) -> str | None:
        """Why the pass's queue label came off again, or None (ADR 0079): it landed after
        someone else took the lock off, and GitHub's record shows a person's cancel standing
        (`cancel_against_a_persons_queueing`: the pass's own addition is no queueing), carried
        out meanwhile by another pass or the holder's cancelled ending. One GraphQL query, only
        in that case."""
        lab = self.config.labels
        history = self.gh.queue_history(n, lab.queue, lab.cancel)
        events = history.label_events
        cancel = cancel_against_a_persons_queueing(events, lab.queue, lab.cancel, self.trusted.has)
        if cancel is None:
            return None
        self.gh.remove_label(n, lab.queue)
        who = cancel.login or "someone"
        return (f"{who} cancelled the issue while the pass ran, and the cancel was carried out before "
                f"the pass's {lab.queue} label landed; that label is taken off again")

    def _take_lock_off(self, n: int, listed: int | None, plan: Plan, known: set[str],
                       mine: set[int]) -> str | None:
        """The lock removal, last, one try at a time (ADR 0054): the client's own retry of a
        removal whose first try landed, its answer lost, could take off the lock of a claim made
        in between (the same label). After a failure the pass looks again, as before its move:
        the lock gone, the removal is done (ours landed, or someone moved the labels); a new
        claim or a release it lists late, it leaves the lock (returns why); else it tries again.
        The last failure is raised: the plan is reported and the next pass judges again."""
        lock = self.config.labels.working
        tries = 0
        while True:
            tries += 1
            try:
                with self.gh.bounded(ONE_TRY):
                    self.gh.remove_label(n, lock)
                return None
            except Unavailable:
                if tries >= LOCK_TRIES:
                    raise
            issue, _ = self.gh.get_issue(n)
            if lock not in issue.labels:
                return None
            why = self._not_listed_yet(n, listed, plan, known, mine)
            if why is not None:
                return why

    def _not_listed_yet(self, n: int, listed: int | None, plan: Plan, known: set[str],
                        mine: set[int]) -> str | None:
        """Why the label move must not happen, or None (ADR 0049). A claim posted after the
        plan's read holds the same lock: when the issue counts more comments than the plan was
        made from, list once more, and a new open claim there leaves the labels to the next
        pass. (A comment the listing still lags is waited for only beside the queue label while
        the issue changed recently, below: it may be anyone's, and a dead holder's lock must not
        wait on a person's comment for long.) That listing may also show
        another pass's release of the same claim, posted before ours (`mine`) and lagging
        when we re-listed after our tombstone: that pass moves the labels, and a move of ours
        could land after the next claim's lock and take it off (ADR 0054). One read of the
        issue before every label move of an open issue."""
        issue, _ = self.gh.get_issue(n)
        if self.config.labels.working not in issue.labels:
            # Taken off meanwhile (a holder's ending, another pass, a person): whoever did it
            # moved the labels, and a move of ours now could land after the next claim's.
            return "the lock was taken off while the pass ran; the labels are left as they are"
        if plan.action is Action.REQUEUE and not plan.add_labels and not plan.for_cancel \
                and self.config.labels.queue not in issue.labels:
            # Planned as "queued again" (the queue label stays, the lock goes) from a listing that
            # showed the queue label: a claim's unqueue took it since. The claim's `lost` record
            # is written only once that removal has landed (ADR 0067), so the fresh read shows
            # it; taking the lock off now would leave the issue with no label at all.
            return "the queue label went while the pass ran (a claim took it); the next pass decides"
        if listed is None or issue.comments <= listed:
            return None
        comments, _ = self.gh.list_comments(n)
        beaten = self._beaten_to_it(read_log(comments, self.trusted), plan, mine, known)
        if beaten is not None or issue.comments <= len(comments):
            return beaten
        # Still a comment short, beside the queue label: a claimer that read the issue as queued
        # may have posted it, and our lock removal would strand its run (the lock is one label).
        # Only while the issue changed recently: a claim older than its renew deadline never
        # runs, and a comment the listing never shows must not keep a dead holder for ever.
        window = self.config.renew_deadline + LABEL_LANDING_MARGIN_S
        recent = issue.updated_at is not None and (issue.read_at - issue.updated_at).total_seconds() < window
        if self.config.labels.queue in issue.labels and recent:
            return "a comment is not listed yet beside the queue label (it may be a claim in flight)"
        return None

    def _post_tombstones(
        self,
        n: int,
        entries: tuple[ClaimEntry, ...],
        action: ReleaseAction,
        reason: str,
        counts: bool,
        by: str = "reconcile",
    ) -> list[int]:
        """One tombstone per released claim; only the first may spend an attempt (the plan puts
        the run that counts first)."""
        posted_ids: list[int] = []
        for i, entry in enumerate(entries):
            tomb = Tombstone(
                token=entry.record.token,
                action=action,
                reason=reason,
                counts_attempt=counts and i == 0,
                by=by,
                extra={"nonce": secrets.token_hex(8)},
            )
            posted = self.gh.post_comment(
                n, render_tombstone(tomb, _holder_line(entry)), marker=tomb.extra["nonce"]
            )
            posted_ids.append(posted.id)
        return posted_ids

    def _no_longer_working(self, entries: tuple[ClaimEntry, ...], reason: str) -> None:
        """After a release no claim comment should still read as working: rewrite the visible
        line of each released claim (the tombstone stays the authority; best effort). A pass
        rewrites only the records of holders it saw gone (`_seen_gone`, ADR 0090). The body
        is the record the plan read, so each comment is read again first and left when it
        changed since: its holder wrote its own account meanwhile, which the rewrite would
        undo. A pass's release must not undo an outage record that spends no attempt (ADR 0019,
        0073); a person's release must not undo the holder's own ending written while it ran
        (a `cancelled` record turned back into `running`, ADR 0080), nor put back a body older
        than the one on GitHub (a listing that lags the holder's edit, ADR 0064). One read per
        released claim; a holder's outage record landing between that read and the edit is
        undone on the comment, and its marker keeps the account (ADR 0092)."""
        for entry in entries:
            try:
                fresh, _ = self.gh.get_comment(entry.comment_id)
                # GitHub's times are whole seconds: an edit in the second of the read shows in
                # the body only.
                if fresh.updated_at != entry.updated_at or parse_block(fresh.body) != entry.record:
                    self.log(f"comment {entry.comment_id} changed since it was read; left as it is")
                    continue
                self.gh.edit_comment(entry.comment_id, render_record(entry.record, released=reason))
            except GitHubError as exc:
                self.log(f"could not mark comment {entry.comment_id} as released ({exc})")

    @staticmethod
    def _beaten_to_it(log: IssueLog, plan: Plan, mine: set[int], known: set[str],
                      before_mine: bool = False) -> str | None:
        """Another release of the same claim landed first, or a new claim appeared. `known`
        are the tokens the plan was made from: an open claim among them that the plan does not
        release (a loser that crashed before an earlier run finished) is not new. With
        `before_mine`, only a claim posted before our tombstones counts (`_claimed_after_ours`
        says what one after them means)."""
        released = {e.record.token for e in plan.release}
        for t in log.tombstones if mine else ():
            if t.tombstone.token in released and t.comment_id not in mine and t.comment_id < min(mine):
                return f"another reconciler released the claim first (comment {t.comment_id})"
        newer = [c for c in Reconciler._new_claims(log, plan, known)
                 if not (before_mine and mine and c.comment_id > min(mine))]
        if newer:
            return f"a new claim (comment {newer[0].comment_id}) appeared while the pass ran"
        return None

    @staticmethod
    def _new_claims(log: IssueLog, plan: Plan, known: set[str]) -> list[ClaimEntry]:
        """The open claims the plan neither was made from (`known`) nor releases."""
        released = {e.record.token for e in plan.release}
        return [c for c in log.open_claims() if c.record.token not in released | known]

    @staticmethod
    def _claimed_after_ours(log: IssueLog, plan: Plan, mine: set[int], known: set[str]) -> str | None:
        """Why the pass keeps its tombstones but moves no label, or None: a new claim was posted
        after them. It came after our release, so someone moved the labels meanwhile (another
        pass finishing our release, or a person), and a claimer took the queue label: taking our
        tombstones back would undo the release that let it in (default seed 14 episode 107: the
        claimed issue was left with a dead holder's claim open), and a label move of ours now
        could take its lock off."""
        after = [c for c in Reconciler._new_claims(log, plan, known) if mine and c.comment_id > min(mine)]
        if not after:
            return None
        return (f"a claim (comment {after[0].comment_id}) came after this pass's release, which stands; "
                f"the labels were moved meanwhile and are left to that claim")

    def release(self, number: int, force: bool) -> Plan:
        """Release by hand: refuses a holder judged alive or unknown unless `force`."""
        issue, _ = self.gh.get_issue(number)
        lab = self.config.labels
        if lab.working not in issue.labels:
            return Plan(
                number, Action.KEEP, f"issue #{number} does not carry {lab.working!r}; nothing to release"
            )
        s = self.survey_issue(issue)
        open_claims = s.log.open_claims()
        stages = tuple(x for x in issue.labels if x.startswith(lab.stage_prefix))
        if not s.log.claims and not s.log.unreadable and lab.queue not in issue.labels:
            # No orion run ever claimed it, and it is not queued: a claim posts its record
            # before it takes the lock and keeps the queue label until it has won, so a lock
            # with neither is a person's. Take it off; queueing the issue is that person's call.
            move_labels(self.gh, number, [], [*stages, lab.working], lab.working)
            why = "no orion run ever claimed it: the lock label was added by hand"
            return Plan(number, Action.UNLOCK, why, remove_labels=(*stages, lab.working))
        if not open_claims and s.plan.action is Action.COMPLETE:
            # The run finished and only its label move is missing: finish it, do not redo it.
            return self.execute(s)
        plan = plan_release(number, issue.is_open, issue.labels, open_claims, s.verdicts, lab, force)
        if plan.action is Action.REPORT:
            raise NotClaimed(plan.reason)
        reason, counts, cancelled = plan.reason, plan.counts_attempt, plan.for_cancel
        ordered = tuple(sorted(open_claims, key=lambda c: c.record.child_pid is None))  # counts first
        action = ReleaseAction.UNLOCK if cancelled else ReleaseAction.RELEASE
        posted = self._post_tombstones(number, ordered, action, reason, counts, by="release")
        unreadable = s.log.blocking_unreadable()
        if force and unreadable is not None:
            tomb = Tombstone(
                unreadable.token,
                ReleaseAction.RELEASE,
                reason,
                False,
                "release",
                {"nonce": secrets.token_hex(8)},
            )
            posted.append(self.gh.post_comment(
                number, render_tombstone(tomb, f"comment {unreadable.comment_id}"), marker=tomb.extra["nonce"]
            ).id)
        self._no_longer_working(ordered, reason)
        now, _ = self.gh.get_issue(number)
        if lab.working not in now.labels:  # someone moved the labels meanwhile (ADR 0049)
            return plan
        since = self._claimed_since_the_survey(now, {c.record.token for c in ordered}, set(posted))
        if since is not None:
            return replace(plan, reason=f"{plan.reason}; the labels are left: {since}")
        move_labels(self.gh, number, list(plan.add_labels), list(plan.remove_labels), lab.working)
        return plan

    def _claimed_since_the_survey(self, issue: Issue, released: set[str], posted: set[int]) -> str | None:
        """Why the lock on `issue` may not be the released claims' any more, or None (ADR 0107):
        a release that stalled between its survey and its label move (a person's command on a
        slow machine) may find the issue released by a pass meanwhile and claimed by a new run,
        whose lock is the same label. One listing, after the tombstones (`posted`): an open claim
        the release did not name holds the lock; a listing missing more comments than our own
        tombstones may hide one. Either way the labels are left, and the next pass moves them
        from the record (the tombstones say what the person asked)."""
        comments, _ = self.gh.list_comments(issue.number)
        ours_unlisted = len(posted - {c.id for c in comments})
        if issue.comments > len(comments) + ours_unlisted:
            return ("the comment listing lags the issue, and may hide a claim made since; the next pass "
                    "moves them")
        newer = [c for c in read_log(comments, self.trusted).open_claims() if c.record.token not in released]
        if newer:
            return (f"comment {newer[0].comment_id} claimed the issue after this release read it, and "
                    f"holds the lock")
        return None


# -- the commands: one path, whether the repositories are one or several ----------------------


@dataclass(frozen=True)
class PassResult:
    """What one reconcile pass over one repository found and did."""

    repo: str
    dry_run: bool
    surveys: list[Survey]
    done: list[Plan]
    dispatched: list[int]
    # Why the pass could not make every read or write it meant to (ADR 0091): it exits 69, so
    # its workflow run does not count as the previous successful pass.
    incomplete: tuple[str, ...] = ()

    @property
    def counts(self) -> Counter[str]:
        return Counter(p.action.value for p in self.done)

    def action_entries(self) -> list[dict[str, object]]:
        return [{"issue": p.issue, "action": p.action.value, "reason": p.reason} for p in self.done]

    def document(self) -> dict[str, object]:
        """`reconcile --json`, and the `plan` output."""
        return {
            "dry_run": self.dry_run,
            "actions": self.action_entries(),
            "dispatched": self.dispatched,
            "read_in_full": self.read_in_full,
        }

    @property
    def read_in_full(self) -> int:
        return sum(1 for s in self.surveys if s.full_read)


def reconcile_pass(gh: GitHubPort, config: Config, log: Log, here: Machine, sight: Sight, *,
                   dry_run: bool, runner: RunnerPort | None = None,
                   previous: PreviousPass | None = None) -> PassResult:
    """One pass over one repository: survey, execute each plan, sweep the cancel label,
    dispatch workers for requeued issues, and keep the dashboard. A write that fails turns its
    plan into `report`; the next pass retries it. `previous`: when this reconcile workflow's
    previous successful pass began (`previous_pass`), which anchors the strand look."""
    r = Reconciler(gh, config, log, here, sight)
    r.strands = True
    r.previous_pass = previous
    surveys, done = r.pass_over(dry_run)
    requeued = [p.issue for p in done if p.action is Action.REQUEUE]
    approved = trigger_check(gh, config, log)
    dispatched = [] if dry_run else dispatch_after_pass(gh, config, requeued, log, approved, runner)
    if not dry_run:
        dashboard.update(gh, config, surveys, log, runner.server_url if runner else "https://github.com")
    return PassResult(gh.full_name, dry_run, surveys, done, dispatched, tuple(r.incomplete))


@dataclass(frozen=True)
class RepoPass:
    """One repository's part of `reconcile`: its pass, or why it failed (several only)."""

    gh: GitHubPort
    result: PassResult | None
    error: OrionError | None = None


def previous_pass(repos: Sequence[GitHubPort], runner: RunnerPort | None, log: Log) -> PreviousPass | None:
    """When the previous successful run of the reconcile workflow this job runs in began (ADR
    0081): one request, the newest successful run of that workflow file (this run is still in
    progress). None, and the strand look reaches `STRAND_LOOKBACK` stale_after back, outside
    Actions, for a workflow in a repository this pass does not reconcile, or when GitHub does
    not say (the token needs `actions: read`)."""
    here = runner.this_workflow() if runner is not None else None
    if here is None:
        return None
    repo, workflow = here
    gh = next((g for g in repos if g.full_name.lower() == repo.lower()), None)
    if gh is None:
        return None
    try:
        runs = gh.list_workflow_runs(workflow, "success", limit=1)
    except GitHubError as exc:
        log(f"could not read when the previous reconcile pass ran ({exc}); the look for stranded issues "
            f"reaches back {STRAND_LOOKBACK:g} x stale_after only")
        return None
    started = [run.started_at for run in runs if run.started_at is not None]
    return PreviousPass(max(started, default=None))


def reconcile_repos(repos: Sequence[GitHubPort], config: Config, log: Log, here: Machine, sight: Sight, *,
                    dry_run: bool, runner: RunnerPort | None = None) -> list[RepoPass]:
    """One pass over every repository in turn (one repository is a fleet of one). With
    several, a repository whose pass fails (GitHub, a bad token for it) is reported and the
    others still run (ADR 0021); alone, its failure is the command's."""
    passes = []
    previous = previous_pass(repos, runner, log)
    for gh in repos:
        try:
            result = reconcile_pass(gh, config, log, here, sight, dry_run=dry_run, runner=runner,
                                    previous=previous)
            passes.append(RepoPass(gh, result))
        except OrionError as exc:
            if len(repos) == 1:
                raise
            log(f"{gh.full_name}: the reconcile pass failed: {exc}; the other repositories still run")
            passes.append(RepoPass(gh, None, exc))
    return passes


@dataclass(frozen=True)
class RepoStatus:
    """One repository's part of `status`: its claims as surveyed, its pause switch, and the
    dashboard's tables for the step summary (when asked for)."""

    gh: GitHubPort
    surveys: list[Survey]
    paused: Paused | None
    spent: Spent  # what `status` spent on it, before the summary's own reads
    summary: dashboard.Tables | None = None
    hint: str = ""  # why its queue may be empty: the queue label does not exist (one request)


@dataclass(frozen=True)
class StatusResult:
    """`status` over one or several repositories; `queue` is every queued issue as a row, with
    its repository, in the order `run --next` takes them across the repositories."""

    repos: list[RepoStatus]
    queue: list[tuple[str, QueueRow]]

    def queue_of(self, repo: str) -> list[QueueRow]:
        return [row for name, row in self.queue if name == repo]


def status_repos(repos: Sequence[GitHubPort], config: Config, log: Log, here: Machine, sight: Sight, *,
                 summary_url: str | None = None) -> StatusResult:
    """Survey every repository (read only): claims, queue, pause switch; with `summary_url`
    (the server the links point to), also the dashboard's tables for the step summary."""
    lab = config.labels
    surveys, queued, paused = {}, [], {}
    for gh in repos:
        surveys[gh.full_name] = Reconciler(gh, config, log, here, sight).survey()
        queued += [(gh.full_name, i) for i in gh.list_issues(lab.queue) if is_queued(i, config)]
        paused[gh.full_name] = read_pause(gh, config)
    order = pick_order_across(queued, lab.priority, [gh.full_name for gh in repos])
    queue = [(name, queue_row(i, lab.priority)) for name, i in order]
    found = []
    for gh in repos:
        name = gh.full_name
        own = [row for r, row in queue if r == name]
        # An empty queue in a repository never set up says so (one request, only then).
        hint = missing_label_hint(gh, config) if not own and paused[name] is None else ""
        spent, summary = Spent.of(gh), None
        if summary_url is not None:
            summary = dashboard.status_tables(gh, config, surveys[name], own, summary_url)
        found.append(RepoStatus(gh, surveys[name], paused[name], spent, summary, hint))
    return StatusResult(found, queue)


def release(gh: GitHubPort, config: Config, log: Log, here: Machine, sight: Sight, number: int, *,
            force: bool) -> Plan:
    """`release --issue N`: what was done, as a plan (KEEP: refused, and why)."""
    return Reconciler(gh, config, log, here, sight).release(number, force)
