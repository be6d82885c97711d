"""The v0.1 audit's defects (issue 8), each reproduced end to end as the audit did, asserting the
fixed behaviour: real wrapper processes against the emulator behind the fault proxy, other
machines played with Linux namespaces (tests/namespaces.py), children that log when they start
and stop.

Defect 3 (grandchildren) and 16 (bad input) are covered elsewhere. Defects 8, 9, 10 and 12 are
pure functions and have unit tests (tests/unit/).

Each test below, and how it fails on v0.1 (618f72e):

- 1 (a stalled claimer runs beside the winner): test_defect_1_a_stalled_claimer_gives_up_instead_of_
  running_beside_the_winner. Fails on v0.1 (618f72e): A resumes, wins as the lowest open claim
  and starts its child while B's runs ("A's child ran beside B's").
- 2 (the child runs unsupervised): test_defect_2_a_holder_whose_writes_go_unanswered_runs_nothing_
  once_its_claim_can_be_stale. Fails on v0.1: A's child still runs 6 s after the claim (stale_after)
  while the main thread retries the "running" edit.
- 4 (a signalled wrapper hands back an issue it no longer holds): test_defect_4_a_released_
  wrapper_that_is_signalled_leaves_the_next_run_alone. Fails on v0.1: A writes `interrupted`, puts
  `orion` back and removes B's lock and stage label (labels {'orion'}).
- 5 (livelock after a late final write): test_defect_5_after_a_late_final_write_a_dead_next_run_is_
  released_and_the_next_claimer_wins. Fails on v0.1: three rounds of exit 75 and "requeue:
  finishing an earlier release whose label move did not happen"; B's dead claim is never released.
- 6 (two tokens): test_defect_6_a_requeue_by_an_untrusted_reconciler_login_is_refused_loudly.
  Fails on v0.1: the claimer exits 75 ("comment N ran the issue while this claim was being made
  (it is running)"), not 64.
- 7 (a late loser undoes a person's requeue): test_defect_7_a_late_loser_leaves_a_persons_requeue_
  in_place. Fails on v0.1: the loser puts orion-ready back (labels {'orion-ready'}).
- 11 (a late beat reopens a final record): test_defect_11_a_beat_that_lands_after_the_final_
  record_does_not_reopen_it[before the read-back] and [after the wrapper exited]. Both fail on
  v0.1: the record reads `running` once the late beat lands.
- 13 (suspend): test_defect_13_the_wrappers_clock_and_its_request_deadlines_count_suspend (a unit
  test with CLOCK_BOOTTIME faked 11 days ahead). Fails on v0.1: "the clock is not CLOCK_BOOTTIME"
  (it is time.monotonic).
- 14 (a token revoked mid-run): test_defect_14_a_token_revoked_mid_run_stops_the_child_and_exits_
  64_at_once. Fails on v0.1: "heartbeat failed, will retry: GitHub rejected the token (401 Bad
  credentials)" every beat, still running 10 s later (it would go on to its renew deadline).
- 15 (outsiders drain the budget): test_defect_15_a_beat_reads_a_bounded_number_of_comment_pages_
  whatever_outsiders_post. Fails on v0.1: comment pages read per beat [0, 0, 4, 6, 0, ...] (every
  page at each change of the comment count).

The unit tests of defects 8, 9, 10 and 12 (tests/unit/), run against v0.1:

- 8: test_record.py::test_a_block_that_does_not_start_the_body_is_not_a_record fails in 4 cases
  (after text, in a code block, after a blank line, indented: v0.1 reads the block).
  test_issue_log.py::test_a_quoted_block_in_a_trusted_comment_counts_for_nothing: test_issue_log.py
  cannot even be collected on v0.1 (ClaimRecord has no counts_attempt).
- 9: test_record.py::test_adversarial_bodies_are_rejected_quickly fails in 3 cases (newlines after a
  header, spaces after a header, many headers: over the 5 s timeout).
- 10: test_arbitration.py::test_an_unreadable_earlier_claim_blocks_a_later_one and
  test_an_unreadable_release_after_our_claim_stops_us fail; test_issue_log.py::test_unreadable_
  trusted_blocks_are_reported_not_believed cannot be collected (above).
- 12: test_liveness.py::test_judge_table fails in 3 cases ("rebooted and a beat missed: dead",
  "another boot with a fresh heartbeat (a clone?): alive", "two hosts with no namespace id booted
  in one minute are not one process table"), and test_same_process_table_and_rebooted fails.
- test_plan.py (with defect 5's planning case) cannot be collected on v0.1 (no
  core.issue.Unreadable); test_arbitration.py::test_ran_meanwhile fails in all 13 cases, but by
  its changed signature (TypeError), not by behaviour.
"""

