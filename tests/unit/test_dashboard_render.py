"""The pure dashboard renderer (orion_action/core/dashboard.py, docs/adr/0020)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from orion_action.core.cost import HeartbeatCost
from orion_action.core.dashboard import (
    MARKER,
    MAX_ROWS,
    CachedReason,
    Cost,
    Failed,
    Finished,
    Queued,
    View,
    Working,
    failed_reason,
    is_dashboard,
    parse_reasons,
    pull_request_url,
    render_body,
    render_summary,
)
from orion_action.core.issue import ClaimEntry, IssueLog, TombstoneEntry
from orion_action.core.record import HOLDER_END, ClaimRecord, Holder, ReleaseAction, State, Tombstone

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
COST = Cost(requests=7, load=HeartbeatCost(live=1, beats_per_hour=30, interval=120, budget=5000))
WORKING = Working(17, "build it", "alive", "runner-1", 4242, "build", 2, "2026-12-03T11:30:00+00:00",
                  "step 3 of 5", heartbeat_age_s=42.5)


def view(**changes: object) -> View:
    base = View(
        paused=False,
        pause_reason="",
        queue=[Queued(5, "orion-p0", "urgent fix", "2026-12-01T12:00:00+00:00"), Queued(3, None, "later")],
        working=[WORKING],
        failed=[Failed(9, "broke", "the command exited with code 3 (attempt 3)")],
        finished=[Finished(11, "done", NOW - timedelta(hours=1), False),
                  Finished(12, "old", NOW - timedelta(hours=25), True)],
        cost=COST,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_the_body_starts_with_the_marker_and_has_every_section():
    body = render_body(view(), NOW, {})
    assert is_dashboard(body) and body.startswith(MARKER + "\n")
    for heading in ("### Queue (2, in pick order)", "### Working (1)", "### Failed (1)",
                    "### Finished in the last 24 hours (1)"):
        assert heading in body
    assert "| 1 | #5 | urgent fix | orion-p0 |\n| 2 | #3 | later | - |" in body  # pick order kept
    assert ("| #17 | build it | alive | build | runner-1 pid 4242 | 2 | 2026-12-03 11:30 UTC | step 3 of 5 |"
            in body)
    assert "| #11 | done | orion-ready | - | 2026-12-03 11:00 UTC |" in body  # the outcome, not open
    assert "#12" not in body  # finished more than 24 hours ago: left out
    # No operator notes for the dashboard's readers: no cost, no ADR paths.
    assert "### Cost" not in body and "adr" not in body.lower() and "requests" not in body
    assert "**The queue is running**" in body


def test_the_body_holds_nothing_volatile():
    """Heartbeat ages and elapsed times change every pass: the body shows absolute times only,
    so the same fleet a minute later renders the same text."""
    older = replace(WORKING, heartbeat_age_s=3.0)
    a = render_body(view(), NOW, {})
    b = render_body(view(working=[older]), NOW + timedelta(minutes=1), {})
    assert a == b
    assert "heartbeat age" not in a and "42s" not in a and "30m" not in a


def test_the_summary_adds_the_ages():
    text = render_summary(view(), NOW, "o/r")
    assert text.startswith("## orion queue: o/r\n") and MARKER not in text
    assert "| elapsed | heartbeat age |" in text
    assert "| 30m | 42s |" in text
    done = "| [#11](https://github.com/o/r/issues/11) | done | orion-ready | - | 2026-12-03 11:00 UTC | 60m |"
    assert done in text
    # A job summary does not link #N itself; the queue shows how long each issue has existed.
    assert "| 1 | [#5](https://github.com/o/r/issues/5) | urgent fix | orion-p0 | 48h 0m |" in text
    assert "### Cost" in text and "about 60 requests/hour (1% of 5000/h)" in text


def test_paused_shows_the_reason():
    body = render_body(view(paused=True, pause_reason="deploy freeze"), NOW, {})
    assert "**The queue is paused**: deploy freeze." in body


def test_empty_tables_say_so():
    body = render_body(view(queue=[], working=[], failed=[], finished=[]), NOW, {})
    assert "_Nothing is queued (add the orion label to an issue)._" in body
    assert "_No issue is held._" in body and "_No issue has failed._" in body
    assert "_Nothing finished in the last 24 hours._" in body


def test_a_reason_not_read_yet_is_marked():
    body = render_body(view(failed=[Failed(9, "broke", None)]), NOW, {})
    assert "| #9 | broke | _(not read yet)_ |" in body


def test_long_tables_are_cut():
    body = render_body(view(queue=[Queued(n, None) for n in range(1, MAX_ROWS + 6)], working=[]), NOW, {})
    assert f"| {MAX_ROWS} | #{MAX_ROWS} | - |" in body and f"#{MAX_ROWS + 1} |" not in body
    assert "… and 5 more." in body


def test_titles_cannot_ping_break_the_table_or_link():
    hostile = "@everyone | #1 <!-- x --> [a](http://e) `c`\nsecond line"
    body = render_body(view(failed=[Failed(9, hostile, hostile)], working=[]), NOW, {})
    row = next(line for line in body.splitlines() if line.startswith("| #9 |"))
    assert "@everyone" not in row.replace("\\@", "") and row.count(" | ") == 3
    assert not re.search(r"(?<!\\)[<>\[\]`@#]", row.removeprefix("| #9 |")) and "\\#1" in row


def test_the_reason_cache_round_trips_and_cannot_end_the_comment():
    reasons = {9: CachedReason(4, "exit --> <b> & co"), 12: CachedReason(1, "timeout")}
    body = render_body(view(), NOW, reasons)
    assert body.count("-->") == 2  # the marker's and the cache's own end
    assert parse_reasons(body) == reasons


RUN = "https://github.com/o/r/actions/runs/77"
PR = "https://github.com/o/r/pull/12"


@given(st.dictionaries(st.integers(1, 10**6), st.builds(CachedReason, st.integers(0, 10**4),
                                                        st.text(max_size=300), st.sampled_from(["", RUN]),
                                                        st.sampled_from(["", PR]))))
def test_any_cache_round_trips(reasons):
    assert parse_reasons(render_body(view(), NOW, reasons)) == reasons


def test_a_damaged_cache_is_no_cache():
    assert parse_reasons("no cache") == {}
    assert parse_reasons(f"{MARKER}\n<!-- orion-dashboard-reasons\nnot json\n-->\n") == {}
    assert parse_reasons(f'{MARKER}\n<!-- orion-dashboard-reasons\n{{"x": {{"c": 1, "r": "a"}}, '
                         f'"3": {{"c": true, "r": "b"}}, "4": {{"c": 2, "r": "ok"}}}}\n-->\n') == {
        4: CachedReason(2, "ok")}


# -- why an issue failed -------------------------------------------------------------------------

HOLDER = Holder("h", "b", "m", "ns", 1, 0.0)


def claim(cid: int, state: State, **kw: object) -> ClaimEntry:
    rec = ClaimRecord(f"t{cid}", state, HOLDER, "", "", **kw)  # type: ignore[arg-type]
    return ClaimEntry(cid, rec, NOW, NOW)


def tomb(cid: int, token: str, action: ReleaseAction, reason: str, by: str = "reconcile",
         **extra: object) -> TombstoneEntry:
    return TombstoneEntry(cid, Tombstone(token, action, reason, by=by, extra=dict(extra)), NOW)


def test_failed_reason_takes_the_latest_event():
    assert failed_reason(IssueLog()) == "no trusted orion record on the issue says why"
    finished = claim(1, State.FINISHED, exit_code=3, attempt=2)
    assert failed_reason(IssueLog(claims=(finished,))) == "the command exited with code 3 (attempt 2)"
    timed_out = claim(2, State.INTERRUPTED, exit_code=124, attempt=3, note="run.timeout (60s) passed")
    assert failed_reason(IssueLog(claims=(finished, timed_out))) == (
        "the run was interrupted (attempt 3): run.timeout (60s) passed")
    running = claim(3, State.RUNNING)
    gave_up = tomb(4, "t3", ReleaseAction.GIVE_UP, "wrapper pid 9 is gone; attempt 3 of 3 failed")
    assert failed_reason(IssueLog(claims=(running,), tombstones=(gave_up,))) == (
        "released by reconcile: wrapper pid 9 is gone; attempt 3 of 3 failed")
    ended = tomb(5, "t3", ReleaseAction.FINISHED, "", by=HOLDER_END, exit_code=7)
    assert failed_reason(IssueLog(claims=(running,), tombstones=(ended,))) == "the command exited with code 7"


def test_failed_reason_is_capped():
    long = claim(1, State.INTERRUPTED, note="x" * 1000)
    assert len(failed_reason(IssueLog(claims=(long,)))) == 300


def test_each_issue_is_in_one_section_only():
    """A pass surveys the held issues, then requeues a dead one: that issue is queued now, not
    working; a live run stays Working even if its issue was queued again meanwhile."""
    dead = replace(WORKING, issue=5, verdict="dead")
    live = replace(WORKING, issue=3)
    body = render_body(view(working=[dead, live], failed=[Failed(3, "x", "r")],
                            finished=[Finished(5, "done", NOW, True)]), NOW, {})
    queue, working = body.split("### Working")[0], body.split("### Working")[1].split("### Failed")[0]
    assert "| #5 |" in queue and "| #5 |" not in working
    assert "| #3 |" in working and "| #3 |" not in queue
    assert body.count("| #5 |") == 1 and body.count("| #3 |") == 1


def test_the_holder_links_its_actions_run_and_only_a_well_formed_link():
    url = "https://github.com/o/r/actions/runs/77"
    body = render_body(view(working=[replace(WORKING, run_url=url)]), NOW, {})
    assert f"runner-1 pid 4242 ([run]({url}))" in body
    bad = render_body(view(working=[replace(WORKING, run_url="javascript:alert(1)")]), NOW, {})
    assert "javascript" not in bad


# -- links to runs and pull requests ---------------------------------------------------------------


def test_a_pull_request_link_is_taken_only_in_its_one_shape_on_the_same_host():
    assert pull_request_url(f"Opened [the PR]({PR}).", "https://github.com") == PR
    assert pull_request_url(f"see {PR}/files", "https://github.com") == PR
    assert pull_request_url("https://GitHub.com/o/r/pull/3 and more", "https://github.com") == (
        "https://GitHub.com/o/r/pull/3")
    for hostile in ("https://evil.test/o/r/pull/1", "http://github.com/o/r/pull/1",
                    "https://github.com.evil.test/o/r/pull/1", "https://github.com/o/r/pull/1x",
                    "https://github.com/o/r/issues/1", f"https://github.com/{'a' * 40}/r/pull/1",
                    "https://github.com/o/r/pull/12345678901", "javascript:https://github.com/o/r/pull/1x"):
        assert pull_request_url(hostile, "https://github.com") == "", hostile
    assert pull_request_url("https://ghe.corp:8443/o/r/pull/4", "https://ghe.corp:8443") == (
        "https://ghe.corp:8443/o/r/pull/4")


def test_finished_and_failed_rows_link_their_run_and_pull_request():
    body = render_body(view(finished=[Finished(11, "done", NOW, False, RUN, PR)],
                            failed=[Failed(9, "broke", "r", RUN, "")]), NOW, {})
    assert f"| #11 | done | orion-ready | [run]({RUN}) · [pull request]({PR}) |" in body
    assert f"| #9 | broke | r | [run]({RUN}) |" in body
    bad = render_body(view(finished=[Finished(11, "done", NOW, False, "javascript:x", "https://e.test/x")]),
                      NOW, {})
    assert "javascript" not in bad and "e.test" not in bad and "| #11 | done | orion-ready | - |" in bad


def test_a_cached_link_of_the_wrong_shape_is_dropped():
    body = (f'{MARKER}\n<!-- orion-dashboard-reasons\n{{"4": {{"c": 2, "r": "", "u": "{RUN}", "p": "{PR}"}}, '
            f'"5": {{"c": 1, "r": "", "u": "https://e.test/x", "p": "javascript:alert(1)"}}}}\n-->\n')
    assert parse_reasons(body) == {4: CachedReason(2, "", RUN, PR), 5: CachedReason(1, "")}


def test_the_dashboard_links_a_finished_run_and_the_pull_request_its_result_named(tmp_path):
    """End to end on the in-memory GitHub: the real wrapper runs in Actions and writes a result
    naming a pull request (and one on another host, and one in its progress line); the pass
    links the run and the same-host pull request only, and the next pass reads no comment."""
    from test_result import CONFIG as RUN_CONFIG
    from test_result import run_wrapper

    from orion_action.services.dashboard import gather

    script = ("import os, pathlib; pathlib.Path(os.environ['ORION_PROGRESS_FILE']).write_text("
              "'https://github.com/o/r/pull/666');"
              "open(os.environ['ORION_RESULT_FILE'], 'w').write('Mirror: https://evil.test/o/r/pull/5\\n"
              f"Pull request: {PR}\\nSpend: $1.20')")
    s, n, code, _ = run_wrapper(tmp_path, script)
    assert code == 0
    gh = s.client()
    now = s.clock.now
    view_, cache = gather(gh, RUN_CONFIG, [], 0, now, {}, queue=[], server_url="https://github.com")
    run = "https://github.com/orion-bot/work/actions/runs/123"
    updated = view_.finished[0].updated_at
    assert view_.finished == [Finished(n, "Write the @release notes", updated, True, run, PR)]
    assert cache == {n: CachedReason(s.issue(n).comments, "", run, PR)}
    body = render_body(view_, now, cache)
    assert f"[pull request]({PR})" in body and "pull/666" not in body and "evil.test" not in body
    before = gh.requests
    again, _ = gather(gh, RUN_CONFIG, [], 0, now, parse_reasons(body), queue=[], server_url="https://github.com")
    assert again.finished == view_.finished
    assert gh.requests - before == 3  # the pause label, the failed and the finished listings: no comment


def test_links_are_read_and_cached_only_for_the_finished_rows_shown(monkeypatch):
    """The body may hold 65,536 characters: the cache keeps links for the rows the table shows,
    however many issues finished; the count still says how many did."""
    from fakes.memory_github import MemoryServer

    from orion_action.config import Config
    from orion_action.services import dashboard

    monkeypatch.setattr(dashboard, "MAX_ROWS", 2)
    s = MemoryServer()
    done = [s.create_issue(f"done {k}", ["orion-ready"]) for k in range(3)]
    view_, cache = dashboard.gather(s.client(), Config(), [], 0, s.clock.now, {}, queue=[])
    assert [f.issue for f in view_.finished] == done
    assert sorted(cache) == done[:2]
