"""core.survey: the rows `status` prints and documents in its JSON (docs/design.md), the
queue's rows, and the beat intervals the cost lines price. One test per field, so that each
field's source is pinned (a row built from the wrong claim, or with a field left out, fails)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from test_plan import ALIVE, DEAD, HOLDER, T0, claim, log

from orion_action.core.issue import Issue
from orion_action.core.liveness import Liveness
from orion_action.core.plan import Action, Plan
from orion_action.core.survey import Survey, live_intervals, queue_row, status_rows


def _issue(n: int = 7, labels: frozenset[str] = frozenset({"orion-working"}), **kw: object) -> Issue:
    return Issue(n, True, labels, 1, T0, T0, **kw)  # type: ignore[arg-type]


def _survey(plan: Plan, n: int = 7, age: float = 12.0) -> Survey:
    entry = plan.holder
    now = (entry.updated_at if entry else T0) + timedelta(seconds=age)
    return Survey(_issue(n), log(*(e for e in (entry,) if e)), now, {}, plan)


def test_a_live_holder_row_names_its_runner_stage_attempt_progress_and_age() -> None:
    held = claim(3, "a")
    held = replace(held, record=replace(held.record, stage="build", attempt=2, progress="step 4/9"))
    [row] = status_rows([_survey(Plan(7, Action.KEEP, ALIVE.reason, holder=held, verdict=ALIVE), age=12.34)])
    assert row == {"issue": 7, "verdict": "alive", "reason": ALIVE.reason, "host": HOLDER.host,
                   "pid": HOLDER.pid, "heartbeat_age_s": 12.3, "stage": "build", "attempt": 2,
                   "progress": "step 4/9"}


def test_a_row_without_a_holder_shows_the_plan_s_reason_as_unknown() -> None:
    [row] = status_rows([_survey(Plan(9, Action.REPORT, "no trusted claim record"), n=9)])
    assert row == {"issue": 9, "verdict": "unknown", "reason": "no trusted claim record", "host": None,
                   "pid": None, "heartbeat_age_s": None, "stage": None, "attempt": None, "progress": None}


def test_one_row_per_survey_in_order_and_a_clock_behind_the_beat_reads_zero() -> None:
    dead = claim(4, "d")
    rows = status_rows([_survey(Plan(1, Action.REQUEUE, DEAD.reason, holder=dead, verdict=DEAD), n=1),
                        _survey(Plan(2, Action.KEEP, ALIVE.reason, holder=claim(5, "l"), verdict=ALIVE), n=2,
                                age=-3.0)])
    shown = [(r["issue"], r["verdict"], r["heartbeat_age_s"]) for r in rows]
    assert shown == [(1, "dead", 12.0), (2, "alive", 0.0)]
    assert rows[0]["reason"] == DEAD.reason


def test_only_live_claims_are_priced_at_their_promised_interval_or_the_configured_one() -> None:
    promised = claim(3, "a")
    promised = replace(promised, record=replace(promised.record, interval=600.0))
    surveys = [
        _survey(Plan(1, Action.KEEP, "", holder=promised, verdict=ALIVE)),
        _survey(Plan(2, Action.KEEP, "", verdict=ALIVE)),  # live, no record at hand
        _survey(Plan(3, Action.REQUEUE, "", holder=claim(4, "d"), verdict=DEAD)),
        _survey(Plan(4, Action.REPORT, "")),  # no verdict at all
    ]
    assert live_intervals(surveys, 120.0) == [600.0, 120.0]
    assert surveys[3].verdict.liveness is Liveness.UNKNOWN


def test_a_queue_row_has_its_priority_title_and_creation_time() -> None:
    issue = _issue(5, frozenset({"orion", "p1"}), title="fix it")
    assert queue_row(issue, ("p0", "p1")) == {"issue": 5, "priority": "p1", "title": "fix it",
                                               "created_at": T0.isoformat()}
    assert queue_row(replace(issue, labels=frozenset({"orion"})), ("p0",))["priority"] is None


def test_a_survey_is_a_full_read_unless_the_pass_kept_it_on_a_fresh_beat() -> None:
    """`status` and `reconcile` count the issues read in full (ADR 0018): only the fresh-beat
    shortcut (core/plan.py keep_on_fresh_beat) says otherwise."""
    s = _survey(Plan(7, Action.REPORT, "no trusted claim record"))
    assert (s.full_read, s.listed) == (True, None)
