"""The one report layer (orion_action/report.py, ADR 0051), in-process on the in-memory
GitHub: one repository and several go through one service path, and the report prints each
its documented shape; the cost line counts what the command itself spent."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping

import pytest
from fakes.host import HERE, blind
from fakes.memory_github import MemoryGitHub, MemoryServer

from orion_action import report
from orion_action.config import Config
from orion_action.errors import AuthError, ExitCode
from orion_action.services.reconcile import reconcile_repos, status_repos

CONFIG = Config(source="test")


class Runner:
    """A RunnerPort that records what it is given."""

    in_actions = True
    server_url = "https://github.example"

    def __init__(self) -> None:
        self.outputs: dict[str, str] = {}
        self.summaries: list[str] = []
        self.warnings: list[str] = []

    def group(self, title: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def set_outputs(self, outputs: Mapping[str, str]) -> None:
        self.outputs.update(outputs)

    def add_summary(self, markdown: str) -> None:
        self.summaries.append(markdown)

    def has_summary(self) -> bool:
        return True

    def warning(self, message: str, title: str = "orion-action") -> None:
        self.warnings.append(message)

    def error(self, message: str, file: str | None = None, line: int | None = None) -> None:
        raise AssertionError("no command error expected here")

    def this_workflow(self) -> tuple[str, str] | None:
        return None  # a workflow in no repository of these passes: no anchor (ADR 0081)


class Refused(MemoryGitHub):
    """A repository whose token GitHub refuses."""

    def list_issues(self, *args: object, **kwargs: object) -> list:  # type: ignore[override]
        raise AuthError("GitHub refused the token (401)", 401)


@pytest.fixture
def logs() -> Iterator[list[str]]:
    yield []


def test_one_repository_prints_its_pass_and_sets_the_pass_outputs(capsys, logs: list[str]) -> None:
    gh = MemoryServer("me/one").client()
    runner = Runner()
    passes = reconcile_repos([gh], CONFIG, logs.append, HERE, blind, dry_run=True, runner=runner)
    code = report.reconcile(passes, CONFIG, logs.append, runner, dry_run=True, as_json=False)
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out == ["reconcile (dry run: nothing written): 0 issue(s) carrying 'orion-working': nothing to do"]
    assert json.loads(runner.outputs["plan"]) == {"dry_run": True, "actions": [], "dispatched": [],
                                                  "read_in_full": 0}
    assert runner.summaries == ["### orion-action reconcile (dry run)\n\nNo issue carries `orion-working`.\n"]
    assert logs[0].startswith(f"this command used {gh.requests} API requests")


def test_one_failing_repository_among_several_is_reported_and_the_others_still_run(capsys) -> None:
    logs: list[str] = []
    good = MemoryServer("me/good").client()
    bad = Refused(MemoryServer("me/bad"))
    runner = Runner()
    passes = reconcile_repos([bad, good], CONFIG, logs.append, HERE, blind, dry_run=False, runner=runner)
    assert [p.error is None for p in passes] == [False, True]
    code = report.reconcile(passes, CONFIG, logs.append, runner, dry_run=False, as_json=True)
    doc = json.loads(capsys.readouterr().out)
    assert code == int(ExitCode.USAGE)  # the failure's own code (an AuthError)
    assert [(r["repo"], r["ok"]) for r in doc["repos"]] == [("me/bad", False), ("me/good", True)]
    assert "the other repositories still run" in logs[0]


def test_alone_a_repository_s_failure_is_the_command_s() -> None:
    with pytest.raises(AuthError):
        reconcile_repos([Refused(MemoryServer("me/bad"))], CONFIG, print, HERE, blind, dry_run=True)


def test_status_counts_its_own_requests_before_the_summary_reads(capsys, logs: list[str]) -> None:
    s = MemoryServer("me/one")
    n = s.create_issue("queued", ["orion"])
    gh = s.client()
    runner = Runner()
    found = status_repos([gh], CONFIG, logs.append, HERE, blind, summary_url=runner.server_url)
    spent_before_summary = found.repos[0].spent.requests
    assert gh.requests > spent_before_summary  # the summary read the failed and ready listings
    report.status(found, CONFIG, logs.append, runner, as_json=True)
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"repo": "me/one", "claims": [], "queue": [{"issue": n, "priority": None}], "paused": False}
    assert logs[0].startswith(f"this command used {spent_before_summary} API requests")
    assert len(runner.summaries) == 1 and f"#{n}" in runner.summaries[0]


def test_several_repositories_name_each_claim_and_queue_entry(capsys, logs: list[str]) -> None:
    one, two = MemoryServer("me/one"), MemoryServer("me/two")
    a = one.create_issue("first", ["orion"])
    b = two.create_issue("second", ["orion"])
    found = status_repos([one.client(), two.client()], CONFIG, logs.append, HERE, blind)
    report.status(found, CONFIG, logs.append, Runner(), as_json=False)
    out = capsys.readouterr().out.splitlines()
    assert out == ["== me/one", "no issue carries 'orion-working'", "paused: no",
                   "== me/two", "no issue carries 'orion-working'", "paused: no",
                   f"queue (2, in pick order): me/one#{a}, me/two#{b}"]
    assert all(line.startswith(("me/one: ", "me/two: ")) for line in logs)
