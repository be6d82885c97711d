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

import json
import math
import secrets
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from orion_action.adapters import actions
from orion_action.adapters import machine as local
from orion_action.adapters.github import GitHubRepo, Issue
from orion_action.config import Config
from orion_action.core.issue import ClaimEntry, Comment, IssueLog, read_log, trusted_set
from orion_action.core.liveness import MISSED_BEAT_FACTOR, Liveness, Machine, Verdict
from orion_action.core.plan import Action, Plan, keep_on_fresh_beat, plan_cancel, plan_issue
from orion_action.core.queue import pick_order, priority_of
from orion_action.core.record import ReleaseAction, Tombstone, render_record, render_tombstone
from orion_action.errors import AuthError, ExitCode, GitHubError, NotClaimed
from orion_action.services.claiming import is_queued
from orion_action.services.holding import move_labels
from orion_action.services.observe import Sight, judge_entry
from orion_action.services.pause import read_pause

Log = Callable[[str], None]
BUDGET_WARN_SHARE = 0.8
DEFAULT_BUDGET = 5000  # requests per hour of a personal or App token
CONTENT_BUDGET = 500  # content-creation writes per hour per identity (comment edits count)
REQUESTS_PER_BEAT = 2
# The repository-wide listing reaches this much further back than a holder beating on time
# can be: GitHub's whole-second stamps, and a listing that takes a while.
RECENT_MARGIN_S = 5.0


@dataclass(frozen=True)
class Survey:
    """One issue carrying the lock, as read, judged and planned."""

    issue: Issue
    log: IssueLog
    now: datetime
    verdicts: dict[str, Verdict]
    plan: Plan
    full_read: bool = True  # False: kept on a fresh beat seen in the repository listing

    @property
    def heartbeat_age(self) -> float | None:
        holder = self.plan.holder
        if holder is None:
            return None
        return max(0.0, round((self.now - holder.updated_at).total_seconds(), 1))


def _holder_line(entry: ClaimEntry | None) -> str:
    if entry is None:
        return ""
    h = entry.record.holder
    return f"runner {h.host}, pid {h.pid}, comment {entry.comment_id}"


