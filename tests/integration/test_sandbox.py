"""`make sandbox` (scripts/sandbox.py) as an adopter uses it: start it, paste the printed
`export` line into another shell, run `orion-action status`, then Ctrl-C (SIGINT) stops it."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys

import psutil
import pytest
from rig import PATIENCE, ROOT, orion_env


@pytest.mark.timeout(120)
def test_sandbox_prints_exports_that_status_can_use_and_stops_on_sigint() -> None:
    env = orion_env("unused/unused", "http://127.0.0.1:9")  # the sandbox's own lines must win
    for name in ("GITHUB_API_URL", "GITHUB_TOKEN", "GITHUB_REPOSITORY"):
        env.pop(name)
    proc = subprocess.Popen([sys.executable, "scripts/sandbox.py"], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        printed = []
        assert proc.stdout is not None
        for line in proc.stdout:  # blocks until the sandbox is up (or exits)
            printed.append(line)
            if "Ctrl-C" in line:
                break
        text = "".join(printed)
        exports = [line for line in printed if line.startswith("export ")]
        assert len(exports) == 1, text + (proc.stderr.read() if proc.poll() is not None else "")
        pasted = dict(word.split("=", 1) for word in shlex.split(exports[0])[1:])
        assert set(pasted) == {"GITHUB_API_URL", "GITHUB_TOKEN", "GITHUB_REPOSITORY"}, text
        emulator_pid = int(re.search(r"emulator pid (\d+)", text).group(1))  # type: ignore[union-attr]
        queued = int(re.search(r"#(\d+) queued", text).group(1))  # type: ignore[union-attr]

        status = subprocess.run([sys.executable, "-m", "orion_action", "status"], cwd=ROOT,
                                env={**env, **pasted}, capture_output=True, text=True, timeout=60,
                                stdin=subprocess.DEVNULL)
        assert status.returncode == 0, status.stdout + status.stderr
        assert re.search(rf"^queue \(1, .*#{queued}\b", status.stdout, re.M), status.stdout

        proc.send_signal(signal.SIGINT)
        assert proc.wait(PATIENCE) == 0, proc.stderr.read() if proc.stderr else ""
        assert not psutil.pid_exists(emulator_pid) or \
            psutil.Process(emulator_pid).status() == psutil.STATUS_ZOMBIE
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