from __future__ import annotations

import contextlib
import inspect
import signal
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil
import pytest
from namespaces import available, other_machine_cmd
from rig import PATIENCE, Emulator, Proxy, RepoHandle, harness, wait_until
from rig.harness import FAILED, QUEUE, READY, WORKING, claim_comments, queue_as_a_person, records, tombstones

from orion_action.core.issue import Comment, read_log
from orion_action.core.record import ClaimRecord, State, parse_block, render_record

_why_not = available()
if _why_not:  # a clear failure, never a silent skip
    raise RuntimeError(f"tests/namespaces.py cannot work here: {_why_not}")

STAGE = "orion-stage-work"


class Children:
    """Children (the one child, tests/rig/child.py) that share one start/end log, to tell whether
    two ever ran at the same time. Each stops (logging it) on SIGTERM/SIGINT/SIGHUP, and
    otherwise waits for NAME/go."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.log = tmp / "children.log"

    def cmd(self, name: str) -> list[str]:
        (self.tmp / name).mkdir(exist_ok=True)
        return harness.child_cmd(log=self.log, name=name, until=self.tmp / name / "go",
                                 end_on=("term", "int", "hup"))

    def release(self, name: str) -> None:
        (self.tmp / name / "go").write_text("go")

    def events(self) -> list[dict[str, Any]]:
        return harness.child_events(self.log)

    def event(self, name: str, what: str) -> dict[str, Any] | None:
        return next((e for e in self.events() if e["name"] == name and e["event"] == what), None)

    def started(self, name: str) -> bool:
        return self.event(name, "start") is not None

    def stopped(self, name: str) -> bool:
        return self.event(name, "end") is not None

    def alive(self, name: str) -> bool:
        start = self.event(name, "start")
        return start is not None and harness.pid_alive(start["pid"])

    def interval(self, name: str) -> tuple[float, float] | None:
        """(start, stop) of a child; stop is now while it runs (or if it died without a word)."""
        start, stop = self.event(name, "start"), self.event(name, "end")
        if start is None:
            return None
        return start["t"], stop["t"] if stop is not None else time.time()

    def assert_never_together(self, a: str, b: str) -> None:
        ia, ib = self.interval(a), self.interval(b)
        if ia is None or ib is None:
            return
        overlap = min(ia[1], ib[1]) - max(ia[0], ib[0])
        assert overlap <= 0, f"children {a} and {b} ran together for {overlap:.1f}s: {self.events()}"

    def kill_all(self) -> None:
        for e in self.events():
            if e["event"] == "start":
                with contextlib.suppress(psutil.Error):
                    psutil.Process(e["pid"]).kill()


@pytest.fixture
def children(tmp_path: Path) -> Children:
    return Children(tmp_path)


@pytest.fixture
def procs(orion_env: dict[str, str], tmp_path: Path, children: Children) -> Iterator[harness.Orion]:
    """The product as subprocesses (the one harness); each test names its configuration. Every
    process a test starts is killed, with everything under it, when the test ends."""
    p = harness.Orion(orion_env, tmp_path / "orion.yml", tmp_path)
    try:
        yield p
    finally:
        p.cleanup(tree=True)
        children.kill_all()


def config(tmp: Path, interval: float, stale_after: float, kill_grace: float = 1, name: str = "orion.yml",
           extra: str = "") -> Path:
    path = tmp / name
    path.write_text(f"heartbeat: {{interval: {interval}, stale_after: {stale_after}}}\n"
                    f"run: {{kill_grace: {kill_grace}}}\n{extra}")
    return path


def stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def labels(repo: RepoHandle, n: int) -> set[str]:
    return set(repo.labels(n))


def claims(repo: RepoHandle, n: int) -> list[tuple[dict[str, Any], ClaimRecord]]:
    """(comment, record) of each claim the bot posted on issue n, oldest first."""
    out = []
    for c in claim_comments(repo, n):
        block = parse_block(c["body"])
        assert isinstance(block, ClaimRecord), c["body"]
        out.append((c, block))
    return out


def claim_of(repo: RepoHandle, n: int, pid: int | None = None, index: int | None = None,
             ) -> tuple[dict[str, Any], ClaimRecord] | None:
    found = claims(repo, n)
    if index is not None:
        return found[index] if len(found) > index else None
    return next((x for x in found if x[1].holder.pid == pid), None)


def wait_for_second_after(when: str, seconds: float = 1.1) -> None:
    """GitHub's times have whole seconds: wait until `when` lies in an earlier second."""
    wait_until(lambda: time.time() >= stamp(when) + seconds, interval=0.02)


