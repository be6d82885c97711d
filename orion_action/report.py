"""The one report layer: what the services returned, as text on stdout, JSON, step outputs,
the step summary and annotations. Services print nothing and read no environment; cli.py
hands their results here with the runner's files (`ports.RunnerPort`) and a log
(docs/adr/0051-ports-only.md).

One repository or several go through the same functions; the text and JSON keep the shapes
docs/design.md fixes for each: one repository's are unchanged since 0.1, several
repositories' name each repository (ADR 0021).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from orion_action.config import Config
from orion_action.core.cost import heartbeat_cost
from orion_action.core.dashboard import render_summary
from orion_action.core.markdown import cell, table
from orion_action.core.plan import Action, Plan
from orion_action.core.survey import StatusRow, Survey, live_intervals, status_rows
from orion_action.errors import ConfigError, ExitCode, OrionError
from orion_action.ports import Budget, GitHubPort, RunnerPort
from orion_action.services.reconcile import PassResult, RepoPass, StatusResult

Log = Callable[[str], None]


class Spending(Protocol):
    """What a client has spent: a GitHubPort, or a `Spent` snapshot of one."""

    @property
    def requests(self) -> int: ...

    @property
    def not_modified(self) -> int: ...

    @property
    def budget(self) -> Budget: ...


def say(text: str) -> None:
    """A line of the command's own output (stdout)."""
    print(text, flush=True)


# -- cost -------------------------------------------------------------------------------------


def free_304s(gh: Spending) -> str:
    """How many of the requests were conditional reads answered 304: GitHub charges none of
    them (ADR 0044)."""
    return f"; {gh.not_modified} were free 304s" if gh.not_modified else ""


def budget_line(gh: GitHubPort) -> str:
    left = gh.budget.remaining if gh.budget.remaining is not None else "?"
    limit = gh.budget.limit or "?"
    return f"{gh.full_name}: {gh.requests} API requests ({left} of {limit}/h left{free_304s(gh)})"


def cost_lines(gh: Spending, config: Config, surveys: Sequence[Survey], runner: RunnerPort) -> list[str]:
    """What this command spent (`gh`: a client, or what it had spent), and what the live
    claims' heartbeats will cost per hour (core/cost.py; a warning annotation too, when they
    would use most of the budget)."""
    c = heartbeat_cost(live_intervals(surveys, config.heartbeat_interval), gh.budget.limit,
                       config.heartbeat_interval)
    lines = [
        f"this command used {gh.requests} API requests "
        f"({gh.budget.remaining if gh.budget.remaining is not None else '?'} of {c.budget}/h left"
        f"{free_304s(gh)})",
        f"{c.live} live claim(s) heartbeat every {c.interval:g}s (as their records promise): about "
        f"{c.requests_per_hour:.0f} requests/hour ({c.share:.0%} of {c.budget}/h) and "
        f"{c.beats_per_hour:.0f} comment edits/hour (GitHub allows about {c.write_limit}/h per identity)",
    ]
    if c.too_high:
        warn = (
            f"heartbeats would use more than {c.warn_share:.0%} of the token's budget: "
            f"raise heartbeat.interval to at least {c.needed_interval}s or use a token with a larger budget"
        )
        lines.append("warning: " + warn)
        runner.warning(warn, "orion-action: request budget")
    return lines


# -- tables -----------------------------------------------------------------------------------


