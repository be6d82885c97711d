"""The reconcile pass with real processes against the emulator (docs/design.md sections 5, 6, 10).

Wrappers and their children are real subprocesses killed with SIGKILL; the reconciler runs as
`python -m orion_action reconcile` on this machine (machine-identity cases are in
test_machines.py). Nothing here sleeps for a fixed time: it waits on conditions.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from datetime import datetime
from pathlib import Path

import pytest
from rig import Emulator, RepoHandle, parse_github_output, wait_until
from rig.harness import (
    STALE_AFTER,
    Orion,
    exited_pid,
    local_holder,
    post_claim,
    queued_issue,
    record_blocks,
    remote_holder,
    tombstone_blocks,
    write_config,
)

from orion_action.config import Config
from orion_action.core.liveness import MISSED_BEAT_FACTOR
from orion_action.core.record import ClaimRecord, ReleaseAction, State, Tombstone, render_tombstone
from orion_action.services.holding import LABEL_LANDING_MARGIN_S

WAIT_FILE = 'while [ ! -e "$0" ]; do sleep 0.05; done; exit "$1"'


def labels(repo: RepoHandle, n: int) -> set[str]:
    return set(repo.labels(n))


def the_tombstone(repo: RepoHandle, n: int) -> Tombstone:
    found = tombstone_blocks(repo, n)
    assert len(found) == 1, [b.body for b in found]
    assert isinstance(found[0].block, Tombstone)
    return found[0].block


# -- dead holders --------------------------------------------------------------------------------


def test_sigkilled_wrapper_is_requeued_at_once_on_the_same_machine(orion: Orion, repo, tmp_path):
    # stale_after is an hour: a requeue within the test cannot have waited for it (no clock bound).
    orion.config = write_config(tmp_path, interval=1, stale_after=3600)
    n = queued_issue(repo)
    w = orion.running(n, stage="build")
    token = w.record.token
    assert labels(repo, n) == {"orion-working", "orion-stage-build"}

    w.kill()  # the wrapper with SIGKILL; its child dies with it (PR_SET_PDEATHSIG)
    entry = orion.action(n)

    assert entry["action"] == "requeue", entry
    assert f"wrapper pid {w.pid} is not running on this machine" in entry["reason"]
    assert "attempt 1 of 3" in entry["reason"]
    assert labels(repo, n) == {"orion"}  # lock and stage label gone, back in the queue
    tomb = the_tombstone(repo, n)
    assert (tomb.token, tomb.action, tomb.counts_attempt) == (token, ReleaseAction.REQUEUE, True)
    assert f"orion released claim `{token}`" in tombstone_blocks(repo, n)[0].body
    # Issue 9: after the release no comment on the issue still reads as working (the released
    # claim's visible line is rewritten; the tombstone stays the authority).
    bodies = [c["body"] for c in repo.comments(n)]
    assert not [b for b in bodies if "is working on this issue" in b or "is claiming this issue" in b], bodies
    assert any("orion no longer holds this issue" in b for b in bodies), bodies
    # The next pass has nothing to do with the issue: it no longer carries the lock.
    assert orion.reconcile()["actions"] == []


def _finish_without_label_move(orion: Orion, repo: RepoHandle, tmp_path: Path, code: int,
                               held: tuple[str, str]) -> tuple[int, ClaimRecord]:
    """A wrapper whose child exits `code`; its finish-time label write is held in the proxy
    and the wrapper is SIGKILLed there: the record says finished, the lock is still on."""
    n = queued_issue(repo)
    go = tmp_path / f"go-{n}"
    w = orion.running(n, ["sh", "-c", WAIT_FILE, str(go), str(code)], stage="s1")
    method, path = held
    hold = orion.proxy.hold(method, path.format(n=n))
    go.touch()
    hold.wait_arrived()
    finished = w.current()
    assert finished.state is State.FINISHED and finished.exit_code == code
    w.kill()
    hold.release(drop=True)
    assert "orion-working" in labels(repo, n)
    return n, finished


# Slow: `make test` completes such runs in tests/faults/test_crash_points.py (after_finish_record_failed,
# after_stage_label_removed).
@pytest.mark.slow
def test_finished_record_whose_label_move_never_happened_is_completed(orion: Orion, repo, tmp_path):
    n, _ = _finish_without_label_move(orion, repo, tmp_path, 0, ("POST", r"/issues/{n}/labels$"))
    assert labels(repo, n) == {"orion-working", "orion-stage-s1"}
    m, _ = _finish_without_label_move(orion, repo, tmp_path, 3,
                                      ("DELETE", r"/issues/{n}/labels/orion-working$"))
    # The target label is on, the lock still is (the stage label may be gone already).
    assert {"orion-working", "orion-failed"} <= labels(repo, m) <= {
        "orion-working", "orion-stage-s1", "orion-failed"}

    plan = orion.reconcile()
    by_issue = {a["issue"]: a for a in plan["actions"]}
    assert by_issue[n]["action"] == "complete"
    assert "exit code 0" in by_issue[n]["reason"]
    assert by_issue[m]["action"] == "complete"
    assert "exit code 3" in by_issue[m]["reason"]
    assert labels(repo, n) == {"orion-ready"}
    assert labels(repo, m) == {"orion-failed"}
    assert tombstone_blocks(repo, n) == [] and tombstone_blocks(repo, m) == []  # a finish needs none
    assert orion.reconcile()["actions"] == []


def test_closed_issue_with_a_live_holder_is_unlocked_and_the_holder_stops(orion: Orion, repo):
    n = queued_issue(repo)
    w = orion.running(n)
    repo.close(n)
    entry = orion.action(n)
    assert entry["action"] == "unlock", entry
    assert w.wait() == 76, w.output()
    assert "the issue was closed" in w.output()
    assert labels(repo, n) == set()


def test_a_person_who_deletes_a_live_claim_comment_stops_the_holder_at_its_next_beat(orion: Orion, repo):
    """A takeover by hand (ADR 0068): the claim comment is gone, so the holder's next beat
    (its edit gets 404) stops the run. The model has its own copy of this handler."""
    n = queued_issue(repo)
    w = orion.running(n)
    assert w.comment_id is not None
    repo.delete_comment(w.comment_id)
    assert w.wait() == 76, w.output()
    assert "the claim comment or the issue was deleted" in w.output()


# -- GitHub Actions mode -------------------------------------------------------------------------


def test_actions_mode_summary_annotations_and_outputs(orion: Orion, repo, tmp_path):
    orion.config = write_config(tmp_path, interval=1, stale_after=30, max_attempts=1)
    spent = queued_issue(repo, "spent")
    w = orion.running(spent)
    w.kill()
    hand = repo.create_issue("hand | pipe", labels=["orion-working"])
    alive = queued_issue(repo, "alive")
    orion.running(alive)
    summary, outputs = tmp_path / "summary.md", tmp_path / "output.txt"
    env = {**orion.env, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary),
           "GITHUB_OUTPUT": str(outputs)}

    result = orion.command("reconcile", env=env)
    assert result.returncode == 0, result.stderr
    stdout = result.stdout.splitlines()
    assert f"::add-mask::{env['GITHUB_TOKEN']}" in stdout
    warnings = [line for line in stdout if line.startswith("::warning")]
    assert any(f"#{spent} give_up: " in line and "retry budget spent" in line for line in warnings), stdout
    assert any(f"#{hand} report: " in line for line in warnings), stdout
    assert not any(f"#{alive} " in line for line in warnings)
    assert env["GITHUB_TOKEN"] not in result.stderr

    md = summary.read_text()
    assert "| issue | action | reason |" in md and "|---|---|---|" in md
    rows = {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| #(\d+) \| `(\w+)` \|", md, re.M)}
    assert rows == {spent: "give_up", hand: "report", alive: "keep"}

    out = parse_github_output(outputs.read_text())
    assert {k: out[k] for k in ("unlock", "complete", "requeue", "give_up", "keep", "report")} == {
        "unlock": "0", "complete": "0", "requeue": "0", "give_up": "1", "keep": "1", "report": "1"}
    plan = json.loads(out["plan"])
    assert plan["dry_run"] is False
    assert {a["issue"]: a["action"] for a in plan["actions"]} == {
        spent: "give_up", hand: "report", alive: "keep"}
    assert labels(repo, spent) == {"orion-failed"}

    # A second pass appends; the output file stays parseable, the last value of a key wins.
    again = orion.command("reconcile", "--dry-run", env=env)
    assert again.returncode == 0, again.stderr
    out = parse_github_output(outputs.read_text())
    assert json.loads(out["plan"])["dry_run"] is True
    assert md in summary.read_text() and "(dry run)" in summary.read_text()


def test_outputs_survive_a_multi_line_plan(tmp_path):
    """set_outputs uses a heredoc delimiter for values with a newline (a plan never has one
    today: json.dumps escapes them; the writer must still be safe)."""
    from orion_action.adapters import actions

    path = tmp_path / "out"
    value = json.dumps({"reason": "a\nb"}, indent=1)
    actions.set_outputs({"GITHUB_OUTPUT": str(path)}, {"plan": value, "keep": "2"})
    assert parse_github_output(path.read_text()) == {"plan": value, "keep": "2"}


# -- cost ----------------------------------------------------------------------------------------


def _used(stderr: str) -> int:
    m = re.search(r"this command used (\d+) API requests", stderr)
    assert m, stderr
    return int(m.group(1))


def _newest_beat_age(repo: RepoHandle, numbers: tuple[int, ...]) -> float:
    stamps = [c["updated_at"] for n in numbers for c in repo.comments(n)]
    newest = max(datetime.fromisoformat(t.replace("Z", "+00:00")) for t in stamps)
    return time.time() - newest.timestamp()


def _missed_a_beat(repo: RepoHandle, numbers: tuple[int, ...]) -> bool:
    """Every claim record on these issues is older than a beat and a half of the interval it
    promises (a pass's fresh-beat shortcut, core/plan.keep_on_fresh_beat, judges by the record's
    promise, and a holder short of budget stretches it past the configured interval, ADR 0045),
    plus two seconds: the comment's stamp and the judge's clock (GitHub's Date) are both whole
    seconds, so an age read here can be up to two seconds more than the judge's."""
    now = time.time()
    return all(
        now - datetime.fromisoformat(b.updated_at.replace("Z", "+00:00")).timestamp()
        > MISSED_BEAT_FACTOR * b.block.interval + 2.0
        for n in numbers for b in record_blocks(repo, n)
        if isinstance(b.block, ClaimRecord)
    )


def _kept_quick(stdout: str) -> int:
    m = re.search(r"\((\d+) kept on a fresh beat without reading the issue\)", stdout)
    return int(m.group(1)) if m else 0


def test_a_pass_over_live_holders_costs_the_same_for_one_or_three(orion: Orion, repo, proxy, tmp_path):
    """The flat cost (docs/adr/0018): holders that beat on time are kept from one listing of
    the repository's recent comments, not one read per issue. Every pass's requests are
    accounted for exactly: 6 fixed (GET /user, the lock listing, the recent-comments listing,
    the cancel listing, the queue listing of ADR 0085, the listing of issues changed since the
    previous pass of ADR 0088) plus one full read per issue the listing could not clear; a pass in
    which every holder had beaten on time costs 6 whatever the number of claims."""
    orion.config = write_config(tmp_path, interval=2, stale_after=30)
    numbers = [queued_issue(repo, f"i{k}") for k in range(3)]
    wrappers = [orion.running(n) for n in numbers]

    # The holders go through the proxy too (beats, fence reads): count the routes only a pass
    # uses, and check the pass's own count, which the other tests check against the proxy.
    listings = r"/user$|/issues$|/issues/comments$"

    def a_pass() -> int | None:
        before = proxy.count(path=listings)
        result = orion.command("reconcile")
        assert result.returncode == 0, result.stderr
        assert proxy.count(path=listings) - before == 6
        quick = _kept_quick(result.stdout)
        spent = _used(result.stderr)
        assert spent == 6 + (len(numbers) - quick), result.stdout
        assert "3 keep" in result.stdout, result.stdout
        return spent if quick == len(numbers) else None

    assert wait_until(a_pass, interval=0.2) == 6
    assert [w.proc.poll() for w in wrappers] == [None, None, None]
    assert all(labels(repo, n) == {"orion-working"} and tombstone_blocks(repo, n) == [] for n in numbers)


def test_cost_is_reported_and_checked_against_the_proxy(orion: Orion, repo, proxy, emulator, tmp_path):
    # Interval 1 s (the projection's input); stale_after 90 s so that the holders, frozen for
    # a few seconds below (longer on a loaded machine), stay inside their renew deadline: their
    # commands run on, so every judge here counts them live (ADR 0028), and they carry on when
    # thawed.
    orion.config = write_config(tmp_path, interval=1, stale_after=90)
    first, second = queued_issue(repo, "a"), queued_issue(repo, "b")
    wrappers = [orion.running(first), orion.running(second)]
    # Freeze both holders: alive in this process table, but silent on the network, so the
    # proxy's counter sees only the command under test.
    for w in wrappers:
        os.kill(w.pid, signal.SIGSTOP)
    # Wait until both last beats are older than a beat and a half: then no claim is kept on a
    # fresh beat from the repository listing, and each issue is read in full.
    wait_until(lambda: _newest_beat_age(repo, (first, second)) > 2.0)
    wait_until(lambda: _missed_a_beat(repo, (first, second)), timeout=120,
               message="the frozen holders' records still promise a beat that has not come")
    # The command under test speaks with a token of its own (the same login), and only its
    # requests are counted: a holder's beat still in flight when it was frozen cannot count.
    own = emulator.lease_tokens()[Emulator.BOT_TOKEN]
    with proxy._cv:
        proxy.tokens[own] = "cost-probe"
    probe = {**orion.env, "GITHUB_TOKEN": own}

    def probed() -> int:
        return sum(e.token == "cost-probe" for e in proxy.matching())

    try:
        for command in ("status", "reconcile"):
            before = probed()
            result = orion.command(command, env=probe)
            assert result.returncode == 0, result.stderr
            spent = probed() - before
            assert _used(result.stderr) == spent, (command, result.stderr)
            # GET /user, one page of issues, one page of recently updated comments, then one
            # list per claim (frozen, they missed a beat: no shortcut); status also lists the
            # queue and reads the pause label (and, its queue being empty, checks that the queue
            # label exists, to say "run init" if not), a pass also lists the cancel label's issues
            # and the queue's (ADR 0085: empty here, so no record is read), and the issues changed
            # since the previous pass (ADR 0088: both carry the lock, so no record is read).
            assert spent == 1 + 1 + 1 + 2 + (3 if command == "status" else 3), command
            assert "2 live claim(s) heartbeat every 1s (as their records promise): about 14400 " \
                "requests/hour" in result.stderr
            assert "7200 comment edits/hour" in result.stderr
            assert "warning: heartbeats would use more than 80% of the token's budget" in result.stderr
            assert "raise heartbeat.interval to at least" in result.stderr

        in_actions = orion.command("status", env={**orion.env, "GITHUB_ACTIONS": "true"})
        assert any(line.startswith("::warning title=orion-action%3A request budget::heartbeats would use")
                   for line in in_actions.stdout.splitlines()), in_actions.stdout

        # The projection follows what the records promise (ADR 0045), not the judge's own
        # configuration: a reconciler configured for a slow beat still sees these fast ones.
        slow = write_config(tmp_path, interval=60, stale_after=600, name="slow.yml")
        calm = orion.command("reconcile", config=slow)
        assert "2 live claim(s) heartbeat every 1s (as their records promise)" in calm.stderr
        assert "warning: heartbeats would use more than 80%" in calm.stderr
    finally:
        for w in wrappers:
            os.kill(w.pid, signal.SIGCONT)
    assert [w.proc.poll() for w in wrappers] == [None, None]


def test_a_winner_that_died_before_starting_is_held_while_its_unqueue_may_land(orion: Orion, repo, proxy):
    """A claim that won (`running`) and started nothing, its wrapper gone, just posted: what a
    winner killed while it waits for its unanswered unqueue leaves (ADR 0067). Its removal of
    the queue label may still land; requeued now, it could land after the requeue and leave the
    issue with no label. The pass holds it in doubt and moves nothing (ADR 0072)."""
    n = queued_issue(repo)
    _, dead = post_claim(repo, n, local_holder())
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    assert [(a["issue"], a["action"]) for a in actions] == [(n, "report")]
    assert "queue-label removal may still land" in actions[0]["reason"]
    assert labels(repo, n) == {"orion-working"}
    assert tombstone_blocks(repo, n) == []


def test_an_issue_a_dead_holder_left_with_no_label_is_requeued(orion: Orion, repo, proxy):
    """A run whose wrapper and command are gone, on an issue that carries no label at all: a
    stale lock removal took its lock and its own unqueue the queue label, and it died before a
    beat could put the lock back (`stale-unlock-strand`). No label listing shows the issue; the
    pass finds the open claim in its repository-wide comment listing and requeues it. Beside
    it, an unlabelled issue whose run finished (a person took its label off) is left alone
    (ADR 0072)."""
    n = repo.create_issue("stranded")
    post_claim(repo, n, local_holder(), child_pid=exited_pid(), lock=False)
    done = repo.create_issue("done, its label taken off by hand")
    post_claim(repo, done, local_holder(), state=State.FINISHED, exit_code=0, lock=False)
    before = proxy.count()
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    assert [(a["issue"], a["action"]) for a in actions] == [(n, "requeue")]
    assert "carried no label" in actions[0]["reason"]
    assert labels(repo, n) == {"orion"} and labels(repo, done) == set()
    assert len(tombstone_blocks(repo, n)) == 1 and tombstone_blocks(repo, done) == []
    assert _used(result.stderr) == proxy.count() - before
    # The next pass finds nothing left to repair: the issue is queued again.
    again = orion.command("reconcile", "--json")
    assert again.returncode == 0, again.stderr
    assert [a["action"] for a in json.loads(again.stdout)["actions"]] == []


def test_a_stranded_issue_a_person_cancelled_is_released_and_not_requeued(orion: Orion, repo, proxy):
    """As above, but a person cancelled the run and then took its lock off by hand, and the
    cancel sweep took the cancel label off (no lock held the issue). The labels say nothing;
    GitHub's record (the cancel label's `labeled` event, which orion's own removal does not
    withdraw) says the issue is cancelled: the pass releases the dead claim, with a tombstone
    that unlocks, and puts no label on (ADR 0078)."""
    n = repo.create_issue("cancelled, then unlocked by hand")
    post_claim(repo, n, local_holder(), child_pid=exited_pid(), lock=False)
    repo.add_label(n, "orion-cancel")
    repo.remove_label(n, "orion-cancel")
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    assert [a["issue"] for a in actions] == [n]
    assert "after a person's cancel" in actions[0]["reason"] and "not requeued" in actions[0]["reason"]
    assert labels(repo, n) == set()
    [tomb] = tombstone_blocks(repo, n)
    assert tomb.block.action is ReleaseAction.UNLOCK
    again = orion.command("reconcile", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["actions"] == []


def test_a_pass_requeue_landing_after_a_cancel_was_carried_out_comes_off_again(orion: Orion, repo, proxy):
    """Pass A plans to requeue a dead run; its queue-label addition is held (for less than the
    client's read timeout: an answered write). A person cancels, and pass B finishes A's
    release under the cancel label (the lock off, not requeued) and sweeps the cancel label
    off. Then A's addition lands: the labels no longer show the cancel, GitHub's answer shows
    the lock gone, and A reads the record and takes its queue label off again (ADR 0079)."""
    n = repo.create_issue("work")
    post_claim(repo, n, local_holder(), child_pid=exited_pid())
    # B's sweep leaves the cancel to a later pass while a claim may still add its lock (ADR 0053):
    # the claim first ages past that window.
    posted = datetime.fromisoformat(repo.comments(n)[0]["created_at"].replace("Z", "+00:00")).timestamp()
    window = Config(stale_after=STALE_AFTER).renew_deadline + LABEL_LANDING_MARGIN_S
    wait_until(lambda: time.time() > posted + window + 1, timeout=window + 5, interval=0.2)
    held = proxy.hold("POST", rf"/issues/{n}/labels$", count=1)
    a = orion.spawn(["reconcile", "--config", str(orion.config), "--json"], name="pass-a")
    held.wait_arrived()
    repo.add_label(n, "orion-cancel")
    orion.reconcile()
    assert labels(repo, n) == set(), "pass B did not carry the cancel out"
    held.release()
    assert a.wait() == 0, a.stderr
    entry = a.json()["actions"][0]  # then its own sweep, which finds the cancel carried out
    assert entry["action"] == "keep" and "cancelled the issue while the pass ran" in entry["reason"]
    assert labels(repo, n) == set()


def test_a_stale_requeue_over_a_cancel_its_writer_never_looked_back_at_comes_off(orion: Orion, repo, proxy):
    """A person queues and cancels an issue; orion carries the cancel out (both labels off); then
    a pass's requeue planned before the cancel lands, and its writer is killed before it can look
    at GitHub's record (the model's `requeue-over-cancel` residue). The labels say queued. The next
    pass looks at the queued issues changed since the previous pass: the record shows the cancel
    standing against the person's latest queueing, orion's own addition set aside, and the queue
    label comes off; the pass after finds nothing to do (ADR 0085)."""
    n = repo.create_issue("cancelled, then requeued by a stale write")
    person = Emulator.OUTSIDER_TOKEN
    repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion"]})
    repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion-cancel"]})
    repo.remove_label(n, "orion")  # orion carries the cancel out
    repo.remove_label(n, "orion-cancel")
    repo.add_label(n, "orion")  # the stale requeue, as orion
    queued_untouched = repo.create_issue("queued by a person, never cancelled")
    repo.api("POST", f"/issues/{queued_untouched}/labels", token=person, json={"labels": ["orion"]})
    before = proxy.count("POST", r"^/graphql$")
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    assert [(a["issue"], a["action"]) for a in actions] == [(n, "cancel")]
    assert "mallory added the orion-cancel label" in actions[0]["reason"]
    assert labels(repo, n) == set() and labels(repo, queued_untouched) == {"orion"}
    # Each queued issue changed since the previous pass: one record read; the cancel carried
    # out: one more look at the record after the removal.
    assert proxy.count("POST", r"^/graphql$") - before == 3
    again = orion.command("reconcile", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["actions"] == []
    assert labels(repo, queued_untouched) == {"orion"}


@pytest.mark.parametrize("shape", ["stale", "under the lock", "queued over a fate", "after orion's requeue"])
def test_a_stale_fate_beside_a_persons_queueing_comes_off(orion: Orion, repo, proxy, shape: str):
    """A run finished (ready on, the lock off); a person requeued the issue (ready off, queue on);
    then a pass's ready, planned from a read before all that, landed, and its writer was killed
    before it could look at GitHub's answer (the model's `stale-pass-repair`, scenario
    pass_killed_after_its_stale_fate_lands). The issue carries two fates and no claimer takes it.
    The next pass's look at the queue reads GitHub's record: orion added ready after the person's
    queueing and after the lock came off, so the addition was stale, and it comes off (ADR 0094).
    A ready orion added under the lock after the person's queueing (a run that ended after they
    queued it mid-run) comes off too: they asked for one more run (ADR 0099). A ready added before
    the person's queueing (they queued a finished issue) is left to them. A ready orion added after
    its own requeue took the lock off (a pass's completion, planned before another pass released
    the run back to the queue) comes off too (ADR 0099)."""
    n = repo.create_issue("finished, requeued, then a stale ready")
    person = Emulator.OUTSIDER_TOKEN
    repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion"]})
    repo.remove_label(n, "orion")  # a claim's unqueue
    repo.add_label(n, "orion-working")
    if shape == "under the lock":
        repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion"]})  # mid-run
    if shape == "after orion's requeue":
        repo.add_label(n, "orion")  # a pass's release back to the queue: the queue label, the lock off
        repo.remove_label(n, "orion-working")
        repo.add_label(n, "orion-ready")  # another pass's completion, planned before
    else:
        repo.add_label(n, "orion-ready")  # the holder's ending: the next label first, the lock last
        repo.remove_label(n, "orion-working")
    if shape == "stale":
        repo.api("DELETE", f"/issues/{n}/labels/orion-ready", token=person)
        repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion"]})
        repo.add_label(n, "orion-ready")  # the pass's stale addition, as orion
    if shape == "queued over a fate":
        repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion"]})
    assert labels(repo, n) == {"orion", "orion-ready"}
    before = proxy.count("POST", r"^/graphql$")
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    assert proxy.count("POST", r"^/graphql$") - before == 1  # one queued issue changed: one record read
    if shape == "queued over a fate":
        assert actions == [] and labels(repo, n) == {"orion", "orion-ready"}
        return
    assert [(a["issue"], a["action"]) for a in actions] == [(n, "requeue")]
    says = {"stale": "orion-ready label, planned before the issue was queued again and added after the lock",
            "after orion's requeue": "orion-ready label, planned before the issue was queued again",
            "under the lock": "queued the issue while a run held it: the run's orion-ready label"}[shape]
    assert says in actions[0]["reason"]
    assert labels(repo, n) == {"orion"}
    again = orion.command("reconcile", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["actions"] == []
    assert labels(repo, n) == {"orion"}


def test_a_stale_requeue_beside_a_runs_fate_comes_off(orion: Orion, repo, proxy):
    """A run ended failed (failed on, the lock off last); then a pass's requeue, planned from a
    read that took the holder for dead while it was ending, landed, and its writer was killed
    before it could look at GitHub's answer (default seed 15 episode 9). The issue carries queue
    and failed, and no claimer takes it. The next pass's look at the queue reads GitHub's record:
    orion added the queue label after the lock came off, beside a fate added before: the queue
    label comes off, and the run's end stands (ADR 0099)."""
    n = repo.create_issue("ended failed, then a stale requeue")
    person = Emulator.OUTSIDER_TOKEN
    repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion"]})
    repo.remove_label(n, "orion")  # a claim's unqueue
    repo.add_label(n, "orion-working")
    repo.add_label(n, "orion-failed")  # the holder's ending: the next label first, the lock last
    repo.remove_label(n, "orion-working")
    repo.add_label(n, "orion")  # the pass's stale requeue, as orion
    assert labels(repo, n) == {"orion", "orion-failed"}
    before = proxy.count("POST", r"^/graphql$")
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    assert proxy.count("POST", r"^/graphql$") - before == 1  # one queued issue changed: one record read
    actions = json.loads(result.stdout)["actions"]
    assert [(a["issue"], a["action"]) for a in actions] == [(n, "complete")]
    assert "landed beside the run's orion-failed label (a stale write)" in actions[0]["reason"]
    assert labels(repo, n) == {"orion-failed"}
    again = orion.command("reconcile", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["actions"] == []
    assert labels(repo, n) == {"orion-failed"}


@pytest.mark.parametrize("ended", ["finished", "handed back", "cancelled"])
def test_a_queue_label_orion_added_under_the_lock_is_judged_by_the_runs_record(orion: Orion, repo, proxy,
                                                                               ended: str):
    """Run A died and a pass released it back to the queue; run B claimed the issue. Then, under
    B's lock, a stale write of another pass planned before B's claim landed, and its writer was
    killed before its look: a second release of A (its tombstone and the queue label), and then
    B's ending added ready, or B's Actions job was cancelled (a signal, whose ending leaves a queue
    label it finds); or a completion (ready), and then B's time limit handed it back (the queue
    label). Queue and ready, both orion's, both under B's lock, which no claimer takes; or the
    queue label alone, and the cancelled run would run again. The next pass reads the record: the
    last run's end decides what comes off (ADRs 0102 and 0103; scenarios
    pass_requeue_lands_under_the_next_runs_lock, pass_completion_lands_under_the_next_runs_lock and
    signal_cancel_beside_a_stale_requeue_under_its_lock)."""
    n = queued_issue(repo)
    _, a = post_claim(repo, n, local_holder(), child_pid=exited_pid())
    requeue_a = render_tombstone(Tombstone(a.token, ReleaseAction.REQUEUE, "no heartbeat",
                                           counts_attempt=True))
    repo.comment(n, requeue_a)  # a pass releases A back to the queue
    repo.add_label(n, "orion")
    repo.remove_label(n, "orion-working")
    state = {"finished": State.FINISHED, "handed back": State.INTERRUPTED,
             "cancelled": State.CANCELLED}[ended]
    b, _ = post_claim(repo, n, local_holder(), state=state, exit_code=0 if ended == "finished" else None,
                      child_pid=exited_pid())  # B's claim, its lock and unqueue, its final record
    if ended == "cancelled":
        # B runs until its claim could no longer be in flight (ADR 0053): its post plus the lease.
        created = next(c["created_at"] for c in repo.comments(n) if c["id"] == b)
        posted = datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
        window = Config(stale_after=STALE_AFTER).renew_deadline + LABEL_LANDING_MARGIN_S
        wait_until(lambda: time.time() > posted + window + 1, timeout=window + 10, interval=0.1)
    if ended == "handed back":
        repo.add_label(n, "orion-ready")  # the stale pass's completion of A
        repo.add_label(n, "orion")  # B's hand-back: the next label first, the lock last
    else:
        repo.comment(n, requeue_a)  # the stale pass's second release of A, and its queue label
        repo.add_label(n, "orion")
        if ended == "finished":
            repo.add_label(n, "orion-ready")  # B's ending: the next label first, the lock last
    repo.remove_label(n, "orion-working")
    before = proxy.count("POST", r"^/graphql$"), proxy.count("GET", rf"/issues/{n}/comments")
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    # One queued issue changed: one record read, and one listing of its comments (and, for the
    # removal of a queue label a claimer may be taking, one more: the in-flight check).
    assert proxy.count("POST", r"^/graphql$") - before[0] == 1
    assert proxy.count("GET", rf"/issues/{n}/comments") - before[1] == (2 if ended == "cancelled" else 1)
    actions = json.loads(result.stdout)["actions"]
    action, left, says = {
        "finished": ("complete", {"orion-ready"}, "both landed while one lock was on"),
        "handed back": ("requeue", {"orion"}, "both landed while one lock was on"),
        "cancelled": ("cancel", set(), "and the run was cancelled"),
    }[ended]
    assert [(x["issue"], x["action"]) for x in actions] == [(n, action)]
    assert says in actions[0]["reason"]
    assert labels(repo, n) == left
    again = orion.command("reconcile", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["actions"] == []
    assert labels(repo, n) == left


def _queued_again_once(orion: Orion, repo, n: int, actions: list[dict], says: str) -> None:
    """The pass's only action put issue n back in the queue, saying `says`; the next pass finds
    nothing to do."""
    assert [(a["issue"], a["action"]) for a in actions] == [(n, "requeue")]
    assert says in actions[0]["reason"]
    assert labels(repo, n) == {"orion"}
    again = orion.command("reconcile", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["actions"] == []


@pytest.mark.parametrize("withdrawn", [True, False])
def test_a_queueing_a_stale_sweep_removal_took_is_put_back_by_the_next_pass(orion: Orion, repo, proxy,
                                                                           withdrawn: bool):
    """A person queues and cancels an issue; a pass's sweep reads it cancelled and plans the queue
    label's removal; the person takes the cancel label off again; the removal lands after that, and
    its writer is killed before it can look at GitHub's record (or its answer is lost): the
    model's `stale-pass-repair`, default seed 15 episode 125. No label is left and no listing shows
    the issue. The next pass lists the open issues updated since the previous pass and reads the
    record of each one carrying none of orion's labels: orion's removal of a person's queueing with
    no cancel standing and no claim since: the label goes back, once (ADR 0088). A cancel still
    standing when the removal landed was carried out: nothing is put back."""
    n = repo.create_issue("queued, cancelled, the cancel withdrawn")
    person = Emulator.OUTSIDER_TOKEN
    repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion"]})
    repo.api("POST", f"/issues/{n}/labels", token=person, json={"labels": ["orion-cancel"]})
    if withdrawn:
        repo.api("DELETE", f"/issues/{n}/labels/orion-cancel", token=person)
    repo.remove_label(n, "orion")  # the sweep's stale removal, as orion
    if not withdrawn:
        repo.remove_label(n, "orion-cancel")  # the sweep carried the cancel out
    assert labels(repo, n) == set()
    untouched = repo.create_issue("an issue orion never queued")
    repo.api("POST", f"/issues/{untouched}/comments", token=person, json={"body": "a person's word"})
    repo.add_label(repo.create_issue("orion queue"), "orion-dashboard")  # orion's own: never read
    before = proxy.count("POST", r"^/graphql$")
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    # The two bare issues changed since the previous pass: one record read each (not the
    # dashboard issue's).
    assert proxy.count("POST", r"^/graphql$") - before == 2
    assert labels(repo, untouched) == set()
    if not withdrawn:
        assert actions == [] and labels(repo, n) == set()
        return
    _queued_again_once(orion, repo, n, actions, "mallory queued it")


def test_a_queueing_taken_again_after_a_put_back_is_put_back(orion: Orion, repo):
    """A person queues the issue; a pass's stale removal takes it, a look puts it back (orion's
    addition), and a third stale removal takes it again, its writer killed before its look
    (default seed 233 episode 15). orion's addition after the person's queueing, with no lock
    between, was a put-back of that queueing: the next pass puts it back once more (ADR 0088)."""
    n = repo.create_issue("queued, taken, put back, taken again")
    repo.api("POST", f"/issues/{n}/labels", token=Emulator.OUTSIDER_TOKEN, json={"labels": ["orion"]})
    repo.remove_label(n, "orion")  # a stale removal, as orion
    repo.add_label(n, "orion")  # a look's put-back
    repo.remove_label(n, "orion")  # another stale removal
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    _queued_again_once(orion, repo, n, json.loads(result.stdout)["actions"], "mallory queued it")


@pytest.mark.parametrize("remover", ["orion", "a person"])
def test_a_forced_release_a_late_unqueue_undid_is_queued_again_by_the_next_pass(orion: Orion, repo, proxy,
                                                                               remover: str):
    """A person force-releases a claim whose winner's queue-label removal is still on the way;
    the removal lands after the release (the label was still on: the release's addition made no
    event) and the winner is dead: no label is left, and the strand look does not take up a
    released claim. The next pass finds the release among the recently updated comments, and
    GitHub's record shows orion's removal after it, within the released claim's lease: it queues
    the issue again, once (ADR 0086). A person's removal is theirs: nothing is put back."""
    n = queued_issue(repo)
    # A long promise, so the claim's writes may land for minutes: no race with a loaded machine.
    post_claim(repo, n, local_holder(), child_pid=exited_pid(), stale_after=600)
    released = orion.command("release", "--issue", str(n), "--force")
    assert released.returncode == 0, released.stderr
    assert labels(repo, n) == {"orion"}
    if remover == "orion":
        repo.remove_label(n, "orion")  # the winner's late unqueue, by orion's login
    else:
        repo.api("DELETE", f"/issues/{n}/labels/orion", token=Emulator.OUTSIDER_TOKEN)
    assert labels(repo, n) == set()
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    actions = json.loads(result.stdout)["actions"]
    if remover == "a person":
        assert actions == [] and labels(repo, n) == set()
        return
    _queued_again_once(orion, repo, n, actions, "late orion label removal")


def test_a_release_whose_pass_stopped_before_its_label_is_queued_by_the_next_pass(orion: Orion, repo, proxy):
    """A claim won, took the queue label and died; a stale lock removal left the issue with no
    label (a strand). A pass found it and posted its release back to the queue, and was killed
    before it put the queue label on: the release is the issue's last event, the claim no longer
    open, so the strand look has nothing to take up. The next pass finds the release among the
    recently updated comments, and GitHub's record shows no event of the queue label since: the
    release's own label never landed, and it goes on, once (ADR 0098; the model's default seed 129
    episode 238)."""
    n = queued_issue(repo)
    _, claim = post_claim(repo, n, local_holder(), child_pid=exited_pid())  # the winner's lock and unqueue
    repo.remove_label(n, "orion-working")  # a stale lock removal: the strand
    unqueued = time.time()
    # GitHub's times are whole seconds: the release comes in a later second than the unqueue.
    wait_until(lambda: time.time() >= int(unqueued) + 2, interval=0.05)
    repo.comment(n, render_tombstone(Tombstone(claim.token, ReleaseAction.REQUEUE,
                                               "the issue carried no label (stranded)", counts_attempt=True)))
    assert labels(repo, n) == set()
    result = orion.command("reconcile", "--json")
    assert result.returncode == 0, result.stderr
    _queued_again_once(orion, repo, n, json.loads(result.stdout)["actions"], "label never landed")


def test_in_actions_a_pass_looks_back_to_what_the_previous_pass_could_not_judge(orion: Orion, repo, proxy,
                                                                                tmp_path):
    """A stranded issue whose dead claim last wrote longer ago than the strand look's 2 x
    stale_after + 5 s: a pass outside Actions, which cannot tell when the previous pass ran,
    misses it. In Actions the pass reads when the previous successful run of its own workflow
    began (one request; a run at the proxy, begun as the claim last wrote, so it could not judge
    it yet) and looks back to that: it finds the claim and requeues (ADR 0081)."""
    n = repo.create_issue("stranded")
    post_claim(repo, n, local_holder(), child_pid=exited_pid(), lock=False)
    claim = repo.comments(n)[0]
    owner, name = repo.full_name.split("/")
    proxy.add_workflow(owner, name, "orion-reconcile.yml")
    proxy.set_workflow_run(owner, name, 7001, "completed", conclusion="success",
                           path=".github/workflows/orion-reconcile.yml", run_started_at=claim["updated_at"])
    written = datetime.fromisoformat(claim["updated_at"].replace("Z", "+00:00")).timestamp()
    unanchored = 2 * STALE_AFTER + 5
    wait_until(lambda: time.time() > written + unanchored + 1, timeout=unanchored + 10, interval=0.2)

    outside = orion.command("reconcile", "--json")
    assert outside.returncode == 0, outside.stderr
    assert json.loads(outside.stdout)["actions"] == []  # past its look: the issue stays stranded
    assert labels(repo, n) == set()

    outputs = tmp_path / "output.txt"
    env = {**orion.env, "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(outputs),
           "GITHUB_WORKFLOW_REF": f"{repo.full_name}/.github/workflows/orion-reconcile.yml@refs/heads/main"}
    runs_read = proxy.count("GET", r"/actions/workflows/orion-reconcile\.yml/runs$")
    inside = orion.command("reconcile", env=env)
    assert inside.returncode == 0, inside.stderr
    plan = json.loads(parse_github_output(outputs.read_text())["plan"])
    assert [(a["issue"], a["action"]) for a in plan["actions"]] == [(n, "requeue")]
    assert "carried no label" in plan["actions"][0]["reason"]
    assert labels(repo, n) == {"orion"}
    assert proxy.count("GET", r"/actions/workflows/orion-reconcile\.yml/runs$") == runs_read + 1


def test_cost_of_writes_is_counted_too(orion: Orion, repo, proxy):
    n = queued_issue(repo)
    post_claim(repo, n, local_holder(), child_pid=exited_pid())
    before = proxy.count()
    result = orion.command("reconcile")
    assert result.returncode == 0, result.stderr
    assert _used(result.stderr) == proxy.count() - before
    assert "0 live claim(s)" in result.stderr and "warning" not in result.stderr
    assert labels(repo, n) == {"orion"}


# -- races ---------------------------------------------------------------------------------------


def test_two_reconcilers_at_once_requeue_once_with_one_tombstone(orion: Orion, repo, proxy):
    n = queued_issue(repo)
    w = orion.running(n)
    w.kill()
    # Both passes judge the claim dead, then meet at the tombstone POST, held until both
    # have arrived: a real race, not two passes one after the other.
    hold = proxy.hold("POST", rf"/issues/{n}/comments$")
    procs = [orion.spawn(["reconcile", "--config", str(orion.config), "--json"]) for _ in range(2)]
    hold.wait_arrived(n=2)
    hold.release()
    assert [p.wait() for p in procs] == [0, 0], [p.stderr for p in procs]
    entries = [json.loads(p.stdout)["actions"] for p in procs]
    actions = sorted(e[0]["action"] for e in entries)
    assert actions == ["keep", "requeue"], entries
    loser = next(e[0] for e in entries if e[0]["action"] == "keep")
    assert "another reconciler released the claim first" in loser["reason"]
    tomb = the_tombstone(repo, n)
    assert tomb.token == w.record.token and tomb.counts_attempt
    assert labels(repo, n) == {"orion"}
    assert len(record_blocks(repo, n)) == 1


def test_reconcile_of_an_empty_repository(orion: Orion, repo):
    result = orion.command("reconcile")
    assert result.returncode == 0, result.stderr
    assert "0 issue(s) carrying 'orion-working': nothing to do" in result.stdout
    plan = orion.reconcile()
    plan.pop("_stderr")
    assert plan == {"dry_run": False, "actions": [], "dispatched": [], "read_in_full": 0}


def test_a_claim_that_appears_while_the_pass_runs_keeps_the_labels(orion: Orion, repo, proxy):
    """The tombstone is held in flight while a new claim lands: the pass takes its tombstone
    back and moves no label (ADR 0006)."""
    n = queued_issue(repo)
    _, dead = post_claim(repo, n, local_holder(), child_pid=exited_pid())
    hold = proxy.hold("POST", rf"/issues/{n}/comments$")
    proc = orion.spawn(["reconcile", "--config", str(orion.config), "--json"])
    hold.wait_arrived()
    newcomer, _ = post_claim(repo, n, remote_holder(), stale_after=600, lock=False)
    hold.release()
    assert proc.wait() == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)["actions"]
    assert entry["action"] == "keep", entry
    assert f"a new claim (comment {newcomer}) appeared while the pass ran" == entry["reason"]
    assert tombstone_blocks(repo, n) == []
    assert labels(repo, n) == {"orion-working"}


def test_a_pass_killed_between_tombstone_and_labels_is_finished_by_the_next(orion: Orion, repo, proxy):
    n = queued_issue(repo)
    w = orion.running(n, stage="build")
    w.kill()
    hold = proxy.hold("POST", rf"/issues/{n}/labels$")
    crashed = orion.spawn(["reconcile", "--config", str(orion.config)])
    hold.wait_arrived()
    crashed.kill()  # the fixture kills it anyway if the hold never fills
    hold.release(drop=True)
    assert len(tombstone_blocks(repo, n)) == 1
    assert labels(repo, n) == {"orion-working", "orion-stage-build"}

    entry = orion.action(n)
    assert entry["action"] == "requeue", entry
    assert "finishing an earlier release whose label move did not happen" in entry["reason"]
    assert labels(repo, n) == {"orion"}
    assert len(tombstone_blocks(repo, n)) == 1  # no second tombstone, no second attempt spent
    assert orion.running(n).record.attempt == 2


def test_without_the_repository_listing_every_issue_is_read_in_full(orion: Orion, repo, proxy):
    """A GitHub without GET /issues/comments (emulate 0.11.2, an old GitHub Enterprise): the
    pass says so in one line and reads each issue in full; the verdicts are the same. It cannot
    look for what a dead writer left (those looks start from that listing), so it exits 69 and
    says so: its run does not anchor the next pass (ADR 0091)."""
    alive, dead = queued_issue(repo, "alive"), queued_issue(repo, "dead")
    w = orion.running(alive)
    post_claim(repo, dead, local_holder(), child_pid=exited_pid())
    proxy.fail("GET", r"/issues/comments$", 404)
    result = orion.command("reconcile", "--json")
    assert result.returncode == 69, result.stderr
    assert "the pass is incomplete" in result.stderr
    plan = json.loads(result.stdout)
    assert {a["issue"]: a["action"] for a in plan["actions"]} == {alive: "keep", dead: "requeue"}
    assert plan["read_in_full"] == 2
    assert "the repository-wide comment listing failed" in result.stderr
    assert "reading every issue in full" in result.stderr
    assert w.proc.poll() is None and labels(repo, dead) == {"orion"}
