"""Claiming an issue: post a claim, take the lock, and decide by the comment order whether it
is ours (docs/design.md section 3).

Straight-line code over the GitHub port and a clock, so the model checker can interleave it
with other claimers, holders and reconcilers one GitHub call at a time. A claimer that loses
touches no label, with one exception: it puts back a queue label it removed when that label was
a person's requeue after the run it lost to had ended (defect 7 of the v0.1 audit).
"""

from __future__ import annotations

import contextlib
import secrets
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from orion_action.config import Config
from orion_action.core.arbitration import (
    GITHUB_REQUEST_LIMIT_S,
    SERVER_TIME_SLACK_S,
    blocker,
    cancelled_at_lock,
    may_tidy_lock,
    ran_meanwhile,
    rivals_before,
    winner,
)
from orion_action.core.beat import Bounds, Load, refusal
from orion_action.core.cancelled import cancel_against_a_persons_queueing
from orion_action.core.issue import ClaimEntry, Comment, Issue, IssueLog, Logins, read_log, trusted_set
from orion_action.core.liveness import Machine
from orion_action.core.plan import run_end
from orion_action.core.queue import FIRST_PICK_SPREAD, first_pick, next_pick, pick_order, relist
from orion_action.core.record import ActionsRun, ClaimRecord, Holder, State, render_record
from orion_action.core.requeue import another_claim_may_have_taken, last_requeue
from orion_action.core.stale_add import queued_after_a_cancel
from orion_action.errors import AuthError, GitHubError, NotClaimed, Unavailable
from orion_action.ports import Clock, GitHubPort, Policy, QueueHistory, Sight
from orion_action.services.observe import judge_entry
from orion_action.services.pause import refuse_if_paused

Log = Callable[[str], None]
# GitHub's comment lists can lag a just-posted comment. A claimer decides only on a list taken
# at least this long after GitHub answered its claim POST (so after the claim existed), so that
# any lower claim, posted before ours, is in it (docs/design.md section 3, "list lag").
LIST_SETTLE_S = 1.0
# How long to wait for our own claim comment to show up in the list at all.
VISIBILITY_TIMEOUT_S = 20.0
MAX_NEXT_CANDIDATES = 10
# An unanswered unqueue has landed, or never will, this long after it was sent (GitHub's
# processing limit, plus its whole-second slack).
UNQUEUE_LANDED_S = GITHUB_REQUEST_LIMIT_S + SERVER_TIME_SLACK_S


def is_queued(issue: Issue, config: Config) -> bool:
    """Open, carries the queue label, and none of working/ready/failed/cancel."""
    lab = config.labels
    return (
        issue.is_open
        and lab.queue in issue.labels
        and not issue.labels & {lab.working, lab.ready, lab.failed, lab.cancel}
    )


def queued_candidates(gh: GitHubPort, config: Config, require: Sequence[str] = ()) -> list[Issue]:
    """The queued issues carrying every `require` label, in pick order (one listing per 100).
    Raises NotClaimed while the queue is paused (the listing shows it: no extra request)."""
    return _queued_and_in_flight(gh, config, require)[0]


def _queued_and_in_flight(
    gh: GitHubPort, config: Config, require: Sequence[str] = ()
) -> tuple[list[Issue], int]:
    """`queued_candidates`, and how many issues of the same listing are being claimed right now
    (the queue label and the lock both on: a claim between its lock and its unqueue)."""
    listed = gh.list_issues(config.labels.queue)
    refuse_if_paused(listed, config)
    lab = config.labels
    in_flight = sum(1 for i in listed if i.is_open and lab.working in i.labels)
    queued = pick_order(
        (i for i in listed if is_queued(i, config) and all(r in i.labels for r in require)),
        config.labels.priority,
    )
    return queued, in_flight