class Reconciler:
    def __init__(
        self,
        gh: GitHubRepo,
        config: Config,
        log: Log,
        here: Machine | None = None,
        sight: Sight = local.sight,
    ):
        self.gh = gh
        self.config = config
        self.log = log
        self.here = here or local.this_machine()
        self.sight = sight
        self._trusted: frozenset[str] | None = None

    @property
    def trusted(self) -> frozenset[str]:
        if self._trusted is None:
            self._trusted = trusted_set(self.gh.own_login(), self.config.trusted_authors)
        return self._trusted

    # -- reading --------------------------------------------------------------------------

    def survey_issue(self, issue: Issue) -> Survey:
        comments, now = self.gh.list_comments(issue.number)
        log = read_log(comments, self.trusted)
        verdicts = {
            c.record.token: judge_entry(
                c, now, self.config.stale_after, self.here, self.gh.workflow_run_status, self.sight
            )
            for c in log.open_claims()
        }
        plan = plan_issue(
            issue.number,
            issue.is_open,
            issue.labels,
            log,
            verdicts,
            self.config.labels,
            self.config.max_attempts,
        )
        return Survey(issue, log, now, verdicts, plan)

    def survey(self) -> list[Survey]:
        """Every issue carrying the lock: ceil(N/100) listings, then ceil(C/100) for the
        repository's recently updated comments (C: about one per live claim), then a full read
        of each issue the listing cannot show to be held by a live holder."""
        _ = self.trusted  # one GET /user up front, not in the middle of the pass
        issues = self.gh.list_issues(self.config.labels.working, state="all")
        recent = self._recent_comments(issues)
        return [self._kept_on_fresh_beat(i, recent) or self.survey_issue(i) for i in issues]

    def _recent_comments(self, issues: list[Issue]) -> tuple[dict[int, list[Comment]], datetime] | None:
        """The repository's comments updated within a beat and a half of the lock listing (on
        GitHub's clock), by issue; None when no open issue carries the lock or the listing
        failed (then every issue is read in full: slower, never less safe)."""
        held = [i for i in issues if i.is_open]
        if not held:
            return None
        # The longest beat a holder may promise (ADR 0045): a holder beating slower than the
        # window would still be kept, but only after a full read of its issue.
        window = MISSED_BEAT_FACTOR * self.config.heartbeat_max_interval + RECENT_MARGIN_S
        since = min(i.read_at for i in held) - timedelta(seconds=window)
        try:
            comments, now = self.gh.list_repo_comments(since)
        except AuthError:
            raise
        except GitHubError as exc:
            self.log(f"the repository-wide comment listing failed ({exc}); reading every issue in full")
            return None
        by_issue: dict[int, list[Comment]] = {}
        for c in comments:
            if c.issue is not None:
                by_issue.setdefault(c.issue, []).append(c)
        return by_issue, now

    def _kept_on_fresh_beat(
        self, issue: Issue, recent: tuple[dict[int, list[Comment]], datetime] | None
    ) -> Survey | None:
        if recent is None or issue.number not in recent[0]:
            return None
        now = recent[1]
        log = read_log(recent[0][issue.number], self.trusted)

        def judge(entry: ClaimEntry) -> Verdict:
            # No Actions-run lookup: the shortcut only takes holders that beat on time.
            return judge_entry(entry, now, self.config.stale_after, self.here, None, self.sight)

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

    # -- writing --------------------------------------------------------------------------

    def execute_cancel(self, plan: Plan) -> Plan:
        """The queue label first, then, unless a run took the issue meanwhile (its claim read
        it before the cancel label came: its holder then sees the label at its next beat), the
        cancel label. A pass killed in between leaves the cancel label, and the next pass
        finishes."""
        lab = self.config.labels
        n = plan.issue
        if lab.queue in plan.remove_labels:
            self.gh.remove_label(n, lab.queue)
            issue, _ = self.gh.get_issue(n)
            if lab.working in issue.labels:
                reason = f"a run took the issue meanwhile; its holder stops at the {lab.cancel} label"
                return replace(plan, action=Action.KEEP, reason=reason)
        self.gh.remove_label(n, lab.cancel)
        return plan

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
        if mine:
            comments, _ = self.gh.list_comments(n)
            fresh_log = read_log(comments, self.trusted)
            known = {c.record.token for c in s.log.claims}
            duplicate = self._beaten_to_it(fresh_log, plan, set(mine), known)
            if duplicate:
                for cid in mine:
                    self.gh.delete_comment(cid)
                return replace(plan, action=Action.KEEP, release=(), reason=duplicate)
            self._no_longer_working(plan.release, plan.reason)
        move_labels(self.gh, n, list(plan.add_labels), list(plan.remove_labels), self.config.labels.working)
        return plan

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
        """After a release no claim comment may still read as working: rewrite the visible
        line of each released claim (the tombstone stays the authority; best effort)."""
        for entry in entries:
            try:
                self.gh.edit_comment(entry.comment_id, render_record(entry.record, released=reason))
            except GitHubError as exc:
                self.log(f"could not mark comment {entry.comment_id} as released ({exc})")

    @staticmethod
    def _beaten_to_it(log: IssueLog, plan: Plan, mine: set[int], known: set[str]) -> str | None:
        """Another release of the same claim landed first, or a new claim appeared. `known`
        are the tokens the plan was made from: an open claim among them that the plan does not
        release (a loser that crashed before an earlier run finished) is not new."""
        released = {e.record.token for e in plan.release}
        for t in log.tombstones:
            if t.tombstone.token in released and t.comment_id not in mine and t.comment_id < min(mine):
                return f"another reconciler released the claim first (comment {t.comment_id})"
        newer = [c for c in log.open_claims() if c.record.token not in released | known]
        if newer:
            return f"a new claim (comment {newer[0].comment_id}) appeared while the pass ran"
        return None

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
        if not open_claims and s.plan.action is Action.COMPLETE:
            # The run finished and only its label move is missing: finish it, do not redo it.
            return self.execute(s)
        blocking = [
            (c, s.verdicts[c.record.token]) for c in open_claims if not s.verdicts[c.record.token].is_dead
        ]
        if blocking and not force:
            c, v = blocking[0]
            raise NotClaimed(
                f"refusing to release #{number}: its holder is {v.liveness.value} ({v.reason}); "
                f"use --force only if you are sure the run is gone"
            )
        reason = "released by hand with --force" if blocking else "released by hand; the holder is dead"
        # Only a dead run that started its command spends an attempt (ADR 0012).
        counts = not blocking and any(c.record.child_pid is not None for c in open_claims)
        plan = Plan(
            number,
            Action.REQUEUE,
            reason,
            holder=open_claims[0] if open_claims else None,
            release=open_claims,
            counts_attempt=counts,
            add_labels=(lab.queue,) if issue.is_open else (),  # a closed issue is not work
            remove_labels=tuple(x for x in issue.labels if x.startswith(lab.stage_prefix)) + (lab.working,),
        )
        ordered = tuple(sorted(open_claims, key=lambda c: c.record.child_pid is None))  # counts first
        self._post_tombstones(number, ordered, ReleaseAction.RELEASE, reason, counts, by="release")
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
            self.gh.post_comment(
                number, render_tombstone(tomb, f"comment {unreadable.comment_id}"), marker=tomb.extra["nonce"]
            )
        self._no_longer_working(ordered, reason)
        move_labels(self.gh, number, list(plan.add_labels), list(plan.remove_labels), lab.working)
        return plan


