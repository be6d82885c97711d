"""The dashboard: one issue whose body shows the whole queue (docs/adr/0020), and the same
tables for `status`'s step summary. Pure: plain data and GitHub's `now` in, Markdown out.

The body holds nothing that changes while nothing happens (no "generated at", no ages), so
a pass over an idle fleet renders the same body and writes nothing. It ends with a hidden
cache of the failed issues' reasons, so that a pass reads comments only for issues newly
failed since the last body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

from orion_action.core.cost import HeartbeatCost
from orion_action.core.issue import ClaimEntry, Comment, IssueLog, TombstoneEntry
from orion_action.core.markdown import cell, table
from orion_action.core.record import HOLDER_END, RESULT_HEADING, RUN_URL, ReleaseAction, State
from orion_action.core.survey import QueueRow, Survey

MARKER = "<!-- orion-dashboard v1 -->"  # a dashboard body starts with it
_CACHE_HEAD = "<!-- orion-dashboard-reasons"
_CACHE = re.compile(r"\n<!-- orion-dashboard-reasons\n(.*)\n-->\n?\Z", re.DOTALL)
FINISHED_WINDOW = timedelta(hours=24)
MAX_ROWS = 100  # per table: a body may hold at most 65,536 characters
REASON_MAX = 300
# The only pull request links shown: https, a host, owner/name within GitHub's limits, a number.
# They come from the command's result (untrusted), so nothing else of it reaches the dashboard,
# and a link is kept only on the repository's own GitHub host (pull_request_url).
_PR = r"https://([A-Za-z0-9.-]{1,253}(?::\d{1,5})?)/[A-Za-z0-9-]{1,39}/[A-Za-z0-9_.-]{1,100}/pull/\d{1,10}"
PR_URL = re.compile(_PR + r"\Z")
_PR_IN_TEXT = re.compile(_PR + r"(?![\w])")


@dataclass(frozen=True)
class Queued:
    issue: int
    priority: str | None
    title: str = ""
    created_at: str | None = None  # ISO, GitHub's: the issue's age, in the step summary only


@dataclass(frozen=True)
class Working:
    issue: int
    title: str
    verdict: str  # the liveness value: alive, dead, unknown, ...
    host: str | None
    pid: int | None
    stage: str | None
    attempt: int | None
    started_at: str | None  # the claim record's start (ISO, the holder's clock: display only)
    progress: str | None
    heartbeat_age_s: float | None  # volatile: shown in the step summary only
    run_url: str = ""  # the holder's Actions run (a well-formed link, core/record.RUN_URL), if any


@dataclass(frozen=True)
class Failed:
    issue: int
    title: str
    reason: str | None  # None: not read yet (reads are capped per pass)
    run_url: str = ""  # the last run's Actions page (RUN_URL), if known
    pr_url: str = ""  # the pull request the last run's result named (PR_URL), if any


@dataclass(frozen=True)
class Finished:
    issue: int
    title: str
    updated_at: datetime
    is_open: bool
    run_url: str = ""  # as in Failed
    pr_url: str = ""


@dataclass(frozen=True)
class Cost:
    requests: int  # what the pass spent before the dashboard's own requests
    load: HeartbeatCost  # what the live claims' heartbeats cost per hour


@dataclass(frozen=True)
class View:
    paused: bool
    pause_reason: str
    queue: Sequence[Queued]
    working: Sequence[Working]
    failed: Sequence[Failed]
    finished: Sequence[Finished]
    cost: Cost
    queue_label: str = "orion"
    ready_label: str = "orion-ready"


@dataclass(frozen=True)
class CachedReason:
    """What one read of an ended issue's comments found: kept in the body, so that a pass reads
    an issue's comments again only when a new comment arrived."""

    comments: int  # the issue's comment count when the reason was read: a new comment re-reads it
    reason: str  # why it failed ("" for a finished issue)
    run_url: str = ""  # the last run's Actions page
    pr_url: str = ""  # the pull request its result named


