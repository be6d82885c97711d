"""services/dispatch.py on the in-memory GitHub: which issues get a worker run, and how many
requests that costs (docs/design.md section 12, "Immediate pickup")."""

from __future__ import annotations

from fakes.memory_github import MemoryServer

from orion_action.config import Config
from orion_action.services.dispatch import dispatch_after_pass, dispatch_issues

WORKER = "orion-worker.yml"
ON = Config(dispatch_workflow=WORKER, dispatch_max_runs=2)


def YES(n: int) -> bool:  # noqa: N802 - reads as a constant: every issue passes the trigger check
    return True


def server() -> MemoryServer:
    s = MemoryServer()
    s.workflows[WORKER] = "orion worker #{issue}"
    return s


def issues_sent(s: MemoryServer) -> list[str]:
    return [str(d["inputs"]["issue"]) for d in s.dispatches]  # type: ignore[index]


def test_off_costs_nothing() -> None:
    s = server()
    gh = s.client()
    assert dispatch_issues(gh, Config(), [1, 2], print, YES) == []
    assert dispatch_after_pass(gh, Config(), [1], print, YES) == []
    assert gh.requests == 0 and not s.dispatches


def test_at_most_max_runs_and_none_twice() -> None:
    s = server()
    gh = s.client()
    assert dispatch_issues(gh, ON, [5, 6, 7], print, YES) == [5, 6]
    assert gh.requests == 2 + 1 + 2  # two listings, the default branch once, two dispatches
    assert dispatch_issues(gh, ON, [5, 6, 7], print, YES) == []  # both runs still queued
    run_of_5 = next(d["run_id"] for d in s.dispatches if d["inputs"] == {"issue": "5"})
    s.workflow_runs[run_of_5] = "completed"  # it ended without taking #5: #5 may get another
    assert dispatch_issues(gh, ON, [5, 6, 7], print, YES) == [5]
    assert issues_sent(s) == ["5", "6", "5"]


def test_runs_started_otherwise_count() -> None:
    s = server()
    s.workflow_runs[1] = "in_progress"
    s.run_info[1] = (WORKER, "orion worker #next")
    assert dispatch_issues(s.client(), ON, [5, 6], print, YES) == [5]


def test_a_missing_workflow_is_logged_not_raised() -> None:
    s = MemoryServer()
    lines: list[str] = []
    assert dispatch_issues(s.client(), ON, [5], lines.append, YES) == []
    assert lines == ["dispatch: GitHub has no workflow orion-worker.yml (404): check dispatch.workflow "
                     "against the file names in .github/workflows/ on the default branch; #5 stay(s) queued "
                     "until a worker runs (its schedule, a label event, or `run --next`)"]


def test_after_a_pass_requeued_first_then_the_queue_oldest_first() -> None:
    s = server()
    a = s.create_issue("a", ["orion"])
    b = s.create_issue("b", ["orion"])
    s.create_issue("held", ["orion-working"])
    four = Config(dispatch_workflow=WORKER, dispatch_max_runs=4)
    assert dispatch_after_pass(s.client(), four, [b], print, YES) == [b, a]


def test_only_issues_that_pass_the_trigger_check_get_a_run() -> None:
    """A triager's label is refused by the check: dispatch starts no run for it, and the
    refused issue spends no run slot (finding 1 of the round-3 security audit)."""
    s = server()
    asked: list[int] = []

    def approved(n: int) -> bool:
        asked.append(n)
        return n != 5

    assert dispatch_issues(s.client(), ON, [5, 6, 7], print, approved) == [6, 7]
    assert issues_sent(s) == ["6", "7"] and asked == [5, 6, 7]
