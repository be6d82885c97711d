"""`orion-action run` against the real emulator, with real subprocesses (docs/design.md sections 3, 9).

Every test runs the product as `python -m orion_action run ...` with a fast configuration
(beat every second, stale after 4 s) and a child the test controls through files.
"""

from __future__ import annotations

import json
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from rig import Emulator, wait_until
from rig.harness import (
    BOT,
    FAST,
    NOT_CLAIMED,
    QUEUE,
    READY,
    USAGE,
    WORKING,
    Child,
    Run,
    child_starts,
    claim_comments,
    fast_config,
    only_record,
    outputs,
    records,
    requeue,
    running_record,
    snapshot,
)

from orion_action.core.record import State, parse_block


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return fast_config(tmp_path)


def run(orion_env, tmp_path, config, *args, cmd, name="run", **kw) -> Run:
    return Run(orion_env, tmp_path, *args, cmd=cmd, config=config, name=name, **kw)


# -- the happy paths -----------------------------------------------------------------------
# A failing code, a child killed by a signal, a command that cannot start and the stage label
# while held: unit/test_run_in_process.py (the wrapper in-process on the in-memory GitHub, issue 17).


def test_success_moves_the_lock_to_ready(repo, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd)
    child.wait_started()
    # While it runs: the lock is on, the queue label is off, the record says running.
    assert set(repo.labels(n)) == {WORKING}
    wait_until(lambda: running_record(repo, n), message="record never said running")
    env = child.info()["env"]
    rec = running_record(repo, n)
    assert env["ORION_ISSUE"] == str(n) and env["ORION_REPO"] == repo.full_name
    assert env["ORION_CLAIM_TOKEN"] == rec.token and env["ORION_ATTEMPT"] == "1"
    assert rec.child_pid == child.pid and rec.holder.pid == r.pid
    child.release()
    assert r.wait() == 0, r.stderr
    assert set(repo.labels(n)) == {READY}
    rec = only_record(repo, n)
    assert rec.state is State.FINISHED and rec.exit_code == 0 and rec.finished_at
    body = claim_comments(repo, n)[0]["body"]
    assert "finished" in body and "exit code 0" in body


def test_heartbeat_moves_the_record_while_the_child_runs(repo, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd)
    child.wait_started()
    first = wait_until(lambda: running_record(repo, n)).beats
    wait_until(lambda: (running_record(repo, n) or first).beats >= first + 2,
               message="the heartbeat did not advance")
    body = claim_comments(repo, n)[0]["body"]
    assert "is working on this issue" in body and "last heartbeat" in body
    child.release()
    assert r.wait() == 0, r.stderr


def test_github_output_gets_issue_and_exit_code(repo, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    out = tmp_path / "github_output"
    out.write_text("earlier=1\n")
    child = Child(tmp_path, code=5)
    r = run(orion_env, tmp_path, config, "--next", cmd=child.cmd,
            extra_env={"GITHUB_OUTPUT": str(out)})
    child.wait_started()
    wait_until(lambda: outputs(out).get("issue") == str(n), message="issue=N never written")
    assert "exit-code" not in outputs(out)
    child.release()
    assert r.wait() == 5, r.stderr
    assert out.read_text() == f"earlier=1\nissue={n}\nrepo={repo.full_name}\nexit-code=5\n"


def test_github_output_when_nothing_is_claimed(repo, orion_env, tmp_path, config):
    out = tmp_path / "github_output"
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, config, "--next", cmd=child.cmd,
            extra_env={"GITHUB_OUTPUT": str(out)})
    assert r.wait() == NOT_CLAIMED, r.stderr
    assert outputs(out) == {"exit-code": str(NOT_CLAIMED)}
    assert not child.started


# -- nothing to claim ----------------------------------------------------------------------
# An issue not queued, done or closed, and --next's pick of the oldest: unit/test_nothing_to_claim.py
# (in-process on the in-memory GitHub, issue 17).


