"""core.plan.plan_issue: one row per case of docs/design.md section 6, plus properties."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orion_action.config import Labels
from orion_action.core.issue import ClaimEntry, IssueLog, TombstoneEntry, Unreadable, UntrustedRelease
from orion_action.core.liveness import Liveness, Verdict
from orion_action.core.plan import Action, Plan, plan_issue
from orion_action.core.record import CLAIM_MARK, ClaimRecord, Holder, ReleaseAction, State, Tombstone

LABELS = Labels()
T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
HOLDER = Holder("runner-1", "boot-1", "machine-1", "ns", 4242, 1.0)
LOCK = frozenset({"orion-working"})
STAGED = frozenset({"orion-working", "orion-stage-build", "orion-stage-qa", "bug"})

ALIVE = Verdict(Liveness.ALIVE, "wrapper pid 4242 is running on this machine")
DEAD = Verdict(Liveness.DEAD, "wrapper pid 4242 is not running on this machine")
UNKNOWN = Verdict(Liveness.UNKNOWN, "its child's process group is still running")


def claim(cid: int, token: str, state: State = State.RUNNING, exit_code: int | None = None,
          updated: int | None = None, child_pid: int | None = -1) -> ClaimEntry:
    """Claim record in comment `cid`, created at T0+cid s and last updated at T0+updated s. A
    claim in a state that ran has a child pid unless given None."""
    if child_pid == -1:
        child_pid = 4243 if state not in (State.CLAIMING, State.LOST) else None
    record = ClaimRecord(token=token, state=state, holder=HOLDER, started_at="s", heartbeat_at="h",
                         exit_code=exit_code, child_pid=child_pid)
    return ClaimEntry(cid, record, T0 + timedelta(seconds=cid),
                      T0 + timedelta(seconds=cid if updated is None else updated))


def tomb(cid: int, token: str, action: ReleaseAction = ReleaseAction.REQUEUE,
         counts: bool = True, reason: str = "the holder died") -> TombstoneEntry:
    return TombstoneEntry(cid, Tombstone(token, action, reason, counts_attempt=counts),
                          T0 + timedelta(seconds=cid))


def log(*entries: ClaimEntry | TombstoneEntry, untrusted: tuple[int, ...] = (),
        unreadable: tuple[tuple[int, str], ...] = ()) -> IssueLog:
    return IssueLog(tuple(e for e in entries if isinstance(e, ClaimEntry)),
                    tuple(e for e in entries if isinstance(e, TombstoneEntry)), untrusted,
                    tuple(Unreadable(cid, CLAIM_MARK, why) for cid, why in unreadable))


@dataclass(frozen=True)
class Row:
    id: str
    log: IssueLog
    verdicts: dict[str, Verdict]
    action: Action
    says: str  # substring of the reason
    is_open: bool = True
    on_issue: frozenset[str] = LOCK
    max_attempts: int = 3
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ("orion-working",)
    release: tuple[str, ...] = ()  # tokens to tombstone
    counts: bool = False
    holder: str | None = None  # token of the claim the plan is about
    notes: tuple[str, ...] = field(default_factory=tuple)


ROWS = [
    # unlock
    Row("closed, dead holder: unlock", log(claim(1, "a")), {"a": DEAD}, Action.UNLOCK,
        "the issue is closed", is_open=False, release=("a",), holder="a"),
    Row("closed, live holder: unlock all the same", log(claim(1, "a")), {"a": ALIVE}, Action.UNLOCK,
        "closed", is_open=False, release=("a",), holder="a"),
    Row("closed, no record: unlock, nothing to tombstone", log(), {}, Action.UNLOCK, "closed",
        is_open=False),
    Row("closed, finished record: unlock, its stage labels too", log(claim(1, "a", State.FINISHED, 0)),
        {}, Action.UNLOCK, "closed", is_open=False, on_issue=STAGED,
        remove=("orion-working", "orion-stage-build", "orion-stage-qa"), holder="a"),
    # complete
    Row("finished 0, lock still on: complete -> ready", log(claim(1, "a", State.FINISHED, 0)), {},
        Action.COMPLETE, "finished with exit code 0 but the lock never moved",
        add=("orion-ready",), holder="a"),
    Row("finished 2, lock still on: complete -> failed", log(claim(1, "a", State.FINISHED, 2)), {},
        Action.COMPLETE, "exit code 2", add=("orion-failed",), holder="a"),
    Row("finished 137 (killed child): complete -> failed", log(claim(1, "a", State.FINISHED, 137)), {},
        Action.COMPLETE, "exit code 137", add=("orion-failed",), on_issue=STAGED,
        remove=("orion-working", "orion-stage-build", "orion-stage-qa"), holder="a"),
    Row("finished after an earlier tombstone: complete", log(claim(1, "a"), tomb(2, "a"),
                                                              claim(3, "b", State.FINISHED, 0)),
        {}, Action.COMPLETE, "exit code 0", add=("orion-ready",), holder="b"),
    # requeue / give_up
    Row("dead, budget left: requeue", log(claim(1, "a")), {"a": DEAD}, Action.REQUEUE,
        "not running on this machine; attempt 1 of 3", add=("orion",), release=("a",), counts=True,
        holder="a"),
    Row("dead, second attempt: requeue", log(claim(1, "a"), tomb(2, "a"), claim(3, "b")), {"b": DEAD},
        Action.REQUEUE, "attempt 2 of 3", add=("orion",), release=("b",), counts=True, holder="b"),
    Row("dead at the budget: give_up", log(claim(1, "a"), tomb(2, "a"), claim(3, "b"), tomb(4, "b"),
                                            claim(5, "c")),
        {"c": DEAD}, Action.GIVE_UP, "attempt 3 of 3 failed, retry budget spent",
        add=("orion-failed",), release=("c",), counts=True, holder="c"),
    Row("max_attempts 1: the first death gives up", log(claim(1, "a")), {"a": DEAD}, Action.GIVE_UP,
        "attempt 1 of 1 failed", max_attempts=1, add=("orion-failed",), release=("a",),
        counts=True, holder="a"),
    Row("a forced hand release does not count", log(claim(1, "a"), tomb(2, "a", ReleaseAction.RELEASE,
                                                                        counts=False), claim(3, "b")),
        {"b": DEAD}, Action.REQUEUE, "attempt 1 of 2", max_attempts=2, add=("orion",),
        release=("b",), counts=True, holder="b"),
    Row("attempts reset after a finished run", log(claim(1, "a"), tomb(2, "a"), claim(3, "b"),
                                                    tomb(4, "b"), claim(5, "c", State.FINISHED, 1),
                                                    claim(6, "d")),
        {"d": DEAD}, Action.REQUEUE, "attempt 1 of 3", add=("orion",), release=("d",), counts=True,
        holder="d"),
    Row("dead with stage labels: they all go", log(claim(1, "a")), {"a": DEAD}, Action.REQUEUE,
        "attempt 1", on_issue=STAGED, add=("orion",),
        remove=("orion-working", "orion-stage-build", "orion-stage-qa"), release=("a",), counts=True,
        holder="a"),
    Row("two dead open claims: both tombstoned, the newer run counts", log(claim(1, "a"), claim(2, "b")),
        {"a": DEAD, "b": DEAD}, Action.REQUEUE, "attempt 1", add=("orion",), release=("b", "a"),
        counts=True, holder="b"),
    Row("a dead claim that never ran: released, no attempt", log(claim(1, "a", State.CLAIMING)),
        {"a": DEAD}, Action.REQUEUE, "never started its command (no attempt spent)", add=("orion",),
        release=("a",), holder="a"),
    # Defect 5 of the v0.1 audit: a released holder's late final write must not hide the next
    # run's dead claim (ordering by comment id, never by update time).
    Row("a late interrupted record of a released run does not hide the next dead run",
        log(claim(1, "a", State.INTERRUPTED, updated=500), tomb(2, "a"), claim(3, "b")), {"b": DEAD},
        Action.REQUEUE, "attempt 2 of 3", add=("orion",), release=("b",), counts=True, holder="b"),
    Row("a late finished record of a released run does not hide the next dead run",
        log(claim(1, "a", State.FINISHED, 0, updated=500), tomb(2, "a"), claim(3, "b")), {"b": DEAD},
        Action.REQUEUE, "attempt 2 of 3", add=("orion",), release=("b",), counts=True, holder="b"),
    Row("an unreadable claim and no live one: report, never release",
        log(claim(1, "a", State.FINISHED, 0), unreadable=((3, "version 2"),)), {}, Action.REPORT,
        "cannot read", remove=(), notes=("comment 3 is unreadable: version 2",)),
    # keep / report
    Row("alive: keep", log(claim(1, "a")), {"a": ALIVE}, Action.KEEP, "is running on this machine",
        remove=(), holder="a"),
    Row("alive after a dead lower claim: keep", log(claim(1, "a"), claim(2, "b")),
        {"a": DEAD, "b": ALIVE}, Action.KEEP, "is running", remove=(), holder="b"),
    Row("unknown: report", log(claim(1, "a")), {"a": UNKNOWN}, Action.REPORT, "still running",
        remove=(), holder="a"),
    Row("unknown beside a dead claim: report, no release", log(claim(1, "a"), claim(2, "b")),
        {"a": DEAD, "b": UNKNOWN}, Action.REPORT, "still running", remove=(), holder="b"),
    Row("alive beats unknown: keep", log(claim(1, "a"), claim(2, "b")),
        {"a": UNKNOWN, "b": ALIVE}, Action.KEEP, "is running", remove=(), holder="b"),
    Row("no record: report", log(), {}, Action.REPORT,
        "the lock label is on but there is no trusted claim record", remove=()),
    Row("only a lost record (gave up before running): back to the queue",
        log(claim(1, "a", State.LOST)), {}, Action.REQUEUE, "the last claim gave up before it ran",
        add=("orion",), holder="a"),
    Row("a lost record older than a tombstone: finish that release",
        log(claim(1, "a"), claim(2, "b", State.LOST), tomb(3, "a")), {}, Action.REQUEUE,
        "finishing an earlier release", add=("orion",), holder="a"),
    Row("untrusted copies are noted, never believed", log(untrusted=(5, 6)), {}, Action.REPORT,
        "no trusted claim record", remove=(),
        notes=("ignored 2 orion-looking comment(s) by untrusted authors",)),
    Row("an outsider's release is noted, never advised into trusted_authors",
        replace(log(claim(1, "a")), untrusted=(8,),
                untrusted_releases=(UntrustedRelease(8, "mallory", "a"),)),
        {"a": ALIVE}, Action.KEEP, "running", remove=(), holder="a",
        notes=("ignored 1 orion-looking comment(s) by untrusted authors",
               "ignored comment 8 by mallory: a release of claim a by an author who is not trusted")),
    Row("unreadable records are noted", log(claim(1, "a"), unreadable=((7, "invalid JSON"),)),
        {"a": ALIVE}, Action.KEEP, "running", remove=(), holder="a",
        notes=("comment 7 is unreadable: invalid JSON",)),
    Row("a winner that died before its command started: requeue, no attempt",
        log(claim(1, "a", State.FINISHED, 0), claim(2, "b", child_pid=None)), {"b": DEAD},
        Action.REQUEUE, "died before its command started (no attempt spent)", add=("orion",),
        release=("b",), holder="b"),
    # Defect 11 of the v0.1 audit: a late beat turned the final record back into "running"; the
    # holder's end marker (appended) says how the run ended.
    Row("a holder's end marker beats a record a late beat reopened: complete",
        log(claim(1, "a"), TombstoneEntry(2, Tombstone("a", ReleaseAction.FINISHED, "exit code 0", False,
                                                       "holder", {"exit_code": 0}), T0)),
        {}, Action.COMPLETE, "exit code 0", add=("orion-ready",), holder="a"),
    Row("a holder's hand-back marker: requeue, its attempt counted",
        log(claim(1, "a"), TombstoneEntry(2, Tombstone("a", ReleaseAction.INTERRUPTED, "stopped by SIGTERM",
                                                       True, "holder", {}), T0)),
        {}, Action.REQUEUE, "interrupted", add=("orion",), holder="a"),
    # the queue label is removed only by a claim that won (defect 7 of the v0.1 audit)
    Row("queue label beside a dead claim that never ran: keep it, take the lock off",
        log(claim(1, "a", State.FINISHED, 0), claim(2, "b", State.CLAIMING)), {"b": DEAD},
        Action.REQUEUE, "the issue is queued", on_issue=frozenset({"orion", "orion-working"}),
        release=("b",), holder="b"),
    Row("queue label (a person's requeue) beside a lost claim: keep it, take the lock off",
        log(claim(1, "a", State.FINISHED, 1), claim(2, "b", State.LOST)), {}, Action.REQUEUE,
        "the issue is queued", on_issue=frozenset({"orion", "orion-working"}), holder=None),
    Row("queue label beside a dead run: requeue, the attempt spent",
        log(claim(1, "a")), {"a": DEAD}, Action.REQUEUE, "attempt 1 of 3",
        on_issue=frozenset({"orion", "orion-working"}), add=("orion",), release=("a",), counts=True,
        holder="a"),
    # interrupted hand-back
    Row("interrupted, hand-back did not finish: requeue without a tombstone",
        log(claim(1, "a", State.INTERRUPTED)), {}, Action.REQUEUE,
        "the run was interrupted and its hand-back did not finish", add=("orion",), holder="a"),
    # an earlier tombstone's label move
    Row("earlier requeue tombstone, labels never moved: finish the requeue", log(claim(1, "a"), tomb(2, "a")),
        {}, Action.REQUEUE, "finishing an earlier release whose label move did not happen: the holder died",
        add=("orion",), holder="a"),
    Row("earlier give_up tombstone, labels never moved: finish the give_up",
        log(claim(1, "a"), tomb(2, "a", ReleaseAction.GIVE_UP)), {}, Action.GIVE_UP,
        "finishing an earlier release", add=("orion-failed",), holder="a"),
    Row("earlier hand release, labels never moved: requeue",
        log(claim(1, "a"), tomb(2, "a", ReleaseAction.RELEASE)), {}, Action.REQUEUE,
        "finishing an earlier release", add=("orion",), holder="a"),
    Row("tombstone after a finished record wins", log(claim(1, "a", State.FINISHED, 0), claim(2, "b"),
                                                       tomb(3, "b")),
        {}, Action.REQUEUE, "finishing an earlier release", add=("orion",), holder="b"),
    # a crashed loser before a finished record
    Row("dead claim posted before the last run finished is a crashed loser: complete",
        log(claim(1, "a", State.FINISHED, 0, updated=50), claim(2, "b", State.CLAIMING)), {"b": DEAD},
        Action.COMPLETE, "exit code 0", add=("orion-ready",), release=("b",), holder="a"),
    Row("dead claim posted after the last run finished: requeue",
        log(claim(1, "a", State.FINISHED, 0, updated=50), claim(60, "b")), {"b": DEAD},
        Action.REQUEUE, "attempt 1 of 3", add=("orion",), release=("b",), counts=True, holder="b"),
    # ADR 0076: the ending's one request ran its outcome label's addition and not its record
    # edit, and the holder died; the record (running) is the word: the label it never confirmed goes
    Row("outcome label beside the lock, record running, holder dead: requeue, the label goes",
        log(claim(1, "a")), {"a": DEAD}, Action.REQUEUE, "attempt 1 of 3",
        on_issue=frozenset({"orion-working", "orion-ready"}), add=("orion",),
        remove=("orion-working", "orion-ready"), release=("a",), counts=True, holder="a"),
    Row("outcome label beside the lock, record running, budget spent: give up, ready goes",
        log(claim(1, "a")), {"a": DEAD}, Action.GIVE_UP, "attempt 1 of 1 failed", max_attempts=1,
        on_issue=frozenset({"orion-working", "orion-ready"}), add=("orion-failed",),
        remove=("orion-working", "orion-ready"), release=("a",), counts=True, holder="a"),
    Row("failed beside the lock, record running, holder dead: requeue, failed goes",
        log(claim(1, "a")), {"a": DEAD}, Action.REQUEUE, "attempt 1 of 3",
        on_issue=frozenset({"orion-working", "orion-failed"}), add=("orion",),
        remove=("orion-working", "orion-failed"), release=("a",), counts=True, holder="a"),
    Row("outcome label beside the lock, holder alive: kept, nothing moves",
        log(claim(1, "a")), {"a": ALIVE}, Action.KEEP, "running",
        on_issue=frozenset({"orion-working", "orion-ready"}), remove=(), holder="a"),
    Row("its own outcome label beside the lock, record finished: complete, the label stays",
        log(claim(1, "a", State.FINISHED, 0)), {}, Action.COMPLETE, "exit code 0",
        on_issue=frozenset({"orion-working", "orion-ready"}), add=("orion-ready",), holder="a"),
    Row("crashed loser before an interrupted record: finish the hand-back",
        log(claim(1, "a", State.INTERRUPTED, updated=50), claim(2, "b", State.CLAIMING)), {"b": DEAD},
        Action.REQUEUE, "hand-back did not finish", add=("orion",), release=("b",), holder="a"),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_plan_table(row: Row) -> None:
    plan = plan_issue(7, row.is_open, row.on_issue, row.log, row.verdicts, LABELS, row.max_attempts)
    assert plan.issue == 7
    assert plan.action is row.action, plan
    assert row.says in plan.reason, plan.reason
    assert plan.add_labels == row.add
    assert tuple(sorted(plan.remove_labels)) == tuple(sorted(row.remove))
    assert tuple(e.record.token for e in plan.release) == row.release
    assert plan.counts_attempt is row.counts
    assert (plan.holder.record.token if plan.holder else None) == row.holder
    assert plan.notes == row.notes
    assert plan.writes is (row.action not in (Action.KEEP, Action.REPORT))
    if plan.action in (Action.KEEP, Action.REPORT):
        assert not plan.add_labels and not plan.remove_labels and not plan.release
    assert set(plan.remove_labels) <= row.on_issue  # never removes what is not there
    assert "bug" not in plan.remove_labels  # a person's label is never touched


def test_tombstone_action_follows_the_plan() -> None:
    base = Plan(1, Action.REQUEUE, "r")
    assert base.tombstone_action is ReleaseAction.REQUEUE
    assert Plan(1, Action.UNLOCK, "r").tombstone_action is ReleaseAction.UNLOCK
    assert Plan(1, Action.GIVE_UP, "r").tombstone_action is ReleaseAction.GIVE_UP


def test_custom_label_names_are_used() -> None:
    labels = Labels(queue="todo", working="busy", ready="done", failed="broken", stage_prefix="at-")
    plan = plan_issue(1, True, frozenset({"busy", "at-x", "orion-working"}), log(claim(1, "a")),
                      {"a": DEAD}, labels, 3)
    assert plan.add_labels == ("todo",) and set(plan.remove_labels) == {"busy", "at-x"}
    plan = plan_issue(1, True, frozenset({"busy"}), log(claim(1, "a", State.FINISHED, 0)), {}, labels, 3)
    assert plan.add_labels == ("done",)


# -- properties ----------------------------------------------------------------------------------

verdicts_st = st.sampled_from([ALIVE, DEAD, UNKNOWN])
states = st.sampled_from(list(State))


@st.composite
def histories(draw):
    """A random, well-formed issue history: claims and tombstones in comment order."""
    entries: list[ClaimEntry | TombstoneEntry] = []
    tokens: list[str] = []
    for cid in range(1, draw(st.integers(0, 8)) + 1):
        if tokens and draw(st.booleans()):
            entries.append(tomb(cid, draw(st.sampled_from(tokens)),
                                draw(st.sampled_from(list(ReleaseAction))), draw(st.booleans())))
        else:
            token = f"t{cid}"
            tokens.append(token)
            state = draw(states)
            code = draw(st.integers(0, 3)) if state is State.FINISHED else None
            entries.append(claim(cid, token, state, code, updated=cid + draw(st.integers(0, 20))))
    history = log(*entries, untrusted=tuple(draw(st.lists(st.integers(100, 200), max_size=2))))
    verdicts = {c.record.token: draw(verdicts_st) for c in history.open_claims()}
    return history, verdicts


@settings(max_examples=400, deadline=None)
@given(histories(), st.booleans(), st.integers(1, 5), st.sets(st.sampled_from(
    ["orion-working", "orion-stage-a", "orion", "bug", "orion-ready", "orion-failed"])))
def test_plan_properties(history, is_open, max_attempts, extra) -> None:
    h, verdicts = history
    on_issue = frozenset(extra | {"orion-working"})
    plan = plan_issue(3, is_open, on_issue, h, verdicts, LABELS, max_attempts)
    open_verdicts = [verdicts[c.record.token].liveness for c in h.open_claims()]
    # A holder that is alive or uncertain is never released while the issue is open.
    if is_open and (Liveness.ALIVE in open_verdicts or Liveness.UNKNOWN in open_verdicts):
        assert plan.action in (Action.KEEP, Action.REPORT)
    # Only open, dead claims are tombstoned on an open issue; closed issues release every open one.
    released = {e.record.token for e in plan.release}
    if is_open:
        assert all(verdicts[t].liveness is Liveness.DEAD for t in released)
    else:
        assert plan.action is Action.UNLOCK and released == {c.record.token for c in h.open_claims()}
    # Labels: only the lock and stage labels go, and an outcome label other than the target (ADR
    # 0076); at most one target is added, and no outcome label but the target is left.
    cancelled = plan.holder is not None and plan.holder.record.state is State.CANCELLED
    movable = {"orion-working", "orion-stage-a"} | ({"orion", "orion-cancel"} if cancelled else set())
    if plan.action is not Action.UNLOCK:
        movable |= {"orion-ready", "orion-failed"} - set(plan.add_labels)
    assert set(plan.remove_labels) <= movable & on_issue
    assert len(plan.add_labels) <= 1
    if plan.writes and plan.action is not Action.UNLOCK:
        after = (on_issue - set(plan.remove_labels)) | set(plan.add_labels)
        assert after & {"orion-ready", "orion-failed"} <= set(plan.add_labels), after
    if plan.writes and plan.action is not Action.UNLOCK:
        assert "orion-working" in plan.remove_labels and (plan.add_labels or cancelled or "orion" in on_issue)
    if plan.action is Action.GIVE_UP and plan.counts_attempt:
        assert plan.attempts_used + 1 >= max_attempts
    if plan.action is Action.REQUEUE and plan.counts_attempt:
        assert plan.attempts_used + 1 < max_attempts
    # Only a release of a claim that ran spends an attempt, and only the first one tombstoned.
    if plan.counts_attempt:
        assert plan.release and plan.release[0].record.state.is_open
    assert plan.reason.strip()
