"""Follow-up of spotcheck_old_defects.py's defect 7 (not one of the review's demos; written for
docs/review-r3-demos.md): the same interleaving, then it goes on past the demo's 6 s.

The spotcheck's defect 7 calls three claimers and three passes within about 6 s of B's death and
prints STILL when none of them worked the issue. On main B dies before its first beat (its record
says `running` with no child pid), and since ADR 0072 a pass judges such a claim `unknown` (its
queue-label removal may still land) until its claim comment is `stale_after` x 2/3 + 11 s old
(here 90 x 2/3 + 11 = 71 s). The old defect 7 was a livelock: the issue was never worked again.
This script repeats the interleaving and then runs a pass every 5 s, up to 150 s, until one
requeues, then one claimer: it prints FIXED when that claimer works the issue (exit 0).

Run: PROJECT_CLONE=<repo> PYTHONPATH=scripts/r3-demos/compat <repo>/.venv/bin/python THIS
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("R3_DEMOS", "/work/shared/reviews/r3"), "demos-protocol"))

from r3rig import PY, QUEUE, Child, Rig, Run, state, t  # noqa: E402,F401

with Rig() as r:
    slow = r.config("heartbeat: {interval: 30, stale_after: 90}\nrun: {kill_grace: 1}\n", "slow7.yml")
    n = r.repo.create_issue("d7", [QUEUE])
    a_child, b_child = Child(r.tmp, "d7a"), Child(r.tmp, "d7b")
    a = Run(r.env, r.tmp, "--issue", str(n), cmd=a_child.cmd, config=slow, name="d7a")
    a_child.wait_started(30)
    r.orion("release", "--issue", str(n), "--force")
    b = Run(r.env, r.tmp, "--issue", str(n), cmd=b_child.cmd, config=slow, name="d7b")
    b_child.wait_started(30)
    a.signal(signal.SIGTERM)
    a.wait(30)
    b.kill()
    died = time.monotonic()
    print(f"{t()} after A's interrupt and B's death: {state(r.repo, n)}")
    requeued = False
    while not requeued and time.monotonic() - died < 150:
        rc, out, _ = r.orion("reconcile", "--config", str(slow))
        line = next((x for x in out.splitlines() if x.strip().startswith(f"#{n} ")), out.strip())
        print(f"{t()} pass {time.monotonic() - died:4.0f}s after B's death: {line.strip()}")
        requeued = QUEUE in r.repo.labels(n)
        if not requeued:
            time.sleep(5)
    c = Run(r.env, r.tmp, "--issue", str(n), cmd=["true"], config=slow, name="d7c")
    rc_c = c.wait(60)
    print(f"{t()} claimer after the requeue: exit {rc_c}; {state(r.repo, n)}")
    print("RESULT:", "FIXED: the issue was worked again" if rc_c == 0 else "STILL: never worked again")
    sys.exit(1 if rc_c == 0 else 0)
