"""The dashboard's rows as taken from what a pass read (orion_action/core/dashboard.py,
docs/adr/0020): each Working row from its claim's record and verdict, each Queue row from the
queue rows `status` reports, and the links of an issue's latest claim. One field per source, so
a row built from the wrong claim, or with a field left out, fails."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from test_plan import ALIVE, HOLDER, T0, claim, log

from orion_action.core.dashboard import Queued, Working, last_run_links, queued, working
from orion_action.core.issue import Comment, Issue
from orion_action.core.plan import Action, Plan
from orion_action.core.record import RESULT_HEADING, ActionsRun
from orion_action.core.survey import Survey

RUN = "https://github.com/o/r/actions/runs/77"
PR = "https://github.com/o/r/pull/12"
START = "2026-03-01T00:00:00Z"
CREATED = "2026-12-01T12:00:00+00:00"


def _survey(plan: Plan, n: int = 7, title: str = "build it") -> Survey:
    entry = plan.holder
    now = (entry.updated_at if entry else T0) + timedelta(seconds=42.5)
    issue = Issue(n, True, frozenset({"orion-working"}), 1, T0, T0, title=title)
    return Survey(issue, log(*(e for e in (entry,) if e)), now, {}, plan)


def test_a_holders_row_shows_its_runner_stage_attempt_start_progress_age_and_run() -> None:
    held = claim(3, "a")
    held = replace(held, record=replace(held.record, stage="build", attempt=2, started_at=START,
                                        progress="step 4/9", actions=ActionsRun(77, url=RUN)))
    rows = working([_survey(Plan(7, Action.KEEP, ALIVE.reason, holder=held, verdict=ALIVE))])
    assert rows == [Working(issue=7, title="build it", verdict="alive", host=HOLDER.host, pid=HOLDER.pid,
                            stage="build", attempt=2, started_at=START, progress="step 4/9",
                            heartbeat_age_s=42.5, run_url=RUN)]


def test_a_holder_outside_actions_has_no_run_link() -> None:
    [row] = working([_survey(Plan(7, Action.KEEP, ALIVE.reason, holder=claim(3, "a"), verdict=ALIVE))])
    assert (row.host, row.attempt, row.run_url) == (HOLDER.host, 1, "")


def test_a_row_without_a_holder_shows_the_issue_and_its_verdict_only() -> None:
    rows = working([_survey(Plan(9, Action.REPORT, "no trusted claim record"), n=9, title="odd")])
    assert rows == [Working(issue=9, title="odd", verdict="unknown", host=None, pid=None, stage=None,
                            attempt=None, started_at=None, progress=None, heartbeat_age_s=None, run_url="")]


def test_one_working_row_per_survey_in_order() -> None:
    surveys = [_survey(Plan(n, Action.REPORT, "r"), n=n) for n in (4, 2, 8)]
    assert [r.issue for r in working(surveys)] == [4, 2, 8]


def test_queue_rows_keep_their_number_priority_title_and_creation_time() -> None:
    rows = queued([
        {"issue": 5, "priority": "orion-p0", "title": "urgent fix", "created_at": CREATED},
        {"issue": 3, "priority": None, "title": None, "created_at": None},
    ])
    assert rows == [Queued(5, "orion-p0", "urgent fix", CREATED), Queued(3, None, "", None)]


def test_a_queue_row_without_a_number_or_fields_still_makes_a_row() -> None:
    """Rows come from `status`'s JSON shape (core/survey.queue_row): a missing value is shown
    empty (#0, no priority, no title, no age) rather than as the text "None"."""
    assert queued([{"issue": None, "priority": "", "title": ""}]) == [Queued(0, None, "", None)]


def _comment(cid: int, body: str) -> Comment:
    return Comment(cid, "orion-bot", body, T0, T0)


def test_the_links_are_the_latest_claims_run_and_the_pull_request_its_result_named() -> None:
    older = claim(3, "a")
    older = replace(older, record=replace(older.record, actions=ActionsRun(70, url=RUN.replace("77", "70"))))
    latest = claim(5, "b")
    latest = replace(latest, record=replace(latest.record, actions=ActionsRun(77, url=RUN)))
    comments = [_comment(3, f"x{RESULT_HEADING}{PR.replace('12', '10')}"),
                _comment(5, f"y{RESULT_HEADING}{PR}")]
    assert last_run_links(comments, log(latest, older), "https://github.com") == (RUN, PR)


def test_a_latest_claim_outside_actions_links_its_pull_request_only() -> None:
    latest = claim(5, "b")
    older = replace(claim(3, "a"), record=replace(claim(3, "a").record, actions=ActionsRun(70, url=RUN)))
    comments = [_comment(5, f"y{RESULT_HEADING}{PR}")]
    assert last_run_links(comments, log(older, latest), "https://github.com") == ("", PR)
