"""core.ending: the outcome of each way a run ends, which ending is due, and whether a pass
failed an issue only for a run whose record now excuses it (ADR 0019)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

import pytest

from orion_action.config import Config
from orion_action.core.ending import (
    TIME_LIMIT_EXIT_CODE,
    cancelled,
    ending_due,
    failed_for_outage,
    finished,
    handed_back,
    signalled,
    timed_out,
)
from orion_action.core.issue import ClaimEntry, IssueLog, TombstoneEntry
from orion_action.core.record import ClaimRecord, Holder, ReleaseAction, State, Tombstone

CONFIG = Config(max_attempts=3, source="test")
LAB = CONFIG.labels
T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
HOLDER = Holder("runner-1", "boot-1", "machine-1", "ns", 4242, 1.0)


def test_finished_goes_to_ready_or_failed_by_exit_code() -> None:
    assert (finished(CONFIG, 0).state, finished(CONFIG, 0).add, finished(CONFIG, 0).exit_code) == (
        State.FINISHED, LAB.ready, 0)
    assert (finished(CONFIG, 1).add, finished(CONFIG, 1).exit_code) == (LAB.failed, 1)
    assert finished(CONFIG, 0).counts_attempt and finished(CONFIG, 0).also_remove == ()


@pytest.mark.parametrize(
    ("attempt", "counts", "add", "note"),
    [
        (2, True, "orion", "why; back to the queue"),
        (3, True, "orion-failed", "why; attempt 3 of 3, retry budget spent"),
        (4, True, "orion-failed", "why; attempt 4 of 3, retry budget spent"),
        (3, False, "orion", "why; back to the queue"),  # an attempt that does not count spends nothing
    ],
)
def test_handed_back_requeues_until_the_budget_is_spent(
    attempt: int, counts: bool, add: str, note: str
) -> None:
    out = handed_back(CONFIG, attempt, "why", code=9, counts=counts)
    assert (out.state, out.add, out.note, out.exit_code, out.counts_attempt) == (
        State.INTERRUPTED, add, note, 9, counts)
    assert out.also_remove == ()


def test_timed_out_is_a_failed_attempt_with_timeouts_exit_code() -> None:
    out = timed_out(CONFIG, 1, "ran past run.timeout")
    assert (out.state, out.exit_code, out.add, out.counts_attempt) == (
        State.INTERRUPTED, TIME_LIMIT_EXIT_CODE, LAB.queue, True)
    assert TIME_LIMIT_EXIT_CODE == 124
    assert timed_out(CONFIG, 3, "x").add == LAB.failed


def test_cancelled_takes_queue_and_cancel_off_and_spends_nothing() -> None:
    out = cancelled(CONFIG, "alice")
    assert (out.state, out.add, out.also_remove, out.counts_attempt) == (
        State.CANCELLED, None, (LAB.queue, LAB.cancel), False)
    assert out.note == "cancelled by alice (the orion-cancel label); add orion to run it again"
    assert cancelled(CONFIG, None).note == "cancelled (the orion-cancel label); add orion to run it again"


def test_a_signal_cancels_by_default_and_leaves_the_queue_label() -> None:
    out = signalled(CONFIG, 1, "SIGTERM", started=True)
    assert (out.state, out.add, out.also_remove, out.counts_attempt) == (
        State.CANCELLED, None, (LAB.cancel,), False)
    assert out.note == (
        "cancelled: the Actions job was cancelled (stopped by SIGTERM); add orion to run it again"
    )


@pytest.mark.parametrize("started", [True, False])
def test_a_signal_with_on_signal_requeue_hands_back(started: bool) -> None:
    out = signalled(replace(CONFIG, on_signal="requeue"), 3, "SIGINT", started=started)
    assert (out.state, out.counts_attempt) == (State.INTERRUPTED, started)
    assert out.add == (LAB.failed if started else LAB.queue)  # only a started run spends its last attempt
    assert out.note is not None and out.note.startswith("stopped by SIGINT")


@dataclass
class Held:
    config: Config = field(default_factory=lambda: replace(CONFIG, timeout=60.0, idle_timeout=30.0))
    lost: str | None = None
    cancel_requested: bool = False
    left: float = 10.0

    def lease_left(self) -> float:
        return self.left


@pytest.mark.parametrize(
    ("held", "child", "signum", "fatal", "ran", "idle", "due"),
    [
        (Held(), None, None, None, None, None, None),
        (Held(), None, None, None, 59.9, 29.9, None),
        (Held(lost="x", cancel_requested=True, left=0), 0, 15, "bad token", 99, 99, "exited"),
        (Held(lost="x", cancel_requested=True, left=0), None, 15, "bad token", 99, 99, "signal"),
        (Held(lost="x", cancel_requested=True, left=0), None, None, "bad token", 99, 99, "fatal"),
        (Held(lost="x", cancel_requested=True, left=0), None, None, None, 99, 99, "lost"),
        (Held(cancel_requested=True, left=0), None, None, None, 99, 99, "cancel"),
        (Held(left=0), None, None, None, 99, 99, "lease"),
        (Held(left=-1), None, None, None, None, None, "lease"),
        (Held(), None, None, None, 60.0, 99, "timeout"),
        (Held(), None, None, None, 1.0, 30.0, "idle"),
        (Held(config=CONFIG), None, None, None, 1e6, 1e6, None),  # no limits set: never
        (Held(left=0.5), None, None, None, None, None, None),  # any lease left: not yet
        (Held(config=replace(CONFIG, timeout=1.0)), None, None, None, 1.0, None, "timeout"),
        (Held(config=replace(CONFIG, idle_timeout=1.0)), None, None, None, None, 1.0, "idle"),
    ],
)
def test_ending_due_in_the_supervisors_order(held: Held, child: int | None, signum: int | None,
                                             fatal: str | None, ran: float | None, idle: float | None,
                                             due: str | None) -> None:
    assert ending_due(held, child, signum, fatal, ran, idle) == due


def _claim(cid: int, token: str, state: State = State.RUNNING, counts: bool = True) -> ClaimEntry:
    record = ClaimRecord(token=token, state=state, holder=HOLDER, started_at="s", heartbeat_at="h",
                         child_pid=4243, counts_attempt=counts)
    return ClaimEntry(cid, record, T0, T0)


def _give_up(cid: int, token: str, action: ReleaseAction = ReleaseAction.GIVE_UP) -> TombstoneEntry:
    return TombstoneEntry(cid, Tombstone(token, action, "dead", True), T0)


OURS = _claim(5, "ours").record.with_changes(state=State.INTERRUPTED, counts_attempt=False)
FAILED = frozenset({LAB.failed, "bug"})


def _history(*extra: ClaimEntry | TombstoneEntry) -> IssueLog:
    entries = [_claim(1, "a"), _give_up(2, "a"), _claim(3, "b"), _give_up(4, "b"), _claim(5, "ours"),
               _give_up(6, "ours"), *extra]
    return IssueLog(tuple(e for e in entries if isinstance(e, ClaimEntry)),
                    tuple(e for e in entries if isinstance(e, TombstoneEntry)))


def test_a_give_up_only_our_excused_run_caused_is_undone() -> None:
    assert failed_for_outage(True, FAILED, _history(), OURS, CONFIG)


@pytest.mark.parametrize(
    ("why", "is_open", "on_issue", "log", "record"),
    [
        ("closed", False, FAILED, _history(), OURS),
        ("not failed", True, frozenset({"bug"}), _history(), OURS),
        ("queued again", True, FAILED | {LAB.queue}, _history(), OURS),
        ("locked again", True, FAILED | {LAB.working}, _history(), OURS),
        ("ready", True, FAILED | {LAB.ready}, _history(), OURS),
        ("cancelled", True, FAILED | {LAB.cancel}, _history(), OURS),
        ("something happened after the give-up", True, FAILED, _history(_claim(7, "c", State.LOST)), OURS),
        ("our record still counts the attempt", True, FAILED, _history(),
         OURS.with_changes(counts_attempt=True)),
        ("released twice", True, FAILED, _history(_give_up(7, "ours")), OURS),
    ],
)
def test_failed_for_outage_only_then(why: str, is_open: bool, on_issue: frozenset[str], log: IssueLog,
                                     record: ClaimRecord) -> None:
    assert not failed_for_outage(is_open, on_issue, log, record, CONFIG), why


def test_a_requeue_release_is_not_a_give_up_to_undo() -> None:
    entries = _history()
    requeue = _give_up(6, "ours", ReleaseAction.REQUEUE)
    requeued = replace(entries, tombstones=(*entries.tombstones[:-1], requeue))
    assert not failed_for_outage(True, FAILED, requeued, OURS, CONFIG)


def test_a_budget_spent_without_our_run_stays_failed() -> None:
    assert not failed_for_outage(True, FAILED, _history(), OURS, replace(CONFIG, max_attempts=2))
