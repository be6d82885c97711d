"""core.record: the line a person reads under a claim's hidden block, for every state (the
authority is the hidden block; this line must not mislead), the progress line as shown, and
the defaults a record or tombstone takes when a field is left out."""

from __future__ import annotations

import json

import pytest

from orion_action.config import MAX_DURATION
from orion_action.core.record import (
    END_STATES,
    HOLDER_END,
    PROGRESS_MAX_CHARS,
    ActionsRun,
    ClaimRecord,
    Holder,
    ReleaseAction,
    State,
    Tombstone,
    block_kind,
    clean_progress,
    parse_block,
    render_record,
    render_tombstone,
    result_section,
    visible_line,
)

HOLDER = Holder("runner-1", "b", "m", "ns", 4242, 1.0)
BASE = ClaimRecord("tok", State.RUNNING, HOLDER, "2026-03-01T10:00:00+00:00",
                   "2026-03-01T10:05:00+00:00", finished_at="2026-03-01T11:00:00+00:00", child_pid=4243,
                   stage="build", note="why")
WHERE = "runner runner-1, pid 4242"
SPAN = "ran from 2026-03-01 10:00:00 UTC to 2026-03-01 11:00:00 UTC"


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"state": State.FINISHED, "exit_code": 3},
         f"**orion finished** with exit code 3 — {WHERE}, stage build; {SPAN}."),
        ({"state": State.INTERRUPTED}, f"**orion was interrupted** — {WHERE}, stage build; {SPAN}. why"),
        ({"state": State.INTERRUPTED, "note": None},
         f"**orion was interrupted** — {WHERE}, stage build; {SPAN}."),
        ({"state": State.CANCELLED}, f"**orion run cancelled** — {WHERE}, stage build; {SPAN}. why"),
        ({"state": State.LOST}, f"**orion stopped here** — {WHERE}, stage build: why."),
        ({"state": State.LOST, "note": None},
         f"**orion stopped here** — {WHERE}, stage build: the claim was lost."),
        ({"state": State.LOST, "child_pid": None}, f"**orion did not run here** — {WHERE}: why."),
        ({"state": State.LOST, "child_pid": None, "note": None},
         f"**orion did not run here** — {WHERE}: another claim won."),
        ({"released": "the holder died"},
         f"**orion no longer holds this issue** — {WHERE}, stage build; released: the holder died."),
    ],
)
def test_the_line_for_each_state(changes: dict, line: str) -> None:
    assert visible_line(BASE.with_changes(**changes)) == line


def test_a_release_named_by_the_caller_overrides_the_record() -> None:
    line = visible_line(BASE.with_changes(state=State.FINISHED, exit_code=0), released="by hand")
    assert line.startswith("**orion no longer holds this issue**") and "released: by hand." in line


def test_a_running_and_a_claiming_line() -> None:
    running = visible_line(BASE.with_changes(progress="step 2", beats=7, attempt=2))
    assert running.startswith(
        f"**orion is working on this issue** — {WHERE}, stage build, attempt 2, "
        "since 2026-03-01 10:00:00 UTC; last heartbeat 2026-03-01 10:05:00 UTC (beat 7, every 120s).")
    assert " Progress: step 2 Do not remove" in running
    claiming = visible_line(BASE.with_changes(state=State.CLAIMING))
    assert claiming.startswith("**orion is claiming this issue**")
    assert "?" in visible_line(BASE.with_changes(started_at=""))  # no time: a question mark
    assert "since not-a-time;" in visible_line(BASE.with_changes(started_at="not-a-time"))


@pytest.mark.parametrize(
    ("actions", "shown"),
    [
        (ActionsRun(77, runner_name="r1"), ", Actions runner r1 (run 77)"),
        (ActionsRun(77, url="https://github.com/o/r/actions/runs/77"),
         ", Actions ([run 77](https://github.com/o/r/actions/runs/77))"),
        (ActionsRun(77), ""),  # neither a name nor a link: nothing to show
    ],
)
def test_the_actions_run_is_shown_when_known(actions: ActionsRun, shown: str) -> None:
    line = visible_line(BASE.with_changes(actions=actions))
    assert line.split(" — ", 1)[1].split(", stage")[0] == WHERE + shown