def working(surveys: Sequence[Survey]) -> list[Working]:
    """The Working table's entries: each surveyed claim as its record and verdict show it."""
    rows = []
    for s in surveys:
        rec = s.plan.holder.record if s.plan.holder else None
        rows.append(Working(
            issue=s.issue.number,
            title=s.issue.title,
            verdict=s.verdict.liveness.value,
            host=rec.holder.host if rec else None,
            pid=rec.holder.pid if rec else None,
            stage=rec.stage if rec else None,
            attempt=rec.attempt if rec else None,
            started_at=rec.started_at if rec else None,
            progress=rec.progress if rec else None,
            heartbeat_age_s=s.heartbeat_age,
            run_url=rec.actions.url if rec and rec.actions else "",
        ))
    return rows


def queued(rows: Sequence[QueueRow]) -> list[Queued]:
    """The Queue table's entries, from the queue rows `status` reports (core/survey.py)."""
    return [
        Queued(int(q["issue"] or 0), str(q["priority"]) if q["priority"] else None,
               str(q.get("title") or ""), str(q.get("created_at") or "") or None)
        for q in rows
    ]


def is_dashboard(body: str) -> bool:
    return body.startswith(MARKER)


def _time(value: datetime | str | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return cell(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _links(run_url: str, pr_url: str) -> str:
    """Links to a run and its pull request, each shown only in its one well-formed shape."""
    links = [f"[run]({run_url})"] if RUN_URL.match(run_url) else []
    links += [f"[pull request]({pr_url})"] if PR_URL.match(pr_url) else []
    return " · ".join(links) or "-"


def pull_request_url(result: str, server_url: str) -> str:
    """The first pull request link on the repository's GitHub host (`server_url`) in a
    command's result, or "". The result is untrusted text: only the link's own characters are
    taken, so nothing else of it can reach the dashboard."""
    host = urlsplit(server_url).netloc.lower()
    for m in _PR_IN_TEXT.finditer(result):
        if m.group(1).lower() == host:
            return m.group(0)
    return ""


def last_run_links(comments: Sequence[Comment], log: IssueLog, server_url: str) -> tuple[str, str]:
    """(run link, pull request link) of the issue's latest trusted claim: the run from its
    record, the pull request from the result its final comment carries (after RESULT_HEADING,
    so never from the record or the visible line)."""
    latest = max(log.claims, key=lambda c: c.comment_id, default=None)
    if latest is None:
        return "", ""
    actions = latest.record.actions
    run = actions.url if actions and RUN_URL.match(actions.url) else ""
    body = next((c.body for c in comments if c.id == latest.comment_id), "")
    _, found, result = body.partition(RESULT_HEADING)
    return run, pull_request_url(result, server_url) if found else ""


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(seconds)
    return f"{s}s" if s < 120 else f"{s // 60}m" if s < 7200 else f"{s // 3600}h {s % 3600 // 60}m"


def _table(head: list[str], rows: list[list[str]], empty: str) -> list[str]:
    """A section's table of at most MAX_ROWS rows, or the `empty` sentence."""
    return table(head, rows, MAX_ROWS) if rows else [f"_{empty}_"]


def finished_recently(finished: Sequence[Finished], now: datetime) -> list[Finished]:
    """Finished issues updated within the last 24 hours of `now` (GitHub's time)."""
    return sorted((f for f in finished if f.updated_at >= now - FINISHED_WINDOW), key=lambda f: f.issue)


def one_section_each(view: View) -> View:
    """Each issue in one section only. The tables come from reads made at different moments (a
    pass surveys the held issues, then requeues some): an issue held by a live run is Working;
    else a queued issue is in the Queue (a just-requeued one too); then Working, Failed,
    Finished, in that order."""
    alive = {w.issue for w in view.working if w.verdict == "alive"}
    queue = [q for q in view.queue if q.issue not in alive]
    seen = {q.issue for q in queue} | alive
    working = [w for w in view.working if w.issue in alive or w.issue not in seen]
    seen |= {w.issue for w in working}
    failed = [f for f in view.failed if f.issue not in seen]
    seen |= {f.issue for f in failed}
    finished = [f for f in view.finished if f.issue not in seen]
    return replace(view, queue=queue, working=working, failed=failed, finished=finished)


def _sections(view: View, now: datetime, volatile: bool, issue_url: str = "") -> list[str]:
    """The tables, shared by the dashboard body and the step summary; `volatile` adds the ages
    (elapsed, heartbeat age, time since the last update) and the cost, which only a one-off
    summary may show. `issue_url`: the issues' address prefix, for links where GitHub does not
    link `#N` itself (a job summary); the dashboard issue's body leaves `#N` to GitHub."""
    view = one_section_each(view)

    def issue(n: int) -> str:
        return f"[#{n}]({issue_url}{n})" if issue_url else f"#{n}"

    out: list[str] = []
    if view.paused:
        why = f": {cell(view.pause_reason)}" if view.pause_reason.strip() else ""
        out.append(f"**The queue is paused**{why}. Runs claim nothing until `orion-action resume`; "
                   f"runs in flight go on.")
    else:
        out.append("**The queue is running**: workers claim queued issues.")

    out += ["", f"### Queue ({len(view.queue)}, in pick order)", ""]
    def age(iso: str | None) -> list[str]:
        if not volatile:
            return []
        when = _parse(iso)
        return [_age((now - when).total_seconds()) if when else "-"]

    out += _table(
        ["order", "issue", "title", "priority", *(["issue age"] if volatile else [])],
        [
            [str(k), issue(q.issue), cell(q.title) or "-", cell(q.priority) if q.priority else "-",
             *age(q.created_at)]
            for k, q in enumerate(view.queue, 1)
        ],
        f"Nothing is queued (add the {cell(view.queue_label)} label to an issue).",
    )

    head = ["issue", "title", "state", "stage", "holder", "attempt", "started"]
    if volatile:
        head += ["elapsed", "heartbeat age"]
    head.append("progress")
    rows = []
    for w in sorted(view.working, key=lambda w: w.issue):
        holder = f"{cell(w.host)} pid {w.pid}" if w.host else "-"
        if w.run_url and RUN_URL.match(w.run_url):
            holder += f" ([run]({w.run_url}))"
        row = [issue(w.issue), cell(w.title), w.verdict, cell(w.stage) if w.stage else "-", holder,
               "-" if w.attempt is None else str(w.attempt), _time(w.started_at)]
        if volatile:
            started = _parse(w.started_at)
            row += [_age((now - started).total_seconds()) if started else "-", _age(w.heartbeat_age_s)]
        row.append(cell(w.progress) if w.progress else "-")
        rows.append(row)
    out += ["", f"### Working ({len(view.working)})", ""]
    out += _table(head, rows, "No issue is held.")

    out += ["", f"### Failed ({len(view.failed)})", ""]
    out += _table(
        ["issue", "title", "reason", "links"],
        [
            [issue(f.issue), cell(f.title), cell(f.reason) if f.reason is not None else "_(not read yet)_",
             _links(f.run_url, f.pr_url)]
            for f in sorted(view.failed, key=lambda f: f.issue)
        ],
        "No issue has failed.",
    )

    recent = finished_recently(view.finished, now)
    out += ["", f"### Finished in the last 24 hours ({len(recent)})", ""]
    # The outcome, not open/closed: these are the issues whose run succeeded (the ready label).
    out += _table(
        ["issue", "title", "outcome", "links", "last update", *(["ago"] if volatile else [])],
        [[issue(f.issue), cell(f.title), cell(view.ready_label), _links(f.run_url, f.pr_url),
          _time(f.updated_at),
          *([_age((now - f.updated_at).total_seconds())] if volatile else [])]
         for f in recent],
        "Nothing finished in the last 24 hours.",
    )
    if volatile:  # for the operator reading the job summary, not for the dashboard's readers
        c = view.cost.load
        out += [
            "",
            "### Cost",
            "",
            f"- The pass used {view.cost.requests} API requests "
            f"(the dashboard's own reads and its write come on top).",
            f"- {c.live} live claim(s) heartbeat every {c.interval:g}s: about {c.requests_per_hour:.0f} "
            f"requests/hour ({c.share:.0%} of {c.budget}/h) and {c.beats_per_hour:.0f} comment edits/hour.",
        ]
    return out


def _parse(iso: str | None) -> datetime | None:
    if not iso:
        return None
    try:
        value = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def render_body(view: View, now: datetime, reasons: Mapping[int, CachedReason]) -> str:
    """The dashboard issue's body: the marker, the tables, the hidden reason cache. The same
    inputs give the same text, so an unchanged fleet leaves the body unchanged."""
    lines = [MARKER, *_sections(view, now, volatile=False), "",
             "_Kept by `orion-action reconcile`, rewritten only when something here changes (times are "
             "UTC). Edits to this body are overwritten._"]
    cache = {str(n): _cached(r) for n, r in sorted(reasons.items())}
    text = json.dumps(cache, sort_keys=True, separators=(",", ":"))
    # The JSON cannot end the HTML comment: <, > and & are escaped inside its strings.
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return "\n".join(lines) + f"\n{_CACHE_HEAD}\n{text}\n-->\n"


def render_summary(view: View, now: datetime, repo: str, server_url: str = "https://github.com") -> str:
    """The same tables for `$GITHUB_STEP_SUMMARY`, with the ages a one-off report may show and
    links to the issues (a job summary does not link `#N`)."""
    url = f"{server_url.rstrip('/')}/{repo}/issues/"
    return "\n".join([f"## orion queue: {cell(repo)}", "", *_sections(view, now, True, url)]) + "\n"


def _cached(r: CachedReason) -> dict[str, int | str]:
    entry: dict[str, int | str] = {"c": r.comments, "r": r.reason}
    if r.run_url:
        entry["u"] = r.run_url
    if r.pr_url:
        entry["p"] = r.pr_url
    return entry


def parse_reasons(body: str) -> dict[int, CachedReason]:
    """The reason cache of a dashboard body; anything unreadable counts as no cache."""
    m = _CACHE.search(body)
    if not m:
        return {}
    try:
        data = json.loads(m.group(1))
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[int, CachedReason] = {}
    for key, entry in data.items():
        if (
            isinstance(key, str) and key.isdigit() and isinstance(entry, dict)
            and isinstance(entry.get("c"), int) and not isinstance(entry.get("c"), bool)
            and isinstance(entry.get("r"), str)
        ):
            run, pr = entry.get("u"), entry.get("p")
            out[int(key)] = CachedReason(
                entry["c"], entry["r"][:REASON_MAX],
                run if isinstance(run, str) and RUN_URL.match(run) else "",
                pr if isinstance(pr, str) and PR_URL.match(pr) else "",
            )
    return out


def failed_reason(log: IssueLog) -> str:
    """Why an issue failed, from its latest trusted orion comment (a claim's end or a release)."""
    events: list[ClaimEntry | TombstoneEntry] = sorted(
        [*log.claims, *log.tombstones], key=lambda e: e.comment_id
    )
    for event in reversed(events):
        if isinstance(event, TombstoneEntry):
            t = event.tombstone
            if t.by != HOLDER_END:
                return _cut(f"released by {t.by}: {t.reason}")
            code = t.extra.get("exit_code")
            if t.action is ReleaseAction.FINISHED and isinstance(code, int):
                return f"the command exited with code {code}"
            claim = log.find(t.token)
            note = claim.record.note if claim else None
            return _cut(f"the run was {t.action.value}" + (f": {note}" if note else ""))
        rec = event.record
        attempt = f" (attempt {rec.attempt})"
        if rec.state is State.FINISHED:
            return f"the command exited with code {rec.exit_code}{attempt}"
        if rec.state in (State.INTERRUPTED, State.CANCELLED, State.LOST):
            return _cut(f"the run was {rec.state.value}{attempt}" + (f": {rec.note}" if rec.note else ""))
    return "no trusted orion record on the issue says why"


def _cut(text: str) -> str:
    return text if len(text) <= REASON_MAX else text[: REASON_MAX - 1] + "…"