# -- 1: a stalled claimer runs beside the winner ---------------------------------------------------


def test_defect_1_a_stalled_claimer_gives_up_instead_of_running_beside_the_winner(
        repo: RepoHandle, proxy: Proxy, procs: harness.Orion, children: Children, tmp_path: Path):
    cfg = config(tmp_path, interval=1, stale_after=4)
    n = repo.create_issue("work", [QUEUE])
    hold = proxy.hold("POST", rf"/issues/{n}/labels$", count=1)  # A parks right after its claim POST
    a = procs.run(n, child=children.cmd("a"), config=cfg, name="a",
                  wrap=lambda argv: other_machine_cmd(argv, host="host-a"))
    hold.wait_arrived()
    posted = claim_of(repo, n, index=0)
    assert posted is not None and posted[1].state is State.CLAIMING
    # A's claim is now older than stale_after on GitHub's clock: B may (rightly) judge it dead.
    wait_until(lambda: time.time() > stamp(posted[0]["created_at"]) + 4 + 1.2, interval=0.05)
    b = procs.run(n, child=children.cmd("b"), config=cfg, name="b")
    wait_until(lambda: children.started("b") or b.exited(),
               message=lambda: f"B never started its child:\n{b.output}")
    assert children.started("b"), b.output

    hold.release(drop=True)  # A resumes (its request is lost, as after a slow retry)
    wait_until(lambda: a.exited() or children.started("a"),
               message=lambda: f"A neither gave up nor ran:\n{a.output}")
    assert not children.started("a"), (
        f"A's child ran beside B's:\n{children.events()}\nA:\n{a.output}")
    assert a.wait() == 75, a.output
    assert "renew deadline" in a.output, a.output

    # B keeps the issue, and its child, until it finishes.
    assert not b.exited() and children.alive("b"), b.output
    assert labels(repo, n) == {WORKING}
    children.release("b")
    assert b.wait() == 0, b.output
    assert labels(repo, n) == {READY}
    children.assert_never_together("a", "b")
    states = [r.state for _, r in claims(repo, n)]
    assert states == [State.LOST, State.FINISHED], states


# -- 2: the child runs unsupervised while the record is marked running ----------------------------


