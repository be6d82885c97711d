"""Several repositories, one worker pool and one reconciler (docs/adr/0021-several-repositories.md).

`run --next`, `reconcile` and `status` take `--repo` more than once. Each repository keeps its
own GitHubRepo: its own request counter and budget, its own login and trusted set, its own
labels and pause switch. What is shared is the configuration file and the process. The order
across repositories is the pure `pick_order_across` (core/queue.py); this module only lists,
claims and loops the single-repository commands.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from orion_action.adapters import actions
from orion_action.adapters.github import GitHubRepo
from orion_action.config import Config
from orion_action.core.issue import Issue
from orion_action.core.queue import pick_order_across, priority_of
from orion_action.errors import ExitCode, NotClaimed, OrionError
from orion_action.services import reconcile
from orion_action.services.claiming import (
    MAX_NEXT_CANDIDATES,
    Claim,
    Claimer,
    empty_queue,
    is_queued,
    queued_candidates,
)
from orion_action.services.pause import Paused, read_pause
from orion_action.services.wrapper import Wrapper

Log = Callable[[str], None]


def budget_line(gh: GitHubRepo) -> str:
    left = gh.budget.remaining if gh.budget.remaining is not None else "?"
    limit = gh.budget.limit or "?"
    return f"{gh.full_name}: {gh.requests} API requests ({left} of {limit}/h left{reconcile.free_304s(gh)})"


# -- run --next ------------------------------------------------------------------------------


class FleetClaimer(Claimer):
    """`claim_next` across several repositories, each through its own Claimer (so its own
    token budget, login and trusted set). Only `claim_next` is offered: `run --issue N` names
    one issue of one repository. `on_won` learns which repository the claim is in."""

    def __init__(self, claimers: Sequence[Claimer], log: Log, on_won: Callable[[GitHubRepo], None]):
        # Not Claimer.__init__: every claim goes through one of `claimers`.
        self.claimers, self.log, self.on_won = list(claimers), log, on_won
        self.config = claimers[0].config

    def claim_next(self, stage: str | None, require: Sequence[str] = ()) -> Claim:
        by_name = {c.gh.full_name: c for c in self.claimers}
        queued: list[tuple[str, Issue]] = []
        paused = []
        for name, c in by_name.items():
            try:
                queued += [(name, i) for i in queued_candidates(c.gh, c.config, require)]
            except NotClaimed as exc:  # the queue of this repository is paused
                self.log(f"{name}: {exc}; skipping this repository")
                paused.append(name)
        if len(paused) == len(by_name):
            raise NotClaimed(f"every repository's queue is paused ({', '.join(paused)}); nothing is claimed")
        order = pick_order_across(queued, self.config.labels.priority, list(by_name))
        if not order:
            raise NotClaimed(f"{empty_queue(self.config, require)} in {', '.join(by_name)}")
        for name, issue in order[:MAX_NEXT_CANDIDATES]:
            c = by_name[name]
            self.log(f"{name}#{issue.number}: claiming")
            try:
                claim = c.claim(issue, stage)
            except NotClaimed as exc:
                self.log(f"{name}#{issue.number}: {exc}; trying the next queued issue")
                continue
            self.on_won(c.gh)
            return claim
        raise NotClaimed(
            f"none of the {min(len(order), MAX_NEXT_CANDIDATES)} first queued issues could be claimed"
        )

    def claim_number(self, number: int, stage: str | None) -> Claim:  # pragma: no cover - cli refuses
        raise NotClaimed("run --issue N takes one --repo")


class FleetWrapper(Wrapper):
    """The claim wrapper over several repositories. Once a claim is won, `self.gh` is that
    repository's adapter, so the holder, the heartbeat, ORION_REPO and the immediate pickup
    all act on the issue's own repository."""

    def __init__(self, repos: Sequence[GitHubRepo], config: Config, log: Log, env: dict[str, str]):
        super().__init__(repos[0], config, log, env)
        self.repos = list(repos)

    def claimer(self) -> Claimer:
        claimers = []
        for gh in self.repos:
            c = super().claimer()
            c.gh = gh
            claimers.append(c)
        return FleetClaimer(claimers, self.log, self._won)

    def _won(self, gh: GitHubRepo) -> None:
        self.gh = gh


# -- reconcile -------------------------------------------------------------------------------


