"""Time limits (`run.timeout`, `run.idle_timeout`) and hand-backs that spend the retry budget,
against the emulator with real processes (docs/design.md section 12, "Time limits").

A stopped run exits 124, writes the reason on its claim record, and spends an attempt: the
issue goes back to the queue while `retry.max_attempts` allows, then ends failed. The
`run.timeout` cases run in-process (unit/test_run_in_process.py); here, the idle timeout with a
child's real output, and signals to a real wrapper.
"""

from __future__ import annotations

import signal
import sys
import textwrap
import time
from pathlib import Path

from rig import wait_until
from rig.harness import FAILED, QUEUE, WORKING, Child, Run, fast_config, only_record, records, running_record

from orion_action.core.record import State

TIMED_OUT = 124

# A child that talks as told: `talk N S` prints N lines S seconds apart (stdout and stderr in
# turn), `progress N S` writes N progress lines S seconds apart, `burst K` writes K KiB to
# stdout at once, `quiet` then sleeps until killed; it records its pid first.
TALKER = textwrap.dedent("""
    import os, sys, time
    d = sys.argv[1]
    with open(os.path.join(d, "pid"), "w") as f:
        f.write(str(os.getpid()))
    args = sys.argv[2:]
    while args:
        what = args.pop(0)
        if what == "talk":
            n, pause = int(args.pop(0)), float(args.pop(0))
            for i in range(n):
                stream = sys.stdout if i % 2 == 0 else sys.stderr
                stream.write(f"line {i}\\n")
                stream.flush()
                time.sleep(pause)
        elif what == "progress":
            n, pause = int(args.pop(0)), float(args.pop(0))
            for i in range(n):
                with open(os.environ["ORION_PROGRESS_FILE"], "a") as f:
                    f.write(f"step {i}\\n")
                time.sleep(pause)
        elif what == "burst":
            block = b"x" * 1023 + b"\\n"
            for _ in range(int(args.pop(0))):
                os.write(1, block)
        elif what == "quiet":
            while True:
                time.sleep(1)
""")


def talker(tmp_path: Path, *script: str) -> tuple[list[str], Path]:
    path = tmp_path / "talker.py"
    path.write_text(TALKER)
    d = tmp_path / "talker"
    d.mkdir(exist_ok=True)
    return [sys.executable, str(path), str(d), *script], d / "pid"


def limits(tmp_path: Path, run: str, attempts: int = 2) -> Path:
    return fast_config(
        tmp_path, f"heartbeat: {{interval: 1, stale_after: 4}}\nrun: {{kill_grace: 1, {run}}}\n"
        f"retry: {{max_attempts: {attempts}}}\n"
    )


def start(orion_env, tmp_path, config, n, cmd, name="run") -> Run:
    return Run(orion_env, tmp_path, "--issue", str(n), cmd=cmd, config=config, name=name)


def test_a_child_that_goes_silent_is_stopped(repo, orion_env, tmp_path):
    config = limits(tmp_path, "idle_timeout: 1.5")
    n = repo.create_issue("work", [QUEUE])
    cmd, pid_file = talker(tmp_path, "talk", "2", "0.1", "quiet")
    began = time.monotonic()
    r = start(orion_env, tmp_path, config, n, cmd)
    assert r.wait() == TIMED_OUT, r.stderr
    assert time.monotonic() - began >= 1.5
    assert "line 0" in r.stdout and "line 1" in r.stderr  # the output passed through
    rec = only_record(repo, n)
    assert rec.state is State.INTERRUPTED and rec.exit_code == TIMED_OUT
    assert rec.note and "run.idle_timeout" in rec.note
    assert set(repo.labels(n)) == {QUEUE}


def test_a_child_that_keeps_printing_is_not_stopped_and_loses_no_output(repo, orion_env, tmp_path):
    # Talks for ~3 s with idle_timeout 1 s, then writes 512 KiB at once and exits: every byte
    # arrives, in order per stream, and the run succeeds.
    config = limits(tmp_path, "idle_timeout: 1")
    n = repo.create_issue("work", [QUEUE])
    cmd, _ = talker(tmp_path, "talk", "12", "0.25", "burst", "512")
    r = start(orion_env, tmp_path, config, n, cmd)
    assert r.wait() == 0, r.stderr
    out = r.out.read_bytes()
    said = [x for x in r.stdout.splitlines() if x.startswith("line ")]
    assert said == [f"line {i}" for i in range(0, 12, 2)]
    warned = [x for x in r.stderr.splitlines() if x.startswith("line ")]
    assert warned == [f"line {i}" for i in range(1, 12, 2)]
    assert out.count(b"x" * 1023 + b"\n") == 512
    assert only_record(repo, n).state is State.FINISHED


def test_progress_lines_count_as_activity(repo, orion_env, tmp_path):
    config = limits(tmp_path, "idle_timeout: 1")
    n = repo.create_issue("work", [QUEUE])
    cmd, _ = talker(tmp_path, "progress", "12", "0.25")
    r = start(orion_env, tmp_path, config, n, cmd)
    assert r.wait() == 0, r.stderr
    assert only_record(repo, n).state is State.FINISHED


def test_an_issue_interrupted_every_time_ends_failed(repo, orion_env, tmp_path):
    # run.on_signal: requeue (pre-emptible runners): every signal hands the issue back.
    config = limits(tmp_path, "timeout: 0, on_signal: requeue", attempts=2)
    n = repo.create_issue("work", [QUEUE])
    for attempt in (1, 2):
        child = Child(tmp_path, name=f"child{attempt}")
        r = start(orion_env, tmp_path, config, n, child.cmd, name=f"run{attempt}")
        child.wait_started()
        wait_until(lambda: running_record(repo, n), message="never recorded running")
        r.send_signal(signal.SIGTERM)
        assert r.wait() == 128 + signal.SIGTERM, r.stderr
        assert child.gone()
        assert set(repo.labels(n)) == ({QUEUE} if attempt == 1 else {FAILED})
        assert WORKING not in repo.labels(n)
    last = records(repo, n)[-1]
    assert last.state is State.INTERRUPTED and last.attempt == 2
    assert last.note and "SIGTERM" in last.note and "retry budget spent" in last.note