def test_defect_2_a_holder_whose_writes_go_unanswered_runs_nothing_once_its_claim_can_be_stale(
        repo: RepoHandle, proxy: Proxy, procs: harness.Orion, children: Children, tmp_path: Path):
    """The audit blackholed A's record edits (interval 2 s, stale after 6 s): its child ran
    unsupervised while the main thread retried the "running" edit, and was still running when a
    pass requeued the issue and B started. Whatever A's design (record "running" before the
    child starts, or beat under supervision), its child must not run once a judge may presume
    it dead, and it may write no label after its renew deadline."""
    stale_after, renew = 6, 4
    cfg = config(tmp_path, interval=2, stale_after=stale_after)
    n = repo.create_issue("work", [QUEUE])
    edits = proxy.blackhole("PATCH", r"/issues/comments/\d+$")  # no record edit gets an answer
    a = procs.run(n, child=children.cmd("a"), config=cfg, name="a",
                  wrap=lambda argv: other_machine_cmd(argv, host="host-a"))
    comment = wait_until(lambda: (x := claim_of(repo, n, index=0)) and x[0], 30, 0.05,
                         message=lambda: a.output)
    posted = stamp(comment["created_at"])
    # From here a judge on GitHub's clock may presume A dead.
    wait_until(lambda: time.time() >= posted + stale_after, stale_after + 2, 0.05)
    assert not children.alive("a"), (
        f"A's child still runs {time.time() - posted:.0f}s after the claim, with no write of A's "
        f"ever answered:\n{children.events()}\n{a.output}")
    stopped = children.event("a", "end")
    assert stopped is None or stopped["t"] < posted + stale_after, (stopped, posted)
    edits.remove()  # GitHub answers again; A's unanswered edits are dropped
    code = a.wait()
    assert code != 0, a.output
    assert not children.started("a") or children.stopped("a"), children.events()
    late_label_writes = [(e.method, e.path, round(e.time - posted, 1)) for e in proxy.log
                         if "/labels" in e.path and e.method != "GET" and e.time > posted + renew + 1]
    assert late_label_writes == [], late_label_writes

    # Now a pass (on another machine than A) releases the stale claim, and B runs.
    entry = procs.action(n, config=cfg)
    assert entry["action"] == "requeue", entry
    b = procs.run(n, child=children.cmd("b"), config=cfg, name="b")
    wait_until(lambda: children.started("b") or b.exited(), message=lambda: b.output)
    assert children.started("b"), b.output
    children.release("b")
    assert b.wait() == 0, b.output
    children.assert_never_together("a", "b")
    assert labels(repo, n) == {READY}


# -- 4: a signalled wrapper hands back an issue it no longer holds ---------------------------------


def test_defect_4_a_released_wrapper_that_is_signalled_leaves_the_next_run_alone(
        repo: RepoHandle, procs: harness.Orion, children: Children, tmp_path: Path):
    slow = config(tmp_path, interval=30, stale_after=90, name="slow.yml")
    fast = config(tmp_path, interval=1, stale_after=4, name="fast.yml")
    n = repo.create_issue("work", [QUEUE])
    a = procs.run(n, child=children.cmd("a"), config=slow, name="a", stage="work")
    wait_until(lambda: children.started("a"), message=lambda: a.output)
    # A's first beat (its record naming the child) comes up to half a second after the child
    # starts (ADR 0059); a release before it would be seen by that beat. Release after it, so
    # that A sends no beat before the signal (its next is 30 s away).
    wait_until(lambda: (found := claim_of(repo, n, index=0)) is not None and found[1].child_pid is not None,
               30, message=lambda: a.output)
    released = procs.product("release", "--issue", str(n), "--force")
    assert released.returncode == 0, released.stderr
    b = procs.run(n, child=children.cmd("b"), config=fast, name="b", stage="work")
    wait_until(lambda: children.started("b") or b.exited(), message=lambda: b.output)
    assert children.started("b"), b.output
    assert labels(repo, n) == {WORKING, STAGE}
    a_comment, a_before = claim_of(repo, n, index=0) or pytest.fail("no claim of A")

    a.send_signal(signal.SIGTERM)  # e.g. A's Actions job is cancelled before its next beat
    assert a.wait() == 128 + signal.SIGTERM, a.output
    assert labels(repo, n) == {WORKING, STAGE}, f"A moved B's labels:\n{a.output}"
    # No final state over a released claim: A's record still reads as the tombstone left it.
    _, a_after = claim_of(repo, n, index=0) or pytest.fail("A's claim vanished")
    assert a_after.state is a_before.state, (a_before.state, a_after.state)

    # B keeps running and beating.
    def b_beats() -> int:
        found = claim_of(repo, n, index=1)
        assert found is not None
        return found[1].beats

    then = b_beats()
    wait_until(lambda: b_beats() >= then + 2 or b.exited(), interval=0.1, message=lambda: b.output)
    assert not b.exited() and children.alive("b"), f"B was stopped:\n{b.output}"
    children.release("b")
    assert b.wait() == 0, b.output
    assert labels(repo, n) == {READY}