def missing_label_hint(gh: GitHubPort, config: Config) -> str:
    """When the queue label does not exist, say so and what to do (one request, asked only
    when nothing was claimable): otherwise an empty queue and a repository never set up look
    the same."""
    if gh.get_label(config.labels.queue) is not None:
        return ""
    return f"; the label {config.labels.queue!r} does not exist in {gh.full_name}: run `orion-action init`"


def not_queued_hint(issue: Issue, config: Config) -> str:
    """What to do about an issue that is not queued (the review's newcomer mistakes)."""
    labels = config.labels
    if not issue.is_open:
        return ""
    ended = sorted({labels.ready, labels.failed} & issue.labels)
    if ended:
        return f"; it has ended ({', '.join(ended)}): remove that and add {labels.queue!r} to run it again"
    if labels.queue not in issue.labels:
        return f"; add the {labels.queue!r} label to queue it"
    return ""


def empty_queue(config: Config, require: Sequence[str] = ()) -> str:
    needs = f" carrying {', '.join(require)}" if require else ""
    return f"the queue is empty: no open issue{needs} carries only the {config.labels.queue!r} label"


@dataclass
class Claim:
    """A claim this process won: what the holder needs to beat, fence and finish."""

    issue: Issue
    comment_id: int
    record: ClaimRecord
    trusted: Logins
    lease_start: float  # clock.monotonic() when the claim was sent: the lease counts from here
    comments: dict[int, Comment] = field(default_factory=dict)  # every comment read so far
    # The ids the issue's listing showed, in its order, as last listed (the fence reads on from
    # there, ADR 0023): what was listed, never the issue's count, which may run ahead of it.
    listed: list[int] = field(default_factory=list)
    unqueued: bool = False  # the queue label removal was sent: it may have landed (ADR 0025)
    # The other live claims counted when this one was admitted (None: not counted): the
    # holder's first beat stretches on it instead of counting again (ADR 0060).
    live: int | None = None

    @property
    def number(self) -> int:
        return self.issue.number


