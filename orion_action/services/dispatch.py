"""Immediate pickup: start the worker workflow for queued issues (docs/design.md section 12).

Labels added with a workflow's GITHUB_TOKEN start no workflow, so an issue requeued by the
reconciler (or handed back by a wrapper) would wait for the next scheduled drain. With
`dispatch.workflow` set, they start the worker by workflow_dispatch with the `issue` input,
keeping at most `dispatch.max_runs` runs of it queued or in progress at once.

Cost: two listings (queued, in progress), the default branch once per process, one request
per run started. An issue whose number is in the title of a queued or in-progress run (the
example workflows' `run-name` says `#N`) is not dispatched again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from orion_action.config import Config
from orion_action.errors import Forbidden, GitHubError, NotFound
from orion_action.ports import GitHubPort, RunnerPort
from orion_action.services import trigger
from orion_action.services.claiming import is_queued

Log = Callable[[str], None]
Approved = Callable[[int], bool]
ACTIVE = ("queued", "in_progress")
_ISSUE_IN_TITLE = re.compile(r"#(\d+)\b")


def dispatch_issues(
    gh: GitHubPort, config: Config, numbers: Iterable[int], log: Log, approved: Approved,
    runner: RunnerPort | None = None,
) -> list[int]:
    """Start the worker workflow for `numbers`, in order, while runs are free; returns the
    issues it started a run for. Only issues that pass the trigger check (`approved`, e.g.
    `trigger_check(gh, config, log)`) get a run: a dispatched run must never start work nobody
    with `trigger.permission` approved (finding 1 of the round-3 security audit). Never raises
    for GitHub's answers: a failure is logged with GitHub's own reason (in Actions also as a
    warning annotation, on `runner`) and leaves the issues queued for whatever worker runs next."""
    workflow = config.dispatch_workflow
    wanted = list(dict.fromkeys(numbers))
    if not workflow or not wanted:
        return []
    started: list[int] = []
    try:
        active = [run for status in ACTIVE for run in gh.list_workflow_runs(workflow, status)]
        busy = {int(m) for run in active for m in _ISSUE_IN_TITLE.findall(run.title)}
        free = config.dispatch_max_runs - len(active)
        for n in wanted:
            if free <= 0:
                break
            if n in busy or not approved(n):
                continue
            gh.dispatch_workflow(workflow, {"issue": str(n)})
            started.append(n)
            free -= 1
    except Forbidden as exc:
        _failed(log, runner, f"dispatch: cannot start {workflow}: {exc}; the token needs actions: write")
    except GitHubError as exc:
        left = ", ".join(f"#{n}" for n in wanted if n not in started)
        # A 404 here is almost always the file name: say which key to check, not the repository.
        why = (f"GitHub has no workflow {workflow} (404): check dispatch.workflow against the file "
               f"names in .github/workflows/ on the default branch" if isinstance(exc, NotFound) else
               f"starting {workflow} failed: {exc}")
        _failed(log, runner, f"dispatch: {why}; {left} stay(s) queued until a worker runs (its "
                             f"schedule, a label event, or `run --next`)")
    if started:
        log(f"dispatch: started {workflow} for {', '.join(f'#{n}' for n in started)}")
    return started


def trigger_check(gh: GitHubPort, config: Config, log: Log) -> Approved:
    """The trigger check as dispatch asks it: one issue number at a time."""
    return lambda n: trigger.passes(gh, config, n, log, gh.own_login)


def _failed(log: Log, runner: RunnerPort | None, message: str) -> None:
    log(message)
    if runner is not None:
        runner.warning(message, "orion-action: dispatch")


def dispatch_after_pass(
    gh: GitHubPort, config: Config, requeued: Iterable[int], log: Log, approved: Approved,
    runner: RunnerPort | None = None,
) -> list[int]:
    """After a reconcile pass: the issues it requeued first, then those waiting in the queue
    (one more listing, only when a workflow is configured)."""
    if not config.dispatch_workflow:
        return []
    try:
        waiting = [i.number for i in gh.list_issues(config.labels.queue) if is_queued(i, config)]
    except GitHubError as exc:
        log(f"dispatch: could not list the queue ({exc})")
        waiting = []
    return dispatch_issues(gh, config, [*requeued, *waiting], log, approved, runner)