# -- 5: livelock after a late final write ----------------------------------------------------------


def test_defect_5_after_a_late_final_write_a_dead_next_run_is_released_and_the_next_claimer_wins(
        repo: RepoHandle, procs: harness.Orion, children: Children, tmp_path: Path):
    slow = config(tmp_path, interval=30, stale_after=90)
    n = repo.create_issue("work", [QUEUE])
    a = procs.run(n, child=children.cmd("a"), config=slow, name="a")
    wait_until(lambda: children.started("a"), message=lambda: a.output)
    assert procs.product("release", "--issue", str(n), "--force").returncode == 0
    b = procs.run(n, child=children.cmd("b"), config=slow, name="b")
    wait_until(lambda: children.started("b") or b.exited(), message=lambda: b.output)
    assert children.started("b"), b.output
    b_comment, b_record = claim_of(repo, n, index=1) or pytest.fail("no claim of B")
    wait_for_second_after(b_comment["created_at"])

    # A's final record lands after B's claim: v0.1 wrote it on SIGTERM; a fixed wrapper writes
    # none over a released claim, so the late write is played as a PATCH GitHub applied late.
    a.send_signal(signal.SIGTERM)
    a.wait()
    a_comment, a_record = claim_of(repo, n, index=0) or pytest.fail("no claim of A")
    if a_record.state is not State.INTERRUPTED:
        late = a_record.with_changes(state=State.INTERRUPTED, note="stopped by SIGTERM",
                                     finished_at=datetime.now().astimezone().isoformat(timespec="seconds"))
        repo.edit_comment(a_comment["id"], render_record(late))
    a_comment, _ = claim_of(repo, n, index=0) or pytest.fail("no claim of A")
    assert stamp(a_comment["updated_at"]) > stamp(b_comment["created_at"])

    b.kill_tree()  # B's machine dies, its child with it
    wait_until(lambda: not children.alive("b"))

    # As the audit did: a claimer, then a pass, round after round. A fixed pass releases B's
    # dead claim (it ran: an attempt is charged), and the next claimer wins.
    rounds: list[tuple[int, str]] = []
    for i in range(3):
        c = procs.run(n, child=["true"], config=slow, name=f"c{i}")
        code = c.wait()
        if code == 0:
            break
        entry = procs.action(n, config=slow)
        rounds.append((code, f"{entry['action']}: {entry['reason']}"))
    assert code == 0, f"no claimer won in 3 rounds (exit code, then the pass): {rounds}"
    assert labels(repo, n) == {READY}
    assert b_record.token in {t.token for t in tombstones(repo, n)}, "B's dead claim was never released"


# -- 6: two tokens, only the worker trusted --------------------------------------------------------