def reconcile_fleet(
    repos: Sequence[GitHubRepo],
    config: Config,
    log: Log,
    env: dict[str, str],
    *,
    dry_run: bool,
    as_json: bool,
) -> int:
    """One pass over every repository in turn. A repository whose pass fails (GitHub, a bad
    token for it) is reported and the others still run; the exit code is the first failure's.
    The outputs are the sums over the repositories; every action names its repository."""
    code = int(ExitCode.OK)
    per_repo: list[dict[str, Any]] = []
    actions_all: list[dict[str, Any]] = []
    dispatched: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for gh in repos:
        name = gh.full_name
        if not as_json:
            print(f"== {name}", flush=True)
        entry: dict[str, Any] = {"repo": name}
        actions.add_summary(env, f"#### {name}\n")
        try:
            result = reconcile.reconcile_pass(gh, config, log, dry_run=dry_run, env=env)
        except OrionError as exc:
            log(f"{name}: the reconcile pass failed: {exc}; the other repositories still run")
            code = code or int(exc.exit_code)
            entry.update(ok=False, error=str(exc))
            actions.add_summary(env, f"The pass failed: {reconcile.md_cell(str(exc))}\n")
        else:
            entry.update(ok=True, read_in_full=result.read_in_full)
            if not as_json:
                print("\n".join(result.text(config)), flush=True)
            result.annotate(env, prefix=name)
            for line in reconcile.cost_lines(gh, config, result.surveys, env):
                log(f"{name}: {line}")
            actions_all += [{"repo": name, **a} for a in result.action_entries()]
            dispatched += [{"repo": name, "issue": n} for n in result.dispatched]
            counts += result.counts
            if actions.in_actions(env):
                actions.add_summary(env, result.summary_markdown(config, heading="#####"))
        entry.update(requests=gh.requests, not_modified=gh.not_modified,
                     budget_left=gh.budget.remaining, budget=gh.budget.limit)
        per_repo.append(entry)
        log(budget_line(gh))
    doc = {"dry_run": dry_run, "repos": per_repo, "actions": actions_all, "dispatched": dispatched}
    if as_json:
        print(json.dumps(doc, indent=2), flush=True)
    else:
        for e in per_repo:
            state = "ok" if e["ok"] else f"failed: {e['error']}"
            print(f"reconcile {e['repo']}: {state}; {e['requests']} API requests", flush=True)
    actions.set_outputs(env, reconcile.pass_outputs(counts, doc))
    return code


# -- status ----------------------------------------------------------------------------------


def status_fleet(
    repos: Sequence[GitHubRepo], config: Config, log: Log, env: dict[str, str], *, as_json: bool
) -> int:
    """`status` over several repositories: every claim and queue entry says its repository,
    and the queue is in the order `run --next` with these repositories takes it."""
    lab = config.labels
    claims: list[dict[str, Any]] = []
    queued: list[tuple[str, Issue]] = []
    paused: dict[str, Paused | None] = {}
    surveys = {}
    for gh in repos:
        name = gh.full_name
        surveys[name] = reconcile.Reconciler(gh, config, log).survey()
        claims += [{"repo": name, **row} for row in reconcile.status_rows(surveys[name])]
        queued += [(name, i) for i in gh.list_issues(lab.queue) if is_queued(i, config)]
        paused[name] = read_pause(gh, config)
    names = [gh.full_name for gh in repos]
    order = pick_order_across(queued, lab.priority, names)
    queue = [
        {"repo": r, "issue": i.number, "priority": priority_of(i.labels, lab.priority)} for r, i in order
    ]
    if as_json:
        doc = {
            "repos": names,
            "claims": claims,
            "queue": queue,
            "paused": all(p is not None for p in paused.values()),
            "paused_repos": [r for r, p in paused.items() if p is not None],
        }
        print(json.dumps(doc, indent=2))
    else:
        for name in names:
            print(f"== {name}")
            rows = [{k: v for k, v in c.items() if k != "repo"} for c in claims if c["repo"] == name]
            reconcile._print_claims(rows, config)
            p = paused[name]
            print(f"paused: yes, {p.line()}" if p else "paused: no")
        shown = [
            f"{q['repo']}#{q['issue']}" + (f" ({q['priority']})" if q["priority"] else "") for q in queue
        ]
        print(f"queue ({len(queue)}, in pick order): {', '.join(shown) if shown else 'empty'}")
    from orion_action.services import dashboard

    for gh in repos:
        for line in reconcile.cost_lines(gh, config, surveys[gh.full_name], env):
            log(f"{gh.full_name}: {line}")
        own: list[dict[str, int | str | None]] = [
            {"issue": q["issue"], "priority": q["priority"]} for q in queue if q["repo"] == gh.full_name
        ]
        dashboard.write_summary(gh, config, surveys[gh.full_name], env, own)  # names its repository
    return int(ExitCode.OK)
