"""Follow-up of demo_tty_child_stopped.py (not one of the review's demos; written for
docs/review-r3-demos.md). On main the demo stops with psutil.NoSuchProcess: the command it
means to find stopped (state T) has already exited. This script starts the run exactly as the
demo does (util-linux `script` gives it a pseudo-terminal; the command is `read answer`), and
then, instead of inspecting the command's state, waits for the run to end and reports the
wrapper's exit code, what the command printed (its output goes to a file here, not to the
terminal) and the issue's end state. Exit 0 (REPRODUCED) if the run is still holding the issue
after 30 s.

Run: PROJECT_CLONE=<repo> PYTHONPATH=scripts/r3-demos/compat <repo>/.venv/bin/python THIS
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("R3_DEMOS", "/work/shared/reviews/r3"), "demos-protocol"))

from r3rig import PY, QUEUE, Rig, state, t, wait_until  # noqa: E402

with Rig() as r:
    cfg = r.config("heartbeat: {interval: 2, stale_after: 12}\nrun: {kill_grace: 1}\n")
    n = r.repo.create_issue("work", [QUEUE])
    mark, said = r.tmp / "cmd.pid", r.tmp / "cmd.out"
    inner = " ".join([PY, "-m", "orion_action", "run", "--config", str(cfg), "--issue", str(n), "--",
                      "bash", "-c",
                      f"'echo $$ > {mark}; read answer; echo \"read exit $?, got [$answer]\" > {said}'"])
    feeder = subprocess.Popen(["sleep", "60"], stdout=subprocess.PIPE)  # script's stdin: open, silent
    term = subprocess.Popen(["script", "-qfc", inner, "/dev/null"], stdin=feeder.stdout,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=r.env, cwd=r.tmp)
    wait_until(lambda: mark.exists() and mark.read_text().strip(), 30)
    print(f"{t()} the command started (pid {mark.read_text().strip()}) under a pseudo-terminal")
    started = time.monotonic()
    try:
        rc = term.wait(30)
    except subprocess.TimeoutExpired:
        rc = None
    held = rc is None
    how = "still holds the issue after 30 s" if held else f"ended after {time.monotonic() - started:.1f}s"
    wrote = said.read_text().strip() if said.exists() else "(nothing)"
    print(f"{t()} the run {how}; the command wrote: {wrote}")
    print(f"{t()} {state(r.repo, n)}")
    if held:
        term.kill()
        term.wait()
    feeder.kill()
    feeder.wait()
    print("RESULT:", "REPRODUCED: the run holds the issue while its command waits on the terminal" if held
          else "NOT REPRODUCED: the command read EOF (no terminal) and the run ended")
    sys.exit(0 if held else 1)