def test_defect_6_a_requeue_by_an_untrusted_reconciler_login_is_refused_loudly(
        repo: RepoHandle, proxy: Proxy, procs: harness.Orion, children: Children, tmp_path: Path,
        orion_env: dict[str, str]):
    cfg = config(tmp_path, interval=1, stale_after=4, extra="trusted_authors: [orion-bot]\n")
    reconciler = {**orion_env, "GITHUB_TOKEN": Emulator.OUTSIDER_TOKEN}  # the reconciler's own token
    n = repo.create_issue("work", [QUEUE])
    a = procs.run(n, child=children.cmd("a"), config=cfg, name="a")
    wait_until(lambda: children.started("a"), message=lambda: a.output)
    # Its record names the child (a claim that never started is in doubt while its unqueue may
    # land, ADR 0072)
    wait_until(lambda: (x := claim_of(repo, n, index=0)) and x[1].state is State.RUNNING
               and x[1].child_pid is not None, interval=0.1)
    a.kill_tree()  # the worker's machine dies
    wait_until(lambda: not children.alive("a"))
    entry = procs.action(n, config=cfg, env=reconciler)
    assert entry["action"] == "requeue", entry
    assert labels(repo, n) == {QUEUE}

    # The label the untrusted login put back approves nothing (docs/adr/0033): the next run
    # refuses, takes the issue out of the queue and says who queued it; it never advises
    # trusting that login (anyone can post a release block).
    b = procs.run(n, child=["true"], config=cfg, name="b")
    code = b.wait()
    assert code == 75, b.output
    assert f"`{Emulator.OUTSIDER}` queued this issue and has none access" in b.output, b.output
    assert "trusted_authors" not in b.output
    assert labels(repo, n) == set()


# -- 7: a late loser undoes a person's requeue -----------------------------------------------------


def test_defect_7_a_late_loser_leaves_a_persons_requeue_in_place(
        repo: RepoHandle, proxy: Proxy, procs: harness.Orion, tmp_path: Path):
    cfg = config(tmp_path, interval=1, stale_after=4)
    n = repo.create_issue("work", [QUEUE])
    hold = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)  # L read 'queued', then stalls
    late = procs.run(n, child=["true"], config=cfg, name="late")
    hold.wait_arrived()
    w = procs.run(n, child=["true"], config=cfg, name="winner")
    assert w.wait() == 0, w.output
    assert labels(repo, n) == {READY}
    comment, _ = claim_of(repo, n, index=0) or pytest.fail("no claim of W")
    wait_for_second_after(comment["updated_at"])  # W's end is decidably before L's claim
    repo.remove_label(n, READY)  # a person requeues it
    repo.add_label(n, QUEUE)

    hold.release()
    assert late.wait() == 75, late.output
    assert labels(repo, n) == {QUEUE}, f"the person's requeue was undone:\n{late.output}"
    again = procs.run(n, child=["true"], config=cfg, name="again")
    assert again.wait() == 0, again.output
    assert labels(repo, n) == {READY}


# -- 11: a late beat turns a final record back into `running` --------------------------------------