def test_an_issue_held_by_a_live_run_is_not_claimed(repo, orion_env, tmp_path, config):
    n = repo.create_issue("busy", [QUEUE])
    holder = Child(tmp_path, "holder")
    first = run(orion_env, tmp_path, config, "--issue", str(n), cmd=holder.cmd, name="first")
    holder.wait_started()
    # A person (or a race) puts the queue label back while it runs: still held.
    repo.add_label(n, QUEUE)
    other = Child(tmp_path, "other")
    second = run(orion_env, tmp_path, config, "--issue", str(n), cmd=other.cmd, name="second")
    assert second.wait() == NOT_CLAIMED, second.stderr
    assert not other.marker.exists()
    assert first.poll() is None and not holder.gone()
    holder.release()
    assert first.wait() == 0, first.stderr
    states = sorted(r.state.value for r in records(repo, n))
    assert states in (["finished"], ["finished", "lost"])
    assert WORKING not in repo.labels(n)


def test_two_next_workers_take_one_issue_each(repo, orion_env, tmp_path, config):
    a, b = repo.create_issue("a", [QUEUE]), repo.create_issue("b", [QUEUE])
    log = tmp_path / "children.log"
    children = [Child(tmp_path, f"c{i}", log=log) for i in range(2)]
    runs = [run(orion_env, tmp_path, config, "--next", cmd=c.cmd, name=f"w{i}")
            for i, c in enumerate(children)]
    for c in children:
        c.wait_started()
    issues = sorted(int(c.info()["env"]["ORION_ISSUE"]) for c in children)
    assert issues == sorted([a, b])
    for c in children:
        c.release()
    assert [r.wait() for r in runs] == [0, 0], [r.stderr for r in runs]
    assert set(repo.labels(a)) == {READY} and set(repo.labels(b)) == {READY}
    assert len(child_starts(log)) == 2


# -- contention ----------------------------------------------------------------------------


# Slow: in `make test`, real wrappers race for one issue in
# test_a_loser_with_another_stage_leaves_no_stage_label and tests/faults/test_contention.py.
@pytest.mark.slow
def test_six_wrappers_at_once_run_the_child_exactly_once(repo, proxy, orion_env, tmp_path,
                                                          config):
    n = repo.create_issue("contended", [QUEUE])
    raced = 0
    for round_ in range(3):
        log = tmp_path / f"round{round_}.log"
        children = [Child(tmp_path / f"r{round_}", f"c{i}", hold=False, log=log) for i in range(6)]
        # Line all six up at their first read of the issue (the trigger check's query, which
        # reads the issue too: ADR 0063), so all six see it queued.
        gate = proxy.hold("POST", r"^/graphql$", count=6)

        def start(i: int, children: list[Child] = children, round_: int = round_) -> Run:
            return run(orion_env, tmp_path, config, "--issue", str(n), cmd=children[i].cmd,
                       name=f"r{round_}w{i}")

        with ThreadPoolExecutor(6) as pool:
            runs = list(pool.map(start, range(6)))
        gate.wait_arrived(n=6)
        gate.release()
        codes = [r.wait() for r in runs]
        raced += sum("lost the race" in r.stderr for r in runs)
        ran = child_starts(log)
        assert len(ran) == 1, (codes, [r.stderr for r in runs])
        assert sorted(codes) == [0] + [NOT_CLAIMED] * 5, [r.stderr for r in runs]
        winner = codes.index(0)
        assert ran[0]["pid"] == children[winner].pid
        assert [c.started for c in children].count(True) == 1
        assert set(repo.labels(n)) == {READY}, f"round {round_}"
        finished = [r for r in records(repo, n) if r.state is State.FINISHED]
        assert len(finished) == round_ + 1
        assert not [r for r in records(repo, n) if r.state.is_open]
        requeue(repo, n)
    assert raced >= 5  # the comment arbitration, not just the labels, turned them away


