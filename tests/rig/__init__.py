"""Test rig: the GitHub emulator, a fault-injecting proxy in front of it, and helpers.

Tests wait on conditions (``wait_until``, ``Proxy.wait_for``, ``Hold.wait_arrived``),
never on fixed sleeps, so they are as fast as the machine allows and not flaky on a slow one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[2]  # the repository root (holds orion_action/)
# Product subprocesses started with `orion_env` claim without the 1 s list settle: the
# emulator's lists never lag (site/sitecustomize.py says why that is honest; ADR 0040).
SITE = Path(__file__).resolve().parent / "site"
TEST_LIST_SETTLE_S = "0"

T = TypeVar("T")

# How long a test waits for a condition before it gives up: generous, so that load (2 cores,
# parallel workers, other jobs) cannot break a wait on something that normally takes seconds.
# It is the default of every wait helper; a test bounds its own wait only when the bound is
# what it proves (and says so). pytest-timeout (pyproject.toml) guards the whole test.
PATIENCE = 60.0

# Variables that make the product believe it runs inside an Actions job; a test that wants
# that sets them explicitly.
ACTIONS_VARS = ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_RUN_ID",
                "GITHUB_RUN_ATTEMPT", "GITHUB_ENV", "GITHUB_STATE", "GITHUB_PATH",
                "GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "RUNNER_NAME", "GITHUB_WORKFLOW_REF")


def wait_until(predicate: Callable[[], T], timeout: float = PATIENCE, interval: float = 0.05,
               message: str | Callable[[], str] = "condition not met") -> T:
    """Call ``predicate`` until it returns something truthy and return that value.

    Raises AssertionError(message) after ``timeout`` seconds; ``message`` may be a callable
    so it can describe the state at the moment of failure. Exceptions from the predicate
    propagate (a broken check should fail loudly, not time out)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout}s: {text}")
        time.sleep(interval)


def orion_env(full_name: str, api_url: str, token: str = "bot_token",
              base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for running the product as a subprocess against ``api_url``."""
    env = dict(os.environ if base is None else base)
    for name in ACTIONS_VARS:
        env.pop(name, None)
    # Product processes may cache their bytecode (in the checkout's __pycache__, ignored by
    # git): with PYTHONDONTWRITEBYTECODE set in the caller's shell, every one of the suite's
    # hundreds of processes compiled orion_action afresh, about a quarter of its start-up CPU.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(GITHUB_API_URL=api_url, GITHUB_TOKEN=token, GITHUB_REPOSITORY=full_name,
               PYTHONPATH=os.pathsep.join([str(ROOT), str(SITE)]),
               ORION_TEST_LIST_SETTLE_S=TEST_LIST_SETTLE_S)
    return env


def parse_github_output(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: ``k=v`` lines and ``k<<DELIM`` ... ``DELIM`` blocks."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            value: list[str] = []
            while lines[i] != delim:
                value.append(lines[i])
                i += 1
            i += 1
            out[key] = "\n".join(value)
        else:
            key, single = line.split("=", 1)
            out[key] = single
    return out


from .emulator import Emulator, RepoHandle, free_port, unique_repo_name  # noqa: E402
from .proxy import Hold, LogEntry, Proxy, Rule  # noqa: E402

__all__ = ["PATIENCE", "ROOT", "Emulator", "Hold", "LogEntry", "Proxy", "RepoHandle", "Rule", "free_port",
           "parse_github_output", "orion_env", "unique_repo_name", "wait_until"]