def test_progress_is_one_printable_line_of_at_most_200_characters() -> None:
    assert PROGRESS_MAX_CHARS == 200
    assert clean_progress("first\n second \x07") == " second "  # the last line, control characters out
    assert clean_progress("x" * 300) == "x" * 200
    assert clean_progress("  \n ") is None
    assert clean_progress("\x07\x08") is None


def test_defaults_of_a_record_and_a_tombstone() -> None:
    r = ClaimRecord("t", State.RUNNING, HOLDER, "s", "h")
    assert (r.beats, r.interval, r.stale_after, r.attempt, r.child_pid) == (0, 120.0, 600.0, 1, None)
    assert ActionsRun(5).run_attempt == 1
    t = Tombstone("t", ReleaseAction.REQUEUE, "r")
    assert (t.counts_attempt, t.by, t.extra) == (False, "reconcile", {})


def test_each_end_marker_stands_for_its_own_state() -> None:
    assert END_STATES == {
        ReleaseAction.FINISHED: State.FINISHED,
        ReleaseAction.INTERRUPTED: State.INTERRUPTED,
        ReleaseAction.CANCELLED: State.CANCELLED,
    }


def test_the_visible_text_of_a_release_and_of_a_holders_end_marker() -> None:
    released = render_tombstone(Tombstone("t1", ReleaseAction.REQUEUE, "dead *holder*"), "runner-1, pid 9")
    assert released.splitlines()[-1] == (
        "**orion released claim `t1`** (runner-1, pid 9): dead \\*holder\\*; "
        "the issue was returned to the queue.")
    bare = render_tombstone(Tombstone("t1", ReleaseAction.GIVE_UP, "spent"))
    assert "**orion released claim `t1`**: spent; the retry budget is spent" in bare
    ended = render_tombstone(Tombstone("t1", ReleaseAction.CANCELLED, "by alice", by=HOLDER_END), "ignored")
    assert ended.splitlines()[-1] == "**orion run ended** (claim `t1`): the run was cancelled; by alice."
    assert '"action":"cancelled"' in ended


def test_a_final_record_shows_its_result_and_a_released_one_says_so() -> None:
    assert result_section(None) == result_section("") == ""
    done = BASE.with_changes(state=State.FINISHED, exit_code=0)
    assert render_record(done, result="all *good*").endswith("\n### Result\n\nall *good*\n")
    assert render_record(done).endswith(".\n")
    released = render_record(done, released="by hand")
    assert '"released":"by hand"' in released and "released: by hand." in released


def test_a_header_must_be_the_first_line_and_short() -> None:
    body = render_record(BASE)
    assert block_kind(body) == "orion-claim"
    assert block_kind(" " + body) is None and block_kind("x\n" + body) is None
    assert block_kind("<!-- orion-claim v1") is None  # no line after it: no block
    assert block_kind("<!-- orion-claim v1" + " " * 200 + "\n{}") is None  # a header line is short


def _block(data: dict) -> str:
    return "<!-- orion-claim v1\n" + json.dumps(data) + "\n-->\n"


def test_a_record_without_its_optional_fields_reads_with_their_defaults() -> None:
    data = json.loads(render_record(BASE).split("\n")[1])
    optional = ("note", "progress", "released", "counts_attempt", "actions", "exit_code", "finished_at",
                "stage")
    for key in optional:
        data.pop(key, None)
    record = parse_block(_block(data))
    assert isinstance(record, ClaimRecord)
    assert (record.note, record.progress, record.released, record.counts_attempt, record.actions) == (
        None, None, None, True, None)


def test_a_record_promising_exactly_a_week_is_readable() -> None:
    data = json.loads(render_record(BASE).split("\n")[1])
    data["stale_after"] = MAX_DURATION
    record = parse_block(_block(data))
    assert isinstance(record, ClaimRecord) and record.stale_after == MAX_DURATION
