"""The dashboard issue (docs/adr/0020): made by `init`, kept by every `reconcile` pass, and the
same tables in `status`'s step summary.

Found by one listing of its label (bodies included), then by its hidden marker from a trusted
author: never by title, and never an issue an outsider opened. A pass rewrites the body only
when the rendered text differs from the current one: at most one write per pass, none while
nothing changes.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from orion_action.config import Config
from orion_action.core.cost import heartbeat_cost
from orion_action.core.dashboard import (
    FINISHED_WINDOW,
    MARKER,
    MAX_ROWS,
    CachedReason,
    Cost,
    Failed,
    Finished,
    View,
    failed_reason,
    is_dashboard,
    last_run_links,
    parse_reasons,
    queued,
    render_body,
    working,
)
from orion_action.core.issue import Issue, read_log, trusted_set
from orion_action.core.survey import QueueRow, Survey, live_intervals
from orion_action.errors import GitHubError
from orion_action.ports import GitHubPort
from orion_action.services.pause import read_pause
from orion_action.services.survey import queue_rows

Log = Callable[[str], None]
LABEL_COLOR = "5319E7"
LABEL_DESCRIPTION = "The orion dashboard issue: kept by orion-action reconcile"
MAX_REASON_READS = 5  # comment listings per pass for newly ended issues; the rest wait a pass


def _trusted(gh: GitHubPort, config: Config) -> frozenset[str]:
    return trusted_set(gh.own_login(), config.trusted_authors)


def find(gh: GitHubPort, config: Config) -> Issue | None:
    """The dashboard: the oldest issue carrying the dashboard label whose body starts with the
    marker and whose author is trusted (one listing per 100 issues carrying the label)."""
    trusted = _trusted(gh, config)
    found = [
        i
        for i in gh.list_issues(config.labels.dashboard, state="all")
        if is_dashboard(i.body) and i.author.lower() in trusted
    ]
    return min(found, key=lambda i: i.number) if found else None


def ensure(gh: GitHubPort, config: Config) -> tuple[Issue, bool]:
    """The dashboard issue, made if there is none: (issue, whether it was created now)."""
    gh.ensure_label(config.labels.dashboard, LABEL_COLOR, LABEL_DESCRIPTION)
    existing = find(gh, config)
    if existing is not None:
        return existing, False
    nonce = secrets.token_hex(8)
    body = (
        f"{MARKER}\n_The next `orion-action reconcile` pass fills this in._\n"
        f"<!-- orion-dashboard-nonce {nonce} -->\n"
    )
    return gh.create_issue(config.dashboard_title, body, [config.labels.dashboard], marker=nonce), True


def gather(
    gh: GitHubPort,
    config: Config,
    surveys: Sequence[Survey],
    spent: int,
    now: datetime,
    cache: Mapping[int, CachedReason],
    queue: Sequence[QueueRow] | None = None,
    server_url: str = "https://github.com",
) -> tuple[View, dict[int, CachedReason]]:
    """Read what the tables show (pause, queue, failed, finished: one request each per 100
    issues, plus at most MAX_REASON_READS comment listings) and build the view; returns the
    reasons and links to cache in the body. An ended issue's comments are read once (again only
    after a new comment): why it failed, its last run, and the pull request its result named
    on `server_url`'s host."""
    lab = config.labels
    paused = read_pause(gh, config)
    rows = queue if queue is not None else queue_rows(gh, config)
    trusted = _trusted(gh, config)
    reasons: dict[int, CachedReason] = {}
    reads = 0

    def ended(issue: Issue, failed: bool) -> CachedReason | None:
        nonlocal reads
        cached = reasons.get(issue.number) or cache.get(issue.number)
        if cached is not None and cached.comments == issue.comments and (cached.reason or not failed):
            reasons[issue.number] = cached
        elif reads < MAX_REASON_READS:
            reads += 1
            comments, _ = gh.list_comments(issue.number)
            log = read_log(comments, trusted)
            run, pr = last_run_links(comments, log, server_url)
            why = failed_reason(log) if failed else ""
            reasons[issue.number] = CachedReason(issue.comments, why, run, pr)
        return reasons.get(issue.number)

    failed: list[Failed] = []
    for issue in gh.list_issues(lab.failed):
        known = ended(issue, True)
        failed.append(Failed(issue.number, issue.title, known.reason if known else None,
                             known.run_url if known else "", known.pr_url if known else ""))
    finished: list[Finished] = []
    listed = gh.list_issues(lab.ready, state="all", since=now - FINISHED_WINDOW)
    # Links only for the rows the table shows: the cache in the body stays bounded.
    shown = {i.number for i in sorted(listed, key=lambda i: i.number)[:MAX_ROWS]}
    for issue in listed:
        known = ended(issue, False) if issue.number in shown else None
        run, pr = (known.run_url, known.pr_url) if known else ("", "")
        finished.append(Finished(issue.number, issue.title, issue.updated_at or issue.created_at,
                                 issue.is_open, run, pr))
    cost = Cost(spent, heartbeat_cost(live_intervals(surveys, config.heartbeat_interval),
                                      gh.budget.limit, config.heartbeat_interval))
    view = View(
        paused=paused is not None,
        pause_reason=paused.reason if paused else "",
        queue=queued(rows),
        working=working(surveys),
        failed=failed,
        finished=finished,
        cost=cost,
        queue_label=lab.queue,
        ready_label=lab.ready,
    )
    return view, reasons


