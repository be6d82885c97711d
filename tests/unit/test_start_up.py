"""Every way orion starts moves the credentials out before the heavy imports (ADR 0074): with a
token in the environment, the process re-execs itself (ADR 0031), and the image it replaces
must not have imported PyGithub, which would then be imported twice (the `orion-action` script
and the action's step did, 0.2 CPU-s a run)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ACTION_LINE = "from orion_action.__main__ import entry; sys.exit(entry())"


def _imports_of_github(argv: list[str]) -> int:
    """How many processes of `argv` (run with -X importtime, which the re-exec keeps: it
    re-runs sys.orig_argv) imported the `github` package."""
    env = {**os.environ, "GITHUB_TOKEN": "not-a-real-token"}
    proc = subprocess.run([sys.executable, "-X", "importtime", *argv, "--version"], env=env,
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "orion-action" in proc.stdout
    def count(module: str) -> int:
        return len(re.findall(rf"^import time:.*\|\s+{re.escape(module)}$", proc.stderr, re.M))

    assert count("orion_action.credentials") == 2, "no re-exec: the test proves nothing"
    return count("github")


@pytest.mark.parametrize("argv", [["-m", "orion_action"], ["-c", f"import sys; {ACTION_LINE}"]],
                         ids=["python -m", "script and action step"])
def test_the_handover_comes_before_pygithub(argv: list[str]) -> None:
    assert _imports_of_github(argv) == 1


def test_the_script_and_the_action_use_that_entry() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '\n[project.scripts]\norion-action = "orion_action.__main__:entry"\n' in pyproject
    assert ACTION_LINE in (ROOT / "action.yml").read_text()