@pytest.mark.parametrize("lands", ["before the read-back", "after the wrapper exited"])
def test_defect_11_a_beat_that_lands_after_the_final_record_does_not_reopen_it(
        lands: str, repo: RepoHandle, proxy: Proxy, procs: harness.Orion, children: Children, tmp_path: Path):
    """A beat PATCH in flight when the run ends, applied by GitHub after the final record was
    written: as soon as that write is done (before the wrapper reads anything back, if it does),
    or, as in the audit's demo, after the wrapper has exited."""
    # A roomy lease (renew deadline 40 s): the held beat must not run the lease out before the
    # SIGTERM is handled, however long a loaded machine takes; the ending is the signal's.
    cfg = config(tmp_path, interval=1, stale_after=60, kill_grace=0.2)
    n = repo.create_issue("work", [QUEUE])
    a = procs.run(n, child=children.cmd("a"), config=cfg, name="a")
    wait_until(lambda: children.started("a"), message=lambda: a.output)
    comment = wait_until(lambda: (x := claim_of(repo, n, index=0)) and x[1].state is State.RUNNING and x[0],
                         PATIENCE, 0.05)
    edit = rf"/issues/comments/{comment['id']}$"
    beat = proxy.hold("PATCH", edit, count=1)  # the next beat hangs
    beat.wait_arrived(timeout=PATIENCE)

    def landed() -> bool:
        return all(e.action != "pending" for e in proxy.matching("PATCH", edit))

    if lands == "before the read-back":
        readback = proxy.hold("GET", edit, count=1)
        a.send_signal(signal.SIGTERM)
        wait_until(lambda: readback.parked or a.exited(), interval=0.02, message=lambda: a.output)
        beat.release()  # GitHub applies the beat late, right after the final write
        wait_until(landed, interval=0.02)
        readback.release()
        assert a.wait(PATIENCE) == 128 + signal.SIGTERM, a.output
    else:
        a.send_signal(signal.SIGTERM)
        assert a.wait(PATIENCE) == 128 + signal.SIGTERM, a.output
        _, final = claim_of(repo, n, index=0) or pytest.fail("no claim")
        assert final.state is State.CANCELLED, final  # run.on_signal: cancel (ADR 0043)
        beat.release()  # GitHub applies the beat late
        wait_until(landed, interval=0.02)
    assert labels(repo, n) == set()
    # The record itself may read "running" again (GitHub applied the late PATCH over it), but the
    # wrapper, seeing a beat it gave up on, appended an end marker no edit can undo: every reader
    # takes the run's end from it (ADR 0014).
    comment, after = claim_of(repo, n, index=0) or pytest.fail("no claim")
    log = read_log([_as_comment(c) for c in repo.comments(n)], frozenset({Emulator.OWNER}))
    assert after.token in log.released_tokens(), f"the late beat reopened the final record: {after}"
    assert not log.open_claims(), log.open_claims()
    ends = [t.tombstone for t in log.tombstones if t.tombstone.token == after.token]
    assert [t.action.value for t in ends] == ["cancelled"] and ends[0].by == "holder", ends
    assert log.attempts_used() == 0  # a cancelled run spends nothing
    queue_as_a_person(repo, n)  # the cancelled run runs again only on a person's word (ADR 0105)
    b = procs.run(n, child=["true"], config=cfg, name="b")
    assert b.wait(PATIENCE) == 0, b.output
    assert labels(repo, n) == {READY}


def _as_comment(c: dict) -> Comment:
    at = datetime.fromisoformat(c["created_at"].replace("Z", "+00:00"))
    upd = datetime.fromisoformat((c.get("updated_at") or c["created_at"]).replace("Z", "+00:00"))
    return Comment(int(c["id"]), c["user"], c["body"], at, upd)


# -- 13: system suspend ----------------------------------------------------------------------------


@pytest.fixture
def suspended(monkeypatch: pytest.MonkeyPatch) -> float:
    """CLOCK_BOOTTIME a long suspend (11.6 days) ahead of CLOCK_MONOTONIC, as on a machine that
    was suspended since boot."""
    real = time.clock_gettime
    ahead = 1e6

    def fake(clock: int) -> float:
        return real(clock) + (ahead if clock == time.CLOCK_BOOTTIME else 0)

    monkeypatch.setattr(time, "clock_gettime", fake)
    return ahead


def test_defect_13_the_wrappers_clock_and_its_request_deadlines_count_suspend(
        suspended: float, repo: RepoHandle, proxy: Proxy):
    """Durations on CLOCK_BOOTTIME, which counts suspend. The claimer and the hand-back bound
    their requests with deadlines taken from the wrapper's clock: the GitHub adapter must compare
    them on that same clock, or on a machine that was ever suspended they are never reached."""
    from orion_action.adapters import clock
    from orion_action.adapters.github import GitHubRepo
    from orion_action.errors import Unavailable
    from orion_action.ports import Policy
    from orion_action.services import wrapper

    boot = time.clock_gettime(time.CLOCK_BOOTTIME)
    assert abs(clock.monotonic() - boot) < 1, "the clock is not CLOCK_BOOTTIME"
    params = inspect.signature(wrapper.Wrapper.__init__).parameters
    assert "host" in params, "the wrapper takes no clock: it reads time.monotonic"
    wrapper_clock = clock.SYSTEM_CLOCK  # what cli.py gives the wrapper (ports.Host)
    assert abs(wrapper_clock.monotonic() - boot) < 1

    n = repo.create_issue("work", [QUEUE])
    gh = GitHubRepo(repo.full_name, Emulator.BOT_TOKEN, proxy.url, retry_for=5)
    # Already past, on the wrapper's clock: the policy carries the clock it is enforced on.
    with gh.bounded(Policy(wrapper_clock, wrapper_clock.monotonic() - 1)), \
            pytest.raises(Unavailable, match="no time left"):
        gh.get_issue(n)
    assert proxy.count() == 0, "a request was sent after its deadline"


