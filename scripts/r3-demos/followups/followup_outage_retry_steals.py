"""Follow-up of demo_outage_retry_steals.py (not one of the review's demos; written for
docs/review-r3-demos.md). On main the demo ends in AssertionError: it waits 60 s for C to be
fenced (exit 76) by H's late hand-back, and C goes on running. This script repeats the demo's
interleaving step by step (the same LaggingProxy token modes), then gives H time to finish its
outage tries and reports: whether C's child still runs, H's exit and log, the issue's labels and
blocks, and whether any block of H's landed after C's claim comment. Exit 0 (REPRODUCED) if C
was stopped or H wrote after C's claim anything but its outage marker: since ADR 0092 H appends
an "interrupted by holder" end marker after its outage record, and one posted after a later
claim that ran is no event (core.arbitration.overtaken): it excuses H's attempt and moves
nothing of C's.

Run: PROJECT_CLONE=<repo> PYTHONPATH=scripts/r3-demos/compat <repo>/.venv/bin/python THIS
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("R3_DEMOS", "/work/shared/reviews/r3"), "demos-protocol"))

from r3rig import (  # noqa: E402
    QUEUE,
    Child,
    Rig,
    Run,
    blocks,
    other_machine_cmd,
    pid_alive,
    state,
    t,
    tail,
    wait_until,
)

with Rig() as r:
    cfg = r.config("heartbeat: {interval: 2, stale_after: 75}\nrun: {kill_grace: 1}\n")
    n = r.repo.create_issue("work", [QUEUE])
    h_child, c_child = Child(r.tmp, "h"), Child(r.tmp, "c")
    h = Run({**r.env, "GITHUB_TOKEN": "second_token"}, r.tmp, "--issue", str(n), cmd=h_child.cmd,
            config=cfg, name="h")
    h_child.wait_started(30)
    time.sleep(3)
    r.proxy.token_mode["second_token"] = "ambiguous-writes"
    print(f"{t()} H runs; from now on H's writes land but their answers are lost")
    wait_until(lambda: any(b[1] == "claim" and b[3].startswith("interrupted") for b in blocks(r.repo, n)),
               120, interval=0.2)
    r.proxy.token_mode["second_token"] = "down"
    print(f"{t()} H's first outage try wrote its record: {state(r.repo, n)}")
    rc, out, _ = r.orion("reconcile", "--config", str(cfg),
                         argv_wrap=lambda a: other_machine_cmd(a, host="hosted"))
    print(f"{t()} reconcile (another machine): {out.strip().splitlines()[0]}")
    c = Run(r.env, r.tmp, "--issue", str(n), cmd=c_child.cmd, config=cfg, name="c")
    c_child.wait_started(30)
    c_claim = max(b[0] for b in blocks(r.repo, n) if b[1] == "claim")
    print(f"{t()} C claimed (comment {c_claim}) and runs: {state(r.repo, n)}")
    r.proxy.token_mode.pop("second_token")
    print(f"{t()} H's writes get answers again; waiting for H to end (up to 120 s)")
    try:
        rc_h = h.wait(120)
    except AssertionError:
        rc_h = None
    time.sleep(5)  # C's next beats after H's last write
    c_alive = pid_alive(c_child.pid) and c.proc.poll() is None
    after = [b for b in blocks(r.repo, n) if b[0] > c_claim]
    # H's outage marker (ADR 0092), overtaken by C's claim: an account, not a hand-back.
    markers = [b for b in after if b[1] == "tomb" and b[3].endswith("by holder")]
    after = [b for b in after if b not in markers]
    print(f"{t()} H exit {rc_h}; C's wrapper and child still running: {c_alive}")
    print(f"{t()} final: {state(r.repo, n)}")
    print(f"{t()} blocks after C's claim: {[b[:4] for b in after] or 'none'}; H's outage marker(s) "
          f"after it, which decide nothing: {[b[:4] for b in markers] or 'none'}")
    print("--- H's log (tail):\n" + tail(h.err, 6))
    c_child.release()
    print(f"{t()} C's child released: C exit {c.wait(60)}; {state(r.repo, n)}")
    stolen = not c_alive or bool(after)
    print("RESULT:", "REPRODUCED: H's late hand-back reached C's run" if stolen else
          "NOT REPRODUCED: C kept running and nothing of H's landed after C's claim")
    sys.exit(0 if stolen else 1)