class Claimer:
    """Claims one issue for one wrapper process."""

    # The trigger check every claim passes first (the wrapper sets it; services/trigger.py),
    # called with the history `read_queued` read with the issue or after it, or None where
    # the check reads it itself.
    approval: Callable[[GitHubPort, Issue, QueueHistory | None], None] | None = None
    # Where the trigger check runs: its one read, which brings the issue too, so that a claim
    # by number reads nothing before it (ADR 0063). None: the claim reads the issue itself.
    read_queued: Callable[[GitHubPort, int], QueueHistory] | None = None
    # How many claims came before ours in the race the last claim lost (claim_next skips as
    # many queued issues: core/queue.py next_pick).
    rivals = 1
    raced = False  # the last claim lost a race (rivals counted)
    passed = False  # the last claim passed its issue over: taken since it was listed
    # The live claims `_admit` counted (None: it did not count).
    live: int | None = None

    def __init__(
        self,
        gh: GitHubPort,
        config: Config,
        log: Log,
        clock: Clock,
        here: Machine,
        holder: Holder,
        actions_run: ActionsRun | None = None,
        check_signal: Callable[[], None] = lambda: None,
        *,
        sight: Sight,
    ):
        self.gh, self.config, self.log, self.clock = gh, config, log, clock
        self.here, self.holder, self.actions_run = here, holder, actions_run
        self.check_signal = check_signal  # raises when a signal arrived: post nothing more
        self.sight = sight

    # -- choosing ---------------------------------------------------------------------------

    def claim_next(self, stage: str | None, require: Sequence[str] = ()) -> Claim:
        """Claim the first queued issue we can win, in pick order (core/queue.py). Nothing
        while the queue is paused."""
        queued, in_flight = _queued_and_in_flight(self.gh, self.config, require)
        if not queued:
            raise NotClaimed(empty_queue(self.config, require) + missing_label_hint(self.gh, self.config))
        self._admit()
        # Workers that list at once do not all race for the head: where other workers are seen
        # at no cost (a claim in flight in the listing; live claims, where `_admit` counted
        # them), half of them try the issue after the head first (queue order within one
        # position, never across priorities); a worker that sees none takes the head. A loser
        # skips past its rivals (issue 19, core/queue.py; ADR 0071).
        crowd = in_flight > 0 or bool(self.live)
        tried: list[int] = []  # indices into `queued`, as last listed
        done: set[int] = set()  # issue numbers tried, whatever listing they came from
        passed = 0  # issues passed over in a row (taken since they were listed)
        at: int | None = first_pick(queued, self.config.labels.priority, self.pick_seed(), crowd)
        while at is not None and len(done) < MAX_NEXT_CANDIDATES:
            tried.append(at)
            done.add(queued[at].number)
            self.rivals, self.raced, self.passed = 1, False, False
            try:
                return self.claim(queued[at], stage)
            except NotClaimed as exc:
                self.log(f"#{queued[at].number}: {exc}; trying another queued issue")
            passed = passed + 1 if self.passed else 0
            if relist(passed):
                # The listing is stale: others took the issues it shows one after another. One
                # listing shows what is left; walking on would pay a read an issue taken.
                queued = [i for i in queued_candidates(self.gh, self.config, require) if i.number not in done]
                tried, passed = [], 0
                at = first_pick(queued, self.config.labels.priority, self.pick_seed(), crowd=True)
                if not queued:
                    break
                continue
            at = next_pick(len(queued), tried, at, self.rivals, FIRST_PICK_SPREAD if self.raced else 1)
        raise NotClaimed(f"none of the {len(done)} queued issues tried could be claimed")

    def pick_seed(self) -> int:
        """This wrapper's own number for spreading first picks (core/queue.py first_pick): the
        same for every pick it makes, different between processes that list at once."""
        h = self.holder
        return zlib.crc32(f"{h.host}/{h.boot_id}/{h.pid_ns}/{h.pid}/{h.pid_start}".encode())

    def claim_number(self, number: int, stage: str | None) -> Claim:
        issue, history = self._read_number(number)
        refuse_if_paused([issue], self.config)
        self._require_queued(issue)  # an issue that cannot run says so, whatever the budget
        self._admit()
        return self.claim(issue, stage, history)

    def _read_number(self, number: int) -> tuple[Issue, QueueHistory | None]:
        """The issue, and the trigger check's history when one query read both (ADR 0063).
        Without it (no check, over 100 labels, an answer that is no issue: a pull request, a
        number that does not exist), a REST read, which says what is wrong; the check then
        reads the history after it, as it must (the text first, then who approved it)."""
        history = self._read_history(number)
        if history is not None and history.issue is not None:
            return history.issue, history
        issue, _ = self.gh.get_issue(number)
        return issue, None

    def _read_history(self, number: int) -> QueueHistory | None:
        """The trigger check's query, where it runs; None when its answer is no issue's (the
        check then asks again and says what is wrong)."""
        if self.read_queued is None:
            return None
        try:
            return self.read_queued(self.gh, number)
        except Unavailable:
            raise
        except GitHubError:
            return None

    def _admit(self) -> None:
        """Where beats may stretch, a new claim waits while one more would not fit GitHub's
        budget at the longest beat (core/beat.py `refusal`): the live claims (one listing of
        the lock label per 100) and the budget the last response reported. Nothing is posted;
        the queue keeps the issue (ADR 0060)."""
        c = self.config
        if c.heartbeat_max_interval <= c.heartbeat_interval:
            return
        bounds = Bounds(c.heartbeat_interval, c.stale_after, c.heartbeat_max_interval)
        budget = self.gh.budget
        # The token's floor first: it needs no count (a claimer that waits spends no more).
        why = refusal(bounds, Load(0, budget.limit, budget.remaining, budget.reset_in))
        if why is None:
            live = self.live = sum(1 for i in self.gh.list_issues(c.labels.working) if i.is_open)
            budget = self.gh.budget
            why = refusal(bounds, Load(live, budget.limit, budget.remaining, budget.reset_in))
        if why is not None:
            raise NotClaimed(f"GitHub's budget is short: {why}; not claiming, the queue waits")

    # -- claiming ---------------------------------------------------------------------------

    def claim(self, issue: Issue, stage: str | None, history: QueueHistory | None = None) -> Claim:
        """Claim `issue` (as read at GitHub time `issue.read_at`; `history`: the trigger check's,
        read with it). Raises NotClaimed."""
        lab = self.config.labels
        n = issue.number
        self._require_queued(issue)
        settled = self._settled_read(issue)
        if settled is not issue:  # read again: the history predates the text now
            issue, history = settled, None
        if history is None:
            # `--next` (or a text read again): the check's query comes after the text, and
            # reads the issue again; one another claim took since is passed over, nothing
            # posted and nobody's access asked (ADR 0063).
            history = self._read_history(n)
            seen = history.issue if history is not None else None
            if seen is not None and not is_queued(seen, self.config):
                self.passed = True
                raise NotClaimed(f"issue #{n} was taken since it was listed (labels now: "
                                 f"{', '.join(sorted(seen.labels)) or 'none'}); nothing posted")
        self._check_approval(issue, history)
        self.check_signal()
        now_iso = self.clock.now_iso()
        record = ClaimRecord(
            token=secrets.token_hex(12),
            state=State.CLAIMING,
            holder=self.holder,
            started_at=now_iso,
            heartbeat_at=now_iso,
            interval=self.config.heartbeat_interval,
            stale_after=self.config.stale_after,
            stage=stage,
            actions=self.actions_run,
        )
        lease_start = self.clock.monotonic()
        claim = Claim(issue, 0, record, Logins(), lease_start, live=self.live)
        # No claim write may outlast the lease: a claimer that stalls must not act after a judge
        # may already presume it dead (defect 2 of the v0.1 audit).
        in_lease = Policy(self.clock, lease_start + self.config.renew_deadline)
        try:
            with self.gh.bounded(in_lease):
                posted = self.gh.post_comment(n, render_record(record), marker=record.token)
                claim.comment_id = posted.id
                self.gh.learn_login(posted.author)
                claim.trusted = trusted_set(posted.author, self.config.trusted_authors)
                self.log(f"#{n}: posted claim {record.token} (comment {posted.id}); taking the lock")
                posted_at = self.clock.monotonic()  # the claim exists by now (ADR 0023)
                after_lock = self.gh.add_labels(n, [lab.working, *filter(None, [lab.stage(stage)])])
                cancelled = cancelled_at_lock(after_lock, lab)
                if cancelled is not None:  # give up before anything runs (ADR 0066)
                    raise NotClaimed(f"issue #{n}: {cancelled}; not running")
                self.clock.sleep(LIST_SETTLE_S - (self.clock.monotonic() - posted_at))
                log, comments, now = self._read_until_visible(claim)
        except (GitHubError, NotClaimed) as exc:
            late = self.clock.monotonic() - lease_start >= self.config.renew_deadline
            why = (
                f"the claim was not complete within the renew deadline ({self.config.renew_deadline:g}s)"
                if late
                else f"the claim could not be completed: {exc}"
            )
            if claim.comment_id:
                # Say on the issue that this claim will never run (a pass then requeues the
                # issue without waiting for the claim to go stale), and take our lock off where
                # that is safe, so that the next claimer can have the issue at once.
                self._give_up(claim, why)
                # No label write of ours may start after the renew deadline (a pass may then
                # requeue the issue and a next run take the same lock).
                with self.gh.bounded(in_lease) if not late else contextlib.nullcontext():
                    self._tidy_after_giving_up(claim)
            if late:
                raise NotClaimed(f"issue #{n}: {why}") from None
            raise
        mine = log.find(record.token)
        assert mine is not None
        claim.comments = {c.id: c for c in comments}
        claim.listed = [c.id for c in comments]

        self._note_untrusted_release(claim, log)

        def is_dead(e: ClaimEntry) -> bool:
            return (
                e.record.token != record.token
                and judge_entry(e, now, self.config.stale_after, self.here, sight=self.sight).is_dead
            )

        blocked = blocker(log, record.token, is_dead)
        if blocked is not None:
            self._give_up(claim, blocked)
            first = winner(log, is_dead)
            self.rivals, self.raced = rivals_before(log, first, claim.comment_id), True
            if first is not None and lab.stage(first.record.stage) != lab.stage(stage):
                self._remove_own_stage(claim)  # ours; the winner shows its own
            if first is not None:
                # The winner may have finished meanwhile and taken its lock off before ours
                # landed: then the lock on the issue is ours, and nobody else will take it off.
                self._tidy_after_giving_up(claim, first)
            raise NotClaimed(f"issue #{n} lost the race: {blocked}")
        meanwhile = ran_meanwhile(log, record.token, issue.read_at)
        if meanwhile is not None:
            why = (
                f"comment {meanwhile.comment_id} ran the issue while this claim was being "
                f"made (it is {meanwhile.record.state.value})"
            )
            self._give_up(claim, why)
            self._tidy_after_giving_up(claim, meanwhile)
            raise NotClaimed(f"issue #{n} lost the race: {why}")
        # Judge our own claim the way others will (defect 1 of the v0.1 audit): a claimer that
        # stalled so long that a judge may already presume it dead must not run.
        age = (now - mine.created_at).total_seconds()
        spent = self.clock.monotonic() - lease_start
        if max(age, spent) >= self.config.renew_deadline:
            why = (
                f"the claim took {max(age, spent):.0f}s, past the renew deadline "
                f"({self.config.renew_deadline:g}s): another claimer may already presume it dead"
            )
            self._give_up(claim, why)
            self._tidy_after_giving_up(claim)
            raise NotClaimed(f"issue #{n}: {why}")
        self._refuse_a_requeue_after_a_cancel(claim, log, history, in_lease)
        # Won. The record says "running" before anything runs, so that a winner that dies
        # before its first beat is still known to have won (it spends no attempt: only a record
        # with the child's pid does). Only then does the queue label go: a claimer that loses or
        # dies before this point leaves it, so a person's requeue is never lost with it (defect
        # 7 of the v0.1 audit), and a pass finding the queue label beside a dead claim that
        # never ran knows the issue is wanted again.
        released = False
        try:
            with self.gh.bounded(in_lease):
                claim.record = record.with_changes(state=State.RUNNING, attempt=log.attempts_used() + 1)
                self.gh.edit_comment(claim.comment_id, render_record(claim.record))
                claim.unqueued = True
                took_queueing = self.gh.remove_label(n, lab.queue)
                ambiguous = took_queueing is None
                if ambiguous:
                    after = self._listed_in_full(claim)
                    released = record.token in after.released_tokens()
                    took_queueing = not another_claim_may_have_taken(after, record.token, issue.read_at)
        except GitHubError as exc:
            if claim.unqueued and isinstance(exc, Unavailable):
                # Unanswered, it may still land. The claim stays `running` (no child: nothing
                # starts) until it has landed or never will (ADR 0067): given up at once, a pass
                # could requeue it and the removal land after, and ADR 0025's look would see the
                # queue label it is about to take (ADR 0055). Counted from now, not from the
                # first try: the client may have sent it again after a wait (a 403/429's
                # Retry-After), and every try was sent before its failure came back.
                self.clock.sleep(UNQUEUE_LANDED_S)
            # A `lost` record that says it sent its unqueue: if that took the queueing, a pass
            # puts it back (core/plan.py QUEUEING_OWED), nothing having run it (ADR 0067).
            self._give_up(claim, f"the claim could not be completed: {exc}", unqueued=claim.unqueued)
            if claim.unqueued:  # it may have landed after a requeue (ADR 0025)
                restore_queue(self.gh, self.config, claim, self.log)
            raise
        if released:
            # The listing our unanswered unqueue made us read shows our claim released (a person's
            # `release --force`, or a pass that judged us dead while our VM was paused): the
            # tombstone is the authority, and the issue is not ours to run. Our retried removal
            # may have taken the release's queue label (ADR 0025).
            restore_queue(self.gh, self.config, claim, self.log)
            raise NotClaimed(f"issue #{n}: the claim was released while it was being made")
        if not took_queueing:
            # Someone took this queueing before us (ADR 0048): a claim that decided on a list
            # still missing ours (lag above the settle) and may have run and ended already, or
            # the cancel sweep, or a person. Running now could run it a second time. When our
            # own first try may have taken it (ADR 0096), the record says so: if nothing ran it,
            # a pass puts it back (ADR 0067).
            why = ("the queue label's removal went unanswered and another claim may have taken the queueing"
                   if ambiguous else "the queue label was already gone when this claim took it: the queueing "
                   "was taken")
            self._give_up(claim, why, unqueued=ambiguous)
            self._tidy_after_giving_up(claim)
            raise NotClaimed(f"issue #{n} lost the race: {why}")
        return claim

    def _refuse_a_requeue_after_a_cancel(self, claim: Claim, log: IssueLog, history: QueueHistory | None,
                                         in_lease: Policy) -> None:
        """Raise NotClaimed when the last run before this claim ended cancelled and no person
        queued the issue since (ADR 0105): a queue label orion added after that run's claim is a
        stale requeue that landed where no one looked (after the cancel ending's read), and
        running it would run the cancelled run again. That label comes off; one the record does
        not show yet is left for the next claimer. GitHub's record is read only after a cancelled
        run: the trigger check's, when it read one, else one GraphQL query. Our claim gives up
        first, whatever stops it (a credential GitHub refuses is raised as it is)."""
        lab = self.config.labels
        end = run_end(log.before(claim.comment_id), lab, self.config.max_attempts)
        if end is None or not end.unqueues or end.claimed_at is None:
            return
        n = claim.number
        try:
            with self.gh.bounded(in_lease):
                if history is None:
                    history = self.gh.queue_history(n, lab.queue, lab.cancel)
        except GitHubError as exc:
            why = (f"the last run was cancelled, and GitHub's record of the queue label could not be "
                   f"read ({exc})")
            self._give_up(claim, why)
            self._tidy_after_giving_up(claim)
            if isinstance(exc, AuthError):
                raise
            raise NotClaimed(f"issue #{n}: {why}; not running") from None
        row = queued_after_a_cancel(end.claimed_at, history.label_events, lab, claim.trusted.has)
        if row == "persons-queueing":
            return
        why = ("the last run was cancelled, and GitHub's record does not show who queued the issue since; "
               "the next claim asks again" if row == "not-in-the-record" else
               f"the last run was cancelled, and only orion added the {lab.queue!r} label since (a stale "
               f"requeue): a person adds it to run the issue again")
        self._give_up(claim, why)
        self._tidy_after_giving_up(claim)
        if row == "orions-requeue":
            try:
                self.gh.remove_label(n, lab.queue)
            except GitHubError as exc:
                self.log(f"#{n}: could not take the stale {lab.queue!r} label off ({exc}); "
                         "the next claim will")
        raise NotClaimed(f"issue #{n}: {why}; not running")

    def _listed_in_full(self, claim: Claim) -> IssueLog:
        """The issue's log, to judge whether our unqueue took the queueing when its first try
        went unanswered and a retry found the label gone (ADR 0096): that first try, or another
        claimer's removal before it (a claim that decided on a list still missing ours, whose
        run may be over already). The comments are listed until the listing shows every comment
        the issue counts: a claim whose removal came before ours was posted before it. Another
        claim that may have taken the queueing (`core.requeue.another_claim_may_have_taken`)
        makes the answer unknown, and unknown is not ours; a release of our own claim there
        ends it. Two requests or more, only then; the lease bounds them (a request past it
        raises)."""
        n = claim.number
        issue, _ = self.gh.get_issue(n)
        pause = 0.2
        comments, _ = self.gh.list_comments(n)
        while len(comments) < issue.comments:
            self.clock.sleep(pause)
            pause = min(pause * 2, 2.0)
            comments, _ = self.gh.list_comments(n)
        return read_log(comments, claim.trusted)

    def _require_queued(self, issue: Issue) -> None:
        if not is_queued(issue, self.config):
            state = "closed" if not issue.is_open else "open"
            shown = ", ".join(sorted(issue.labels)) or "none"
            missing = issue.is_open and self.config.labels.queue not in issue.labels
            raise NotClaimed(
                f"issue #{issue.number} is not queued ({state}; labels: {shown})"
                + not_queued_hint(issue, self.config)
                + (missing_label_hint(self.gh, self.config) if missing else "")
            )

    def _settled_read(self, issue: Issue) -> Issue:
        """GitHub's times have whole seconds, so a run that ended in the second of our read
        could have ended after it (and we would lose to it as "ran meanwhile"). When an issue
        with history changed that recently, wait the second out and read it again: one more
        request, only then."""
        if not issue.comments or issue.updated_at is None:
            return issue
        need = 2 * SERVER_TIME_SLACK_S - (issue.read_at - issue.updated_at).total_seconds()
        if need <= 0:
            return issue
        self.clock.sleep(need)
        issue, _ = self.gh.get_issue(issue.number)
        refuse_if_paused([issue], self.config)
        self._require_queued(issue)
        return issue

    def _read_until_visible(self, claim: Claim) -> tuple[IssueLog, list[Comment], datetime]:
        pause = 0.2
        started = self.clock.monotonic()
        while True:
            comments, now = self.gh.list_comments(claim.number)
            log = read_log(comments, claim.trusted)
            if log.find(claim.record.token) is not None:
                return log, comments, now
            if self.clock.monotonic() - started > VISIBILITY_TIMEOUT_S:
                raise NotClaimed(
                    f"issue #{claim.number}: our claim comment never became visible; not running"
                )
            self.clock.sleep(pause)
            pause = min(pause * 2, 2.0)

    def _note_untrusted_release(self, claim: Claim, log: IssueLog) -> None:
        """A release by an author who is not trusted is text: ignored, whatever claim it names
        (a dead claim is judged as dead anyway, a live one keeps the issue). It never stops a
        claim, a --next or a drain, and never earns its author advice to be trusted: anyone can
        post one (finding 7 of the round-3 security audit)."""
        blocking = {c.record.token for c in log.open_claims() if c.record.token != claim.record.token}
        for r in log.untrusted_releases:
            if r.token in blocking:
                self.log(f"#{claim.number}: ignored comment {r.comment_id} by {r.author}: a release by an "
                         f"author who is not trusted")

    def _check_approval(self, issue: Issue, history: QueueHistory | None = None) -> None:
        """The trigger check (services/trigger.py), on the issue as read for this claim: the
        text the command gets. Raises NotClaimed; nothing is posted before it passes."""
        if self.approval is not None:
            self.approval(self.gh, issue, history)

    def _give_up(self, claim: Claim, why: str, *, unqueued: bool = False) -> None:
        """A loser marks its own record lost: it never ran, and a pass may requeue at once.
        `unqueued`: its unqueue was sent, and may have taken the queueing; false, it took none
        (it never sent one, or it found the label gone), and the record says that too (ADR 0067)."""
        claim.record = claim.record.with_changes(state=State.LOST, note=why, unqueued=unqueued)
        try:
            self.gh.edit_comment(claim.comment_id, render_record(claim.record))
        except GitHubError as exc:
            self.log(f"#{claim.number}: could not mark our claim lost ({exc}); it is harmless")

    def _remove_own_stage(self, claim: Claim) -> None:
        stage = self.config.labels.stage(claim.record.stage)
        if stage:
            try:
                self.gh.remove_label(claim.number, stage)
            except GitHubError as exc:
                self.log(f"#{claim.number}: could not remove our stage label ({exc}); it is display only")

    def _tidy_after_giving_up(self, claim: Claim, other: ClaimEntry | None = None) -> None:
        """We gave up before running: too late, or because `other` won or ran while we
        claimed. The lock we added may now be ours alone (the other run may have ended and
        taken its lock off before ours landed): take it off again, but only where nothing can
        be undone: no other claim is open, none came after ours (a later winner's lock is the
        same label, and a later claim may not be listed yet while the issue's comment count
        runs ahead of the listing, ADR 0049), and the issue keeps a label that a claimer or a
        person acts on. Anything else is left to a reconcile pass. A loser never touches the
        queue label. The comments are listed before the issue is read (ADR 0082): labels read
        first could predate what the listing shows (the winner took the queue label, ran, and
        gave up its lease in between), and then no label would be left but our removal's."""
        lab = self.config.labels
        n = claim.number
        try:
            comments, _ = self.gh.list_comments(n)
            issue, _ = self.gh.get_issue(n)
            if issue.comments > len(comments):
                return
            log = read_log(comments, claim.trusted)
            if may_tidy_lock(log, claim.record.token, claim.comment_id, issue.labels, lab):
                for name in filter(None, [lab.stage(claim.record.stage), lab.working]):
                    self.gh.remove_label(n, name)
        except GitHubError as exc:
            self.log(f"#{n}: could not take our lock off again ({exc}); a reconcile pass will")