# -- reporting --------------------------------------------------------------------------------


def heartbeat_load(config: Config, surveys: Sequence[Survey]) -> tuple[int, float]:
    """The live claims among `surveys`, and the heartbeats they make per hour: at the interval
    each record promises (ADR 0045), the configured one where a record is not at hand."""
    live = [s for s in surveys if s.plan.verdict and s.plan.verdict.liveness is Liveness.ALIVE]
    beats = sum(3600 / (s.plan.holder.record.interval if s.plan.holder else config.heartbeat_interval)
                for s in live)
    return len(live), beats


def free_304s(gh: GitHubRepo) -> str:
    """How many of the requests were conditional reads answered 304: GitHub charges none of
    them (ADR 0044)."""
    return f"; {gh.not_modified} were free 304s" if gh.not_modified else ""


def cost_lines(gh: GitHubRepo, config: Config, surveys: list[Survey], env: dict[str, str]) -> list[str]:
    """What this command spent, and what the live claims' heartbeats will cost per hour."""
    live, beats = heartbeat_load(config, surveys)
    budget = gh.budget.limit or DEFAULT_BUDGET
    share = beats * REQUESTS_PER_BEAT / budget
    every = 3600 * live / beats if beats else config.heartbeat_interval
    lines = [
        f"this command used {gh.requests} API requests "
        f"({gh.budget.remaining if gh.budget.remaining is not None else '?'} of {budget}/h left"
        f"{free_304s(gh)})",
        f"{live} live claim(s) heartbeat every {every:g}s (as their records promise): about "
        f"{beats * REQUESTS_PER_BEAT:.0f} requests/hour ({share:.0%} of {budget}/h) and "
        f"{beats:.0f} comment edits/hour (GitHub allows about {CONTENT_BUDGET}/h per identity)",
    ]
    if share > BUDGET_WARN_SHARE or beats > BUDGET_WARN_SHARE * CONTENT_BUDGET:
        need = math.ceil(
            max(
                live * 3600 * REQUESTS_PER_BEAT / (BUDGET_WARN_SHARE * budget),
                live * 3600 / (BUDGET_WARN_SHARE * CONTENT_BUDGET),
            )
        )
        warn = (
            f"heartbeats would use more than {BUDGET_WARN_SHARE:.0%} of the token's budget: "
            f"raise heartbeat.interval to at least {max(need, 1)}s or use a token with a larger budget"
        )
        lines.append("warning: " + warn)
        annotation = actions.warning(env, warn, "orion-action: request budget")
        if annotation:
            print(annotation, flush=True)
    return lines


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in rows)


def md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