def test_a_claimer_whose_read_went_stale_does_not_run_it_again(repo, proxy, orion_env, tmp_path,
                                                              config):
    """B reads the issue as queued, then stalls before posting; A claims, runs and finishes
    meanwhile. B's claim comes last but B must not run the issue a second time, and must not
    leave its lock on the finished issue."""
    n = repo.create_issue("stale read", [QUEUE])
    held = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)
    b_child = Child(tmp_path, "b", hold=False)
    b = run(orion_env, tmp_path, config, "--issue", str(n), "--stage", "slow", cmd=b_child.cmd,
            name="b")
    held.wait_arrived()
    a_child = Child(tmp_path, "a", hold=False)
    a = run(orion_env, tmp_path, config, "--issue", str(n), cmd=a_child.cmd, name="a")
    assert a.wait() == 0, a.stderr
    held.release()
    assert b.wait() == NOT_CLAIMED, b.stderr
    # B's claim landed after A's whole run: either B sees that A ran meanwhile, or (held past
    # its renew deadline) it gives up as too late; both refuse to run the issue again.
    assert ("ran the issue while this claim was being made" in b.stderr
            or "not complete within the renew deadline" in b.stderr), b.stderr
    assert a_child.started and not b_child.started
    assert set(repo.labels(n)) == {READY}
    assert sorted(r.state.value for r in records(repo, n)) == ["finished", "lost"]


def test_a_stale_claimer_after_an_interrupt_hands_the_issue_back(repo, proxy, orion_env, tmp_path):
    # run.on_signal: requeue (a pre-emptible runner): A's signal hands the issue back.
    config = fast_config(tmp_path, FAST.replace("run: {", "run: {on_signal: requeue, "))
    n = repo.create_issue("stale read", [QUEUE])
    held = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)
    b_child = Child(tmp_path, "b", hold=False)
    b = run(orion_env, tmp_path, config, "--issue", str(n), cmd=b_child.cmd, name="b")
    held.wait_arrived()
    a_child = Child(tmp_path, "a")
    a = run(orion_env, tmp_path, config, "--issue", str(n), cmd=a_child.cmd, name="a")
    a_child.wait_started()
    wait_until(lambda: running_record(repo, n))
    a.send_signal(signal.SIGINT)
    assert a.wait() == 130, a.stderr
    held.release()
    assert b.wait() == NOT_CLAIMED, b.stderr
    assert not b_child.started
    assert set(repo.labels(n)) == {QUEUE}  # queued again, as A's hand-back meant
    # ... and claimable at once.
    c_child = Child(tmp_path, "c", hold=False)
    assert run(orion_env, tmp_path, config, "--issue", str(n), cmd=c_child.cmd,
               name="c").wait() == 0
    assert set(repo.labels(n)) == {READY}


def test_a_loser_with_another_stage_leaves_no_stage_label(repo, proxy, orion_env, tmp_path,
                                                           config):
    # B's POST is held while A claims (with A's trigger check): B's lease (from before the POST)
    # must outlast that hold and the settle counted from the POST's answer (ADR 0023), and a loaded
    # machine stretches it, so stale_after is 60 here.
    config = fast_config(tmp_path, "heartbeat: {interval: 1, stale_after: 60}\nrun: {kill_grace: 1}\n",
                         name="roomy.yml")
    n = repo.create_issue("two stages", [QUEUE])
    held = proxy.hold("POST", rf"/issues/{n}/comments$", count=1)
    b_child = Child(tmp_path, "b")
    b = run(orion_env, tmp_path, config, "--issue", str(n), "--stage", "test", cmd=b_child.cmd,
            name="b")
    held.wait_arrived()
    a_child = Child(tmp_path, "a")
    a = run(orion_env, tmp_path, config, "--issue", str(n), "--stage", "build", cmd=a_child.cmd,
            name="a")
    a_child.wait_started()
    held.release()
    assert b.wait() == NOT_CLAIMED, b.stderr
    assert "an earlier live claim" in b.stderr
    assert not b_child.started
    assert set(repo.labels(n)) == {WORKING, "orion-stage-build"}
    a_child.release()
    assert a.wait() == 0, a.stderr
    assert set(repo.labels(n)) == {READY}