# -- 14: a token revoked mid-run -------------------------------------------------------------------


def test_defect_14_a_token_revoked_mid_run_stops_the_child_and_exits_64_at_once(
        repo: RepoHandle, proxy: Proxy, procs: harness.Orion, children: Children, tmp_path: Path):
    stale_after = 600  # renew deadline 400 s: retrying a 401 until then outlasts the wait below
    cfg = config(tmp_path, interval=1, stale_after=stale_after)
    n = repo.create_issue("work", [QUEUE])
    a = procs.run(n, child=children.cmd("a"), config=cfg, name="a")
    wait_until(lambda: children.started("a"), message=lambda: a.output)
    wait_until(lambda: (x := claim_of(repo, n, index=0)) and x[1].beats >= 1, 10, 0.05)
    with proxy._cv:  # the token expires: from now on GitHub answers 401 Bad credentials
        del proxy.tokens[Emulator.BOT_TOKEN]
    code = a.wait()  # v0.1 retried the 401 until its renew deadline (here 400 s)
    assert code == 64, a.output
    assert children.stopped("a") and not children.alive("a"), children.events()
    assert "401" in a.output and "token" in a.output, a.output
    assert proxy.count(status=401) <= 2, [(e.method, e.path) for e in proxy.matching(status=401)]
    assert labels(repo, n) == {WORKING}  # nothing more was written: the claim goes stale


# -- 15: outsiders drain the budget ----------------------------------------------------------------


def test_defect_15_a_beat_reads_a_bounded_number_of_comment_pages_whatever_outsiders_post(
        repo: RepoHandle, proxy: Proxy, procs: harness.Orion, children: Children, tmp_path: Path):
    cfg = config(tmp_path, interval=1, stale_after=10)
    n = repo.create_issue("work", [QUEUE])
    a = procs.run(n, child=children.cmd("a"), config=cfg, name="a")
    wait_until(lambda: children.started("a"), message=lambda: a.output)
    comment = wait_until(lambda: (x := claim_of(repo, n, index=0)) and x[1].beats >= 1 and x[0], 10, 0.05)
    edit = rf"/issues/comments/{comment['id']}$"
    spam = 500
    for i in range(spam):  # straight to the emulator: the proxy log holds the holder's requests only
        repo.outsider_comment(n, f"spam {i}")
    beats_then = proxy.count("PATCH", edit)
    proxy.wait_for("PATCH", edit, n=beats_then + 4)  # four beats after the spam
    assert not a.exited() and children.alive("a"), a.output
    log = list(proxy.log)

    # Group the holder's comment listings by beat: a beat starts with the record edit.
    per_beat: list[int] = []
    for e in log:
        if e.method == "PATCH" and e.path.endswith(f"/issues/comments/{comment['id']}"):
            per_beat.append(0)
        elif per_beat and e.method == "GET" and e.path.endswith(f"/issues/{n}/comments"):
            per_beat[-1] += 1
    assert per_beat and max(per_beat) <= 2, f"comment pages read per beat: {per_beat}"
    assert sum(per_beat) <= 2 * len(per_beat), per_beat

    children.release("a")
    assert a.wait() == 0, a.output
    assert labels(repo, n) == {READY}
    assert len(repo.comments(n)) == spam + 1
    assert FAILED not in labels(repo, n) and len(records(repo, n)) == 1