@dataclass(frozen=True)
class PassResult:
    """What one reconcile pass over one repository found and did."""

    repo: str
    dry_run: bool
    surveys: list[Survey]
    done: list[Plan]
    dispatched: list[int]

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

    def text(self, config: Config) -> list[str]:
        """One line per issue (and its notes), then the summary line."""
        lines = []
        for p in self.done:
            lines.append(f"#{p.issue}  {p.action.value:<8}  {p.reason}")
            lines += [f"      note: {note}" for note in p.notes]
        counts = self.counts
        summary = ", ".join(f"{counts[a.value]} {a.value}" for a in Action if counts[a.value])
        summary = summary or "nothing to do"
        unheld = len(self.done) - len(self.surveys)
        cancels = f", {unheld} unheld carrying {config.labels.cancel!r}" if unheld else ""
        quick = sum(1 for s in self.surveys if not s.full_read)
        shortcut = f" ({quick} kept on a fresh beat without reading the issue)" if quick else ""
        lines.append(
            f"reconcile{' (dry run: nothing written)' if self.dry_run else ''}: "
            f"{len(self.surveys)} issue(s) carrying {config.labels.working!r}{cancels}: {summary}{shortcut}"
        )
        return lines

    def summary_markdown(self, config: Config, heading: str = "###") -> str:
        title = f"{heading} orion-action reconcile" + (" (dry run)" if self.dry_run else "")
        if not self.done:
            return f"{title}\n\nNo issue carries `{config.labels.working}`.\n"
        rows = "\n".join(f"| #{p.issue} | `{p.action.value}` | {md_cell(p.reason)} |" for p in self.done)
        return f"{title}\n\n| issue | action | reason |\n|---|---|---|\n{rows}\n"

    def annotate(self, env: dict[str, str], prefix: str = "") -> None:
        """A warning annotation for every issue that needs a person."""
        for p in self.done:
            if p.action in (Action.REPORT, Action.GIVE_UP):
                annotation = actions.warning(env, f"{prefix}#{p.issue} {p.action.value}: {p.reason}")
                if annotation:
                    print(annotation, flush=True)


def reconcile_pass(gh: GitHubRepo, config: Config, log: Log, *, dry_run: bool,
                   env: Mapping[str, str] | None = None) -> PassResult:
    """One pass over one repository: survey, execute each plan, sweep the cancel label,
    dispatch workers for requeued issues, and keep the dashboard. A write that fails turns its
    plan into `report`; the next pass retries it."""
    from orion_action.services import dashboard
    from orion_action.services.dispatch import dispatch_after_pass, trigger_check

    r = Reconciler(gh, config, log)
    surveys = r.survey()
    done: list[Plan] = []
    for s in surveys:
        if dry_run:
            done.append(s.plan)
            continue
        try:
            done.append(r.execute(s))
        except GitHubError as exc:
            log(f"#{s.plan.issue}: {s.plan.action.value} failed: {exc}; the next pass will retry")
            done.append(
                replace(s.plan, action=Action.REPORT, reason=f"{s.plan.reason}; the write failed: {exc}")
            )
    for plan in r.survey_cancels():
        try:
            done.append(plan if dry_run else r.execute_cancel(plan))
        except GitHubError as exc:
            log(f"#{plan.issue}: cancel failed: {exc}; the next pass will retry")
            done.append(replace(plan, action=Action.REPORT, reason=f"{plan.reason}; the write failed: {exc}"))
    requeued = [p.issue for p in done if p.action is Action.REQUEUE]
    approved = trigger_check(gh, config, log)
    dispatched = [] if dry_run else dispatch_after_pass(gh, config, requeued, log, approved, env)
    if not dry_run:
        dashboard.update(gh, config, surveys, log)
    return PassResult(gh.full_name, dry_run, surveys, done, dispatched)


def pass_outputs(counts: Counter[str], document: object) -> dict[str, str]:
    """The step outputs of a pass: one count per action, and the plan as JSON."""
    return {
        **{a.value: str(counts[a.value]) for a in Action},
        "plan": json.dumps(document, separators=(",", ":")),
    }


def reconcile_command(
    gh: GitHubRepo, config: Config, log: Log, env: dict[str, str], *, dry_run: bool, as_json: bool
) -> int:
    result = reconcile_pass(gh, config, log, dry_run=dry_run, env=env)
    if as_json:
        print(json.dumps(result.document(), indent=2))
    else:
        print("\n".join(result.text(config)))
    result.annotate(env)
    for line in cost_lines(gh, config, result.surveys, env):
        log(line)
    actions.set_outputs(env, pass_outputs(result.counts, result.document()))
    if actions.in_actions(env):
        actions.add_summary(env, result.summary_markdown(config))
    return int(ExitCode.OK)