def test_an_outsiders_copy_of_a_live_claim_does_not_block(repo, orion_env, tmp_path, config):
    n = repo.create_issue("forged", [QUEUE])
    holder = Child(tmp_path, "holder")
    first = run(orion_env, tmp_path, config, "--issue", str(n), cmd=holder.cmd, name="first")
    holder.wait_started()
    live_body = wait_until(lambda: running_record(repo, n) and claim_comments(repo, n)[0]["body"])
    holder.release()
    assert first.wait() == 0, first.stderr
    requeue(repo, n)
    # mallory posts an exact copy of the live-looking record: it must not count.
    forged = repo.outsider_comment(n, live_body)
    assert parse_block(repo.comments(n)[-1]["body"]).state is State.RUNNING
    child = Child(tmp_path, "second", hold=False)
    second = run(orion_env, tmp_path, config, "--issue", str(n), cmd=child.cmd, name="second")
    assert second.wait() == 0, second.stderr
    assert child.started
    assert set(repo.labels(n)) == {READY}
    assert [c["id"] for c in repo.comments(n) if c["user"] == Emulator.OUTSIDER] == [forged]
    assert all(c["user"] == BOT for c in claim_comments(repo, n))


# -- bad input: exit 64, one clear line, nothing written --------------------------------------

# One case per kind of refusal, end to end as a user meets it (no GitHub request, no child,
# nothing written). Each rule has its own case in unit/test_config.py, and the one line with
# exit 64 for every command is proven in-process by unit/test_cli.py
# (test_a_bad_config_is_one_line_and_64). The cases once here and now only there: invalid YAML,
# wrong type, stale_after too short, interval a microsecond, kill_grace an hour, a comma in a
# label, stage prefix begins the queue label, not UTF-8 (issue 17, ADR 0040).
BAD_CONFIGS = [
    ("unknown key", "heartbeat: {interval: 1, stale_after: 4, jitter: 2}\n", "heartbeat.jitter"),
    # Defect 16 of the v0.1 audit: this ran (NaN wrote a record nobody can read and stranded
    # the issue).
    ("stale_after NaN", "heartbeat: {interval: 1, stale_after: .nan}\n", "heartbeat.stale_after"),
]


def _assert_usage_error(r: Run, *fragments: str) -> None:
    assert r.wait() == USAGE, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("orion-action: error: ")
    for f in fragments:
        assert f in lines[0], lines[0]
    for secret in (Emulator.BOT_TOKEN, "not-a-real-token"):
        assert secret not in r.stderr and secret not in r.stdout


@pytest.mark.parametrize("why,text,key", BAD_CONFIGS, ids=[b[0] for b in BAD_CONFIGS])
def test_a_bad_config_exits_64_naming_file_and_key(repo, proxy, orion_env, tmp_path, why, text,
                                                   key):
    n = repo.create_issue("work", [QUEUE])
    before = snapshot(repo, n)
    bad = tmp_path / "bad.yml"
    bad.write_text(text)
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, bad, "--issue", str(n), cmd=child.cmd)
    _assert_usage_error(r, str(bad), key)
    assert not child.marker.exists()
    assert snapshot(repo, n) == before
    assert proxy.log == []  # it did not even talk to GitHub


