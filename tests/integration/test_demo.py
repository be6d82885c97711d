"""`make demo` doubles as a smoke test: run demo/demo.py end to end against the emulator
(real wrappers, a real SIGKILL, real status and reconcile) and check what it reports."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from rig import ROOT, orion_env


# Slow: CI runs `make demo` itself, in a fresh clone (.ci/run).
@pytest.mark.slow
@pytest.mark.timeout(150)
def test_demo_runs_end_to_end_and_every_issue_ends_ready() -> None:
    env = orion_env("unused/unused", "http://127.0.0.1:9")  # no Actions variables leak in
    result = subprocess.run([sys.executable, "demo/demo.py"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    out = result.stdout
    assert result.returncode == 0, f"demo failed:\n{out[-6000:]}\n{result.stderr[-3000:]}"
    # The SIGKILL, and that the agent died with its wrapper.
    assert re.search(r"SIGKILL -> worker A's wrapper \(pid \d+\)", out), out
    assert re.search(r"wrapper pid \d+: killed by SIGKILL", out), out
    assert re.search(r"agent pid \d+ died with its wrapper", out), out
    # status judged the stranded issue dead; reconcile requeued it (the product's own output).
    victim = re.search(r"which holds #(\d+)", out)
    assert victim, out
    n = victim.group(1)
    assert re.search(rf"status \| #{n}\s+dead", out), out
    assert re.search(rf"reconcile \| #{n}\s+requeue", out), out
    assert re.search(rf"#{n} labels after reconcile: orion\b", out), out
    # ... and it was worked again (attempt 2) and finished.
    assert re.search(rf"#{n}: won the claim; .*\(attempt 2\)", out), out
    # The final report: every issue orion-ready, nothing left running.
    assert len(re.findall(r"^#\d+ '.*' \(open\) labels: orion-ready$", out, re.M)) == 3, out
    assert "all 3 issues ended orion-ready; no wrapper or agent process is left" in out
    assert "DEMO FAILED" not in result.stderr