def text_table(rows: list[list[str]]) -> str:
    """Rows as aligned plain text for the terminal (the first row is the heading)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in rows)


# -- reconcile --------------------------------------------------------------------------------


def pass_text(result: PassResult, config: Config) -> list[str]:
    """One line per issue (and its notes), then the summary line."""
    lines = []
    for p in result.done:
        lines.append(f"#{p.issue}  {p.action.value:<8}  {p.reason}")
        lines += [f"      note: {note}" for note in p.notes]
    counts = result.counts
    summary = ", ".join(f"{counts[a.value]} {a.value}" for a in Action if counts[a.value])
    summary = summary or "nothing to do"
    unheld = len(result.done) - len(result.surveys)
    cancels = f", {unheld} unheld carrying {config.labels.cancel!r}" if unheld else ""
    quick = sum(1 for s in result.surveys if not s.full_read)
    shortcut = f" ({quick} kept on a fresh beat without reading the issue)" if quick else ""
    lines.append(
        f"reconcile{' (dry run: nothing written)' if result.dry_run else ''}: "
        f"{len(result.surveys)} issue(s) carrying {config.labels.working!r}{cancels}: {summary}{shortcut}"
    )
    return lines


def pass_markdown(result: PassResult, config: Config, heading: str = "###") -> str:
    title = f"{heading} orion-action reconcile" + (" (dry run)" if result.dry_run else "")
    if not result.done:
        return f"{title}\n\nNo issue carries `{config.labels.working}`.\n"
    rows = [[f"#{p.issue}", f"`{p.action.value}`", cell(p.reason)] for p in result.done]
    return f"{title}\n\n" + "\n".join(table(["issue", "action", "reason"], rows)) + "\n"


def annotate_pass(result: PassResult, runner: RunnerPort, prefix: str = "") -> None:
    """A warning annotation for every issue that needs a person."""
    for p in result.done:
        if p.action in (Action.REPORT, Action.GIVE_UP):
            runner.warning(f"{prefix}#{p.issue} {p.action.value}: {p.reason}")


def pass_outputs(counts: Counter[str], document: object) -> dict[str, str]:
    """The step outputs of a pass: one count per action, and the plan as JSON."""
    return {
        **{a.value: str(counts[a.value]) for a in Action},
        "plan": json.dumps(document, separators=(",", ":")),
    }


def reconcile(passes: Sequence[RepoPass], config: Config, log: Log, runner: RunnerPort, *,
              dry_run: bool, as_json: bool) -> int:
    """`reconcile`'s output; the exit code is the first failed repository's (several only: one
    repository's failure is raised by the service, as every command's)."""
    if len(passes) == 1 and passes[0].result is not None:
        return _reconcile_one(passes[0].gh, passes[0].result, config, log, runner, as_json)
    code = int(ExitCode.OK)
    per_repo: list[dict[str, Any]] = []
    actions_all: list[dict[str, Any]] = []
    dispatched: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for p in passes:
        gh, name = p.gh, p.gh.full_name
        if not as_json:
            say(f"== {name}")
        entry: dict[str, Any] = {"repo": name}
        runner.add_summary(f"#### {name}\n")
        if p.result is None:
            assert p.error is not None
            code = code or int(p.error.exit_code)
            entry.update(ok=False, error=str(p.error))
            runner.add_summary(f"The pass failed: {cell(str(p.error))}\n")
        else:
            result = p.result
            entry.update(ok=True, read_in_full=result.read_in_full)
            if not as_json:
                say("\n".join(pass_text(result, config)))
            annotate_pass(result, runner, prefix=name)
            for line in cost_lines(gh, config, result.surveys, runner):
                log(f"{name}: {line}")
            actions_all += [{"repo": name, **a} for a in result.action_entries()]
            dispatched += [{"repo": name, "issue": n} for n in result.dispatched]
            counts += result.counts
            if runner.in_actions:
                runner.add_summary(pass_markdown(result, config, heading="#####"))
            code = code or _incomplete(result, runner, log, prefix=f"{name}: ")
        entry.update(requests=gh.requests, not_modified=gh.not_modified,
                     budget_left=gh.budget.remaining, budget=gh.budget.limit)
        per_repo.append(entry)
        log(budget_line(gh))
    doc = {"dry_run": dry_run, "repos": per_repo, "actions": actions_all, "dispatched": dispatched}
    if as_json:
        say(json.dumps(doc, indent=2))
    else:
        for e in per_repo:
            state = "ok" if e["ok"] else f"failed: {e['error']}"
            say(f"reconcile {e['repo']}: {state}; {e['requests']} API requests")
    runner.set_outputs(pass_outputs(counts, doc))
    return code


def _reconcile_one(gh: GitHubPort, result: PassResult, config: Config, log: Log, runner: RunnerPort,
                   as_json: bool) -> int:
    if as_json:
        say(json.dumps(result.document(), indent=2))
    else:
        say("\n".join(pass_text(result, config)))
    annotate_pass(result, runner)
    for line in cost_lines(gh, config, result.surveys, runner):
        log(line)
    runner.set_outputs(pass_outputs(result.counts, result.document()))
    if runner.in_actions:
        runner.add_summary(pass_markdown(result, config))
    return _incomplete(result, runner, log)


def _incomplete(result: PassResult, runner: RunnerPort, log: Log, prefix: str = "") -> int:
    """69 when the pass could not make every read or write it meant to (ADR 0091), with one
    line and an annotation saying so: its workflow run then fails, and does not count as the
    previous successful pass the next one looks back from. 0 otherwise."""
    if not result.incomplete:
        return int(ExitCode.OK)
    why = (f"{prefix}the pass is incomplete ({len(result.incomplete)} read(s) or write(s) failed, first: "
           f"{result.incomplete[0]}); the next pass looks back from the previous complete one")
    log(why)
    runner.warning(why)
    return int(ExitCode.UNAVAILABLE)


# -- status -----------------------------------------------------------------------------------


def claims_text(rows: list[StatusRow], config: Config) -> str:
    if not rows:
        return f"no issue carries {config.labels.working!r}"

    def show(v: object) -> str:
        return "-" if v is None else str(v)

    head = ["ISSUE", "VERDICT", "AGE", "HOST", "PID", "STAGE", "ATTEMPT", "REASON", "PROGRESS"]
    return text_table([head] + [
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
    ])


def status(result: StatusResult, config: Config, log: Log, runner: RunnerPort, *, as_json: bool) -> int:
    """`status`'s output: one repository's shape, or every claim and queue entry naming its
    repository when there are several."""
    several = len(result.repos) > 1
    queue = result.queue
    if as_json and not several:
        r = result.repos[0]
        keys = [{"issue": row["issue"], "priority": row["priority"]} for _, row in queue]  # documented keys
        say(json.dumps({"repo": r.gh.full_name, "claims": status_rows(r.surveys), "queue": keys,
                        "paused": r.paused is not None}, indent=2))
    elif as_json:
        say(json.dumps({
            "repos": [r.gh.full_name for r in result.repos],
            "claims": [{"repo": r.gh.full_name, **row}
                       for r in result.repos for row in status_rows(r.surveys)],
            "queue": [{"repo": name, "issue": row["issue"], "priority": row["priority"]}
                      for name, row in queue],
            "paused": all(r.paused is not None for r in result.repos),
            "paused_repos": [r.gh.full_name for r in result.repos if r.paused is not None],
        }, indent=2))
    else:
        for r in result.repos:
            if several:
                say(f"== {r.gh.full_name}")
            say(claims_text(status_rows(r.surveys), config))
            if not several:
                say(_queue_line(queue, several, r.hint))
            say(f"paused: yes, {r.paused.line()}" if r.paused else "paused: no")
        if several:
            say(_queue_line(queue, several))
    for r in result.repos:
        for line in cost_lines(r.spent, config, r.surveys, runner):
            log(f"{r.gh.full_name}: {line}" if several else line)
        if r.summary is not None:
            t = r.summary
            runner.add_summary(render_summary(t.view, t.now, r.gh.full_name, t.server_url))
    return int(ExitCode.OK)


def _queue_line(queue: list[tuple[str, dict[str, int | str | None]]], several: bool, hint: str = "") -> str:
    shown = [
        (f"{name}#" if several else "#") + f"{row['issue']}"
        + (f" ({row['priority']})" if row["priority"] else "")
        for name, row in queue
    ]
    return f"queue ({len(queue)}, in pick order): {', '.join(shown) if shown else 'empty' + hint}"


# -- release ----------------------------------------------------------------------------------


def release(plan: Plan, config: Config, number: int) -> int:
    """`release --issue N`'s one line."""
    if plan.action is Action.KEEP:
        say(plan.reason)
    elif plan.action is Action.UNLOCK:
        say(f"#{number}: {config.labels.working} removed ({plan.reason}); not queued: add the "
            f"{config.labels.queue!r} label to queue it")
    elif plan.action is Action.COMPLETE:
        say(f"#{number}: completed ({plan.reason}); {config.labels.working} -> {', '.join(plan.add_labels)}")
    else:
        moved = (
            f"{config.labels.working} -> {config.labels.queue}"
            if plan.add_labels
            else f"{config.labels.working} removed (the issue carries {config.labels.cancel})"
            if plan.for_cancel
            else f"{config.labels.working} removed (the issue is closed)"
        )
        say(f"#{number}: released ({plan.reason}); {moved}")
    return int(ExitCode.OK)


def lines(text: Sequence[str]) -> int:
    """A command whose result is its sentences (init, pause, resume)."""
    for line in text:
        say(line)
    return int(ExitCode.OK)


# -- errors -----------------------------------------------------------------------------------


def error(exc: OrionError, config_file: str, runner: RunnerPort) -> None:
    """A command's error: one line on stderr and, in Actions, an `::error::` annotation with
    the real message, so the run's summary page shows it; a configuration error is put on the
    file (and its line, when YAML said which)."""
    message = str(exc)
    print(f"orion-action: error: {message}", file=sys.stderr, flush=True)
    file = line = None
    if isinstance(exc, ConfigError) and message.startswith(f"{config_file}: "):
        file = config_file
        where = re.search(r"\(line (\d+), column \d+\)", message)
        line = int(where.group(1)) if where else None
    runner.error(message, file, line)