def restore_queue(gh: GitHubPort, config: Config, claim: Claim, log: Log) -> bool:
    """A winner that sent its queue label removal and then lost its claim puts the queue label
    back where that removal stranded the issue (ADR 0025): the removal can land after a requeue
    (a pass, or `release --force`) released the claim and put the issue back in the queue, and
    then the issue carries no label that anyone acts on. Only when the issue is open, carries
    none of queue, lock, ready, failed and cancel, and its last orion event by comment id is a
    trusted tombstone releasing this very claim back to the queue: then nothing else can have
    wanted it unqueued but our late removal. Returns whether it put the label back."""
    lab = config.labels
    n = claim.number
    try:
        issue, _ = gh.get_issue(n)
        acted_on = {lab.queue, lab.working, lab.ready, lab.failed, lab.cancel}
        if not issue.is_open or issue.labels & acted_on:
            return False
        comments, _ = gh.list_comments(n)
        last = last_requeue(read_log(comments, claim.trusted))
        if last is None or last.tombstone.token != claim.record.token:
            return False
        # The cancel sweep takes the queue label off too, by the same login: a cancel a person
        # made after that requeue, standing in GitHub's record, says the removal was the
        # sweep's, and the issue stays out of the queue (`repair-undoes-cancel`, ADR 0073). A
        # stale pass's queue addition after that cancel does not withdraw it (ADR 0083).
        record = gh.queue_history(n, lab.queue, lab.cancel).label_events
        if cancel_against_a_persons_queueing(record, lab.queue, lab.cancel, claim.trusted.has):
            log(f"#{n}: the issue was cancelled after it was released back to the queue: not queued again")
            return False
        gh.add_labels(n, [lab.queue])
    except GitHubError as exc:
        log(f"#{n}: could not check whether our late unqueue stranded the issue ({exc})")
        return False
    log(f"#{n}: our queue label removal landed after the issue was released back to the queue: put it back")
    return True