def status_rows(surveys: list[Survey]) -> list[dict[str, str | int | float | None]]:
    rows = []
    for s in surveys:
        holder = s.plan.holder
        rec = holder.record if holder else None
        verdict = s.plan.verdict or Verdict(Liveness.UNKNOWN, s.plan.reason)
        rows.append(
            {
                "issue": s.issue.number,
                "verdict": verdict.liveness.value,
                "reason": verdict.reason,
                "host": rec.holder.host if rec else None,
                "pid": rec.holder.pid if rec else None,
                "heartbeat_age_s": s.heartbeat_age,
                "stage": rec.stage if rec else None,
                "attempt": rec.attempt if rec else None,
                "progress": rec.progress if rec else None,
            }
        )
    return rows


def queue_rows(gh: GitHubRepo, config: Config) -> list[dict[str, int | str | None]]:
    """The queued issues in the order `run --next` takes them (one listing per 100)."""
    lab = config.labels
    queued = [i for i in gh.list_issues(lab.queue) if is_queued(i, config)]
    return [
        {"issue": i.number, "priority": priority_of(i.labels, lab.priority), "title": i.title,
         "created_at": i.created_at.isoformat() if i.created_at else None}
        for i in pick_order(queued, lab.priority)
    ]


def status_command(gh: GitHubRepo, config: Config, log: Log, env: dict[str, str], *, as_json: bool) -> int:
    surveys = Reconciler(gh, config, log).survey()
    rows = status_rows(surveys)
    queue = queue_rows(gh, config)
    paused = read_pause(gh, config)
    if as_json:
        keys = [{"issue": q["issue"], "priority": q["priority"]} for q in queue]  # the documented keys
        doc = {"repo": gh.full_name, "claims": rows, "queue": keys, "paused": paused is not None}
        print(json.dumps(doc, indent=2))
    else:
        _print_claims(rows, config)
        shown = [f"#{q['issue']}" + (f" ({q['priority']})" if q["priority"] else "") for q in queue]
        print(f"queue ({len(queue)}, in pick order): {', '.join(shown) if shown else 'empty'}")
        print(f"paused: yes, {paused.line()}" if paused else "paused: no")
    for line in cost_lines(gh, config, surveys, env):
        log(line)
    from orion_action.services import dashboard

    dashboard.write_summary(gh, config, surveys, env, queue)
    return int(ExitCode.OK)


def _print_claims(rows: list[dict[str, str | int | float | None]], config: Config) -> None:
    if rows:

        def show(v: object) -> str:
            return "-" if v is None else str(v)

        table = [["ISSUE", "VERDICT", "AGE", "HOST", "PID", "STAGE", "ATTEMPT", "REASON", "PROGRESS"]] + [
            [
                f"#{r['issue']}",
                show(r["verdict"]),
                "-" if r["heartbeat_age_s"] is None else f"{r['heartbeat_age_s']:.0f}s",
                show(r["host"]),
                show(r["pid"]),
                show(r["stage"]),
                show(r["attempt"]),
                show(r["reason"]),
                show(r["progress"]),
            ]
            for r in rows
        ]
        print(_table(table))
    else:
        print(f"no issue carries {config.labels.working!r}")


def release_command(gh: GitHubRepo, config: Config, log: Log, number: int, *, force: bool) -> int:
    plan = Reconciler(gh, config, log).release(number, force)
    if plan.action is Action.KEEP:
        print(plan.reason)
    elif plan.action is Action.COMPLETE:
        print(
            f"#{number}: completed ({plan.reason}); {config.labels.working} -> {', '.join(plan.add_labels)}"
        )
    else:
        moved = (
            f"{config.labels.working} -> {config.labels.queue}"
            if plan.add_labels
            else f"{config.labels.working} removed (the issue is closed)"
        )
        print(f"#{number}: released ({plan.reason}); {moved}")
    return int(ExitCode.OK)