def update(gh: GitHubPort, config: Config, surveys: Sequence[Survey], log: Log,
           server_url: str = "https://github.com") -> None:
    """After a reconcile pass: rewrite the dashboard if its content changed (at most one
    write). Never fails the pass: a dashboard GitHub would not update waits for the next one.
    `server_url`: the repository's GitHub (pull request links on another host are not shown)."""
    if not config.dashboard_enabled:
        return
    spent = gh.requests
    try:
        dash = find(gh, config)
        if dash is None:
            log("dashboard: dashboard.enabled is set but no dashboard issue exists: run `orion-action init`")
            return
        now = dash.read_at  # GitHub's time
        cache = parse_reasons(dash.body)
        view, reasons = gather(gh, config, surveys, spent, now, cache, server_url=server_url)
        body = render_body(view, now, reasons)
        if body == dash.body and dash.title == config.dashboard_title:
            log(f"dashboard: #{dash.number} unchanged ({gh.requests - spent} requests)")
            return
        gh.edit_issue(dash.number, title=config.dashboard_title, body=body)
        log(f"dashboard: #{dash.number} updated ({gh.requests - spent} requests, one write)")
    except GitHubError as exc:
        log(f"dashboard: not updated ({exc}); the next pass will try again")


@dataclass(frozen=True)
class Tables:
    """The dashboard's tables as `status` read them, for the report layer to render into the
    step summary (core/dashboard.render_summary)."""

    view: View
    now: datetime  # GitHub's time of the reads: the ages are shown from it
    server_url: str  # the repository's GitHub: the issue links point there


def status_tables(
    gh: GitHubPort,
    config: Config,
    surveys: Sequence[Survey],
    queue: Sequence[QueueRow],
    server_url: str,
) -> Tables:
    """`status`: the dashboard's tables, for the step summary (asked for only when the runner
    gives one: it costs requests). Failed reasons come from the dashboard's cache when there
    is one."""
    spent = gh.requests
    cache: Mapping[int, CachedReason] = {}
    if config.dashboard_enabled:
        dash = find(gh, config)
        cache = parse_reasons(dash.body) if dash else {}
    now = surveys[0].now if surveys else datetime.now(timezone.utc)
    view, _ = gather(gh, config, surveys, spent, now, cache, queue=queue, server_url=server_url)
    return Tables(view, now, server_url)