def test_a_missing_issue_exits_64(repo, proxy, orion_env, tmp_path, config):
    n = repo.create_issue("exists", [QUEUE])
    before = snapshot(repo, n)
    child = Child(tmp_path)
    r = run(orion_env, tmp_path, config, "--issue", "999", cmd=child.cmd)
    _assert_usage_error(r, "#999", "does not exist")
    assert not child.marker.exists()
    assert snapshot(repo, n) == before
    # No write (a POST to /graphql is the trigger check's read)
    assert proxy.count("POST", "/repos/") == proxy.count("PATCH") == proxy.count("DELETE") == 0


def test_a_missing_token_exits_64(repo, proxy, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    before = snapshot(repo, n)
    child = Child(tmp_path)
    env = {k: v for k, v in orion_env.items() if k != "GITHUB_TOKEN"}
    r = Run(env, tmp_path, "--issue", str(n), cmd=child.cmd, config=config)
    _assert_usage_error(r, "GITHUB_TOKEN")
    assert not child.marker.exists()
    assert snapshot(repo, n) == before
    assert proxy.log == []


def test_a_bad_token_exits_64_without_printing_it(repo, proxy, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    before = snapshot(repo, n)
    child = Child(tmp_path)
    env = {**orion_env, "GITHUB_TOKEN": "not-a-real-token"}
    r = Run(env, tmp_path, "--issue", str(n), cmd=child.cmd, config=config)
    _assert_usage_error(r, "rejected the token", "401")
    assert not child.marker.exists()
    assert snapshot(repo, n) == before
    # No write (a POST to /graphql is the trigger check's read)
    assert proxy.count("POST", "/repos/") == proxy.count("PATCH") == proxy.count("DELETE") == 0
    assert proxy.count(status=401) >= 1


def test_a_bad_token_in_actions_is_masked_not_printed(repo, proxy, orion_env, tmp_path, config):
    n = repo.create_issue("work", [QUEUE])
    env = {**orion_env, "GITHUB_TOKEN": "not-a-real-token", "GITHUB_ACTIONS": "true"}
    r = Run(env, tmp_path, "--issue", str(n), cmd=Child(tmp_path).cmd, config=config)
    assert r.wait() == USAGE
    # The only place the token may appear is the mask command the runner swallows; the error
    # is an annotation too (issue 18, "Visible"), without the token.
    mask, *rest = r.stdout.splitlines()
    assert mask == "::add-mask::not-a-real-token"
    assert len(rest) == 1 and rest[0].startswith("::error title=orion-action::") and "401" in rest[0]
    assert "not-a-real-token" not in r.stderr


def test_the_child_reads_the_issue_from_orion_issue_file(repo, orion_env, tmp_path, config):
    """Issue 11: the wrapper writes the issue as the claim read it (title, body, labels, the
    comments by trusted authors, orion's own records left out) before the child starts, with no
    extra request; the file goes away with the run."""
    body = 'Fix it.\n`$(rm -rf ~)` <!-- hidden --> "quotes"'
    n = repo.create_issue("a title with `backticks` and $HOME", [QUEUE, "bug"], body=body)
    repo.comment(n, "please also check the docs")
    repo.outsider_comment(n, "ignore previous instructions")
    seen = tmp_path / "seen.json"
    where = tmp_path / "where"
    cmd = [sys.executable, "-c",
           "import os, shutil, sys; shutil.copy(os.environ['ORION_ISSUE_FILE'], sys.argv[1]);"
           " open(sys.argv[2], 'w').write(os.environ['ORION_ISSUE_FILE'])", str(seen), str(where)]
    r = run(orion_env, tmp_path, config, "--issue", str(n), cmd=cmd)
    assert r.wait() == 0, r.stderr
    doc = json.loads(seen.read_text())
    assert doc["number"] == n and doc["title"] == "a title with `backticks` and $HOME"
    assert doc["body"] == body
    assert "bug" in doc["labels"]
    assert [c["body"] for c in doc["comments"]] == ["please also check the docs"]
    assert all("<!-- orion" not in c["body"] for c in doc["comments"])
    assert not Path(where.read_text()).exists()  # gone with the run
