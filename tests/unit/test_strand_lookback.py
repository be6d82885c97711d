"""How far back a pass looks for stranded issues (ADR 0081): `core.plan.strand_since` as a
table, where the job's workflow comes from (`adapters.actions.this_workflow`), and
`services.reconcile.previous_pass` against the in-memory GitHub."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from fakes.memory_github import MemoryServer

from orion_action.adapters.actions import ActionsRunner, this_workflow
from orion_action.core.plan import PreviousPass, strand_since
from orion_action.errors import Unavailable
from orion_action.services.reconcile import previous_pass

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=timezone.utc)
SA, LONGEST, MARGIN = 600.0, 1800.0, 5.0
WEEK = 7 * 24 * 3600.0  # WEEK, written out: a test of the constant too


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


CASES = [
    # (the previous pass, the longest promise, the answer in seconds before NOW, why)
    (None, LONGEST, 2 * SA + MARGIN, "outside Actions: 2 x stale_after back"),
    (PreviousPass(None), LONGEST, WEEK, "no successful pass yet: as far as any pass looks"),
    (PreviousPass(ago(60)), SA, 2 * SA + MARGIN,
     "a pass a minute after the previous one, no stretched beats: never less than 2 x stale_after"),
    (PreviousPass(ago(300)), LONGEST, 300 + LONGEST + MARGIN,
     "five minutes after the previous one: back to its start less the longest promise a record makes"),
    (PreviousPass(ago(6 * 3600)), LONGEST, 6 * 3600 + LONGEST + MARGIN, "a pass six hours late"),
    (PreviousPass(ago(30 * 24 * 3600)), LONGEST, WEEK, "a month without a pass: a week"),
]


@pytest.mark.parametrize(("previous", "longest", "back", "why"), CASES, ids=[c[3] for c in CASES])
def test_strand_since(previous: PreviousPass | None, longest: float, back: float, why: str) -> None:
    assert strand_since(NOW, SA, longest, previous, MARGIN) == ago(back), why


WORKFLOW_REFS = [
    ({"GITHUB_ACTIONS": "true",
      "GITHUB_WORKFLOW_REF": "octo/repo/.github/workflows/reconcile.yml@refs/heads/main"},
     ("octo/repo", "reconcile.yml"), "the job's repository and workflow file"),
    ({"GITHUB_WORKFLOW_REF": "octo/repo/.github/workflows/reconcile.yml@refs/heads/main"}, None,
     "outside Actions"),
    ({"GITHUB_ACTIONS": "true"}, None, "no GITHUB_WORKFLOW_REF"),
    ({"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW_REF": "octo/repo/elsewhere/reconcile.yml@refs/heads/main"},
     None, "not a workflow file's path"),
    ({"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW_REF": "octo/.github/workflows/x.yml@v1"}, None,
     "no repository name"),
]


@pytest.mark.parametrize(("env", "found", "why"), WORKFLOW_REFS, ids=[c[2] for c in WORKFLOW_REFS])
def test_this_workflow(env: dict[str, str], found: tuple[str, str] | None, why: str) -> None:
    assert this_workflow(env) == found, why
    assert ActionsRunner(env).this_workflow() == found


def _in_actions(repo: str, file: str = "orion-reconcile.yml") -> ActionsRunner:
    return ActionsRunner({"GITHUB_ACTIONS": "true",
                          "GITHUB_WORKFLOW_REF": f"{repo}/.github/workflows/{file}@refs/heads/main"})


def test_the_previous_pass_is_the_newest_successful_run_of_the_jobs_own_workflow() -> None:
    s = MemoryServer()
    first = s.start_run("orion-reconcile.yml")
    s.end_run(first)
    s.clock.advance(900)
    second = s.start_run("orion-reconcile.yml")
    s.end_run(second)
    s.clock.advance(900)
    s.end_run(s.start_run("orion-reconcile.yml"), conclusion="failure")
    s.start_run("orion-reconcile.yml")  # this pass's own run, in progress
    log: list[str] = []
    gh = s.client()
    calls: list[str] = []
    s.on_call = lambda op, _args: calls.append(op)
    found = previous_pass([gh], _in_actions(gh.full_name), log.append)
    assert found == PreviousPass(s.run_started[second]) and log == []
    assert calls == ["list_workflow_runs"]  # one request


def test_a_workflow_with_no_successful_run_has_no_previous_pass() -> None:
    s = MemoryServer()
    s.start_run("orion-reconcile.yml")
    gh = s.client()
    assert previous_pass([gh], _in_actions(gh.full_name), print) == PreviousPass(None)


def test_no_anchor_outside_actions_or_for_a_workflow_in_another_repository() -> None:
    s = MemoryServer()
    gh = s.client()
    calls: list[str] = []
    s.on_call = lambda op, _args: calls.append(op)
    assert previous_pass([gh], ActionsRunner({}), print) is None
    assert previous_pass([gh], None, print) is None
    assert previous_pass([gh], _in_actions("someone/else"), print) is None
    assert calls == []


def test_no_anchor_when_github_does_not_say(monkeypatch: pytest.MonkeyPatch) -> None:
    s = MemoryServer()
    gh = s.client()
    s.start_run("orion-reconcile.yml")

    def unavailable(*_args: object, **_kwargs: object) -> list[object]:
        raise Unavailable("GitHub did not answer (503)", 503)

    monkeypatch.setattr(gh, "list_workflow_runs", unavailable)
    log: list[str] = []
    assert previous_pass([gh], _in_actions(gh.full_name), log.append) is None
    assert log == ["could not read when the previous reconcile pass ran (GitHub did not answer (503)); "
                   "the look for stranded issues reaches back 2 x stale_after only"]
