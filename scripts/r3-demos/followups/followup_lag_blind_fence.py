"""Follow-up of demo_lag_blind_fence.py (not one of the review's demos; written for
docs/review-r3-demos.md). On main the demo stops with "child a never started": A loses, so the
double run it measures never begins. This script runs the demo's part 1 up to that point with
the same rig (LaggingProxy hiding A's claim comment from listings for 6 s, A held at its lock
request), then reports what each wrapper said, how long B's child ran after A's claim became
listable, the issue's end state and what a pass then does; and the demo's part 2 (when the
arbitration list is sent relative to a slow claim POST).

Run: PROJECT_CLONE=<repo> PYTHONPATH=scripts/r3-demos/compat <repo>/.venv/bin/python THIS
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("R3_DEMOS", "/work/shared/reviews/r3"), "demos-protocol"))

from r3rig import QUEUE, Child, Rig, Run, other_machine_cmd, pid_alive, state, t, tail  # noqa: E402

LAG_S = 6.0
with Rig() as r:
    cfg = r.config("heartbeat: {interval: 2, stale_after: 12}\nrun: {kill_grace: 1}\n")
    n = r.repo.create_issue("work", [QUEUE])
    a_child, b_child = Child(r.tmp, "a"), Child(r.tmp, "b")
    hold = r.proxy.hold("POST", rf"/issues/{n}/labels$", count=1)
    a = Run(r.env, r.tmp, "--issue", str(n), cmd=a_child.cmd, config=cfg, name="a")
    hold.wait_arrived(timeout=30)
    a_comment = r.repo.comments(n)[0]["id"]
    r.proxy.hide(a_comment, LAG_S)
    hidden_at = time.monotonic()
    print(f"{t()} A posted claim comment {a_comment}, held at its lock request; "
          f"hidden from lists for {LAG_S:g}s")
    b = Run(r.env, r.tmp, "--issue", str(n), cmd=b_child.cmd, config=cfg, name="b")
    b_child.wait_started(30)
    print(f"{t()} B won and started its child: {state(r.repo, n)}")
    hold.release()
    rc_a, rc_b = a.wait(60), b.wait(60)
    b_gone = time.monotonic()
    while pid_alive(b_child.pid):
        time.sleep(0.05)
        b_gone = time.monotonic()
    print(f"{t()} A exit {rc_a} (A's child started: {a_child.started}); B exit {rc_b}; B's child ended "
          f"{b_gone - hidden_at - LAG_S:.1f}s after A's claim became listable (heartbeat interval 2s)")
    print("--- A's log:\n" + tail(a.err, 4))
    print("--- B's log:\n" + tail(b.err, 4))
    print(f"{t()} end state: {state(r.repo, n)}")
    time.sleep(13)  # past stale_after (12 s)
    rc, out, _ = r.orion("reconcile", "--config", str(cfg),
                         argv_wrap=lambda x: other_machine_cmd(x, host="hosted"))
    print(f"{t()} reconcile (another machine) -> exit {rc}:\n{tail(out, 2)}")
    print(f"{t()} after the pass: {state(r.repo, n)}")
    both = a_child.started and b_child.started
    print("RESULT:", "DOUBLE RUN: both children started" if both else
          "no double run: only B's child started, and it stopped once A's lower claim was listed")

    m = r.repo.create_issue("settle", [QUEUE])
    r.proxy.delay("POST", rf"/issues/{m}/comments$", 1.5, count=1)
    c_child = Child(r.tmp, "c")
    c = Run(r.env, r.tmp, "--issue", str(m), cmd=c_child.cmd, config=cfg, name="c")
    c_child.wait_started(30)
    post = r.proxy.matching("POST", rf"/issues/{m}/comments$")[0]
    listing = r.proxy.matching("GET", rf"/issues/{m}/comments$")[0]
    print(f"settle: the claim POST arrived at +0.00s and was held 1.5s; the arbitration list arrived at "
          f"+{listing.time - post.time:.2f}s, i.e. {listing.time - post.time - 1.5:.2f}s after the post "
          f"reached GitHub (LIST_SETTLE_S = 1.0)")
    c_child.release()
    c.wait(60)
    sys.exit(0 if both else 1)
